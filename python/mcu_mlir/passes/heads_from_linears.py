"""mcu-heads-from-linears: a linear split into heads by a transpose computes each head itself."""

from __future__ import annotations

import dataclasses

import numpy as np

from .._mlir import ir, tosa
from .base import ModulePass
from .channel_blocks import build_block, erase_layer, read_layer
from .conversion.common import op_name, shape, users
from .layout.channel_permutation import chain_index
from .pattern_driver import RewritePatternSet, apply_patterns
from ..ir.constants import make_shape
from ..ir.resources import clear_resource_cache
from ..transposes import is_data_moving


# Narrowest head split off: CMSIS-NN's fully connected kernels compute four output channels at a
# time with MVE, so a narrower part leaves lanes idle (and a transpose to the model's output layout
# read per channel is no head split at all).
MIN_HEAD = 4


def _views_after(value) -> list:
    """The reshapes and transposes reading `value` one after another, each the only reader of the
    one before, up to the last transpose."""
    chain = []
    while True:
        us = users(value)
        if len(us) != 1 or not isinstance(us[0], (tosa.ReshapeOp, tosa.TransposeOp)):
            break
        chain.append(us[0])
        value = us[0].results[0]
    while chain and not isinstance(chain[-1], tosa.TransposeOp):
        chain.pop()
    return chain


def head_blocks(src_shape, chain, transposed: bool) -> list[int] | None:
    """First output channel of each block, in the order the chain's result holds them, when that
    result is blocks of [rows, D] (D its last dim; `transposed`: of [D, rows], its last two dims)
    each holding D consecutive channels of the [rows, N] source for every row; else None."""
    index = chain_index(src_shape, chain)
    n = src_shape[-1]
    d = index.shape[-2] if transposed else index.shape[-1]
    rows = int(np.prod(src_shape[:-1], dtype=np.int64))
    if n % d or n == d:
        return None
    blocks = index.reshape(n // d, d, rows).transpose(0, 2, 1) if transposed else index.reshape(n // d, rows, d)
    firsts = [int(b[0, 0]) for b in blocks]
    expect = (np.arange(rows) * n)[:, None] + np.arange(d)[None, :]
    if any(f >= n or not np.array_equal(b, expect + f) for f, b in zip(firsts, blocks)):
        return None
    return firsts


def _create(name, dims, elem, operands, loc, attributes=None) -> ir.Value:
    return ir.Operation.create(name, results=[ir.RankedTensorType.get([int(x) for x in dims], elem)],
                               operands=operands, attributes=attributes or {}, loc=loc).results[0]


def split_heads(op, rewriter):
    """Pattern on tosa.transpose: the layer its chain starts from, one part per head (falsy when it
    rewrote)."""
    with op.location:
        return _split(op, rewriter)


def _split(op, rewriter) -> bool:
    value = op.operands[0]
    while isinstance(value.owner, tosa.ReshapeOp) and len(users(value)) == 1:
        value = value.owner.operands[0]
    chain = _views_after(value)
    if not any(link.operation == op.operation for link in chain) or \
            not any(is_data_moving(t) for t in chain if isinstance(t, tosa.TransposeOp)):
        return True
    layer = read_layer(value, ("i8", "i16"), matmul=True)
    if layer is None or (isinstance(layer.core, tosa.Conv2DOp) and layer.weights.shape[1:3] != (1, 1)):
        return True     # a wider kernel would gather its input patches once per head
    out = chain[-1].results[0]
    if all(op_name(u) == "func.return" for u in users(out)):
        return True     # the model's output layout: no heads
    # Heads as [rows, D] blocks (Q, V), or as [D, rows] (a K^T made with the split: the batch matmul
    # reads K itself, so the parts stay [rows, D] and one transpose of their concat gives K^T).
    for transposed in (False, True):
        d = shape(out)[-2 if transposed else -1]
        firsts = head_blocks(shape(value), chain, transposed) if d >= MIN_HEAD else None
        if firsts is not None:
            break
    else:
        return True
    last = chain[-1]
    loc = last.location
    parts = [build_block(layer, c0, d, last, loc) for c0 in firsts]
    part_shape = shape(parts[0])
    joined = [len(parts) * part_shape[0]] + part_shape[1:]
    elem = ir.RankedTensorType(out.type).element_type
    # Each part is one contiguous run of the result: the memory planner writes it there in place.
    concat = ir.Operation.create("tosa.concat", results=[ir.RankedTensorType.get(joined, elem)], operands=parts,
                                 attributes={"axis": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0)},
                                 loc=loc, ip=ir.InsertionPoint(last)).results[0]
    with ir.InsertionPoint(last):
        heads = concat
        if transposed:
            rows = int(np.prod(part_shape[:-1], dtype=np.int64))
            flat = _create("tosa.reshape", [len(parts), rows, d], elem,
                           [concat, make_shape([len(parts), rows, d], loc=loc)], loc)
            heads = _create("tosa.transpose", [len(parts), d, rows], elem, [flat], loc,
                            {"perms": ir.DenseI32ArrayAttr.get([0, 2, 1])})
        view = _create("tosa.reshape", shape(out), elem, [heads, make_shape(shape(out), loc=loc)], loc)
    out.replace_all_uses_with(view)
    for link in reversed(chain):
        rewriter.erase_op(link)
    erase_layer(layer, rewriter)
    return False


@dataclasses.dataclass(frozen=True)
class HeadsFromLinears(ModulePass):
    """Computes each attention head of a linear layer as its own linear, written in place.

    Multi-head attention splits a projection's [tokens, heads x D] output into heads with a reshape
    and a transpose ([heads, tokens, D], or timm's [3, heads, tokens, D] for one Q/K/V linear): a
    copy of the whole output. Output channels of a linear are independent, so each head's D
    channels are the same linear with those rows of the weights, bias and multipliers (cut at
    compile time); its result is already [tokens, D], the head's block of the transposed tensor.
    The parts are concatenated along the outermost axis, which the memory planner does in place,
    so no data moves: the same MACs in one kernel call per head. The blocks are found from where
    each element of the chain's result comes from, so any reshape / transpose chain that keeps
    each head's D channels together qualifies. A split that also transposes each head ([heads, D,
    tokens]: HuggingFace's K^T) becomes the parts' concat and one transpose of it, which the batch
    matmul reading K^T takes K from. int8 (matmul) and int16 (1x1 conv) linears. Parts
    narrower than four channels are not made (the kernels' inner loop takes four), nor is a
    transpose that only the model's output reads split (that is the output layout).
    """

    NAME = "mcu-heads-from-linears"

    def run(self, module: ir.Operation) -> None:
        clear_resource_cache()
        with module.context:
            patterns = RewritePatternSet()
            patterns.add(tosa.TransposeOp, split_heads)
            apply_patterns(module, patterns)
