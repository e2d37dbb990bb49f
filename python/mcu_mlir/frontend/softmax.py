"""Integer softmax / log_softmax in TOSA (int8), by exact table lookups and fixed point.

    d = max(x) - x                      (0..255, in input LSBs)
    e = EXP[d] = round(exp(-d * s_in) * 2**F)        (GATHER from a 256-entry int32 table)
    S = sum(e)
    softmax:     q = round(e * K / S) + zp,  K = 1 / s_out (256 for the fixed 1/256 output scale)
    log_softmax: q = round((-d * s_in - log(S / 2**F)) / s_out) + zp, with log(S) from the
                 position of S's leading one (CLZ) plus a 256-entry table of its next 8 bits.

Every step is integer and exact but the two table roundings, so the result is within one LSB of
quantize(softmax(dequantize(x))).
"""

from __future__ import annotations

import math

import numpy as np

from ..diagnostics import UserError


def _gather(self, table: np.ndarray, idx):
    w = self.w
    n = int(np.prod(idx.shape, dtype=np.int64))
    flat = w.reshape(idx, (1, n))
    values = w.const(table.astype(np.int64).reshape(1, -1, 1), "i32")
    out = w.op("tosa.gather", [values, flat], (1, n, 1), "i32")
    return w.reshape(out, idx.shape)


def _scalar(self, value: int, rank: int):
    return self.w.const(np.array([value]), "i32", (1,) * rank)


def lower_softmax(self, node, q, dim: int, log: bool, scale: float, zp: int, elem: str):
    from .fx_to_tosa import Q, describe
    if q.elem != "i8" or elem != "i8":
        raise UserError(f"{describe(node)}: int16 softmax is not supported yet; use int8")
    w = self.w
    rank = len(q.shape)
    axis = dim % rank
    count = q.shape[axis]
    frac_bits = min(21, 30 - max(1, math.ceil(math.log2(max(count, 2)))))
    if frac_bits < 8:
        raise UserError(f"{describe(node)}: softmax over {count} elements is too long for int32 sums")
    x = w.op("tosa.cast", [q.v], q.shape, "i32")
    red_shape = list(q.shape)
    red_shape[axis] = 1
    mx = w.op("tosa.reduce_max", [x], red_shape, "i32", f"axis = {axis} : i32")
    d = w.op("tosa.sub", [mx, x], q.shape, "i32")
    exp_table = np.round(np.exp(-np.arange(256) * q.scale) * (1 << frac_bits))
    e = _gather(self, exp_table, d)
    total = w.op("tosa.reduce_sum", [e], red_shape, "i32", f"axis = {axis} : i32")
    shift0 = w.zp(0, "i8")
    if not log:
        k = round(1.0 / scale)
        if abs(k - 1.0 / scale) > 1e-6 * k or k * 2 * (1 << frac_bits) >= 1 << 31:
            raise UserError(f"{describe(node)}: softmax output scale must be 1/256 (got {scale})")
        num = w.op("tosa.mul", [e, _scalar(self, 2 * k, rank), shift0], q.shape, "i32")
        num = w.op("tosa.add", [num, total], q.shape, "i32")
        den = w.op("tosa.add", [total, total], red_shape, "i32")
        r = w.op("tosa.intdiv", [num, den], q.shape, "i32")
        out = w.rescale(r, [1 << 30], [30], 0, zp, elem)
        return Q(out, scale, zp)
    ratio = q.scale / scale
    bound = 255 * ratio + 33 * math.log(2) / scale + 1
    p = max(0, min(16, int(math.floor(math.log2((1 << 29) / bound)))))
    r1 = round(ratio * (1 << p))
    r2 = round(math.log(2) / scale * (1 << p))
    log_table = np.round(np.log1p((np.arange(256) + 0.5) / 256) / scale * (1 << p))
    a = w.op("tosa.mul", [d, _scalar(self, r1, rank), shift0], q.shape, "i32")        # d * s_in / s_out
    clz = w.op("tosa.clz", [total], red_shape, "i32")
    amount = w.op("tosa.sub", [_scalar(self, 23, rank), clz], red_shape, "i32")      # top bit - 8
    top = w.op("tosa.logical_right_shift", [total, amount], red_shape, "i32")
    idx = w.op("tosa.bitwise_and", [top, _scalar(self, 255, rank)], red_shape, "i32")
    octave = w.op("tosa.sub", [_scalar(self, 31 - frac_bits, rank), clz], red_shape, "i32")
    b = w.op("tosa.mul", [octave, _scalar(self, r2, rank), shift0], red_shape, "i32")
    b = w.op("tosa.add", [b, _gather(self, log_table, idx)], red_shape, "i32")
    neg = w.op("tosa.add", [a, b], q.shape, "i32")                                    # -(result) << p
    half = _scalar(self, (1 << p) >> 1, rank)
    neg = w.op("tosa.sub", [neg, half], q.shape, "i32")
    zero = _scalar(self, 0, rank)
    val = w.op("tosa.sub", [zero, neg], q.shape, "i32")
    if p:
        val = w.op("tosa.arithmetic_right_shift", [val, _scalar(self, p, rank)], q.shape, "i32",
                   "round = false")
    out = w.rescale(val, [1 << 30], [30], 0, zp, elem)
    return Q(out, scale, zp)
