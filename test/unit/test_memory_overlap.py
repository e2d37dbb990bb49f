"""The output-over-input distance of mcu-plan-memory's overlap rule, checked against a simulation.

The oracle replays the kernel's access order over one shared region: output placed D bytes before
the input, pixels in raster order in steps of at most G pixels (any split), the writes of a step
taken as happening before its reads (the worst interleaving). The computed D must never let a read
see a byte a write replaced; without dilation D - 1 must, so the bound is also tight.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mcu_mlir.passes.transforms import memory_overlap as mo
from mcu_mlir.passes.transforms.plan_memory import _Buffer


def first_read(g: mo.ConvGeometry, n: int, oy: int, ox: int) -> int | None:
    """Offset (in the input) of the first byte the window of output pixel (n, oy, ox) reads."""
    reads = [((n * g.h + iy) * g.w + ix) * g.c * g.in_elem_bytes
             for iy in (oy * g.stride_h - g.pad_top + ky * g.dilation_h for ky in range(g.kernel_h))
             for ix in (ox * g.stride_w - g.pad_left + kx * g.dilation_w for kx in range(g.kernel_w))
             if 0 <= iy < g.h and 0 <= ix < g.w]
    return min(reads, default=None)


def clobbered_read(g: mo.ConvGeometry, group: int, d: int) -> bool:
    """True when, for some split of the raster order into steps of at most `group` pixels, a pixel
    reads an input byte that the output (placed d bytes before the input) already overwrote."""
    out_px = g.out_c * g.out_elem_bytes
    pixels = [(n, oy, ox) for n in range(g.n) for oy in range(g.out_h) for ox in range(g.out_w)]
    firsts = [first_read(g, *px) for px in pixels]
    for align in range(group):
        bounds = sorted({0, len(pixels)} | set(range(align, len(pixels), group)))
        for lo, hi in zip(bounds, bounds[1:]):
            # Worst order inside a step: every write of the step before any of its reads.
            written_end = hi * out_px
            if any(f is not None and d + f < written_end for f in firsts[lo:hi]):
                return True
    return False


def shapes():
    @st.composite
    def build(draw):
        k_h, k_w = draw(st.integers(1, 5)), draw(st.integers(1, 5))
        s_h, s_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        d_h, d_w = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
        p_t, p_l = draw(st.integers(0, k_h // 2 * d_h)), draw(st.integers(0, k_w // 2 * d_w))
        p_b, p_r = draw(st.integers(0, k_h // 2 * d_h)), draw(st.integers(0, k_w // 2 * d_w))
        out_h = (h + p_t + p_b - (k_h - 1) * d_h - 1) // s_h + 1
        out_w = (w + p_l + p_r - (k_w - 1) * d_w - 1) // s_w + 1
        if out_h < 1 or out_w < 1:
            out_h = out_w = 1
            k_h = k_w = d_h = d_w = 1
            p_t = p_l = 0
        return mo.ConvGeometry(n=draw(st.integers(1, 2)), h=h, w=w, c=draw(st.integers(1, 8)),
                               out_h=out_h, out_w=out_w, out_c=draw(st.integers(1, 12)),
                               kernel_h=k_h, kernel_w=k_w, stride_h=s_h, stride_w=s_w,
                               pad_top=p_t, pad_left=p_l, dilation_h=d_h, dilation_w=d_w,
                               in_elem_bytes=draw(st.sampled_from([1, 2])),
                               out_elem_bytes=draw(st.sampled_from([1, 2, 4])))
    return build()


@settings(max_examples=100, deadline=None)
@given(g=shapes(), group=st.sampled_from([1, 2, 4, 7]))
def test_distance_is_safe_and_tight(g, group):
    d = mo.overlap_distance(g, group)
    assert not clobbered_read(g, group, d)
    # D is the least safe distance when every window's top-left tap is read (no dilation).
    if d > 0 and g.dilation_h == g.dilation_w == 1:
        assert clobbered_read(g, group, d - 1)


def test_depthwise_3x3_same_padding():
    # A pixel's window starts one row and one pixel back: with steps of 4 pixels the output must
    # trail the input by one row + 1 + 4 pixels.
    g = mo.ConvGeometry(n=1, h=25, w=5, c=64, out_h=25, out_w=5, out_c=64, kernel_h=3, kernel_w=3,
                        pad_top=1, pad_left=1)
    assert mo.overlap_distance(g, 4) == (5 + 1 + 4) * 64
    assert mo.overlap_distance(g, 1) == (5 + 1 + 1) * 64


def test_expanding_1x1_puts_the_input_at_the_end():
    # 8 -> 48 channels over 48x48: the output overtakes the input only at the last step, so the
    # input sits (almost) at the end of the output: the pair spans the output plus one step.
    g = mo.ConvGeometry(n=1, h=48, w=48, c=8, out_h=48, out_w=48, out_c=48, kernel_h=1, kernel_w=1)
    d = mo.overlap_distance(g, 4)
    assert d == g.output_bytes - g.input_bytes + 4 * 8
    assert mo.pair_extent(g.input_bytes, g.output_bytes, d) == g.output_bytes + 32


def test_whole_image_step_refuses_overlap():
    # A kernel that sweeps every pixel once per output-channel block (arm_nn_mat_mult_nt_t_s8
    # on DSP / C) writes the first pixel's outputs while every input pixel is still to be read:
    # the only safe distance puts the output entirely before the input.
    g = mo.ConvGeometry(n=1, h=8, w=8, c=16, out_h=8, out_w=8, out_c=16, kernel_h=1, kernel_w=1)
    pixels = g.out_h * g.out_w
    assert mo.overlap_distance(g, pixels) == g.output_bytes
    assert clobbered_read(g, pixels, g.output_bytes - 1)


def _buffers(sizes_and_times):
    return [_Buffer(size, start, end) for size, start, end in sizes_and_times]


def test_placement_honours_pairs_and_bound():
    # a (dies at op 1) -> b (op 1) with D = 32; c is an unrelated scratch at op 1.
    a, b, c = _buffers([(256, 0, 1), (256, 1, 2), (64, 1, 1)])
    pairs = {(id(b), id(a)): 32}
    bound = mo.overlap_bound([a, b, c], pairs, 3)
    assert bound == 256 + 32 + 64
    arena = mo.place([a, b, c], pairs, bound)
    mo.check_placement([a, b, c], pairs)
    assert arena == bound
    assert a.offset - b.offset >= 32


def test_check_placement_rejects_an_unsafe_overlap():
    a, b = _buffers([(256, 0, 1), (256, 1, 2)])
    pairs = {(id(b), id(a)): 32}
    a.offset, b.offset = 16, 0  # only 16 bytes ahead: the output would clobber unread input
    with pytest.raises(AssertionError):
        mo.check_placement([a, b], pairs)
    # Without the pair any shared byte is refused.
    a.offset, b.offset = 64, 0
    with pytest.raises(AssertionError):
        mo.check_placement([a, b], {})


def test_random_plans_are_valid():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = int(rng.integers(2, 12))
        specs = []
        for i in range(n):
            start = int(rng.integers(0, 10))
            specs.append((int(rng.integers(1, 300)), start, start + int(rng.integers(0, 4))))
        bufs = _buffers(specs)
        pairs = {}
        bufs_by_id = {id(b): b for b in bufs}
        for out in bufs:
            for inp in bufs:
                # At most one pair per op, as the planner makes them.
                if inp is not out and inp.end == out.start and rng.random() < 0.5 and \
                        all(bufs_by_id[o].start != out.start for o, _ in pairs):
                    pairs[(id(out), id(inp))] = int(rng.integers(0, 20)) * 16
        arena = mo.place(bufs, pairs, 0, random_orders=4)
        mo.check_placement(bufs, pairs)
        assert arena >= max(b.offset + b.size for b in bufs)
        assert arena >= mo.overlap_bound(bufs, pairs, 16)


def test_dataclass_is_frozen():
    g = mo.ConvGeometry(1, 2, 2, 1, 2, 2, 1, 1, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.h = 3
