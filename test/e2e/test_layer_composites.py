"""Composite ops around a layer that must cost no extra kernels:

- weight-standardised convolutions (timm's StdConv2d, HuggingFace BiT's WeightStandardizedConv2d:
  the weight normalised per output channel by a batch_norm in training mode on every call) are a
  subgraph of parameters only, folded at compile time (frontend/graph/constant_folding.py): each
  is one CMSIS-NN conv call whose int8 weights are the standardised ones;
- hard-swish / hard-sigmoid / SiLU / GELU after a conv or linear layer are one table pass each
  (int8: a 256-entry TOSA TABLE, portable:table_s8; int16: the interpolated TABLE with its
  rescale, portable:table_s16_rescale), never an expansion into several elementwise calls.

The C equals tosa_reference_model bit for bit on the host."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import mcu_mlir  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402
from mcu_mlir.frontend.graph import python_only_imports  # noqa: E402
from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db  # noqa: E402

SHAPE = (1, 3, 8, 8)


def _compile(model, out, **options):
    example = (torch.randn(SHAPE, generator=torch.Generator().manual_seed(0)),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the random calibration's warning
        return mcu_mlir.compile(model, example, target="host", emit="c", output_dir=str(out), calibration=8,
                                **options)


def _kernels(result):
    return [op["kernel"] for op in result.report["ops"] if op["kernel"] != "view"]


def _c_equals_reference(out):
    x = torch.randn(SHAPE, generator=torch.Generator().manual_seed(5)).numpy()
    c = run.run(out, [x])
    ref = run.run_reference_outdir(out, [x])
    np.testing.assert_array_equal(c.outputs_q[0], ref.outputs_q[0].reshape(c.outputs_q[0].shape))
    return x, c.outputs_float[0]


class HFStandardised(nn.Conv2d):
    """HuggingFace BiT's WeightStandardizedConv2d forward (transformers' modeling_bit.py)."""

    def forward(self, x):
        weight = nn.functional.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None,
                                          training=True, momentum=0.0, eps=1e-8).reshape_as(self.weight)
        return nn.functional.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Standardised(nn.Module):
    def __init__(self):
        super().__init__()
        python_only_imports.install()   # timm imports torchvision, whose C++ operators do not load here
        timm_layers = pytest.importorskip("timm.layers")
        self.c1 = timm_layers.StdConv2d(3, 8, 3, padding=1)
        self.c2 = HFStandardised(8, 8, 3, padding=1, groups=2)
        self.c3 = timm_layers.StdConv2d(8, 6, 1, bias=False)

    def forward(self, x):
        return self.c3(torch.relu(self.c2(torch.relu(self.c1(x)))))


def test_weight_standardised_convs_fold_into_their_conv(tmp_path):
    torch.manual_seed(0)
    model = Standardised().eval()
    with torch.no_grad():   # means and scales far from standardised ones: folding the raw weights would show
        for conv in (model.c1, model.c2, model.c3):
            conv.weight.mul_(3.0).add_(0.5)
    result = _compile(model, tmp_path)
    kernels = _kernels(result)
    assert kernels.count("arm_convolve_wrapper_s8") + kernels.count("arm_convolve_s8") == 3, kernels
    assert not [k for k in kernels if k.startswith("portable:")], kernels
    # The folded weights are the standardised ones: each output channel's int8 weights sum to ~0.
    for w in (model.c1, model.c3):
        ws = nn.functional.batch_norm(w.weight.reshape(1, w.out_channels, -1), None, None, training=True,
                                      momentum=0.0, eps=w.eps).reshape_as(w.weight)
        assert ws.reshape(w.out_channels, -1).mean(1).abs().max() < 1e-5
    tosa = (tmp_path / "model.tosa.mlir").read_text()
    assert "tosa.reduce_sum" not in tosa and "tosa.rsqrt" not in tosa
    x, c = _c_equals_reference(tmp_path)
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    assert sqnr_db(want.astype(np.float64), c.reshape(want.shape).astype(np.float64)) > 25


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.c3 = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        x = nn.functional.hardsigmoid(self.c2(nn.functional.hardswish(self.c1(x))))
        x = nn.functional.silu(self.c3(x))
        return nn.functional.gelu(self.fc(x.amax((2, 3))))


@pytest.mark.parametrize("quantize,table", [("int8", "portable:table_s8"), ("int16", "portable:table_s16_rescale")])
def test_activation_after_a_layer_is_one_table_pass(quantize, table, tmp_path):
    torch.manual_seed(0)
    result = _compile(Activations().eval(), tmp_path, quantize=quantize)
    kernels = [k for k in _kernels(result) if "transpose" not in k]
    layers = [i for i, k in enumerate(kernels) if k.startswith("arm_convolve") or k.startswith("arm_fully")]
    assert len(layers) == 4, kernels
    # Each layer's call is followed directly by its activation's single table call.
    for i in layers:
        assert kernels[i + 1] == table, kernels
    assert kernels.count(table) == 4, kernels
    _c_equals_reference(tmp_path)
