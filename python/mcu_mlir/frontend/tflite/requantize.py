"""TFLite's QUANTIZE (int8 <-> int16 requantisation), DEQUANTIZE, MEAN, and the float boundary.

QUANTIZE between integer types is TFLM's Requantize: MultiplyByQuantizedMultiplier(x - zp, in scale /
out scale) + zp, saturated (a DOUBLE_ROUND rescale). A float QUANTIZE that reads a graph input and a
DEQUANTIZE that writes a graph output are the model's boundary: the C API keeps the integers (the
QUANTIZE's output, the DEQUANTIZE's input) and model.h records their scale and zero point, so the
caller quantizes and dequantizes (`float_boundary`). Any other float tensor is refused.

MEAN int8 / int16 is reference_ops::QuantizedMeanOrSum: the int32 sum of x - zp over the axes, times
QuantizeMultiplier(in scale / out scale) folded with 1 / count as TFLM folds it (multiplier << shift
divided by the count, shift = floor(log2 count) capped at 32 and at 31 + exponent).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...diagnostics import UserError
from ...fixed_point.tflm_activations import quantize_multiplier as tflite_quantize_multiplier
from .lower import Lowering
from .reader import Graph, Operator

INTEGER_IO = ("i8", "i16")


def _integer(lw: Lowering, op: Operator, index: int, role: str):
    t = lw.quantized(op, index, role, elems=INTEGER_IO)
    if t.quant.per_channel:
        raise UserError(f"{lw.where(op)}: its {role} ('{t.name}') is quantized per channel; {op.name} takes one scale")
    if t.elem == "i16" and t.quant.zero_point != 0:
        raise UserError(f"{lw.where(op)}: its int16 {role} ('{t.name}') has zero point {t.quant.zero_point}; int16 "
                        "tensors must be symmetric (zero point 0)")
    return t


def _quantize(lw: Lowering, op: Operator):
    if not op.inputs or op.inputs[0] < 0:
        raise UserError(f"{lw.where(op)}: its input is missing")
    src = lw.tensor(op.inputs[0])
    if src.elem.startswith("f"):
        raise UserError(f"{lw.where(op)}: it quantizes the float tensor '{src.name}', which is not a graph input; "
                        "only integer models are supported (a float QUANTIZE may only read a graph input)")
    xt = _integer(lw, op, op.inputs[0], "input")
    out = _integer(lw, op, op.outputs[0], "output")
    m, s = lw.multiplier(op, xt.quant.scale / out.quant.scale)
    return lw.w.rescale(lw.value(xt.index, op), [m], [s], xt.quant.zero_point, out.quant.zero_point, out.elem)


def _dequantize(lw: Lowering, op: Operator):
    raise UserError(f"{lw.where(op)}: its float output '{lw.tensor(op.outputs[0]).name}' is read by another "
                    "operator; only a DEQUANTIZE that writes a graph output is supported (float ops are not)")


def mean_multiplier(in_scale: float, out_scale: float, count: int) -> tuple[int, int]:
    """TFLM's (multiplier, exponent) of a mean of `count` values (QuantizedMeanOrSum)."""
    multiplier, exponent = tflite_quantize_multiplier(in_scale / out_scale)
    shift = min(count.bit_length() - 1, 32, 31 + exponent)
    return (multiplier << shift) // count, exponent - shift


def _mean(lw: Lowering, op: Operator):
    xt = _integer(lw, op, op.inputs[0] if op.inputs else -1, "input")
    out = _integer(lw, op, op.outputs[0], "output")
    if xt.elem != out.elem:
        raise UserError(f"{lw.where(op)}: its input is {xt.elem} but its output {out.elem}")
    axes_t = lw.tensor(op.inputs[1]) if len(op.inputs) > 1 and op.inputs[1] >= 0 else None
    rank = len(xt.shape)
    if axes_t is None or axes_t.data is None or axes_t.elem != "i32":
        raise UserError(f"{lw.where(op)}: its axes (input 1) must be a constant int32 tensor")
    raw = [int(a) for a in axes_t.data.reshape(-1)]
    if any(not -rank <= a < rank for a in raw):
        raise UserError(f"{lw.where(op)}: its axes {raw} are out of range for a rank-{rank} input")
    axes = sorted({a % rank for a in raw})       # TFLM drops repeated axes
    count = int(np.prod([xt.shape[a] for a in axes], dtype=np.int64)) if axes else 1
    if count == 0:
        raise UserError(f"{lw.where(op)}: it averages over no element")
    w = lw.w
    total = w.rescale(lw.value(xt.index, op), [1 << 30], [30], xt.quant.zero_point, 0, "i32")   # x - zp
    for a in axes:
        total = w.reduce_sum(total, a)
    multiplier, exponent = mean_multiplier(xt.quant.scale, out.quant.scale, count)
    if not 0 < multiplier < 1 << 31 or not 2 <= 31 - exponent <= 62:
        raise UserError(f"{lw.where(op)}: its scales give a mean multiplier {multiplier} * 2**{exponent - 31} that "
                        "no rescale expresses")
    y = w.rescale(total, [multiplier], [31 - exponent], 0, out.quant.zero_point, out.elem)
    return w.reshape(y, out.shape)


@dataclass
class FloatBoundary:
    """Graph inputs read through a float QUANTIZE and graph outputs written by a DEQUANTIZE: the tensor
    the C API takes or returns instead (the integer side), and the operators that disappear."""
    inputs: dict = field(default_factory=dict)       # float graph input tensor -> its QUANTIZE's output
    outputs: dict = field(default_factory=dict)      # float graph output tensor -> its DEQUANTIZE's input
    skipped: set = field(default_factory=set)        # operator indices


def float_boundary(g: Graph) -> FloatBoundary:
    b = FloatBoundary()
    readers: dict[int, list] = {}
    for op in g.operators:
        for i in op.inputs:
            readers.setdefault(i, []).append(op)
    for index in g.inputs:
        users = readers.get(index, [])
        if g.tensors[index].elem == "f32" and len(users) == 1 and users[0].name == "QUANTIZE" \
                and index not in g.outputs:
            b.inputs[index] = users[0].outputs[0]
            b.skipped.add(users[0].index)
    for op in g.operators:
        if op.name == "DEQUANTIZE" and len(op.outputs) == 1 and op.outputs[0] in g.outputs \
                and not readers.get(op.outputs[0]) and op.inputs and op.inputs[0] >= 0:
            b.outputs[op.outputs[0]] = op.inputs[0]
            b.skipped.add(op.index)
    return b


LOWER = {"QUANTIZE": _quantize, "DEQUANTIZE": _dequantize, "MEAN": _mean}
