"""A PyTorch model through the whole compiler, then built and run by the target side: the C on the
host and under QEMU (M55, M4) equals tosa_reference_model on the same integer TOSA, bit for bit."""

import os
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

CROSS_TOOLS = ("cmake", "arm-none-eabi-gcc", "qemu-system-arm")


def _need(tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")


def small_cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 8, 3, padding=1, groups=8), torch.nn.ReLU6(),
        torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 5)).eval()


def _compile(tmp_path_factory, name, **options):
    out = tmp_path_factory.mktemp(name)
    rng = np.random.default_rng(0)
    calibration = [(torch.from_numpy(rng.normal(size=(1, 3, 8, 8)).astype(np.float32)),) for _ in range(8)]
    try:
        mcu_mlir.compile(small_cnn(), (calibration[0][0],), calibration=calibration, emit="c",
                         output_dir=str(out), **options)
    except UserError as err:   # the compiler's own tests own its failures
        pytest.fail(f"compiling the test model failed: {err}")
    return out


@pytest.fixture(scope="module")
def portable_dir(tmp_path_factory):
    return _compile(tmp_path_factory, "portable", backend="portable", target="cortex-m55")


def _inputs(seed):
    return [np.random.default_rng(seed).normal(size=(1, 3, 8, 8)).astype(np.float32)]


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m4"])
def test_portable_c_equals_reference(portable_dir, target):
    _need(("cmake", "cc") if target == "host" else CROSS_TOOLS)
    for seed in (1, 2):
        inputs = _inputs(seed)
        want = run.run_reference_outdir(portable_dir, inputs)
        got = run.run(portable_dir, inputs, target=target)
        assert len(got.outputs_q) == len(want.outputs_q) == 1
        np.testing.assert_array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
        np.testing.assert_array_equal(got.outputs_float[0], want.outputs_float[0].reshape(got.outputs_float[0].shape))


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_cmsis_nn_c_equals_reference(tmp_path_factory, target):
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    _need(CROSS_TOOLS)
    out = _compile(tmp_path_factory, f"cmsis-{target}", backend="cmsis-nn", target=target, cmsis_nn_path=path)
    inputs = _inputs(3)
    want = run.run_reference_outdir(out, inputs)
    got = run.run(out, inputs, target=target, cmsis_nn_path=path, count_instructions=True)
    np.testing.assert_array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
    counts = got.instructions
    assert counts["cmsis-nn"] > 0 and all(layer["instructions"] > 0 for layer in counts["layers"])
    # conv, depthwise conv, max pool and fully connected are CMSIS-NN calls: most of the work is inside it.
    assert counts["cmsis-nn"] > 0.5 * counts["total"], counts


def test_emit_elf_builds_firmware_that_runs(tmp_path_factory):
    _need(CROSS_TOOLS)
    out = tmp_path_factory.mktemp("elf")
    result = mcu_mlir.compile(small_cnn(), (torch.zeros(1, 3, 8, 8),), calibration=4, emit="elf", backend="portable",
                              target="cortex-m4", output_dir=str(out))
    elf = result.files["elf"]
    assert elf.exists() and elf.suffix == ".elf"
    inputs = _inputs(4)
    got = run.run(out, inputs, target="cortex-m4")
    want = run.run_reference_outdir(out, inputs)
    np.testing.assert_array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
