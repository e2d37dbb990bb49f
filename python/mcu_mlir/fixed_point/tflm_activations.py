"""TFLite Micro's int8 reference activations (LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU), emulated bit
for bit in numpy.

Each is a function of the int8 input alone, so the `.tflite` frontend evaluates it on all 256 int8
values at compile time and the model looks the result up (one TOSA TABLE): the integers are TFLM's by
construction. The arithmetic follows tensorflow/lite/kernels/internal/reference/integer_ops/
{logistic,tanh}.h, reference/{hard_swish,leaky_relu}.h and gemmlowp's fixedpoint.h (logistic, tanh,
exp_on_negative_values), with their Prepare()s' multipliers (float32 where TFLM computes in float).
"""

from __future__ import annotations

import math

import numpy as np

from .cmsis_softmax import INT32_MAX, _wrap32, div_pow2, mul_pow2, mul_sat

INT8_VALUES = np.arange(-128, 128, dtype=np.int64)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: (q_fixed, exponent) with real ~= q_fixed * 2**(exponent - 31);
    negative reals give a negative q_fixed, tiny ones (exponent < -31) flush to (0, 0)."""
    if real == 0.0:
        return 0, 0
    q, e = math.frexp(real)
    fixed = int(math.copysign(math.floor(abs(q) * (1 << 31) + 0.5), q))   # std::round
    if abs(fixed) == 1 << 31:
        fixed //= 2
        e += 1
    if e < -31:
        return 0, 0
    return fixed, e


def multiply_by_quantized_multiplier(x, multiplier: int, shift: int):
    """TFLite's MultiplyByQuantizedMultiplier (double rounding) on int32 values."""
    left, right = max(shift, 0), max(-shift, 0)
    return div_pow2(mul_sat(_wrap32(np.asarray(x, np.int64) << left), multiplier), right)


def _rounding_half_sum(a, b):
    s = np.asarray(a, np.int64) + b
    return np.where(s >= 0, (s + 1) // 2, -((-s + 1) // 2))     # (s + sign) / 2, truncated


def exp_on_negative_values(a, integer_bits: int):
    """gemmlowp::exp_on_negative_values on Q(integer_bits) raw values <= 0, in Q0.31."""
    a = np.asarray(a, np.int64)
    frac = 31 - integer_bits
    quarter = 1 << (frac - 2)
    mod_minus_quarter = (a & (quarter - 1)) - quarter
    x = mul_pow2(mod_minus_quarter, integer_bits) + (1 << 28)      # Rescale<0>, then + 1/8
    x2 = mul_sat(x, x)
    x3 = mul_sat(x2, x)
    x4_over_4 = div_pow2(mul_sat(x2, x2), 2)
    poly = div_pow2(_wrap32(mul_sat(_wrap32(x4_over_4 + x3), 715827883) + x2), 1)
    result = _wrap32(1895147668 + mul_sat(1895147668, _wrap32(x + poly)))
    remainder = _wrap32(mod_minus_quarter - a)
    for exponent, factor in ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
                             (2, 39332535), (3, 720401), (4, 242)):
        if integer_bits > exponent:
            bit = 1 << (frac + exponent)
            result = np.where((remainder & bit) != 0, mul_sat(result, factor), result)
    if integer_bits > 5:
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, INT32_MAX, result)


def _newton_reciprocal(half_denominator):
    """x ~ 1 / half_denominator in Q2.29 (gemmlowp's three Newton-Raphson steps)."""
    x = _wrap32(1515870810 + mul_sat(half_denominator, -1010580540))
    for _ in range(3):
        x = _wrap32(x + mul_pow2(mul_sat(x, _wrap32((1 << 29) - mul_sat(half_denominator, x))), 2))
    return x


def logistic_q0(a, integer_bits: int):
    """gemmlowp::logistic of Q(integer_bits) raw values, in Q0.31."""
    a = np.asarray(a, np.int64)
    magnitude = np.where(a > 0, a, -a)
    e = exp_on_negative_values(-magnitude, integer_bits)
    positive = mul_pow2(_newton_reciprocal(_rounding_half_sum(e, INT32_MAX)), 1)
    result = np.where(a > 0, positive, _wrap32(INT32_MAX - positive))
    return np.where(a == 0, 1 << 30, result)


def tanh_q0(a, integer_bits: int):
    """gemmlowp::tanh of Q(integer_bits) raw values, in Q0.31."""
    a = np.asarray(a, np.int64)
    negative = np.where(a < 0, a, -a)
    e = exp_on_negative_values(negative, integer_bits + 1)      # exp(2 n): ExactMulByPot<1>
    t = mul_pow2(_wrap32(_newton_reciprocal(_rounding_half_sum(e, INT32_MAX)) - (1 << 29)), 2)
    return np.where(a == 0, 0, np.where(a < 0, -t, t))


def _input_q4(x, input_zp: int, input_scale: float):
    """(x - zp in Q4.27, the radius past which the output saturates): LOGISTIC's / TANH's Prepare."""
    fixed, shift = quantize_multiplier_frexp(float(np.float32(input_scale)) * (1 << 27))
    radius = math.floor(15.0 * (1 << 27) / (1 << shift))
    diff = np.asarray(x, np.int64) - input_zp
    return diff, radius, multiply_by_quantized_multiplier(diff, fixed, shift)


def quantize_multiplier_frexp(real: float) -> tuple[int, int]:
    """LOGISTIC's and TANH's own multiplier: frexp, round(q * 2**31), no renormalisation."""
    q, e = math.frexp(real)
    return int(math.floor(q * (1 << 31) + 0.5)), e


def logistic_s8(x, input_zp: int, input_scale: float) -> np.ndarray:
    """reference_integer_ops::Logistic (int8; the output is in 1/256 steps from -128)."""
    diff, radius, q4 = _input_q4(x, input_zp, input_scale)
    y = np.clip(div_pow2(logistic_q0(q4, 4), 23) - 128, -128, 127)
    return np.where(diff <= -radius, -128, np.where(diff >= radius, 127, y)).astype(np.int8)


def tanh_s8(x, input_zp: int, input_scale: float) -> np.ndarray:
    """reference_integer_ops::Tanh (int8; the output is in 1/128 steps around 0)."""
    diff, radius, q4 = _input_q4(x, input_zp, input_scale)
    y = np.clip(div_pow2(tanh_q0(q4, 4), 24), -128, 127)
    return np.where(diff <= -radius, -128, np.where(diff >= radius, 127, y)).astype(np.int8)


def _mul16(a, b):
    """gemmlowp's int16 SaturatingRoundingDoublingHighMul."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    nudged = ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    out = np.where(nudged >= 0, nudged >> 15, -((-nudged) >> 15))
    return np.where((a == -32768) & (b == -32768), 32767, out)


def _saturating_left_shift16(v, amount: int):
    return np.clip(np.asarray(v, np.int64) << amount, -32768, 32767)


def _downscale_to_int16(multiplier: int) -> int:
    """TFLite's DownScaleInt32ToInt16Multiplier."""
    if multiplier >= INT32_MAX - (1 << 15):
        return 32767
    return (multiplier + (1 << 15)) >> 16


def hard_swish_params(input_scale: float, output_scale: float) -> tuple[int, int, int, int]:
    """(output multiplier int16, its exponent, reluish multiplier int16, its exponent): HardSwishPrepare.
    The ratios are taken in double, as the interpreter of the PyPI tflite-micro computes them (float32
    ratios differ where the int16 multiplier's rounding meets a tie)."""
    hires = float(np.float32(input_scale)) / 128
    out_m, out_e = quantize_multiplier(hires / float(np.float32(output_scale)))
    relu_m, relu_e = quantize_multiplier(hires / (3 / 32768))
    return _downscale_to_int16(out_m), out_e, _downscale_to_int16(relu_m), relu_e


def hard_swish(x, input_zp: int, output_zp: int, params, lo: int, hi: int) -> np.ndarray:
    """reference_ops::HardSwish on quantized values (int16 intermediates)."""
    out_m, out_e, relu_m, relu_e = params
    hires = (np.asarray(x, np.int64) - input_zp) * 128
    preshift = _mul16(hires, out_m)
    reluish = hires
    if relu_e > 0:
        reluish = _saturating_left_shift16(reluish, relu_e - 1)
    reluish = _mul16(reluish, relu_m)
    if relu_e > 0:
        reluish = _saturating_left_shift16(reluish, 1)
    if relu_e < 0:
        reluish = div_pow2(reluish, -relu_e)
    reluish = (reluish + (1 << 15)) >> 1
    ab = reluish * preshift          # TFLite's non-rounding SaturatingDoublingHighMul (truncating)
    product = np.where(ab >= 0, ab >> 15, -((-ab) >> 15))
    product = np.where((reluish == -32768) & (preshift == -32768), 32767, product)
    y = div_pow2(product, -out_e) + output_zp
    return np.clip(y, lo, hi)


def leaky_relu(x, input_zp: int, output_zp: int, input_scale: float, output_scale: float, alpha: float,
               lo: int, hi: int) -> np.ndarray:
    """reference_ops::QuantizeLeakyRelu (int8 and int16), its multipliers as TFLM's Prepare makes them."""
    s_in, s_out = np.float32(input_scale), np.float32(output_scale)
    alpha_m, alpha_e = quantize_multiplier(float(np.float32(s_in * np.float32(alpha) / s_out)))
    id_m, id_e = quantize_multiplier(float(np.float32(s_in / s_out)))
    diff = np.asarray(x, np.int64) - input_zp
    scaled_alpha = multiply_by_quantized_multiplier(diff, abs(alpha_m), alpha_e)
    negative_part = -scaled_alpha if alpha_m < 0 else scaled_alpha
    y = output_zp + np.where(diff >= 0, multiply_by_quantized_multiplier(diff, id_m, id_e), negative_part)
    return np.clip(y, lo, hi)


def _checked_log2(x: float) -> tuple[bool, int]:
    """TFLite's CheckedLog2 (float32): (is a power of two within 1e-3, the rounded log2)."""
    log2 = np.float32(np.log(np.float32(x))) * np.float32(1.0 / np.log(np.float32(2.0)))
    rounded = np.float32(math.copysign(math.floor(abs(float(log2)) + 0.5), float(log2)))
    return bool(abs(log2 - rounded) < np.float32(1e-3)), int(rounded)


def sigmoid_s16_params(input_scale: float, kind: str) -> tuple[int, int]:
    """(input multiplier, input right shift) of TFLM's int16 LOGISTIC / TANH (their Prepare and the
    power-of-two case of their Eval): x * multiplier + round >> shift reads the input as Q3.12 * 3."""
    pot, log2 = _checked_log2(input_scale)
    left_shift = 12 + log2
    if pot and (left_shift == 0 or (kind == "tanh" and left_shift == 1)):
        return 3 << left_shift, 0
    multiplier, shift = float(np.float32(input_scale)) * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        multiplier *= 2.0
    return int(multiplier), shift


def sigmoid_s16(x, multiplier: int, shift: int, kind: str, table: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic / Tanh on int16 values: the scaled input's magnitude reads the
    256-entry sigmoid table (9 / 8 fraction bits, linear interpolation), mirrored for negatives."""
    data = (np.asarray(x, np.int64) * multiplier + ((1 << (shift - 1)) if shift else 0)) >> shift
    bits = 9 if kind == "logistic" else 8
    magnitude = np.abs(data)
    high = magnitude >> bits
    inside = high < 255
    index = np.where(inside, high, 0)
    low, up = table[index], table[index + 1]
    result = np.where(inside, (low << bits) + (magnitude & ((1 << bits) - 1)) * (up - low),
                      (0x7FFF << 10) if kind == "logistic" else (0xFFFF << 8))
    if kind == "logistic":
        result = np.where(data >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1) >> 10
    else:
        result = np.where(data >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1) >> 8
    return ((result + (1 << 15)) & 0xFFFF) - (1 << 15)
