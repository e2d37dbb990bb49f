"""Generated kernels (kernel_generation/) against tosa_reference_model: the depthwise 3x3 int8 kernel on
random small layers (1-pixel and odd-sized images, every padding, strides 1 and 2, with and without a
ReLU folded into the clamp), in its DSP form under QEMU on Cortex-M4 (chosen by its cost estimate) and
in its portable form on the host (--kernels generated). A layer it does not take (channels not a
multiple of 4) keeps the CMSIS-NN call; --kernels cmsis-nn keeps the library everywhere.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import mcu_mlir  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

# (name, input NCHW, F.pad (left, right, top, bottom) or None, conv padding, stride, relu, generated on):
# "any" core, "forced" (--kernels generated only: one tap per output, where the cost entry puts the
# library call below the kernel's fixed requantisation cost) or "none" (the kernel does not apply)
BRANCHES = [
    ("one_pixel", (1, 8, 1, 1), None, 1, 1, True, "forced"),
    ("odd_same", (1, 4, 7, 5), None, 1, 1, False, "any"),
    ("stride2_same", (1, 12, 6, 9), None, 1, 2, True, "any"),
    ("valid", (1, 8, 5, 4), None, 0, 1, False, "any"),
    ("asymmetric", (1, 8, 6, 7), (0, 2, 1, 0), 0, 1, True, "any"),
    ("row_stride2_asym", (1, 4, 1, 9), (1, 2, 1, 1), 0, 2, False, "any"),
    ("odd_channels", (1, 5, 4, 4), None, 1, 1, True, "none"),
]


class Layer(nn.Module):
    def __init__(self, channels, pad, padding, stride, relu):
        super().__init__()
        self.pad, self.relu = pad, relu
        self.conv = nn.Conv2d(channels, channels, 3, padding=padding, stride=stride, groups=channels)

    def forward(self, x):
        y = self.conv(F.pad(x, self.pad) if self.pad else x)
        return torch.relu(y) if self.relu else y


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer(shape[1], pad, padding, stride, relu)
                                    for _, shape, pad, padding, stride, relu, _ in BRANCHES)

    def forward(self, *xs):
        return tuple(layer(x) for layer, x in zip(self.layers, xs))


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(np.float32) for _, shape, *_ in BRANCHES]


def _cmsis_nn_path():
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    return path


def _compile(tmp_path, target, kernels):
    torch.manual_seed(38)
    model = Branches().eval()
    with torch.no_grad():
        for layer in model.layers:   # biases large enough that the input offset folding matters
            layer.conv.bias.uniform_(-1.0, 1.0)
    calibration = [tuple(torch.from_numpy(a) for a in _inputs(100 + i)) for i in range(6)]
    return mcu_mlir.compile(model, calibration[0], calibration=calibration, emit="c", backend="cmsis-nn",
                            target=target, kernels=kernels, output_dir=str(tmp_path),
                            cmsis_nn_path=_cmsis_nn_path()).report


def _check(tmp_path, target, kernels):
    tools = ("cmake", "cc") if target == "host" else ("cmake", "arm-none-eabi-gcc", "qemu-system-arm")
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")
    report = _compile(tmp_path, target, kernels)
    kernels_used = [op["kernel"] for op in report["ops"] if op["tosa_op"].startswith("tosa.depthwise_conv2d")]
    takes = {"auto": ("any",), "generated": ("any", "forced"), "cmsis-nn": ()}[kernels]
    expected = [("generated:dw3x3_s8" if generated in takes else "arm_depthwise_conv_wrapper_s8")
                for *_, generated in BRANCHES]
    assert kernels_used == expected, kernels_used
    wrong = []
    for seed in (1, 2):
        inputs = _inputs(seed)
        want = run.run_reference_outdir(tmp_path, inputs)
        got = run.run(tmp_path, inputs, target=target, cmsis_nn_path=_cmsis_nn_path())
        for (name, *_), g, w in zip(BRANCHES, got.outputs_q, want.outputs_q):
            differ = int((g != w.reshape(g.shape)).sum())
            if differ:
                wrong.append(f"{name}: {differ} of {g.size} differ (seed {seed})")
    assert not wrong, "\n".join(wrong)


def test_portable_form_on_host_equals_reference(tmp_path):
    _check(tmp_path, "host", "generated")


def test_dsp_form_on_cortex_m4_equals_reference(tmp_path):
    _check(tmp_path, "cortex-m4", "auto")


def test_cmsis_nn_keeps_the_library(tmp_path):
    report = _compile(tmp_path, "cortex-m4", "cmsis-nn")
    assert not any(op["kernel"].startswith("generated:") for op in report["ops"])
    assert "mcu_dw3x3" not in (tmp_path / "model.c").read_text()
