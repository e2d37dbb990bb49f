"""Biases that fit their int32: a layer's weight scale raised where its bias would saturate.

An int8 layer's bias is an int32 at the accumulator's scale, input scale x weight scale. Where the
input is tiny (an untrained network's features decay to ~1e-6 by its head, so the input scale sits
at the observers' 2**-24 floor) and the bias is not (ultralytics' Detect prior, log(5 / 80 / 80**2)
= -11.5 on every class), the bias needs more than 2**31 steps: PT2E clamps it to INT32_MIN, every
logit reads -0.1 instead of -11.5, and the scores are wrong whatever the output's precision.

Such a channel's weight scale is raised until its bias fits in BIAS_LIMIT steps, by widening the
weight observer's range before the conversion reads it. The weights of that channel then have
fewer steps, but what they add is tiny beside the bias there: with |bias| over 2**30 accumulator
steps and at most 127 x 128 per product, the products weigh less than K x 2**14 / 2**30 of it
(K the accumulation depth). Layers whose biases fit (every trained model seen) are left as they are.
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule

# Bias steps allowed: half of int32, so the accumulator keeps room for the products.
BIAS_LIMIT = 2.0 ** 30


def _module(gm: GraphModule, node):
    return gm.get_submodule(node.target) if getattr(node, "op", None) == "call_module" else None


def fit_biases(prepared: GraphModule) -> list[str]:
    """Raises the weight scales of the int8 layers of calibrated `prepared` whose bias would not fit
    (see the module docstring); returns those layers' node names."""
    from ..graph.nodes import fetch_attr
    from .quantizer import WEIGHTED
    raised = []
    for node in prepared.graph.nodes:
        if node.op != "call_function" or node.target not in WEIGHTED or len(node.args) < 3:
            continue
        act, weight, bias = (_module(prepared, a) for a in node.args[:3])
        bias_src = node.args[2].args[0] if getattr(node.args[2], "op", None) == "call_module" else None
        if act is None or weight is None or bias is None or getattr(bias_src, "op", None) != "get_attr":
            continue
        if getattr(act, "quant_max", 0) > 255 or not hasattr(weight, "min_val") or weight.min_val.numel() == 0:
            continue        # int16 activations: a 48-bit bias; an observer that saw nothing
        values = fetch_attr(prepared, bias_src.target)
        if not isinstance(values, torch.Tensor) or values.numel() != weight.min_val.numel():
            continue
        act_scale = float(act.calculate_qparams()[0].reshape(-1)[0])
        need = values.detach().abs().double() / (act_scale * BIAS_LIMIT)      # the least weight scale
        have = torch.maximum(weight.max_val.abs(), weight.min_val.abs()).double() / 127.0
        short = need > have
        if not bool(short.any()):
            continue
        reach = torch.where(short, need * 127.0, have * 127.0).to(weight.max_val.dtype)
        weight.max_val.copy_(torch.maximum(weight.max_val, reach))
        weight.min_val.copy_(torch.minimum(weight.min_val, -reach))
        raised.append(node.name)
    return raised
