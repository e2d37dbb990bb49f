"""The CMSIS-NN quantizer: a torchao PT2E `Quantizer` with the numerics CMSIS-NN kernels compute.

- activations: int8 asymmetric per tensor (or int16 symmetric, zero point 0, for `*_s16` kernels);
- weights of conv / depthwise / linear: int8 symmetric per output channel ([-127, 127]), or int4
  ([-7, 7]) for the layers named in `int4_nodes` (int4_weights.py);
- bias: int32, scale = input scale x weight scale (per channel), zero point 0;
- activation tails (relu, relu6/hardtanh, clamp) carry the producer's output quantization, so they fuse;
- pass-through ops (reshape, permute, pooling by max, slicing, concat, ...) share their input's parameters;
- softmax output is fixed (1/256, -128 for int8);
- normalisations (layer / RMS / group norm) quantize their input only: weight and bias stay float;
- every other float op gets observed inputs and output; the legaliser then lowers it or says why not.
"""

from __future__ import annotations

import functools

import math
import operator

import torch
from torch.fx import Node
from torchao.quantization.pt2e import HistogramObserver, MinMaxObserver, PerChannelMinMaxObserver
from torchao.quantization.pt2e.quantizer import (DerivedQuantizationSpec,
                                                 FixedQParamsQuantizationSpec,
                                                 QuantizationAnnotation, QuantizationSpec,
                                                 Quantizer, SharedQuantizationSpec)

from ..graph.nodes import FLOAT_CASTS, is_float_cast, is_masked_fill
from ..graph.lstm_cell import LSTM_CELL

aten = torch.ops.aten

WEIGHTED = {aten.conv1d.default, aten.conv2d.default, aten.conv1d.padding, aten.conv2d.padding,
            aten.linear.default, aten.conv_transpose1d.default, aten.conv_transpose2d.input}
# Transposed convolutions keep their output channels on weight axis 1.
TRANSPOSED = {aten.conv_transpose1d.default, aten.conv_transpose2d.input}
TAILS = {aten.relu.default, aten.relu_.default, aten.hardtanh.default, aten.hardtanh_.default,
         aten.relu6.default, aten.clamp.default, aten.clamp_.default}
# Ops whose integer result equals the op applied to the integers: they keep their input's parameters.
PASS_THROUGH = {
    aten.view.default, aten.reshape.default, aten._unsafe_view.default, aten.flatten.using_ints,
    aten.unflatten.int, aten.reshape_as.default, aten.view_as.default,
    aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default,
    aten.permute.default, aten.transpose.int, aten.t.default, aten.squeeze.dim, aten.squeeze.dims,
    aten.squeeze.default, aten.unsqueeze.default, aten.max_pool2d.default, aten.max_pool1d.default,
    aten.dropout.default, aten.clone.default, aten.contiguous.default, aten.slice.Tensor,
    aten.select.int, aten.upsample_nearest2d.vec, aten.upsample_nearest2d.default,
    aten.upsample_nearest1d.vec, aten.expand.default, aten.alias.default, aten.detach.default,
    aten.adaptive_avg_pool2d.default, aten.avg_pool2d.default, aten.mean.dim, aten.avg_pool1d.default,
    aten.adaptive_avg_pool1d.default, aten.narrow.default, aten.constant_pad_nd.default,
    aten.pad.default, aten.broadcast_to.default, aten.expand_as.default, aten.repeat.default, aten.tile.default,
    aten.flip.default, aten.roll.default, aten.pixel_shuffle.default, aten.pixel_unshuffle.default,
    aten.index_select.default, aten.index.Tensor, aten.amax.default, aten.amin.default,
    aten.embedding.default,   # a lookup in a table of constants: the rows keep the table's parameters
}
SPLITS = {aten.split.Tensor, aten.split_with_sizes.default, aten.chunk.default, aten.unbind.int,
          aten.tensor_split.sections}
CONCATS = {aten.cat.default, aten.concat.default, aten.stack.default}
SOFTMAX = {aten.softmax.int, aten._softmax.default}
# Normalisations: only the input is quantized; weight and bias stay float (they become multipliers).
NORMS = {aten.layer_norm.default, aten.rms_norm.default, aten.group_norm.default}


class _FiniteOnly:
    """Observes the finite values only: a masked fill's -inf (before a softmax, which gives it
    probability 0 in integers too) does not stretch the range of the values it masks."""

    def forward(self, x_orig):
        finite = torch.isfinite(x_orig)
        if not bool(finite.all()) and bool(finite.any()):
            super().forward(x_orig[finite])
            return x_orig
        return super().forward(x_orig)


class FiniteMinMaxObserver(_FiniteOnly, MinMaxObserver):
    """The calibrated minimum and maximum: every value seen is in range."""


class FiniteHistogramObserver(_FiniteOnly, HistogramObserver):
    """The range that minimises the squared quantization error over the calibrated histogram: a
    tail of rare large values is clipped so that the bulk gets finer steps (int8 only)."""


class HeadroomMinMaxObserver(FiniteMinMaxObserver):
    """int16 activations: the calibrated range widened HEADROOM times. int16 resolves 2**15 steps
    where int8 resolves 2**7; a value past the calibration's extremes (a fresh input's tail) is
    clipped, and that error, not rounding, is then what an int16 layer loses. A 2x margin costs
    6 dB of a ~90 dB rounding SQNR and keeps such values."""

    HEADROOM = 2.0

    def calculate_qparams(self):
        scale, zero_point = super().calculate_qparams()
        return scale * self.HEADROOM, zero_point


# A log's input keeps the tight range: near zero, where the log is steep, every bit of relative
# resolution shows in its output (an MFCC's log-mel power lost 7 dB to the headroom's one bit).
LOGS = {aten.log.default, aten.log10.default, aten.log2.default, aten.log1p.default}


class CellStateObserver(MinMaxObserver):
    """An LSTM cell state (int16, zero point 0): the kernel takes its scale as a power of two,
    2**ceil(log2(2 max|c|)) / 2**15 (one bit of headroom, as int16 activations get), at least
    2**MIN_CELL_POWER (a state that stays about zero; finer, the kernel's requantization overflows)."""

    def calculate_qparams(self):
        from ...fixed_point.cmsis_lstm import MIN_CELL_POWER
        scale, zero_point = super().calculate_qparams()
        amax = max(abs(float(self.min_val)), abs(float(self.max_val)))
        power = max(math.ceil(math.log2(2 * amax)) - 15 if amax > 0 else MIN_CELL_POWER, MIN_CELL_POWER)
        return torch.full_like(scale, 2.0 ** power), torch.zeros_like(zero_point)


CELL_STATE_SPEC = QuantizationSpec(dtype=torch.int16, quant_min=-32768, quant_max=32767,
                                   qscheme=torch.per_tensor_symmetric,
                                   observer_or_fake_quant_ctr=CellStateObserver.with_args(eps=2 ** -24))


# Activation ranges of int8 values: "minmax" or "histogram" (int16 ranges are always min / max).
RANGES = {"minmax": FiniteMinMaxObserver, "histogram": FiniteHistogramObserver}


def _act_spec(dtype: str, headroom: bool = True, ranges: str = "minmax") -> QuantizationSpec:
    # Every activation observer ignores non-finite values: PT2E may merge a masked fill's observer
    # with its producer's, so the filter must hold wherever the group's observer comes from.
    observer = FiniteMinMaxObserver
    if dtype == "int16":
        return QuantizationSpec(dtype=torch.int16, quant_min=-32767, quant_max=32767,
                                qscheme=torch.per_tensor_symmetric,
                                observer_or_fake_quant_ctr=(HeadroomMinMaxObserver if headroom else observer)
                                .with_args(eps=2 ** -24))
    return QuantizationSpec(dtype=torch.int8, quant_min=-128, quant_max=127,
                            qscheme=torch.per_tensor_affine,
                            observer_or_fake_quant_ctr=RANGES[ranges].with_args(eps=2 ** -24))


class ZeroSafePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel weight ranges (torchao passes ch_axis only to a class whose name says PerChannel);
    an all-zero channel (a zero-initialised last BatchNorm folded into
    its conv) gets scale 1. Its weights quantize to 0 at any scale, but its bias is quantized at
    activation scale x weight scale: at the floor scale (2**-24) a bias of 0.1 is 10**10 in int16
    models, past int32, and the channel's constant output was saturated garbage."""

    def calculate_qparams(self):
        scale, zero_point = super().calculate_qparams()
        empty = (self.min_val == 0) & (self.max_val == 0)
        if empty.any():
            scale = torch.where(empty, torch.ones_like(scale), scale)
        return scale, zero_point


def weight_spec(axis: int = 0) -> QuantizationSpec:
    return QuantizationSpec(dtype=torch.int8, quant_min=-127, quant_max=127, ch_axis=axis,
                            qscheme=torch.per_channel_symmetric,
                            observer_or_fake_quant_ctr=ZeroSafePerChannelMinMaxObserver.with_args(eps=2 ** -24))


def _derive_bias_qparams(observers, groups: int = 1):
    """The bias's scales: input scale x weight scales. A grouped transposed convolution's weight
    holds one group's output channels on its axis 1: its scales repeat for every group."""
    act, weight = observers
    act_scale, _ = act.calculate_qparams()
    weight_scale, _ = weight.calculate_qparams()
    if groups > 1:
        weight_scale = weight_scale.repeat(groups)
    scale = (act_scale.to(torch.float64) * weight_scale.to(torch.float64)).to(torch.float32)
    return scale, torch.zeros_like(scale, dtype=torch.int32)


def _is_float_tensor(n) -> bool:
    if not isinstance(n, Node):
        return False
    val = n.meta.get("val")
    return isinstance(val, torch.Tensor) and val.dtype.is_floating_point


def _annotate(node: Node, inputs: dict, output=None) -> None:
    node.meta["quantization_annotation"] = QuantizationAnnotation(
        input_qspec_map=inputs, output_qspec=output, _annotated=True)


def _annotated(node: Node) -> bool:
    ann = node.meta.get("quantization_annotation")
    return ann is not None and ann._annotated


class CmsisNNQuantizer(Quantizer):
    """Annotates an exported graph the way CMSIS-NN computes (see the module docstring)."""

    def __init__(self, activations: str = "int8", int16_nodes=frozenset(), ranges: str = "minmax",
                 own_ranges=frozenset(), bounded=frozenset(), own_scales=frozenset(),
                 int4_nodes=frozenset()):
        """int16_nodes: names of the ops (graph node names) whose activations are int16 while the
        rest are `activations` (mixed precision: a16w8 layers where int8 loses the most).
        ranges: how int8 activation ranges are calibrated (RANGES).
        own_ranges: names of means that get a range of their own, not their input's (shrinking_means.py).
        bounded: names of int16 ops that only gather int8 values (an output concat's parts,
        concat_parts.py): no value can pass the calibrated range, so it gets no headroom.
        own_scales: names of output concats left unannotated, so each part keeps its producer's
        parameters and the integers are concatenated as they are (concat_parts.py).
        int4_nodes: names of the conv / linear ops whose weights are int4 (int4_weights.py)."""
        super().__init__()
        if activations not in ("int8", "int16"):
            raise ValueError(f"activations must be int8 or int16, not {activations!r}")
        if ranges not in RANGES:
            raise ValueError(f"ranges must be one of {', '.join(RANGES)}, not {ranges!r}")
        self.activations = activations
        self.ranges = ranges
        self.int16_nodes = frozenset(int16_nodes)
        self.own_ranges = frozenset(own_ranges)
        self.bounded = frozenset(bounded)
        self.own_scales = frozenset(own_scales)
        self.int4_nodes = frozenset(int4_nodes)
        self._pool_differences: set = set()

    def _dtype(self, node: Node) -> str:
        return "int16" if node.name in self.int16_nodes or node in self._pool_differences else self.activations

    def transform_for_annotation(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        _observe_every_lstm_output(model.graph)
        model.recompile()
        return model

    def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        weight = weight_spec()
        graph = model.graph
        tight = _feeding_logs(graph)
        self._pool_differences = _pool_differences(graph) if self.activations == "int8" else set()
        for node in graph.nodes:
            if node.op != "call_function" or _annotated(node) or node.name in self.own_scales:
                continue
            act = _act_spec(self._dtype(node), headroom=node not in tight and node.name not in self.bounded,
                            ranges=self.ranges)
            target = node.target
            if target in WEIGHTED:
                self._annotate_weighted(node, act, weight)
            elif target in PASS_THROUGH or is_float_cast(node) or target in TAILS and not self._is_tail(node):
                x = node.args[0]
                if not _is_float_tensor(x):
                    continue
                if target in TAILS and target not in (aten.relu.default, aten.relu_.default) or \
                        node.name in self.own_ranges:
                    # A clamp on its own, a mean much smaller than its input: a new range, its own observer.
                    _annotate(node, {x: act}, act)
                else:
                    _annotate(node, {x: act}, SharedQuantizationSpec((x, node)))
            elif target in SPLITS:
                x = node.args[0]
                _annotate(node, {x: act})
                for user in node.users:
                    if user.target is operator.getitem:
                        _annotate(user, {}, SharedQuantizationSpec((x, node)))
            elif target in CONCATS:
                tensors = [t for t in node.args[0] if _is_float_tensor(t)]
                if not tensors:
                    continue
                first = tensors[0]
                shared = SharedQuantizationSpec((first, node))
                _annotate(node, {t: (act if t is first else shared) for t in tensors}, shared)
            elif target in SOFTMAX:
                x = node.args[0]
                if is_masked_fill(x):
                    act = SharedQuantizationSpec(x)
                fixed = (FixedQParamsQuantizationSpec(torch.int16, 1 / 32768, 0, -32767, 32767,
                                                      torch.per_tensor_symmetric)
                         if self._dtype(node) == "int16" else
                         FixedQParamsQuantizationSpec(torch.int8, 1 / 256, -128, -128, 127,
                                                      torch.per_tensor_affine))
                _annotate(node, {x: act}, fixed)
            elif is_masked_fill(node) and _is_float_tensor(node.args[1]):
                # A masked fill with -inf (before a softmax): the kept values keep their parameters
                # (one observer for both sides, blind to the -inf).
                x = node.args[1]
                _annotate(node, {x: act}, SharedQuantizationSpec((x, node)))
            elif target is aten.hypot.default and all(_is_float_tensor(a) for a in node.args[:2]):
                # One scale for both parts: the lowering sums their squares as integers.
                a, b = node.args[:2]
                self._annotate_with_tail(node, {a: act, b: SharedQuantizationSpec((a, node))}, act)
            elif target in NORMS:
                self._annotate_with_tail(node, {node.args[0]: act}, act)
            elif target is LSTM_CELL:
                _annotate_lstm_cell(node)
            elif target in TAILS:
                continue   # annotated with its producer
            elif target is operator.getitem and node.args[1] == 0 and node.args[0].target in _SELECTIONS \
                    and _is_float_tensor(node.args[0].args[0]):
                # The values a top-k / sort / max(dim) selects keep their input's parameters.
                _annotate(node, {}, SharedQuantizationSpec(node.args[0].args[0]))
            elif _is_float_tensor(node) and _index_bound(node) is not None:
                # Indices as floats (YOLO26's class index = pair index % classes): integers at scale 1.
                _annotate(node, {}, _integer_spec(self._dtype(node), _index_bound(node)))
            elif _is_float_tensor(node):
                # A softmax output is read as it is (fixed parameters), not requantized for its reader.
                inputs = {a: SharedQuantizationSpec(a) if a.target in SOFTMAX and _annotated(a) else act
                          for a in _flat_args(node) if _is_float_tensor(a)}
                self._annotate_with_tail(node, inputs, act)
        return model

    # -- helpers -----------------------------------------------------------------------------
    def _is_tail(self, node: Node) -> bool:
        """A clamp-like op right after the only use of a weighted op or an add (same precision): it fuses."""
        x = node.args[0] if node.args else None
        return (isinstance(x, Node) and x.op == "call_function" and len(x.users) == 1
                and (x.target in WEIGHTED or x.target in (aten.add.Tensor, aten.add_.Tensor))
                and _tail_supported(node) and self._dtype(x) == self._dtype(node))

    def _annotate_with_tail(self, node: Node, inputs: dict, act) -> None:
        users = list(node.users)
        if len(users) == 1 and users[0].target in TAILS and _tail_supported(users[0]) and \
                self._dtype(users[0]) == self._dtype(node):
            _annotate(node, inputs)
            _annotate(users[0], {}, act)
        else:
            _annotate(node, inputs, act)

    def _annotate_weighted(self, node: Node, act, weight) -> None:
        x, w = node.args[0], node.args[1]
        bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")
        derive = _derive_bias_qparams
        if node.target in TRANSPOSED:
            weight = weight_spec(1)
            groups = node.args[6] if len(node.args) > 6 else node.kwargs.get("groups", 1)
            if groups > 1:
                derive = functools.partial(_derive_bias_qparams, groups=groups)
        elif node.name in self.int4_nodes and self._dtype(node) == "int8":   # no a16w4 kernel
            from .int4_weights import int4_weight_spec
            weight = int4_weight_spec(node)
        inputs = {x: act, w: weight}
        if isinstance(bias, Node):
            per_tensor = weight.qscheme == torch.per_tensor_symmetric
            inputs[bias] = DerivedQuantizationSpec(
                derived_from=[(x, node), (w, node)], derive_qparams_fn=derive,
                dtype=torch.int32, quant_min=-(2 ** 31) + 1, quant_max=2 ** 31 - 1,
                qscheme=torch.per_tensor_symmetric if per_tensor else torch.per_channel_symmetric,
                ch_axis=None if per_tensor else 0)
        self._annotate_with_tail(node, inputs, act)

    def validate(self, model: torch.fx.GraphModule) -> None:
        pass


def _observe_every_lstm_output(graph) -> None:
    """A getitem of h' and of c' for every LSTM step, used or not, so that the layer's shared h and c
    observers see every step's outputs. The last step's c' is often unused (a model returning only
    the outputs): over one step from the zero state its observer saw nothing but that zero, its
    scale fell to the floor (2**-34) and every c' saturated (h all zeros). convert_pt2e drops the
    unused getitems again."""
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not LSTM_CELL:
            continue
        taken = {u.args[1] for u in node.users if u.target is operator.getitem}
        for index in (0, 1):
            if index not in taken:
                with graph.inserting_after(node):
                    item = graph.call_function(operator.getitem, (node, index))
                item.meta.update({k: node.meta[k] for k in ("stack_trace", "nn_module_stack", "val")
                                  if k in node.meta})
                if "val" in node.meta:
                    item.meta["val"] = node.meta["val"][index]


def _output_dtype(node: Node):
    """The dtype node's output is annotated with, through the shared specs it points at (None when
    unknown)."""
    spec = node.meta["quantization_annotation"].output_qspec
    for _ in range(1000):
        if not isinstance(spec, SharedQuantizationSpec):
            return getattr(spec, "dtype", None)
        edge = spec.edge_or_node
        if isinstance(edge, Node):
            ann = edge.meta.get("quantization_annotation")
            spec = ann.output_qspec if ann is not None else None
        else:
            ann = edge[1].meta.get("quantization_annotation")
            spec = ann.input_qspec_map.get(edge[0]) if ann is not None else None
    return None


def _annotate_lstm_cell(node: Node) -> None:
    """x int8; h int8 and c int16 (power-of-two scale) with one observer each for every step of
    the layer: a step's h and c are the previous step's outputs, read as they are. Weights and
    bias stay float (the lowering quantizes them per gate, as the kernel takes them)."""
    x, h, c = node.args[:3]
    act = _act_spec("int8")

    def state(v, spec):
        from_cell = isinstance(v, Node) and v.target is operator.getitem and \
            isinstance(v.args[0], Node) and v.args[0].target is LSTM_CELL
        return SharedQuantizationSpec(v) if from_cell else spec

    # x as its producer quantized it, when it did (the kernel takes any input parameters): the
    # previous layer's h or a concat of both directions is read without a requantization.
    # An int16 producer (a layer --int16-layers moved) is requantized to int8: the kernel takes int8 x.
    ann = x.meta.get("quantization_annotation") if isinstance(x, Node) else None
    shared = ann is not None and ann.output_qspec is not None and _output_dtype(x) == torch.int8
    x_spec = SharedQuantizationSpec(x) if shared else act
    _annotate(node, {x: x_spec, h: state(h, act), c: state(c, CELL_STATE_SPEC)})
    for user in node.users:
        if user.target is operator.getitem:
            _annotate(user, {}, SharedQuantizationSpec((h if user.args[1] == 0 else c, node)))


POOLS = {aten.avg_pool2d.default, aten.avg_pool1d.default}


def _pool_differences(graph) -> set:
    """The average pools and subtractions of `pool(x) - x` (PoolFormer's token mixer: a local
    mean minus the value, a small difference of two large values). In int8 the pool's output
    keeps x's scale, and its rounding, half a step of x, is most of the small difference (7.6 dB
    on PoolFormer-S12); both ops run in int16 (CMSIS-NN's arm_avgpool_s16), the difference's
    readers take it back in int8."""
    out = set()
    for node in graph.nodes:
        if node.op != "call_function" or node.target not in (aten.sub.Tensor, aten.sub_.Tensor) or len(node.args) != 2:
            continue
        a, b = node.args
        for pool, x in ((a, b), (b, a)):
            if isinstance(pool, Node) and pool.target in POOLS and pool.args[0] is x and len(pool.users) == 1:
                out |= {pool, node}
    return out


def _feeding_logs(graph) -> set:
    """The log ops and every node whose value reaches one through ops that keep parameters."""
    tight, todo = set(), [n for n in graph.nodes if n.op == "call_function" and n.target in LOGS]
    while todo:
        node = todo.pop()
        if node in tight:
            continue
        tight.add(node)
        x = node.args[0] if node.args else None
        if isinstance(x, Node) and x.op == "call_function" and (
                node.target in LOGS or node.target in PASS_THROUGH or node.target in TAILS):
            todo.append(x)
    return tight


def _tail_supported(node: Node) -> bool:
    # clamp(min=None) etc. are fine; a tensor-valued bound is not a tail.
    return all(not isinstance(a, Node) for a in node.args[1:])


def _flat_args(node: Node) -> list:
    out = []
    for a in list(node.args) + list(node.kwargs.values()):
        if isinstance(a, (list, tuple)):
            out.extend(a)
        else:
            out.append(a)
    return out


_INDEX_VIEWS = {aten.unsqueeze.default, aten.view.default, aten.reshape.default, aten.clone.default,
                aten.squeeze.dim, aten.flatten.using_ints, aten.expand.default}
_SELECTIONS = {aten.topk.default, aten.sort.default, aten.sort.stable, aten.max.dim, aten.min.dim,
               aten.argsort.default, aten.argsort.stable}


def _index_bound(node: Node) -> int | None:
    """For a float cast of an integer tensor whose largest value the graph bounds (i % c by a positive
    constant, the indices of a top-k / sort / max(dim)): that bound; None otherwise."""
    if node.target not in FLOAT_CASTS or not node.args or not isinstance(node.args[0], Node):
        return None
    x = node.args[0]
    val = x.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dtype.is_floating_point or val.dtype == torch.bool:
        return None
    while x.target in _INDEX_VIEWS:
        x = x.args[0]
    if x.target in (aten.remainder.Scalar,) and isinstance(x.args[1], int) and x.args[1] > 0:
        return x.args[1] - 1
    source = x.args[0] if x.target is operator.getitem and x.args[1] == 1 else x
    if source.target in _SELECTIONS:
        shape = source.args[0].meta["val"].shape
        dim_at = 2 if source.target is aten.topk.default else 1     # topk(x, k, dim), sort / max(x, dim)
        dim = source.args[dim_at] if len(source.args) > dim_at else source.kwargs.get("dim", -1)
        return int(shape[int(dim) % len(shape)]) - 1
    return None


def _integer_spec(dtype: str, bound: int):
    """Integers 0..bound exactly: scale 1, the zero point at the type's minimum when they fit."""
    if dtype == "int16":
        return FixedQParamsQuantizationSpec(torch.int16, 1.0, 0, -32767, 32767, torch.per_tensor_symmetric) \
            if bound <= 32767 else _act_spec("int16")
    return FixedQParamsQuantizationSpec(torch.int8, 1.0, -128, -128, 127, torch.per_tensor_affine) \
        if bound <= 255 else _act_spec("int8")
