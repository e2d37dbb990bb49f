"""Zoo models whose slices the conversion removes (trailing rows a strided conv never reads,
grouped convs recomposed into one call) or whose integer log_softmax becomes one fused kernel:
the C on the host and under QEMU equals tosa_reference_model bit for bit with both backends (after
a CMSIS-NN average pool: within its measured 1 LSB)."""

import os
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir import zoo  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

CROSS_TOOLS = ("cmake", "arm-none-eabi-gcc", "qemu-system-arm")
CMSIS_NN_PATH = os.environ.get("CMSIS_NN_PATH")

# (backend, target): the portable kernels on the host and M4, CMSIS-NN on its MVE and DSP paths.
# Bit for bit on every backend and core (average pools included: see test_zoo_firmware).

CONFIGS = [("portable", "host"), ("portable", "cortex-m4"), ("cmsis-nn", "cortex-m55"),
           ("cmsis-nn", "cortex-m4")]


def _need(backend, target):
    tools = ("cmake", "cc") if target == "host" else CROSS_TOOLS
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")
    if backend == "cmsis-nn" and not CMSIS_NN_PATH:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")


@pytest.mark.parametrize("backend,target", CONFIGS)
@pytest.mark.parametrize("name", ["resnet8", "grouped_conv", "wav2letter_small"])
def test_fused_patterns_bit_exact(name, backend, target, tmp_path):
    _need(backend, target)
    model, example = zoo.get(name)
    result = mcu_mlir.compile(model, example, target=target, backend=backend, quantize="int8",
                              calibration=4, emit="c", output_dir=str(tmp_path),
                              **({"cmsis_nn_path": CMSIS_NN_PATH} if backend == "cmsis-nn" else {}))
    kernels = [op["kernel"] for op in result.report["ops"]]
    if name == "resnet8":
        assert "portable:slice" not in kernels, kernels
    elif name == "wav2letter_small":
        # The whole log_softmax (the int8 -> int32 cast and 21 TOSA ops after it) is one call.
        assert kernels.count("portable:log_softmax_s8") == 1, kernels
        assert not any(k in kernels for k in ("portable:cast", "portable:gather", "portable:reduce",
                                              "portable:binary")), kernels
    else:
        # Three grouped convs (2-D, 2-D strided, 1-D through reshapes), one call each.
        grouped = [op for op in result.report["ops"] if "x tosa.slice+tosa.conv2d" in op["tosa_op"]]
        assert len(grouped) == 3, result.report["ops"]
        assert not any(k in kernels for k in ("portable:slice", "portable:concat")), kernels
    for seed in (7, 8):
        inputs = [np.asarray(x) for x in zoo.example_inputs(name, seed=seed)]
        _assert_matches_reference(tmp_path, inputs, target, kernels)


def _assert_matches_reference(outdir, inputs, target, kernels):
    want = run.run_reference_outdir(outdir, inputs)
    got = run.run(outdir, inputs, target=target, cmsis_nn_path=CMSIS_NN_PATH)
    for g, w in zip(got.outputs_q, want.outputs_q):
        diff = np.abs(g.astype(np.int64) - w.reshape(g.shape).astype(np.int64)).max()
        assert diff == 0, f"max |C - reference| = {diff} LSB (kernels: {kernels})"


@pytest.mark.parametrize("backend,target", [("portable", "host"), ("cmsis-nn", "cortex-m55")])
def test_channel_split_conv_bit_exact(backend, target, tmp_path):
    """YOLO's C3k2 splits: each half of the 1x1 conv (+ rescale + SiLU table) is its own chain."""
    _need(backend, target)
    model, example = zoo.get("yolo11n_like")
    result = mcu_mlir.compile(model, example, target=target, backend=backend, quantize="int8",
                              calibration=2, emit="c", output_dir=str(tmp_path),
                              **({"cmsis_nn_path": CMSIS_NN_PATH} if backend == "cmsis-nn" else {}))
    kernels = [op["kernel"] for op in result.report["ops"]]
    assert "portable:slice" not in kernels, kernels
    inputs = [np.asarray(x) for x in zoo.example_inputs("yolo11n_like", seed=7)]
    _assert_matches_reference(tmp_path, inputs, target, kernels)


class _RowConvs(torch.nn.Module):
    """2-D convs with 1xK kernels on an H = 1 input (laid out as W = 1, viewed back)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, (1, 3), padding=(0, 1))
        self.dw = torch.nn.Conv2d(8, 8, (1, 3), padding=(0, 1), groups=8)

    def forward(self, x):
        return self.dw(torch.relu(self.conv(x)))


def test_convs_on_a_single_row_stay_fused(tmp_path):
    """The view back to H = 1 sits after each conv's rescale, not between them, so both convs are
    one CMSIS-NN call each; the portable build of the same model equals the reference."""
    torch.manual_seed(0)
    model, example = _RowConvs().eval(), (torch.randn(1, 4, 1, 20),)
    result = mcu_mlir.compile(model, example, target="cortex-m55", backend="cmsis-nn", calibration=4,
                              emit="c", output_dir=str(tmp_path / "cmsis"))
    kernels = [op["kernel"] for op in result.report["ops"]]
    assert "arm_convolve_wrapper_s8" in kernels and "arm_depthwise_conv_wrapper_s8" in kernels, kernels
    assert not any(k.startswith("portable:") for k in kernels), kernels
    _need("portable", "host")
    result = mcu_mlir.compile(model, example, target="host", backend="portable", calibration=4,
                              emit="c", output_dir=str(tmp_path / "portable"))
    kernels = [op["kernel"] for op in result.report["ops"]]
    _assert_matches_reference(tmp_path / "portable", [np.asarray(x) for x in example], "host", kernels)
