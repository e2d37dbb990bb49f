"""int8 activation ranges (frontend/quantize/range_choice.py): `auto` quantizes with min / max and with the
histogram's ranges, each with and without range equalization, and keeps the one whose output
measures closer to float; each figure is the one that way alone gives; the C of the histogram's
ranges and of equalized ranges equals tosa_reference_model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.frontend.quantize.range_choice import MARGIN_DB  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def _compile(tmp_path, ranges, model=Mlp, example=(torch.zeros(1, 16),), equalization="off"):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model().eval(), example, target="host", backend="portable",
                                  calibration=32, emit="c", activation_ranges=ranges, range_equalization=equalization,
                                  output_dir=str(tmp_path / f"{ranges}-{equalization}"))
    q = result.report["quantization"]
    return q, [r["sqnr_db"] for r in q["layer_sqnr"] if r["kind"] == "output"][0]


def test_auto_keeps_the_better_ranges(tmp_path):
    auto, auto_db = _compile(tmp_path, "auto")
    minmax, minmax_db = _compile(tmp_path, "minmax")
    histogram, histogram_db = _compile(tmp_path, "histogram")
    assert (minmax["activation_ranges"], histogram["activation_ranges"]) == (
        {"chosen": "minmax", "equalized": False}, {"chosen": "histogram", "equalized": False})
    # The histogram clips the normal inputs' tails: a narrower input range, another model.
    assert histogram["inputs"][0]["scale"] < minmax["inputs"][0]["scale"]
    figures = auto["activation_ranges"]["output_sqnr_db"]
    assert figures == pytest.approx({"minmax": minmax_db, "histogram": histogram_db}, abs=0.01)
    best = "histogram" if histogram_db >= minmax_db + MARGIN_DB else "minmax"
    assert auto["activation_ranges"]["chosen"] == best
    assert auto_db == pytest.approx({"minmax": minmax_db, "histogram": histogram_db}[best], abs=0.01)
    inputs = [np.random.default_rng(4).standard_normal((1, 16)).astype(np.float32)]
    _assert_bit_exact(tmp_path / "histogram-off", inputs)


def _assert_bit_exact(folder, inputs):
    want = run.run_reference_outdir(folder, inputs)
    got = run.run(folder, inputs, target="host")
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))


class Imbalanced(torch.nn.Module):
    """conv -> ReLU -> depthwise -> ReLU6 -> 1x1 conv: the first conv's channels 100x apart in
    range, as a folded BatchNorm can leave them, and the last conv reading each channel as much as
    the others; one int8 scale gives the small ones a few levels."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = torch.nn.Conv2d(8, 8, 1)
        with torch.no_grad():
            spread = torch.logspace(-2, 0, 8)
            self.conv.weight.mul_(spread.reshape(-1, 1, 1, 1) * 3)
            self.conv.bias.mul_(spread)
            self.pw.weight.div_(spread.reshape(1, -1, 1, 1))

    def forward(self, x):
        return self.pw(torch.nn.functional.relu6(self.dw(torch.relu(self.conv(x)))))


def test_equalization_gives_small_channels_finer_steps(tmp_path):
    example = (torch.zeros(1, 3, 8, 8),)
    off, off_db = _compile(tmp_path, "minmax", Imbalanced, example, "off")
    on, on_db = _compile(tmp_path, "minmax", Imbalanced, example, "on")
    auto, auto_db = _compile(tmp_path, "minmax", Imbalanced, example, "auto")
    assert (off["activation_ranges"]["equalized"], on["activation_ranges"]["equalized"]) == (False, True)
    # The same function in float; the small channels' resolution is what changes.
    assert on_db > off_db + 3
    figures = auto["activation_ranges"]["output_sqnr_db"]
    assert figures == pytest.approx({"minmax": off_db, "minmax, equalized": on_db}, abs=0.01)
    assert auto["activation_ranges"]["equalized"] == (on_db >= off_db + MARGIN_DB) and auto_db == max(on_db, off_db)
    inputs = [np.random.default_rng(5).standard_normal((1, 3, 8, 8)).astype(np.float32)]
    _assert_bit_exact(tmp_path / "minmax-on", inputs)


def test_ranges_only_for_int8(tmp_path):
    from mcu_mlir.diagnostics import UserError
    with pytest.raises(UserError, match="--activation-ranges"):
        mcu_mlir.compile(Mlp().eval(), (torch.zeros(1, 16),), target="host", quantize="int16",
                         activation_ranges="histogram", output_dir=str(tmp_path))
    with pytest.raises(UserError, match="--range-equalization"):
        mcu_mlir.compile(Mlp().eval(), (torch.zeros(1, 16),), target="host", quantize="int16",
                         range_equalization="on", output_dir=str(tmp_path))

