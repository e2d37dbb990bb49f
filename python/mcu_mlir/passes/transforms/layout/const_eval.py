"""Evaluating small constant subgraphs (index arithmetic) with numpy.

torch-mlir computes the indices of a nearest-neighbour upsample as a chain of i32 ops on constants
(concat, reshape, mul, reduce_sum) that `tosa-layerwise-constant-fold` leaves alone; the layout
passes need their values to recognise the upsample.
"""

from __future__ import annotations

import numpy as np

from ...._mlir import ir, tosa
from ....ir.types import NUMPY
from ....ir.constants import ConstantData, shape_values
from ....ir.ops import op_class

_NUMPY_OF = NUMPY
_LIMIT = 1 << 22


def evaluate(value, consts: ConstantData, depth: int = 0):
    """The value as a numpy array if it depends on constants only (through supported ops), else None."""
    if depth > 32:
        return None
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    cls = op_class(owner)
    ty = value.type
    if not isinstance(ty, ir.RankedTensorType) or not ty.has_static_shape:
        return None
    if int(np.prod(ty.shape, dtype=np.int64)) > _LIMIT:
        return None
    dtype = _NUMPY_OF.get(str(ty.element_type))
    if dtype is None:
        return None
    if cls is tosa.ConstOp:
        return consts.array(value)

    def arg(i):
        return evaluate(owner.operands[i], consts, depth + 1)

    def attr_int(key):
        return ir.IntegerAttr(owner.attributes[key]).value

    out = None
    if cls in (tosa.IdentityOp, tosa.CastOp):
        a = arg(0)
        out = None if a is None else a
    elif cls is tosa.ReshapeOp:
        a = arg(0)
        out = None if a is None else a.reshape(tuple(ty.shape))
    elif cls is tosa.TransposeOp:
        a = arg(0)
        out = None if a is None else a.transpose(tuple(owner.attributes["perms"]))
    elif cls is tosa.ConcatOp:
        parts = [evaluate(v, consts, depth + 1) for v in owner.operands]
        out = None if any(p is None for p in parts) else np.concatenate(parts, axis=attr_int("axis"))
    elif cls in (tosa.AddOp, tosa.SubOp, tosa.MulOp):
        a, b = arg(0), arg(1)
        if a is None or b is None or not np.issubdtype(dtype, np.integer):
            return None
        a, b = a.astype(np.int64), b.astype(np.int64)
        if cls is tosa.MulOp:
            shift = evaluate(owner.operands[2], consts, depth + 1)
            if shift is None or np.any(shift != 0):
                return None
            out = a * b
        else:
            out = a + b if cls is tosa.AddOp else a - b
    elif cls is tosa.ReduceSumOp:
        a = arg(0)
        out = None if a is None else a.astype(np.int64).sum(axis=attr_int("axis"), keepdims=True)
    elif cls is tosa.SliceOp:
        a = arg(0)
        start, size = shape_values(owner.operands[1]), shape_values(owner.operands[2])
        if a is None or start is None or size is None:
            return None
        out = a[tuple(slice(s, s + n) for s, n in zip(start, size))]
    elif cls is tosa.TileOp:
        a = arg(0)
        reps = shape_values(owner.operands[1])
        out = None if a is None or reps is None else np.tile(a, reps)
    if out is None:
        return None
    out = np.asarray(out)
    if out.shape != tuple(ty.shape):
        out = np.broadcast_to(out, tuple(ty.shape))
    return out.astype(dtype)
