"""TFLite's activations: int8 LOGISTIC, TANH, HARD_SWISH and LEAKY_RELU as one TOSA TABLE each,
PRELU as rescales and a select.

An int8 -> int8 elementwise function is 256 values: the frontend computes them with TFLite Micro's own
integer arithmetic (fixed_point/tflm_activations.py, checked against the interpreter) and the model
looks them up, so the integers are TFLM's whatever the parameters (its gemmlowp logistic and tanh, its
int16 hard-swish arithmetic, its two multipliers of leaky ReLU). PRELU's slope is a second tensor, so
it is built from the ops TFLM's reference kernel performs: MultiplyByQuantizedMultiplier is a
DOUBLE_ROUND rescale (lower.py), which saturates into the output type as TFLM's clamp does. int16
LEAKY_RELU (65,536 values, no table) is built the same way.
"""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from ...fixed_point import tflm_activations as tflm
from .lower import Lowering
from .reader import Operator


def _input(lw: Lowering, op: Operator, position: int, role: str) -> int:
    if position >= len(op.inputs) or op.inputs[position] < 0:
        raise UserError(f"{lw.where(op)}: its {role} (input {position}) is missing")
    return op.inputs[position]


INT16_REFUSALS = {"HARD_SWISH": "TFLM has no int16 HARD_SWISH kernel"}


def _int8_only(lw: Lowering, op: Operator):
    """The int8 input and output (the int16 forms are their ops' own; others refused)."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", elems=("i8", "i16"))
    out = lw.quantized(op, op.outputs[0], "output", elems=("i8", "i16"))
    if xt.elem != "i8" or out.elem != "i8":
        raise UserError(f"{lw.where(op)}: {xt.elem} -> {out.elem} is not supported ("
                        f"{INT16_REFUSALS.get(op.name, 'input and output of one type, int8 or int16')})")
    return xt, out


def _lookup(lw: Lowering, op: Operator, xt, values: np.ndarray):
    """The int8 input looked up in the 256 results `values` (for inputs -128 .. 127)."""
    table = lw.w.const(np.asarray(values, np.int64).astype(np.int8), "i8", (256,))
    return lw.w.table(lw.value(xt.index, op), table)


def _sigmoid_s16(lw: Lowering, op: Operator, xt, kind: str):
    """TFLM's int16 LOGISTIC / TANH (reference_integer_ops, tflm.sigmoid_s16) in int32 TOSA ops: the
    input scaled by its multiplier, its magnitude's high bits index the 256-entry sigmoid table (two
    gathers: the entry and the next), the low bits interpolate, negatives mirror, saturation past the
    table. Output Q0.15, zero point 0, as TFLM requires."""
    from ...fixed_point.cmsis_lstm import SIGMOID_TABLE
    out = lw.quantized(op, op.outputs[0], "output", elems=("i16",))
    _symmetric_s16(lw, op, xt, "input")
    _symmetric_s16(lw, op, out, "output")
    if not np.isclose(out.quant.scale, 2.0 ** -15, rtol=1e-6, atol=0):
        raise UserError(f"{lw.where(op)}: its int16 output scale is {out.quant.scale:g}; TFLM's int16 {op.name} "
                        "writes 2**-15")
    multiplier, shift = tflm.sigmoid_s16_params(xt.quant.scale, kind)
    w, x = lw.w, lw.value(xt.index, op)
    shape, rank = tuple(x.shape), len(x.shape)

    def k(value: int):
        return w.scalar(value, rank)
    data = w.mul(w.cast(x, "i32"), k(multiplier))
    if shift:
        data = w.arithmetic_right_shift(w.add(data, k(1 << (shift - 1))), k(shift), round=False)
    bits = 9 if kind == "logistic" else 8
    magnitude = w.abs(data)
    high = w.arithmetic_right_shift(magnitude, k(bits), round=False)
    index = w.reshape(w.minimum(high, k(254)), (1, int(np.prod(shape, dtype=np.int64))))
    low, up = (w.reshape(w.gather(w.const(part, "i32", (1, 255, 1)), index), shape)
               for part in (SIGMOID_TABLE[:255], SIGMOID_TABLE[1:]))
    fraction = w.bitwise_and(magnitude, k((1 << bits) - 1))
    inside = w.add(w.logical_left_shift(low, k(bits)), w.mul(fraction, w.sub(up, low)))
    result = w.select(w.greater(k(255), high), inside, k((0x7FFF << 10) if kind == "logistic" else (0xFFFF << 8)))
    if kind == "logistic":
        positive, negative = w.add(result, k(1 << 9)), w.sub(k((1 << 25) + (1 << 9) - 1), result)
    else:
        positive, negative = w.add(result, k(-(1 << 23) + (1 << 7))), w.sub(k((1 << 23) + (1 << 7) - 1), result)
    result = w.select(w.greater_equal(data, k(0)), positive, negative)
    return w.cast(w.arithmetic_right_shift(result, k(10 if kind == "logistic" else 8), round=False), "i16")


def _logistic(lw: Lowering, op: Operator):
    """TFLM computes the output in steps of 1/256 from -128 (it requires zero point -128)."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", elems=("i8", "i16"))
    if xt.elem == "i16":
        return _sigmoid_s16(lw, op, xt, "logistic")
    xt, out = _int8_only(lw, op)
    if out.quant.zero_point != -128:
        raise UserError(f"{lw.where(op)}: its output zero point is {out.quant.zero_point}; TFLite's int8 "
                        "LOGISTIC writes zero point -128 (scale 1/256)")
    return _lookup(lw, op, xt, tflm.logistic_s8(tflm.INT8_VALUES, xt.quant.zero_point, xt.quant.scale))


def _tanh(lw: Lowering, op: Operator):
    """TFLM computes the output in steps of 1/128 around 0 whatever the output's parameters."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", elems=("i8", "i16"))
    if xt.elem == "i16":
        return _sigmoid_s16(lw, op, xt, "tanh")
    xt, _ = _int8_only(lw, op)
    return _lookup(lw, op, xt, tflm.tanh_s8(tflm.INT8_VALUES, xt.quant.zero_point, xt.quant.scale))


def _hard_swish(lw: Lowering, op: Operator):
    xt, out = _int8_only(lw, op)
    params = tflm.hard_swish_params(xt.quant.scale, out.quant.scale)
    if params[1] > 0:
        raise UserError(f"{lw.where(op)}: input scale / 128 / output scale = "
                        f"{xt.quant.scale / 128 / out.quant.scale:g} is 1 or more, which TFLM's int8 HARD_SWISH "
                        "refuses")
    return _lookup(lw, op, xt, tflm.hard_swish(tflm.INT8_VALUES, xt.quant.zero_point, out.quant.zero_point, params,
                                               -128, 127))


def _leaky_relu(lw: Lowering, op: Operator):
    if op.options is None:
        raise UserError(f"{lw.where(op)}: it has no options (its alpha)")
    alpha = float(np.float32(op.options["Alpha"]))
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", elems=("i8", "i16"))
    if xt.elem == "i16":
        return _leaky_relu_s16(lw, op, xt, alpha)
    xt, out = _int8_only(lw, op)
    return _lookup(lw, op, xt, tflm.leaky_relu(tflm.INT8_VALUES, xt.quant.zero_point, out.quant.zero_point,
                                               xt.quant.scale, out.quant.scale, alpha, -128, 127))


def _symmetric_s16(lw: Lowering, op: Operator, t, role: str):
    if t.elem != "i16" or t.quant.per_channel or t.quant.zero_point != 0:
        raise UserError(f"{lw.where(op)}: its {role} ('{t.name}') must be a symmetric (zero point 0) int16 tensor "
                        "like its input")


def _leaky_relu_s16(lw: Lowering, op: Operator, xt, alpha: float):
    """QuantizeLeakyRelu on int16: x >= 0 ? MBQM(x, identity) : +-MBQM(x, |alpha|), saturated."""
    out = lw.quantized(op, op.outputs[0], "output", elems=("i16",))
    _symmetric_s16(lw, op, xt, "input")
    _symmetric_s16(lw, op, out, "output")
    s_in, s_out = np.float32(xt.quant.scale), np.float32(out.quant.scale)
    alpha_m, alpha_e = tflm.quantize_multiplier(float(np.float32(s_in * np.float32(alpha) / s_out)))
    id_m, id_e = tflm.quantize_multiplier(float(np.float32(s_in / s_out)))
    if not id_m or 31 - id_e < 2 or 31 - alpha_e < 2:
        raise UserError(f"{lw.where(op)}: its scales give a rescale factor no 32-bit multiplier expresses")
    w = lw.w
    x = lw.value(xt.index, op)
    keep = w.rescale(x, [id_m], [31 - id_e], 0, 0, "i16")
    if alpha_m >= 0:
        slope = w.rescale(x, [alpha_m], [31 - alpha_e], 0, 0, "i16")
    else:       # TFLM negates the product of |alpha|'s multiplier, then saturates
        scaled = w.rescale(x, [-alpha_m], [31 - alpha_e], 0, 0, "i32")
        negated = w.sub(w.scalar(0, len(x.shape)), scaled)
        slope = w.rescale(negated, [1 << 30], [30], 0, 0, "i16")
    x32 = w.cast(x, "i32")
    return w.select(w.greater_equal(x32, w.scalar(0, len(x.shape))), keep, slope)


def _minus_zero_point(lw: Lowering, op: Operator, t, rank: int):
    """x - zp of tensor `t` exactly, in int32, ranked like the output."""
    v = lw.value(t.index, op)
    return lw.w.reshape(lw.w.rescale(v, [1 << 30], [30], t.quant.zero_point, 0, "i32"),
                        (1,) * (rank - len(v.shape)) + tuple(v.shape))


def _prelu(lw: Lowering, op: Operator):
    """x - zp >= 0: MBQM(x - zp, in / out) + zp_out; else MBQM((x - zp) (a - zp_a), in a / out) +
    zp_out; each saturated into the output type (reference_ops::BroadcastPrelu4DSlow; int16 input and
    output with an int8 slope too)."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", elems=("i8", "i16"))
    at = lw.quantized(op, _input(lw, op, 1, "alpha"), "alpha")
    out = lw.quantized(op, op.outputs[0], "output", elems=(xt.elem,))
    if xt.elem == "i16":
        _symmetric_s16(lw, op, xt, "input")
        _symmetric_s16(lw, op, out, "output")
    if at.quant.per_channel:
        raise UserError(f"{lw.where(op)}: its alpha ('{at.name}') is quantized per channel; TFLM's PRELU reads "
                        "one scale")
    rank = len(out.shape)
    for t in (xt, at):
        padded = (1,) * (rank - len(t.shape)) + tuple(t.shape)
        if len(t.shape) > rank or any(d not in (1, size) for d, size in zip(padded, out.shape)):
            raise UserError(f"{lw.where(op)}: its input '{t.name}' {list(t.shape)} does not broadcast to its output "
                            f"{list(out.shape)}")
    w = lw.w
    x32, a32 = (_minus_zero_point(lw, op, t, rank) for t in (xt, at))
    m1, s1 = lw.multiplier(op, xt.quant.scale / out.quant.scale)
    m2, s2 = lw.multiplier(op, xt.quant.scale * at.quant.scale / out.quant.scale)
    zero = w.scalar(0, rank)
    keep = w.rescale(x32, [m1], [s1], 0, out.quant.zero_point, out.elem)
    slope = w.rescale(w.mul(x32, a32), [m2], [s2], 0, out.quant.zero_point, out.elem)
    return w.select(w.greater_equal(x32, zero), keep, slope)


LOWER = {"LOGISTIC": _logistic, "TANH": _tanh, "HARD_SWISH": _hard_swish, "LEAKY_RELU": _leaky_relu,
         "PRELU": _prelu}
