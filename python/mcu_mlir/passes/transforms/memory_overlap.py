"""Output-over-input overlap for the static memory plan.

A kernel that computes its output pixels in raster order (NHWC) and reads a pixel's receptive
field before writing that pixel may write its output over the part of its input that no later
pixel reads. With the output placed `D` bytes before the input (output offset = input offset - D),
the kernel never overwrites an input byte it still needs when

    D >= max over p of  write_end(p + G - 1) - need_start(p)

where write_end(q) is the end of the output bytes of pixels 0..q, need_start(p) the first input
byte read by any pixel >= p, and G the most output pixels a kernel step computes together (it may
read all of them before writing any, or interleave: the bound holds for any order inside a step).
Any larger D is safe too. Which kernels qualify, and with which G, each kernel op states
(`overlap_step(core)`, read from the kernel sources: CMSIS-NN commit 99f736a, lib/portable);
a kernel op that states none gets no overlap.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

from ...ir.values import elem_bytes as _elem_bytes, i32_array as _ints, shape as _shape
from ...dialects import cmsisnn
from ...dialects.kernel_op import enum_attr
from ...kernel_library import cmsis_padding

ALIGN = 16


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclasses.dataclass(frozen=True)
class ConvGeometry:
    """An NHWC window op: input [n, h, w, c] -> output [n, out_h, out_w, out_c]."""
    n: int
    h: int
    w: int
    c: int
    out_h: int
    out_w: int
    out_c: int
    kernel_h: int
    kernel_w: int
    stride_h: int = 1
    stride_w: int = 1
    pad_top: int = 0
    pad_left: int = 0
    dilation_h: int = 1
    dilation_w: int = 1
    in_elem_bytes: int = 1
    out_elem_bytes: int = 1

    @property
    def input_bytes(self) -> int:
        return self.n * self.h * self.w * self.c * self.in_elem_bytes

    @property
    def output_bytes(self) -> int:
        return self.n * self.out_h * self.out_w * self.out_c * self.out_elem_bytes


def overlap_distance(g: ConvGeometry, group: int) -> int:
    """The smallest D (bytes, unaligned) such that the output may start D bytes before the input.

    `group` is the most consecutive output pixels (raster order over n, y, x) one kernel step
    handles. need_start(p) is bounded below by the first byte of the top-left pixel of p's
    window clamped into the image, which is no later than any byte p reads.
    """
    oy = np.arange(g.out_h)
    ox = np.arange(g.out_w)
    row_lo = np.clip(oy * g.stride_h - g.pad_top, 0, g.h - 1)  # first input row a window reads
    col_lo = np.clip(ox * g.stride_w - g.pad_left, 0, g.w - 1)
    per_image = (row_lo[:, None] * g.w + col_lo[None, :]).reshape(-1)
    batch = np.arange(g.n)[:, None] * (g.h * g.w)
    first_pixel = (batch + per_image[None, :]).reshape(-1).astype(np.int64)
    # Windows of later pixels may start earlier (the next row's first column): take the suffix min.
    need_start = np.minimum.accumulate(first_pixel[::-1])[::-1] * (g.c * g.in_elem_bytes)
    pixels = first_pixel.size
    last_written = np.minimum(np.arange(pixels) + group, pixels)  # pixels 0..p+group-1 written
    write_end = last_written.astype(np.int64) * (g.out_c * g.out_elem_bytes)
    return max(int(np.max(write_end - need_start)), 0)


def geometry(op) -> ConvGeometry | None:
    """The window geometry of an NHWC window kernel op (operands input, filter [O, H, W, I] or
    [1, H, W, C]; attributes stride, padding, dilation), None unless input and output are 4-D."""
    inp, out = op.operands[0], op.results[0]
    in_shape, out_shape = _shape(inp), _shape(out)
    if len(in_shape) != 4 or len(out_shape) != 4:
        return None
    sizes = {"in_elem_bytes": _elem_bytes(inp), "out_elem_bytes": _elem_bytes(out)}
    f = _shape(op.operands[1])
    stride, pad, dil = (_ints(op.attributes[k]) for k in ("stride", "padding", "dilation"))
    return ConvGeometry(*in_shape, out_shape[1], out_shape[2], out_shape[3], f[1], f[2],
                        stride[0], stride[1], pad[0], pad[1], dil[0], dil[1], **sizes)


def op_overlap_distance(op, core) -> int | None:
    """Aligned D for this kernel op on `core`, or None when its output may not overlap its input
    (unknown access order, or no saving over separate buffers)."""
    group = op.overlap_step(core)
    g = geometry(op) if group is not None else None
    if g is None:
        return None
    d = _align(overlap_distance(g, group))
    if d >= _align(g.output_bytes):
        return None  # the output would end before the input starts: nothing shared
    return d


def pair_extent(in_size: int, out_size: int, distance: int) -> int:
    """Bytes an overlapped input/output pair spans (output at input - distance)."""
    return max(out_size, distance + in_size)


# ---------------------------------------------------------------------------------------------
# Placement with overlap pairs


def forbidden_starts(b, p, pairs: dict) -> tuple[int, int]:
    """Open interval of offsets `b` may not start at, given `p` placed and live at the same time."""
    d = pairs.get((id(b), id(p)))
    if d is not None:  # b is the output, p the input it may overwrite
        return p.offset - d, p.offset + _align(p.size)
    d = pairs.get((id(p), id(b)))
    if d is not None:  # b is the input, p its output
        return p.offset - _align(b.size), p.offset + d
    return p.offset - _align(b.size), p.offset + _align(p.size)


def _place_one(b, placed, pairs) -> int:
    intervals = [forbidden_starts(b, p, pairs) for p in placed
                 if p.start <= b.end and b.start <= p.end]
    # Just above a forbidden range, or right at its low end (tight below a buffer, or an output
    # exactly D below its input).
    candidates = sorted({0} | {x for lo_hi in intervals for x in lo_hi if x > 0 and x % ALIGN == 0})
    best = None
    for s in candidates:
        if any(lo < s < hi for lo, hi in intervals):
            continue
        slack = min((lo - s for lo, _ in intervals if lo >= s), default=None)
        key = (0, slack, s) if slack is not None else (1, 0, s)
        if best is None or key < best[0]:
            best = (key, s)
    return best[1]


def place(buffers: list, pairs: dict, lower_bound: int = 0, random_orders: int = 64) -> int:
    """Best-fit placement where `pairs[(id(out), id(in))] = D` lets `out` start D or more bytes
    before `in` over it; several orders tried (deterministic), the smallest arena kept."""
    keys = [
        lambda b: (-b.size, b.start),
        lambda b: (-(b.end - b.start), -b.size),
        lambda b: (b.start, -b.size),
        lambda b: (-b.size * (b.end - b.start + 1), b.start),
        # Latest first: a chain of overlapped layers then stacks upward, each input D above its
        # output, instead of needing a free gap below every input.
        lambda b: (-b.start, -b.size),
        lambda b: (-b.end, -b.start, -b.size),
    ]
    orders = [sorted(buffers, key=key) for key in keys]
    rng = random.Random(len(buffers))
    for _ in range(random_orders if len(buffers) <= 400 else 0):
        order = list(orders[0])
        rng.shuffle(order)
        orders.append(order)
    best, best_offsets = None, None
    for order in orders:
        if best is not None and best <= _align(lower_bound):
            break
        placed = []
        for b in order:
            b.offset = _place_one(b, placed, pairs)
            placed.append(b)
        total = max((p.offset + _align(p.size) for p in placed), default=0)
        if best is None or total < best:
            best, best_offsets = total, {id(b): b.offset for b in buffers}
    for b in buffers:
        b.offset = best_offsets[id(b)]
    return best or 0


def check_placement(buffers: list, pairs: dict) -> None:
    """Raises AssertionError when two buffers live at once share bytes the rule does not allow."""
    for i, b in enumerate(buffers):
        assert b.offset >= 0 and b.offset % ALIGN == 0, b
        for p in buffers[:i]:
            if p.start <= b.end and b.start <= p.end:
                lo, hi = forbidden_starts(b, p, pairs)
                assert not lo < b.offset < hi, (b, p)


def overlap_bound(buffers: list, pairs: dict, n_times: int) -> int:
    """Most bytes that must exist at once when every pair overlaps as the rule allows."""
    by_id = {id(b): b for b in buffers}
    saving_at: dict[int, int] = {}
    for (out_id, in_id), d in pairs.items():
        out, inp = by_id[out_id], by_id[in_id]
        t = out.start  # the pair's op; the input dies there
        saved = out.size + inp.size - pair_extent(inp.size, out.size, d)
        saving_at[t] = max(saving_at.get(t, 0), saved)
    return max((sum(b.size for b in buffers if b.start <= t <= b.end) - saving_at.get(t, 0)
                for t in range(n_times)), default=0)


def find_pairs(ops, index: dict, group_of: dict, buffer_of_group: dict, view_offset: dict,
               core, slower_variants: bool = False) -> dict:
    """(id(output buffer), id(input buffer)) -> D for every kernel op whose arena output may
    overlap its arena input: the input (all its views) dies at that op and the output's buffer
    starts there. slower_variants (prefer=memory): a kernel whose own order forbids the overlap
    may take a slower variant that allows it (DSP: a 1x1 conv row by row, 2x or more the cycles)."""
    pairs = {}
    for i, op in enumerate(ops):
        if not op.operands:
            continue
        src, out = op.operands[0], op.results[0]
        gin, gout = group_of.get(src), group_of.get(out)
        if gin is None or gout is None or gin is gout:
            continue
        if gout["values"][0] != out:
            continue  # written into a part of a larger buffer (a band of a concat's result)
        bin_, bout = buffer_of_group.get(id(gin)), buffer_of_group.get(id(gout))
        if bin_ is None or bout is None:
            continue  # a graph input or output: the caller's buffer
        if view_offset.get(src, 0) or view_offset.get(out, 0):
            continue
        if bin_.end != i or bout.start != i:
            continue
        if any(operand == src for operand in list(op.operands)[1:]):
            continue
        d = op_overlap_distance(op, core)
        overlapping = op.overlap_algorithm(core) if d is None and slower_variants else None
        if overlapping is not None:
            kept = op.attributes["algorithm"]
            op.attributes["algorithm"] = enum_attr(cmsisnn.ConvAlgorithm, overlapping)
            d = None if cmsis_padding.op_problem(op, core) else op_overlap_distance(op, core)
            if d is None:
                op.attributes["algorithm"] = kept
        if d is not None:
            pairs[(id(bout), id(bin_))] = d
    return pairs
