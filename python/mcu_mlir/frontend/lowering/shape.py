"""Data movement on the integers (no rescale): permute, slice, split, expand / repeat / tile, flip,
roll, pixel (un)shuffle, gathers with constant indices, pad, concat, nearest upsample, max / min
reductions."""

from __future__ import annotations

import math

import numpy as np

from ...diagnostics import UserError
from .resize_sampling import bilinear_params, nearest_resize_params, pytorch_nearest_sources, scale_ratio
from .tosa_builder import Value
from .values import DQ, Indices, Q, Tup, RANGE
from ..graph.nodes import aten, clip_index, describe, shape_of


def _lower_cat(self, node, ins, scale, zp, elem, clamp):
    tensors = [self.values[t] for t in node.args[0]]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    qs = [self.requantize(self.operand(v), scale, zp, elem) for v in tensors]
    rank = len(qs[0].shape)
    if node.target == aten.stack.default:
        dim = dim % (rank + 1)
        qs = [self.pass_reshape(q, q.shape[:dim] + (1,) + q.shape[dim:]) for q in qs]
    else:
        dim = dim % rank
    out = Q(self.w.concat([q.v for q in qs], dim), scale, zp)
    return self.apply_clamp(out, clamp)


def _eager_permute(self, node, ins):
    q = ins[0].q
    rank = len(q.shape)
    if node.target == aten.permute.default:
        perms = [p % rank for p in node.args[1]]
    else:
        d0, d1 = (node.args[1] % rank, node.args[2] % rank) if node.target == aten.transpose.int else (0, 1)
        perms = list(range(rank))
        perms[d0], perms[d1] = perms[d1], perms[d0]
    return DQ(Q(self.w.transpose(q.v, perms), q.scale, q.zp))


def _eager_slice(self, node, ins):
    q = ins[0].q
    rank = len(q.shape)
    t = node.target
    start = [0] * rank
    size = list(q.shape)
    if t == aten.slice.Tensor:
        dim = (node.args[1] if len(node.args) > 1 else 0) % rank
        lo = node.args[2] if len(node.args) > 2 and node.args[2] is not None else 0
        hi = node.args[3] if len(node.args) > 3 and node.args[3] is not None else q.shape[dim]
        step = node.args[4] if len(node.args) > 4 else 1
        lo, hi = clip_index(lo, q.shape[dim]), clip_index(hi, q.shape[dim])
        if step != 1:
            return _strided_slice(self, node, q, dim, lo, hi, step)
        start[dim], size[dim] = lo, max(0, hi - lo)
    elif t == aten.narrow.default:
        dim = node.args[1] % rank
        start[dim], size[dim] = node.args[2] % q.shape[dim], node.args[3]
    else:   # select
        dim = node.args[1] % rank
        start[dim], size[dim] = node.args[2] % q.shape[dim], 1
    v = self.w.slice(q.v, start, size)
    return DQ(Q(self.w.reshape(v, shape_of(node)), q.scale, q.zp))


def _strided_slice(self, node, q, dim: int, lo: int, hi: int, step: int):
    """x[lo:hi:step] along `dim` (Swin's patch merging, x[:, 0::2, 1::2]): the rows lo, lo + step,
    ... viewed as the first column of [count, step] and sliced there; a gather of those rows when
    the last group runs past the end."""
    count = len(range(lo, hi, step))
    if count == 0 or step < 1:
        return None
    dims = list(q.shape)
    if lo + count * step <= dims[dim]:
        start, size = [0] * len(dims), list(dims)
        start[dim], size[dim] = lo, count * step
        v = self.w.slice(q.v, start, size)
        grouped = dims[:dim] + [count, step] + dims[dim + 1:]
        v = self.w.reshape(v, tuple(grouped))
        start, size = [0] * len(grouped), list(grouped)
        size[dim + 1] = 1
        v = self.w.slice(v, start, size)
    else:
        v = _gather_runs(self, q.v, dim, list(range(lo, hi, step)))
    return DQ(Q(self.w.reshape(v, shape_of(node)), q.scale, q.zp))


def _eager_split(self, node, ins):
    q = ins[0].q
    val = node.meta.get("val")
    rank = len(q.shape)
    t = node.target
    dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
    if t == aten.unbind.int:
        dim = node.args[1] if len(node.args) > 1 else 0
    dim %= rank
    items, offset = [], 0
    for part in val:
        shape = tuple(int(d) for d in part.shape)
        size = list(q.shape)
        n = 1 if t == aten.unbind.int else shape[dim]
        size[dim] = n
        start = [0] * rank
        start[dim] = offset
        offset += n
        v = self.w.slice(q.v, start, size)
        items.append(DQ(Q(self.w.reshape(v, shape), q.scale, q.zp)))
    return Tup(items)


def _eager_upsample(self, node, ins):
    """Nearest resize (F.interpolate mode="nearest"): TOSA RESIZE where one reads the rows PyTorch
    reads (every integer factor; other sizes and scale factors where the ratio's rule gives
    PyTorch's float rounding), else the rows PyTorch reads gathered, axis by axis."""
    q = ins[0].q
    out = shape_of(node)
    if any(o % i for o, i in zip(out[2:], q.shape[2:])):
        return _nearest_any_size(self, node, q, out)
    # TOSA RESIZE (NHWC, nearest) between explicit transposes, like every NHWC op here.
    one_d = len(q.shape) == 3
    x = self.w.reshape(q.v, q.shape + (1,)) if one_d else q.v
    out4 = tuple(out) + (1,) if one_d else tuple(out)
    nhwc = self.w.transpose(x, [0, 2, 3, 1])
    hp, wp = _resize_params(out4[2], x.shape[2]), _resize_params(out4[3], x.shape[3])
    y = self.w.resize(nhwc, [hp[0], hp[1], wp[0], wp[1]], [hp[2], wp[2]], [hp[3], wp[3]], bilinear=False,
                      out_hw=out4[2:])
    y = self.w.transpose(y, [0, 3, 1, 2])
    return DQ(Q(self.w.reshape(y, out), q.scale, q.zp))


def _nearest_any_size(self, node, q: Q, out) -> DQ:
    """A nearest resize to a size the input does not divide: PyTorch's own source rows, read by a
    TOSA RESIZE where one reads exactly those, else gathered (slices of consecutive rows)."""
    sources = pytorch_nearest_sources(node, q.shape)
    scales = _upsample_scales(node, len(sources))
    one_d = len(q.shape) == 3
    params = [nearest_resize_params(o, i, s, want) for o, i, s, want in zip(out[2:], q.shape[2:], scales, sources)]
    if not one_d and all(p is not None for p in params):
        hp, wp = params
        y = self.w.resize(self.w.transpose(q.v, [0, 2, 3, 1]), [hp[0], hp[1], wp[0], wp[1]], [hp[2], wp[2]],
                          [hp[3], wp[3]], bilinear=False, out_hw=out[2:])
        return DQ(Q(self.w.transpose(y, [0, 3, 1, 2]), q.scale, q.zp))
    v = q.v
    for axis, rows in enumerate(sources, start=2):
        if rows != list(range(q.shape[axis])):
            v = _gather_runs(self, v, axis, rows)
    return DQ(Q(v, q.scale, q.zp))


def _upsample_scales(node, n_sp: int) -> list:
    """The scale factors an upsample node was given (None per axis where it was given a size)."""
    t = node.target
    args = list(node.args) + [None] * 4
    if t in (aten.upsample_nearest2d.vec, aten.upsample_nearest1d.vec, aten.upsample_bilinear2d.vec):
        scales = args[2] if t != aten.upsample_bilinear2d.vec else args[3]
    elif t == aten.upsample_bilinear2d.default:
        scales = [args[3], args[4]]
    else:
        scales = args[2:2 + n_sp]
    return list(scales) if scales else [None] * n_sp


def _eager_upsample_bilinear(self, node, ins):
    """Bilinear resize (F.interpolate mode="bilinear", align_corners either way): TOSA's bilinear
    RESIZE sums the four integers with weights in 1/scale_n steps (exact, int32 / int48), one
    rescale divides by the weights' total. The output keeps the input's parameters (every value
    is a mix of input values)."""
    q = ins[0].q
    out = shape_of(node)
    if len(q.shape) != 4:
        return None
    args = list(node.args) + [None] * (5 - len(node.args))
    align = bool(args[2] if args[2] is not None else node.kwargs.get("align_corners", False))
    ratios = []
    for s, i, o in zip(_upsample_scales(node, 2), q.shape[2:], out[2:]):
        # PyTorch samples at 1 / scale_factor when one is given, which is in / out only when it divides.
        given = s is not None and not align and abs(float(s) * i - o) > 1e-9 * o
        ratios.append(scale_ratio(s) if given else None)
        if given and ratios[-1] is None:
            raise UserError(f"{describe(node)}: bilinear resize by scale factor {s} samples at 1/{s}, which no "
                            f"fraction of denominator up to 1024 equals: give the size, or recompute_scale_factor=True")
    # With align_corners PyTorch samples row 0 alone for one output row and repeats a single input
    # row: a slice or a tile, no resize on that axis (TimM's CSATv2 resizes 7x7 to 1x1).
    x, params = q.v, []
    for axis in (2, 3):
        size = list(x.shape)
        if align and out[axis] == 1 and size[axis] > 1:
            size[axis] = 1
            x = self.w.slice(x, [0] * 4, size)
        elif align and size[axis] == 1 and out[axis] > 1:
            x = self.w.tile(x, [out[axis] if a == axis else 1 for a in range(4)])
        params.append((1, 1, 0, 0) if x.shape[axis] == out[axis] and ratios[axis - 2] is None else
                      bilinear_params(out[axis], x.shape[axis], align, ratios[axis - 2]))
    hp, wp = params
    if hp is None or wp is None:
        raise UserError(f"{describe(node)}: bilinear resize from {tuple(q.shape[2:])} to {tuple(out[2:])} "
                        f"(align_corners={align}) has no exact TOSA resize ratio")
    if hp == wp == (1, 1, 0, 0):
        return DQ(Q(x, q.scale, q.zp))
    nhwc = self.w.transpose(x, [0, 2, 3, 1])
    y = self.w.resize(nhwc, [hp[0], hp[1], wp[0], wp[1]], [hp[2], wp[2]], [hp[3], wp[3]], bilinear=True,
                      out_hw=out[2:])
    # The zero point is inside the weighted sum; int16's int48 sum takes a 16-bit multiplier.
    y = self.acc_rescale(y, [1.0 / (hp[0] * wp[0])], 0, q.elem)
    y = self.w.transpose(y, [0, 3, 1, 2])
    return DQ(Q(y, q.scale, q.zp))


def _resize_params(out_size: int, in_size: int):
    """TOSA RESIZE (scale_n, scale_d, offset, border) giving PyTorch's nearest rule
    src = floor(dst * in / out)."""
    g = math.gcd(out_size, in_size)
    n, d, offset = 2 * out_size // g, 2 * in_size // g, -(out_size // g)
    border = (out_size - 1) * d - (in_size - 1) * n + offset
    return n, d, offset, border


def _eager_pad(self, node, ins):
    q = ins[0].q
    pads = list(node.args[1])
    if node.target == aten.pad.default:   # pad(input, pad, mode="constant", value=None)
        mode = node.args[2] if len(node.args) > 2 else node.kwargs.get("mode", "constant")
        value = node.args[3] if len(node.args) > 3 else node.kwargs.get("value", 0.0)
    else:                                 # constant_pad_nd(input, pad, value=0)
        mode = "constant"
        value = node.args[2] if len(node.args) > 2 else node.kwargs.get("value", 0.0)
    if mode != "constant":
        if any(p < 0 for p in pads):
            return None
        return _copy_pad(self, node, q, pads, mode)
    rank = len(q.shape)
    padding = [0] * (2 * rank)
    for i in range(len(pads) // 2):     # PyTorch lists the last dimension first
        d = rank - 1 - i
        padding[2 * d], padding[2 * d + 1] = pads[2 * i], pads[2 * i + 1]
    if any(p < 0 for p in padding):
        # A negative amount crops (NASNet's ZeroPad2d((-1, 1, -1, 1)) shifts by one pixel): a slice first.
        start = [max(0, -padding[2 * d]) for d in range(rank)]
        size = [n - start[d] - max(0, -padding[2 * d + 1]) for d, n in enumerate(q.shape)]
        q = Q(self.w.slice(q.v, start, size), q.scale, q.zp)
        padding = [max(0, p) for p in padding]
    lo, hi = RANGE[q.elem]
    # The padded tensor keeps the input's parameters (the quantizer shares them), so the fill is the
    # value nearest to `value` there, as the quantized model computes it (EfficientViT-MIT pads v
    # with ones for its linear attention's normaliser).
    fill = int(np.clip(np.round(float(value or 0.0) / q.scale) + q.zp, lo, hi))
    v = self.w.pad(q.v, padding, fill)
    return DQ(Q(v, q.scale, q.zp))


def _eager_pad_mode(self, node, ins):
    """aten.reflection_pad* / replication_pad* (input, padding) as export may write F.pad."""
    mode = "reflect" if "reflection" in str(node.target) else "replicate"
    return _copy_pad(self, node, ins[0].q, list(node.args[1]), mode)


def _copy_pad(self, node, q: Q, pads: list, mode: str) -> DQ:
    """Reflect / replicate / circular padding copies input values: slices (reversed for reflect,
    tiled for replicate) concatenated around the input, one padded dimension after another, as
    PyTorch pads (the corners come out the same). The values keep their quantization."""
    if mode not in ("reflect", "replicate", "circular"):
        raise UserError(f"{describe(node)}: padding mode '{mode}' is not supported")
    v = q.v
    rank = len(q.shape)
    for i in range(len(pads) // 2):     # PyTorch lists the last dimension first
        d = rank - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        if not lo and not hi:
            continue
        size = v.shape[d]
        if mode == "reflect" and max(lo, hi) >= size:
            raise UserError(f"{describe(node)}: reflect padding of {max(lo, hi)} needs a dimension longer than "
                            f"that (it is {size})")
        if mode == "circular" and max(lo, hi) > size:
            raise UserError(f"{describe(node)}: circular padding of {max(lo, hi)} is longer than the dimension ({size})")

        def part(start: int, count: int):
            begin = [0] * rank
            begin[d] = start
            extent = list(v.shape)
            extent[d] = count
            return self.w.slice(v, begin, extent)

        def mirrored(x):
            return self.w.reverse(x, d)

        def repeated(x, times: int):
            return self.w.tile(x, [times if k == d else 1 for k in range(rank)])

        if mode == "reflect":        # the values next to the edge, mirrored (the edge itself not repeated)
            before, after = mirrored(part(1, lo)) if lo else None, mirrored(part(size - 1 - hi, hi)) if hi else None
        elif mode == "replicate":    # the edge value, repeated
            before, after = repeated(part(0, 1), lo) if lo else None, repeated(part(size - 1, 1), hi) if hi else None
        else:                        # circular: the other end
            before, after = part(size - lo, lo) if lo else None, part(0, hi) if hi else None
        v = self.w.concat([p for p in (before, v, after) if p is not None], d)
    return DQ(Q(v, q.scale, q.zp))


def _eager_expand(self, node, ins):
    q = ins[0].q
    out = shape_of(node)
    v = self.w.reshape(q.v, (1,) * (len(out) - len(q.shape)) + tuple(q.shape))
    mult = [o // i for o, i in zip(out, v.shape)]
    if any(m != 1 for m in mult):
        v = self.w.tile(v, mult)
    return DQ(Q(v, q.scale, q.zp))


def _eager_repeat(self, node, ins):
    """repeat / tile: a TOSA TILE (leading dims added first, as PyTorch does)."""
    q = ins[0].q
    reps = [int(r) for r in node.args[1]]
    rank = max(len(reps), len(q.shape))
    reps = [1] * (rank - len(reps)) + reps
    v = self.w.reshape(q.v, (1,) * (rank - len(q.shape)) + tuple(q.shape))
    if any(r != 1 for r in reps):
        v = self.w.tile(v, reps)
    return DQ(Q(v, q.scale, q.zp))


def _eager_flip(self, node, ins):
    q = ins[0].q
    v = q.v
    for d in sorted({int(d) % len(q.shape) for d in node.args[1]}):
        v = self.w.reverse(v, d)
    return DQ(Q(v, q.scale, q.zp))


def _eager_roll(self, node, ins):
    """roll: the last `shift` elements moved to the front, per rolled dim (the flattened tensor when
    no dim is given, as PyTorch does)."""
    q = ins[0].q
    shifts = [int(s) for s in node.args[1]]
    dims = [int(d) % len(q.shape) for d in (node.args[2] if len(node.args) > 2 else node.kwargs.get("dims", []))]
    v = q.v
    if not dims:
        v = self.w.reshape(v, (math.prod(q.shape),))
        dims = [0]
    for shift, d in zip(shifts, dims):
        n = v.shape[d]
        shift %= n
        if not shift:
            continue
        begin, extent = [0] * len(v.shape), list(v.shape)
        begin[d], extent[d] = n - shift, shift
        tail = self.w.slice(v, begin, extent)
        begin[d], extent[d] = 0, n - shift
        head = self.w.slice(v, begin, extent)
        v = self.w.concat([tail, head], d)
    return DQ(Q(self.w.reshape(v, q.shape), q.scale, q.zp))


def _eager_pixel_shuffle(self, node, ins):
    """pixel_shuffle (N, C*r*r, H, W) -> (N, C, H*r, W*r) and its inverse: reshape, transpose, reshape."""
    q = ins[0].q
    r = int(node.args[1])
    if len(q.shape) != 4:
        return None
    n, c, h, w = q.shape
    if node.target == aten.pixel_shuffle.default:
        v = self.w.reshape(q.v, (n, c // (r * r), r, r, h, w))
        v = self.w.transpose(v, [0, 1, 4, 2, 5, 3])
    else:
        v = self.w.reshape(q.v, (n, c, h // r, r, w // r, r))
        v = self.w.transpose(v, [0, 1, 3, 5, 2, 4])
    return DQ(Q(self.w.reshape(v, shape_of(node)), q.scale, q.zp))


def _gather_runs(self, v, dim: int, indices) -> Value:
    """Rows `indices` (constants) of `v` along `dim`: consecutive runs as slices, concatenated."""
    n = v.shape[dim]
    idx = [int(i) % n for i in np.asarray(indices).reshape(-1)]
    runs, start = [], 0
    for k in range(1, len(idx) + 1):
        if k == len(idx) or idx[k] != idx[k - 1] + 1:
            runs.append((idx[start], k - start))
            start = k
    parts = []
    for first, count in runs:
        begin, extent = [0] * len(v.shape), list(v.shape)
        begin[dim], extent[dim] = first, count
        parts.append(self.w.slice(v, begin, extent))
    return self.w.concat(parts, dim)


def _eager_index(self, node, ins):
    """index_select / x[:, idx] (aten.index.Tensor) with constant indices on one dim."""
    from .values import Const
    q = ins[0].q
    if node.target == aten.index_select.default:
        dim, index = int(node.args[1]) % len(q.shape), self.values.get(node.args[2])
        if not isinstance(index, Const):
            return None
        indices = index.data
    else:
        given = [(d, a) for d, a in enumerate(node.args[1]) if a is not None]
        if len(given) != 1 or not isinstance(self.values.get(given[0][1]), Const):
            return None
        dim, indices = given[0][0], self.values[given[0][1]].data
        if np.asarray(indices).ndim != 1:
            return None
    if np.asarray(indices).size == 0:
        return None
    v = _gather_runs(self, q.v, dim, indices)
    return DQ(Q(self.w.reshape(v, shape_of(node)), q.scale, q.zp))


def _eager_gather(self, node, ins):
    """torch.gather(x, dim, index) with a constant index (DeBERTa's relative-position buckets): the
    position each output element reads, worked out here, is one tosa.gather of the flattened x. The
    values keep x's quantization."""
    from .values import Const
    q, index = ins[0].q, self.values.get(node.args[2])
    if not isinstance(index, Const) or index.scales is not None or np.asarray(index.data).dtype.kind not in "iu" \
            or node.kwargs.get("sparse_grad") or len(node.args) > 3 and node.args[3]:
        return None
    shape, index = tuple(q.shape), np.asarray(index.data, np.int64)
    dim = int(node.args[1]) % len(shape)
    if index.ndim != len(shape) or any(i > n for d, (i, n) in enumerate(zip(index.shape, shape)) if d != dim):
        return None
    if index.size and (index.min() < 0 or index.max() >= shape[dim]):     # as torch.gather
        raise UserError(f"{describe(node)}: an index is outside dim {dim} of size {shape[dim]}")
    where = list(np.indices(index.shape, sparse=True))
    where[dim] = index
    return _at_positions(self, node, q, np.ravel_multi_index(tuple(where), shape))


def _eager_unfold(self, node, ins):
    """x.unfold(dim, size, step), the sliding windows along `dim` as a new last dim (PatchTST's
    patches): one tosa.gather of the flattened x at positions worked out here."""
    q = ins[0].q
    shape = tuple(q.shape)
    dim, size, step = int(node.args[1]) % max(len(shape), 1), int(node.args[2]), int(node.args[3])
    count = (shape[dim] - size) // step + 1
    windows = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    positions = np.take(np.arange(math.prod(shape)).reshape(shape), windows, axis=dim)
    return _at_positions(self, node, q, np.moveaxis(positions, dim + 1, -1))


def _at_positions(self, node, q: Q, positions: np.ndarray) -> DQ:
    """The elements of q at flat `positions` (any shape, that of the node's output): one
    tosa.gather of q viewed as [1, elements, 1]. They keep q's quantization."""
    flat = self.w.reshape(q.v, (1, math.prod(q.shape), 1))
    rows = self.w.gather(flat, self.w.const(positions.reshape(1, -1), "i32"))
    return DQ(Q(self.w.reshape(rows, shape_of(node)), q.scale, q.zp))


def _eager_reduce_extreme(self, node, ins):
    """amax / amin over any dims: a TOSA reduction per dim (ordering commutes with quantization)."""
    q = ins[0].q
    rank = len(q.shape)
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", ())
    dims = sorted({int(d) % rank for d in (dims if dims else range(rank))})
    reduce = self.w.reduce_max if node.target == aten.amax.default else self.w.reduce_min
    v = q.v
    for d in dims:
        v = reduce(v, d)
    return DQ(Q(self.w.reshape(v, shape_of(node)), q.scale, q.zp))


def _eager_argmax(self, node, ins):
    """argmax over a dim (or of the flattened tensor) as int32 indices: one tosa.argmax of the
    integers (ordering commutes with quantization; ties go to the first index in both)."""
    q = ins[0].q
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    v = q.v if dim is not None else self.w.reshape(q.v, (math.prod(q.shape),))
    axis = 0 if dim is None else int(dim) % len(q.shape)
    out = self.w.argmax(v, axis)
    return Indices(self.w.reshape(out, shape_of(node)))


def _eager_cat(self, node, ins):
    tensors = [self.values[t] for t in node.args[0]]
    if not all(isinstance(v, DQ) for v in tensors):
        return None
    if len({(v.q.scale, v.q.zp, v.q.elem) for v in tensors}) != 1:
        return None
    q0 = tensors[0].q
    return DQ(_lower_cat(self, node, ins, q0.scale, q0.zp, q0.elem, None))


LOWER = {aten.cat.default: _lower_cat, aten.concat.default: _lower_cat, aten.stack.default: _lower_cat}
EAGER = {
    aten.permute.default: _eager_permute, aten.transpose.int: _eager_permute, aten.t.default: _eager_permute,
    aten.slice.Tensor: _eager_slice, aten.narrow.default: _eager_slice, aten.select.int: _eager_slice,
    aten.split.Tensor: _eager_split, aten.split_with_sizes.default: _eager_split,
    aten.chunk.default: _eager_split, aten.unbind.int: _eager_split,
    aten.upsample_nearest2d.vec: _eager_upsample, aten.upsample_nearest2d.default: _eager_upsample,
    aten.upsample_bilinear2d.vec: _eager_upsample_bilinear, aten.upsample_bilinear2d.default: _eager_upsample_bilinear,
    aten.upsample_nearest1d.vec: _eager_upsample,
    aten.expand.default: _eager_expand, aten.broadcast_to.default: _eager_expand, aten.expand_as.default: _eager_expand,
    aten.repeat.default: _eager_repeat, aten.tile.default: _eager_repeat,
    aten.flip.default: _eager_flip, aten.roll.default: _eager_roll,
    aten.pixel_shuffle.default: _eager_pixel_shuffle, aten.pixel_unshuffle.default: _eager_pixel_shuffle,
    aten.index_select.default: _eager_index, aten.index.Tensor: _eager_index, aten.gather.default: _eager_gather,
    aten.unfold.default: _eager_unfold,
    aten.amax.default: _eager_reduce_extreme, aten.amin.default: _eager_reduce_extreme,
    aten.argmax.default: _eager_argmax,
    aten.constant_pad_nd.default: _eager_pad, aten.pad.default: _eager_pad,
    **{getattr(aten, name).default: _eager_pad_mode for name in (
        "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d") if hasattr(aten, name)},
    aten.cat.default: _eager_cat, aten.concat.default: _eager_cat,
}
