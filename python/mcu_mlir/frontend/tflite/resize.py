"""TFLite's RESIZE_NEAREST_NEIGHBOR and int8 RESIZE_BILINEAR, computing what TFLite Micro's
reference kernels compute. Every source row / column and weight depends on the shapes only, so
they are computed here and checked; the TOSA only moves and sums integers:
  nearest   GetNearestNeighbor's float32 source index per output row and column (align_corners,
            half_pixel_centers): one TOSA nearest resize when a TOSA (scale, offset) reads the
            same sources on both axes (checked index by index), else a gather per axis
  bilinear  ResizeBilinearInteger: 10-bit fixed-point positions (its rounded scale_10, C's
            truncating division), two sources per axis weighted in 1/1024: a TOSA bilinear resize
            with scale 1024 / scale_10 computes the same 20-bit sum where its ranges allow (else
            gathers of the four corners); then rounded half away from zero as TFLite's default
            double-rounding build does ((v +- 2**19) / 2**20): v + (v >> 31) rescaled by 2**-20,
            rounding half up.
Neither kernel requantizes: the output keeps the input's parameters, as TFLM copies the integers.
"""

from __future__ import annotations

import math

import numpy as np

from ...diagnostics import UserError
from .lower import Lowering
from .reader import Operator
from .shape import constant_ints, moved, options, take

ONE = 1 << 10       # ResizeBilinearInteger's fixed-point one


def _round_half_away(x: np.float32) -> int:
    return int(np.sign(x) * np.floor(np.abs(x) + np.float32(0.5)))


def _nearest_sources(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> list[int]:
    """GetNearestNeighbor for every output index, in float32 as TFLM computes it."""
    if align_corners and out_size > 1:
        scale = np.float32(in_size - 1) / np.float32(out_size - 1)
    else:
        scale = np.float32(in_size) / np.float32(out_size)
    offset = np.float32(0.5 if half_pixel else 0.0)
    sources = []
    for i in range(out_size):
        position = (np.float32(i) + offset) * scale
        value = _round_half_away(position) if align_corners else int(np.floor(position))
        value = min(value, in_size - 1)
        sources.append(max(0, value) if half_pixel else value)
    return sources


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncating toward zero)."""
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _bilinear_scale(in_size: int, out_size: int, align_corners: bool) -> int:
    """ResizeBilinearInteger's scale_10: in / out in 1/1024, rounded."""
    if align_corners and out_size > 1:
        return (ONE * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    return (ONE * in_size + out_size // 2) // out_size


def _bilinear_taps(in_size: int, out_size: int, align_corners: bool, half_pixel: bool):
    """(lower sources, upper sources, lower weights, upper weights) per output index, the weights
    in 1/1024 (ComputeInterpolationValuesInteger)."""
    scale = _bilinear_scale(in_size, out_size, align_corners)
    lower, upper, w_lower, w_upper = [], [], [], []
    for i in range(out_size):
        position = i * scale + scale // 2 - (1 << 9) if half_pixel else i * scale
        lo = max(_c_div(position, ONE), 0)
        lower.append(lo)
        upper.append(min(_c_div(position + ONE - 1, ONE), in_size - 1))
        w_upper.append(position - ONE * lo)
        w_lower.append(ONE - (position - ONE * lo))
    return lower, upper, w_lower, w_upper


def _sizes(lw: Lowering, op: Operator):
    """(input tensor, output tensor, (out height, out width), align_corners, half_pixel_centers)."""
    o = options(op, AlignCorners=False, HalfPixelCenters=False)
    xt, (out,) = moved(lw, op)
    if len(xt.shape) != 4:
        raise UserError(f"{lw.where(op)}: its input must be 4-D (NHWC), not {list(xt.shape)}")
    size = constant_ints(lw, op, 1, "size", 2)
    if min(size) < 1:
        raise UserError(f"{lw.where(op)}: its size {size} must be positive")
    align, half = bool(o["AlignCorners"]), bool(o["HalfPixelCenters"])
    if align and half and op.name == "RESIZE_BILINEAR":
        raise UserError(f"{lw.where(op)}: align_corners and half_pixel_centers are both set (TFLite Micro's "
                        "RESIZE_BILINEAR refuses the pair)")
    return xt, out, size, align, half


def _tosa_sources(out_size: int, in_size: int, n: int, d: int, offset: int) -> list[int] | None:
    """The source of every output index under TOSA RESIZE NEAREST_NEIGHBOR's (scale n / d,
    offset), as the portable kernel computes it; None where the parameters are outside the
    specification's ranges or read outside the axis."""
    border = (out_size - 1) * d - (in_size - 1) * n + offset
    if not (0 < n <= 2048 and 0 < d < 16 * n and -n <= offset < 16 * n and -n <= border < 16 * n):
        return None
    sources = []
    for o in range(out_size):
        v = o * d + offset
        i = v // n
        sources.append(min(i + 1, in_size - 1) if 2 * (v - i * n) >= n else max(i, 0))
    return sources if all(0 <= s < in_size for s in sources) else None


def _nearest_as_tosa(in_size: int, out_size: int, sources: list[int]):
    """(scale n, scale d, offset, border) of a TOSA nearest resize reading `sources`, or None: TFLM's
    three rules (floor(i * in / out), floor((i + 1/2) * in / out), round(i * (in - 1) / (out - 1)))
    are TOSA's rounding of these positions, checked against the float32 indices TFLM computes."""
    candidates = [(2 * out_size, 2 * in_size, -out_size), (2 * out_size, 2 * in_size, in_size - out_size)]
    if out_size > 1:
        candidates.append((out_size - 1, max(in_size - 1, 1), 0))
    for n, d, offset in candidates:
        g = math.gcd(n, d, offset)
        n, d, offset = n // g, d // g, offset // g
        if _tosa_sources(out_size, in_size, n, d, offset) == sources:
            return n, d, offset, (out_size - 1) * d - (in_size - 1) * n + offset
    return None


def _resize_nearest(lw: Lowering, op: Operator):
    """One TOSA nearest resize when both axes' sources are a TOSA rule's, else two gathers."""
    xt, _, size, align, half = _sizes(lw, op)
    x = lw.value(xt.index, op)
    sources = [_nearest_sources(xt.shape[a], size[a - 1], align, half) for a in (1, 2)]
    tosa = [_nearest_as_tosa(xt.shape[a], size[a - 1], sources[a - 1]) for a in (1, 2)]
    if None not in tosa:
        (ny, dy, oy, by), (nx, dx, ox, bx) = tosa
        return lw.w.resize(x, [ny, dy, nx, dx], [oy, ox], [by, bx], bilinear=False, out_hw=size)
    for axis in (1, 2):
        x = take(lw, x, axis, sources[axis - 1])
    return x


def _taps(lw: Lowering, op: Operator, xt, size, align: bool, half: bool):
    """Per axis (1, 2): its (lower sources, upper sources, lower weights, upper weights), every
    source inside the input (TFLM's kernel would read past it otherwise)."""
    taps = {}
    for axis in (1, 2):
        taps[axis] = _bilinear_taps(xt.shape[axis], size[axis - 1], align, half)
        if not all(0 <= s < xt.shape[axis] for s in taps[axis][0] + taps[axis][1]):
            raise UserError(f"{lw.where(op)}: its source rows along axis {axis} reach outside the input's "
                            f"{xt.shape[axis]} (TFLite Micro's kernel would read past it)")
    return taps


def _bilinear_as_tosa(in_size: int, out_size: int, align: bool, half: bool):
    """(scale n, scale d, offset, border) of the TOSA bilinear resize that computes TFLM's
    integers along one axis, or None: n = 1024 and d = TFLM's scale_10 make TOSA's position
    o * d + offset TFLM's, its two sources and weights (n - frac, frac) TFLM's (a source TFLM
    clamps to 0 TOSA clamps too; where TFLM's upper source equals the lower, TOSA's weighs 0), as
    long as the parameters are inside the specification's ranges (a downscale by more than 2 is not)."""
    scale = _bilinear_scale(in_size, out_size, align)
    offset = scale // 2 - (1 << 9) if half else 0
    border = (out_size - 1) * scale - (in_size - 1) * ONE + offset
    if not (0 < scale < 16 * ONE and -ONE <= offset < 16 * ONE and -ONE <= border < 16 * ONE):
        return None
    return ONE, scale, offset, border


def _corners(lw: Lowering, x, taps, size):
    """TFLM's output_20 from gathers: the four corners of every output, widened to int32, times the
    products of their row and column weights (constants [1, OH, OW, 1]), summed. The column
    gathers read the widened rows (no int8 gather that a pass could take for a nearest resize)."""
    (lo_y, hi_y, wlo_y, whi_y), (lo_x, hi_x, wlo_x, whi_x) = taps[1], taps[2]
    weights = {}
    for rows, w_rows in ((lo_y, wlo_y), (hi_y, whi_y)):
        for cols, w_cols in ((lo_x, wlo_x), (hi_x, whi_x)):
            key = (tuple(rows), tuple(cols))
            weights[key] = weights.get(key, 0) + np.outer(w_rows, w_cols).astype(np.int64)
    total = None
    for (rows, cols), w in weights.items():
        picked = take(lw, x, 1, list(rows))
        n, h, width, c = picked.shape
        wide = lw.w.cast(lw.w.reshape(picked, (n * h, width, c)), "i32")
        index = lw.w.const(np.tile(np.asarray(cols, np.int64), (n * h, 1)), "i32", (n * h, len(cols)))
        corner = lw.w.reshape(lw.w.gather(wide, index), (n, h, len(cols), c))
        term = lw.w.mul(corner, lw.w.const(w.reshape(1, *size, 1), "i32", (1, *size, 1)))
        total = term if total is None else lw.w.add(total, term)
    return total


def _resize_bilinear(lw: Lowering, op: Operator):
    """TFLM's output_20 (a TOSA bilinear resize where its parameters reach, else gathers), rounded
    half away from zero to the output's integers."""
    xt, out, size, align, half = _sizes(lw, op)
    x = lw.value(xt.index, op)
    taps = _taps(lw, op, xt, size, align, half)
    tosa = [_bilinear_as_tosa(xt.shape[a], size[a - 1], align, half) for a in (1, 2)]
    if None not in tosa:
        (ny, dy, oy, by), (nx, dx, ox, bx) = tosa
        total = lw.w.resize(x, [ny, dy, nx, dx], [oy, ox], [by, bx], bilinear=True, out_hw=size)
    else:
        total = _corners(lw, x, taps, size)
    # Round half away from zero: a negative value one lower, then rounded half up (2**11 / 2**31:
    # TOSA's rescale takes |value| < 2**(shift - 1), and |output_20| < 2**28).
    total = lw.w.add(total, lw.w.arithmetic_right_shift(total, lw.w.scalar(31, 4), round=False))
    return lw.w.rescale(total, [1 << 11], [31], 0, 0, out.elem, double_round=False)


LOWER = {"RESIZE_NEAREST_NEIGHBOR": _resize_nearest, "RESIZE_BILINEAR": _resize_bilinear}
