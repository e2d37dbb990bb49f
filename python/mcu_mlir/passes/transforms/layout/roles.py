"""What each TOSA op means for layout: which operands carry data, which attributes name axes.

An op is *layout-agnostic* when it computes the same thing on any consistent permutation of all its
data operands and results, given its axes remapped: elementwise ops (with broadcasting, as all
operands have the same rank), rescale/cast/clamp/table, concat, reductions, slice, pad, tile,
reverse. Everything else (convolutions, pooling, matmul, resize, gather, custom ops, ops with
regions) computes in the fixed layout TOSA defines for it.
"""

from __future__ import annotations

from ...._mlir import ir, tosa
from ....ir import roles
from ....ir.constants import shape_values
from ....ir.ops import isa, op_class
from ....ir.values import is_static_tensor, ranked_shape  # noqa: F401  (read by the layout modules)

# Elementwise ops with operands that are not data (shifts, zero points, tables) -> their data operands.
_PARAMETERISED = {tosa.MulOp: (0, 1), tosa.NegateOp: (0,), tosa.TableOp: (0,), tosa.RescaleOp: (0,),
                  tosa.ClampOp: (0,)}
# All tensor operands are data.
_ALL_DATA = (roles.ELEMENTWISE - set(_PARAMETERISED)) | {tosa.ConcatOp}

# op class -> indices of the data operands (the others are zero points, shifts, tables, shapes).
_DATA_OPERANDS = {**_PARAMETERISED, tosa.PadOp: (0,), tosa.SliceOp: (0,), tosa.TileOp: (0,),
                  tosa.ReverseOp: (0,), **{cls: (0,) for cls in roles.REDUCTION}}

# ops whose `axis` attribute names a data dim
AXIS_OPS = roles.AXIS_ATTRIBUTE

# op class -> {operand index: "dims" (one value per dim) | "pairs" (two values per dim)}
SHAPE_OPERANDS = {tosa.SliceOp: {1: "dims", 2: "dims"}, tosa.PadOp: {1: "pairs"}, tosa.TileOp: {1: "dims"}}

# ops that compute in NHWC (or another fixed layout) by TOSA's definition
LAYOUT_SENSITIVE = roles.LAYOUT_SENSITIVE


def is_constant(value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and isa(owner, tosa.ConstOp)


def data_operands(op) -> tuple[int, ...] | None:
    """Indices of the data operands if `op` is layout-agnostic (in the form seen), else None."""
    cls = op_class(op)
    if cls in _ALL_DATA:
        idx = tuple(range(len(op.operands)))
    elif cls in _DATA_OPERANDS:
        idx = _DATA_OPERANDS[cls]
    else:
        return None
    if len(op.results) != 1 or len(op.regions) != 0:
        return None
    out = op.results[0]
    if not is_static_tensor(out):
        return None
    rank = len(out.type.shape)
    for i in idx:
        v = op.operands[i]
        if not is_static_tensor(v) or len(v.type.shape) != rank:
            return None
        # TOSA cannot transpose int48 (an int16 accumulator): its layout stays where it is made.
        if str(v.type.element_type) == "i48":
            return None
    # The rescale of a matmul's accumulator stays with the matmul: a transpose there would move
    # 32-bit values and keep the kernel from requantizing its own output.
    if cls is tosa.RescaleOp:
        src = op.operands[0].owner
        if not isinstance(src, ir.Block) and isa(src, tosa.MatMulOp):
            return None
    for i in SHAPE_OPERANDS.get(cls, {}):
        if shape_values(op.operands[i]) is None:
            return None
    return idx


def channel_pinned(op) -> bool:
    """Per-channel rescale scales along the innermost dim: that dim must stay innermost."""
    if not isa(op, tosa.RescaleOp):
        return False
    attr = op.attributes["per_channel"] if "per_channel" in op.attributes else None
    return bool(attr is not None and ir.BoolAttr(attr).value)
