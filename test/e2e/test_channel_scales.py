"""Multiplies by a per-channel constant (layer scales, Affine) become depthwise 1x1 convolutions, or
go into the linear layer before them; identity ops (eval dropout) leave the graph first."""

from __future__ import annotations

import os
import re
import shutil
import warnings

import numpy as np
import pytest
import torch
from torch import nn

import mcu_mlir
from mcu_mlir.frontend.quantize.channel_scales import channel_scales_as_depthwise
from mcu_mlir.frontend.graph.identity_ops import drop_identity_ops
from mcu_mlir.firmware import run

aten = torch.ops.aten


class LayerScales(nn.Module):
    """Each form a library writes: NCHW gamma after a non-conv op, an Affine (gamma x + beta) on
    tokens, a LayerScale after a linear, an in-place one, gamma x - constant, a conv whose dropout
    stands before its scale."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pw = nn.Conv2d(8, 8, 1)
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(8, 8)
        g = torch.logspace(-2, 0, 8)       # channels scaled 0.01 .. 1: per tensor, the small keep few bits
        self.g1, self.g2, self.g3 = nn.Parameter(g.reshape(8, 1, 1)), nn.Parameter(g.flip(0)), nn.Parameter(g * 2)
        self.beta = nn.Parameter(torch.linspace(-0.5, 0.5, 8))
        self.g4, self.g5 = nn.Parameter(g.reshape(1, 8, 1, 1) * 3), nn.Parameter(g * 0.5)

    def forward(self, x):
        y = self.conv(x)
        a = torch.relu(y) * self.g1                           # NCHW, after a non-conv op
        b = self.drop(self.pw(a)) * self.g4                   # into the conv, through its dropout
        t = b.flatten(2).transpose(1, 2)                      # tokens [B, N, C]
        u = self.g2 * t + self.beta                           # Affine: scale and shift
        v = self.fc(u) * self.g3                              # LayerScale after a linear: its weights
        w = (torch.tanh(v) * self.g5 - 0.25).clone()
        w.mul_(self.g5)                                       # in place on its own value
        return b, w


def _export(model, x):
    return torch.export.export(model, x if isinstance(x, tuple) else (x,)).module()


def test_rewrites_keep_the_float_values():
    torch.manual_seed(0)
    model, x = LayerScales().eval(), torch.randn(1, 3, 6, 6)
    gm = _export(model, x)
    assert drop_identity_ops(gm) == 1                       # the dropout
    from mcu_mlir.frontend.graph.constant_folding import fold_parameter_subgraphs
    from mcu_mlir.frontend.graph.reparameterize import merge_parallel_convs
    fold_parameter_subgraphs(gm)
    merge_parallel_convs(gm)
    assert channel_scales_as_depthwise(gm) == 5
    targets = [n.target for n in gm.graph.nodes]
    assert aten.mul.Tensor not in targets and aten.mul_.Tensor not in targets
    assert targets.count(aten.add.Tensor) == 1 and targets.count(aten.sub.Tensor) == 1    # shifts stay adds
    depthwise = [n for n in gm.graph.nodes if n.target in (aten.conv1d.default, aten.conv2d.default)
                 and len(n.args) > 6 and n.args[6] == 8]
    assert len(depthwise) == 4
    for got, want in zip(gm(x), model(x)):
        assert torch.allclose(got, want, atol=1e-5)


def test_in_place_scale_of_a_shared_value_stays():
    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.g = nn.Parameter(torch.linspace(0.1, 1, 4))

        def forward(self, x):
            y = x + 1
            z = y * 2
            y.mul_(self.g)           # z was read before: the product is not y's only reader
            return y, z
    gm = _export(Shared().eval(), torch.randn(2, 4))
    assert channel_scales_as_depthwise(gm) == 0


@pytest.mark.skipif(shutil.which("tosa_reference_model") is None, reason="tosa-tools not installed")
@pytest.mark.parametrize("quantize", ["int8", "int16"])
def test_scales_run_on_depthwise_kernels_bit_exact(quantize, tmp_path):
    torch.manual_seed(0)
    model, x = LayerScales().eval(), torch.randn(1, 3, 6, 6)
    backend = "cmsis-nn" if os.environ.get("CMSIS_NN_PATH") else "portable"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model, (x,), target="host", backend=backend, calibration=16, quantize=quantize,
                                  emit="c", output_dir=str(tmp_path))
    tosa = (tmp_path / "model.tosa.mlir").read_text()
    assert "tosa.mul" not in tosa
    assert len(re.findall(r"tosa.depthwise_conv2d", tosa)) == 4
    if backend == "cmsis-nn":
        kernels = [op["kernel"] for op in result.report["ops"]]
        assert sum(k.startswith("arm_depthwise_conv") for k in kernels) == 4, kernels
    xs = [torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(3)).numpy()]
    want = run.run_reference_outdir(tmp_path, xs)
    got = run.run(tmp_path, xs, target="host")
    for g, w in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(g, w.reshape(g.shape))
    with torch.no_grad():
        floats = [t.numpy() for t in model(torch.from_numpy(xs[0]))]
    for f, g in zip(floats, got.outputs_float):
        g = g.reshape(f.shape)
        sqnr = 10 * np.log10((f ** 2).sum() / ((f - g) ** 2).sum())
        assert sqnr >= (30 if quantize == "int8" else 50), sqnr


def test_per_head_scale_of_attention_logits_stays_a_multiply():
    """Axis 1 of [B, heads, N, N] is not a feature map's channel axis: as a convolution it would
    need data-moving transposes (Swin V2's logit scale)."""
    class Logits(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.linspace(0.5, 2, 4).reshape(4, 1, 1))

        def forward(self, q, k):
            return (q @ k.transpose(-2, -1)) * self.scale
    gm = _export(Logits().eval(), (torch.randn(1, 4, 6, 8), torch.randn(1, 4, 6, 8)))
    assert channel_scales_as_depthwise(gm) == 0


class SmallScaleLargeShift(nn.Module):
    """gamma * y + beta with gamma small and beta large (ConvNeXt-V2's GRN as initialised): as the
    depthwise conv's bias, beta / (input scale x |gamma| / 127) is past int32 in int16."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 1)
        with torch.no_grad():
            self.conv.weight.mul_(0.05)
            self.conv.bias.zero_()
        self.gamma = nn.Parameter(torch.logspace(-3, -2, 8).reshape(1, 8, 1, 1))
        self.beta = nn.Parameter(torch.full((1, 8, 1, 1), 2.0))

    def forward(self, x):
        y = self.conv(x)
        return y + (self.gamma * y + self.beta)


@pytest.mark.skipif(shutil.which("tosa_reference_model") is None, reason="tosa-tools not installed")
def test_large_shift_stays_an_add_in_int16(tmp_path):
    torch.manual_seed(0)
    model, x = SmallScaleLargeShift().eval(), torch.randn(1, 3, 6, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model, (x,), target="host", backend="portable", calibration=16, quantize="int16",
                                  emit="c", output_dir=str(tmp_path))
    rows = result.report["quantization"]["layer_sqnr"]
    assert [r for r in rows if r["kind"] == "output"][0]["sqnr_db"] >= 60, rows
    xs = [torch.randn(1, 3, 6, 6, generator=torch.Generator().manual_seed(3)).numpy()]
    want = run.run_reference_outdir(tmp_path, xs)
    got = run.run(tmp_path, xs, target="host")
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
