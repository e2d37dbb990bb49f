"""The inputs a model is calibrated and measured on: random draws (index inputs within their
embeddings' bounds), a file or folder of samples, a streaming model's carried state."""

from __future__ import annotations

import os
import warnings

import numpy as np

from ... import diagnostics
from ...diagnostics import UserError


DEFAULT_CALIBRATION_SAMPLES = 32


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
            # Advice in the caller's terms: the command line's option, or the Python keyword.
            how = (f"{diagnostics.tool} --calibration FILE.npz|DIR" if diagnostics.tool else
                   "calibration= an .npz file, a directory or an iterable of samples")
            warnings.warn(f"no calibration data: calibrating on {n} random normal samples; pass real "
                          f"inputs for usable accuracy ({how})", stacklevel=3)
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


def carry_state(model, samples, pairs) -> list[tuple]:
    """`samples` in time order as a streaming model sees them: each state input (pairs of input,
    output index) is the previous sample's state output, zeros for the first, so the state inputs
    are calibrated on the values the model will hand itself."""
    import torch
    import torch.utils._pytree as pytree
    from ...io_quant import check_state
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


# Real data of at least this many samples gives a quarter (at most layer_sqnr.SAMPLES) of them, its
# last ones, to the SQNR measurement and calibrates on the rest; fewer are all calibrated on and
# the SQNR is measured on the first of them (report.json's quantization.sqnr_measured_on says which).
HOLD_OUT_FROM = 8


def random_calibration(calibration) -> bool:
    return calibration is None or isinstance(calibration, int) or (
        isinstance(calibration, str) and calibration.strip().isdigit())


def held_out(samples: list[tuple]) -> int:
    """How many of the real calibration samples (their last ones) the SQNR is measured on instead."""
    from .layer_sqnr import SAMPLES
    return min(SAMPLES, len(samples) // 4) if len(samples) >= HOLD_OUT_FROM else 0


def sqnr_samples(calibration, example_inputs, index_bounds=None, usable=None, samples=None) -> list[tuple]:
    """Inputs the per-layer SQNR is measured on, none of them calibrated on where that can be (ranges
    fitted to a sample flatter its SQNR): with random calibration, other random samples than the
    calibration's; with real data (`samples`, all of it), its held-out last ones, or its first
    ones when it is too small to hold any out."""
    import torch

    from .layer_sqnr import SAMPLES
    if random_calibration(calibration):
        g = torch.Generator().manual_seed(1)
        return _draws(example_inputs, g, index_bounds, SAMPLES, usable)
    samples = calibration_samples(calibration, example_inputs) if samples is None else samples
    k = held_out(samples)
    return samples[len(samples) - k:] if k else samples[:SAMPLES]
