"""TFLite's slicing and stacking builtins: STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, PACK, UNPACK and
GATHER. TFLite Micro's kernels copy the integers as they are, so each is data movement on the
input's integers (input and output must share their quantization, as for CONCATENATION):
  a run of elements with stride 1     slice (the backend's portable slice, or a view)
  a run with stride -1                slice -> reverse
  any other selection along an axis   gather of constant indices (the input viewed as [outer, axis, inner])
All the indices are constants the file gives, checked here against the input's shape: an index
TFLM's kernel would read outside the tensor with is refused (its kernel only checks in debug builds).
"""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from .lower import Lowering
from .reader import Operator, Tensor

# The int types whose integers these ops move (TFLM's kernels take int8 and int16 alike).
ELEMS = ("i8", "i16")


def operand(lw: Lowering, op: Operator, position: int, role: str) -> int:
    if position >= len(op.inputs) or op.inputs[position] < 0:
        raise UserError(f"{lw.where(op)}: its {role} (input {position}) is missing")
    return op.inputs[position]


def options(op: Operator, **defaults) -> dict:
    """The op's options; a file that leaves the table out means the schema's defaults."""
    return op.options if op.options is not None else defaults


def constant_ints(lw: Lowering, op: Operator, position: int, role: str, count: int | None = None) -> list[int]:
    """A constant integer operand as a list (TFLM's kernels need these constant too)."""
    t = lw.tensor(operand(lw, op, position, role))
    if t.data is None or t.elem not in ("i32", "i64"):
        raise UserError(f"{lw.where(op)}: its {role} ('{t.name}') must be a constant int32 tensor")
    values = [int(v) for v in t.data.reshape(-1)]
    if count is not None and len(values) != count:
        raise UserError(f"{lw.where(op)}: its {role} ('{t.name}') has {len(values)} values, expected {count}")
    return values


def moved(lw: Lowering, op: Operator, position: int = 0, outputs=None) -> tuple[Tensor, list[Tensor]]:
    """The input at `position` and the outputs of an op that copies integers: all in one
    quantization, since TFLM's kernel copies the integers whatever the parameters say."""
    xt = lw.quantized(op, operand(lw, op, position, "input"), "input", ELEMS)
    outs = [lw.quantized(op, i, f"output '{lw.tensor(i).name}'", ELEMS) for i in (outputs or op.outputs)]
    for out in outs:
        if out.elem != xt.elem or (out.quant.scale, out.quant.zero_point) != (xt.quant.scale, xt.quant.zero_point):
            raise UserError(f"{lw.where(op)}: its input '{xt.name}' and its output '{out.name}' are quantized "
                            "differently; TFLite Micro's kernel copies the integers, so they must be the same")
    return xt, outs


def axis_of(lw: Lowering, op: Operator, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise UserError(f"{lw.where(op)}: axis {axis} is outside a rank-{rank} tensor")
    return axis % rank


def take(lw: Lowering, x, axis: int, indices: list[int]):
    """x's elements at `indices` along `axis` (each inside the axis)."""
    size = x.shape[axis]
    if indices == list(range(size)):
        return x
    first, n = indices[0], len(indices)
    if indices == list(range(first, first + n)):
        start = [0] * len(x.shape)
        start[axis] = first
        return lw.w.slice(x, start, [n if i == axis else d for i, d in enumerate(x.shape)])
    if indices == list(range(first, first - n, -1)):
        return lw.w.reverse(take(lw, x, axis, indices[::-1]), axis)
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    values = lw.w.reshape(x, (outer, size, inner))
    rows = lw.w.const(np.tile(np.asarray(indices, np.int64), (outer, 1)), "i32", (outer, n))
    picked = lw.w.gather(values, rows)
    return lw.w.reshape(picked, (*x.shape[:axis], n, *x.shape[axis + 1:]))


def _clamp(v: int, lo: int, hi: int) -> int:
    return min(max(v, lo), hi)


def _strided_axis(begin: int, end: int, stride: int, size: int, masks: tuple[bool, bool, bool]) -> list[int]:
    """The indices TFLM's StridedSlice reads along one axis (StridedSliceStartForAxis /
    StridedSliceEndForAxis): negative indices count from the end, clamped, masks override."""
    begin_mask, end_mask, shrink = masks
    start = begin + size if begin < 0 else begin
    start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
    if begin_mask:
        start = 0 if stride > 0 else size - 1
    if shrink:
        return [start]
    stop = end + size if end < 0 else end
    stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
    if end_mask:
        stop = size if stride > 0 else -1
    return list(range(start, stop, stride))


def _strided_slice(lw: Lowering, op: Operator):
    """TFLM's STRIDED_SLICE: begin / end / strides constants, begin / end / shrink masks. Its kernel
    sets the ellipsis and new-axis masks and the offset flag to zero whatever the file says, so they
    are ignored here too (the output's shape then tells whether the file meant something else)."""
    o = options(op, BeginMask=0, EndMask=0, ShrinkAxisMask=0)
    xt, (out,) = moved(lw, op)
    rank = len(xt.shape)
    begin, end, strides = (constant_ints(lw, op, i, role, rank) for i, role in enumerate(("begin", "end", "strides"),
                                                                                          start=1))
    x = lw.value(xt.index, op)
    kept = []
    for axis in range(rank):
        if strides[axis] == 0:
            raise UserError(f"{lw.where(op)}: its stride along axis {axis} is 0")
        masks = tuple(bool(o[m] >> axis & 1) for m in ("BeginMask", "EndMask", "ShrinkAxisMask"))
        indices = _strided_axis(begin[axis], end[axis], strides[axis], xt.shape[axis], masks)
        if not indices or not all(0 <= i < xt.shape[axis] for i in indices):
            raise UserError(f"{lw.where(op)}: it selects no element along axis {axis} (begin {begin[axis]}, end "
                            f"{end[axis]}, stride {strides[axis]} of {xt.shape[axis]})")
        x = take(lw, x, axis, indices)
        if not masks[2]:
            kept.append(len(indices))
    return lw.w.reshape(x, kept)


def _slice(lw: Lowering, op: Operator):
    """SLICE: `size` elements from `begin` per axis, -1 meaning to the end."""
    xt, (out,) = moved(lw, op)
    rank = len(xt.shape)
    begin, size = constant_ints(lw, op, 1, "begin", rank), constant_ints(lw, op, 2, "size", rank)
    stop = [d if n == -1 else b + n for b, n, d in zip(begin, size, xt.shape)]
    if any(b < 0 or s <= b or s > d for b, s, d in zip(begin, stop, xt.shape)):
        raise UserError(f"{lw.where(op)}: begin {begin} and size {size} reach outside its input {list(xt.shape)}")
    return lw.w.slice(lw.value(xt.index, op), begin, [s - b for b, s in zip(begin, stop)])


def _pieces(lw: Lowering, op: Operator, xt: Tensor, outs: list[Tensor], axis: int) -> list:
    """The input cut along `axis` into the outputs' sizes, in order."""
    sizes = [out.shape[axis] if len(out.shape) == len(xt.shape) else -1 for out in outs]
    if -1 in sizes or sum(sizes) != xt.shape[axis]:
        raise UserError(f"{lw.where(op)}: outputs {[list(t.shape) for t in outs]} do not split its input "
                        f"{list(xt.shape)} along axis {axis}")
    x, start, pieces = lw.value(xt.index, op), 0, []
    for n in sizes:
        pieces.append(take(lw, x, axis, list(range(start, start + n))))
        start += n
    return pieces


def _split(lw: Lowering, op: Operator):
    """SPLIT (axis, input): equal pieces; SPLIT_V (input, size_splits, axis): the outputs' sizes
    (TFLM's kernel copies by the outputs' shapes, which the size operand must agree with)."""
    position, axis_position = (1, 0) if op.name == "SPLIT" else (0, 2)
    xt, outs = moved(lw, op, position)
    axis = axis_of(lw, op, constant_ints(lw, op, axis_position, "axis", 1)[0], len(xt.shape))
    pieces = _pieces(lw, op, xt, outs, axis)
    if op.name == "SPLIT" and len({p.shape[axis] for p in pieces}) != 1:
        raise UserError(f"{lw.where(op)}: its outputs are not equal pieces of its input")
    if op.name == "SPLIT_V":
        sizes = constant_ints(lw, op, 1, "size_splits", len(outs))
        if any(s not in (-1, p.shape[axis]) for s, p in zip(sizes, pieces)):
            raise UserError(f"{lw.where(op)}: size_splits {sizes} disagree with its outputs' sizes")
    return pieces


def _pack(lw: Lowering, op: Operator):
    """PACK: the inputs stacked along a new axis of the output."""
    out = lw.quantized(op, op.outputs[0], "output", ELEMS)
    axis = axis_of(lw, op, options(op, Axis=0)["Axis"], len(out.shape))
    stacked = []
    for position in range(len(op.inputs)):
        xt, _ = moved(lw, op, position)
        shape = list(xt.shape)
        shape.insert(axis, 1)
        stacked.append(lw.w.reshape(lw.value(xt.index, op), shape))
    if len({tuple(v.shape) for v in stacked}) != 1:
        raise UserError(f"{lw.where(op)}: its inputs differ in shape")
    return lw.w.concat(stacked, axis)


def _unpack(lw: Lowering, op: Operator):
    """UNPACK: one output per index along the axis, that axis dropped."""
    xt, outs = moved(lw, op)
    axis = axis_of(lw, op, options(op, Axis=0)["Axis"], len(xt.shape))
    if len(outs) != xt.shape[axis]:
        raise UserError(f"{lw.where(op)}: {len(outs)} outputs for {xt.shape[axis]} slices along axis {axis}")
    x = lw.value(xt.index, op)
    rest = [d for i, d in enumerate(xt.shape) if i != axis]
    return [lw.w.reshape(take(lw, x, axis, [i]), rest) for i in range(len(outs))]


def _gather(lw: Lowering, op: Operator):
    """GATHER of constant int32 positions along `axis`, `batch_dims` leading axes paired (TFLM's
    kernel: output [input[:axis], positions[batch_dims:], input[axis + 1:]])."""
    o = options(op, Axis=0, BatchDims=0)
    xt, (out,) = moved(lw, op)
    positions = lw.tensor(operand(lw, op, 1, "positions"))
    if positions.elem != "i32":
        raise UserError(f"{lw.where(op)}: its positions ('{positions.name}') are {positions.elem}; TFLite Micro's "
                        "GATHER takes int32 positions")
    if positions.data is None:
        raise UserError(f"{lw.where(op)}: its positions ('{positions.name}') are computed at run time; only constant "
                        "positions are supported (an int32 activation comes from no supported operator)")
    rank, coords = len(xt.shape), positions.data.astype(np.int64)
    axis = axis_of(lw, op, o["Axis"], rank)
    batch_dims = o["BatchDims"] + coords.ndim if o["BatchDims"] < 0 else o["BatchDims"]
    if not (0 <= batch_dims <= axis and batch_dims <= coords.ndim) or \
            tuple(xt.shape[:batch_dims]) != tuple(coords.shape[:batch_dims]):
        raise UserError(f"{lw.where(op)}: batch_dims {o['BatchDims']} does not fit input {list(xt.shape)}, "
                        f"positions {list(coords.shape)} and axis {axis}")
    size = xt.shape[axis]
    if coords.size and (coords.min() < 0 or coords.max() >= size):
        raise UserError(f"{lw.where(op)}: its positions reach {int(coords.min())}..{int(coords.max())}, outside "
                        f"axis {axis} of size {size}")
    batch = int(np.prod(xt.shape[:batch_dims], dtype=np.int64))
    outer = int(np.prod(xt.shape[batch_dims:axis], dtype=np.int64))
    inner = int(np.prod(xt.shape[axis + 1:], dtype=np.int64))
    per_batch = coords.reshape(batch, -1)
    n = per_batch.shape[1]
    if n == 0:
        raise UserError(f"{lw.where(op)}: it gathers no element")
    rows = np.repeat(per_batch, outer, axis=0)                 # row b * outer + o reads batch b's positions
    values = lw.w.reshape(lw.value(xt.index, op), (batch * outer, size, inner))
    picked = lw.w.gather(values, lw.w.const(rows, "i32", rows.shape))
    shape = (*xt.shape[:axis], *coords.shape[batch_dims:], *xt.shape[axis + 1:])
    return lw.w.reshape(picked, shape)


LOWER = {
    "STRIDED_SLICE": _strided_slice, "SLICE": _slice, "SPLIT": _split, "SPLIT_V": _split, "PACK": _pack,
    "UNPACK": _unpack, "GATHER": _gather,
}
