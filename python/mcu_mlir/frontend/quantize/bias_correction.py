"""Bias correction: each conv / linear bias absorbs the mean error its int8 weights make.

Rounding the weights to int8 changes every output by sum_i (w_q,i - w_i) * x_i. Over the
calibration data that error has a mean per output channel, which is not zero when the inputs are
not zero-mean (after a ReLU / SiLU, an image's pixels): it acts as a wrong bias, and subtracting
it from the layer's bias removes it at no run-time cost (the empirical bias correction of Nagel et
al., "Data-Free Quantization Through Weight Equalization and Bias Correction", 2019). The mean is
taken as the layer computes it: the layer itself run on its float calibration inputs with the
weight error as its weights (padded borders count as they do in the layer), averaged over
samples and positions. The weights are rounded as the quantizer will round them (its weight
observer on the same tensor). It runs on the float graph before calibration, so the activation
ranges are observed on the corrected layers. Layers without a bias are left as they are.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.fx import GraphModule, Interpreter, Node

from ..graph.nodes import fetch_attr

aten = torch.ops.aten
_CONVS = {aten.conv1d.default: F.conv1d, aten.conv2d.default: F.conv2d}
_LINEAR = aten.linear.default


def _get_attr(node) -> Node | None:
    return node if isinstance(node, Node) and node.op == "get_attr" else None


def _bias_node(node: Node):
    return node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")


def _rounded(weight: torch.Tensor, spec) -> torch.Tensor:
    """`weight` quantized and dequantized as the quantizer's weight spec does it."""
    per_tensor = spec.qscheme == torch.per_tensor_symmetric
    axis = {} if per_tensor else {"ch_axis": spec.ch_axis}
    observer = spec.observer_or_fake_quant_ctr(dtype=spec.dtype, quant_min=spec.quant_min,
                                               quant_max=spec.quant_max, qscheme=spec.qscheme, **axis)
    observer(weight)
    scale, zp = observer.calculate_qparams()
    if per_tensor:
        return torch.fake_quantize_per_tensor_affine(weight, float(scale), int(zp), spec.quant_min, spec.quant_max)
    return torch.fake_quantize_per_channel_affine(weight, scale.float(), zp.int(), spec.ch_axis,
                                                  spec.quant_min, spec.quant_max)


def _error_sums(node: Node, x: torch.Tensor, error_weight: torch.Tensor) -> tuple[torch.Tensor, int]:
    """The layer's output for input x with `error_weight` as its weights, summed per output
    channel, and the number of values in each sum."""
    if node.target == _LINEAR:
        y = F.linear(x, error_weight)
        return y.reshape(-1, y.shape[-1]).sum(0), y.numel() // y.shape[-1]

    def arg(i, name, default):
        return node.args[i] if len(node.args) > i else node.kwargs.get(name, default)
    y = _CONVS[node.target](x, error_weight, None, arg(3, "stride", 1), arg(4, "padding", 0),
                            arg(5, "dilation", 1), arg(6, "groups", 1))
    if x.dim() == error_weight.dim():       # batched: [N, O, ...]
        y = y.movedim(1, 0)
    return y.reshape(y.shape[0], -1).sum(1), y.numel() // y.shape[0]


class _ErrorMeans(Interpreter):
    def __init__(self, gm: GraphModule, errors: dict):
        super().__init__(gm)
        self.errors = errors        # layer node -> its weight error (rounded - float)
        self.sums: dict = {}

    def run_node(self, n: Node):
        out = super().run_node(n)
        if n in self.errors:
            total, count = _error_sums(n, self.env[n.args[0]], self.errors[n])
            s, c = self.sums.get(n, (0.0, 0))
            self.sums[n] = (s + total.double(), c + count)
        return out


def correct_biases(gm: GraphModule, samples, weight_spec) -> int:
    """Subtracts from each conv / linear bias of the float graph `gm` (modified in place) the mean
    error that rounding its weights by `weight_spec` makes on `samples`; returns how many layers
    it corrected. weight_spec: one spec, or a function of the layer's node giving its spec (None:
    the layer is left as it is)."""
    errors = {}
    for node in gm.graph.nodes:
        if node.op != "call_function" or (node.target not in _CONVS and node.target != _LINEAR):
            continue
        w, b = _get_attr(node.args[1]), _get_attr(_bias_node(node))
        if w is None or b is None or len(b.users) != 1:     # a bias two layers share would move twice
            continue
        weight = fetch_attr(gm, w.target).detach()
        if weight.dtype != torch.float32 or weight.shape[0] != fetch_attr(gm, b.target).shape[0]:
            continue
        spec = weight_spec(node) if callable(weight_spec) else weight_spec
        if spec is not None:
            errors[node] = _rounded(weight, spec) - weight
    if not errors:
        return 0
    means = _ErrorMeans(gm, errors)
    with torch.no_grad():
        for s in samples:
            means.run(*s)
        for node, (total, count) in means.sums.items():
            bias = fetch_attr(gm, _bias_node(node).target)
            bias.data -= (total / count).to(bias.dtype)
    return len(means.sums)
