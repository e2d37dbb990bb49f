"""A multiply by a per-channel constant (a layer scale, an Affine) as a depthwise 1x1 convolution.

PoolFormer, ConvNeXt, CaiT, ResMLP and the MetaFormers scale each channel by a learned constant
gamma_c where no conv or linear layer precedes it to take the scale into its weights
(reparameterize.py does that where one does). As an elementwise multiply the constant is quantized
per tensor, so a channel whose gamma is small keeps few of its 8 bits, and the multiply runs as
portable ops. As a depthwise 1x1 convolution the constant is a weight quantized per channel:
each weight is exactly +-127, the channel's scale |gamma_c| / 127 carries the value into the
kernel's per-channel multiplier (31 bits), and it runs on CMSIS-NN's depthwise kernel. An add of a
constant after it stays an add: as the convolution's bias, beta / (input scale x |gamma| / 127)
overflowed int32 in int16 models (ConvNeXt-V2's GRN: 46.0 -> 25.5 dB).

Channels on axis 1 of a 3-D or 4-D tensor (NCL, NCHW) are the convolution's own where the tensor is
a feature map (a conv, pool or channel norm computed it: the NHWC layout folds the transposes
around the convolution); channels on the last axis (tokens [B, N, C], channels-last code) are
viewed as [rows, C, 1] (a reshape, no copy). A scale on axis 1 of another tensor (attention's
per-head logit scale on [B, heads, N, N]) stays a multiply: it would need data-moving transposes.
"""

from __future__ import annotations

import torch

from ..graph.constant_folding import constant_node, constant_value
from ..graph.nodes import recompiled

aten = torch.ops.aten
MULS = (aten.mul.Tensor, aten.mul_.Tensor)

# Ops whose output is a channels-first feature map (NCHW / NCL).
_FEATURE_MAPS = {aten.conv1d.default, aten.conv2d.default, aten.conv1d.padding, aten.conv2d.padding,
                 aten.conv_transpose1d.default, aten.conv_transpose2d.input, aten.avg_pool1d.default,
                 aten.avg_pool2d.default, aten.max_pool1d.default, aten.max_pool2d.default,
                 aten.adaptive_avg_pool1d.default, aten.adaptive_avg_pool2d.default, aten.group_norm.default,
                 aten.batch_norm.default, aten.upsample_nearest2d.vec, aten.upsample_bilinear2d.vec,
                 aten.pixel_shuffle.default, aten.pixel_unshuffle.default}
_SEARCH_DEPTH = 6


def _feature_map(x) -> bool:
    """Whether `x` comes from a feature-map op within a few ops of the same shape back."""
    shape, todo, seen = tuple(x.meta["val"].shape), [(x, 0)], set()
    while todo:
        node, depth = todo.pop()
        if node in seen or node.op != "call_function" or depth > _SEARCH_DEPTH:
            continue
        seen.add(node)
        if node.target in _FEATURE_MAPS:
            return True
        for a in node.all_input_nodes:
            val = _float_value(a)
            if val is not None and tuple(val.shape) == shape:
                todo.append((a, depth + 1))
    return False


def _float_value(node):
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val if isinstance(val, torch.Tensor) and val.dtype.is_floating_point else None


def _channel_axis(const: torch.Tensor, shape: tuple) -> int | None:
    """The one axis (not the batch) of `shape` along which `const`, broadcast to it, varies, or None."""
    rank = len(shape)
    if const.dim() > rank or const.numel() < 2:
        return None
    padded = (1,) * (rank - const.dim()) + tuple(const.shape)
    axes = [i for i, d in enumerate(padded) if d != 1]
    if len(axes) != 1 or axes[0] == 0 or padded[axes[0]] != shape[axes[0]]:
        return None
    return axes[0]


def _constant(gm, node):
    """The float tensor a get_attr node holds, or None."""
    value = constant_value(gm, node)
    return value if value is not None and value.dtype.is_floating_point else None


def _scale_of(gm, node):
    """(x, gamma, axis) of `x * gamma` with gamma a per-channel constant and x a float activation
    of the product's shape, or None."""
    if node.op != "call_function" or node.target not in MULS or len(node.args) != 2 or node.kwargs:
        return None
    out = _float_value(node)
    if out is None:
        return None
    for x, c in (node.args, reversed(node.args)):
        gamma = _constant(gm, c)
        val = _float_value(x)
        if gamma is None or val is None or getattr(x, "op", None) == "get_attr" or val.shape != out.shape:
            continue
        if node.target is aten.mul_.Tensor and (x is not node.args[0] or len(x.users) != 1):
            continue    # x updated in place: another reader would see the product
        axis = _channel_axis(gamma, tuple(out.shape))
        if axis is not None and (axis == out.dim() - 1 or axis == 1 and out.dim() in (3, 4) and _feature_map(x)):
            return x, gamma.reshape(-1).to(torch.float32), axis
    return None


def _into_linear(gm, node, x, gamma, axis: int) -> bool:
    """`linear(v, W, b) * gamma` over the output features, the linear read only by it: W and b
    scaled (the product is that linear)."""
    if x.target is not aten.linear.default or len(x.users) != 1 or axis != node.meta["val"].dim() - 1:
        return False
    has_bias = len(x.args) > 2 and x.args[2] is not None
    weight, bias = _constant(gm, x.args[1]), _constant(gm, x.args[2]) if has_bias else None
    if weight is None or (has_bias and bias is None) or weight.shape[0] != gamma.numel():
        return False
    if bias is None:
        bias = torch.zeros(weight.shape[0], dtype=weight.dtype)
    w = constant_node(gm, x, f"_mcu_scaled_{x.name}_weight", weight * gamma.to(weight.dtype)[:, None])
    b = constant_node(gm, x, f"_mcu_scaled_{x.name}_bias", bias * gamma.to(bias.dtype))
    x.args = (x.args[0], w, b)
    node.replace_all_uses_with(x)
    gm.graph.erase_node(node)
    return True


def _replace(gm, node, x, gamma, axis: int) -> None:
    if _into_linear(gm, node, x, gamma, axis):
        return
    graph = gm.graph
    val = node.meta["val"]
    shape, channels = tuple(val.shape), val.shape[axis]
    keep = {k: node.meta[k] for k in ("stack_trace", "nn_module_stack", "source_fn_stack") if k in node.meta}
    conv2d = axis == 1 and len(shape) == 4
    weight = constant_node(gm, node, f"_mcu_channel_scale_{node.name}",
                           gamma.reshape((channels, 1, 1, 1) if conv2d else (channels, 1, 1)))
    with graph.inserting_before(node):
        source = x
        if axis != 1 or len(shape) not in (3, 4):
            source = graph.call_function(aten.reshape.default, (x, [-1, channels, 1]))
            source.meta.update(keep, val=val.reshape(-1, channels, 1))
        target = aten.conv2d.default if conv2d else aten.conv1d.default
        conv = graph.call_function(target, (source, weight, None, [1] * (2 if conv2d else 1),
                                             [0] * (2 if conv2d else 1), [1] * (2 if conv2d else 1), channels))
        conv.meta.update(keep, val=source.meta["val"] if source is not x else val)
        result = conv
        if source is not x:
            result = graph.call_function(aten.reshape.default, (conv, list(shape)))
            result.meta.update(keep, val=val)
    node.replace_all_uses_with(result)
    graph.erase_node(node)


def channel_scales_as_depthwise(gm) -> int:
    """Rewrites every multiply by a per-channel constant as a depthwise 1x1 convolution, or into the
    linear layer before it; returns how many."""
    done = 0
    for node in list(gm.graph.nodes):
        if getattr(node, "_erased", False):
            continue
        found = _scale_of(gm, node)
        if found is not None:
            _replace(gm, node, *found)
            done += 1
    return recompiled(gm, done)
