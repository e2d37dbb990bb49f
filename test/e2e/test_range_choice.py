"""int8 activation ranges (frontend/range_choice.py): `auto` quantizes with min / max and with the
histogram's ranges and keeps the one whose output measures closer to float; each figure is the
one that way alone gives; the C of the histogram's ranges equals tosa_reference_model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.frontend.range_choice import MARGIN_DB  # noqa: E402
from mcu_mlir.target import run  # noqa: E402


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def _compile(tmp_path, ranges):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(Mlp().eval(), (torch.zeros(1, 16),), target="host", backend="portable",
                                  calibration=32, emit="c", activation_ranges=ranges, output_dir=str(tmp_path / ranges))
    q = result.report["quantization"]
    return q, [r["sqnr_db"] for r in q["layer_sqnr"] if r["kind"] == "output"][0]


def test_auto_keeps_the_better_ranges(tmp_path):
    auto, auto_db = _compile(tmp_path, "auto")
    minmax, minmax_db = _compile(tmp_path, "minmax")
    histogram, histogram_db = _compile(tmp_path, "histogram")
    assert (minmax["activation_ranges"], histogram["activation_ranges"]) == ({"chosen": "minmax"},
                                                                             {"chosen": "histogram"})
    # The histogram clips the normal inputs' tails: a narrower input range, another model.
    assert histogram["inputs"][0]["scale"] < minmax["inputs"][0]["scale"]
    figures = auto["activation_ranges"]["output_sqnr_db"]
    assert figures == pytest.approx({"minmax": minmax_db, "histogram": histogram_db}, abs=0.01)
    best = "histogram" if histogram_db >= minmax_db + MARGIN_DB else "minmax"
    assert auto["activation_ranges"]["chosen"] == best
    assert auto_db == pytest.approx({"minmax": minmax_db, "histogram": histogram_db}[best], abs=0.01)
    inputs = [np.random.default_rng(4).standard_normal((1, 16)).astype(np.float32)]
    want = run.run_reference_outdir(tmp_path / "histogram", inputs)
    got = run.run(tmp_path / "histogram", inputs, target="host")
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))


def test_ranges_only_for_int8(tmp_path):
    from mcu_mlir.diagnostics import UserError
    with pytest.raises(UserError, match="--activation-ranges"):
        mcu_mlir.compile(Mlp().eval(), (torch.zeros(1, 16),), target="host", quantize="int16",
                         activation_ranges="histogram", output_dir=str(tmp_path))

