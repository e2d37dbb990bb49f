"""Activation range equalization across layer -> ReLU -> layers.

One int8 scale covers every channel of an activation (CMSIS-NN quantizes activations per
tensor), so where a layer's output channels span very different ranges the small channels get a
few levels only. ReLU is positively homogeneous, relu(y / s) = relu(y) / s for s > 0: dividing
output channel i of the first layer (weights and bias) by s_i and multiplying what the second
layer reads of channel i by s_i leaves the function unchanged while channel i's range becomes
r_i / s_i. With s_i = sqrt(r_i / r_max), r_i the channel's largest value on the calibration data,
the ranges move halfway (in log) toward the largest: small channels gain resolution, and the
second layer's weights (quantized per output channel) change by at most that factor (the
cross-layer equalization of Nagel et al. 2019, on the ranges the calibration measures).

A clipped ReLU (ReLU6: hardtanh(0, 6)) is homogeneous below its clip: a channel that never
reaches the clip on the calibration data keeps every calibrated value unclipped after scaling,
since r_i / s_i = sqrt(r_i * r_max) <= r_max. A channel scaled up clips earlier than before on
values beyond its calibrated range, as an int8 range clips values beyond the calibration's.

Scaled: the output of a conv or linear that only the activation reads (weights and bias its own),
when every reader of the activation takes the factors back: conv (dense, or depthwise) and linear
inputs, directly or through per-channel ops (pools, a spatial mean, the flatten of a pooled value
as in a classifier's head, the product with a squeeze-excitation gate computed by such layers).
"""

from __future__ import annotations

import math
from copy import deepcopy
from dataclasses import dataclass, field

import torch
from torch.fx import GraphModule, Interpreter, Node

from ..graph.nodes import fetch_attr

aten = torch.ops.aten
LAYERS = (aten.conv1d.default, aten.conv2d.default, aten.linear.default)
RELUS = (aten.relu.default, aten.relu_.default)
CLIPPED = {aten.hardtanh.default: ("min_val", "max_val"), aten.hardtanh_.default: ("min_val", "max_val"),
           aten.clamp.default: ("min", "max"), aten.clamp_.default: ("min", "max")}
SMALLEST = 2.0 ** -8        # the largest factor a channel is scaled up by


def _const(node) -> bool:
    return isinstance(node, Node) and node.op == "get_attr" and len(node.users) == 1


def _arg(node: Node, i: int, name: str, default):
    return node.args[i] if len(node.args) > i else node.kwargs.get(name, default)


def _clip(act: Node):
    """The activation's upper clip (None for a ReLU), or False when it is not a ReLU at 0."""
    if act.target in RELUS:
        return None
    if act.target is aten.relu6.default:
        return 6.0
    if act.target in CLIPPED:
        low, high = CLIPPED[act.target]
        low, high = _arg(act, 1, low, None), _arg(act, 2, high, None)
        if isinstance(low, (int, float)) and low == 0 and (high is None or isinstance(high, (int, float))):
            return None if high is None else float(high)
    return False


# Per-channel ops that commute with a positive per-channel scale, between the activation and the
# layers reading it: pools, a mean over the spatial dims, the flatten of a pooled [N, C, 1, 1], and
# a product with a per-channel gate that does not depend on the scaled values (squeeze-excitation:
# its gate is computed by layers that take the factors back).
POOLS = {aten.avg_pool2d.default, aten.adaptive_avg_pool2d.default, aten.max_pool2d.default, aten.mean.dim}
VIEWS = {aten.flatten.using_ints, aten.view.default, aten.reshape.default}
MULS = {aten.mul.Tensor}


def _shape(node) -> tuple:
    val = node.meta.get("val")
    return tuple(val.shape) if isinstance(val, torch.Tensor) else ()


def _through(user: Node, node: Node) -> bool:
    """Whether `user` computes each channel of `node` (NCHW) on its own, so the scale carries."""
    shape, before = _shape(user), _shape(node)
    if len(shape) < 2 or shape[:2] != before[:2] or user.args[0] is not node and user.target not in MULS:
        return False
    if user.target in POOLS:
        return user.target is not aten.mean.dim or bool(user.args[1])
    if user.target in VIEWS:
        return math.prod(before[2:]) == math.prod(shape[2:])     # no position moved into the channel dim
    if user.target in MULS and len(user.args) == 2 and all(isinstance(a, Node) for a in user.args):
        gate = _shape(user.args[1] if user.args[0] is node else user.args[0])
        return shape == before and len(gate) == len(before) and all(d == 1 for d in gate[2:])
    return False


ADDS = {aten.add.Tensor}


@dataclass
class _Group:
    """Layers whose output channels share one set of factors: `writers` divide their output
    channels by them, `readers` multiply their input channels; `scaled` are the values in between."""
    writers: list
    readers: list = field(default_factory=list)
    scaled: list = field(default_factory=list)


def _group(start: Node) -> _Group | None:
    """Where the scale of layer `start`'s output channels reaches: through ReLUs, per-channel ops
    and residual adds (whose other operand is another layer's output, a writer too) to the layers
    that read the channels; None when anything else reads a scaled value (an output, a norm, ...)."""
    channels_last = start.target is aten.linear.default
    group = _Group([start], scaled=[start])
    todo = [start]
    while todo:
        node = todo.pop()
        for user in node.users:
            if user.target in LAYERS and user.args[0] is node:     # a reader (it may write the group too)
                if (user.target is aten.linear.default) != (channels_last or len(_shape(node)) == 2):
                    return None
                if user not in group.readers:
                    group.readers.append(user)
                continue
            if user in group.scaled:
                continue
            if _clip(user) is not False and user.args[0] is node or not channels_last and _through(user, node):
                pass
            elif user.target in ADDS and len(user.args) == 2 and not user.kwargs and \
                    all(isinstance(a, Node) for a in user.args):
                other = user.args[1] if user.args[0] is node else user.args[0]
                if other not in group.scaled:
                    if other.target not in LAYERS:
                        return None
                    group.writers.append(other)
                    group.scaled.append(other)
                    todo.append(other)
            else:
                return None
            group.scaled.append(user)
            todo.append(user)
    for mul in (n for n in group.scaled if n.target in MULS):
        if all(a in group.scaled for a in mul.args):
            return None         # x * x: not one factor
    return group if group.readers else None


def _groups(gm: GraphModule) -> list[_Group]:
    """The groups of layers to equalize, each writer in one."""
    out, claimed = [], set()
    for start in gm.graph.nodes:
        if start.op != "call_function" or start.target not in LAYERS or start in claimed:
            continue
        group = _group(start)
        if group is None or claimed.intersection(group.writers):
            continue
        claimed.update(group.writers)
        channels = _out_channels(gm, start)
        if channels and all(_out_channels(gm, w) == channels for w in group.writers) and \
                all(_reads_channels(gm, layer, channels) for layer in group.readers):
            out.append(group)
    return out


def _out_channels(gm, layer: Node) -> int | None:
    """Its output channels, with weights and bias of its own (None otherwise)."""
    bias = _arg(layer, 2, "bias", None)
    if not _const(layer.args[1]) or bias is not None and not _const(bias):
        return None
    return int(fetch_attr(gm, layer.args[1].target).shape[0])


def _reads_channels(gm, layer: Node, channels: int) -> bool:
    """A dense layer, or a depthwise conv (a channel multiplier allowed), with weights of its own."""
    if not _const(layer.args[1]):
        return False
    w = fetch_attr(gm, layer.args[1].target)
    groups = 1 if layer.target is aten.linear.default else _arg(layer, 6, "groups", 1)
    return w.shape[1] == channels if groups == 1 else groups == channels and w.shape[1] == 1


class _ChannelMax(Interpreter):
    """The largest magnitude of each channel of `nodes` (channel axis per node) on the samples."""

    def __init__(self, gm, axes: dict):
        super().__init__(gm)
        self.axes, self.max = axes, {}

    def run_node(self, n):
        out = super().run_node(n)
        if n in self.axes:
            channel = self.axes[n] % out.dim()
            m = out.detach().abs().amax(dim=[d for d in range(out.dim()) if d != channel])
            self.max[n] = m if n not in self.max else torch.maximum(self.max[n], m)
        return out


def _quantized(node: Node, group: _Group) -> bool:
    """Whether the value gets an int8 range of its own: not a layer's output that only an
    activation reads (the two are one quantized op)."""
    return not (node in group.writers and all(_clip(u) is not False for u in node.users))


def equalized(gm: GraphModule, samples) -> tuple[GraphModule, dict] | None:
    """A copy of `gm` with every group scaled (see above) from the channel ranges on `samples`,
    and node name -> (factors, channel axis) that take the copy's values of the scaled nodes back
    to `gm`'s (value * factor); None when `gm` has nothing to scale."""
    groups = _groups(gm)
    if not groups:
        return None
    axes = {n: -1 if g.writers[0].target is aten.linear.default else 1 for g in groups for n in g.scaled}
    probe = _ChannelMax(gm, axes)
    with torch.no_grad():
        for sample in samples:
            probe.run(*sample)
    copy = deepcopy(gm)
    factors = {}
    for group in groups:
        ranges = [probe.max[n] for n in group.scaled if _quantized(n, group) and n in probe.max]
        if not ranges:
            continue
        ranges = torch.stack(ranges).amax(0).double()
        top = float(ranges.max())
        if top <= 0:
            continue
        scale = torch.sqrt(ranges / top).clamp(min=SMALLEST)
        for node in group.scaled:
            clip = _clip(node)
            if clip:
                # Below its clip a clipped ReLU is a ReLU: a channel whose calibrated values would
                # pass the clip once scaled keeps its scale.
                scale = torch.where(probe.max[node].double() / scale > clip * (1 - 1e-6), torch.ones_like(scale),
                                    scale)
        with torch.no_grad():
            for layer in group.writers:
                w = fetch_attr(copy, layer.args[1].target)
                _replace(copy, layer.args[1].target, w.double() / scale.reshape((-1,) + (1,) * (w.dim() - 1)))
                bias = _arg(layer, 2, "bias", None)
                if bias is not None:
                    _replace(copy, bias.target, fetch_attr(copy, bias.target).double() / scale)
            for layer in group.readers:
                w = fetch_attr(copy, layer.args[1].target)
                if layer.target is aten.linear.default or _arg(layer, 6, "groups", 1) == 1:
                    read = scale.reshape((1, -1) + (1,) * (w.dim() - 2))
                else:       # depthwise: output channel o reads input channel o // multiplier
                    read = scale.repeat_interleave(w.shape[0] // scale.numel()).reshape((-1,) + (1,) * (w.dim() - 1))
                _replace(copy, layer.args[1].target, w.double() * read)
        for node in group.scaled:
            factors[node.name] = (scale.numpy(), axes[node])
    return (copy, factors) if factors else None


def _replace(gm: GraphModule, target: str, value: torch.Tensor) -> None:
    """Sets the tensor `target` names to `value` (a new tensor: the old one may be the user's)."""
    path, _, name = target.rpartition(".")
    owner = gm.get_submodule(path) if path else gm
    old = getattr(owner, name)
    value = value.to(old.dtype)
    setattr(owner, name, torch.nn.Parameter(value, requires_grad=False) if isinstance(old, torch.nn.Parameter)
            else value)
