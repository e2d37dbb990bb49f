"""Data movement: reshape (a view), transpose, concat, pad, slice, tile, reverse, gather, resize."""

from __future__ import annotations

import numpy as np

from ..._mlir import ir, tosa
from ..base import PassError
from ...dialects import cmsisnn, portable
from ...dialects.kernel_op import GROUPS
from ..analysis.transposes import is_data_moving
from ..transforms.layout.channel_permutation import chain_index
from ...ir.ops import isa
from .common import (UNIT, CONVERTED, NO_MATCH, DTYPE_BYTES, DTYPES, const_ints, const_scalar, elem, make_op, producer, shape,
                     str_attr, users)


def _bytes(op, value) -> int:
    et = elem(value)
    if et not in DTYPE_BYTES:
        raise PassError(op, f"'{op.operation.name}' on {et} has no kernel (integer types only)")
    return DTYPE_BYTES[et]


def _consts(op, index: int, what: str) -> list[int]:
    vals = const_ints(op.operands[index])
    if vals is None:
        raise PassError(op, f"'{op.operation.name}' needs a constant {what}")
    return vals


def convert_reshape(op, rw):
    _bytes(op, op.operands[0])
    return rw.convert(op, cmsisnn.ReshapeOp, [op.operands[0]], {})


def _cmsis_4d_s8(rw, *values) -> bool:
    """CMSIS-NN's data-movement kernels take int8 tensors of rank 4 with 16-bit dimensions."""
    return rw.use_cmsis and all(elem(v) == "i8" and len(shape(v)) == 4 and max(shape(v)) < 65536
                                for v in values)


def canonical_transpose(dims: list[int], perms: list[int]) -> tuple[list[int], list[int]]:
    """The same data movement with unit dims dropped and dims that stay adjacent and in order
    merged: ShuffleNet's [1, H, W, 2, C/2] by (0, 1, 2, 4, 3) is [H*W, 2, C/2] by (0, 2, 1)."""
    kept = [d for d in range(len(dims)) if dims[d] != 1]
    order = [p for p in perms if dims[p] != 1]
    groups: list[list[int]] = []          # runs of input dims, in output order
    for p in order:
        if groups and kept.index(p) == kept.index(groups[-1][-1]) + 1:
            groups[-1].append(p)
        else:
            groups.append([p])
    by_input = sorted(groups, key=lambda g: g[0])
    new_dims = [_prod(dims[d] for d in g) for g in by_input]
    new_perms = [by_input.index(g) for g in groups]
    return new_dims, new_perms


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def convert_transpose(op, rw):
    a = op.operands[0]
    perms = [int(x) for x in ir.DenseI32ArrayAttr(op.attributes["perms"])]
    if _cmsis_4d_s8(rw, a):
        return rw.convert(op, cmsisnn.TransposeOp, [a], {"perms": perms})
    dims, moved = canonical_transpose(shape(a), perms)
    if rw.use_cmsis and elem(a) == "i8" and 2 <= len(dims) <= 4 and max(dims) < 65536:
        # Any rank: the same copy as a rank-4 arm_transpose_s8 between views.
        pad = 4 - len(dims)
        dims, moved = [1] * pad + dims, list(range(pad)) + [m + pad for m in moved]
        i8 = ir.RankedTensorType(a.type).element_type
        view = make_op(cmsisnn.ReshapeOp, [a], ir.RankedTensorType.get(dims, i8), {}, before=op, loc=op.location,
                       source_op=op.operation.name)
        moved_type = ir.RankedTensorType.get([dims[m] for m in moved], i8)
        t = make_op(cmsisnn.TransposeOp, [view.results[0]], moved_type, {"perms": moved}, before=op,
                    loc=op.location, source_op=op.operation.name)
        return rw.convert(op, cmsisnn.ReshapeOp, [t.results[0]], {})
    _bytes(op, a)
    return rw.convert(op, portable.TransposeOp, [a], {"perms": perms})


def convert_concat(op, rw):
    inputs = list(op.operands)
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    _bytes(op, op.results[0])
    cls = cmsisnn.ConcatOp if _cmsis_4d_s8(rw, op.results[0], *inputs) else portable.ConcatOp
    while _runs(inputs) > GROUPS:
        # More runs of differently typed inputs than the op has groups: concatenate the first
        # ones first (same axis, so the same result; one more copy of those bytes).
        head = inputs[:_prefix_of_runs(inputs, GROUPS)]
        dims = shape(head[0])
        dims[axis] = sum(shape(v)[axis] for v in head)
        part = make_op(cls, head, ir.RankedTensorType.get(dims, ir.RankedTensorType(head[0].type).element_type),
                       {"axis": axis}, before=op, loc=op.location, source_op=op.operation.name)
        inputs = [part.results[0]] + inputs[len(head):]
    return rw.convert(op, cls, inputs, {"axis": axis})


def strided_layout(dst: np.ndarray, max_rank: int = 6):
    """(offset, [(size, stride), ...] outermost first) with dst[i] = offset + sum_d i_d * stride_d
    for the row-major index (i_d) of i, or None when `dst` has no such form within max_rank dims.
    Found from the innermost dim out: the longest run of equal steps that splits the rest into
    equal rows, then the same on the rows' first elements."""
    dims, rest = [], np.asarray(dst, np.int64)
    while rest.size > 1:
        step = int(rest[1] - rest[0])
        run = 2
        while run < rest.size and rest[run] - rest[run - 1] == step:
            run += 1
        for size in range(run, 1, -1):
            if rest.size % size == 0:
                rows = rest.reshape(-1, size)
                if ((rows - rows[:, :1]) == np.arange(size) * step).all():
                    break
        else:
            return None
        dims.append((size, step))
        rest = rest.reshape(-1, size)[:, 0]
        if len(dims) > max_rank:
            return None
    return int(rest[0]), (dims[::-1] or [(1, 1)])


def convert_concat_transposed(op, rw):
    """A data-moving transpose (after views) of a concat that nothing else reads: one copy per
    input straight to its place in the transposed result (ShuffleNet's concat and channel
    shuffle), instead of copying everything twice."""
    if not is_data_moving(op):
        return False
    chain, value = [], op.operands[0]
    while isinstance(producer(value), tosa.ReshapeOp) and len(users(value)) == 1:
        chain.append(producer(value))
        value = producer(value).operands[0]
    concat = producer(value)
    if not isinstance(concat, tosa.ConcatOp) or len(users(value)) != 1 or _runs(list(concat.operands)) > GROUPS:
        return False
    inputs = list(concat.operands)
    axis = int(ir.IntegerAttr(concat.attributes["axis"]).value)
    sizes = [int(np.prod(shape(a))) for a in inputs]
    starts = np.cumsum([0] + sizes)
    # Source id (input start + flat index in it) of each element of the concat, then of each
    # output position through the views and the transpose.
    ids = np.concatenate([np.arange(n).reshape(shape(a)) + s for a, n, s in zip(inputs, sizes, starts)], axis)
    order = ids.reshape(-1)[chain_index(shape(value), chain[::-1] + [op]).reshape(-1)]
    dst = np.empty_like(order)
    dst[order] = np.arange(order.size)
    flat = []
    for n, s in zip(sizes, starts):
        layout = strided_layout(dst[s:s + n])
        if layout is None:
            return False
        offset, dims = layout
        flat += [len(dims), offset] + [v for pair in dims for v in pair]
    _bytes(op, op.results[0])
    new = make_op(portable.ConcatTransposedOp, inputs, op.results[0].type, {"axis": axis, "layout": flat},
                  before=op, loc=op.location, source_op="tosa.concat+tosa.transpose")
    rw.replace([concat, *chain, op], op, new)
    return CONVERTED


def _runs(values) -> int:
    return sum(1 for i, v in enumerate(values) if i == 0 or v.type != values[i - 1].type)


def _prefix_of_runs(values, runs: int) -> int:
    """How many leading values make up `runs` runs of equal types."""
    seen = 0
    for i, v in enumerate(values):
        if i == 0 or v.type != values[i - 1].type:
            seen += 1
            if seen > runs:
                return i
    return len(values)


def convert_pad(op, rw):
    a = op.operands[0]
    padding = _consts(op, 1, "padding")
    value = const_scalar(op.operands[2])
    if value is None:
        raise PassError(op, "'tosa.pad' needs a constant pad value")
    et = elem(a)
    if et not in DTYPES:
        raise PassError(op, f"'tosa.pad' on {et} has no kernel (integer types only)")
    if _cmsis_4d_s8(rw, a, op.results[0]):
        cls = cmsisnn.PadOp
    else:
        cls = portable.PadOp
    return rw.convert(op, cls, [a], {"padding": padding, "pad_value": value})


def convert_slice(op, rw):
    a = op.operands[0]
    start = _consts(op, 1, "start")
    _bytes(op, a)
    return rw.convert(op, portable.SliceOp, [a], {"start": start})


def convert_tile(op, rw):
    a = op.operands[0]
    _bytes(op, a)
    return rw.convert(op, portable.TileOp, [a], {})


def convert_reverse(op, rw):
    a = op.operands[0]
    _bytes(op, a)
    axis = int(ir.IntegerAttr(op.attributes["axis"]).value)
    return rw.convert(op, portable.ReverseOp, [a], {"axis": axis})


def convert_gather(op, rw):
    values, indices = op.operands
    if elem(indices) != "i32":
        raise PassError(op, "'tosa.gather' needs int32 indices")
    _bytes(op, values)
    return rw.convert(op, portable.GatherOp, [values, indices], {})


def convert_clamped_gather(op, rw):
    """gather(values, minimum(maximum(ids, 0), K - 1)), the frontend's clamp of run-time ids (GATHER
    REQUIREs 0 <= index < K): mcu_gather clamps each index to [0, K - 1] itself, so it reads the ids
    and the two int32 ops go."""
    values, indices = op.operands
    low = producer(indices)
    if not isa(low, tosa.MinimumOp) or elem(indices) != "i32":
        return NO_MATCH
    high = producer(low.operands[0])
    k = shape(values)[1]
    if not isa(high, tosa.MaximumOp) or const_scalar(low.operands[1]) != k - 1 or const_scalar(high.operands[1]) != 0:
        return NO_MATCH
    _bytes(op, values)
    rw.convert(op, portable.GatherOp, [values, high.operands[0]], {})
    rw.erase(*[o for o in (low, high) if not any(list(r.uses) for r in o.results)])
    return CONVERTED


def convert_scatter(op, rw):
    values_in, indices, inp = op.operands
    if elem(indices) != "i32":
        raise PassError(op, "'tosa.scatter' needs int32 indices")
    _bytes(op, values_in)
    return rw.convert(op, portable.ScatterOp, [values_in, indices, inp], {})


def convert_resize(op, rw):
    a = op.operands[0]
    scale, offset, border = _consts(op, 1, "scale"), _consts(op, 2, "offset"), _consts(op, 3, "border")
    mode = str_attr(op, "mode")
    if elem(a) not in ("i8", "i16"):
        raise PassError(op, f"'tosa.resize' on {elem(a)} has no kernel (integer only)")
    params = {"scale": scale, "offset": offset, "border": border,
              "mode": "bilinear" if "BILINEAR" in mode else "nearest"}
    return rw.convert(op, portable.ResizeOp, [a], params)


PATTERNS = [
    ("concat-transposed", tosa.TransposeOp, convert_concat_transposed, UNIT),
    ("reshape", tosa.ReshapeOp, convert_reshape),
    ("identity", tosa.IdentityOp, convert_reshape),
    ("transpose", tosa.TransposeOp, convert_transpose),
    ("concat", tosa.ConcatOp, convert_concat),
    ("pad", tosa.PadOp, convert_pad),
    ("slice", tosa.SliceOp, convert_slice),
    ("tile", tosa.TileOp, convert_tile),
    ("reverse", tosa.ReverseOp, convert_reverse),
    ("gather-clamped", tosa.GatherOp, convert_clamped_gather, UNIT),
    ("gather", tosa.GatherOp, convert_gather),
    ("scatter", tosa.ScatterOp, convert_scatter),
    ("resize", tosa.ResizeOp, convert_resize),
]
