"""mcu-verify-value-ranges on the integer TOSA the frontend writes: every zoo model (and the int8
softmax, LayerNorm, RMSNorm and GroupNorm) is proven free of UNPREDICTABLE REQUIREs for any input.

Each compile records the analysis in report.json's `value_ranges`; the pass itself runs again on the
written `model.tosa.mlir` as `mcu-opt --mcu-verify-value-ranges` would.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from mcu_mlir import driver, zoo  # noqa: E402
from mcu_mlir._mlir import ir  # noqa: E402
from mcu_mlir.pipeline import run_pipeline  # noqa: E402

MODELS = sorted(n for n in zoo.MODELS if n not in zoo.LARGE)


def _compile(model, inputs, tmp_path, quantize="int8"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = driver.compile(model, inputs, emit="tosa", quantize=quantize, calibration=2,
                                output_dir=str(tmp_path))
    return result, [str(w.message) for w in caught if "UNPREDICTABLE" in str(w.message)]


def _verify_file(path) -> None:
    """The pass on the written TOSA (raises UserError naming the op if a REQUIRE is unproven)."""
    ctx = ir.Context()
    module = ir.Module.parse(path.read_text(), ctx)
    with ctx, ir.Location.unknown(ctx):
        run_pipeline(module, "builtin.module(mcu-verify-value-ranges)")


@pytest.mark.parametrize("name", MODELS)
def test_zoo_model_is_proven(name, tmp_path):
    model, inputs = zoo.get(name)
    result, warned = _compile(model, inputs, tmp_path)
    assert result.report["value_ranges"] == {"proven": True, "unproven": []}
    assert warned == []
    _verify_file(tmp_path / "model.tosa.mlir")


class _Softmax(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)


class _Norm(torch.nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.norm = norm

    def forward(self, x):
        return self.norm(self.fc(x))


def test_int8_softmax_is_proven(tmp_path):
    # Its reciprocal's Newton steps are proven by splitting the sum of exponentials' interval.
    torch.manual_seed(0)
    result, warned = _compile(_Softmax().eval(), (torch.randn(1, 4, 16),), tmp_path)
    assert result.report["value_ranges"]["proven"], result.report["value_ranges"]
    assert warned == []


@pytest.mark.parametrize("quantize", ["int8", "int16"])
@pytest.mark.parametrize("norm", ["LayerNorm", "RMSNorm"])
def test_norms_are_proven(norm, quantize, tmp_path):
    # deviation * rsqrt(sum of squares): |deviation| <= sqrt(sum of squares) in each piece of the sum.
    torch.manual_seed(0)
    model = _Norm(getattr(torch.nn, norm)(16)).eval()
    result, warned = _compile(model, (torch.randn(1, 4, 16),), tmp_path, quantize)
    assert result.report["value_ranges"]["proven"], result.report["value_ranges"]
    assert warned == []


class _GroupNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.GroupNorm(2, 8)

    def forward(self, x):
        return self.norm(self.conv(x))


@pytest.mark.parametrize("quantize", ["int8", "int16"])
def test_group_norm_is_proven(quantize, tmp_path):
    # Its sum of squares spans a group of rows and channels (two reduce_sums) and the product is
    # regrouped to [.., C] before the rescale: |d| <= sqrt(S) over the group still proves it.
    torch.manual_seed(0)
    result, warned = _compile(_GroupNorm().eval(), (torch.randn(1, 3, 6, 6),), tmp_path, quantize)
    assert result.report["value_ranges"] == {"proven": True, "unproven": []}
    assert warned == []
    _verify_file(tmp_path / "model.tosa.mlir")


class _Magnitude(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.re, self.im = torch.nn.Linear(16, 16), torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.hypot(self.re(x), self.im(x))


def test_int16_magnitude_is_proven(tmp_path):
    # Two int16 squares of -32768 sum to 2**31: the hypot clamps its inputs to |x - zp| <= 32767 first.
    torch.manual_seed(0)
    result, warned = _compile(_Magnitude().eval(), (torch.randn(1, 4, 16),), tmp_path, "int16")
    assert result.report["value_ranges"] == {"proven": True, "unproven": []}
    assert "tosa.clamp" in (tmp_path / "model.tosa.mlir").read_text()


class _Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(20, 8)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, ids):
        return self.fc(self.embed(ids))


def test_embedding_ids_are_clamped_and_proven(tmp_path):
    # Token ids reach the whole int32 range: clamped to [0, 19] before the gather, its REQUIRE
    # 0 <= index < K is proven (without the clamp it was not, for any model with a lookup).
    torch.manual_seed(0)
    result, warned = _compile(_Embed().eval(), (torch.randint(0, 20, (1, 6)),), tmp_path)
    assert result.report["value_ranges"] == {"proven": True, "unproven": []}
    text = (tmp_path / "model.tosa.mlir").read_text()
    assert "tosa.maximum" in text and "tosa.minimum" in text and "tosa.gather" in text
    _verify_file(tmp_path / "model.tosa.mlir")
