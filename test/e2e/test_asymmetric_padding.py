"""Bottom / right padding on every CMSIS-NN window call the conversion chooses (issue 35).

An F.pad folded into the conv after it, or a ceil_mode pool, gives TOSA a pad larger at the bottom /
right; a CMSIS-NN call takes only the top / left padding and the output size. Each branch of one
model is such a layer in front of another entry point (1x1 fast, 1x1 strided, 1xN, generic 3x3,
depthwise 3x3, depthwise opt, generic depthwise, max / avg pool, strides that make the output
differ from a symmetric padding's), compiled int8 and int16 for CMSIS-NN and compared bit for bit
with tosa_reference_model on the host and under QEMU (M55: MVE, M4: DSP).
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

CROSS_TOOLS = ("cmake", "arm-none-eabi-gcc", "qemu-system-arm")
SHAPES = {"x": (1, 8, 7, 9), "y": (1, 8, 1, 12)}   # y: H = 1, the 1xN path's input


class Padded(nn.Module):
    def __init__(self, pad, layer):
        super().__init__()
        self.pad, self.layer = pad, layer

    def forward(self, x):
        return self.layer(F.pad(x, self.pad))


# (name, input, layer): F.pad's order is (left, right, top, bottom).
BRANCHES = [
    ("bottom_1x1", "x", Padded((0, 0, 0, 1), nn.Conv2d(8, 16, 1))),
    ("right_1x1", "x", Padded((0, 2, 0, 0), nn.Conv2d(8, 16, 1))),
    ("bottom_right_1x1_stride2", "x", Padded((0, 1, 0, 2), nn.Conv2d(8, 16, 1, stride=2))),
    # A pad of W alone is not folded (the layout passes take an H = 1 conv as a conv1d, H = L).
    ("bottom_1xn", "y", Padded((1, 1, 0, 1), nn.Conv2d(8, 16, (1, 3)))),
    ("bottom_left1_right2_1xn", "y", Padded((1, 2, 0, 1), nn.Conv2d(8, 16, (1, 3)))),
    ("bottom_right_3x3", "x", Padded((0, 2, 0, 1), nn.Conv2d(8, 16, 3))),
    ("asymmetric_3x3_stride2", "x", Padded((1, 2, 0, 2), nn.Conv2d(8, 16, 3, stride=2))),
    ("right_dw3x3", "x", Padded((0, 2, 0, 0), nn.Conv2d(8, 8, 3, groups=8))),
    ("bottom_dw3x3", "x", Padded((0, 0, 0, 2), nn.Conv2d(8, 8, 3, groups=8))),
    ("left1_right2_dw3x3", "x", Padded((1, 2, 1, 0), nn.Conv2d(8, 8, 3, groups=8))),
    ("right_bottom_dw3x3_stride2", "x", Padded((0, 2, 0, 2), nn.Conv2d(8, 8, 3, stride=2, groups=8))),
    ("bottom_right_dw5x5", "x", Padded((0, 3, 0, 3), nn.Conv2d(8, 8, 5, groups=8))),
    ("bottom_right_dw_mult2", "x", Padded((0, 2, 0, 1), nn.Conv2d(8, 16, 3, groups=8))),
    ("maxpool_ceil", "x", nn.MaxPool2d(3, stride=2, ceil_mode=True)),
    ("maxpool_ceil_padded", "x", nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)),
    ("avgpool_ceil", "x", nn.AvgPool2d(3, stride=2, ceil_mode=True, count_include_pad=False)),
]


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(layer for _, _, layer in BRANCHES)

    def forward(self, x, y):
        inputs = {"x": x, "y": y}
        return tuple(layer(inputs[which]) for (_, which, _), layer in zip(BRANCHES, self.layers))


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(np.float32) for shape in SHAPES.values()]


def _cmsis_nn_path():
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    return path


def _need(tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")


def _compile(tmp_path, target, quantize, cmsis_nn_path):
    torch.manual_seed(0)
    model = Branches().eval()
    calibration = [tuple(torch.from_numpy(a) for a in _inputs(100 + i)) for i in range(8)]
    result = mcu_mlir.compile(model, calibration[0], calibration=calibration, emit="c", quantize=quantize,
                              backend="cmsis-nn", target=target, output_dir=str(tmp_path),
                              cmsis_nn_path=cmsis_nn_path)
    return result.report


def _check(tmp_path, target, quantize):
    path = _cmsis_nn_path()
    _need(("cmake", "cc") if target == "host" else CROSS_TOOLS)
    report = _compile(tmp_path, target, quantize, path)
    windows = [op for op in report["ops"] if op["tosa_op"].split("+")[0] in (
        "tosa.conv2d", "tosa.depthwise_conv2d", "tosa.max_pool2d", "tosa.avg_pool2d")]
    # Every branch is a CMSIS-NN call or a kernel written for the layer: none left to the portable kernels.
    assert len(windows) == len(BRANCHES), [op["tosa_op"] for op in report["ops"]]
    assert all(op["kernel"].startswith(("arm_", "generated:")) for op in windows), windows
    wrong = []
    for seed in (1, 2):
        inputs = _inputs(seed)
        want = run.run_reference_outdir(tmp_path, inputs)
        got = run.run(tmp_path, inputs, target=target, cmsis_nn_path=path)
        for (name, _, _), g, w in zip(BRANCHES, got.outputs_q, want.outputs_q):
            w = w.reshape(g.shape)
            differ = int((g != w).sum())
            if differ:
                wrong.append(f"{name}: {differ} of {g.size} differ, up to "
                             f"{int(np.abs(g.astype(np.int64) - w).max())} LSB (seed {seed})")
    assert not wrong, "\n".join(wrong)
    return windows


@pytest.mark.parametrize("quantize", ["int8", "int16"])
def test_host_equals_reference(tmp_path, quantize):
    windows = _check(tmp_path, "host", quantize)
    if quantize == "int8":
        # The 1x1 wrapper would run arm_convolve_1x1_s8(_fast), which ignores the bottom / right
        # padding: the conversion says why it called the generic kernel.
        notes = {op["kernel"]: op.get("kernel_note", "") for op in windows[:3]}
        assert set(notes) == {"arm_convolve_s8"}, notes
        assert all("arm_convolve_1x1_s8" in note for note in notes.values()), notes


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
@pytest.mark.parametrize("quantize", ["int8", "int16"])
def test_qemu_equals_reference(tmp_path, target, quantize):
    _check(tmp_path, target, quantize)
