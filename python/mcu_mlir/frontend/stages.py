"""The frontend's stages in order: export and graph rewrites, PT2E quantization (calibrated and
chosen per layer), lowering to integer TOSA; `import_model` runs them."""

from __future__ import annotations

import contextlib
import copy
import functools
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import progress
from ..cpu_paths import reproducibly
from .._mlir import ir, new_context
from ..diagnostics import UserError
from .graph.torch_export import export, fold_batch_norm, inline_autocast_regions
from .quantize.calibration import (_as_tensor, calibration_samples, carry_state, held_out, random_calibration,
                                   sqnr_samples)
from .quantize.int4_choice import choose_int4


@dataclass
class TensorQuant:
    shape: tuple
    dtype: str            # "int8" | "int16" | "float32" | "int32" (token ids and other indices: no scale)
    scale: float = 1.0
    zero_point: int = 0
    # An output concat whose parts keep their own parameters (frontend/quantize/concat_parts.py):
    # [start, stop, scale, zero_point] per slice along `axis`; scale and zero_point are then 0.
    parts: tuple = ()
    axis: int = 0

    def _per_part(self, x, fn):
        x = np.asarray(x)
        slices = [np.take(x, range(start, stop), axis=self.axis) for start, stop, _, _ in self.parts]
        return np.concatenate([fn(v, scale, zp) for v, (_, _, scale, zp) in zip(slices, self.parts)], self.axis)

    def quantize(self, x: np.ndarray) -> np.ndarray:
        if self.dtype == "float32":
            return np.asarray(x, np.float32)
        if self.dtype == "int32":
            return np.asarray(x).astype(np.int32)
        info = np.iinfo(self.dtype)

        def one(v, scale, zp):
            return np.clip(np.round(np.asarray(v, np.float64) / scale) + zp, info.min, info.max).astype(self.dtype)
        return self._per_part(x, one) if self.parts else one(x, self.scale, self.zero_point)

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        if self.dtype in ("float32", "int32"):
            return np.asarray(q, np.float32)

        def one(v, scale, zp):
            return ((np.asarray(v, np.float64) - zp) * scale).astype(np.float32)
        return self._per_part(q, one) if self.parts else one(q, self.scale, self.zero_point)


@dataclass
class FrontendResult:
    module: ir.Module
    inputs: list[TensorQuant]
    outputs: list[TensorQuant]
    layers: list[dict] = field(default_factory=list)
    reference: Callable = None
    eager: Callable = None
    quantize: str = "int8"
    torch_text: str | None = None   # torch-dialect IR (float path only), for --emit torch
    layer_sqnr: list[dict] = field(default_factory=list)   # frontend/quantize/layer_sqnr.py, per quantized op
    activation_ranges: dict = field(default_factory=dict)   # int8 ranges chosen (frontend/quantize/range_choice.py)
    sqnr_measured_on: str = ""      # which inputs layer_sqnr ran on (calibration.sqnr_samples)
    int4: dict = field(default_factory=dict)   # int4 weights: which layers and why (quantize/int4_choice.py)


_DTYPE_NAME = {"i8": "int8", "i16": "int16", "i32": "int32", "f32": "float32"}
_INDEX_DTYPES = ("torch.int32", "torch.int64")


def _check_model(model, example_inputs):
    import torch
    if not isinstance(model, torch.nn.Module):
        raise UserError(f"expected a torch.nn.Module, got {type(model).__name__}")
    training = [n for n, m in model.named_modules() if m.training]
    if training:
        where = training[0] or "the top-level module"
        raise UserError(f"the model is in training mode ({where}); call model.eval() before compiling")
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    out = []
    for i, x in enumerate(example_inputs):
        if isinstance(x, np.ndarray):
            x = torch.from_numpy(x)
        if not isinstance(x, torch.Tensor):
            raise UserError(f"example input {i} is a {type(x).__name__}, not a tensor")
        if x.dtype != torch.float32 and str(x.dtype) not in _INDEX_DTYPES:
            raise UserError(f"example input {i} has dtype {x.dtype}; mcu-mlir models take float32 inputs "
                            "(or int32 / int64 indices such as token ids)")
        out.append(x)
    return tuple(out)


@contextlib.contextmanager
def flush_denormals():
    """Subnormal floats as zero while calibrating: the same observed ranges, many times faster.

    Observers floor every scale at eps = 2**-24, far above the subnormal range (< 2**-126), so a
    range that differs only by subnormals gives the same scale and zero point. Subnormals are
    common in calibration (activations decaying through random or badly scaled layers), and x86
    computes them in microcode: a calibration pass can be 40x slower with them.
    """
    import torch
    was_on = _flush_denormal_enabled()
    supported = torch.set_flush_denormal(True)
    try:
        yield supported
    finally:
        if supported and not was_on:
            torch.set_flush_denormal(False)


def _flush_denormal_enabled() -> bool:
    import torch
    tiny = torch.tensor([1e-40], dtype=torch.float32)   # subnormal; a multiply flushes it when on
    return bool((tiny * 1.0).item() == 0.0)


def _runner(fn, example_inputs):
    import torch

    def run(inputs: list[np.ndarray]) -> list[np.ndarray]:
        with torch.no_grad():
            out = fn(*[_as_tensor(x, like) for x, like in zip(inputs, example_inputs)])
        import torch.utils._pytree as pytree
        return [o.detach().float().numpy() for o in pytree.tree_leaves(out)]
    return run


def bias_corrected(gm, samples, spec=None):
    """A copy of the float graph `gm` whose conv / linear biases absorb the mean error of their
    int8 weights (or of those `spec`, a function of the layer, gives) on `samples`
    (frontend/quantize/bias_correction.py)."""
    from .quantize.bias_correction import correct_biases
    from .quantize.quantizer import weight_spec
    corrected = copy.deepcopy(gm)
    with flush_denormals(), progress.step("correcting biases for weight rounding"):
        correct_biases(corrected, samples, spec or weight_spec())
    return corrected


def _quantize_graph(gm, samples, quantize: str, int16_nodes=frozenset(), measure_on=None, prepare_from=None,
                    ranges: str = "minmax", factors=None, own_ranges=frozenset(), bounded=frozenset(),
                    own_scales=frozenset(), int4_nodes=frozenset(), prepare_from4=None):
    """PT2E on a copy of `prepare_from` (default `gm`; left as it is): calibrated on `samples`,
    converted, and its per-layer SQNR against `gm` measured on `measure_on` (the first samples
    when not given). int16_nodes: ops kept in int16 in an int8 model; ranges: of the int8
    activations (quantizer.RANGES); own_ranges: means with a range of their own (shrinking_means.py);
    bounded: int16 ops without headroom; own_scales: output concats whose parts keep their own
    parameters (quantizer.CmsisNNQuantizer); int4_nodes: layers with int4 weights, whose biases come
    from `prepare_from4` (corrected for int4 rounding)."""
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from .graph.attention_masks import keep_masks_in_simulation
    from .quantize.bias_range import fit_biases
    from .quantize.int4_weights import with_int4_biases
    from .quantize.layer_sqnr import layer_sqnr
    from .quantize.quantizer import CmsisNNQuantizer
    prepare_from = with_int4_biases(prepare_from, prepare_from4, int4_nodes)
    try:
        prepared = prepare_pt2e(copy.deepcopy(gm if prepare_from is None else prepare_from),
                                CmsisNNQuantizer(quantize, int16_nodes, ranges, own_ranges, bounded,
                                                 own_scales, int4_nodes))
    except Exception as e:
        raise UserError(f"quantization failed: {type(e).__name__}: {e}") from None
    with torch.no_grad():
        with flush_denormals(), progress.step(f"calibrating on {len(samples)} samples"):
            for s in samples:
                prepared(*s)
            fit_biases(prepared)
            converted = convert_pt2e(prepared)
        with progress.step("measuring per-layer SQNR"):
            rows = layer_sqnr(gm, keep_masks_in_simulation(converted),
                              measure_on if measure_on is not None else samples, factors)
    return converted, rows


@reproducibly      # calibration's float results become the C's scales: the same code on every CPU
def import_model(model, example_inputs: tuple, options=None, /, *, timings: dict | None = None,
                 **fields) -> FrontendResult:
    """PyTorch model -> TOSA (integer when quantize is "int8"/"int16", float when "none").

    `options` is the compile's CompileOptions (keyword arguments set its fields); the frontend reads
    quantize, calibration, int16_layers, target_sqnr_db, state, bias_correction, activation_ranges,
    range_equalization and emit.

    int16_layers (int8 models): "auto" keeps in int16 the layers whose int8 error dominates until the
    output's SQNR against the float model reaches target_sqnr_db (frontend/quantize/mixed_precision.py), or
    a list of layer names (module paths, or graph node names) to keep in int16.

    With emit="torch", `result.torch_text` also holds the quantized graph in the torch dialect (the
    PT2E QDQ form, for `--emit torch`); the float path always keeps its torch-dialect IR.

    state: (input, output) index pairs of a streaming model: calibrated with the state carried
    (carry_state), and each state output quantized as its input so the integers carry over.

    bias_correction: each conv / linear bias absorbs the mean error its rounded weights make on
    the calibration data (frontend/quantize/bias_correction.py).

    activation_ranges: "minmax", "histogram" or "auto" (int8 activations; the histogram's where the
    output measures at least 1 dB closer to the float model, frontend/quantize/range_choice.py).

    range_equalization: "on", "off" or "auto" (int8: layers' output channels scaled toward one range
    through ReLUs and residual adds where the output measures at least 1 dB closer,
    frontend/quantize/range_equalization.py).
    """
    from ..options import resolve
    options = resolve(options, fields)
    _check_frontend_options(options)
    quantize, int16_layers = options.quantize, options.int16_layers
    timings = timings if timings is not None else {}
    example_inputs = _check_model(model, example_inputs)
    t0 = time.perf_counter()
    ep, gm = _export_and_rewrite(model, example_inputs, quantize)
    timings["export"] = time.perf_counter() - t0
    eager = _runner(model, example_inputs)
    if quantize == "none":
        return _float_result(ep, example_inputs, eager, timings)

    samples, measure_on = _calibration_data(model, gm, example_inputs, options.calibration, options.state)
    int16, excluded = _layers_set_by_hand(gm, quantize, int16_layers)
    variants = _float_variants(gm, samples, quantize, options.range_equalization)
    int4, corrected = _bias_corrections(gm, variants, samples, options, int16)
    own_ranges = frozenset()
    if quantize == "int8":
        from .quantize.shrinking_means import shrinking_means
        own_ranges = shrinking_means(gm, samples)
    own_scales, parted, int16 = _wide_output_concats(gm, samples, quantize, int16)
    rangeses = ("minmax", "histogram") if options.activation_ranges == "auto" else (options.activation_ranges,)
    candidates = {", ".join(filter(None, (r, v))): (v, r) for v in variants for r in rangeses}

    def bound(variant, ranges):
        """_quantize_graph for one candidate: its bias-corrected float graph, ranges and factors."""
        return functools.partial(_quantize_graph, measure_on=measure_on, prepare_from=corrected[variant][0],
                                 ranges=ranges, factors=variants[variant][1], own_ranges=own_ranges,
                                 bounded=parted, own_scales=own_scales,
                                 int4_nodes=int4, prepare_from4=corrected[variant][1])

    def quantize_as(label):
        variant, ranges = candidates[label]
        return bound(variant, ranges)(variants[variant][0], samples, quantize, int16)
    label, all_int8, ranges_report = _choose_candidate(candidates, quantize_as, quantize, timings)
    variant, ranges = candidates[label]
    gm, quantize_graph = variants[variant][0], bound(variant, ranges)
    int4_choice = functools.partial(choose_int4, gm, int4, measure_on, options, corrected[variant][1])
    converted, sqnr_rows, lowered, int4_report = _quantize_and_lower(
        gm, samples, quantize_graph, options, int16, excluded, parted, all_int8, timings, int4_choice)
    module = lowered.module
    t0 = time.perf_counter()
    try:
        module.operation.verify()
    except ir.MLIRError as e:   # a bug in the lowering, not in the user's model
        raise RuntimeError(f"internal error: the lowered TOSA does not verify: {e}") from None
    timings["import"] = time.perf_counter() - t0

    torch_text = None
    if options.emit == "torch":
        t0 = time.perf_counter()
        torch_text = _torch_dialect_text(converted, example_inputs)
        timings["import"] += time.perf_counter() - t0

    def tq(info):
        shape, elem, scale, zp, *parted = info
        axis, parts = parted[0] if parted else (0, ())
        return TensorQuant(tuple(shape), _DTYPE_NAME[elem], float(scale), int(zp),
                           tuple(tuple(p) for p in parts), axis)
    # The reference is PT2E's model with masked places at probability 0, as the integer softmax has them.
    from .graph.attention_masks import keep_masks_in_simulation
    reference = _runner(keep_masks_in_simulation(converted), example_inputs)
    return FrontendResult(module, [tq(i) for i in lowered.inputs], [tq(o) for o in lowered.outputs],
                          lowered.layers, reference, eager, quantize, torch_text, sqnr_rows, ranges_report,
                          sqnr_measured_on=_measured_on(options.calibration, len(samples), len(measure_on)),
                          int4=int4_report)


def _measured_on(calibration, calibrated: int, measured: int) -> str:
    """report.json's quantization.sqnr_measured_on."""
    if random_calibration(calibration):
        return f"{measured} random inputs, none of them calibrated on"
    if held_out(list(range(calibrated + measured))) == measured:
        return f"the last {measured} samples of the calibration data, held out of the calibration"
    return f"the first {measured} calibration samples (under 8 given: none held out)"


def _wide_output_concats(gm, samples, quantize, int16):
    """Output concats of parts of very different ranges (boxes in pixels and scores): (the concats
    whose parts keep their own scales, the ops of those kept in int16 instead (int8 models: a concat
    with ops after it), the int16 ops with them)."""
    from .quantize.concat_parts import wide_output_concats
    own_scales, parted = wide_output_concats(gm, samples)
    if quantize != "int8":
        return own_scales, frozenset(), int16
    parted = parted - int16
    return own_scales, parted, int16 | parted


def _check_frontend_options(options):
    """The frontend's option values checked before the minutes an export and a calibration take."""
    if options.quantize not in ("int8", "int16", "none"):
        raise UserError(f"quantize must be int8, int16 or none, not '{options.quantize}'")
    from .quantize.quantizer import RANGES
    activation_ranges, range_equalization = options.activation_ranges, options.range_equalization
    if activation_ranges != "auto" and activation_ranges not in RANGES:
        raise UserError(f"activation ranges must be auto or one of {', '.join(RANGES)}, not '{activation_ranges}'")
    if range_equalization not in ("auto", "on", "off"):
        raise UserError(f"range equalization must be auto, on or off, not '{range_equalization}'")


def _export_and_rewrite(model, example_inputs, quantize):
    """torch.export of the model, then (quantized paths) the graph rewrites into the forms the lowering
    knows: (the exported program, its graph module)."""
    from .graph.composite_ops import (decompose_composites, division_by_constant_as_product, l2_normalize_as_rms_norm, magnitude_as_hypot, square_as_product, stft_magnitude_as_conv, vector_norm_as_square_sum)
    from .graph.complex_ops import complex_as_real_parts
    from .graph.grouped_attention import repeated_heads_broadcast
    from .graph.norms_by_hand import layer_norm_by_hand_as_layer_norm, rms_norm_by_hand_as_rms_norm
    from .graph.attention_masks import fills_as_where, masks_as_fills
    from .graph.constant_folding import drop_empty_concat_operands, fold_parameter_subgraphs
    from .graph.reparameterize import merge_parallel_convs
    from .graph.identity_ops import drop_identity_ops, drop_infinite_bounds
    from .graph.concat_split import concat_splits_as_parts
    from .quantize.channel_scales import channel_scales_as_depthwise
    from .graph.decompose import decompose_modules, fold_sequential_batch_norms, sequential_folds_hold
    with progress.step("exporting the model (torch.export)"):
        # int8: each LSTM step one op, lowered to CMSIS-NN's LSTM arithmetic (int16 / float: gates).
        to_export = decompose_modules(model, lstm_kernel=quantize == "int8")
        folded, folds = fold_sequential_batch_norms(to_export) if quantize != "none" else (to_export, {})
        ep = export(folded, example_inputs)
        if not sequential_folds_hold(ep.graph, folds):
            ep = export(to_export, example_inputs)
        if quantize != "none":
            ep = decompose_composites(ep)
        gm = ep.module()
        inline_autocast_regions(gm)
        gm = fold_batch_norm(gm)
        if quantize != "none":
            drop_identity_ops(gm)
            concat_splits_as_parts(gm)                # YOLO26's parts split back from their concat
            stft_magnitude_as_conv(gm)
            complex_as_real_parts(gm)                 # the FFTs and complex values left
            drop_empty_concat_operands(gm)
            fold_parameter_subgraphs(gm)
            drop_infinite_bounds(gm)                  # after folding: a bound may be computed (expanded)
            merge_parallel_convs(gm)                  # after folding: a layer scale may be computed
            channel_scales_as_depthwise(gm)           # the scales no conv or linear took
            masks_as_fills(gm)
            fills_as_where(gm)                        # the finite fills no softmax reads
            division_by_constant_as_product(gm)
            l2_normalize_as_rms_norm(gm)
            layer_norm_by_hand_as_layer_norm(gm)      # before RMSNorm's: its x is a centred value
            rms_norm_by_hand_as_rms_norm(gm)
            repeated_heads_broadcast(gm)
            vector_norm_as_square_sum(gm)
            square_as_product(gm)
            magnitude_as_hypot(gm)
    return ep, gm


def _float_result(ep, example_inputs, eager, timings) -> FrontendResult:
    """The float path (quantize "none"): torch-mlir imports the exported program as it is."""
    from .graph.float_import import import_float
    t0 = time.perf_counter()
    module, ins, outs, torch_text = import_float(ep, example_inputs)
    timings["import"] = time.perf_counter() - t0
    timings.setdefault("quantize", 0.0)
    timings.setdefault("legalize", 0.0)
    return FrontendResult(module, [TensorQuant(s, "float32") for s in ins],
                          [TensorQuant(s, "float32") for s in outs], [], eager, eager, "none",
                          torch_text)


def _calibration_data(model, gm, example_inputs, calibration, state):
    """(the calibration samples, the samples SQNR is measured on): each finite on the graph that is
    quantized, and with a streaming model's state carried."""
    from .lowering.lookup import index_bounds
    bounds = index_bounds(gm)
    exported = _runner(gm, example_inputs)

    def finite(sample) -> bool:      # on the graph that is quantized (the model's own code may branch on a mask)
        return all(np.isfinite(o).all() for o in exported(list(sample)))
    samples = calibration_samples(calibration, example_inputs, bounds, finite)
    for s in samples:
        if len(s) != len(example_inputs):
            raise UserError(f"a calibration sample has {len(s)} inputs, the model takes {len(example_inputs)}")
    measure_on = sqnr_samples(calibration, example_inputs, bounds, finite, samples)
    if not random_calibration(calibration) and held_out(samples):
        samples = samples[:len(samples) - held_out(samples)]        # the held-out ones calibrate nothing
    if state:
        samples, measure_on = carry_state(model, samples, state), carry_state(model, measure_on, state)
    return samples, measure_on


def _layers_set_by_hand(gm, quantize, int16_layers):
    """(the nodes int16_layers names to keep in int16, the nodes "auto" must leave in int8)."""
    int16 = frozenset()
    if int16_layers and int16_layers != "auto" and quantize == "int8":
        from .quantize.mixed_precision import nodes_of_layers
        int16 = nodes_of_layers(gm, int16_layers)
    excluded = frozenset()
    if int16_layers == "auto" and quantize == "int8":
        from .quantize.mixed_precision import int8_only
        excluded = int8_only(gm)
    return int16, excluded


def _bias_corrections(gm, variants, samples, options, int16):
    """(the layers given int4 weights by hand, {variant: (its float graph with biases corrected for
    int8 weights, the same for int4 weights)}); None where no correction is wanted or no int4."""
    from .quantize.int4_choice import int4_by_hand, int4_requested
    from .quantize.int4_weights import int4_capable, int4_weight_spec
    int4 = int4_by_hand(gm, options, int16)

    def int4_spec(node):
        return int4_weight_spec(node) if node.name in capable else None
    out = {}
    for v, (g, _) in variants.items():
        capable = int4_capable(g)
        out[v] = (bias_corrected(g, samples) if options.bias_correction else None,
                  bias_corrected(g, samples, int4_spec) if options.bias_correction and int4_requested(options)
                  else None)
    return int4, out


def _float_variants(gm, samples, quantize, range_equalization) -> dict:
    """The float graphs quantized, by name -> (graph, factors): the model's, and with its channel
    ranges equalized (int8)."""
    variants = {"": (gm, None)}
    if quantize == "int8" and range_equalization != "off":
        from .quantize.range_equalization import equalized
        found = equalized(gm, samples)
        if found is not None:
            variants = {"equalized": found} if range_equalization == "on" else {**variants, "equalized": found}
    return variants


def _choose_candidate(candidates, quantize_as, quantize, timings):
    """(the chosen candidate's label, its int8 model (converted, rows) when the choice quantized it,
    the ranges report): the candidate whose output measures closest to the float model."""
    # all_int8: the int8 model the choice quantized, (converted, rows), used once.
    label, all_int8, ranges_report = next(iter(candidates)), None, {}
    if quantize == "int8" and len(candidates) > 1:
        from .quantize.range_choice import choose
        t0 = time.perf_counter()
        label, all_int8, figures = choose(candidates, quantize_as)
        timings["quantize"] = time.perf_counter() - t0
        ranges_report = {"output_sqnr_db": {k: round(v, 2) for k, v in figures.items()}}
    variant, ranges = candidates[label]
    if quantize == "int8":
        ranges_report.update(chosen=ranges, equalized=bool(variant))
    return label, all_int8, ranges_report


def _quantize_and_lower(gm, samples, quantize_graph, options, int16, excluded, parted, all_int8, timings,
                        int4_choice):
    """(converted graph, SQNR rows, lowered TOSA, int4 report): quantized and lowered again while an
    op put in int16 (by auto or concat_parts) has no int16 lowering, with the ops of its kind left
    in int8. int4_choice(quantize_graph, samples, int16, (converted, rows)) gives the int4 layers
    (frontend/quantize/int4_choice.py)."""
    from .lowering.fx_to_tosa import lower_quantized_graph
    quantize, int16_layers = options.quantize, options.int16_layers
    while True:
        t0 = time.perf_counter()
        if all_int8 is not None and int16_layers != "auto":
            (converted, sqnr_rows), all_int8 = all_int8, None
        elif int16_layers == "auto" and quantize == "int8":
            from .quantize.mixed_precision import choose_int16_layers
            converted, sqnr_rows, int16 = choose_int16_layers(gm, samples, quantize_graph, options.target_sqnr_db,
                                                              excluded, all_int8=all_int8, base=parted - excluded)
        else:
            converted, sqnr_rows = quantize_graph(gm, samples, quantize, int16)
        converted, sqnr_rows, int4_report = int4_choice(quantize_graph, samples, int16, (converted, sqnr_rows))
        timings["quantize"] = timings.get("quantize", 0.0) + time.perf_counter() - t0
        t0 = time.perf_counter()
        try:
            with progress.step("lowering the quantized graph to TOSA"):
                lowered = lower_quantized_graph(converted, quantize, new_context(), options.state)
            break
        except UserError as e:
            # An op auto or concat_parts put in int16 that has no int16 lowering: ops of its kind
            # stay int8; choose again.
            node = getattr(e, "node", None)
            if node in parted and int16_layers != "auto":
                warnings.warn(f"the output concat's parts share one int8 scale: '{node}' has no int16 lowering "
                              "(layer_sqnr.md measures each part)", stacklevel=3)
                int16, parted = int16 - parted, frozenset()
                continue
            if int16_layers != "auto" or node not in int16:
                raise
            from .quantize.mixed_precision import same_kind
            excluded = excluded | same_kind(gm, e.node)
    from .quantize.concat_parts import warn_collapsed_parts
    warn_collapsed_parts(sqnr_rows)
    timings["legalize"] = time.perf_counter() - t0
    return converted, sqnr_rows, lowered, int4_report


def _torch_dialect_text(converted, example_inputs) -> str:
    """The PT2E-converted graph in torch-mlir's torch dialect (quantized_decomposed ops kept)."""
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_importer import FxImporter
    from torch_mlir.fx import export_and_import
    ctx = new_context()
    torch_d.register_dialect(ctx)
    try:
        module = export_and_import(export(converted, example_inputs), output_type="raw", func_name="main",
                                   fx_importer=FxImporter(context=ctx), decomposition_table={})
    except UserError:
        raise
    except Exception as e:
        raise UserError(f"torch-mlir could not import the quantized graph: {type(e).__name__}: {e}") from None
    return module.operation.get_asm()
