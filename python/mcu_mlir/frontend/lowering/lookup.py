"""Lookups with run-time indices: `embedding`, `index_select` and `x[..., ids]` (aten.index.Tensor)
where the indices are an integer graph input (token ids) or a view of one.

Each is one tosa.gather: the table viewed as [N, K, C] (K the looked-up dim, no data moved), the
indices as [N, W] (tiled over N when N > 1; for x[ids], negative ones counted from the end as torch
does). The rows keep the table's quantization, so no rescale follows. The indices are checked at run
time by the kernel (an index outside the table is an error, not a read past it).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...diagnostics import UserError
from .values import DQ, Const, Indices, Pending, Q, aten, describe, nodes_of, shape_of

# Integer ops an index tensor may pass through before its lookup: views, and casts between int types.
INDEX_VIEWS = {aten.view.default, aten.reshape.default, aten._unsafe_view.default, aten.flatten.using_ints,
               aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
               aten.clone.default, aten.contiguous.default, aten.alias.default, aten.detach.default}
INDEX_CASTS = {aten._to_copy.default, aten.to.dtype, aten.to.dtype_layout, aten.type_as.default}


def index_bounds(gm) -> list[int | None]:
    """Per graph input: for integer inputs, the size of the smallest dim they index (so random
    calibration ids stay valid), None for float inputs or when no lookup reads them."""
    bounds = []
    for node in gm.graph.find_nodes(op="placeholder"):
        val = node.meta.get("val")
        if not hasattr(val, "dtype") or val.dtype.is_floating_point:
            bounds.append(None)
            continue
        sizes, todo = [], [node]
        while todo:
            n = todo.pop()
            for user in n.users:
                if user.target in INDEX_VIEWS or user.target in INDEX_CASTS and not _to_float(user):
                    todo.append(user)
                    continue
                looked = _looked_up_dim(user, n)
                if looked is not None:
                    sizes.append(looked)
        bounds.append(min(sizes) if sizes else None)
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
    if t in INDEX_VIEWS or t in INDEX_CASTS and not _to_float(node):
        return Indices(self.w.reshape(ins[0].v, shape_of(node)))
    if t == aten.embedding.default and isinstance(ins[1], Indices):
        return _lookup(self, node, ins[0], 0, ins[1])
    if t == aten.index_select.default and isinstance(ins[2], Indices):
        return _lookup(self, node, ins[0], int(node.args[1]), ins[2])
    if t == aten.index.Tensor:
        given = [(d, self.values.get(a)) for d, a in enumerate(node.args[1]) if a is not None]
        if len(given) == 1 and isinstance(given[0][1], Indices):
            return _lookup(self, node, ins[0], given[0][0], given[0][1])
    raise UserError(f"{describe(node)} reads a run-time integer input (token ids or other indices): "
                    "only lookups (embedding, index_select, x[ids] on one dim) take them")


def _to_float(node) -> bool:
    val = node.meta.get("val")
    return val is None or val.dtype.is_floating_point


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
        # x[ids] counts negative ids from the end (embedding and index_select refuse them): id + K.
        negative = self.w.op("tosa.greater", [self.w.scalar(0, 2), ids], (1, w), "i1")
        wrapped = self.w.op("tosa.add", [ids, self.w.scalar(k, 2)], (1, w), "i32")
        ids = self.w.op("tosa.select", [negative, wrapped, ids], (1, w), "i32")
    if n > 1:
        ids = self.w.tile(ids, (n, 1))
    rows = self.w.op("tosa.gather", [values, ids], (n, w, c), q.elem)
    return DQ(Q(self.w.reshape(rows, shape_of(node)), q.scale, q.zp))
