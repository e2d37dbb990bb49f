"""Activation range equalization across layer -> ReLU -> layer.

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

Pairs: a conv or linear that only the activation reads; the activation read only by one conv
(dense, or depthwise) or linear as its input, a conv's through pools, a spatial mean and the
flatten of a pooled value (a classifier's head); weights and biases that no other op uses.
"""

from __future__ import annotations

import math
from copy import deepcopy

import torch
from torch.fx import GraphModule, Interpreter, Node

from .lowering.values import fetch_attr

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
# layer reading it (a classifier's global pool and flatten).
POOLS = {aten.avg_pool2d.default, aten.adaptive_avg_pool2d.default, aten.max_pool2d.default, aten.mean.dim}
VIEWS = {aten.flatten.using_ints, aten.view.default, aten.reshape.default}


def _shape(node) -> tuple:
    val = node.meta.get("val")
    return tuple(val.shape) if isinstance(val, torch.Tensor) else ()


def _reader(act: Node, channels: int, channels_last: bool) -> Node | None:
    """The one layer that reads the activation's channels as its input channels: directly, or (a
    conv's NCHW channels) through pools, a mean over the spatial dims and the flatten of a pooled
    [N, C, 1, 1] to the [N, C] a linear reads."""
    node = act
    while len(node.users) == 1:
        user = next(iter(node.users))
        if user.args[0] is not node:
            return None
        shape = _shape(user)
        if user.target in LAYERS:
            if user.target is aten.linear.default:
                fits = shape and (channels_last or node is not act and len(_shape(node)) == 2)
            else:
                fits = not channels_last
            return user if fits else None
        if channels_last or user.target not in POOLS | VIEWS or len(shape) < 2 or shape[:2] != _shape(node)[:2]:
            return None
        if user.target in VIEWS and math.prod(_shape(node)[2:]) != math.prod(shape[2:]):
            return None     # a view that moves spatial positions into the channel dim
        if user.target is aten.mean.dim and not user.args[1]:
            return None
        node = user
    return None


def _pairs(gm: GraphModule) -> list[tuple[Node, Node, Node]]:
    out = []
    for act in gm.graph.nodes:
        if act.op != "call_function" or _clip(act) is False:
            continue
        first = act.args[0]
        if getattr(first, "target", None) not in LAYERS or len(first.users) != 1 or not _const(first.args[1]):
            continue
        channels = fetch_attr(gm, first.args[1].target).shape[0]
        second = _reader(act, channels, first.target is aten.linear.default)
        bias = _arg(first, 2, "bias", None)
        if second is None or not _const(second.args[1]) or (bias is not None and not _const(bias)):
            continue
        w2 = fetch_attr(gm, second.args[1].target)
        groups = 1 if second.target is aten.linear.default else _arg(second, 6, "groups", 1)
        if groups != 1 and not (groups == channels and w2.shape[1] == 1):
            continue
        out.append((first, act, second))
    return out


class _ChannelMax(Interpreter):
    def __init__(self, gm, nodes):
        super().__init__(gm)
        self.nodes, self.max = set(nodes), {}

    def run_node(self, n):
        out = super().run_node(n)
        if n in self.nodes:
            channel = out.dim() - 1 if n.args[0].target is aten.linear.default else 1
            dims = [d for d in range(out.dim()) if d != channel]
            m = out.detach().amax(dim=dims).clamp(min=0)
            self.max[n] = m if n not in self.max else torch.maximum(self.max[n], m)
        return out


def equalized(gm: GraphModule, samples) -> tuple[GraphModule, dict] | None:
    """A copy of `gm` with every pair scaled (see above) from the channel ranges on `samples`, and
    node name -> (factors, channel axis) that take the copy's values of the scaled nodes back to
    `gm`'s (value * factor); None when `gm` has no pair to scale."""
    pairs = _pairs(gm)
    if not pairs:
        return None
    probe = _ChannelMax(gm, [act for _, act, _ in pairs])
    with torch.no_grad():
        for sample in samples:
            probe.run(*sample)
    copy = deepcopy(gm)
    nodes = {n.name: n for n in copy.graph.nodes}
    factors = {}
    for first, act, second in pairs:
        ranges = probe.max.get(act)
        first, act, second = nodes[first.name], nodes[act.name], nodes[second.name]
        w1 = fetch_attr(copy, first.args[1].target)
        top, clip = (float(ranges.max()), _clip(act)) if ranges is not None else (0.0, None)
        if top <= 0 or ranges.numel() != w1.shape[0]:
            continue
        scale = torch.sqrt(ranges.double() / top).clamp(min=SMALLEST)
        if clip is not None:
            # A channel at the clip keeps its scale: below it the activation is a ReLU.
            scale = torch.where(ranges >= clip, torch.ones_like(scale), scale)
        w2 = fetch_attr(copy, second.args[1].target)
        dense = second.target is aten.linear.default or _arg(second, 6, "groups", 1) == 1
        with torch.no_grad():
            _replace(copy, first.args[1].target, w1.double() / scale.reshape((-1,) + (1,) * (w1.dim() - 1)))
            read = scale.reshape((1, -1) + (1,) * (w2.dim() - 2)) if dense else \
                scale.reshape((-1,) + (1,) * (w2.dim() - 1))
            _replace(copy, second.args[1].target, w2.double() * read)
            bias = _arg(first, 2, "bias", None)
            if bias is not None:
                _replace(copy, bias.target, fetch_attr(copy, bias.target).double() / scale)
        axis = -1 if first.target is aten.linear.default else 1
        factors[first.name] = factors[act.name] = (scale.numpy(), axis)
    return (copy, factors) if factors else None


def _replace(gm: GraphModule, target: str, value: torch.Tensor) -> None:
    """Sets the tensor `target` names to `value` (a new tensor: the old one may be the user's)."""
    path, _, name = target.rpartition(".")
    owner = gm.get_submodule(path) if path else gm
    old = getattr(owner, name)
    value = value.to(old.dtype)
    setattr(owner, name, torch.nn.Parameter(value, requires_grad=False) if isinstance(old, torch.nn.Parameter)
            else value)
