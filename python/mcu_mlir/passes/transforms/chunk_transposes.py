"""mcu-chunk-transposes: a transpose read only in equal chunks writes each chunk contiguously.

ShuffleNet's channel shuffle (view as [.., 2, C/2], swap, flatten) is followed by a chunk into two
channel halves. In NHWC a channel half is strided, so each half is a copy on top of the
transpose's. The transpose moves every element anyway: the same single copy can put the chunk
index outermost, and then each chunk is one contiguous run of the result, a view at an offset
(the memory planner aliases such slices). The new transpose is found from where each element
must go (source shape and permutation read off the index map, then checked element by element),
so it holds for any chain of reshapes and transposes, not one model's shapes.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import ir, tosa
from ..base import ModulePass
from ..conversion.common import const_ints
from ...ir.ops import create
from ...ir.values import producer, shape, users
from ..pattern_driver import RewritePatternSet, apply_patterns
from ...ir.constants import make_shape
from .layout.channel_permutation import chain_index
from ..analysis.transposes import is_data_moving


def equal_chunks(value):
    """(axis, chunk size, [(slice op, chunk index)]) when every user of `value` is a slice of one
    whole chunk [h * n, (h + 1) * n) along the same axis; None otherwise."""
    slices = users(value)
    if not slices or any(not isinstance(s, tosa.SliceOp) for s in slices):
        return None
    src = shape(value)
    axis, n, out = None, None, []
    for s in slices:
        start, size = const_ints(s.operands[1]), shape(s.results[0])
        if start is None or len(size) != len(src):
            return None
        cut = [d for d in range(len(src)) if size[d] != src[d] or start[d]]
        if len(cut) != 1 or (axis is not None and cut[0] != axis) or (n is not None and size[cut[0]] != n):
            return None
        axis, n = cut[0], size[cut[0]]
        if src[axis] % n or start[axis] % n:
            return None
        out.append((s, start[axis] // n))
    return axis, n, out


def _view_chain(value):
    """(source, [reshape / transpose ops in data order]) back to the first other op; each link
    read by the next one only."""
    chain = []
    while True:
        op = producer(value)
        if op is None or not isinstance(op, (tosa.ReshapeOp, tosa.TransposeOp)):
            return value, chain[::-1]
        if chain and len(users(op.results[0])) != 1:
            return value, chain[::-1]
        chain.append(op)
        value = op.operands[0]


def as_reshape_transpose(order: np.ndarray):
    """(source shape Q, perms R) with arange(N).reshape(Q).transpose(R).ravel() == order, dims
    merged as far as the order allows; None when no single transpose gives that order."""
    n = order.size
    dims = []              # (size, source stride), innermost output dim first
    block = 1
    while block < n:
        stride = int(order[block] - order[0])
        run = 1            # how far the elements block apart keep that stride
        while block * (run + 1) <= n and int(order[block * run] - order[0]) == stride * run:
            run += 1
        size = max(d for d in range(1, run + 1) if (n // block) % d == 0)
        if size == 1:
            return None
        dims.append((size, stride))
        block *= size
    merged = []            # an outer dim continuing an inner one's stride is the same dim
    for size, stride in dims:
        if merged and stride == merged[-1][1] * merged[-1][0]:
            merged[-1] = (merged[-1][0] * size, merged[-1][1])
        else:
            merged.append((size, stride))
    dims = merged
    by_stride = sorted(range(len(dims)), key=lambda i: -dims[i][1])
    source = [dims[i][0] for i in by_stride]
    perms = [by_stride.index(i) for i in reversed(range(len(dims)))]
    if not source or not np.array_equal(np.arange(n).reshape(source).transpose(perms).ravel(), order):
        return None
    return source, perms


def _rewrite(value, rewriter) -> bool:
    found = equal_chunks(value)
    if found is None:
        return False
    axis, n, slices = found
    if all(d == 1 for d in shape(value)[:axis]):
        return False        # each chunk is one contiguous run already
    source, chain = _view_chain(value)
    transposes = [op for op in chain if isinstance(op, tosa.TransposeOp)]
    if not transposes or not any(is_data_moving(t) for t in transposes):
        return False
    index = chain_index(shape(source), chain)
    k = index.shape[axis] // n
    order = np.concatenate([np.take(index, range(h * n, (h + 1) * n), axis=axis).ravel() for h in range(k)])
    found = as_reshape_transpose(order)
    if found is None:
        return False
    q, r = found
    chunk_shape = shape(slices[0][0].results[0])
    first = slices[0][0]
    elem = ir.RankedTensorType(value.type).element_type
    loc = first.location

    def build(cls, dims, operands, attributes=None):
        return create(cls, results=[ir.RankedTensorType.get([int(d) for d in dims], elem)],
                      operands=operands, attributes=attributes, loc=loc).results[0]

    # Where the chain began: the slices' users may come before the first slice the users list names.
    with ir.InsertionPoint(chain[0]):
        flat = build(tosa.ReshapeOp, q, [source, make_shape(q, loc=loc)])
        moved = build(tosa.TransposeOp, [q[p] for p in r], [flat], {"perms": ir.DenseI32ArrayAttr.get(r)})
        chunks = build(tosa.ReshapeOp, [k] + chunk_shape, [moved, make_shape([k] + chunk_shape, loc=loc)])
        for s, h in slices:
            part = build(tosa.SliceOp, [1] + chunk_shape,
                         [chunks, make_shape([h] + [0] * len(chunk_shape), loc=loc),
                          make_shape([1] + chunk_shape, loc=loc)])
            s.results[0].replace_all_uses_with(
                build(tosa.ReshapeOp, chunk_shape, [part, make_shape(chunk_shape, loc=loc)]))
    for s, _ in slices:
        rewriter.erase_op(s)
    for op in reversed(chain):
        if not users(op.results[0]):
            rewriter.erase_op(op)
    return True


def chunk_transpose(op, rewriter):
    """Pattern on tosa.slice: rewrites the transpose chain its input comes from (falsy when it did)."""
    return not _rewrite(op.operands[0], rewriter)


@dataclasses.dataclass(frozen=True)
class ChunkTransposes(ModulePass):
    """Reorders a transpose read only in equal chunks so that each chunk is contiguous.

    A chain of reshapes and data-moving transposes whose result is read only through slices of
    whole equal chunks along one axis (torch.chunk / split after ShuffleNet's channel shuffle)
    becomes one transpose of the chain's source that writes chunk after chunk, and each slice a
    contiguous slice of it (a view). Same copy count for the transpose, none for the slices.
    """

    NAME = "mcu-chunk-transposes"

    def run(self, module: ir.Operation) -> None:
        patterns = RewritePatternSet()
        patterns.add(tosa.SliceOp, chunk_transpose)
        apply_patterns(module, patterns)
