"""Permutation algebra for layouts.

A value's *layout* is a permutation `p`: its stored (physical) tensor is `transpose(logical, p)`, so
physical dim `i` is logical dim `p[i]`. `tosa.transpose(x, perms=t)` gives `y` with dim `i` = x's dim `t[i]`.
Two layouts of a shape are interchangeable when they keep the non-unit dims in the same order: the
bytes in memory are then identical and only a reshape separates them.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

Perm = tuple[int, ...]


def identity(rank: int) -> Perm:
    return tuple(range(rank))


def inverse(p: Perm) -> Perm:
    out = [0] * len(p)
    for i, d in enumerate(p):
        out[d] = i
    return tuple(out)


def compose(outer: Perm, inner: Perm) -> Perm:
    """transpose(transpose(x, outer), inner) == transpose(x, compose(outer, inner))."""
    return tuple(outer[i] for i in inner)


def channels_last(rank: int) -> Perm:
    """NCHW -> NHWC for rank 4, NCW -> NWC for rank 3 (N, spatial..., C)."""
    return (0, *range(2, rank), 1) if rank >= 3 else identity(rank)


def physical_shape(shape, p: Perm) -> tuple[int, ...]:
    return tuple(shape[d] for d in p)


def memory_order(shape, p: Perm) -> tuple[int, ...]:
    """The logical dims in the order memory walks them, unit dims left out."""
    return tuple(d for d in p if shape[d] != 1)


def equivalent(shape, a: Perm, b: Perm) -> bool:
    return memory_order(shape, a) == memory_order(shape, b)


def moves_data(shape, p: Perm) -> bool:
    """True unless transposing `shape` by `p` only moves unit dims (then it is a reshape)."""
    order = [d for d in p if shape[d] != 1]
    return order != sorted(order)


def transpose_is_free(in_shape, t: Perm, p_in: Perm, p_out: Perm) -> bool:
    """Whether `y = transpose(x, t)` is a plain reshape when x is stored as p_in and y as p_out."""
    out_shape = physical_shape(in_shape, t)
    return memory_order(in_shape, p_in) == tuple(t[d] for d in p_out if out_shape[d] != 1)


def transpose_free_output_layout(t: Perm, p_in: Perm) -> Perm:
    """The layout of y that makes `y = transpose(x, t)` free when x is stored as p_in."""
    t_inv = inverse(t)
    return tuple(t_inv[d] for d in p_in)


def transpose_free_input_layout(t: Perm, p_out: Perm) -> Perm:
    return tuple(t[d] for d in p_out)


def physical_transpose(t: Perm, p_in: Perm, p_out: Perm) -> Perm:
    """The perm to apply to the stored x to get the stored y, for `y = transpose(x, t)`."""
    p_in_inv = inverse(p_in)
    return tuple(p_in_inv[t[d]] for d in p_out)


_RESHAPE_CHECK_LIMIT = 1 << 22


@lru_cache(maxsize=4096)
def reshape_is_free(in_shape: tuple, p_in: Perm, out_shape: tuple, p_out: Perm) -> bool:
    """Whether a reshape stays a plain reshape between the stored tensors of the two layouts."""
    if memory_order(in_shape, p_in) == memory_order(in_shape, identity(len(in_shape))) and \
            memory_order(out_shape, p_out) == memory_order(out_shape, identity(len(out_shape))):
        return True
    n = int(np.prod(in_shape, dtype=np.int64))
    if n > _RESHAPE_CHECK_LIMIT:
        return False  # conservative: keep explicit transposes rather than risk a wrong fold
    stored = np.arange(n, dtype=np.int32).reshape(physical_shape(in_shape, p_in))
    logical_out = stored.transpose(inverse(p_in)).reshape(out_shape)
    return bool(np.array_equal(logical_out.transpose(p_out).ravel(), np.arange(n, dtype=np.int32)))


@lru_cache(maxsize=4096)
def reshape_free_layouts(in_shape: tuple, p_in: Perm, out_shape: tuple, forward: bool) -> tuple[Perm, ...]:
    """Layouts of the other side that keep the reshape free (forward: of the output, given the input
    stored as p_in; else of the input, given the output stored as p_in), fewest data moves first."""
    rank = len(out_shape)
    if rank > 5:
        return ()
    found = []
    for p in itertools.permutations(range(rank)):
        ok = reshape_is_free(in_shape, p_in, out_shape, p) if forward else \
            reshape_is_free(out_shape, p, in_shape, p_in)
        if ok and not any(equivalent(out_shape, p, q) for q in found):
            found.append(p)
    found.sort(key=lambda p: (moves_data(out_shape, p), p))
    return tuple(found)
