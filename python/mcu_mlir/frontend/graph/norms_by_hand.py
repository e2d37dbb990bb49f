"""Normalisations written out by hand in model code, recognised as the one norm op they compute.

Llama, Qwen, Mistral, Gemma and T5 write RMSNorm as x * rsqrt(mean(x ** 2) + eps); ConvNeXt's
reference code and many ports write LayerNorm as (x - mean) / sqrt(var + eps), channels first too.
Quantized op by op, the squares, their mean and its reciprocal root each lose int8 precision. As one
rms_norm / layer_norm (with the model's gain and shift folded in) they run on the integer norm
kernel, whose statistics stay in int32.
"""

from __future__ import annotations

import math

import torch

from .constant_folding import constant_node
from .nodes import recompiled

aten = torch.ops.aten


def _skip_casts(node):
    """`node` with float-to-float casts (`.to(torch.float32)` of a float32 tensor) walked back over."""
    from ..graph.nodes import is_float_cast
    while isinstance(node, torch.fx.Node) and node.op == "call_function" and is_float_cast(node):
        node = node.args[0]
    return node


def _squared(node):
    """x when `node` is x ** 2, x * x or square(x), else None."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function":
        return None
    if node.target is aten.pow.Tensor_Scalar and node.args[1] == 2:
        return _skip_casts(node.args[0])
    if node.target is aten.mul.Tensor and node.args[0] is node.args[1]:
        return _skip_casts(node.args[0])
    if node.target is aten.square.default:
        return _skip_casts(node.args[0])
    return None


def _only_reader(node):
    """(the one op reading `node` past float casts, the value it reads), or None. torch.export's
    dtype assertions read a value without using it and are not counted."""
    from ..graph.nodes import is_float_cast
    while True:
        readers = [u for u in node.users if u.target is not aten._assert_tensor_metadata.default]
        if len(readers) != 1:
            return None
        if not is_float_cast(readers[0]):
            return readers[0], node
        node = readers[0]


def _affine_after(gm, norm, size: int, channels_first: bool, with_bias: bool):
    """(weight, bias, last op, what the multiply reads) of `w * norm + b` read after `norm` (w, b
    constants per normalized element that keep its shape; bias only when `with_bias`); weight / bias
    None where absent, last op `norm` when both are."""
    def term(op, read, target):
        shaped = op.meta.get("val")
        if op.target is not target or len(op.args) != 2 or shaped is None or shaped.shape != norm.meta["val"].shape:
            return None
        return _constant_gain(gm, op.args[1] if op.args[0] is read else op.args[0], size, channels_first)

    weight = bias = None
    last, source = norm, norm
    found = _only_reader(norm)
    if found is not None:
        weight = term(*found, aten.mul.Tensor)
        if weight is not None:
            last, source = found
            found = _only_reader(last) if with_bias else None
            bias = term(*found, aten.add.Tensor) if found is not None else None
            if bias is not None:
                last = found[0]
    return weight, bias, last, source


def rms_norm_by_hand_as_rms_norm(gm: torch.fx.GraphModule) -> int:
    """x * rsqrt(mean(x ** 2, trailing dims, keepdim) + eps), as Llama, Qwen, Mistral, Gemma and T5
    write RMSNorm (with float32 casts between), becomes one rms_norm: one integer kernel that keeps
    the statistics in int32, where the ops as written would each be quantized to int8 (the squares,
    their mean and its reciprocal root lost 8 dB per norm in a 2-layer Llama). Returns how many."""
    graph = gm.graph
    rewritten = 0
    for mul in list(graph.nodes):
        if mul.op != "call_function" or mul.target is not aten.mul.Tensor or len(mul.args) != 2:
            continue
        for x, r in (mul.args, mul.args[::-1]):
            x, r = _skip_casts(x), _skip_casts(r)
            if not (isinstance(r, torch.fx.Node) and r.target is aten.rsqrt.default):
                continue
            total = _skip_casts(r.args[0])
            eps = 0.0
            if isinstance(total, torch.fx.Node) and total.target is aten.add.Tensor \
                    and isinstance(total.args[1], (int, float)):
                total, eps = _skip_casts(total.args[0]), float(total.args[1])
            if not (isinstance(total, torch.fx.Node) and total.target is aten.mean.dim):
                continue
            keepdim = total.args[2] if len(total.args) > 2 else total.kwargs.get("keepdim", False)
            val = x.meta.get("val") if isinstance(x, torch.fx.Node) else None
            if not keepdim or _squared(total.args[0]) is not x or not isinstance(val, torch.Tensor):
                continue
            rank = val.dim()
            dims = sorted(d % rank for d in total.args[1])
            if dims != list(range(rank - len(dims), rank)) or mul.meta.get("val") is None \
                    or tuple(mul.meta["val"].shape) != tuple(val.shape):
                continue
            normalized = [int(d) for d in val.shape[rank - len(dims):]]
            with graph.inserting_before(mul):
                rms = graph.call_function(aten.rms_norm.default, (x, normalized, None, eps))
            rms.meta.update(mul.meta)
            mul.replace_all_uses_with(rms)
            graph.erase_node(mul)
            # weight * rms_norm(x): the kernel's own per-element scale, not a multiply after it.
            weight, _, scale, source = _affine_after(gm, rms, math.prod(normalized), False, with_bias=False)
            if weight is not None:
                rms.args = (x, normalized, constant_node(gm, rms, f"_mcu_weight_{rms.name}",
                                                         weight.reshape(normalized)), eps)
                scale.replace_all_uses_with(source)
            rewritten += 1
            break
    return recompiled(gm, rewritten)


def _mean_of(node, dims=None):
    """(x, dims) when `node` is mean(x, dims, keepdim=True) (through float casts), else None."""
    node = _skip_casts(node)
    if not (isinstance(node, torch.fx.Node) and node.target is aten.mean.dim):
        return None
    keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    val = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    if not keepdim or not isinstance(val, torch.Tensor):
        return None
    found = (_skip_casts(node.args[0]), tuple(sorted(d % val.dim() for d in node.args[1])))
    return found if dims is None or found[1] == dims else None


def _centred(node):
    """(x, dims) when `node` is x - mean(x, dims, keepdim=True), else None."""
    node = _skip_casts(node)
    if not (isinstance(node, torch.fx.Node) and node.target is aten.sub.Tensor and len(node.args) == 2):
        return None
    x = _skip_casts(node.args[0])
    mean = _mean_of(node.args[1])
    return (x, mean[1]) if mean is not None and mean[0] is x else None


def _constant_gain(gm, node, size: int, channels_first: bool):
    """The values of a constant `node` that scales or shifts each of `size` normalized elements
    (trailing dims, or dim 1 of an NCHW tensor: shape [C, 1, 1] / [1, C, 1, 1]), else None."""
    from ..graph.nodes import fetch_attr
    if not (isinstance(node, torch.fx.Node) and node.op == "get_attr"):
        return None
    value = fetch_attr(gm, node.target)
    if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point or value.numel() != size:
        return None
    shape = list(value.shape)
    if channels_first:
        ok = len(shape) >= 3 and shape[-3] == size and all(d == 1 for d in shape[-2:])
    else:
        ok = True      # [..., normalized]: leading ones only (numel == size)
    return value.detach().reshape(-1) if ok else None


def layer_norm_by_hand_as_layer_norm(gm: torch.fx.GraphModule) -> int:
    """(x - mean(x)) / sqrt(mean((x - mean(x))**2) + eps) over the trailing dims, or over dim 1 of an
    NCHW tensor (ConvNeXt's channels-first LayerNorm as its reference code and many ports write it),
    then `w * y + b` with constants, becomes one layer_norm with that weight and bias (permuted to
    channels last and back for dim 1): one integer kernel instead of two means, a square, a root and
    a division quantized one by one. Returns how many."""
    graph = gm.graph
    rewritten = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or len(node.args) != 2:
            continue
        if node.target is aten.div.Tensor:
            numerator, root = node.args
            root = _skip_casts(root)
            if not (isinstance(root, torch.fx.Node) and root.target is aten.sqrt.default):
                continue
        elif node.target is aten.mul.Tensor:
            numerator, root = node.args
            if not (isinstance(_skip_casts(root), torch.fx.Node) and _skip_casts(root).target is aten.rsqrt.default):
                numerator, root = root, numerator
            root = _skip_casts(root)
            if not (isinstance(root, torch.fx.Node) and root.target is aten.rsqrt.default):
                continue
        else:
            continue
        centred = _centred(numerator)
        if centred is None:
            continue
        x, dims = centred
        var = _skip_casts(root.args[0])
        eps = 0.0
        if isinstance(var, torch.fx.Node) and var.target is aten.add.Tensor and isinstance(var.args[1], (int, float)):
            var, eps = _skip_casts(var.args[0]), float(var.args[1])
        mean = _mean_of(var, dims)
        if mean is None:
            continue
        squared = mean[0]
        base = None
        if isinstance(squared, torch.fx.Node) and squared.target is aten.pow.Tensor_Scalar and squared.args[1] == 2:
            base = squared.args[0]
        elif isinstance(squared, torch.fx.Node) and squared.target is aten.mul.Tensor \
                and _centred(squared.args[0]) == centred and _centred(squared.args[1]) == centred:
            base = squared.args[0]
        if base is None or _centred(base) != centred:
            continue
        val = x.meta.get("val")
        rank = val.dim()
        trailing = list(dims) == list(range(rank - len(dims), rank))
        channels_first = list(dims) == [1] and rank >= 3 and not trailing
        if not (trailing or channels_first):
            continue
        normalized = [int(val.shape[d]) for d in dims]
        weight, bias, out, _ = _affine_after(gm, node, math.prod(normalized), channels_first, with_bias=True)
        w_node, b_node = (None if v is None else constant_node(gm, node, f"_mcu_{kind}_{node.name}",
                                                                 v.reshape(normalized))
                          for kind, v in (("weight", weight), ("bias", bias)))
        with graph.inserting_before(node):
            if channels_first:
                order = [0] + list(range(2, rank)) + [1]
                moved = graph.call_function(aten.permute.default, (x, order))
                moved.meta["val"] = val.permute(order)
                ln = graph.call_function(aten.layer_norm.default, (moved, normalized, w_node, b_node, eps))
                ln.meta.update(node.meta)
                ln.meta["val"] = moved.meta["val"]
                back = [order.index(d) for d in range(rank)]
                result = graph.call_function(aten.permute.default, (ln, back))
                result.meta.update(node.meta)
                result.meta["val"] = val
            else:
                result = graph.call_function(aten.layer_norm.default, (x, normalized, w_node, b_node, eps))
                result.meta.update(node.meta)
                result.meta["val"] = val
        out.replace_all_uses_with(result)
        rewritten += 1
    return recompiled(gm, rewritten)
