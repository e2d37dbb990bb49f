"""Means whose result spans a small part of their input's range get an int8 scale of their own.

An average pool keeps its input's quantization parameters: CMSIS-NN's arm_avgpool_s8 divides the
integer sum by the count and rounds it at the input's step. Where the values averaged are large
and of either sign and their mean small (a transformer's pooling over tokens after a LayerNorm, a
squeeze-excitation over a zero-centred feature map) that step is coarse for the mean: half a step
of the input is most of a small mean, and the classifier reading it loses 3-4 dB (HuggingFace's
Swin pooler). Such a mean gets its own range, measured on the calibration data, and is computed
as a sum in int32 rescaled once to its own step (a reduction kernel, pool.py's _reduce_mean).
Means over a whole extent only (a global pool, x.mean(dims)): their result has more precision
than their input; a 3x3 average has little more. Chosen where the mean's range is at most a
quarter of its input's: two bits or more of the mean's resolution regained; elsewhere the pool
stays on CMSIS-NN's kernel with its input's parameters.
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule, Node

from .observed_ranges import observed_ranges, span

aten = torch.ops.aten
SHRINK = 4.0        # the mean's range at most 1 / SHRINK of its input's
_ADAPTIVE = {aten.adaptive_avg_pool1d.default: 1, aten.adaptive_avg_pool2d.default: 2}


def averages_everything(node: Node) -> bool:
    """A mean over whole dims: x.mean(dims), or an adaptive average pool to one cell."""
    if node.op != "call_function":
        return False
    if node.target is aten.mean.dim:
        return isinstance(node.args[0], Node) and len(node.args) > 1 and isinstance(node.args[1], (list, tuple))
    if node.target in _ADAPTIVE:
        size = node.args[1]
        size = list(size) if isinstance(size, (list, tuple)) else [size]
        return all(s == 1 for s in size)
    return False


def shrinking_means(gm: GraphModule, samples) -> frozenset[str]:
    """Names of the means over whole dims whose range on `samples` is at most 1 / SHRINK of their input's."""
    means = [n for n in gm.graph.nodes if averages_everything(n)
             and isinstance(n.meta.get("val"), torch.Tensor) and n.meta["val"].dtype.is_floating_point]
    if not means:
        return frozenset()
    ranges = observed_ranges(gm, samples, means + [n.args[0] for n in means])
    return frozenset(n.name for n in means if n in ranges and n.args[0] in ranges and
                     span(*ranges[n]) * SHRINK <= span(*ranges[n.args[0]]))
