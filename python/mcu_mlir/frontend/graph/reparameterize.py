"""Parallel convolutions that are summed become one convolution (structural reparameterization).

RepVGG / MobileOne / FastViT blocks compute, in eval mode, conv_3x3(x) + conv_1x1(x) + bn(x) + ...:
branches on the same input whose outputs are added (FastViT's RepMixer subtracts one). A
convolution is linear in its kernel, so the sum is one convolution whose kernel is the branches'
kernels (each centred in the largest window) added, and whose bias is their biases added (the
model's own `reparameterize()` does the same); a constant per-channel scale of a conv's output (a
layer scale) goes into its weights and bias. Quantized branch by branch, each branch and each add
rounds on its own; merged, there is one layer to quantize and one kernel call. Runs on the
exported float graph after BatchNorm folding (a BatchNorm on the block's input is a 1x1 depthwise
conv by then). Also drops `x + 0` (a block without an identity branch adds the integer 0).
"""

from __future__ import annotations

import torch

aten = torch.ops.aten
CONVS = (aten.conv2d.default, aten.conv1d.default)
ADDS = (aten.add.Tensor, aten.add_.Tensor)
SUBS = (aten.sub.Tensor, aten.sub_.Tensor)
MULS = (aten.mul.Tensor, aten.mul_.Tensor)


def _conv_parts(gm, node):
    """(input, weight, bias, stride, padding, dilation, groups) of a conv with constant weight and
    bias and numeric padding, or None."""
    from ..graph.nodes import fetch_attr
    if getattr(node, "target", None) not in CONVS or node.kwargs:
        return None
    args = list(node.args) + [None] * (7 - len(node.args))
    x, w, b, stride, padding, dilation, groups = args
    if getattr(w, "op", None) != "get_attr" or (b is not None and getattr(b, "op", None) != "get_attr"):
        return None
    spatial = 2 if node.target == aten.conv2d.default else 1

    def ints(v, default):
        v = default if v is None else v
        return [int(i) for i in (v if isinstance(v, (list, tuple)) else [v] * spatial)]
    if isinstance(padding, str):
        return None
    weight = fetch_attr(gm, w.target).detach()
    bias = fetch_attr(gm, b.target).detach() if b is not None else torch.zeros(weight.shape[0])
    return (x, weight, bias, ints(stride, 1), ints(padding, 0), ints(dilation, 1), int(groups or 1))


def _as_dense(weight, groups: int, channels_in: int):
    """A grouped kernel as the equivalent dense one (block diagonal)."""
    if groups == 1:
        return weight
    out = weight.shape[0]
    dense = weight.new_zeros((out, channels_in) + tuple(weight.shape[2:]))
    per_in, per_out = channels_in // groups, out // groups
    for g in range(groups):
        dense[g * per_out:(g + 1) * per_out, g * per_in:(g + 1) * per_in] = weight[g * per_out:(g + 1) * per_out]
    return dense


def _merge(a, b, out_shape, sign: int = 1):
    """The one conv equal to a + sign * b (both `_conv_parts` on the same input), or None."""
    xa, wa, ba, sa, pa, da, ga = a
    xb, wb, bb, sb, pb, db, gb = b
    wb, bb = wb * sign, bb * sign
    if xa is not xb or sa != sb or da != db or wa.shape[0] != wb.shape[0] or wa.dtype != wb.dtype:
        return None
    channels_in = wa.shape[1] * ga
    if ga != gb:
        # A dense conv beside a grouped one (a 1x1 conv beside an identity BatchNorm): both dense.
        if 1 not in (ga, gb):
            return None
        wa, wb, ga = _as_dense(wa, ga, channels_in), _as_dense(wb, gb, channels_in), 1
    padding, offsets, size = [], [], []
    for d in range(len(sa)):
        p = max(pa[d], pb[d])
        ta, tb = p - pa[d], p - pb[d]
        if ta % da[d] or tb % da[d]:
            return None
        ta, tb = ta // da[d], tb // da[d]
        k = max(ta + wa.shape[2 + d], tb + wb.shape[2 + d])
        n = out_shape[2 + d]
        length = xa.meta["val"].shape[2 + d]
        if (length + 2 * p - da[d] * (k - 1) - 1) // sa[d] + 1 != n:
            return None
        padding.append(p)
        offsets.append((ta, tb))
        size.append(k)
    weight = wa.new_zeros(tuple(wa.shape[:2]) + tuple(size))
    for w, which in ((wa, 0), (wb, 1)):
        index = [slice(None), slice(None)] + [slice(o[which], o[which] + w.shape[2 + d]) for d, o in enumerate(offsets)]
        weight[tuple(index)] += w
    return weight, ba + bb, sa, padding, da, ga


def _scaled(parts, node, gamma):
    """The conv `parts` times a per-output-channel constant `gamma` (a layer scale), or None."""
    x, weight, bias, stride, padding, dilation, groups = parts
    channels = weight.shape[0]
    shape = tuple(gamma.shape)
    rank = len(node.meta["val"].shape)
    # [C, 1, ..] aligned to the output's channel axis (1), or a single value.
    if gamma.numel() != channels and gamma.numel() != 1:
        return None
    if gamma.numel() == channels and (len(shape) > rank or len(shape) < rank - 1 or shape[len(shape) - (rank - 1)]
                                       != channels or any(d != 1 for d in shape[len(shape) - (rank - 2):])):
        return None
    g = gamma.detach().reshape(-1).to(weight.dtype).expand(channels)
    return weight * g.reshape((-1,) + (1,) * (weight.dim() - 1)), bias * g, stride, padding, dilation, groups


def _is_zero(v) -> bool:
    return isinstance(v, (int, float)) and v == 0


def _rewrite(gm, node):
    """For an add / sub / mul `node` over convs: (the merged conv's parts, the conv whose input and
    kind it keeps, the nodes it replaces besides `node`), or None."""
    from ..graph.nodes import fetch_attr
    a, b = node.args
    out_shape = tuple(node.meta["val"].shape)

    def single_conv(n):
        return _conv_parts(gm, n) if isinstance(n, torch.fx.Node) and len(n.users) == 1 and \
            tuple(n.meta["val"].shape) == out_shape else None
    if node.target in MULS:
        # conv(x) * gamma, a constant per channel (a layer scale): into the conv's weights.
        for conv, const in ((a, b), (b, a)):
            parts = single_conv(conv)
            if parts is not None and getattr(const, "op", None) == "get_attr":
                scaled = _scaled(parts, node, fetch_attr(gm, const.target))
                if scaled is not None:
                    return scaled, conv, (conv,)
        return None
    pa, pb = single_conv(a), single_conv(b)
    if pa is not None and pb is not None and a is not b:
        merged = _merge(pa, pb, out_shape, -1 if node.target in SUBS else 1)
        return (merged, a, (a, b)) if merged is not None else None
    # x + conv(x) stays as it is: with the identity as one more tap, a per-channel weight scale
    # follows that tap and the conv's own taps got coarser (FastViT-T8 20.8 -> 19.7 dB, RepViT-M0.9
    # 34.1 -> 31.5).
    return None


def merge_parallel_convs(gm) -> int:
    """Merges every add / sub of two convs on the same input (each read only by it) and every
    layer scale of a conv read only by it, until none is left; returns how many ops went."""
    graph, merged = gm.graph, 0
    changed = True
    while changed:
        changed = False
        for node in list(graph.nodes):
            if node.op != "call_function" or node.target not in ADDS + SUBS + MULS or len(node.args) != 2 or \
                    node.kwargs.get("alpha", 1) != 1 or "val" not in node.meta:
                continue
            a, b = node.args
            if node.target in ADDS and isinstance(a, torch.fx.Node) and _is_zero(b) and \
                    a.meta.get("val") is not None and tuple(a.meta["val"].shape) == tuple(node.meta["val"].shape):
                node.replace_all_uses_with(a)
                graph.erase_node(node)
                merged += 1
                changed = True
                continue
            result = _rewrite(gm, node)
            if result is None:
                continue
            (weight, bias, stride, padding, dilation, groups), source, dead = result
            a = source
            names = []
            for kind, tensor in (("weight", weight), ("bias", bias)):
                name = f"_mcu_merged_{node.name}_{kind}"
                gm.register_buffer(name, tensor)
                names.append(name)
            with graph.inserting_before(node):
                w_node, b_node = (graph.get_attr(n) for n in names)
                w_node.meta["val"], b_node.meta["val"] = weight, bias
                conv = graph.call_function(a.target, (a.args[0], w_node, b_node, stride, padding, dilation, groups))
            # The merged conv stands where the add / sub / mul was: its source location is that
            # op's (the block's forward).
            conv.meta = dict(node.meta)
            node.replace_all_uses_with(conv)
            for gone in (node, *dead):
                graph.erase_node(gone)
            merged += 1
            changed = True
    if merged:
        graph.eliminate_dead_code()
        gm.delete_all_unused_submodules()
        gm.recompile()
    return merged
