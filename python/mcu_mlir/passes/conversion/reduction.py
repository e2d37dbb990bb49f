"""Reductions over one axis (reduce_sum/max/min/product/all/any) and argmax."""

from __future__ import annotations

from ..._mlir import ir, tosa
from ..base import PassError
from ...dialects import portable
from .common import DTYPES, elem, pattern_name
from ...ir.ops import op_class

# TOSA op class -> portable.reduce kind.
_REDUCE = {tosa.ReduceSumOp: "sum", tosa.ReduceMaxOp: "max", tosa.ReduceMinOp: "min",
           tosa.ReduceProductOp: "product", tosa.ReduceAllOp: "all", tosa.ReduceAnyOp: "any"}


def convert_reduce(op, rw):
    a = op.operands[0]
    et = elem(a)
    if et not in DTYPES:
        raise PassError(op, f"'{op.operation.name}' on {et} has no kernel (integer types only)")
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    kind = _REDUCE[op_class(op)]
    return rw.convert(op, portable.ReduceOp, [a], {"kind": kind, "axis": axis})


def convert_argmax(op, rw):
    a = op.operands[0]
    et = elem(a)
    if et not in DTYPES or elem(op.results[0]) != "i32":
        raise PassError(op, f"'tosa.argmax' on {et} has no kernel (integer in, int32 out)")
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    return rw.convert(op, portable.ArgmaxOp, [a], {"axis": axis})


PATTERNS = [
    *[(pattern_name(cls), cls, convert_reduce) for cls in _REDUCE],
    ("argmax", tosa.ArgMaxOp, convert_argmax),
]
