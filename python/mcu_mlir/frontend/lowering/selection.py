"""Data-dependent selection: `topk`, `sort` / `argsort`, `max(dim)` with its indices, and the index
arithmetic that reads their indices (`//` and `%` by a constant, a gather of indices at indices,
the indices as a float tensor). YOLO26's NMS-free head is made of them: the top k anchors by their
best class score, the top k (anchor, class) pairs among those, the boxes gathered at them.

Ordering commutes with quantization (a monotone map), so a selection on the integers picks what
the same selection on their dequantized values picks; the values keep their input's parameters.
A top k is k steps of one exact integer program: the first index of the largest value
(tosa.argmax, ties to the lower index: a stable order), then that element set below every value
the input can hold (one tosa.scatter of one element per row), in int16 (an int8 input widened) so
the mark cannot tie with a value. The
selected values are one gather at the indices (each in [0, n): argmax's own range, so the
gather's bounds are proven, not only checked at run time). Ascending order selects the largest of
-1 - x. k steps cost k passes over the n elements: the program is meant for short vectors and
small k (YOLO26 at an MCU input size: k = the anchors, at most a few hundred).
"""

from __future__ import annotations

import math

import numpy as np

from ...diagnostics import UserError
from ..graph.nodes import aten, describe, shape_of
from .values import DQ, Const, Indices, Q, Tup

# Beyond this many steps the unrolled program is too large to be worth compiling.
MAX_STEPS = 1024
_MARK = -32768      # below every int8 value widened to int16


def _moved_last(self, v, dim: int):
    """v (a Value) with `dim` moved last and the rest flattened: ([R, n] value, order, moved shape)."""
    rank = len(v.shape)
    order = [d for d in range(rank) if d != dim] + [dim]
    moved = self.w.transpose(v, order)
    rows = math.prod(moved.shape[:-1])
    return self.w.reshape(moved, (rows, v.shape[dim])), order, tuple(moved.shape)


def _moved_back(self, v, order, moved_shape, k: int):
    """The inverse of _moved_last for a result of k elements along the moved dim."""
    shape = moved_shape[:-1] + (k,)
    v = self.w.reshape(v, shape)
    return self.w.transpose(v, [order.index(d) for d in range(len(order))])


def select_top(self, node, q: Q, dim: int, k: int, largest: bool) -> tuple[Q, Indices]:
    """The k largest (or smallest) elements of q along `dim`, in order, and their indices."""
    if q.elem != "i8":
        raise UserError(f"{describe(node)}: a top-k / sort of an {q.elem} tensor is not supported (int8 only: "
                        "its program marks taken elements with a value no int8 element can hold)")
    n = int(q.shape[dim])
    if not 1 <= k <= n:
        raise UserError(f"{describe(node)}: k = {k} is outside [1, {n}] (the size of dim {dim})")
    if k > MAX_STEPS:
        raise UserError(f"{describe(node)}: a top-k / sort of {k} elements (more than {MAX_STEPS}) is not supported: "
                        "its program takes one step per selected element")
    flat, order, moved_shape = _moved_last(self, q.v, dim)
    rows = flat.shape[0]
    work = self.w.cast(flat, "i16")
    if not largest:     # -1 - x reverses the order of every int8 value and keeps it in int8's range
        work = self.w.cast(self.w.sub(self.w.scalar(-1, 2), self.w.cast(work, "i32")), "i16")
    work = self.w.reshape(work, (rows, n, 1))
    mark = self.w.const(np.full((rows, 1, 1), _MARK), "i16")
    picked = []
    for step in range(k):
        index = self.w.reshape(self.w.argmax(work, 1), (rows, 1))
        picked.append(index)
        if step + 1 < k:    # one element written (a scatter of one row per row), not a pass over n
            work = self.w.scatter(work, index, mark)
    indices = self.w.concat(picked, 1)
    values = self.w.reshape(self.w.gather(self.w.reshape(flat, (rows, n, 1)), indices), (rows, k))
    return (Q(_moved_back(self, values, order, moved_shape, k), q.scale, q.zp),
            Indices(_moved_back(self, indices, order, moved_shape, k)))


def _eager_topk(self, node, ins):
    args = list(node.args) + [None] * 5
    k = int(args[1])
    dim = int(args[2] if args[2] is not None else node.kwargs.get("dim", -1))
    largest = args[3] if args[3] is not None else node.kwargs.get("largest", True)
    q = ins[0].q
    values, indices = select_top(self, node, q, dim % len(q.shape), k, bool(largest))
    return Tup([DQ(values), indices])


def _eager_sort(self, node, ins):
    """sort(x, dim, descending), sort.stable and argsort: a stable order, equal elements in index
    order, as torch's stable sort."""
    if node.target in (aten.sort.stable, aten.argsort.stable):
        dim, descending = node.kwargs.get("dim", -1), node.kwargs.get("descending", False)
    else:
        args = list(node.args) + [None] * 3
        dim = args[1] if args[1] is not None else node.kwargs.get("dim", -1)
        descending = args[2] if args[2] is not None else node.kwargs.get("descending", False)
    q = ins[0].q
    dim = int(dim) % len(q.shape)
    values, indices = select_top(self, node, q, dim, int(q.shape[dim]), bool(descending))
    return indices if node.target in (aten.argsort.default, aten.argsort.stable) else Tup([DQ(values), indices])


def _eager_max_dim(self, node, ins):
    """max(x, dim) / min(x, dim): the values one reduction, the indices one argmax (of -1 - x for min)."""
    q = ins[0].q
    dim = int(node.args[1]) % len(q.shape)
    keep = bool(node.args[2]) if len(node.args) > 2 else bool(node.kwargs.get("keepdim", False))
    out_shape = list(q.shape)
    out_shape[dim] = 1
    if not keep:
        del out_shape[dim]
    if node.target == aten.max.dim:
        values, source = self.w.reduce_max(q.v, dim), q.v
    else:
        if q.elem != "i8":
            raise UserError(f"{describe(node)}: the indices of min(dim) of an {q.elem} tensor are not supported")
        values = self.w.reduce_min(q.v, dim)
        source = self.w.cast(self.w.sub(self.w.scalar(-1, len(q.shape)), self.w.cast(q.v, "i32")), "i16")
    index = self.w.argmax(source, dim)
    return Tup([DQ(Q(self.w.reshape(values, out_shape), q.scale, q.zp)), Indices(self.w.reshape(index, out_shape))])


EAGER = {aten.topk.default: _eager_topk, aten.sort.default: _eager_sort, aten.sort.stable: _eager_sort,
         aten.argsort.default: _eager_sort, aten.argsort.stable: _eager_sort,
         aten.max.dim: _eager_max_dim, aten.min.dim: _eager_max_dim}


# -- index arithmetic on the selected indices (lookup.py's INDEX_ARITHMETIC takes these) ----------
def _constant_divisor(node, value) -> int | None:
    if isinstance(value, Const) and np.asarray(value.data).size == 1:
        value = np.asarray(value.data).reshape(())
    if isinstance(value, (bool, float)) or not isinstance(value, (int, np.integer, np.ndarray)):
        return None
    if np.asarray(value).dtype.kind not in "iu":
        return None
    if int(value) <= 0:
        raise UserError(f"{describe(node)}: indices divided by {int(value)}: only a positive constant divisor "
                        "is supported")
    return int(value)


def _floor_quotient(self, v, c: int):
    """floor(v / c) for a positive constant c: intdiv truncates, so negative v first moves down c - 1."""
    rank = len(v.shape)
    negative = self.w.greater(self.w.scalar(0, rank), v)
    shifted = self.w.select(negative, self.w.sub(v, self.w.scalar(c - 1, rank)), v)
    return self.w.intdiv(shifted, self.w.scalar(c, rank))


def _index_floor_divide(self, node, ins):
    """ids // c (div with rounding_mode 'floor', floor_divide) by a positive constant, in int32."""
    if node.target == aten.div.Tensor_mode and node.kwargs.get("rounding_mode") != "floor":
        return None
    if not isinstance(ins[0], Indices):
        return None
    c = _constant_divisor(node, ins[1])
    if c is None:
        return None
    return Indices(self.w.reshape(_floor_quotient(self, ins[0].v, c), shape_of(node)))


def _index_remainder(self, node, ins):
    """ids % c by a positive constant (Python's sign: the result in [0, c)): v - c * floor(v / c)."""
    if not isinstance(ins[0], Indices):
        return None
    c = _constant_divisor(node, ins[1])
    if c is None:
        return None
    v = ins[0].v
    rank = len(v.shape)
    quotient = _floor_quotient(self, v, c)
    return Indices(self.w.reshape(self.w.sub(v, self.w.mul(quotient, self.w.scalar(c, rank))), shape_of(node)))


INDEX_ARITHMETIC = {aten.div.Tensor_mode: _index_floor_divide, aten.floor_divide.default: _index_floor_divide,
                    aten.remainder.Scalar: _index_remainder, aten.remainder.Tensor: _index_remainder}


def lower_index_as_float(self, node, ins, scale, zp, elem, clamp):
    """ids.float() (YOLO26's class indices in its float output) quantized: each index one rescale of
    the int32 value at scale 1 into the output's parameters."""
    if not isinstance(ins[0], Indices):
        return None
    return self.apply_clamp(self.requantize(Q(ins[0].v, 1.0, 0), scale, zp, elem), clamp)


LOWER = {aten._to_copy.default: lower_index_as_float}
