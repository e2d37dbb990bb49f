"""CMSIS-NN's int8 softmax (arm_softmax_s8) arithmetic, emulated bit for bit in numpy.

arm_softmax_s8(input, rows, row_size, mult, shift, diff_min) works per row on diff = x - max(x)
(-255..0 for int8): exp(diff) is EXP_ON_NEG(MUL_SAT(diff << shift, mult)) in Q0.31 (0 for
diff < diff_min), their sum in Q12.19, its reciprocal by Newton steps (ONE_OVER1), and
y = DIV_POW2(MUL_SAT(reciprocal, exp), 35 - clz(sum)) - 128. Everything per element is a function
of diff alone, so the frontend's TOSA form reads the exponentials from a 256-entry table and
computes the per-row part (CLZ, reciprocal) in int32 TOSA ops; the conversion checks a table
against the target's arithmetic before it calls the kernel. The MVE code path rounds a doubling
high multiply of a negative product half up where the scalar path rounds away from zero, so the
tables are compared per code path (`mve`).

The parameters follow TFLite (PreprocessSoftmaxScaling with 5 integer bits of scaled diff).
"""

from __future__ import annotations

import math

import numpy as np

from .qmath import q31_frexp

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
ACCUM_BITS = 12
SCALED_DIFF_INTEGER_BITS = 5


def _wrap32(v):
    return ((np.asarray(v, np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def mul_sat(a, b, mve: bool = False):
    """arm_nn_doubling_high_mult (scalar) or vqrdmulh (MVE) on int32 values."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    product = a * b
    if mve:
        out = (product + (1 << 30)) >> 31
    else:
        nudged = product + np.where((a < 0) ^ (b < 0), 1 - (1 << 30), 1 << 30)
        out = np.where(nudged >= 0, nudged >> 31, -((-nudged) >> 31))
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, out)


def div_pow2(x, exponent: int):
    """arm_nn_divide_by_power_of_two: rounding right shift, midpoints away from zero."""
    x = np.asarray(x, np.int64)
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def mul_pow2(x, exponent: int):
    """arm_nn_mult_by_power_of_two: saturating left shift."""
    x = np.asarray(x, np.int64)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, _wrap32(x << exponent)))


def exp_on_negative_values(val, mve: bool = False):
    """arm_nn_exp_on_negative_values (or its MVE twin): exp(val) for val <= 0 in Q5.26, in Q0.31."""
    val = np.asarray(val, np.int64)
    shift = 24
    mod_minus_quarter = (val & ((1 << shift) - 1)) - (1 << shift)
    remainder = mod_minus_quarter - val
    x = (mod_minus_quarter << 5) + (1 << 28)
    x2 = mul_sat(x, x, mve)
    op1 = _wrap32(div_pow2(mul_sat(x2, x2, mve), 2) + mul_sat(x2, x, mve))
    op2 = _wrap32(x + div_pow2(_wrap32(mul_sat(op1, 715827883, mve) + x2), 1))
    result = _wrap32(1895147668 + mul_sat(1895147668, op2, mve))
    for k, factor in enumerate((1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)):
        result = np.where((remainder & (1 << (shift + k))) != 0, mul_sat(result, factor, mve), result)
    return np.where(val == 0, INT32_MAX, result)


def one_over_one_plus_x(val):
    """arm_nn_one_over_one_plus_x_for_x_in_0_1 for val in [0, 2**31): 1 / (1 + val / 2**31) in Q1.30."""
    val = np.asarray(val, np.int64)
    half = (val + INT32_MAX + 1) // 2
    x = _wrap32(1515870810 + mul_sat(half, -1010580540))
    for _ in range(3):
        x = _wrap32(x + mul_pow2(mul_sat(x, _wrap32((1 << 29) - mul_sat(half, x))), 2))
    return mul_pow2(x, 1)


def newton_corrections(val):
    """The three Newton corrections of `one_over_one_plus_x` before their saturating x4 (the TOSA
    form multiplies them by 4 without saturation: they must stay below 2**29 in magnitude)."""
    val = np.asarray(val, np.int64)
    half = (val + INT32_MAX + 1) // 2
    x = _wrap32(1515870810 + mul_sat(half, -1010580540))
    out = []
    for _ in range(3):
        w = mul_sat(x, _wrap32((1 << 29) - mul_sat(half, x)))
        out.append(w)
        x = _wrap32(x + mul_pow2(w, 2))
    return out


def params(input_scale: float) -> tuple[int, int, int] | None:
    """(mult, shift, diff_min) of arm_softmax_s8 for an int8 input scale (beta 1), as TFLite
    computes them; None where the scale is out of the kernel's range."""
    real = min(input_scale * (1 << (31 - SCALED_DIFF_INTEGER_BITS)), (1 << 31) - 1.0)
    if real < 1.0:
        return None
    mult, e = q31_frexp(real)
    shift = e
    if shift > 31 - SCALED_DIFF_INTEGER_BITS:
        return None
    radius = math.floor(((1 << SCALED_DIFF_INTEGER_BITS) - 1) * (1 << (31 - SCALED_DIFF_INTEGER_BITS))
                        / (1 << shift))
    return mult, shift, -radius


def exp_table(mult: int, shift: int, diff_min: int, mve: bool = False) -> np.ndarray:
    """exp of diff = -d for d = 0..255 as the kernel computes it (Q0.31; 0 below diff_min)."""
    diff = -np.arange(256, dtype=np.int64)
    value = exp_on_negative_values(mul_sat(diff << shift, mult, mve), mve)
    return np.where(diff >= diff_min, value, 0)


def sum_table(exp: np.ndarray) -> np.ndarray:
    """What each element adds to the row sum: exp >> 12, rounded."""
    return div_pow2(exp, ACCUM_BITS)


def _argument_range(value: int, mve: bool) -> tuple[int, int] | None:
    """[lo, hi]: the Q5.26 arguments a <= 0 whose EXP_ON_NEG is `value` (bisection; the function
    rises with a), or None."""
    def first(at_least):           # smallest a in [-2**31, 0] with exp(a) >= at_least
        lo, hi = INT32_MIN, 0
        while lo < hi:
            mid = (lo + hi) // 2
            if int(exp_on_negative_values(mid, mve)) >= at_least:
                hi = mid
            else:
                lo = mid + 1
        return lo
    lo = first(value)
    hi = first(value + 1) - 1 if value < INT32_MAX else 0
    if lo > hi or int(exp_on_negative_values(lo, mve)) != value:
        return None
    return lo, hi


def recover(exp: np.ndarray, mve: bool = False) -> tuple[int, int, int] | None:
    """(mult, shift, diff_min) under which the kernel's exponentials are exactly `exp` (256
    entries, d = 0..255), or None. Each entry bounds the argument -d * 2**shift * mult / 2**31
    (EXP_ON_NEG inverted by bisection); the multipliers left are tried against the whole table.
    Any that reproduces it computes the same softmax."""
    exp = np.asarray(exp, np.int64).reshape(-1)
    if exp.shape != (256,) or exp[0] != INT32_MAX or (exp < 0).any():
        return None
    nonzero = np.nonzero(exp)[0]
    last = int(nonzero[-1])
    # r = 2**shift * mult / 2**31 (the Q5.26 argument per unit of diff), bounded by the entries.
    r_lo, r_hi = 0.0, float(1 << 31)
    for d in sorted({1, 2, 3, last // 2, last} - {0}):
        if exp[d] in (0, INT32_MAX):
            continue
        bounds = _argument_range(int(exp[d]), mve)
        if bounds is None:
            return None
        r_lo, r_hi = max(r_lo, (-bounds[1] - 0.5) / d), min(r_hi, (-bounds[0] + 0.5) / d)
    if r_lo > r_hi:
        return None
    for shift in range(0, 32 - SCALED_DIFF_INTEGER_BITS):
        m_lo = max(1 << 30, math.floor(r_lo * 2.0 ** (31 - shift)))
        m_hi = min((1 << 31) - 1, math.ceil(r_hi * 2.0 ** (31 - shift)))
        if m_hi < m_lo or m_hi - m_lo > 1 << 12:
            continue
        for mult in range(m_lo, m_hi + 1):
            for diff_min in (-last, -255):
                if np.array_equal(exp_table(mult, shift, diff_min, mve), exp):
                    return mult, shift, diff_min
    return None


def softmax_s8(x: np.ndarray, mult: int, shift: int, diff_min: int, mve: bool = False) -> np.ndarray:
    """arm_softmax_s8 over the last axis of int8 `x` (the kernel's result, for tests)."""
    x = np.asarray(x, np.int64)
    d = x.max(axis=-1, keepdims=True) - x
    exp = exp_table(mult, shift, diff_min, mve)[d]
    total = sum_table(exp_table(mult, shift, diff_min, mve))[d].sum(axis=-1, keepdims=True)
    headroom = np.array([32 - int(t).bit_length() for t in total.reshape(-1)]).reshape(total.shape)
    bits = ACCUM_BITS - headroom + 23
    scale = one_over_one_plus_x((total << headroom) & INT32_MAX)
    out = np.empty_like(x)
    flat_p, flat_b = mul_sat(scale, exp), np.broadcast_to(bits, x.shape)
    for idx in np.ndindex(x.shape):
        out[idx] = div_pow2(flat_p[idx], int(flat_b[idx])) - 128
    return np.clip(out, -128, 127).astype(np.int8)


# -- arm_softmax_s16 ---------------------------------------------------------------------------
#
# arm_softmax_s16(input, rows, row_size, mult, shift, {exp_lut, one_by_one_lut}, output), per row:
#   diff = x - max(x) (<= 0);  sym = clamp(arm_nn_requantize(diff, mult, shift) + 32767, int16)
#   e = LUT(exp_lut, sym);     sum = sum(e);     headroom = clz(sum)
#   r = LUT(one_by_one_lut, int16(((sum << (headroom - 1)) + 2**13 >> 14) - 98304))
#   y = (((e * r) >> (30 - headroom)) + 1) >> 1
# with LUT(t, v) = t[i] + (((t[i + 1] - t[i]) * f + 64) >> 7), i = 256 + (v >> 7), f = v & 127:
# TOSA's int16 TABLE followed by a rounded shift by 7. The tables (513 int16 each) are the
# caller's; TFLite Micro's gen_lut makes exp on [-10, 0] and 1 / (1 + x) on [0, 1] in Q15.

LUT_SIZE = 513


def gen_lut(func, lo: float, hi: float) -> np.ndarray:
    """TFLite's gen_lut for an int16 -> int16 table (output range [-1, 1]): samples nudged by half
    the interpolation error at each segment's midpoint."""
    step = (hi - lo) / (LUT_SIZE - 1)
    scale = 32768.0

    def rnd(v):
        return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)
    out = np.zeros(LUT_SIZE, np.int64)
    for i in range(LUT_SIZE - 1):
        val, mid, nxt = func(lo + i * step), func(lo + i * step + step / 2), func(lo + (i + 1) * step)
        sample = rnd(val * scale)
        interp = rnd((nxt * scale + rnd(val * scale)) / 2)
        bias = rnd((interp - rnd(mid * scale)) / 2)
        out[i] = min(max(sample - bias, -32768), 32767)
    out[-1] = min(max(rnd(func(hi) * scale), -32768), 32767)
    return out


def s16_luts() -> tuple[np.ndarray, np.ndarray]:
    """(exp_lut, one_by_one_lut) as TFLite Micro builds them for its int16 softmax."""
    return gen_lut(math.exp, -10.0, 0.0), gen_lut(lambda x: 1.0 / (1.0 + x), 0.0, 1.0)


def s16_params(input_scale: float) -> tuple[int, int] | None:
    """(mult, shift) of arm_softmax_s16 for an int16 input scale (beta 1): differences in [-65535, 0]
    scaled so that the exp table's [-10, 0] spans them, as TFLite; None when diff << shift could
    overflow int32."""
    real = input_scale * 65535.0 / 10.0
    if not real > 0:
        return None
    mult, e = q31_frexp(real)
    if e > 15 or e < -31:
        return None
    return mult, e


def lut_s16(table: np.ndarray, v):
    """The kernel's interpolated lookup of int16 values `v` in a 513-entry table."""
    v = np.asarray(v, np.int64)
    idx, frac = 256 + (v >> 7), v & 127
    base = table[idx]
    return base + (((table[idx + 1] - base) * frac + 64) >> 7)


def _wrap16(v):
    return ((np.asarray(v, np.int64) + 32768) & 0xFFFF) - 32768


def softmax_s16(x: np.ndarray, mult: int, shift: int, exp_lut: np.ndarray, obo_lut: np.ndarray) -> np.ndarray:
    """arm_softmax_s16 over the last axis of int16 `x`, bit for bit."""
    x = np.asarray(x, np.int64)
    diff = x - x.max(axis=-1, keepdims=True)
    left, right = max(shift, 0), max(-shift, 0)
    scaled = div_pow2(mul_sat(diff * (1 << left), mult, mve=True), right)   # no_sat: half up, either sign
    e = lut_s16(exp_lut, np.clip(scaled + 32767, -32768, 32767))
    total = e.sum(axis=-1, keepdims=True)
    headroom = 32 - np.floor(np.log2(total)).astype(np.int64) - 1
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    r = lut_s16(obo_lut, _wrap16(shifted - 98304))
    y = (((e * r) >> (30 - headroom)) + 1) >> 1
    return _wrap16(y).astype(np.int16)
