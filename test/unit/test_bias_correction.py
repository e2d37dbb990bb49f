"""Bias correction (frontend/quantize/bias_correction.py) and the int16 activation headroom, against the
float model as the oracle."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from mcu_mlir.frontend import export, import_model  # noqa: E402
from mcu_mlir.frontend.quantize.bias_correction import correct_biases  # noqa: E402
from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db  # noqa: E402
from mcu_mlir.frontend.quantize.quantizer import weight_spec  # noqa: E402


class _Block(nn.Module):
    """Non-negative inputs (after a ReLU) into a depthwise conv with few taps per output, a 1x1
    conv and a linear: the layers whose weight rounding error has a mean."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = torch.relu(self.pw(torch.relu(self.dw(x))))
        return self.fc(x.mean((2, 3)))


def _samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 3, 12, 12, generator=g),) for _ in range(n)]


def _with_rounded_weights(gm):
    """`gm` with every conv / linear weight rounded as the quantizer rounds it (activations float)."""
    out = copy.deepcopy(gm)
    spec = weight_spec()
    for name, p in out.named_parameters():
        if name.endswith("weight"):
            obs = spec.observer_or_fake_quant_ctr(dtype=spec.dtype, quant_min=spec.quant_min, quant_max=spec.quant_max,
                                                  qscheme=spec.qscheme, ch_axis=spec.ch_axis)
            obs(p.data)
            scale, zp = obs.calculate_qparams()
            p.data = torch.fake_quantize_per_channel_affine(p.data, scale.float(), zp.int(), 0,
                                                            spec.quant_min, spec.quant_max)
    return out


def test_corrected_biases_remove_the_mean_error_of_rounded_weights():
    gm = export(_Block().eval(), _samples(1, 0)[0]).module()
    corrected = copy.deepcopy(gm)
    assert correct_biases(corrected, _samples(16, 1), weight_spec()) == 4
    fresh = _samples(16, 2)
    with torch.no_grad():
        want = torch.cat([gm(*s) for s in fresh]).numpy().astype(np.float64)
        plain = torch.cat([_with_rounded_weights(gm)(*s) for s in fresh]).numpy().astype(np.float64)
        fixed = torch.cat([_with_rounded_weights(corrected)(*s) for s in fresh]).numpy().astype(np.float64)
    # The output's mean error per channel shrinks, and with it the total error.
    assert np.abs((fixed - want).mean(0)).max() < 0.25 * np.abs((plain - want).mean(0)).max()
    assert sqnr_db(want, fixed) > sqnr_db(want, plain) + 3.0


def test_bias_correction_raises_output_sqnr_and_leaves_the_users_model_alone():
    model = _Block().eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = _samples(1, 0)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a16w8: int16 activations leave the int8 weights as the error that matters.
        on = import_model(model, x, quantize="int16", calibration=16)
        off = import_model(model, x, quantize="int16", calibration=16, bias_correction=False)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())

    def output_sqnr(result):
        return next(r["sqnr_db"] for r in result.layer_sqnr if r["kind"] == "output")
    assert output_sqnr(on) > output_sqnr(off) + 6.0


def test_int16_activations_keep_values_past_the_calibrated_range():
    """int16 ranges have a 2x margin over the calibration's extremes: a fresh input 1.5x the
    largest calibration value is represented, not clipped; int8 ranges stay tight."""
    model = nn.Sequential(nn.Linear(8, 8)).eval()
    samples = [(torch.full((1, 8), v),) for v in (-1.0, 0.5, 1.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = import_model(model, samples[0], quantize="int16", calibration=samples)
        tight = import_model(model, samples[0], quantize="int8", calibration=samples)
    q = wide.inputs[0]
    assert q.dequantize(q.quantize(np.full(8, 1.5, np.float32)))[0] == pytest.approx(1.5, abs=q.scale)
    assert wide.inputs[0].scale == pytest.approx(2.0 / 32767, rel=1e-6)
    assert tight.inputs[0].scale == pytest.approx(2.0 / 255, rel=1e-6)
