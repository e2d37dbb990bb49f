"""A bias far larger than its layer's input (an untrained YOLO's class bias of -11.5 on features of
~1e-6) fits its int32: the layer's weight scale is raised (frontend/quantize/bias_range.py), where
PT2E clamped it to INT32_MIN and every logit read -0.1. The C equals tosa_reference_model."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402
from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db  # noqa: E402

SHAPE = (1, 8, 6, 6)
PRIOR = math.log(5 / 80 / (640 / 8) ** 2)      # ultralytics' Detect.bias_init at stride 8


class FadedHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cls = torch.nn.Conv2d(8, 5, 1)
        with torch.no_grad():
            self.cls.bias.fill_(PRIOR)

    def forward(self, x):
        return self.cls(x * 1e-6)           # features an untrained backbone leaves: ~1e-6


def test_a_bias_far_above_its_input_fits_its_int32(tmp_path):
    torch.manual_seed(0)
    model = FadedHead().eval()
    example = (torch.randn(SHAPE, generator=torch.Generator().manual_seed(0)),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, example, target="host", backend="portable", calibration=8, emit="c",
                         output_dir=str(tmp_path))
    g = torch.Generator().manual_seed(9)
    want, got = [], []
    for _ in range(3):
        x = torch.randn(SHAPE, generator=g).numpy()
        c = run.run(tmp_path, [x], target="host")
        ref = run.run_reference_outdir(tmp_path, [x])
        assert np.array_equal(c.outputs_q[0], ref.outputs_q[0].reshape(c.outputs_q[0].shape))
        with torch.no_grad():
            want.append(model(torch.from_numpy(x)).double().numpy())
        got.append(c.outputs_float[0].reshape(want[-1].shape).astype(np.float64))
    want, got = np.concatenate(want), np.concatenate(got)
    # Every logit near -11.5: it read -0.1 with the bias clamped to INT32_MIN (0 dB).
    assert sqnr_db(want, got) >= 30
