"""Reductions over one axis (reduce_sum/max/min/product/all/any) and argmax."""

from __future__ import annotations

import numpy as np

from ..._mlir import ir
from ..base import PassError
from .common import CONVERTED, DTYPES, elem, make_portable, shape

_REDUCE = {"tosa.reduce_sum": "MCU_REDUCE_SUM", "tosa.reduce_max": "MCU_REDUCE_MAX",
           "tosa.reduce_min": "MCU_REDUCE_MIN", "tosa.reduce_product": "MCU_REDUCE_PRODUCT",
           "tosa.reduce_all": "MCU_REDUCE_ALL", "tosa.reduce_any": "MCU_REDUCE_ANY"}


def _split(dims, axis):
    return (int(np.prod(dims[:axis], dtype=np.int64)), dims[axis],
            int(np.prod(dims[axis + 1:], dtype=np.int64)))


def convert_reduce(op, rw):
    a = op.operands[0]
    et = elem(a)
    if et not in DTYPES:
        raise PassError(op, f"'{op.operation.name}' on {et} has no kernel (integer types only)")
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    outer, size, inner = _split(shape(a), axis)
    params = {"op": _REDUCE[op.operation.name], "type": DTYPES[et], "outer": outer,
              "axis": size, "inner": inner}
    new = make_portable("reduce", [a], op.results[0].type, params, before=op, loc=op.location,
                        source_op=op.operation.name)
    rw.replace([op], op, new)
    return CONVERTED


def convert_argmax(op, rw):
    a = op.operands[0]
    et = elem(a)
    if et not in DTYPES or elem(op.results[0]) != "i32":
        raise PassError(op, f"'tosa.argmax' on {et} has no kernel (integer in, int32 out)")
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    outer, size, inner = _split(shape(a), axis)
    params = {"type": DTYPES[et], "outer": outer, "axis": size, "inner": inner}
    new = make_portable("argmax", [a], op.results[0].type, params, before=op, loc=op.location,
                        source_op="tosa.argmax")
    rw.replace([op], op, new)
    return CONVERTED


PATTERNS = [
    *[(n.split(".")[1].replace("_", "-"), n, convert_reduce) for n in _REDUCE],
    ("argmax", "tosa.argmax", convert_argmax),
]
