"""Where PyTorch's resizes read, and the TOSA RESIZE parameters that read there.

PyTorch computes a nearest resize's source row in float (floor(dst * scale), the scale in / out or
1 / scale_factor rounded to float32), so the rows it reads are taken from PyTorch itself: its own
kernel run on each axis's row numbers. A TOSA RESIZE is used where one reads exactly those rows;
elsewhere the lowering gathers them (constant indices)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import torch

# Denominators tried for a scale factor's ratio (PyTorch samples at 1 / scale_factor).
MAX_RATIO_DENOMINATOR = 1024


def pytorch_nearest_sources(node, in_shape) -> list[list[int]]:
    """Per spatial axis of NC[H]W, the input row PyTorch's nearest resize `node` reads for each
    output row: its own kernel run on a tensor holding each row's number."""
    spatial = tuple(int(d) for d in in_shape[2:])
    sources = []
    for axis in range(len(spatial)):
        rows = torch.arange(spatial[axis], dtype=torch.float32)
        view = [1] * len(spatial)
        view[axis] = spatial[axis]
        x = rows.reshape(1, 1, *view).expand(1, 1, *spatial).contiguous()
        y = node.target(x, *node.args[1:], **node.kwargs)
        line = y[(0, 0) + tuple(slice(None) if a == axis else 0 for a in range(len(spatial)))]
        sources.append([int(v) for v in line.tolist()])
    return sources


def tosa_fits(n: int, d: int, offset: int, border: int) -> bool:
    """TOSA 1.0's limits on one axis's RESIZE parameters."""
    return 0 < n <= 2048 and 0 < d < 16 * n and -n <= offset < 16 * n and -16 * n <= border < n


def nearest_params(out_size: int, in_size: int, ratio: Fraction):
    """TOSA RESIZE (scale_n, scale_d, offset, border) reading floor(dst / ratio) for an output
    `ratio` times the input (out_size / in_size, or a scale factor)."""
    a, b = ratio.numerator, ratio.denominator
    n, d, offset = 2 * a, 2 * b, -a
    border = (out_size - 1) * d - (in_size - 1) * n + offset
    return n, d, offset, border


def tosa_nearest_sources(params, out_size: int, in_size: int) -> list[int]:
    """The rows a nearest TOSA RESIZE with `params` reads (the specification's rule)."""
    n, d, offset, _ = params
    rows = []
    for o in range(out_size):
        v = o * d + offset
        i = v // n
        i += 2 * (v - i * n) >= n
        rows.append(min(max(i, 0), in_size - 1))
    return rows


def scale_ratio(scale) -> Fraction | None:
    """A scale factor as a small fraction, or None: PyTorch samples at float32(1 / scale)."""
    if scale is None or float(scale) <= 0:
        return None
    inverse = float(np.float32(1.0 / float(scale)))
    step = Fraction(inverse).limit_denominator(MAX_RATIO_DENOMINATOR)
    if abs(float(step) - inverse) > 1e-6 * inverse:
        return None
    return 1 / step


def nearest_resize_params(out_size: int, in_size: int, scale, want: list[int]):
    """TOSA RESIZE parameters reading exactly the rows `want` (PyTorch's), or None."""
    ratios = [Fraction(out_size, in_size)]
    from_scale = scale_ratio(scale)
    if from_scale is not None:
        ratios.insert(0, from_scale)
    for ratio in ratios:
        params = nearest_params(out_size, in_size, ratio)
        if tosa_fits(*params) and tosa_nearest_sources(params, out_size, in_size) == want:
            return params
    return None


def bilinear_params(out_size: int, in_size: int, align_corners: bool, ratio: Fraction | None = None):
    """TOSA RESIZE (scale_n, scale_d, offset, border) sampling where PyTorch's bilinear does:
    src = dst * (in - 1) / (out - 1) with align_corners, else (dst + 0.5) / ratio - 0.5, the
    ratio out / in or the scale factor given (TOSA clamps a negative source to the first row, as
    PyTorch does). None where no exact ratio fits TOSA's limits."""
    if align_corners:
        if in_size == 1 or out_size == 1:
            return None
        n, d, offset = out_size - 1, in_size - 1, 0
    else:
        ratio = ratio if ratio is not None else Fraction(out_size, in_size)
        a, b = ratio.numerator, ratio.denominator
        n, d, offset = 2 * a, 2 * b, b - a
    g = math.gcd(math.gcd(n, d), abs(offset)) if offset else math.gcd(n, d)
    n, d, offset = n // g, d // g, offset // g
    border = (out_size - 1) * d - (in_size - 1) * n + offset
    if n >= 2048 or d >= 2048 or not -n <= offset < 16 * n or not -16 * n <= border < n:
        return None
    return n, d, offset, border
