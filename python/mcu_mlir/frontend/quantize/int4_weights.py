"""int4 weights (w4a8): which layers can take them, how they are quantized, what they weigh.

CMSIS-NN's s4 kernels (arm_convolve_wrapper_s4, arm_depthwise_conv_wrapper_s4,
arm_fully_connected_s4) read int8 activations and int4 weights packed two per byte; there is no
int16-activation kernel with int4 weights, so an int4 layer has int8 activations. The weights are
symmetric in [-7, 7]: CMSIS-NN would take -8 too, but TOSA's int4 (the EXT-INT4 extension that
tosa_reference_model, our oracle, implements) is [-7, 7].

- convolutions (1-D, 2-D, depthwise, grouped): per output channel, as int8 weights are;
- linear layers: one scale for the tensor. arm_fully_connected_s4 requantizes per tensor (as
  TFLite's int4 FULLY_CONNECTED); the clipping search below keeps what that costs small, and the
  layer's measured cost decides whether `--int4-layers auto` takes it;
- transposed convolutions stay int8 (CMSIS-NN has no s4 transposed convolution).

Each scale is chosen by a search per channel (or per tensor) over clipping ranges: the step that
minimises the squared error of the rounded weights, max|w| / 7 shrunk by up to half. At 15 levels
rounding costs more than clipping a few large weights (on Gaussian channels the best range
is ~0.9 of the maximum, ~15 % less squared error); int8's 255 levels keep max|w| / 127.
"""

from __future__ import annotations

import copy

import torch
from torch.fx import Node
from torchao.quantization.pt2e import MinMaxObserver, PerChannelMinMaxObserver
from torchao.quantization.pt2e.quantizer import QuantizationSpec

aten = torch.ops.aten

INT4_MIN, INT4_MAX = -7, 7
CONVS = {aten.conv1d.default, aten.conv2d.default, aten.conv1d.padding, aten.conv2d.padding}
LINEAR = aten.linear.default
# The clipping search: ranges from max|w| down to CLIP_FLOOR x max|w|, in CLIP_STEPS steps.
CLIP_FLOOR, CLIP_STEPS = 0.5, 50


def mse_scales(weight: torch.Tensor, axis: int | None, scales: torch.Tensor) -> torch.Tensor:
    """`scales` (max|w| / 7 of each channel along `axis`, or of the tensor when None) shrunk to the
    ones whose int4 rounding of `weight` has the least squared error, channel by channel."""
    w = weight.detach().double()
    rows = w.reshape(1, -1) if axis is None else w.movedim(axis, 0).reshape(w.shape[axis], -1)
    base = scales.detach().double().reshape(-1, 1)
    best_err = torch.full((rows.shape[0],), float("inf"), dtype=torch.float64)
    best = base.reshape(-1).clone()
    for k in range(CLIP_STEPS + 1):
        factor = 1.0 - (1.0 - CLIP_FLOOR) * k / CLIP_STEPS
        s = base * factor
        err = ((torch.clamp(torch.round(rows / s), INT4_MIN, INT4_MAX) * s - rows) ** 2).sum(1)
        better = err < best_err
        best_err = torch.where(better, err, best_err)
        best = torch.where(better, s.reshape(-1), best)
    return best.to(scales.dtype).reshape(scales.shape)


class _KeepsWeight:
    """Remembers the tensor it observes (a weight: the same tensor on every calibration sample)."""

    def forward(self, x_orig):
        self.observed = x_orig.detach()
        return super().forward(x_orig)


class Int4PerChannelObserver(_KeepsWeight, PerChannelMinMaxObserver):
    """Per-channel int4 weight scales, clipped by the squared-error search. An all-zero channel gets
    scale 1, as int8 weights' (quantizer.ZeroSafePerChannelMinMaxObserver: its bias stays in int32)."""

    def calculate_qparams(self):
        scale, zero_point = super().calculate_qparams()
        if getattr(self, "observed", None) is not None:
            scale = mse_scales(self.observed, self.ch_axis, scale)
        empty = (self.min_val == 0) & (self.max_val == 0)
        return torch.where(empty, torch.ones_like(scale), scale), zero_point


class Int4PerTensorObserver(_KeepsWeight, MinMaxObserver):
    """One int4 scale for the tensor (arm_fully_connected_s4), clipped by the squared-error search."""

    def calculate_qparams(self):
        scale, zero_point = super().calculate_qparams()
        if getattr(self, "observed", None) is None or float(self.max_val) == float(self.min_val) == 0.0:
            return scale, zero_point
        return mse_scales(self.observed, None, scale), zero_point


def int4_weight_spec(node: Node) -> QuantizationSpec:
    """The int4 weight spec of `node` (a layer int4_capable accepts)."""
    if node.target == LINEAR:
        return QuantizationSpec(dtype=torch.int8, quant_min=INT4_MIN, quant_max=INT4_MAX,
                                qscheme=torch.per_tensor_symmetric,
                                observer_or_fake_quant_ctr=Int4PerTensorObserver.with_args(eps=2 ** -24))
    return QuantizationSpec(dtype=torch.int8, quant_min=INT4_MIN, quant_max=INT4_MAX, ch_axis=0,
                            qscheme=torch.per_channel_symmetric,
                            observer_or_fake_quant_ctr=Int4PerChannelObserver.with_args(eps=2 ** -24))


def is_int4_spec(spec) -> bool:
    return getattr(spec, "quant_min", None) == INT4_MIN and getattr(spec, "quant_max", None) == INT4_MAX


def int4_capable(gm) -> dict:
    """Graph node name -> weight element count of each layer that can take int4 weights: a
    convolution or linear layer whose weight is a parameter (a constant of the graph)."""
    from ..graph.nodes import fetch_attr
    out = {}
    for node in gm.graph.nodes:
        if node.op != "call_function" or (node.target not in CONVS and node.target != LINEAR):
            continue
        w = node.args[1] if len(node.args) > 1 else None
        if not isinstance(w, Node) or w.op != "get_attr":
            continue
        weight = fetch_attr(gm, w.target)
        if isinstance(weight, torch.Tensor) and weight.dtype.is_floating_point:
            out[node.name] = int(weight.numel())
    return out


def weight_bytes(count: int, int4: bool) -> int:
    """Bytes of `count` weights in flash: one each in int8, two per byte packed in int4."""
    return (count + 1) // 2 if int4 else count


def with_int4_biases(corrected8, corrected4, int4_nodes) -> object:
    """A copy of the bias-corrected graph `corrected8` whose int4 layers take their biases from
    `corrected4` (the same graph corrected for int4 rounding). Each layer's correction is measured
    on the float graph's inputs, so corrections of different layers do not depend on each other."""
    if corrected8 is None or corrected4 is None or not int4_nodes:
        return corrected8
    from ..graph.nodes import fetch_attr
    out = copy.deepcopy(corrected8)
    fours = {n.name: n for n in corrected4.graph.nodes}
    for node in out.graph.nodes:
        if node.name not in int4_nodes or node.name not in fours:
            continue
        mine, theirs = _bias_attr(node), _bias_attr(fours[node.name])
        if mine is not None and theirs is not None:
            fetch_attr(out, mine.target).data.copy_(fetch_attr(corrected4, theirs.target).data)
    return out


def _bias_attr(node: Node):
    bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")
    return bias if isinstance(bias, Node) and bias.op == "get_attr" else None
