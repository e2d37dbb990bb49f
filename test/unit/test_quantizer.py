"""The CMSIS-NN quantizer's annotations and the fixed-point helpers (QuantizeMultiplier, rescale)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from mcu_mlir.fixed_point.qmath import apply_rescale, quantize_multiplier, quantize_multiplier_16  # noqa: E402

qd = torch.ops.quantized_decomposed


def _srdhm(a: int, b: int) -> int:
    """CMSIS-NN / gemmlowp SaturatingRoundingDoublingHighMul."""
    if a == b == -(1 << 31):
        return (1 << 31) - 1
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    return int((ab + nudge) / (1 << 31))       # C division truncates toward zero


def _rdbpot(x: int, exponent: int) -> int:
    """CMSIS-NN / gemmlowp RoundingDivideByPOT."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def _cmsis_requantize(value: int, multiplier: int, tflite_shift: int) -> int:
    """arm_nn_requantize with double rounding (CMSIS-NN's default)."""
    left = max(tflite_shift, 0)
    right = max(-tflite_shift, 0)
    return _rdbpot(_srdhm(value * (1 << left), multiplier), right)


@pytest.mark.parametrize("real", [0.5, 0.25, 1e-3, 0.0078125, 0.3333333, 0.9999999, 1.7, 3e-6])
def test_quantize_multiplier_is_tflites(real):
    m, shift = quantize_multiplier(real)
    q, e = math.frexp(real)
    expect = int(math.floor(q * 2 ** 31 + 0.5))
    if expect == 2 ** 31:
        expect, e = expect // 2, e + 1
    assert (m, shift) == (expect, 31 - e)
    assert 2 ** 30 <= m < 2 ** 31
    assert abs(m * 2.0 ** -shift - real) <= real * 2 ** -30


def test_double_rounding_rescale_equals_cmsis_requantize():
    rng = np.random.default_rng(0)
    for real in rng.uniform(1e-5, 0.99, 60):
        m, shift = quantize_multiplier(float(real))
        for v in rng.integers(-(1 << 24), 1 << 24, 40):
            v = int(v)
            assert apply_rescale(v, m, shift) == _cmsis_requantize(v, m, 31 - shift), (real, v)


def test_16bit_multiplier():
    m, shift = quantize_multiplier_16(0.0123)
    assert 2 ** 14 <= m < 2 ** 15
    assert abs(m * 2.0 ** -shift - 0.0123) < 0.0123 * 2 ** -14


def _converted(model, *example, activations="int8"):
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from mcu_mlir.frontend import export, fold_batch_norm
    from mcu_mlir.frontend.quantize.quantizer import CmsisNNQuantizer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = fold_batch_norm(export(model.eval(), example).module())
        prepared = prepare_pt2e(gm, CmsisNNQuantizer(activations))
        g = torch.Generator().manual_seed(0)
        for _ in range(4):
            prepared(*[torch.randn(x.shape, generator=g) for x in example])
        return convert_pt2e(prepared)


def _nodes(gm, target):
    return [n for n in gm.graph.nodes if n.target == target]


class ConvReluPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 3 * 3, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = nn.functional.max_pool2d(y, 2).flatten(1)
        return torch.softmax(self.fc(y), -1)


def test_annotations_follow_cmsis_nn():
    gm = _converted(ConvReluPool(), torch.randn(1, 3, 8, 8))
    aten = torch.ops.aten
    assert not _nodes(gm, aten.batch_norm.default), "BatchNorm must be folded"
    weights = [n for n in _nodes(gm, qd.dequantize_per_channel.default) if n.args[-1] == torch.int8]
    assert len(weights) == 2
    for w in weights:
        assert w.args[4:6] == (-127, 127) and w.args[3] == 0      # symmetric, per output channel
        zps = getattr(gm, w.args[2].target)
        assert torch.count_nonzero(zps) == 0
    (conv,) = _nodes(gm, aten.conv2d.default)
    bias = conv.args[2]
    assert bias.target == qd.dequantize_per_channel.default and bias.args[-1] == torch.int32
    in_scale = conv.args[0].args[1]
    w_scales = getattr(gm, conv.args[1].args[1].target)
    b_scales = getattr(gm, bias.args[1].target)
    torch.testing.assert_close(b_scales, (in_scale * w_scales.double()).float())
    # relu fused: the conv output itself is not quantized, the relu output is.
    assert all(u.target != qd.quantize_per_tensor.default for u in conv.users)
    (relu,) = _nodes(gm, aten.relu.default)
    (q_relu,) = relu.users
    (pool,) = _nodes(gm, aten.max_pool2d.default)
    (q_pool,) = pool.users
    assert q_pool.args[1:3] == q_relu.args[1:3], "max pool keeps its input's parameters"
    (softmax,) = _nodes(gm, aten.softmax.int)
    (q_soft,) = softmax.users
    assert q_soft.args[1:3] == (1 / 256, -128)


def test_int16_activations_are_symmetric():
    gm = _converted(ConvReluPool(), torch.randn(1, 3, 8, 8), activations="int16")
    qs = _nodes(gm, qd.quantize_per_tensor.default)
    assert qs and all(q.args[5] == torch.int16 and q.args[2] == 0 for q in qs)


def test_linear_stays_linear():
    gm = _converted(nn.Sequential(nn.Linear(6, 3)), torch.randn(2, 6))
    assert _nodes(gm, torch.ops.aten.linear.default)
    assert not _nodes(gm, torch.ops.aten.addmm.default)
