"""mcu-split-sliced-convs: channel slices of a conv's result as separate convs, no copy left."""

from __future__ import annotations

import dataclasses

import numpy as np

from .._mlir import ir, tosa
from .base import ModulePass
from .pattern_driver import RewritePatternSet, apply_patterns
from ..ir.resources import clear_resource_cache
from .conversion.common import (const_array, const_ints, elem, make_const, op_name,
                                producer, read_rescale, shape, users)


# Per-element ops that commute with a channel slice (per-tensor parameters).
_PER_ELEMENT = (tosa.TableOp, tosa.ClampOp)


def _channel_cut(slice_op):
    """(first channel, count) of a slice keeping N, H, W, else None."""
    start = const_ints(slice_op.operands[1])
    src, out = shape(slice_op.operands[0]), shape(slice_op.results[0])
    if start is None or len(src) != 4 or any(start[:3]) or src[:3] != out[:3]:
        return None
    return start[3], out[3]


def _only_user(value):
    us = users(value)
    return us[0] if len(us) == 1 and not isinstance(us[0], ir.Block) else None


def _copy(op, operands, result_type, before):
    attrs = {name: op.attributes[name] for name in op.attributes}
    return ir.Operation.create(op_name(op), results=[result_type], operands=operands,
                               attributes=attrs, loc=op.location, ip=ir.InsertionPoint(before))


def _with_channels(value, channels: int):
    t = ir.RankedTensorType(value.type)
    return ir.RankedTensorType.get(list(t.shape[:-1]) + [channels], t.element_type)


def _feeds_groups(slices) -> bool:
    """Whether two or more slices each feed a conv2d of the same weight shape: the groups of a
    grouped conv, which conv.py recomposes into one call on the whole tensor (worth more)."""
    weight_shapes = []
    for sl in slices:
        v = sl.results[0]
        user = _only_user(v)
        if user is not None and isinstance(user, tosa.ReshapeOp):
            user = _only_user(user.results[0])
        if user is not None and isinstance(user, tosa.Conv2DOp):
            weight_shapes.append(tuple(shape(user.operands[1])))
    return any(weight_shapes.count(w) >= 2 for w in weight_shapes)


def _split_one(value, rewriter) -> bool:
    """Splits the chain producing `value` when every user is a channel slice."""
    slices = users(value)
    if not slices or any(not isinstance(s, tosa.SliceOp) for s in slices):
        return False
    cuts = [_channel_cut(s) for s in slices]
    if any(c is None for c in cuts):
        return False
    if _feeds_groups(slices):
        return False
    chain, v = [], value
    while True:
        op = producer(v)
        if op is None:
            return False
        if isinstance(op, _PER_ELEMENT) and elem(v) == "i8":
            chain.append(op)
            v = op.operands[0]
            if _only_user(v) is None:
                return False
            continue
        break
    rescale = producer(v)
    rs = read_rescale(rescale)
    if rs is None or elem(v) != "i8" or _only_user(rescale.operands[0]) is None:
        return False
    conv = producer(rescale.operands[0])
    if conv is None or not isinstance(conv, tosa.Conv2DOp) or elem(conv.operands[0]) != "i8":
        return False
    cut_input = producer(conv.operands[0])
    if cut_input is not None and isinstance(cut_input, (tosa.SliceOp, tosa.ReshapeOp)):
        return False  # a group of a grouped conv: recomposing it (conv.py) is worth more
    weights, bias = const_array(conv.operands[1]), const_array(conv.operands[2])
    if weights is None or bias is None or bias.size != weights.shape[0]:
        return False
    chain.reverse()  # in data order, after the rescale
    for sl, (c0, n) in zip(slices, cuts):
        loc = sl.location
        w = make_const(np.ascontiguousarray(weights[c0:c0 + n]), sl, loc)
        b = make_const(np.ascontiguousarray(np.asarray(bias).reshape(-1)[c0:c0 + n]), sl, loc)
        acc = _copy(conv, [conv.operands[0], w, b, conv.operands[3], conv.operands[4]],
                    _with_channels(conv.results[0], n), sl).results[0]
        rs_operands = list(rescale.operands)
        rs_operands[0] = acc
        if rs.per_channel:
            for index, vals in ((1, np.asarray(const_array(rescale.operands[1]))),
                                (2, np.asarray(const_array(rescale.operands[2])))):
                rs_operands[index] = make_const(np.ascontiguousarray(vals.reshape(-1)[c0:c0 + n]), sl, loc)
        out = _copy(rescale, rs_operands, _with_channels(rescale.results[0], n), sl).results[0]
        for op in chain:
            out = _copy(op, [out] + list(op.operands)[1:], _with_channels(op.results[0], n), sl).results[0]
        sl.results[0].replace_all_uses_with(out)
    for op in [*slices, *reversed(chain), rescale, conv]:  # users first
        rewriter.erase_op(op)
    return True


def split_sliced(op, rewriter):
    """Pattern on tosa.slice: splits the chain its input comes from (falsy when it did)."""
    return not _split_one(op.operands[0], rewriter)


@dataclasses.dataclass(frozen=True)
class SplitSlicedConvs(ModulePass):
    """Splits a conv read only through channel slices into one conv per slice.

    A conv2d + rescale [+ clamp / table ...] whose result is read only through channel slices
    (e.g. YOLO's C3k2 split of one 1x1 conv into two halves) becomes one such chain per slice,
    computing just that slice's output channels (weights, bias and per-channel multipliers cut at
    compile time). The MACs are the same or fewer, and the NHWC channel copies are gone. Slices
    that feed same-shaped convs (a grouped conv, which the conversion recomposes) are left alone.
    """

    NAME = "mcu-split-sliced-convs"

    def run(self, module: ir.Operation) -> None:
        clear_resource_cache()
        patterns = RewritePatternSet()
        patterns.add(tosa.SliceOp, split_sliced)
        apply_patterns(module, patterns)

