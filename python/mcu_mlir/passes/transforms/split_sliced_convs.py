"""mcu-split-sliced-convs: channel slices of a conv's result as separate convs, no copy left."""

from __future__ import annotations

import dataclasses

from ..._mlir import ir, tosa
from ..base import ModulePass
from ..pattern_driver import RewritePatternSet, apply_patterns
from ...ir.resources import clear_resource_cache
from .channel_blocks import build_block, erase_layer, read_layer
from ..conversion.common import const_ints
from ...ir.values import only_user, producer, shape, users


def _channel_cut(slice_op):
    """(first channel, count) of a slice keeping N, H, W, else None."""
    start = const_ints(slice_op.operands[1])
    src, out = shape(slice_op.operands[0]), shape(slice_op.results[0])
    if start is None or len(src) != 4 or any(start[:3]) or src[:3] != out[:3]:
        return None
    return start[3], out[3]


def _feeds_groups(slices) -> bool:
    """Whether two or more slices each feed a conv2d of the same weight shape: the groups of a
    grouped conv, which conv.py recomposes into one call on the whole tensor (worth more)."""
    weight_shapes = []
    for sl in slices:
        v = sl.results[0]
        user = only_user(v)
        if user is not None and isinstance(user, tosa.ReshapeOp):
            user = only_user(user.results[0])
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
    layer = read_layer(value)
    if layer is None:
        return False
    cut_input = producer(layer.core.operands[0])
    if cut_input is not None and isinstance(cut_input, (tosa.SliceOp, tosa.ReshapeOp)):
        return False  # a group of a grouped conv: recomposing it (conv.py) is worth more
    for sl, (c0, n) in zip(slices, cuts):
        sl.results[0].replace_all_uses_with(build_block(layer, c0, n, sl, sl.location))
    for sl in slices:
        rewriter.erase_op(sl)
    erase_layer(layer, rewriter)
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

