"""mcu-heads-from-linears: a linear split into heads by a transpose computes each head itself."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import func, ir, tosa
from ..base import ModulePass
from .channel_blocks import build_block, erase_layer, read_layer
from ..conversion.common import const_ints
from ...ir.ops import create, isa
from ...ir.values import shape, users
from ..pattern_driver import RewritePatternSet, apply_patterns
from ...ir.constants import make_shape
from ...ir.resources import clear_resource_cache
from ..analysis.transposes import is_data_moving

# Narrowest head split off: CMSIS-NN's fully connected kernels compute four output channels at a
# time with MVE, so a narrower part leaves lanes idle (and a transpose to the model's output layout
# read per channel is no head split at all).
MIN_HEAD = 4

_VIEWS = (tosa.ReshapeOp, tosa.TransposeOp, tosa.SliceOp)


def _index_after(op, index: np.ndarray) -> np.ndarray | None:
    """Where each element of a view op's result comes from, given its input's `index`."""
    if isinstance(op, tosa.TransposeOp):
        return index.transpose(tuple(op.attributes["perms"]))
    if isinstance(op, tosa.ReshapeOp):
        return index.reshape(shape(op.results[0]))
    start, size = const_ints(op.operands[1]), shape(op.results[0])
    if start is None:
        return None
    return index[tuple(slice(s, s + n) for s, n in zip(start, size))]


def view_tree(value):
    """(view ops in data order, {leaf value: index}) of the reshapes, transposes and slices that read
    `value`: a leaf is a value no view op reads, its index where each element comes from in
    `value`. None where a value is read both by view ops and by others, or the model returns it."""
    ops, leaves, pending = [], {}, [(value, np.arange(int(np.prod(shape(value)))).reshape(shape(value)))]
    while pending:
        v, index = pending.pop()
        readers = users(v)
        views = [u for u in readers if isinstance(u, _VIEWS) and u.operands[0] == v]
        if not views:
            if any(isa(u, func.ReturnOp) for u in readers):
                return None
            leaves[v] = index
            continue
        if len(views) != len(readers):
            return None
        for u in views:
            after = _index_after(u, index)
            if after is None:
                return None
            ops.append(u)
            pending.append((u.results[0], after))
    return ops, leaves


def head_blocks(index: np.ndarray, rows: int, n: int, transposed: bool) -> list[int] | None:
    """First channel of each block of the view `index` (into a [rows, n] source), in order, when the
    view is blocks of [rows, D] (D its last dim; `transposed`: of [D, rows], its last two) each
    holding D consecutive channels for every row; else None."""
    d = index.shape[-2] if transposed else index.shape[-1]
    if d < MIN_HEAD or n % d or index.size % (rows * d):
        return None
    count = index.size // (rows * d)
    blocks = index.reshape(count, d, rows).transpose(0, 2, 1) if transposed else index.reshape(count, rows, d)
    firsts = [int(b[0, 0]) for b in blocks]
    expect = (np.arange(rows) * n)[:, None] + np.arange(d)[None, :]
    if any(f >= n or not np.array_equal(b, expect + f) for f, b in zip(firsts, blocks)):
        return None
    return firsts


def _create(cls, dims, elem, operands, loc, attributes=None) -> ir.Value:
    return create(cls, results=[ir.RankedTensorType.get([int(x) for x in dims], elem)],
                  operands=operands, attributes=attributes, loc=loc).results[0]


def split_heads(op, rewriter):
    """Pattern on tosa.transpose: the layer its views start from, one part per head (falsy when it
    rewrote)."""
    with op.location:
        return _split(op, rewriter)


def _split(op, rewriter) -> bool:
    value = op.operands[0]
    while isinstance(value.owner, _VIEWS):
        value = value.owner.operands[0]
    layer = read_layer(value, ("i8", "i16"), matmul=True)
    if layer is None or (isinstance(layer.core, tosa.Conv2DOp) and layer.weights.shape[1:3] != (1, 1)):
        return True     # a wider kernel would gather its input patches once per head
    tree = view_tree(value)
    if tree is None:
        return True     # read as it is too, or the model's output
    ops, leaves = tree
    if not any(isinstance(t, tosa.TransposeOp) and is_data_moving(t) for t in ops):
        return True
    n = shape(value)[-1]
    rows = int(np.prod(shape(value)[:-1], dtype=np.int64))
    # Heads as [rows, D] blocks (Q, V), or as [D, rows] (a K^T made with the split: the batch matmul
    # reads K itself, so the parts stay [rows, D] and one transpose of their concat gives K^T).
    plans = {}
    for leaf, index in leaves.items():
        for transposed in (False, True):
            firsts = head_blocks(index, rows, n, transposed) if index.ndim >= 2 else None
            if firsts is not None:
                plans[leaf] = (firsts, transposed)
                break
        else:
            return True
    for leaf, (firsts, transposed) in plans.items():
        _heads(layer, leaf, firsts, transposed, leaf.owner)
    for link in reversed(ops):      # users first
        rewriter.erase_op(link)
    erase_layer(layer, rewriter)
    return False


def _heads(layer, leaf, firsts, transposed, before) -> None:
    """`leaf` rebuilt as the parts' concat (in place), then its transpose if `transposed`."""
    loc = before.location
    elem = ir.RankedTensorType(leaf.type).element_type
    d = shape(leaf)[-2 if transposed else -1]
    parts = [build_block(layer, c0, d, before, loc) for c0 in firsts]
    part_shape = shape(parts[0])
    joined = [len(parts) * part_shape[0]] + part_shape[1:]
    with ir.InsertionPoint(before):
        # Each part is one contiguous run of the result: the memory planner writes it there in place.
        heads = _create(tosa.ConcatOp, joined, elem, parts, loc,
                        {"axis": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0)})
        if transposed:
            rows = int(np.prod(part_shape[:-1], dtype=np.int64))
            flat = _create(tosa.ReshapeOp, [len(parts), rows, d], elem,
                           [heads, make_shape([len(parts), rows, d], loc=loc)], loc)
            heads = _create(tosa.TransposeOp, [len(parts), d, rows], elem, [flat], loc,
                            {"perms": ir.DenseI32ArrayAttr.get([0, 2, 1])})
        view = _create(tosa.ReshapeOp, shape(leaf), elem, [heads, make_shape(shape(leaf), loc=loc)], loc)
    leaf.replace_all_uses_with(view)


@dataclasses.dataclass(frozen=True)
class HeadsFromLinears(ModulePass):
    """Computes each attention head of a linear layer as its own linear, written in place.

    Multi-head attention splits a projection's [tokens, heads x D] output into heads with reshapes
    and transposes ([heads, tokens, D]; timm's [3, heads, tokens, D] for one Q/K/V linear;
    nn.MultiheadAttention's packed projection sliced into Q, K and V first): copies of the whole
    output. Output channels of a linear are independent, so each head's D channels are the same
    linear with those rows of the weights, bias and multipliers (cut at compile time); its result
    is already [tokens, D], the head's block of the transposed tensor. The parts of each tensor
    the views end in are concatenated along the outermost axis, which the memory planner does in
    place, so no data moves: the same MACs in one kernel call per head. The blocks are found from
    where each element of those tensors comes from, so any tree of reshapes, transposes and slices
    that keeps each head's D channels together qualifies. A split that also transposes each head
    ([heads, D, tokens]: HuggingFace's K^T) becomes the parts' concat and one transpose of it, which
    the batch matmul reading K^T takes K from. int8 (matmul) and int16 (1x1 conv) linears. Parts
    narrower than four channels are not made (the kernels' inner loop takes four), nor is a
    linear split whose output the model also reads as it is or returns.
    """

    NAME = "mcu-heads-from-linears"

    def run(self, module: ir.Operation) -> None:
        clear_resource_cache()
        with module.context:
            patterns = RewritePatternSet()
            patterns.add(tosa.TransposeOp, split_heads)
            apply_patterns(module, patterns)
