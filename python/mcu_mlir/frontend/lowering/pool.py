"""Pooling and reductions: max pool on the integers, average pools and means (a rescaled sum)."""

from __future__ import annotations

import operator

from ...diagnostics import UserError
from ...fixed_point.qmath import quantize_multiplier
from ..quantize.shrinking_means import averages_everything
from .conv import exact_pads
from .values import DQ, Q, Tup
from ..graph.nodes import aten, describe, qd, shape_of, tuple_of


def _lower_mean_like(self, node, ins, scale, zp, elem, clamp):
    if not isinstance(ins[0], DQ):
        return None
    q = ins[0].q
    if scale < q.scale and averages_everything(node):
        # A mean at a finer step than its input (shrinking_means.py): the int32 sum rescaled once,
        # not a pool rounded at the input's step first.
        return self.apply_clamp(_reduce_mean(self, node, q, scale, zp, elem), clamp)
    out = _avg_pool(self, node, q)
    if out is None:
        return self.apply_clamp(_reduce_mean(self, node, q, scale, zp, elem), clamp)
    return self.apply_clamp(self.requantize(out, scale, zp, elem), clamp)


def _eager_max_pool(self, node, ins):
    q = ins[0].q
    one_d = node.target == aten.max_pool1d.default
    a = list(node.args) + [None] * 6
    k = tuple_of(a[1], 1 if one_d else 2)
    stride = tuple_of(a[2] if a[2] not in (None, []) else k, len(k))
    pad = tuple_of(a[3] if a[3] is not None else 0, len(k))
    dil = tuple_of(a[4] if a[4] is not None else 1, len(k))
    ceil = bool(a[5]) if a[5] is not None else node.kwargs.get("ceil_mode", False)
    if any(d != 1 for d in dil):
        raise UserError(f"{describe(node)}: dilated max pooling is not supported")
    if one_d:
        k, stride, pad = (k[0], 1), (stride[0], 1), (pad[0], 0)
    x = q.v if not one_d else self.w.reshape(q.v, q.shape + (1,))
    nhwc = self.w.transpose(x, [0, 2, 3, 1])
    pads, nhwc = _window_pads(self, nhwc, k, stride, pad, ceil)
    y = self.w.max_pool2d(nhwc, kernel=k, stride=stride, pad=pads)
    y = self.w.transpose(y, [0, 3, 1, 2])
    return DQ(Q(self.w.reshape(y, shape_of(node)), q.scale, q.zp))


def _window_pads(self, nhwc, k, stride, pad, ceil: bool, padded=(0, 0)):
    """TOSA pads of a PyTorch pooling window (floor or ceil_mode), and its input: the bottom / right
    pad that gives exactly PyTorch's output count (rows it never reads are sliced off). A ceil_mode
    window hanging past the input reads TOSA padding, which no pool counts or selects. `padded`:
    PyTorch's padding per side already in `nhwc` (an average pool counting it pads explicitly)."""
    pads = [pad[0], pad[0], pad[1], pad[1]]
    for i, size in enumerate(nhwc.shape[1:3]):
        span = size + 2 * pad[i] - k[i]
        o = (-(-span // stride[i]) if ceil else span // stride[i]) + 1
        if ceil and (o - 1) * stride[i] >= size + pad[i] - padded[i]:
            o -= 1   # PyTorch: the last window starts inside the input or the left padding
        need = (o - 1) * stride[i] + k[i] - size - pad[i]   # bottom/right pad giving exactly o outputs
        if need < 0:
            shape = list(nhwc.shape)
            shape[1 + i] += need
            nhwc = self.w.slice(nhwc, (0, 0, 0, 0), shape)
            need = 0
        pads[2 * i + 1] = need
    return pads, nhwc


def _eager_mean_like(self, node, ins):
    users = list(node.users)
    q = ins[0].q
    if not users or any(u.target != qd.quantize_per_tensor.default or
                        (float(u.args[1]), int(u.args[2])) != (q.scale, q.zp) for u in users):
        return None
    out = _avg_pool(self, node, q)
    return DQ(out) if out is not None else None


def _avg_pool(self, node, q: Q) -> Q | None:
    """Average pooling over the spatial dims of NC[H]W as TOSA AVG_POOL2D; None if not that."""
    t = node.target
    rank = len(q.shape)
    out_shape = shape_of(node)
    explicit_pad = ceil = False
    if t in (aten.adaptive_avg_pool2d.default, aten.adaptive_avg_pool1d.default):
        n_sp = 2 if t == aten.adaptive_avg_pool2d.default else 1
        outs = tuple_of(node.args[1], n_sp)
        ins_sp = q.shape[-n_sp:]
        if any(i % o for i, o in zip(ins_sp, outs)):
            return _adaptive_cells(self, node, q, outs, self.w.avg_pool2d)
        k = tuple(i // o for i, o in zip(ins_sp, outs))
        stride, pad = k, (0,) * n_sp
    elif t in (aten.avg_pool2d.default, aten.avg_pool1d.default):
        n_sp = 2 if t == aten.avg_pool2d.default else 1
        a = list(node.args) + [None] * 7
        k = tuple_of(a[1], n_sp)
        stride = tuple_of(a[2] if a[2] not in (None, []) else k, n_sp)
        pad = tuple_of(a[3] if a[3] is not None else 0, n_sp)
        ceil = bool(a[4]) if a[4] is not None else False
        include_pad = a[5] if a[5] is not None else True
        if a[6] is not None:
            raise UserError(f"{describe(node)}: average pooling with divisor_override is not supported")
        explicit_pad = bool(include_pad and any(pad))
    elif t == aten.mean.dim:
        dims = sorted(d % rank for d in node.args[1])
        if rank not in (3, 4) or dims != list(range(2, rank)):
            return None
        n_sp = rank - 2
        k = q.shape[2:]
        stride, pad = k, (0,) * n_sp
    else:
        return None
    if n_sp == 1:
        k, stride, pad = (k[0], 1), (stride[0], 1), (pad[0], 0)
        x = self.w.reshape(q.v, q.shape + (1,))
    else:
        x = q.v
    nhwc = self.w.transpose(x, [0, 2, 3, 1])
    padded = (0, 0)
    if explicit_pad:
        # PyTorch counts the zero padding in the average (TOSA does not): pad with the zero point.
        nhwc = self.w.pad(nhwc, [0, 0, pad[0], pad[0], pad[1], pad[1], 0, 0], q.zp)
        pad, padded = (0, 0), pad
    if ceil:
        # PyTorch divides a ceil_mode window hanging past the (padded) input by the elements it
        # covers there; TOSA leaves its padding out of the count: the same divisor.
        pads, nhwc = _window_pads(self, nhwc, k, stride, pad, True, padded)
    else:
        pads, nhwc = exact_pads(self, nhwc, k, stride, pad, (1, 1))
    # The mean of the raw integers, zero points 0: with one zero point on both sides,
    # mean(x - zp) + zp == mean(x), and this form rounds ties away from zero as TFLite and
    # CMSIS-NN's arm_avgpool_* do, so the kernel computes these integers bit for bit.
    y = self.w.avg_pool2d(nhwc, kernel=k, stride=stride, pad=pads)
    y = self.w.transpose(y, [0, 3, 1, 2])
    return Q(self.w.reshape(y, out_shape), q.scale, q.zp)


# Adaptive pooling whose input size the output size does not divide: one pool per output cell.
MAX_ADAPTIVE_CELLS = 1024


def _adaptive_cells(self, node, q: Q, outs, pool, out_shape=None) -> Q:
    """Adaptive pooling as PyTorch defines it for any sizes: output cell i of a dim reads
    [floor(i * in / out), ceil((i + 1) * in / out)), so windows differ in size and may overlap.
    Each cell is its own TOSA pool over its slice (the average divides by that cell's count, as
    PyTorch does), the cells concatenated; a max pool of more than MAX_ADAPTIVE_CELLS cells pools
    the rows of each output row, then the columns of each output column. `pool`: the builder's avg_pool2d or max_pool2d."""
    n_sp = len(outs)
    cells = outs[0] * (outs[1] if n_sp == 2 else 1)
    separable = pool == self.w.max_pool2d and cells > MAX_ADAPTIVE_CELLS
    if cells > MAX_ADAPTIVE_CELLS and not separable:
        raise UserError(f"{describe(node)}: adaptive average pooling to {cells} cells from sizes that do not divide "
                        f"is not supported (at most {MAX_ADAPTIVE_CELLS})")
    x = q.v if n_sp == 2 else self.w.reshape(q.v, q.shape + (1,))
    outs = tuple(outs) if n_sp == 2 else (outs[0], 1)
    nhwc = self.w.transpose(x, [0, 2, 3, 1])
    n, h, w, c = nhwc.shape
    if separable:
        # A maximum over a window is the maximum over its rows of the maximum over its columns:
        # one pool per output row, then one per output column.
        for axis, count in ((1, outs[0]), (2, outs[1])):
            if count == nhwc.shape[axis]:
                continue
            parts = []
            for lo, hi in _adaptive_windows(nhwc.shape[axis], count):
                begin, extent, kernel = [0] * 4, list(nhwc.shape), [1, 1]
                begin[axis], extent[axis], kernel[axis - 1] = lo, hi - lo, hi - lo
                part = self.w.slice(nhwc, begin, extent)
                parts.append(pool(part, kernel=tuple(kernel), stride=(1, 1), pad=(0, 0, 0, 0)))
            nhwc = self.w.concat(parts, axis)
        y = self.w.transpose(nhwc, [0, 3, 1, 2])
        return Q(self.w.reshape(y, out_shape or shape_of(node)), q.scale, q.zp)
    windows = _adaptive_windows

    self.w.zp(0, q.elem)    # an average pool's zero points, made here for either pool: the constants keep their order
    rows = []
    for r0, r1 in windows(h, outs[0]):
        row = []
        for c0, c1 in windows(w, outs[1]):
            cell = self.w.slice(nhwc, (0, r0, c0, 0), (n, r1 - r0, c1 - c0, c))
            row.append(pool(cell, kernel=(r1 - r0, c1 - c0), stride=(1, 1), pad=(0, 0, 0, 0)))
        rows.append(self.w.concat(row, 2))
    y = self.w.transpose(self.w.concat(rows, 1), [0, 3, 1, 2])
    return Q(self.w.reshape(y, out_shape or shape_of(node)), q.scale, q.zp)


def _adaptive_windows(size: int, count: int) -> list:
    """PyTorch's adaptive windows: cell i reads [floor(i * size / count), ceil((i + 1) * size / count))."""
    return [(i * size // count, -(-(i + 1) * size // count)) for i in range(count)]


def _eager_adaptive_max_pool(self, node, ins):
    """adaptive_max_pool (values, indices): the values; a model that reads the indices is refused."""
    q = ins[0].q
    n_sp = 2 if node.target == aten.adaptive_max_pool2d.default else 1
    if any(u.target is not operator.getitem or u.args[1] != 0 for u in node.users):
        raise UserError(f"{describe(node)}: the indices of adaptive max pooling are not supported")
    outs = tuple_of(node.args[1], n_sp)
    out = _adaptive_cells(self, node, q, outs, self.w.max_pool2d, tuple(int(d) for d in node.meta["val"][0].shape))
    return Tup([DQ(out), None])


def _lower_sum(self, node, ins, scale, zp, elem, clamp):
    if not isinstance(ins[0], DQ):
        return None
    return self.apply_clamp(_reduce_mean(self, node, ins[0].q, scale, zp, elem), clamp)


def _reduce_mean(self, node, q: Q, scale, zp, elem) -> Q:
    """A mean or sum over dims as the int32 sum of the integers, rescaled once to (scale, zp)."""
    rank = len(q.shape)
    if node.target in (aten.mean.dim, aten.sum.dim_IntList):
        dims = sorted(d % rank for d in node.args[1])
    elif averages_everything(node):      # an adaptive pool to one cell: over its spatial dims
        dims = list(range(rank - (2 if node.target == aten.adaptive_avg_pool2d.default else 1), rank))
    else:
        raise UserError(f"{describe(node)} is not supported")
    v = self.w.rescale(q.v, [1 << 30], [30], q.zp, 0, "i32")
    count = 1
    for d in dims:
        count *= q.shape[d]
        v = self.w.reduce_sum(v, d)
    if node.target == aten.sum.dim_IntList:
        count = 1
    m, s = quantize_multiplier(q.scale / (count * scale))
    out = self.w.rescale(v, [m], [s], 0, zp, elem)
    return Q(self.w.reshape(out, shape_of(node)), scale, zp)


LOWER = {
    aten.adaptive_avg_pool2d.default: _lower_mean_like, aten.adaptive_avg_pool1d.default: _lower_mean_like,
    aten.avg_pool2d.default: _lower_mean_like, aten.avg_pool1d.default: _lower_mean_like,
    aten.mean.dim: _lower_mean_like, aten.sum.dim_IntList: _lower_sum,
}
EAGER = {
    aten.max_pool2d.default: _eager_max_pool, aten.max_pool1d.default: _eager_max_pool,
    aten.adaptive_avg_pool2d.default: _eager_mean_like, aten.adaptive_avg_pool1d.default: _eager_mean_like,
    aten.avg_pool2d.default: _eager_mean_like, aten.avg_pool1d.default: _eager_mean_like,
    aten.mean.dim: _eager_mean_like,
    aten.adaptive_max_pool2d.default: _eager_adaptive_max_pool,
    aten.adaptive_max_pool1d.default: _eager_adaptive_max_pool,
}
