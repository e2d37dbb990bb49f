"""Integer softmax / log_softmax in TOSA (int8), by exact table lookups and fixed point.

    d = max(x) - x                      (0..255, in input LSBs)
    e = EXP[d] = round(exp(-d * s_in) * 2**F)        (GATHER from a 256-entry int32 table)
    S = sum(e)
    softmax:     q = round(e * K / S) + zp,  K = 1 / s_out (256 for the fixed 1/256 output scale)
    log_softmax: q = round((-d * s_in - log(S / 2**F)) / s_out) + zp, with log(S) from the
                 position of S's leading one (CLZ) plus a table of its next 8 (int16: 10) bits.

Every step is integer and exact but the two table roundings, so the int8 result is within one LSB
of quantize(softmax(dequantize(x))). int16 uses TOSA's interpolated int16 TABLE for the exponential
(e(0) = 2**21), so it is within a few LSB of 1/32768.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...fixed_point import cmsis_softmax as cmsis_softmax_math
from ...diagnostics import UserError
from .cmsis_softmax_graph import gather_table, softmax_s16, softmax_s8
from .elementwise import runtime_condition
from .values import DQ, RANGE, Indices, Q
from ..graph.nodes import aten, describe, qd, shape_of


def cmsis_softmax(self, q, axis: int, params):
    """int8 softmax computing arm_softmax_s8's integers (cmsis_softmax_graph.softmax_s8)."""
    return Q(softmax_s8(self.w, q.v, axis, params), 1 / 256, -128)


def input_mask(self, node):
    """The mask of a softmax whose input is where(mask, x, -inf) (through PT2E's quantize /
    dequantize): a constant one as booleans of the input's shape (None when it masks nothing), a
    run-time one (an attention mask input) as an i1 value broadcast to that shape."""
    src = node.args[0]
    while isinstance(src, torch.fx.Node) and src.target in (qd.quantize_per_tensor.default,
                                                             qd.dequantize_per_tensor.default):
        src = src.args[0]
    if not (isinstance(src, torch.fx.Node) and src.target is aten.where.ScalarOther
            and isinstance(src.args[2], float) and math.isinf(src.args[2]) and src.args[2] < 0):
        return None
    cond = self.values[src.args[0]]
    if isinstance(cond, Indices):       # computed from an integer input at run time: booleans in the IR
        return runtime_condition(self, cond, shape_of(src))
    mask = np.broadcast_to(np.asarray(cond.data).astype(bool), shape_of(src))
    return None if mask.all() else mask     # a mask that keeps everything (no padding) is none


def cmsis_softmax_s16(self, q, axis: int, params, luts=None):
    """int16 softmax computing arm_softmax_s16's integers (cmsis_softmax_graph.softmax_s16)."""
    return Q(softmax_s16(self.w, q.v, axis, params, luts), 1 / 32768, 0)


def lower_softmax(self, node, q, dim: int, log: bool, scale: float, zp: int, elem: str, mask=None):
    """`mask` (booleans of q's shape; the integers at False are the smallest value): those
    elements' exponentials are 0, so they get probability 0 and take no share of the sum."""
    if (q.elem, elem, log) == ("i16", "i8", False):
        # int16 scores, an int8 softmax (mixed precision: the masked fill before a softmax keeps its
        # input's parameters): the int16 softmax, its probabilities rescaled to the int8 output.
        wide = lower_softmax(self, node, q, dim, log, 1 / 32768, 0, "i16", mask)
        return self.requantize(wide, scale, zp, elem)
    if (q.elem, elem) not in (("i8", "i8"), ("i16", "i16")):
        raise UserError(f"{describe(node)}: softmax from {q.elem} to {elem} is not supported")
    w = self.w
    rank = len(q.shape)
    axis = dim % rank
    count = q.shape[axis]
    runtime = mask is not None and not isinstance(mask, np.ndarray)
    if mask is not None:
        if log:
            raise UserError(f"{describe(node)}: a masked log_softmax is not supported")
        if not runtime and not mask.any(axis=axis).all():
            raise UserError(f"{describe(node)}: the mask leaves a row with nothing to attend to")
    if count == 1 and mask is None:
        # One element per row (attention over a single token): probability 1, log-probability 0.
        lo, hi = RANGE[elem]
        value = zp if log else int(np.clip(round(1.0 / scale) + zp, lo, hi))
        return Q(w.const(np.array([value]), elem, q.shape), scale, zp)
    if mask is None and not log and elem == "i8" and (scale, zp) == (1 / 256, -128) and count < 512:
        params = cmsis_softmax_math.params(q.scale)
        if params is not None:
            return cmsis_softmax(self, q, axis, params)
    if mask is None and not log and elem == "i16" and (scale, zp) == (1 / 32768, 0) and count < 1 << 15:
        params = cmsis_softmax_math.s16_params(q.scale)
        if params is not None:
            return cmsis_softmax_s16(self, q, axis, params)
    wide16 = q.elem == "i16"
    x = w.cast(q.v, "i32")
    mx = w.reduce_max(x, axis)
    d = w.sub(mx, x)
    if wide16:
        # d in [0, 65535]: the int16 TABLE (513 points, interpolated, 7 fraction bits) of
        # exp(-d * s) * 2**14, so e(0) = 2**21 exactly.
        frac_bits, d_max = 21, 65535
        if count > 1023:
            raise UserError(f"{describe(node)}: int16 softmax over {count} > 1023 elements")
        centred = w.sub(d, self.w.scalar(32768, rank))
        idx16 = w.cast(centred, "i16")
        points = np.arange(513) * 128
        table = np.round(np.exp(-points * q.scale) * (1 << 14)).astype(np.int64)
        e = w.table(idx16, w.const(table, "i16", (513,)))
    else:
        frac_bits = min(21, 30 - max(1, math.ceil(math.log2(max(count, 2)))))
        d_max = 255
        if frac_bits < 8:
            raise UserError(f"{describe(node)}: softmax over {count} elements is too long for int32 sums")
        exp_table = np.round(np.exp(-np.arange(256) * q.scale) * (1 << frac_bits))
        e = gather_table(self.w, exp_table, d)
    if mask is not None:
        keep = mask if runtime else w.const(mask.astype(np.int64), "i1")
        e = w.select(keep, e, self.w.scalar(0, rank))
    total = w.reduce_sum(e, axis)

    w.zp(0, "i8")      # the multiplies' shift (0), made here: the constants keep their order
    if not log:
        k = round(1.0 / scale)
        if abs(k - 1.0 / scale) > 1e-6 * k:
            raise UserError(f"{describe(node)}: softmax output scale must be 1/{k} (got {scale})")
        if wide16:
            # e * 2**15 / S without overflow: (e << 8) / (S >> 7).
            if k != 1 << 15:
                raise UserError(f"{describe(node)}: int16 softmax output scale must be 1/32768")
            num = w.mul(e, self.w.scalar(1 << 8, rank))
            den = w.arithmetic_right_shift(total, self.w.scalar(7, rank), round=False)
            half = w.arithmetic_right_shift(den, self.w.scalar(1, rank), round=False)
            num = w.add(num, half)
        else:
            if k * 2 * (1 << frac_bits) >= 1 << 31:
                raise UserError(f"{describe(node)}: softmax output scale must be 1/256 (got {scale})")
            num = w.mul(e, self.w.scalar(2 * k, rank))
            num = w.add(num, total)
            den = w.add(total, total)
        if runtime:
            # A row the mask empties at run time has sum 0: divided by 1, every probability is 0
            # (the float model gives NaN there).
            den = w.maximum(den, self.w.scalar(1, rank))
        r = w.intdiv(num, den)
        out = w.rescale(r, [1 << 30], [30], 0, zp, elem)
        return Q(out, scale, zp)
    return _log_probabilities(self, q.scale, d, total, rank, d_max, frac_bits, wide16, scale, zp, elem)


def _log_probabilities(self, in_scale, d, total, rank, d_max, frac_bits, wide16, scale, zp, elem):
    """log_softmax's integers from each element's distance `d` below its row's maximum and the
    row's sum of exponentials: -(d * s_in + log(sum)) / s_out, the log from a table."""
    w = self.w
    ratio = in_scale / scale
    bound = d_max * ratio + 33 * math.log(2) / scale + 1
    p = max(0, min(16, int(math.floor(math.log2((1 << 29) / bound)))))
    r1 = round(ratio * (1 << p))
    r2 = round(math.log(2) / scale * (1 << p))
    mant = 10 if wide16 else 8     # bits of S after its leading one that index the log table
    log_table = np.round(np.log1p((np.arange(1 << mant) + 0.5) / (1 << mant)) / scale * (1 << p))
    a = w.mul(d, self.w.scalar(r1, rank))        # d * s_in / s_out
    clz = w.clz(total)
    amount = w.sub(self.w.scalar(31 - mant, rank), clz)   # top bit - mant
    top = w.logical_right_shift(total, amount)
    idx = w.bitwise_and(top, self.w.scalar((1 << mant) - 1, rank))
    octave = w.sub(self.w.scalar(31 - frac_bits, rank), clz)
    b = w.mul(octave, self.w.scalar(r2, rank))
    b = w.add(b, gather_table(self.w, log_table, idx))
    neg = w.add(a, b)                                    # -(result) << p
    half = self.w.scalar((1 << p) >> 1, rank)
    neg = w.sub(neg, half)
    zero = self.w.scalar(0, rank)
    val = w.sub(zero, neg)
    if p:
        val = w.arithmetic_right_shift(val, self.w.scalar(p, rank), round=False)
    out = w.rescale(val, [1 << 30], [30], 0, zp, elem)
    return Q(out, scale, zp)


def _lower_softmax(self, node, ins, scale, zp, elem, clamp):
    if not isinstance(ins[0], DQ):
        return None
    log = node.target in (aten.log_softmax.int, aten._log_softmax.default)
    self.record_layer(node, "log_softmax" if log else "softmax", ins[0].q, None, scale, zp)
    out = lower_softmax(self, node, ins[0].q, int(node.args[1]), log, scale, zp, elem, input_mask(self, node))
    return self.apply_clamp(out, clamp)


LOWER = {
    aten.softmax.int: _lower_softmax, aten._softmax.default: _lower_softmax,
    aten.log_softmax.int: _lower_softmax, aten._log_softmax.default: _lower_softmax,
}
EAGER = {}
