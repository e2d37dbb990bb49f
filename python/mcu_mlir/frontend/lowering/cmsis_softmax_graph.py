"""The integer programs of CMSIS-NN's softmax kernels as TOSA, for any frontend: each takes the
TOSA builder and the quantized input value and returns the output value (int8: scale 1/256, zero
point -128; int16: scale 1/32768, zero point 0). No torch here: the `.tflite` frontend uses them too."""

from __future__ import annotations

import numpy as np

from ...fixed_point import cmsis_softmax as cmsis_softmax_math
from .tosa_builder import TosaBuilder, Value


def gather_table(w: TosaBuilder, table: np.ndarray, idx):
    n = int(np.prod(idx.shape, dtype=np.int64))
    flat = w.reshape(idx, (1, n))
    values = w.const(table.astype(np.int64).reshape(1, -1, 1), "i32")
    out = w.gather(values, flat)
    return w.reshape(out, idx.shape)


def softmax_s8(w: TosaBuilder, x8: Value, axis: int, params) -> Value:
    """int8 softmax (output 1/256, -128) computing arm_softmax_s8's integers (fixed_point/cmsis_softmax.py):
    the exponentials and their row-sum terms from 256-entry tables indexed by max - x, the
    reciprocal of the sum by its Newton steps in int32."""
    rank = len(x8.shape)
    mult, shift, diff_min = params
    exp = cmsis_softmax_math.exp_table(mult, shift, diff_min)
    x = w.cast(x8, "i32")
    mx = w.reduce_max(x, axis)
    d = w.sub(mx, x)
    total = w.reduce_sum(gather_table(w, cmsis_softmax_math.sum_table(exp), d), axis)
    headroom = w.clz(total)
    bits = w.sub(w.scalar(35, rank), headroom)
    val = w.bitwise_and(w.logical_left_shift(total, headroom), w.scalar((1 << 31) - 1, rank))
    # ONE_OVER1(val): Newton steps for 1 / (1 + val / 2**31). MUL_SAT rounds half away from zero,
    # TOSA's MUL (shift 31) half up: equal for products >= 0, so signs are taken out first.
    zero = w.scalar(0, rank)

    def mul_sat(a, b_value):
        return w.mul(a, b_value, 31)
    half = w.add(w.arithmetic_right_shift(val, w.scalar(1, rank), round=False), w.scalar(1 << 30, rank))
    r = w.sub(w.scalar(1515870810, rank), mul_sat(half, w.scalar(1010580540, rank)))
    for _ in range(3):
        u = w.sub(w.scalar(1 << 29, rank), mul_sat(half, r))
        step = mul_sat(r, w.abs(u))
        negative = w.greater(zero, u)
        step = w.select(negative, w.sub(zero, step), step)
        r = w.add(r, w.mul(step, w.scalar(4, rank)))
    # MUL_POW2(r, 1) saturates r >= 2**30 (a sum of one exponential) to INT32_MAX = 2 * (2**30 - 1) + 1.
    capped = w.minimum(r, w.scalar((1 << 30) - 1, rank))
    over = w.cast(w.greater(r, capped), "i32")
    reciprocal = w.add(w.mul(capped, w.scalar(2, rank)), over)
    e = gather_table(w, exp, d)
    y = w.arithmetic_right_shift(mul_sat(e, reciprocal), bits, round=True)
    return w.rescale(y, [1 << 30], [30], 0, -128, "i8")


def softmax_s16(w: TosaBuilder, x16: Value, axis: int, params, luts=None, saturate: bool = False) -> Value:
    """int16 softmax (output 1/32768, 0) computing arm_softmax_s16's integers (fixed_point/cmsis_softmax.py):
    its requantize of x - max as TOSA's rounding multiply and a shift rounding half away from zero
    (the differences are <= 0: negated, shifted half up, negated back), each LUT lookup as the
    int16 TABLE plus a rounded shift by 7, the int16 wrap-arounds of the C as masks. `luts`: the
    (exp, 1 / (1 + x)) tables the kernel is given (default: gen_lut's). `saturate`: TFLite Micro's
    reference SoftmaxInt16 instead, whose int16 saturations are clamps where the C wraps around."""
    rank = len(x16.shape)
    mult, shift = params
    exp_lut, obo_lut = luts if luts is not None else cmsis_softmax_math.s16_luts()

    def s(v):
        return w.scalar(v, rank)

    def lut(v16, table):
        looked = w.table(v16, w.const(table, "i16", (513,)))
        return w.arithmetic_right_shift(looked, s(7), round=True)

    def wrap16(v):      # (int16_t)v
        low = w.bitwise_and(w.add(v, s(32768)), s(0xFFFF))
        return w.sub(low, s(32768))
    x = w.cast(x16, "i32")
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
    if saturate:
        r = lut(w.cast(w.minimum(w.sub(shifted, s(98304)), s(32767)), "i16"), obo_lut)
        y = w.arithmetic_right_shift(w.mul(e, r), w.sub(s(31), headroom), round=True)
        return w.cast(w.minimum(w.maximum(y, s(0)), s(32767)), "i16")
    index = wrap16(w.sub(shifted, s(98304)))
    r = lut(w.cast(index, "i16"), obo_lut)
    prod = w.mul(e, r)
    y = w.arithmetic_right_shift(prod, w.sub(s(30), headroom), round=False)
    y = wrap16(w.arithmetic_right_shift(y, s(1), round=True))
    return w.rescale(y, [1 << 30], [30], 0, 0, "i16")
