"""TFLite's 16x8 quantization (int16 activations with zero point 0, int8 weights, int64 bias): the
parts of TFLite Micro's int16 reference kernels that differ from its int8 ones.

  CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED  int64 accumulator + int64 bias (TOSA: int48),
      requantised by MultiplyByQuantizedMultiplier(int64): the 32-bit multiplier reduced to 16
      bits (REDUCE_MULTIPLIER: (m + 2**15) >> 16, or 0x7FFF from 0x7FFF0000 on), one rounding half
      up by 15 - shift: TOSA's 16-bit-multiplier RESCALE of the int48 accumulator, which the
      backend puts on arm_convolve_wrapper_s16 / arm_depthwise_conv_wrapper_s16 (FULLY_CONNECTED
      as a 1x1 convolution over its rows, as the torch frontend's int16 linear).
  SOFTMAX  SoftmaxInt16: x - max requantised into [-65535, 0] ~ [-10, 0], an interpolated
      513-entry exp table, the row sum's reciprocal from a 1 / (1 + x) table, both tables built by
      LUTPopulate<int16_t> in float32 (reproduced here step by step). arm_softmax_s16 computes the
      same integers except where the reference saturates and the kernel wraps (a reciprocal index
      of 32768, an output of 32768): `arm_form_exact` proves from the row length that neither
      happens; otherwise the reference's clamps are built as TOSA ops.
"""

from __future__ import annotations

import math

import numpy as np

from ...diagnostics import UserError
from ...fixed_point.cmsis_softmax import lut_s16
from ...fixed_point.qmath import q31_frexp
from ..lowering.cmsis_softmax_graph import softmax_s16

INT48_LIMIT = 1 << 47
# A larger sum of |x * w| overflows the int32 sums of CMSIS-NN's s16 convolutions.
INT16_MAGNITUDE = 1 << 15
LUT_STEPS = 512
# TensorType INT32 (the schema): a QuantizedBiasType asking for TFLM's int32-accumulator path.
TENSOR_TYPE_INT32 = 2


def reduced_multiplier(op, real: float) -> tuple[int, int]:
    """(16-bit multiplier, TOSA right shift) of TFLite's int64 MultiplyByQuantizedMultiplier of
    `real`: QuantizeMultiplier's (m, e), m reduced as REDUCE_MULTIPLIER does, shift 15 - e."""
    if real <= 0:
        raise UserError(f"{op.describe()}: its quantization gives the rescale factor {real:g}")
    m32, e = q31_frexp(float(real))
    m16 = (m32 + (1 << 15)) >> 16 if m32 < 0x7FFF0000 else 0x7FFF
    shift = 15 - e
    if not 2 <= shift <= 62:
        raise UserError(f"{op.describe()}: its quantization gives the rescale factor {real:g}, out of the "
                        "range of TFLite's int64 requantisation")
    return m16, shift


def check_bias_type(lw, op, quantized_bias_type: int | None) -> None:
    """TFLM takes an int32 bias (or none, with quantized_bias_type INT32) of an int16 convolution
    as its int32-accumulator path, with another requantisation: not supported."""
    bias = op.inputs[2] if len(op.inputs) > 2 else -1
    if bias >= 0:
        t = lw.tensor(bias)
        if t.elem != "i64":
            raise UserError(f"{lw.where(op)}: its bias ('{t.name}') is {t.elem}; int16 activations take an int64 "
                            "bias (TFLite Micro's int32-bias path accumulates in int32, which is not supported)")
    elif quantized_bias_type == TENSOR_TYPE_INT32:
        raise UserError(f"{lw.where(op)}: quantized_bias_type INT32 with int16 activations (TFLite Micro's "
                        "int32-accumulator path) is not supported")


def bias(lw, op, channels: int):
    """The int64 bias of an int16 convolution as TOSA's int48 accumulator type."""
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        return lw.w.const(np.zeros(channels, np.int64), "i48", (channels,))
    b = lw.tensor(op.inputs[2])
    if b.data is None or b.data.size != channels:
        raise UserError(f"{lw.where(op)}: its bias ('{b.name}') must be a constant vector of {channels} values")
    values = b.data.reshape(channels).astype(np.int64)
    if np.any(np.abs(values) >= INT48_LIMIT):
        raise UserError(f"{lw.where(op)}: its bias ('{b.name}') has values beyond 48 bits, outside the "
                        "accumulator TFLite's int16 kernels assume")
    return lw.w.const(values, "i48", (channels,))


def requantize(lw, op, acc, real_scales, out):
    """int48 accumulator -> int16 output, one 16-bit multiplier per channel."""
    pairs = [reduced_multiplier(op, float(r)) for r in real_scales]
    return lw.w.rescale(acc, [p[0] for p in pairs], [p[1] for p in pairs], 0, 0, "i16", scale32=False)


def fully_connected(lw, op, xt, w, bias_value, rows: int, depth: int):
    """int16 FULLY_CONNECTED as a 1x1 convolution over [1, rows, 1, depth] (TOSA has no int16 x
    int8 matmul): its int48 accumulator [1, rows, 1, outputs]."""
    n_out = w.shape[0]
    x = lw.w.reshape(lw.value(xt.index, op), (1, rows, 1, depth))
    wv = lw.w.const(w.data.reshape(n_out, 1, 1, depth), "i8")
    return lw.w.conv2d(x, wv, bias_value, input_zp=0, pad=(0, 0, 0, 0), stride=(1, 1), dilation=(1, 1))


# -- SOFTMAX -------------------------------------------------------------------------------------

def _round(v: np.float32) -> np.float32:
    """TfLiteRound on a float: half away from zero."""
    return np.float32(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)))


def lut_populate(input_scale, input_zero_point: int, output_scale, func) -> np.ndarray:
    """LUTPopulateInt16<float> (kernels/internal/common.h) step by step in float32: 512 samples of
    `func` over the int16 input range, each nudged by half the interpolation error at the
    segment's midpoint, and the last point."""
    f = np.float32
    input_min = f(f(input_scale) * f(-32768 - input_zero_point))
    input_max = f(f(input_scale) * f(32767 - input_zero_point))
    output_min, output_max = f(f(output_scale) * f(-32768)), f(f(output_scale) * f(32767))
    step = f(f(input_max - input_min) / f(LUT_STEPS))
    half_step = f(step / f(2))
    inverse = f(f(65536) / f(output_max - output_min))
    table = np.zeros(LUT_STEPS + 1, np.int64)
    for i in range(LUT_STEPS):
        start = f(input_min + f(f(i) * step))
        value, midpoint = func(start), func(f(start + half_step))
        following = func(f(input_min + f(f(i + 1) * step)))
        sample = _round(f(value * inverse))
        interpolated = _round(f(f(f(following * inverse) + sample) / f(2)))
        bias = _round(f(f(interpolated - _round(f(midpoint * inverse))) / f(2)))
        table[i] = int(min(max(f(sample - bias), f(-32768)), f(32767)))
    table[LUT_STEPS] = int(min(max(_round(f(func(input_max) * inverse)), f(-32768)), f(32767)))
    return table


def _expf(v: np.float32) -> np.float32:
    # std::exp(float), correctly rounded here: the table equals glibc's expf's on every sample
    # (both round to the same table entries; test_tflite_int16 checks the tables).
    return np.float32(math.exp(float(v)))


def softmax_luts() -> tuple[np.ndarray, np.ndarray]:
    """(exp, 1 / (1 + x)) tables of TFLite Micro's int16 softmax (softmax_common.cc)."""
    f = np.float32
    span = f(65535)
    exp = lut_populate(f(f(10) / span), 32767, f(f(2) / span), _expf)
    reciprocal = lut_populate(f(f(1) / span), -32768, f(f(2) / span), lambda v: f(f(1) / f(f(1) + v)))
    return exp, reciprocal


def softmax_params(op, input_scale: float, beta) -> tuple[int, int]:
    """(multiplier, left shift) of x - max into the exp table's [-65535, 0] (CalculateSoftmaxParams)."""
    real = float(input_scale) * float(np.float32(beta)) / (10.0 / 65535.0)
    if not real > 0:
        raise UserError(f"{op.describe()}: beta * input scale = {real:g} is not positive")
    mult, left = q31_frexp(real)
    if left > 15 or left < -31:
        raise UserError(f"{op.describe()}: beta * input scale = {real * 10 / 65535:g} is outside TFLite's int16 "
                        "softmax range (its int32 left shift of x - max would overflow)")
    return mult, left


def arm_form_exact(row: int, exp_lut: np.ndarray, obo_lut: np.ndarray) -> bool:
    """Whether arm_softmax_s16's wrap-arounds never differ from SoftmaxInt16's saturations for rows
    of `row` values: over every row sum the tables allow (the maximum's exponential plus row - 1
    others), the reciprocal's index stays in int16 and no output reaches 32768."""
    e_top, e_least = int(lut_s16(exp_lut, 32767)), int(lut_s16(exp_lut, -32768))
    if row < 2 or e_least < 0 or row * 32767 >= 1 << 31:
        return False
    sums = np.arange(e_top + (row - 1) * e_least, row * e_top + 1, dtype=np.int64)
    headroom = 32 - np.floor(np.log2(sums)).astype(np.int64) - 1
    index = (((sums << (headroom - 1)) + (1 << 13)) >> 14) - 98304
    if index.max() > 32767 or index.min() < -32768:
        return False
    reciprocal = lut_s16(obo_lut, index)
    right = 31 - headroom
    largest = (np.minimum(sums, e_top) * reciprocal + (1 << (right - 1))) >> right
    return bool(largest.max() <= 32767)


def softmax(lw, op, xt, out, beta):
    """int16 SOFTMAX on the last axis: arm_softmax_s16's form with TFLM's tables where it computes
    the reference's integers (`arm_form_exact`), the reference's own form otherwise."""
    if abs(float(out.quant.scale) - 1 / 32768) > 0.001 / 32768:
        raise UserError(f"{lw.where(op)}: its output is quantized with scale {out.quant.scale}; TFLite's int16 "
                        "softmax writes scale 1/32768, zero point 0")
    mult, left = softmax_params(op, xt.quant.scale, beta)
    exp_lut, obo_lut = softmax_luts()
    axis = len(xt.shape) - 1
    x = lw.value(xt.index, op)
    exact = arm_form_exact(xt.shape[axis], exp_lut, obo_lut)
    return softmax_s16(lw.w, x, axis, (mult, left), (exp_lut, obo_lut), saturate=not exact)
