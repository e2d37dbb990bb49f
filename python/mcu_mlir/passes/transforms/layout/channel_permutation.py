"""Channel permutations folded into the weights of the convolutions that read them.

A chain of reshapes and transposes whose only effect is to reorder the channels of an NHWC tensor
(the channel shuffle of ShuffleNet: view as [.., groups, C / groups], swap, flatten) is a full copy
at run time, and no choice of layout removes it. A convolution reading it computes the same as
one reading the unshuffled tensor with its weights' input channels permuted, which costs nothing
at run time: the weights are constants. A depthwise convolution pairs its input and output
channels, so one reading the shuffled tensor runs on the unshuffled one with its per-channel
weights, bias and requantization permuted, and its result comes out unshuffled: the convolution
reading that result takes the permutation into its weights instead.
"""

from __future__ import annotations

import numpy as np

from ...._mlir import ir, tosa
from ....ir.constants import ConstantData, make_constant
from .roles import is_constant
from ....ir import roles
from ....ir.ops import isa
from ....ir.values import is_static_tensor, only_user

# Ops whose operand 0 is an NHWC input and operand 1 constant weights with input channels last
# (OHWI); depthwise weights pair input and output channels, so they do not qualify.
_CONSUMERS = (tosa.Conv2DOp,)


def _view_chain(value) -> list:
    """The reshape / transpose ops producing `value`, nearest last, up to the first other op."""
    chain = []
    while True:
        owner = value.owner
        if isinstance(owner, ir.Block) or not isa(owner, *roles.VIEWS):
            return chain[::-1]
        chain.append(owner)
        value = owner.operands[0]


def chain_index(src_shape, chain) -> np.ndarray:
    """For each element of the chain's result, the flat index of the element of its source (of
    `src_shape`) it holds: what a chain of reshapes and transposes does, as data."""
    idx = np.arange(int(np.prod(src_shape, dtype=np.int64))).reshape(src_shape)
    for op in chain:
        if isa(op, tosa.TransposeOp):
            idx = idx.transpose(tuple(op.attributes["perms"]))
        else:
            idx = idx.reshape(tuple(ir.RankedTensorType(op.results[0].type).shape))
    return idx


def channel_gather(src_shape, chain) -> np.ndarray | None:
    """`perm` with out[..., c] == src[..., perm[c]] if the chain only reorders the last axis of a
    tensor of `src_shape` (and gives back that shape); None otherwise."""
    idx = chain_index(src_shape, chain)
    if idx.shape != tuple(src_shape):
        return None
    c = src_shape[-1]
    rows = idx.reshape(-1, c) - (np.arange(idx.size // c) * c)[:, None]
    perm = rows[0]
    if not (rows == perm).all() or not np.array_equal(np.sort(perm), np.arange(c)):
        return None
    return perm


def _gather_source(chain, channels: int):
    """(source value, perm) of the longest channel-gather tail of a view chain over `channels`
    channels (the farthest source first), or None."""
    for start in range(len(chain)):
        links = chain[start:]
        src = links[0].operands[0]
        if not any(isa(o, tosa.TransposeOp) for o in links) or not is_static_tensor(src):
            continue
        shape = tuple(ir.RankedTensorType(src.type).shape)
        if not shape or shape[-1] != channels:
            continue
        perm = channel_gather(shape, links)
        if perm is not None:
            return src, perm
    return None


def _permuted_constant(op, index: int, consts: ConstantData, order, axis: int = -1) -> bool:
    """Operand `index` of `op` replaced by its constant taken in `order` along `axis`."""
    data = consts.array(op.operands[index])
    if data is None:
        return False
    with ir.InsertionPoint(op), op.location as loc:
        op.operands[index] = make_constant(np.ascontiguousarray(np.take(data, order, axis=axis)),
                                           op.operands[index].type, loc=loc)
    return True


def fold_permutations_through_depthwise(fn, consts: ConstantData) -> int:
    """A depthwise conv (channel multiplier 1) fed by a channel-reordering view chain, then its
    requantization (and a clamp), read only by convolutions: the depthwise and its rescale run on
    the chain's source with their per-channel constants permuted, and each reading conv takes the
    permutation into its weights' input channels. Returns how many depthwise convs were rewired."""
    folded = 0
    for dw in list(fn.regions[0].blocks[0].operations):
        if not isa(dw, tosa.DepthwiseConv2DOp):
            continue
        weights, bias = consts.array(dw.operands[1]), consts.array(dw.operands[2])
        if weights is None or bias is None or weights.shape[-1] != 1 or bias.size != weights.shape[-2]:
            continue
        found = _gather_source(_view_chain(dw.operands[0]), weights.shape[-2])
        if found is None:
            continue
        src, perm = found
        rescale = only_user(dw.results[0])
        if rescale is None or not isa(rescale, tosa.RescaleOp):
            continue
        tail = rescale
        nxt = only_user(tail.results[0])
        if nxt is not None and isa(nxt, tosa.ClampOp):
            tail = nxt
        readers = [u.owner for u in tail.results[0].uses]
        if not readers or any(not isa(r, *_CONSUMERS) or r.operands[0] != tail.results[0]
                              or consts.array(r.operands[1]) is None for r in readers):
            continue
        mult, shift = consts.array(rescale.operands[1]), consts.array(rescale.operands[2])
        if mult is None or shift is None:
            continue
        inverse = np.argsort(perm)
        _permuted_constant(dw, 1, consts, inverse, axis=-2)
        _permuted_constant(dw, 2, consts, inverse, axis=0)
        if mult.size > 1:
            _permuted_constant(rescale, 1, consts, inverse, axis=0)
            _permuted_constant(rescale, 2, consts, inverse, axis=0)
        dw.operands[0] = src
        # The depthwise result is now the unshuffled one (channel perm[c] holds what c held), so
        # each reader's weights take it as they would from a view chain.
        for reader in readers:
            _permuted_constant(reader, 1, consts, inverse, axis=-1)
        folded += 1
    return folded


def fold_channel_permutations(fn, consts: ConstantData) -> int:
    """Rewires each conv fed by a channel-reordering view chain to the chain's source, with its
    weights' input channels permuted to match; returns how many convs were rewired. The views and
    weights left unused are for simplify_reshapes to drop."""
    folded = 0
    for op in list(fn.regions[0].blocks[0].operations):
        if not isa(op, *_CONSUMERS) or not is_constant(op.operands[1]):
            continue
        weights = consts.array(op.operands[1])
        found = None if weights is None else _gather_source(_view_chain(op.operands[0]), weights.shape[-1])
        if found is None:
            continue
        src, perm = found
        _permuted_constant(op, 1, consts, np.argsort(perm), axis=-1)
        op.operands[0] = src
        folded += 1
    return folded
