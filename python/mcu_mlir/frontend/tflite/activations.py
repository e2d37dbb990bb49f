"""TFLite's int8 activations: LOGISTIC, TANH, HARD_SWISH and LEAKY_RELU as one TOSA TABLE each,
PRELU as rescales and a select.

An int8 -> int8 elementwise function is 256 values: the frontend computes them with TFLite Micro's own
integer arithmetic (fixed_point/tflm_activations.py, checked against the interpreter) and the model
looks them up, so the integers are TFLM's whatever the parameters (its gemmlowp logistic and tanh, its
int16 hard-swish arithmetic, its two multipliers of leaky ReLU). PRELU's slope is a second tensor, so
it is built from the ops TFLM's reference kernel performs: MultiplyByQuantizedMultiplier is a
DOUBLE_ROUND rescale (lower.py), which saturates into the output type as TFLM's clamp does.
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


def _int8_only(lw: Lowering, op: Operator):
    """The int8 input and output; int16 is refused (TFLM's int16 kernels use other arithmetic)."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input", elems=("i8", "i16"))
    out = lw.quantized(op, op.outputs[0], "output", elems=("i8", "i16"))
    if xt.elem != "i8" or out.elem != "i8":
        raise UserError(f"{lw.where(op)}: {xt.elem} -> {out.elem} is not supported (int8 only: TFLM's int16 "
                        f"{op.name} is another algorithm, not lowered yet)")
    return xt, out


def _lookup(lw: Lowering, op: Operator, xt, values: np.ndarray):
    """The int8 input looked up in the 256 results `values` (for inputs -128 .. 127)."""
    table = lw.w.const(np.asarray(values, np.int64).astype(np.int8), "i8", (256,))
    return lw.w.table(lw.value(xt.index, op), table)


def _logistic(lw: Lowering, op: Operator):
    """TFLM computes the output in steps of 1/256 from -128 (it requires zero point -128)."""
    xt, out = _int8_only(lw, op)
    if out.quant.zero_point != -128:
        raise UserError(f"{lw.where(op)}: its output zero point is {out.quant.zero_point}; TFLite's int8 "
                        "LOGISTIC writes zero point -128 (scale 1/256)")
    return _lookup(lw, op, xt, tflm.logistic_s8(tflm.INT8_VALUES, xt.quant.zero_point, xt.quant.scale))


def _tanh(lw: Lowering, op: Operator):
    """TFLM computes the output in steps of 1/128 around 0 whatever the output's parameters."""
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
    xt, out = _int8_only(lw, op)
    if op.options is None:
        raise UserError(f"{lw.where(op)}: it has no options (its alpha)")
    alpha = float(np.float32(op.options["Alpha"]))
    return _lookup(lw, op, xt, tflm.leaky_relu(tflm.INT8_VALUES, xt.quant.zero_point, out.quant.zero_point,
                                               xt.quant.scale, out.quant.scale, alpha, -128, 127))


def _prelu(lw: Lowering, op: Operator):
    """x - zp >= 0: MBQM(x - zp, in / out) + zp_out; else MBQM((x - zp) (a - zp_a), in a / out) +
    zp_out; each saturated into int8 (reference_ops::BroadcastPrelu4DSlow)."""
    xt = lw.quantized(op, _input(lw, op, 0, "input"), "input")
    at = lw.quantized(op, _input(lw, op, 1, "alpha"), "alpha")
    out = lw.quantized(op, op.outputs[0], "output")
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
    x = lw.value(xt.index, op)
    # (x - zp) and (a - zp_a) exactly, in int32, ranked like the output.
    x32 = w.reshape(w.rescale(x, [1 << 30], [30], xt.quant.zero_point, 0, "i32"), (1,) * (rank - len(x.shape)) + x.shape)
    a = lw.value(at.index, op)
    a32 = w.reshape(w.rescale(a, [1 << 30], [30], at.quant.zero_point, 0, "i32"), (1,) * (rank - len(a.shape)) + a.shape)
    m1, s1 = lw.multiplier(op, xt.quant.scale / out.quant.scale)
    m2, s2 = lw.multiplier(op, xt.quant.scale * at.quant.scale / out.quant.scale)
    zero = w.scalar(0, rank)
    keep = w.rescale(x32, [m1], [s1], 0, out.quant.zero_point, "i8")
    slope = w.rescale(w.mul(x32, a32), [m2], [s2], 0, out.quant.zero_point, "i8")
    return w.select(w.greater_equal(x32, zero), keep, slope)


LOWER = {"LOGISTIC": _logistic, "TANH": _tanh, "HARD_SWISH": _hard_swish, "LEAKY_RELU": _leaky_relu,
         "PRELU": _prelu}
