"""TFLite's int8 comparisons (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL) and
SELECT / SELECT_V2.

TFLM compares int8 values on a common scale (reference_ops::ComparisonWithScaling): each input's
(x - zp) << 8 multiplied by its own scale (QuantizeMultiplierSmallerThanOneExp of the scale itself,
then MultiplyByQuantizedMultiplierSmallerThanOneExp). Two inputs of one quantization can compare
equal where their integers differ (the product rounds), so the scaled values are compared, as TFLM
does: two exact rescales each (the shift, then a DOUBLE_ROUND rescale) and an int32 comparison.
SELECT_V2 copies the chosen integers (no requantisation), broadcasting its three inputs.
"""

from __future__ import annotations

from ...diagnostics import UserError
from .lower import Lowering
from .reader import Operator

COMPARISON_LEFT_SHIFT = 8


def _operand(lw: Lowering, op: Operator, position: int, rank: int):
    if position >= len(op.inputs) or op.inputs[position] < 0:
        raise UserError(f"{lw.where(op)}: its input {position} is missing")
    t = lw.tensor(op.inputs[position])
    out = lw.tensor(op.outputs[0])
    padded = (1,) * (rank - len(t.shape)) + tuple(t.shape)
    if len(t.shape) > rank or any(d not in (1, size) for d, size in zip(padded, out.shape)):
        raise UserError(f"{lw.where(op)}: its input '{t.name}' {list(t.shape)} does not broadcast to its output "
                        f"{list(out.shape)}")
    return t, lw.w.reshape(lw.value(t.index, op), padded)


def _scaled(lw: Lowering, op: Operator, position: int, rank: int):
    t, v = _operand(lw, op, position, rank)
    if t.elem == "i16":
        raise UserError(f"{lw.where(op)}: int16 comparisons are not supported (TFLM's int16 kernel compares with "
                        "scaling parameters its Prepare sets only for int8)")
    lw.quantized(op, t.index, f"input {position}")
    if t.quant.per_channel or not t.quant.scale < 1:
        raise UserError(f"{lw.where(op)}: its input '{t.name}' has scale {t.quant.scale:g}; TFLM's int8 comparison "
                        "takes one scale below 1")
    shifted = lw.w.rescale(v, [1 << 30], [30 - COMPARISON_LEFT_SHIFT], t.quant.zero_point, 0, "i32")
    m, s = lw.multiplier(op, t.quant.scale)
    return lw.w.rescale(shifted, [m], [s], 0, 0, "i32")


def _comparison(lw: Lowering, op: Operator):
    out = lw.tensor(op.outputs[0])
    if out.elem != "i1":
        raise UserError(f"{lw.where(op)}: its output ('{out.name}') is {out.elem}, not bool")
    rank = len(out.shape)
    a, b = _scaled(lw, op, 0, rank), _scaled(lw, op, 1, rank)
    w = lw.w
    if op.name == "EQUAL":
        return w.equal(a, b)
    if op.name == "NOT_EQUAL":
        return w.logical_not(w.equal(a, b))
    if op.name in ("GREATER", "GREATER_EQUAL"):
        return (w.greater if op.name == "GREATER" else w.greater_equal)(a, b)
    return (w.greater if op.name == "LESS" else w.greater_equal)(b, a)


def _select(lw: Lowering, op: Operator):
    """SELECT_V2 broadcasts the condition and both values; SELECT (TFLite, not TFLM, has it) takes a
    condition of the values' shape or one flag per row of the first dimension."""
    out = lw.tensor(op.outputs[0])
    rank = len(out.shape)
    cond_t = lw.tensor(op.inputs[0]) if op.inputs and op.inputs[0] >= 0 else None
    if cond_t is None or cond_t.elem != "i1":
        raise UserError(f"{lw.where(op)}: its condition (input 0) must be a bool tensor")
    if op.name == "SELECT" and len(cond_t.shape) == 1 and rank > 1 and cond_t.shape[0] == out.shape[0]:
        cond = lw.w.reshape(lw.value(cond_t.index, op), (cond_t.shape[0],) + (1,) * (rank - 1))
    else:
        cond = _operand(lw, op, 0, rank)[1]
    (xt, x), (yt, y) = _operand(lw, op, 1, rank), _operand(lw, op, 2, rank)
    for t in (xt, yt):
        if t.elem != out.elem or t.elem not in ("i8", "i16"):
            raise UserError(f"{lw.where(op)}: its values and output must be int8 or int16 alike, not {xt.elem}, "
                            f"{yt.elem} -> {out.elem}")
    y = lw.w.select(cond, x, y)
    if tuple(y.shape) != tuple(out.shape):       # a condition and values all smaller than the output
        y = lw.w.tile(y, [o // k for o, k in zip(out.shape, y.shape)])
    return y


LOWER = {**{name: _comparison for name in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")},
         "SELECT": _select, "SELECT_V2": _select}
