"""Layers the frontend used to refuse (issue 35, part 4), each now lowered exactly: padding='same'
with an even kernel (PyTorch's odd pad row / column at the bottom / right), grouped and dilated
transposed convolutions, nearest and bilinear resizes to any size or scale factor (PyTorch's own
source indices), adaptive pools to any size (PyTorch's uneven windows). Each model is compared with
PT2E's quantized model on tosa_reference_model, and its C (portable kernels, and CMSIS-NN where a
CMSIS-NN checkout is given) with tosa_reference_model bit for bit."""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import mcu_mlir  # noqa: E402
from mcu_mlir.frontend import import_model  # noqa: E402
from mcu_mlir.reference import run_reference  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)


class SamePaddingEvenKernels(nn.Module):
    """padding='same' with even kernels: PyTorch pads (k - 1) // 2 at the top / left and the rest
    at the bottom / right; dilated, depthwise and 1-D as well."""
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 4, padding="same")
        self.b = nn.Conv2d(8, 8, (2, 3), padding="same", dilation=(3, 1))
        self.c = nn.Conv2d(8, 8, 2, padding="same", groups=8)
        self.d = nn.Conv2d(8, 16, (1, 2), padding="same")
        self.e = nn.Conv1d(8, 4, 4, padding="same")

    def forward(self, x):
        y = torch.relu(self.a(x))
        z = self.c(self.b(y))
        return z, self.d(z), self.e(z.flatten(2))


class GroupedDilatedTransposedConvs(nn.Module):
    """ConvTranspose with groups (grouped and depthwise) and dilation, 2-D and 1-D."""
    def __init__(self):
        super().__init__()
        self.grouped = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.dilated = nn.ConvTranspose2d(6, 5, 3, stride=2, dilation=2, padding=1)
        self.depthwise = nn.ConvTranspose2d(6, 6, 2, stride=2, groups=6, dilation=(1, 2))
        self.one_d = nn.ConvTranspose1d(4, 4, 3, stride=2, dilation=3, groups=2, bias=False)

    def forward(self, x):
        y = torch.relu(self.grouped(x))
        return self.dilated(y), self.depthwise(y), self.one_d(x.flatten(2))


class ResizesToAnySize(nn.Module):
    """F.interpolate (nearest, bilinear either way) to sizes the input does not divide and by
    scale factors whose ratio is not the sizes' (PyTorch samples at 1 / scale_factor)."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return (F.interpolate(y, size=(9, 4), mode="nearest"),
                F.interpolate(y, scale_factor=1.7, mode="nearest"),
                # 1 / 2.71828, 1 / 1.2345: no small fraction gives PyTorch's float rows: gathered
                F.interpolate(y, scale_factor=(2.71828, 1.2345), mode="nearest"),
                F.interpolate(y, size=(11, 3), mode="bilinear"),
                F.interpolate(y, scale_factor=(1.5, 0.75), mode="bilinear"),
                F.interpolate(y, size=(8, 13), mode="bilinear", align_corners=True),
                F.interpolate(y.flatten(2), size=23, mode="nearest"))


class ManyAdaptiveCells(nn.Module):
    """An adaptive max pool to more cells than one pool per cell takes (1,089 here), from sizes
    that do not divide: windows of PyTorch's uneven sizes, pooled rows first, then columns."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return F.adaptive_max_pool2d(y, (33, 33)), F.adaptive_max_pool2d(y, (40, 7))


CASES = {
    # Each pooled output has its own scale, up to half the conv's: where PT2E's float conv and the
    # integer one round an LSB apart, the maximum moves by up to 2 (the pool itself is exact).
    "many_adaptive_cells": (ManyAdaptiveCells, [(1, 2, 70, 50)], 2),
    "same_padding_even_kernels": (SamePaddingEvenKernels, [(1, 3, 7, 8)], 1),
    "grouped_dilated_transposed_convs": (GroupedDilatedTransposedConvs, [(1, 4, 5, 5)], 1),
    # A bilinear mix lands on a half step often: PT2E rounds ties to even, the rescale up.
    "resizes_to_any_size": (ResizesToAnySize, [(1, 3, 5, 6)], 1, 0.8),
}


def _import(name, activations):
    cls, shapes, *_ = CASES[name]
    torch.manual_seed(0)
    model = cls().eval()
    example = tuple(torch.randn(s) for s in shapes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return import_model(model, example, calibration=8, quantize=activations, activation_ranges="minmax")


@pytest.mark.parametrize("activations", ["int8", "int16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pt2e(name, activations):
    """The integer TOSA is valid TOSA 1.0 and within the bound of PT2E's quantized model."""
    cls, shapes, bound, *rest = CASES[name]
    min_exact = rest[0] if rest else 0.9
    if activations == "int16":
        bound, min_exact = 8, 0.25     # as test_frontend_ops: 16-bit multipliers on int48 sums
    result = _import(name, activations)
    text = result.module.operation.get_asm()
    proc = subprocess.run(["tosa-opt", "-", "--tosa-attach-target=profiles=pro_int extensions=doubleround "
                           "specification_version=1.0", "--tosa-validate", "-o", "/dev/null"],
                          input=text, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    g = torch.Generator().manual_seed(3)
    xs = [torch.randn(s, generator=g).numpy() for s in shapes]
    q_in = [tq.quantize(x) for tq, x in zip(result.inputs, xs)]
    outs = run_reference(text, q_in)
    ref = result.reference([tq.dequantize(q) for tq, q in zip(result.inputs, q_in)])
    assert len(outs) == len(ref)
    for i, (out, want, tq) in enumerate(zip(outs, ref, result.outputs)):
        diff = np.abs(out.astype(np.int64) - tq.quantize(want).astype(np.int64))
        assert diff.max() <= bound, f"{name} output {i}: {diff.max()} LSB"
        assert (diff == 0).mean() >= min_exact, f"{name} output {i}: {(diff == 0).mean():.3f} exact"


def _cmsis_nn_path():
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    return path


@pytest.mark.parametrize("backend", ["portable", "cmsis-nn"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_c_matches_reference(name, backend, tmp_path):
    """The C on the host equals tosa_reference_model bit for bit (CMSIS-NN: a bottom / right pad
    goes through the kernels' padding contract)."""
    cmsis_nn_path = _cmsis_nn_path() if backend == "cmsis-nn" else None
    cls, shapes, *_ = CASES[name]
    torch.manual_seed(0)
    example = tuple(torch.randn(s) for s in shapes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(cls().eval(), example, target="host", backend=backend, calibration=8, emit="c",
                         output_dir=str(tmp_path), cmsis_nn_path=cmsis_nn_path)
    for seed in (5, 6):
        g = torch.Generator().manual_seed(seed)
        inputs = [torch.randn(s, generator=g).numpy() for s in shapes]
        want = run.run_reference_outdir(tmp_path, inputs)
        got = run.run(tmp_path, inputs, target="host", cmsis_nn_path=cmsis_nn_path)
        for i, (c, ref) in enumerate(zip(got.outputs_q, want.outputs_q)):
            assert np.array_equal(c, ref.reshape(c.shape)), f"{name} output {i} (seed {seed})"


class OddBilinearScale(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=1.2345, mode="bilinear")


def test_remaining_resize_refusal_names_the_line():
    """A bilinear scale factor no small fraction equals stays refused, naming the model's line."""
    from mcu_mlir.diagnostics import UserError
    with warnings.catch_warnings(), pytest.raises(UserError) as err:
        warnings.simplefilter("ignore")
        import_model(OddBilinearScale().eval(), (torch.randn(1, 2, 5, 6),), calibration=2, quantize="int8")
    message = str(err.value)
    assert "test_lifted_refusals.py:" in message and "scale factor 1.2345" in message, message


class ManyAverageCells(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool2d(x, (33, 33))


def test_remaining_adaptive_pool_refusal_names_the_line():
    """An adaptive average pool to more cells than MAX_ADAPTIVE_CELLS from sizes that do not divide
    stays refused, naming the model's line."""
    from mcu_mlir.diagnostics import UserError
    with warnings.catch_warnings(), pytest.raises(UserError) as err:
        warnings.simplefilter("ignore")
        import_model(ManyAverageCells().eval(), (torch.randn(1, 2, 70, 50),), calibration=2, quantize="int8")
    message = str(err.value)
    assert "test_lifted_refusals.py:" in message and "1089 cells" in message, message
