"""Lookups with run-time indices: `embedding`, `index_select` and `x[..., ids]` (aten.index.Tensor)
where the indices are an integer graph input (token ids) or a view of one.

Each is one tosa.gather: the table viewed as [N, K, C] (K the looked-up dim, no data moved), the
indices as [N, W] (tiled over N when N > 1; for x[ids], negative ones counted from the end as torch
does). The rows keep the table's quantization, so no rescale follows. Every run-time index is clamped
to [0, K - 1] first (tosa.maximum / tosa.minimum in int32): TOSA's GATHER REQUIREs 0 <= index < K, and
an id from the model's input can be anything, so without the clamp the program would be UNPREDICTABLE
for some input (mcu-verify-value-ranges proves the index in range from the clamp). An id below 0 reads
row 0, one past the table its last row, where torch raises; the C does the same (mcu_gather clamps,
and the conversion gives it the unclamped ids), and model.h says so.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...diagnostics import UserError
from . import selection
from .values import DQ, Const, Indices, Pending, Q
from ..graph.nodes import aten, describe, nodes_of, shape_of

# Integer ops an index tensor may pass through before its lookup: views, and casts between int types.
INDEX_VIEWS = {aten.view.default, aten.reshape.default, aten._unsafe_view.default, aten.flatten.using_ints,
               aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
               aten.clone.default, aten.contiguous.default, aten.alias.default, aten.detach.default}
INDEX_CASTS = {aten._to_copy.default, aten.to.dtype, aten.to.dtype_layout, aten.to.device, aten.type_as.default}
# Comparisons and casts that make a run-time integer input a flag (an attention mask): its random
# calibration values are 0 and 1.
_FLAG_OPS = {aten.eq.Scalar, aten.ne.Scalar, aten.eq.Tensor, aten.ne.Tensor}


FLAG = "flag"


def index_bounds(gm) -> list[int | str | None]:
    """Per graph input: for integer inputs, the size of the smallest dim they index (so random
    calibration ids stay valid), FLAG for a flag (compared or cast to bool, read by no lookup: an
    attention mask), None for float inputs or when no lookup reads them."""
    bounds = []
    for node in gm.graph.find_nodes(op="placeholder"):
        val = node.meta.get("val")
        if not hasattr(val, "dtype") or val.dtype.is_floating_point:
            bounds.append(None)
            continue
        sizes, flag, todo = [], False, [node]
        while todo:
            n = todo.pop()
            for user in n.users:
                if user.target in _FLAG_OPS or user.target in INDEX_CASTS and _to_bool(user):
                    flag = True
                elif user.target in INDEX_VIEWS or user.target in INDEX_CASTS and not _to_float(user):
                    todo.append(user)
                    continue
                looked = _looked_up_dim(user, n)
                if looked is not None:
                    sizes.append(looked)
        # Ids compared with a constant (a padding id) keep their table's bound.
        bounds.append(min(sizes) if sizes else FLAG if flag else None)
    return bounds


def _looked_up_dim(user, index) -> int | None:
    """The size of the dim `user` looks `index` up in (None if it is no lookup of it)."""
    table = user.args[0].meta.get("val") if user.args and isinstance(user.args[0], torch.fx.Node) else None
    if table is None:
        return None
    if user.target == aten.embedding.default and user.args[1] is index:
        return int(table.shape[0])
    if user.target == aten.index_select.default and user.args[2] is index:
        return int(table.shape[int(user.args[1])])
    if user.target == aten.index.Tensor and index in user.args[1]:
        return int(table.shape[list(user.args[1]).index(index)])
    return None


def reads_indices(self, node) -> bool:
    return any(isinstance(self.values.get(a), Indices) for a in nodes_of(node))


def lower_index_use(self, node, ins):
    """The value of an op that reads a run-time index tensor, or a clear error."""
    t = node.target
    if not isinstance(node.meta.get("val"), torch.Tensor):    # an assertion on the ids' type: no value
        return Pending(node)
    if t in _WHERES and isinstance(ins[0], Indices) and _to_float(node):
        return Pending(node)      # a run-time mask: quantized as any fill (elementwise.py)
    if t in selection.LOWER and _to_float(node) and isinstance(ins[0], Indices) and not ins[0].flag:
        return Pending(node)      # selected indices as a float tensor: quantized (selection.py)
    if t in INDEX_CASTS and _to_bool(node):
        return Indices(_nonzero(self, ins[0].v, shape_of(node)), flag=True)
    if t in INDEX_VIEWS or t in INDEX_CASTS and not _to_float(node):
        return Indices(self.w.reshape(ins[0].v, shape_of(node)), flag=ins[0].flag)
    if t in INDEX_ARITHMETIC:
        out = INDEX_ARITHMETIC[t](self, node, ins)
        if out is not None:
            return out
    if t == aten.embedding.default and isinstance(ins[1], Indices):
        return _lookup(self, node, ins[0], 0, ins[1])
    if t == aten.index_select.default and isinstance(ins[2], Indices):
        return _lookup(self, node, ins[0], int(node.args[1]), ins[2])
    if t == aten.index.Tensor:
        given = [(d, self.values.get(a)) for d, a in enumerate(node.args[1]) if a is not None]
        if len(given) == 1 and isinstance(given[0][1], Indices):
            return _lookup(self, node, ins[0], given[0][0], given[0][1])
        if isinstance(ins[0], Indices) and all(isinstance(v, Const) and v.scales is None for _, v in given):
            return _constant_positions(self, node, ins[0], node.args[1])
    if _to_float(node) and any(isinstance(v, Indices) and v.activation for v in ins):
        raise UserError(f"{describe(node)} makes a float tensor of a comparison of activations: not supported; "
                        "selecting with it is (torch.where / masked_fill)")
    if _to_float(node) and any(isinstance(v, Indices) and v.flag for v in ins):
        raise UserError(f"{describe(node)} computes a float tensor from a run-time integer input (a float "
                        "attention mask, as nn.MultiheadAttention makes of key_padding_mask): not supported; a "
                        "boolean mask is (where / masked_fill of the scores, scaled_dot_product_attention with "
                        "a bool attn_mask, HuggingFace's attention_mask)")
    raise UserError(f"{describe(node)} reads a run-time integer input (token ids or other indices): "
                    "only lookups (embedding, index_select, x[ids] on one dim) and integer arithmetic "
                    "(==, !=, +, -, *, cumsum, where / masked_fill, slices, cat) take them")


def _int_operand(self, node, value, rank: int):
    """An operand of integer arithmetic on indices as int32 of `rank` dims, or None."""
    if isinstance(value, Indices):
        v = value.v
        return self.w.reshape(v, (1,) * (rank - len(v.shape)) + tuple(v.shape))
    if isinstance(value, (bool, int)) and not isinstance(value, float):
        return self.w.scalar(int(value), rank)
    if isinstance(value, Const) and value.scales is None and np.asarray(value.data).dtype.kind in "biu":
        data = np.asarray(value.data, np.int64)
        return self.w.const(data.reshape((1,) * (rank - data.ndim) + data.shape), "i32")
    return None


def _index_compare(self, node, ins):
    """ids == c / ids != c (a padding mask) as int32 1 / 0, the form `.int()` gives it."""
    out = shape_of(node)
    a, b = (_int_operand(self, node, v, len(out)) for v in ins[:2])
    if a is None or b is None:
        return None
    equal = self.w.equal(a, b)
    hit, miss = (1, 0) if node.target in (aten.eq.Scalar, aten.eq.Tensor) else (0, 1)
    rank = len(out)
    return Indices(self.w.select(equal, self.w.scalar(hit, rank), self.w.scalar(miss, rank)),
                   flag=True)


def _index_binary(self, node, ins):
    """ids + c, ids - c, ids * mask in int32 (RoBERTa's position ids)."""
    if node.kwargs.get("alpha", 1) != 1 or len(ins) > 2 and ins[2] not in (None, 1):
        return None
    out = shape_of(node)
    a, b = (_int_operand(self, node, v, len(out)) for v in ins[:2])
    if a is None or b is None:
        return None
    if node.target in (aten.mul.Tensor, aten.mul.Scalar):
        return Indices(self.w.mul(a, b))
    add = node.target in (aten.add.Tensor, aten.add.Scalar)
    return Indices(self.w.add(a, b) if add else self.w.sub(a, b))


def _index_fill(self, node, ins):
    """ids.masked_fill(mask, v) and where(mask, a, b) of integers (an id replaced by another, the
    labels' -100 set to the pad id): one select in int32."""
    if _to_float(node):
        return None
    cond, on, off = (ins[1], ins[2], ins[0]) if node.target in _MASKED_FILLS else ins[:3]
    out = shape_of(node)
    rank = len(out)
    c, a, b = (_int_operand(self, node, v, rank) for v in (cond, on, off))
    if c is None or a is None or b is None:
        return None
    unset = self.w.equal(c, self.w.scalar(0, rank))
    return Indices(self.w.select(unset, b, a), flag=_to_bool(node))


def _index_slice(self, node, ins):
    """ids[:, a:b] and ids[:, i] (step 1) of run-time integer ids: one tosa.slice."""
    x = ins[0]
    if not isinstance(x, Indices):
        return None
    shape = tuple(x.v.shape)
    args = list(node.args[1:]) + [0, None, None, 1][len(node.args) - 1:]
    dim = int(args[0]) % len(shape)
    if node.target is aten.select.int:
        begin = int(args[1]) % shape[dim]
        end = begin + 1
    else:
        if args[3] not in (None, 1):
            return None
        begin, end, _ = slice(args[1], args[2]).indices(shape[dim])
    start = [begin if d == dim else 0 for d in range(len(shape))]
    size = [max(end - begin, 0) if d == dim else n for d, n in enumerate(shape)]
    return Indices(self.w.reshape(self.w.slice(x.v, start, size), shape_of(node)), flag=x.flag)


def _index_cat(self, node, ins):
    """torch.cat of run-time integer ids and integer constants (BART's decoder ids: the start id
    before the input ids shifted right): one tosa.concat in int32."""
    parts, dim = node.args[0], int(node.args[1]) if len(node.args) > 1 else 0
    values = [self.values.get(a) for a in parts]
    rank = len(shape_of(node))
    operands = [_int_operand(self, node, v, rank) for v in values]
    if any(v is None for v in operands):
        return None
    return Indices(self.w.concat(operands, dim % rank), flag=all(getattr(v, "flag", False) for v in values))


def _index_fill_all(self, node, ins):
    """ids.fill_(v) (a position of the ids set to one id): a constant of the ids' shape."""
    value = ins[1]
    if isinstance(value, Const):
        value = np.asarray(value.data).reshape(())
    if not isinstance(value, (int, bool, np.integer, np.ndarray)) or np.asarray(value).dtype.kind not in "biu":
        return None
    return Const(np.full(shape_of(node), int(value), np.int64))


def _index_cumsum(self, node, ins):
    """Running sum along a dim in int32: log2(n) steps, each adding the sum shifted by 1, 2, 4, ..."""
    x = ins[0]
    if not isinstance(x, Indices):
        return None
    shape = tuple(x.v.shape)
    dim = int(node.args[1]) % len(shape)
    total, step = x.v, 1
    while step < shape[dim]:
        pads = [0] * (2 * len(shape))
        pads[2 * dim] = step
        shifted = self.w.pad(total, pads, 0)
        shifted = self.w.slice(shifted, [0] * len(shape), shape)
        total = self.w.add(total, shifted)
        step *= 2
    return Indices(total)


def _index_gather(self, node, ins):
    """torch.gather(x, dim, ids) with run-time ids: x a constant integer table (RoBERTa's token type
    ids, gathered at its position ids) or a quantized activation; ids the same shape as x but along
    `dim`. One tosa.gather with `dim` moved last."""
    table, ids = ins[0], ins[2]
    if not isinstance(ids, Indices) or node.kwargs.get("sparse_grad") or len(ins) > 3 and ins[3]:
        return None
    if isinstance(table, Const) and table.scales is None and np.asarray(table.data).dtype.kind in "biu":
        data, wrap = np.asarray(table.data, np.int64), Indices
        values = self.w.const(data, "i32")
    elif isinstance(table, Indices):      # indices gathered at indices (YOLO26's anchors of its top pairs)
        values, data, wrap = table.v, np.empty(table.v.shape), Indices
    elif isinstance(table, DQ):
        values, q = table.q.v, table.q
        data = np.empty(q.shape)
        wrap = lambda v: DQ(Q(v, q.scale, q.zp))  # noqa: E731
    else:
        return None
    shape, index_shape = tuple(data.shape), tuple(ids.v.shape)
    rank = len(shape)
    dim = int(node.args[1]) % rank
    if len(index_shape) != rank or any(a != b for d, (a, b) in enumerate(zip(shape, index_shape)) if d != dim):
        return None
    order = [d for d in range(rank) if d != dim] + [dim]
    lead = math.prod(shape[d] for d in order[:-1])
    moved = self.w.transpose(values, order)
    index = self.w.transpose(ids.v, order)
    rows = self.w.gather(self.w.reshape(moved, (lead, shape[dim], 1)),
                         _in_range(self, self.w.reshape(index, (lead, index_shape[dim])), shape[dim]))
    back = self.w.reshape(rows, tuple(index_shape[d] for d in order))
    return wrap(self.w.transpose(back, [order.index(d) for d in range(rank)]))


def _index_expand(self, node, ins):
    """ids.expand(...): the broadcast dims tiled (a copy only where a dim grows)."""
    if not isinstance(ins[0], Indices):
        return None
    out = shape_of(node)
    v = ins[0].v
    v = self.w.reshape(v, (1,) * (len(out) - len(v.shape)) + tuple(v.shape))
    if tuple(v.shape) != tuple(out):
        v = self.w.tile(v, [o // d for o, d in zip(out, v.shape)])
    return Indices(v, flag=ins[0].flag)


def _nonzero(self, v, shape):
    """bool(v) as int32 1 / 0."""
    rank = len(shape)
    v = self.w.reshape(v, shape)
    zero = self.w.equal(v, self.w.scalar(0, rank))
    return self.w.select(zero, self.w.scalar(0, rank), self.w.scalar(1, rank))


def _index_logical(self, node, ins):
    """a & b, a | b, ~a of flags (0 / 1 in int32: product, maximum, 1 - a), a constant on either side."""
    if not all(isinstance(v.meta.get("val"), torch.Tensor) and v.meta["val"].dtype == torch.bool
               for v in [node] + [a for a in node.args if isinstance(a, torch.fx.Node)]):
        return None
    out = shape_of(node)
    rank = len(out)
    if node.target in (aten.bitwise_not.default, aten.logical_not.default):
        a = _int_operand(self, node, ins[0], rank)
        if a is None:
            return None
        return Indices(self.w.sub(self.w.scalar(1, rank), a), flag=True)
    a, b = (_int_operand(self, node, v, rank) for v in ins[:2])
    if a is None or b is None:
        return None
    if node.target in _ANDS:
        return Indices(self.w.mul(a, b), flag=True)
    return Indices(self.w.maximum(a, b), flag=True)


def _constant_positions(self, node, source: Indices, index):
    """x[i0, i1, ...] of a run-time integer tensor at constant indices (HuggingFace builds its mask
    by indexing the attention mask with aranges): the positions each output element reads, worked
    out here, are one tosa.gather of the flattened tensor."""
    shape = tuple(source.v.shape)
    key = tuple(slice(None) if a is None else np.asarray(self.values[a].data, np.int64) for a in index)
    positions = np.arange(math.prod(shape)).reshape(shape)[key]
    out = shape_of(node)
    if positions.shape != tuple(out):
        return None
    flat = self.w.reshape(source.v, (1, math.prod(shape), 1))
    ids = self.w.const(positions.reshape(1, -1), "i32")
    rows = self.w.gather(flat, ids)
    return Indices(self.w.reshape(rows, out), flag=source.flag)


_WHERES = {aten.where.ScalarOther, aten.where.self, aten.where.ScalarSelf, aten.where.Scalar}
_MASKED_FILLS = {aten.masked_fill.Scalar, aten.masked_fill.Tensor}
_ANDS = {aten.__and__.Tensor, aten.bitwise_and.Tensor, aten.logical_and.default}
_ORS = {aten.__or__.Tensor, aten.bitwise_or.Tensor, aten.logical_or.default}


INDEX_ARITHMETIC = {
    aten.gather.default: _index_gather, aten.expand.default: _index_expand,
    aten.eq.Scalar: _index_compare, aten.ne.Scalar: _index_compare,
    aten.eq.Tensor: _index_compare, aten.ne.Tensor: _index_compare,
    aten.add.Tensor: _index_binary, aten.add.Scalar: _index_binary, aten.sub.Tensor: _index_binary,
    aten.sub.Scalar: _index_binary, aten.mul.Tensor: _index_binary, aten.mul.Scalar: _index_binary,
    aten.cumsum.default: _index_cumsum, **{t: _index_fill for t in _WHERES | _MASKED_FILLS},
    aten.slice.Tensor: _index_slice, aten.select.int: _index_slice, aten.cat.default: _index_cat,
    aten.fill.Tensor: _index_fill_all, aten.fill.Scalar: _index_fill_all,
    **{t: _index_logical for t in _ANDS | _ORS | {aten.bitwise_not.default, aten.logical_not.default}},
    **selection.INDEX_ARITHMETIC,
}


def _to_bool(node) -> bool:
    val = node.meta.get("val")
    return isinstance(val, torch.Tensor) and val.dtype == torch.bool


def _to_float(node) -> bool:
    val = node.meta.get("val")
    return val is None or val.dtype.is_floating_point


def _in_range(self, ids, k: int):
    """Run-time indices clamped to [0, k - 1]: GATHER's REQUIRE, proven for any input. Right before
    the gather, so the conversion can hand the clamp to mcu_gather (conversion/data_movement.py)."""
    rank = len(ids.shape)
    return self.w.minimum(self.w.maximum(ids, self.w.scalar(0, rank)), self.w.scalar(k - 1, rank))


def _lookup(self, node, table, dim: int, indices: Indices):
    """Rows `indices` of `table` along `dim`."""
    if isinstance(table, DQ):
        q = table.q
    elif isinstance(table, Const) and table.scales is not None and np.asarray(table.scales).size == 1:
        q = Q(self.w.const(np.asarray(table.data, np.int64), table.elem),
              float(np.asarray(table.scales).reshape(-1)[0]), int(np.asarray(table.zps).reshape(-1)[0]))
    else:
        raise UserError(f"{describe(node)}: the table looked up with run-time indices is not quantized per "
                        "tensor (the quantizer gives lookup tables one scale)")
    shape = tuple(q.shape)
    dim %= len(shape)
    n, k, c = math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])
    w = math.prod(indices.v.shape)
    values = self.w.reshape(q.v, (n, k, c))
    ids = self.w.reshape(indices.v, (1, w))
    if node.target == aten.index.Tensor:
        # x[ids] counts negative ids from the end (embedding and index_select refuse them): id + K,
        # of ids first clamped to [-K, K - 1] so that the sum fits int32 for any input.
        ids = self.w.maximum(self.w.minimum(ids, self.w.scalar(k - 1, 2)), self.w.scalar(-k, 2))
        negative = self.w.greater(self.w.scalar(0, 2), ids)
        wrapped = self.w.add(ids, self.w.scalar(k, 2))
        ids = self.w.select(negative, wrapped, ids)
    if n > 1:
        ids = self.w.tile(ids, (n, 1))
    rows = self.w.gather(values, _in_range(self, ids, k))
    return DQ(Q(self.w.reshape(rows, shape_of(node)), q.scale, q.zp))
