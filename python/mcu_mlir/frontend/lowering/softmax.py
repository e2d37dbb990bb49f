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
from .elementwise import runtime_condition
from .values import DQ, RANGE, Indices, Q
from ..graph.nodes import aten, describe, qd, shape_of


def _gather(self, table: np.ndarray, idx):
    w = self.w
    n = int(np.prod(idx.shape, dtype=np.int64))
    flat = w.reshape(idx, (1, n))
    values = w.const(table.astype(np.int64).reshape(1, -1, 1), "i32")
    out = w.gather(values, flat)
    return w.reshape(out, idx.shape)


def cmsis_softmax(self, q, axis: int, params):
    """int8 softmax (output 1/256, -128) computing arm_softmax_s8's integers (fixed_point/cmsis_softmax.py):
    the exponentials and their row-sum terms from 256-entry tables indexed by max - x, the
    reciprocal of the sum by its Newton steps in int32."""
    w = self.w
    rank = len(q.shape)
    mult, shift, diff_min = params
    exp = cmsis_softmax_math.exp_table(mult, shift, diff_min)
    x = w.cast(q.v, "i32")
    mx = w.reduce_max(x, axis)
    d = w.sub(mx, x)
    total = w.reduce_sum(_gather(self, cmsis_softmax_math.sum_table(exp), d), axis)
    headroom = w.clz(total)
    bits = w.sub(self.w.scalar(35, rank), headroom)
    val = w.bitwise_and(w.logical_left_shift(total, headroom), self.w.scalar((1 << 31) - 1, rank))
    # ONE_OVER1(val): Newton steps for 1 / (1 + val / 2**31). MUL_SAT rounds half away from zero,
    # TOSA's MUL (shift 31) half up: equal for products >= 0, so signs are taken out first.
    zero = self.w.scalar(0, rank)

    def mul_sat(a, b_value):
        return w.mul(a, b_value, 31)
    half = w.add(w.arithmetic_right_shift(val, self.w.scalar(1, rank), round=False), self.w.scalar(1 << 30, rank))
    r = w.sub(self.w.scalar(1515870810, rank), mul_sat(half, self.w.scalar(1010580540, rank)))
    for _ in range(3):
        u = w.sub(self.w.scalar(1 << 29, rank), mul_sat(half, r))
        step = mul_sat(r, w.abs(u))
        negative = w.greater(zero, u)
        step = w.select(negative, w.sub(zero, step), step)
        r = w.add(r, w.mul(step, self.w.scalar(4, rank)))
    # MUL_POW2(r, 1) saturates r >= 2**30 (a sum of one exponential) to INT32_MAX = 2 * (2**30 - 1) + 1.
    capped = w.minimum(r, self.w.scalar((1 << 30) - 1, rank))
    over = w.cast(w.greater(r, capped), "i32")
    reciprocal = w.add(w.mul(capped, self.w.scalar(2, rank)), over)
    e = _gather(self, exp, d)
    y = w.arithmetic_right_shift(mul_sat(e, reciprocal), bits, round=True)
    return Q(w.rescale(y, [1 << 30], [30], 0, -128, "i8"), 1 / 256, -128)


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


def cmsis_softmax_s16(self, q, axis: int, params):
    """int16 softmax (output 1/32768, 0) computing arm_softmax_s16's integers (fixed_point/cmsis_softmax.py):
    its requantize of x - max as TOSA's rounding multiply and a shift rounding half away from zero
    (the differences are <= 0: negated, shifted half up, negated back), each LUT lookup as the
    int16 TABLE plus a rounded shift by 7, the int16 wrap-arounds of the C as masks."""
    w = self.w
    rank = len(q.shape)
    mult, shift = params
    exp_lut, obo_lut = cmsis_softmax_math.s16_luts()

    def s(v):
        return w.scalar(v, rank)

    def lut(v16, table):
        looked = w.table(v16, w.const(table, "i16", (513,)))
        return w.arithmetic_right_shift(looked, s(7), round=True)

    def wrap16(v):      # (int16_t)v
        low = w.bitwise_and(w.add(v, s(32768)), s(0xFFFF))
        return w.sub(low, s(32768))
    x = w.cast(q.v, "i32")
    mx = w.reduce_max(x, axis)
    diff = w.sub(x, mx)
    if shift > 0:
        diff = w.mul(diff, s(1 << shift))
    scaled = w.mul(diff, s(mult), 31)
    if shift < 0:
        neg = w.sub(s(0), scaled)
        neg = w.arithmetic_right_shift(neg, s(-shift), round=True)
        scaled = w.sub(s(0), neg)
    # scaled <= 0: only the lower bound of the C's clamp to int16 can bite.
    sym = w.maximum(w.add(scaled, s(32767)), s(-32768))
    e = lut(w.cast(sym, "i16"), exp_lut)
    total = w.reduce_sum(e, axis)
    headroom = w.clz(total)
    normalised = w.logical_left_shift(total, w.sub(headroom, s(1)))
    # ((n + 2**13) >> 14) without the int32 overflow the C may wrap through: the same low 16 bits.
    shifted = w.arithmetic_right_shift(normalised, s(14), round=True)
    index = wrap16(w.sub(shifted, s(98304)))
    r = lut(w.cast(index, "i16"), obo_lut)
    prod = w.mul(e, r)
    y = w.arithmetic_right_shift(prod, w.sub(s(30), headroom), round=False)
    y = wrap16(w.arithmetic_right_shift(y, s(1), round=True))
    return Q(w.rescale(y, [1 << 30], [30], 0, 0, "i16"), 1 / 32768, 0)


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
        e = _gather(self, exp_table, d)
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
    b = w.add(b, _gather(self, log_table, idx))
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
