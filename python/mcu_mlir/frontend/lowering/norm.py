"""LayerNorm, RMSNorm and GroupNorm as integer TOSA (int8 or int16 in and out).

Over the n values of one normalised group, in int32 (x the integers of the input):

    d  = n * x - sum(x)    (LayerNorm, GroupNorm)     d = x - zp    (RMSNorm)
    d' = d >> s0           rounded, so |d'| < 2**15
    W  = sum(d' * d' >> s1) + E        E: eps in the same units, s1: so W < 2**31
    W  = m * 2**e          e even, m in [2**14, 2**16)  (CLZ, then shifts)
    T  = TABLE(m - 32768)  ~ (2**15 - 1) * 2**14 / sqrt(m)   (513-point interpolated int16 table)
    Z  = ((d' * T) >> 7) >> (e / 2 + 7)    ~ (2**15 - 1) * d' / sqrt(W)   (rounded shifts)
    y  = rescale(rescale(Z * sign(gamma), |gamma| K) + beta / s_out * 2**G, 2**-G) + zp

Z carries about 15 fraction bits of the normalised value whatever the input's spread, the table
about 16 bits of 1/sqrt; gamma and beta stay float until they become per-channel multipliers and an
int32 offset, so the output is within about one LSB of quantize(norm(dequantize(x))) in int8 and a
few in int16. One typed portable kernel computes the same sequence (conversion/norm.py).
"""

from __future__ import annotations

import math

import numpy as np

from ...diagnostics import UserError
from ...fixed_point.qmath import quantize_multiplier
from .values import DQ, Const, Q, dequantize_const
from ..graph.nodes import aten, describe, shape_of

# T(m) for m = 128 j: the interpolated table's points (j < 128 is never read: m >= 2**14).
_RSQRT_ONE = (1 << 15) - 1
_RSQRT_TABLE = np.array([_RSQRT_ONE if j <= 128 else round(_RSQRT_ONE * math.sqrt((1 << 14) / (j * 128)))
                         for j in range(513)], np.int64)


def _bits(value: int) -> int:
    return max(int(value), 0).bit_length()


def normalize(self, x, q: Q, axes, centre: bool, eps_lsb: float):
    """Z ~ (2**15 - 1) * (x - mean) / sqrt(var + eps) * sqrt(2**s1 / n) over `axes` of the i32 tensor
    `x` (the integers of `q`, maybe reshaped; eps in input LSB squared). Returns (Z, s1, n)."""
    w = self.w
    shape = list(x.shape)
    rank = len(shape)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))

    def reduce_sum(v):
        for a in axes:
            v = w.reduce_sum(v, a)
        return v

    # x spans the input type's range (int8: 255, int16: 65535 steps).
    span = 255 if q.elem == "i8" else 65535
    zp = q.zp
    if centre:
        total = reduce_sum(x)
        d = w.sub(w.mul(x, w.scalar(n, rank)), total)
        reach, c = (n - 1) * span, n
    else:
        d = w.sub(x, w.scalar(zp, rank))
        reach, c = span, 1
    s0 = max(0, _bits(reach) - 15)
    if s0:
        d = w.arithmetic_right_shift(d, w.scalar(s0, rank), round=True)
    d_max = (reach >> s0) + 1
    # var (input LSB squared) = W * 2**(2 s0 + s1) / (c**2 n): E is eps in W's units.
    eps_units = eps_lsb * c * c * n / 2.0 ** (2 * s0)
    s1 = 0
    while n * d_max * d_max > (1 << 30) << s1 or eps_units / 2.0 ** s1 > 1 << 30:
        s1 += 1
    if s1 > 63:
        raise UserError(f"{describe(self.node)}: a normalisation over {n} values is too long for int32 statistics")
    square = w.mul(d, d, s1)
    eps_term = max(1, round(eps_units / 2.0 ** s1))
    var = w.add(reduce_sum(square), w.scalar(eps_term, rank))
    # var = m * 2**e, e even, m in [2**14, 2**16): e = (17 - clz) & -2.
    clz = w.clz(var)
    e = w.bitwise_and(w.sub(w.scalar(17, rank), clz), w.scalar(-2, rank))
    zero = w.scalar(0, rank)
    up = w.maximum(w.sub(zero, e), zero)
    down = w.maximum(e, zero)
    m = w.logical_left_shift(var, up)
    m = w.arithmetic_right_shift(m, down, round=False)
    index = w.cast(w.sub(m, w.scalar(1 << 15, rank)), "i16")
    rsqrt = w.table(index, w.const(_RSQRT_TABLE, "i16", (513,)))
    product = w.mul(d, rsqrt, 7)
    half_e = w.arithmetic_right_shift(e, w.scalar(1, rank), round=False)
    amount = w.add(half_e, w.scalar(7, rank))
    z = w.arithmetic_right_shift(product, amount, round=True)
    return z, s1, n


def affine(self, z, s1: int, n: int, gamma, beta, scale: float, zp: int, elem: str):
    """Z (from `normalize`, channels on its last axis) -> gamma * norm + beta, quantized."""
    w = self.w
    shape = list(z.shape)
    rank = len(shape)
    channels = shape[-1]
    gamma = np.ones(channels) if gamma is None else np.broadcast_to(np.asarray(gamma, np.float64), (channels,))
    beta = np.zeros(channels) if beta is None else np.broadcast_to(np.asarray(beta, np.float64), (channels,))
    unit = math.sqrt(n / 2.0 ** s1) / _RSQRT_ONE / scale     # one step of Z in output LSBs, per unit gamma
    reach = math.sqrt(n) * float(np.abs(gamma).max()) / scale + float(np.abs(beta).max()) / scale + 1
    g = int(np.clip(math.floor(math.log2((1 << 29) / reach)), 0, 16))
    if (gamma < 0).any():
        signs = np.where(gamma < 0, -1, 1)
        z = w.mul(z, w.const(signs, "i32", [1] * (rank - 1) + [channels]))
    try:
        pairs = [quantize_multiplier(abs(float(v)) * unit * 2.0 ** g) for v in gamma]
    except ValueError:
        raise UserError(f"{describe(self.node)}: a normalisation weight too large for the output scale") from None
    y = w.rescale(z, [p[0] for p in pairs], [p[1] for p in pairs], 0, 0, "i32")
    offsets = np.round(beta / scale * 2.0 ** g).astype(np.int64)
    if offsets.any():
        y = w.add(y, w.const(offsets, "i32", [1] * (rank - 1) + [channels]))
    return Q(w.rescale(y, [1 << 30], [30 + g], 0, zp, elem, double_round=False), scale, zp)


def _float(v, node, what):
    if v is None:
        return None
    if not isinstance(v, Const):
        raise UserError(f"{describe(node)}: the {what} must be a constant")
    return np.asarray(dequantize_const(v) if v.scales is not None else v.data, np.float64)


def _input(self, node, src):
    if not isinstance(src, DQ):
        return None
    q = src.q
    return q, self.w.cast(q.v, "i32")


def _arg(node, index, name, default=None):
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def _lower_layer_norm(self, node, ins, scale, zp, elem, clamp, centre=True):
    got = _input(self, node, ins[0])
    if got is None:
        return None
    q, x = got
    normalized = list(_arg(node, 1, "normalized_shape"))
    k = len(normalized)
    if list(q.shape[-k:]) != normalized:
        raise UserError(f"{describe(node)}: normalized_shape {normalized} is not the input's last dims")
    gamma = _float(self.values.get(_arg(node, 2, "weight")), node, "weight")
    beta = _float(self.values.get(_arg(node, 3, "bias")), node, "bias") if centre else None
    eps = _arg(node, 4 if centre else 3, "eps")
    eps = float(eps) if eps is not None else float(np.finfo(np.float32).eps)
    lead = list(q.shape[:-k])
    width = int(np.prod(normalized, dtype=np.int64))
    flat = self.w.reshape(x, lead + [width])
    z, s1, n = normalize(self, flat, q, [len(lead)], centre, eps / q.scale ** 2)
    if gamma is not None:
        gamma = gamma.reshape(-1)
    if beta is not None:
        beta = beta.reshape(-1)
    self.record_layer(node, "layer_norm" if centre else "rms_norm", q, None, scale, zp)
    out = affine(self, z, s1, n, gamma, beta, scale, zp, elem)
    out = self.apply_clamp(out, clamp)
    return Q(self.w.reshape(out.v, q.shape), scale, zp)


def _lower_rms_norm(self, node, ins, scale, zp, elem, clamp):
    return _lower_layer_norm(self, node, ins, scale, zp, elem, clamp, centre=False)


def _lower_group_norm(self, node, ins, scale, zp, elem, clamp):
    """[N, C, *S] in groups of C / G channels: normalised as [N, S, G, C / G] (channels last, the
    layout the kernels keep), gamma / beta per channel on the last axis."""
    got = _input(self, node, ins[0])
    if got is None:
        return None
    q, x = got
    groups = int(_arg(node, 1, "num_groups"))
    gamma = _float(self.values.get(_arg(node, 2, "weight")), node, "weight")
    beta = _float(self.values.get(_arg(node, 3, "bias")), node, "bias")
    eps = float(_arg(node, 4, "eps", 1e-5))
    shape = list(q.shape)
    batch, channels = shape[0], shape[1]
    spatial = int(np.prod(shape[2:], dtype=np.int64))
    if channels % groups:
        raise UserError(f"{describe(node)}: {channels} channels in {groups} groups")
    w = self.w
    last = w.transpose(w.reshape(x, (batch, channels, spatial)), (0, 2, 1))
    grouped = w.reshape(last, (batch, spatial, groups, channels // groups))
    z, s1, n = normalize(self, grouped, q, [1, 3], True, eps / q.scale ** 2)
    self.record_layer(node, "group_norm", q, None, scale, zp)
    out = affine(self, w.reshape(z, (batch, spatial, channels)), s1, n, gamma, beta, scale, zp, elem)
    out = self.apply_clamp(out, clamp)
    back = w.transpose(out.v, (0, 2, 1))
    return Q(w.reshape(back, shape_of(node)), scale, zp)


LOWER = {
    aten.layer_norm.default: _lower_layer_norm,
    aten.rms_norm.default: _lower_rms_norm,
    aten.group_norm.default: _lower_group_norm,
}
EAGER = {}
