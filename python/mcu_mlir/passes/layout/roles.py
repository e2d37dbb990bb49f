"""What each TOSA op means for layout: which operands carry data, which attributes name axes.

An op is *layout-agnostic* when it computes the same thing on any consistent permutation of all its
data operands and results, given its axes remapped: elementwise ops (with broadcasting, as all
operands have the same rank), rescale/cast/clamp/table, concat, reductions, slice, pad, tile,
reverse. Everything else (convolutions, pooling, matmul, resize, gather, custom ops, ops with
regions) computes in the fixed layout TOSA defines for it.
"""

from __future__ import annotations

from ..._mlir import ir, tosa
from ...ir.constants import shape_values
from ...ir.ops import isa

# All tensor operands are data.
_ELEMENTWISE = frozenset("tosa." + n for n in (
    "abs add arithmetic_right_shift bitwise_and bitwise_not bitwise_or bitwise_xor cast ceil clz cos "
    "equal erf exp floor greater greater_equal identity intdiv log logical_and logical_left_shift "
    "logical_not logical_or logical_right_shift logical_xor maximum minimum pow reciprocal rsqrt "
    "select sigmoid sin sub tanh").split())

# op -> indices of the data operands (the others are zero points, shifts, tables, shapes).
_DATA_OPERANDS = {
    "tosa.mul": (0, 1), "tosa.negate": (0,), "tosa.table": (0,), "tosa.rescale": (0,),
    "tosa.clamp": (0,), "tosa.pad": (0,), "tosa.slice": (0,), "tosa.tile": (0,), "tosa.reverse": (0,),
    "tosa.reduce_all": (0,), "tosa.reduce_any": (0,), "tosa.reduce_max": (0,), "tosa.reduce_min": (0,),
    "tosa.reduce_product": (0,), "tosa.reduce_sum": (0,),
}

# ops whose `axis` attribute names a data dim
AXIS_OPS = frozenset(("tosa.concat", "tosa.reverse", "tosa.reduce_all", "tosa.reduce_any",
                      "tosa.reduce_max", "tosa.reduce_min", "tosa.reduce_product", "tosa.reduce_sum"))

# op -> {operand index: "dims" (one value per dim) | "pairs" (two values per dim)}
SHAPE_OPERANDS = {"tosa.slice": {1: "dims", 2: "dims"}, "tosa.pad": {1: "pairs"}, "tosa.tile": {1: "dims"}}

# ops that compute in NHWC (or another fixed layout) by TOSA's definition
LAYOUT_SENSITIVE = frozenset("tosa." + n for n in (
    "conv2d conv3d depthwise_conv2d transpose_conv2d max_pool2d avg_pool2d max_pool2d_adaptive "
    "avg_pool2d_adaptive resize matmul matmul_t gather scatter fft2d rfft2d argmax").split())


def ranked_shape(value) -> tuple[int, ...] | None:
    ty = value.type
    if not isinstance(ty, ir.RankedTensorType):
        return None
    return tuple(ty.shape)


def is_static_tensor(value) -> bool:
    ty = value.type
    return isinstance(ty, ir.RankedTensorType) and ty.has_static_shape


def is_constant(value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and isa(owner, tosa.ConstOp)


def data_operands(op) -> tuple[int, ...] | None:
    """Indices of the data operands if `op` is layout-agnostic (in the form seen), else None."""
    name = op.operation.name
    if name in _ELEMENTWISE or name == "tosa.concat":
        idx = tuple(range(len(op.operands)))
    elif name in _DATA_OPERANDS:
        idx = _DATA_OPERANDS[name]
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
    if name == "tosa.rescale":
        src = op.operands[0].owner
        if not isinstance(src, ir.Block) and isa(src, tosa.MatMulOp):
            return None
    for i in SHAPE_OPERANDS.get(name, {}):
        if shape_values(op.operands[i]) is None:
            return None
    return idx


def channel_pinned(op) -> bool:
    """Per-channel rescale scales along the innermost dim: that dim must stay innermost."""
    if not isa(op, tosa.RescaleOp):
        return False
    attr = op.attributes["per_channel"] if "per_channel" in op.attributes else None
    return bool(attr is not None and ir.BoolAttr(attr).value)
