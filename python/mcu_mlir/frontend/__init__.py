"""PyTorch -> TOSA: torch.export, the CMSIS-NN PT2E quantizer, QDQ legalisation to integer TOSA.

    result = import_model(model, (x,), quantize="int8", calibration=100)
    result.module      # integer TOSA (NCHW, as PyTorch lays it out)
    result.inputs      # TensorQuant per graph input (what the caller quantizes with)

Float models (`quantize="none"`) go through torch-mlir's FX importer and its TOSA pipeline.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import importlib.util
import logging
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import progress
from ..cpu_paths import reproducibly
from .._mlir import ir, new_context
from .. import diagnostics as _diagnostics
from ..diagnostics import UserError
from .torch_export import export, fold_batch_norm, inline_autocast_regions  # noqa: F401  (the frontend's API)

DEFAULT_CALIBRATION_SAMPLES = 32

# torchao logs that its optional GPU extensions are absent, and torch that an enum torchao registers
# is deprecated: neither concerns a CPU-only int8 flow, and both would bury our own messages.
if not _diagnostics.verbose:   # a tool's -v shows them
    logging.getLogger("torchao").setLevel(logging.ERROR)
    logging.getLogger("torch.utils._pytree").setLevel(logging.ERROR)


@dataclass
class TensorQuant:
    shape: tuple
    dtype: str            # "int8" | "int16" | "float32" | "int32" (token ids and other indices: no scale)
    scale: float = 1.0
    zero_point: int = 0

    def quantize(self, x: np.ndarray) -> np.ndarray:
        if self.dtype == "float32":
            return np.asarray(x, np.float32)
        if self.dtype == "int32":
            return np.asarray(x).astype(np.int32)
        info = np.iinfo(self.dtype)
        q = np.round(np.asarray(x, np.float64) / self.scale) + self.zero_point
        return np.clip(q, info.min, info.max).astype(self.dtype)

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        if self.dtype in ("float32", "int32"):
            return np.asarray(q, np.float32)
        return ((np.asarray(q, np.float64) - self.zero_point) * self.scale).astype(np.float32)


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
    layer_sqnr: list[dict] = field(default_factory=list)   # frontend/layer_sqnr.py, per quantized op
    activation_ranges: dict = field(default_factory=dict)   # int8 ranges chosen (frontend/range_choice.py)


_DTYPE_NAME = {"i8": "int8", "i16": "int16", "i32": "int32", "f32": "float32"}
_INDEX_DTYPES = ("torch.int32", "torch.int64")


# torch modules that torch.export and PT2E import on first use (module or function level).
_TORCH_MODULES = (
    "torch.export._trace", "torch._export.non_strict_utils", "torch._functorch.aot_autograd",
    "torch._inductor.compiler_bisector", "torch._inductor.sizevars",
    "torch._inductor.fx_passes.dedupe_symint_uses",
    "torch._export.passes.replace_set_grad_with_hop_pass",
    "torch._export.passes.replace_autocast_with_hop_pass", "torch._export.passes._node_metadata_hook",
    "torch._subclasses.schema_check_mode", "torch.fx.experimental.validator",
    "torchao.quantization.pt2e.quantize_pt2e", "torchao.quantization.pt2e.utils",
)


def preload_torch() -> float:
    """Imports what torch.export and torchao's PT2E load on first use; returns the seconds spent.

    This is torch's own start-up, paid once per process (0 s afterwards), so the driver reports it
    apart from the compile time of a model. A module this torch does not have is skipped.
    """
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _TORCH_MODULES:
            if name not in sys.modules:
                try:
                    importlib.import_module(name)
                except ImportError:
                    pass
    return time.perf_counter() - t0


def load_factory(spec: str):
    """`path/file.py:FACTORY` (or `package.module:FACTORY`) -> the nn.Module FACTORY() returns."""
    import torch

    from . import python_only_imports
    python_only_imports.install()
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UserError(f"'{spec}': expected FILE.py:FACTORY")
    try:
        if path.endswith(".py") or os.path.sep in path:
            if not os.path.exists(path):
                raise UserError(f"'{path}': no such file")
            mod_name = "mcu_user_model_" + os.path.splitext(os.path.basename(path))[0]
            module_spec = importlib.util.spec_from_file_location(mod_name, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[mod_name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(path)
    except UserError:
        raise
    except Exception as e:  # the user's file failed to import
        raise UserError(f"'{path}' failed to import: {type(e).__name__}: {e}") from None
    factory = getattr(module, name, None)
    if factory is None:
        raise UserError(f"'{path}' has no '{name}'")
    try:
        model = factory() if callable(factory) and not isinstance(factory, torch.nn.Module) else factory
    except Exception as e:
        raise UserError(f"'{spec}' raised {type(e).__name__}: {e}") from None
    if not isinstance(model, torch.nn.Module):
        raise UserError(f"'{spec}' returned {type(model).__name__}, not a torch.nn.Module")
    return model


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


def random_inputs(example_inputs, generator, index_bounds=None) -> tuple:
    """One random sample shaped like the example inputs: normal floats; integer inputs (indices)
    uniform in [0, bound) with the bound of each (lowering/lookup.py's index_bounds), flags
    (attention masks) as a mask might be, or in the example's own range where no bound is known."""
    import torch
    out = []
    for x, bound in zip(example_inputs, list(index_bounds or []) + [None] * len(example_inputs)):
        if x.dtype.is_floating_point:
            out.append(torch.randn(x.shape, generator=generator))
            continue
        if bound == "flag":
            out.append(_random_flag(x, generator))
            continue
        low, high = (0, bound) if bound else (int(x.min()), int(x.max()) + 1)
        out.append(torch.randint(low, max(high, low + 1), tuple(x.shape), generator=generator, dtype=x.dtype))
    return tuple(out)


def _random_flag(x, generator):
    """A random 0 / 1 tensor shaped like `x`: all ones, ones up to a random length of the last axis
    then zeros (padding), or random bits, one kind drawn per sample."""
    import torch
    kind = int(torch.randint(0, 3, (1,), generator=generator))
    if kind == 0 or x.dim() == 0:
        return torch.ones(x.shape, dtype=x.dtype)
    if kind == 1:
        n = x.shape[-1]
        length = torch.randint(1, n + 1, tuple(x.shape[:-1]) + (1,), generator=generator)
        return (torch.arange(n) < length).to(x.dtype)
    return torch.randint(0, 2, tuple(x.shape), generator=generator, dtype=x.dtype)


def _draws(example_inputs, generator, index_bounds, count: int, usable=None) -> list[tuple]:
    """`count` random samples; with flags among the inputs, only those `usable` accepts (a mask
    that leaves a query nothing to attend to makes the float model's values NaN), each redrawn
    until it is."""
    samples = []
    flags = "flag" in list(index_bounds or [])
    for _ in range(count):
        for _attempt in range(32):
            s = random_inputs(example_inputs, generator, index_bounds)
            if not flags or usable is None or usable(s):
                break
        else:
            raise UserError("every random value drawn for the model's mask input gives NaN in the float model "
                            "(a query with nothing to attend to): pass calibration data")
        samples.append(s)
    return samples


def _as_tensor(x, like):
    """A calibration / test array as a tensor of the example input's kind (floats, or integer ids)."""
    import torch
    if like is not None and not like.dtype.is_floating_point:
        return torch.as_tensor(np.asarray(x)).to(like.dtype)
    return torch.as_tensor(np.asarray(x, np.float32))


def calibration_samples(calibration, example_inputs, index_bounds=None, usable=None) -> list[tuple]:
    """The calibration samples: the given ones, or random ones (the example first) that `usable`
    accepts where the model has a mask input (_draws)."""
    import torch
    if isinstance(calibration, str) and calibration.strip().isdigit():
        calibration = int(calibration)
    if isinstance(calibration, int) and calibration < 1:
        raise UserError(f"calibration needs at least one sample, not {calibration}")
    if calibration is None or isinstance(calibration, int):
        n = DEFAULT_CALIBRATION_SAMPLES if calibration is None else int(calibration)
        if calibration is None:
            warnings.warn(f"no calibration data: calibrating on {n} random normal samples; pass real "
                          "inputs for usable accuracy (mcu-compile --calibration FILE.npz|DIR; calibration= an .npz, a "
                          "directory or an iterable of samples from Python)",
                          stacklevel=3)
        g = torch.Generator().manual_seed(0)
        if "flag" in list(index_bounds or []):
            # No example first: a mask input's example (zeros, as mcu-compile makes integer
            # examples) may mask everything.
            return _draws(example_inputs, g, index_bounds, n, usable)
        samples = [tuple(x for x in example_inputs)]
        samples += _draws(example_inputs, g, index_bounds, max(0, n - 1))
        return samples
    if isinstance(calibration, (str, os.PathLike)):
        if os.path.isdir(calibration):
            files = sorted(f for f in os.listdir(calibration) if f.endswith((".npz", ".npy")))
            if not files:
                raise UserError(f"calibration directory '{calibration}' has no .npz or .npy file")
            samples = []
            for f in files:
                samples += _calibration_file(os.path.join(calibration, f), example_inputs)
            return samples
        return _calibration_file(calibration, example_inputs)
    samples = []
    for s in calibration:
        if not isinstance(s, (tuple, list)):
            s = (s,)
        samples.append(tuple(_as_tensor(x, like) for x, like in zip(s, list(example_inputs) + [None] * len(s))))
    if not samples:
        raise UserError("the calibration data is empty")
    return samples


def _calibration_file(path, example_inputs) -> list[tuple]:
    """An .npz (input0, input1, ... or its arrays in name order) or an .npy (one input): each array
    one sample of its input, or samples stacked along the batch dimension as users hold them
    (N x C x H x W for a 1 x C x H x W input), or stacked on a new leading dimension."""
    try:
        data = np.load(path)
    except Exception as e:
        raise UserError(f"calibration file '{path}': {e}") from None
    if isinstance(data, np.ndarray):
        named = {"input0": data}
    else:
        named = {k: data[k] for k in data.files}
    keys = [f"input{i}" for i in range(len(example_inputs))]
    if not all(k in named for k in keys):
        keys = sorted(named)[:len(example_inputs)]
    if len(keys) != len(example_inputs):
        raise UserError(f"calibration file '{path}' has {len(named)} arrays, the model takes {len(example_inputs)} inputs")
    arrays = []
    for k, x in zip(keys, example_inputs):
        a = np.asarray(named[k], np.float32 if x.dtype.is_floating_point else None)
        shape = tuple(x.shape)
        if a.ndim == len(shape) and a.shape[1:] == shape[1:] and shape[0] and a.shape[0] % shape[0] == 0:
            a = a.reshape((a.shape[0] // shape[0],) + shape)       # batches of the model's batch size
        if tuple(a.shape[1:]) != shape:
            raise UserError(f"calibration array '{k}' in '{path}' has shape {a.shape}; expected {shape}, "
                            f"(N, {', '.join(map(str, shape))}) or a multiple of the batch dimension")
        arrays.append(a)
    if len({a.shape[0] for a in arrays}) != 1:
        raise UserError(f"calibration file '{path}': its arrays hold different numbers of samples "
                        f"({', '.join(str(a.shape[0]) for a in arrays)})")
    return [tuple(_as_tensor(a[i], x) for a, x in zip(arrays, example_inputs))
            for i in range(arrays[0].shape[0])]


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


def carry_state(model, samples, pairs) -> list[tuple]:
    """`samples` in time order as a streaming model sees them: each state input (pairs of input,
    output index) is the previous sample's state output, zeros for the first, so the state inputs
    are calibrated on the values the model will hand itself."""
    import torch
    import torch.utils._pytree as pytree
    from ..io_quant import check_state
    with torch.no_grad():
        outs = pytree.tree_leaves(model(*samples[0]))
    check_state(pairs, [tuple(x.shape) for x in samples[0]], [tuple(o.shape) for o in outs])
    carried, state = [], None
    for sample in samples:
        sample = list(sample)
        for k, (i, _) in enumerate(pairs):
            sample[i] = torch.zeros_like(sample[i]) if state is None else state[k].reshape(sample[i].shape)
        with torch.no_grad():
            outs = pytree.tree_leaves(model(*sample))
        state = [outs[j].detach().clone() for _, j in pairs]
        carried.append(tuple(sample))
    return carried


def sqnr_samples(calibration, example_inputs, index_bounds=None, usable=None) -> list[tuple]:
    """Inputs the per-layer SQNR is measured on: with random calibration, other random samples than
    the calibration's (ranges fitted to a sample flatter its SQNR); with real data, its first ones."""
    import torch

    from .layer_sqnr import SAMPLES
    if calibration is None or isinstance(calibration, int) or (
            isinstance(calibration, str) and calibration.strip().isdigit()):
        g = torch.Generator().manual_seed(1)
        return _draws(example_inputs, g, index_bounds, SAMPLES, usable)
    return calibration_samples(calibration, example_inputs)[:SAMPLES]


def bias_corrected(gm, samples):
    """A copy of the float graph `gm` whose conv / linear biases absorb the mean error of their
    int8 weights on `samples` (frontend/bias_correction.py)."""
    from .bias_correction import correct_biases
    from .quantizer import weight_spec
    corrected = copy.deepcopy(gm)
    with flush_denormals(), progress.step("correcting biases for weight rounding"):
        correct_biases(corrected, samples, weight_spec())
    return corrected


def _quantize_graph(gm, samples, quantize: str, int16_nodes=frozenset(), measure_on=None, prepare_from=None,
                    ranges: str = "minmax", factors=None, own_ranges=frozenset(), bounded=frozenset()):
    """PT2E on a copy of `prepare_from` (default `gm`; left as it is): calibrated on `samples`,
    converted, and its per-layer SQNR against `gm` measured on `measure_on` (the first samples
    when not given). int16_nodes: ops kept in int16 in an int8 model; ranges: of the int8
    activations (quantizer.RANGES); own_ranges: means with a range of their own (shrinking_means.py);
    bounded: int16 ops without headroom (quantizer.CmsisNNQuantizer)."""
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from .attention_masks import keep_masks_in_simulation
    from .layer_sqnr import layer_sqnr
    from .quantizer import CmsisNNQuantizer
    try:
        prepared = prepare_pt2e(copy.deepcopy(gm if prepare_from is None else prepare_from),
                                CmsisNNQuantizer(quantize, int16_nodes, ranges, own_ranges, bounded))
    except Exception as e:
        raise UserError(f"quantization failed: {type(e).__name__}: {e}") from None
    with torch.no_grad():
        with flush_denormals(), progress.step(f"calibrating on {len(samples)} samples"):
            for s in samples:
                prepared(*s)
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
    output's SQNR against the float model reaches target_sqnr_db (frontend/mixed_precision.py), or
    a list of layer names (module paths, or graph node names) to keep in int16.

    With emit="torch", `result.torch_text` also holds the quantized graph in the torch dialect (the
    PT2E QDQ form, for `--emit torch`); the float path always keeps its torch-dialect IR.

    state: (input, output) index pairs of a streaming model: calibrated with the state carried
    (carry_state), and each state output quantized as its input so the integers carry over.

    bias_correction: each conv / linear bias absorbs the mean error its rounded weights make on
    the calibration data (frontend/bias_correction.py).

    activation_ranges: "minmax", "histogram" or "auto" (int8 activations; the histogram's where the
    output measures at least 1 dB closer to the float model, frontend/range_choice.py).

    range_equalization: "on", "off" or "auto" (int8: layers' output channels scaled toward one range
    through ReLUs and residual adds where the output measures at least 1 dB closer,
    frontend/range_equalization.py).
    """
    from ..options import resolve
    options = resolve(options, fields)
    quantize, calibration, state = options.quantize, options.calibration, options.state
    int16_layers, target_sqnr_db = options.int16_layers, options.target_sqnr_db
    bias_correction, torch_ir = options.bias_correction, options.emit == "torch"
    activation_ranges, range_equalization = options.activation_ranges, options.range_equalization
    if quantize not in ("int8", "int16", "none"):
        raise UserError(f"quantize must be int8, int16 or none, not '{quantize}'")
    from .quantizer import RANGES
    if activation_ranges != "auto" and activation_ranges not in RANGES:
        raise UserError(f"activation ranges must be auto or one of {', '.join(RANGES)}, not '{activation_ranges}'")
    if range_equalization not in ("auto", "on", "off"):
        raise UserError(f"range equalization must be auto, on or off, not '{range_equalization}'")
    timings = timings if timings is not None else {}
    example_inputs = _check_model(model, example_inputs)
    t0 = time.perf_counter()
    from .composite_ops import (decompose_composites, division_by_constant_as_product, l2_normalize_as_rms_norm,
                                magnitude_as_hypot, square_as_product, stft_magnitude_as_conv,
                                vector_norm_as_square_sum)
    from .grouped_attention import repeated_heads_broadcast
    from .norms_by_hand import layer_norm_by_hand_as_layer_norm, rms_norm_by_hand_as_rms_norm
    from .attention_masks import fills_as_where, masks_as_fills
    from .constant_folding import drop_empty_concat_operands, fold_parameter_subgraphs
    from .reparameterize import merge_parallel_convs
    from .identity_ops import drop_identity_ops, drop_infinite_bounds
    from .channel_scales import channel_scales_as_depthwise
    from .decompose import decompose_modules, fold_sequential_batch_norms, sequential_folds_hold
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
            stft_magnitude_as_conv(gm)
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
    timings["export"] = time.perf_counter() - t0
    eager = _runner(model, example_inputs)
    if quantize == "none":
        from .float_import import import_float
        t0 = time.perf_counter()
        module, ins, outs, torch_text = import_float(ep, example_inputs)
        timings["import"] = time.perf_counter() - t0
        timings.setdefault("quantize", 0.0)
        timings.setdefault("legalize", 0.0)
        return FrontendResult(module, [TensorQuant(s, "float32") for s in ins],
                              [TensorQuant(s, "float32") for s in outs], [], eager, eager, "none",
                              torch_text)

    from .fx_to_tosa import lower_quantized_graph
    from .lowering.lookup import index_bounds
    bounds = index_bounds(gm)
    exported = _runner(gm, example_inputs)

    def finite(sample) -> bool:      # on the graph that is quantized (the model's own code may branch on a mask)
        return all(np.isfinite(o).all() for o in exported(list(sample)))
    samples = calibration_samples(calibration, example_inputs, bounds, finite)
    for s in samples:
        if len(s) != len(example_inputs):
            raise UserError(f"a calibration sample has {len(s)} inputs, the model takes {len(example_inputs)}")
    measure_on = sqnr_samples(calibration, example_inputs, bounds, finite)
    if state:
        samples, measure_on = carry_state(model, samples, state), carry_state(model, measure_on, state)
    int16 = frozenset()
    if int16_layers and int16_layers != "auto" and quantize == "int8":
        from .mixed_precision import nodes_of_layers
        int16 = nodes_of_layers(gm, int16_layers)
    excluded = frozenset()
    if int16_layers == "auto" and quantize == "int8":
        from .mixed_precision import int8_only
        excluded = int8_only(gm)
    # The float graphs quantized: the model's, and with its channel ranges equalized (int8).
    variants = {"": (gm, None)}
    if quantize == "int8" and range_equalization != "off":
        from .range_equalization import equalized
        found = equalized(gm, samples)
        if found is not None:
            variants = {"equalized": found} if range_equalization == "on" else {**variants, "equalized": found}
    corrected = {v: bias_corrected(g, samples) if bias_correction else None for v, (g, _) in variants.items()}
    own_ranges = frozenset()
    if quantize == "int8":
        from .shrinking_means import shrinking_means
        own_ranges = shrinking_means(gm, samples)
    # Output concats of parts of very different ranges (boxes in pixels and scores) in int16.
    parted = frozenset()
    if quantize == "int8":
        from .concat_parts import wide_output_concats
        parted = wide_output_concats(gm, samples) - int16
        int16 = int16 | parted
    rangeses = ("minmax", "histogram") if activation_ranges == "auto" else (activation_ranges,)
    candidates = {", ".join(filter(None, (r, v))): (v, r) for v in variants for r in rangeses}

    def bound(variant, ranges):
        """_quantize_graph for one candidate: its bias-corrected float graph, ranges and factors."""
        return functools.partial(_quantize_graph, measure_on=measure_on, prepare_from=corrected[variant],
                                 ranges=ranges, factors=variants[variant][1], own_ranges=own_ranges,
                                 bounded=parted)

    def quantize_as(label):
        variant, ranges = candidates[label]
        return bound(variant, ranges)(variants[variant][0], samples, quantize, int16)
    # all_int8: the int8 model the choice quantized, (converted, rows), used once.
    label, all_int8, ranges_report = next(iter(candidates)), None, {}
    if quantize == "int8" and len(candidates) > 1:
        from .range_choice import choose
        t0 = time.perf_counter()
        label, all_int8, figures = choose(candidates, quantize_as)
        timings["quantize"] = time.perf_counter() - t0
        ranges_report = {"output_sqnr_db": {k: round(v, 2) for k, v in figures.items()}}
    variant, ranges = candidates[label]
    if quantize == "int8":
        ranges_report.update(chosen=ranges, equalized=bool(variant))
    gm, quantize_graph = variants[variant][0], bound(variant, ranges)
    while True:
        t0 = time.perf_counter()
        if all_int8 is not None and int16_layers != "auto":
            (converted, sqnr_rows), all_int8 = all_int8, None
        elif int16_layers == "auto" and quantize == "int8":
            from .mixed_precision import choose_int16_layers
            converted, sqnr_rows, int16 = choose_int16_layers(gm, samples, quantize_graph, target_sqnr_db, excluded,
                                                              all_int8=all_int8, base=parted - excluded)
        else:
            converted, sqnr_rows = quantize_graph(gm, samples, quantize, int16)
        timings["quantize"] = timings.get("quantize", 0.0) + time.perf_counter() - t0
        t0 = time.perf_counter()
        try:
            with progress.step("lowering the quantized graph to TOSA"):
                lowered = lower_quantized_graph(converted, quantize, new_context(), state)
            break
        except UserError as e:
            # An op auto or concat_parts put in int16 that has no int16 lowering: ops of its kind
            # stay int8; choose again.
            node = getattr(e, "node", None)
            if node in parted and int16_layers != "auto":
                warnings.warn(f"the output concat's parts share one int8 scale: '{node}' has no int16 lowering "
                              "(layer_sqnr.md measures each part)", stacklevel=2)
                int16, parted = int16 - parted, frozenset()
                continue
            if int16_layers != "auto" or node not in int16:
                raise
            from .mixed_precision import same_kind
            excluded = excluded | same_kind(gm, e.node)
    from .concat_parts import warn_collapsed_parts
    warn_collapsed_parts(sqnr_rows)
    module = lowered.module
    timings["legalize"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        module.operation.verify()
    except ir.MLIRError as e:   # a bug in the lowering, not in the user's model
        raise RuntimeError(f"internal error: the lowered TOSA does not verify: {e}") from None
    timings["import"] = time.perf_counter() - t0

    torch_text = None
    if torch_ir:
        t0 = time.perf_counter()
        torch_text = _torch_dialect_text(converted, example_inputs)
        timings["import"] += time.perf_counter() - t0

    def tq(info):
        shape, elem, scale, zp = info
        return TensorQuant(tuple(shape), _DTYPE_NAME[elem], float(scale), int(zp))
    # The reference is PT2E's model with masked places at probability 0, as the integer softmax has them.
    from .attention_masks import keep_masks_in_simulation
    reference = _runner(keep_masks_in_simulation(converted), example_inputs)
    return FrontendResult(module, [tq(i) for i in lowered.inputs], [tq(o) for o in lowered.outputs],
                          lowered.layers, reference, eager, quantize, torch_text, sqnr_rows, ranges_report)


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


__all__ = ["FrontendResult", "TensorQuant", "import_model", "load_factory", "export",
           "calibration_samples", "random_inputs", "carry_state", "preload_torch", "flush_denormals"]
