"""Composite aten ops rewritten, before quantization, into ops the quantizer and the kernels take.

torch.export keeps ops such as `einsum`, `glu` or `addmm` whole. Each is a composition of ops with
an integer lowering (and most of a CMSIS-NN kernel): decomposed here, in float, with the
ExportedProgram's own machinery (the source line of every new node stays the user's), so that
PT2E observes and quantizes the parts. Only programs that contain one of these ops are re-traced.
"""

from __future__ import annotations

import contextlib
import functools
import math

import torch

from .dft import stft_basis
from .nodes import recompiled

aten = torch.ops.aten


def _addmm_as_linear(bias, x, weight, beta=1, alpha=1):
    """GPT-2's Conv1D: addmm(bias, x, W) is linear(x, W^T, bias), a fully connected layer
    (W^T is a constant: folded into the weight before quantization)."""
    if beta != 1 or alpha != 1:
        return beta * bias + alpha * torch.mm(x, weight)
    return torch.nn.functional.linear(x, weight.t(), bias)


def _baddbmm(input, batch1, batch2, beta=1, alpha=1):
    """baddbmm (Bloom's ALiBi scores, nn.MultiheadAttention with a bias in WavLM): beta * input +
    alpha * bmm(batch1, batch2), a batch matmul, a scale and an add; beta 0 ignores input (NaN too)."""
    product = torch.bmm(batch1, batch2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else input * beta)


def _prelu(x, weight):
    """Functional prelu as nn.PReLU is rewritten (decompose.prelu_by_depthwise); one slope is
    broadcast to every channel."""
    from .decompose import prelu_by_depthwise
    channels = x.shape[1] if x.dim() > 1 else 1
    slopes = weight.reshape(-1).expand(channels) if weight.numel() == 1 else weight.reshape(-1)
    return prelu_by_depthwise(x, slopes)


def _clamp_tensor(x, min=None, max=None):
    """clamp with tensor bounds: an elementwise maximum and minimum."""
    if min is not None:
        x = torch.maximum(x, min)
    if max is not None:
        x = torch.minimum(x, max)
    return x


def _attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
               enable_gqa=False):
    """scaled_dot_product_attention as its definition: softmax(Q K^T * scale) V, two activation
    matmuls around an integer softmax (the scale a constant multiply the quantizer observes).
    A boolean mask or is_causal is a fill with -inf before the softmax (the integer softmax gives
    those places probability 0); a float mask is added, its -inf (or finfo.min) places a fill."""
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        repeat = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(repeat, dim=-3)
        value = value.repeat_interleave(repeat, dim=-3)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale
    keep = None
    if is_causal:
        keep = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool).tril()
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        keep = attn_mask if keep is None else keep & attn_mask
    elif attn_mask is not None:
        allowed = attn_mask > torch.finfo(torch.float32).min / 2
        scores = scores + torch.where(allowed, attn_mask, 0.0)
        keep = allowed if keep is None else keep & allowed
    if keep is not None:
        scores = torch.where(keep, scores, float("-inf"))
    out = torch.matmul(torch.softmax(scores, dim=-1), value)
    if out.dim() != 4:
        return out
    # The strides aten's kernel gives its [B, H, L, E] result, those of a [B, L, H, E] tensor: model
    # code views its transpose(1, 2) as [B, L, H * E] without a copy (Data2Vec), which the re-trace
    # checks. The copy between the two transposes is a view to the lowering.
    return out.transpose(1, 2).contiguous().transpose(1, 2)


def _addcmul(input, tensor1, tensor2, value=1):
    """addcmul (timm's ResMLP Affine: beta + alpha * x) as its definition."""
    return input + value * (tensor1 * tensor2)


def _repeat_interleave(x, repeats, dim=None, output_size=None):
    """repeat_interleave with one int count: each slice along `dim` repeated in place, a broadcast
    of a new axis folded into `dim` (GCViT's global query per window)."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    dim %= x.dim()
    shape = list(x.shape)
    expanded = x.unsqueeze(dim + 1).expand(*shape[:dim + 1], repeats, *shape[dim + 1:])
    return expanded.reshape(*shape[:dim], shape[dim] * repeats, *shape[dim + 1:])


def _conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A 3-D convolution whose kernel spans one axis in a single tap (stride 1, no padding there:
    timm's lambda layer, (r, r, 1) over [B, 1, H, W, V]) is a 2-D convolution with that axis moved
    into the batch; others stay whole and are named."""
    def triple(v):
        return [v] * 3 if isinstance(v, int) else list(v) * (3 if len(v) == 1 else 1)
    stride, padding, dilation = triple(stride), triple(padding), triple(dilation)
    if isinstance(padding[0], str):
        return NotImplemented
    for axis in (2, 1, 0):
        if weight.shape[2 + axis] != 1 or stride[axis] != 1 or padding[axis] != 0:
            continue
        a, b = [d for d in range(3) if d != axis]
        n, c = x.shape[:2]
        taken = x.shape[2 + axis]
        planes = x.permute(0, 2 + axis, 1, 2 + a, 2 + b).reshape(n * taken, c, x.shape[2 + a], x.shape[2 + b])
        out = torch.nn.functional.conv2d(planes, weight.squeeze(2 + axis), bias, [stride[a], stride[b]],
                                         [padding[a], padding[b]], [dilation[a], dilation[b]], groups)
        out = out.reshape(n, taken, *out.shape[1:])                     # [N, S, K, A', B']
        order = [0, 2] + [None] * 3
        order[2 + axis], order[2 + a], order[2 + b] = 1, 3, 4
        return out.permute(order)
    return NotImplemented


def _copy(self, src, non_blocking=False):
    """The functional copy that slice assignment leaves (`x[:, 1:] = y`): src broadcast to self."""
    return src.to(self.dtype).expand(self.shape).clone()


def _slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """x[..., a:b] = src (MViTv2's relative-position term added to the patch part of its scores):
    the parts before and after the slice concatenated around src."""
    if step != 1:
        return NotImplemented
    dim %= input.dim()
    size = input.shape[dim]
    start = 0 if start is None else (start + size if start < 0 else min(start, size))
    end = size if end is None else (end + size if end < 0 else min(end, size))
    parts = [input.narrow(dim, 0, start)] if start > 0 else []
    parts.append(src)
    if end < size:
        parts.append(input.narrow(dim, end, size - end))
    return torch.cat(parts, dim) if len(parts) > 1 else src.clone()


def _select_scatter(input, src, dim, index):
    """x[:, i] = src: a slice_scatter of one row."""
    index %= input.shape[dim % input.dim()]
    return _slice_scatter(input, src.unsqueeze(dim), dim, index, index + 1)


def _dims(x, dim):
    """The dims a reduction's `dim` argument names: all of them for None."""
    return list(range(x.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))


def _variance(x, dim=None, *, correction=None, keepdim=False):
    """var over dims as its definition, mean((x - mean)**2) * n / (n - correction), and std its
    square root: ops the lowering takes (timm's EvoNorm divides by a group's standard deviation)."""
    dims = _dims(x, dim)
    n = math.prod(x.shape[d] for d in dims)
    correction = 1 if correction is None else correction
    centred = x - x.mean(dims, keepdim=True)
    var = (centred * centred).mean(dims, keepdim=keepdim)
    return var * (n / (n - correction)) if correction else var


def _var_dim(x, dim=None, unbiased=True, keepdim=False):
    return _variance(x, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def _std_dim(x, dim=None, unbiased=True, keepdim=False):
    return torch.sqrt(_var_dim(x, dim, unbiased, keepdim))


def _std(x, dim=None, *, correction=None, keepdim=False):
    return torch.sqrt(_variance(x, dim, correction=correction, keepdim=keepdim))


def _max_dim(x, dim, keepdim=False):
    """max(dim) as (amax, argmax): the values are a reduction the lowering takes (VOLO's token
    head); the indices stay an op of their own, used or not."""
    return torch.amax(x, dim, keepdim), torch.argmax(x, dim, keepdim)


def _min_dim(x, dim, keepdim=False):
    """min(dim) as (amin, argmin), as max(dim)."""
    return torch.amin(x, dim, keepdim), torch.argmin(x, dim, keepdim)


def _var_mean(x, dim=None, *, correction=None, keepdim=False):
    dims = _dims(x, dim)
    return _variance(x, dims, correction=correction, keepdim=keepdim), x.mean(dims, keepdim=keepdim)


def _var_mean_dim(x, dim=None, unbiased=True, keepdim=False):
    return _var_mean(x, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def _instance_norm(x, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """InstanceNorm: a group norm with one channel per group; with running statistics (eval of
    track_running_stats=True) a per-channel scale and shift, as BatchNorm."""
    f = torch.nn.functional
    if use_input_stats or running_mean is None:
        return f.group_norm(x, x.shape[1], weight, bias, eps)
    return f.batch_norm(x, running_mean, running_var, weight, bias, False, 0.0, eps)


def _channel_shuffle(x, groups):
    """ShuffleNet's channel shuffle as its definition: reshape, transpose, reshape (absorbed into
    its neighbours downstream)."""
    n, c = x.shape[:2]
    return x.reshape(n, groups, c // groups, *x.shape[2:]).transpose(1, 2).reshape(x.shape)


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The 1- and inf-norms: sum and max of |x| (the 2-norm stays: vector_norm_as_square_sum)."""
    if dtype is not None or ord not in (1, 1.0, math.inf):
        return NotImplemented
    dims = _dims(x, dim)
    return x.abs().sum(dims, keepdim) if ord == 1 else x.abs().amax(dims, keepdim)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """As torch computes it: the p-norm of x1 - x2 + eps over the last dim."""
    return torch.linalg.vector_norm(x1 - x2 + eps, p, -1, keepdim)


def _linear_1d(x, output_size, align_corners, scale_factors=None):
    """1-D linear interpolation as the 2-D bilinear one of a height-1 image (the same source
    positions along the width; the scale factor passed on as given, as torch maps with it)."""
    f = torch.nn.functional
    if scale_factors is not None:
        out = f.interpolate(x.unsqueeze(2), scale_factor=(1.0, float(scale_factors[0])), mode="bilinear",
                            align_corners=align_corners)
    else:
        out = f.interpolate(x.unsqueeze(2), size=(1, int(output_size[0])), mode="bilinear",
                            align_corners=align_corners)
    return out.squeeze(2)


def _nearest_exact(x, output_size, scale_factors=None):
    """mode="nearest-exact": each output element reads the input at floor((i + 0.5) * scale), the
    scale in / out (1 / the scale factor when one is given): constant rows of each spatial dim."""
    spatial = x.shape[2:]
    for k, n in enumerate(spatial):
        if scale_factors is not None:
            out, scale = math.floor(n * float(scale_factors[k])), 1.0 / float(scale_factors[k])
        else:
            out, scale = int(output_size[k]), n / int(output_size[k])
        # arange, not a tensor literal: a decomposition may not create constants (folded later)
        rows = torch.floor((torch.arange(out, dtype=torch.float64) + 0.5) * scale).clamp(max=n - 1).long()
        x = x.index_select(2 + k, rows)
    return x


def _every_axis(reduce):
    def full(x, **kwargs):
        """x.mean() / sum() / max() / min() with no dim: the reduction over every axis."""
        return reduce(x, list(range(x.dim())), **kwargs)
    return full


def _cumsum(x, dim, dtype=None):
    """A running sum of activations: a linear layer whose weights are a lower triangle of ones (exact
    in int8 weights), along `dim`. An integer cumsum (positions from a mask) stays as it is."""
    if not x.dtype.is_floating_point or dtype is not None:
        return NotImplemented
    n = x.shape[dim]
    moved = torch.movedim(x, dim, -1)
    return torch.movedim(torch.nn.functional.linear(moved, torch.ones(n, n, dtype=x.dtype).tril()), -1, dim)


def _logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) along one dim is max(x) - max(log_softmax(x)): log_softmax peaks where x
    does, at max(x) - logsumexp(x). Both parts have an integer lowering; several dims stay as they are."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 1 or not x.dtype.is_floating_point:
        return NotImplemented
    d = dims[0]
    out = torch.amax(x, d, keepdim=True) - torch.amax(torch.log_softmax(x, d), d, keepdim=True)
    return out if keepdim else out.squeeze(d)


def _lerp(start, end, weight):
    """start + weight * (end - start)."""
    return start + weight * (end - start)


def _cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """As torch computes it: each side divided by its norm (at least eps), then the dot product; the
    normalisations become norms (l2_normalize_as_rms_norm)."""
    f = torch.nn.functional
    return (f.normalize(x1, dim=dim, eps=eps) * f.normalize(x2, dim=dim, eps=eps)).sum(dim)


def _cdist(x1, x2, p=2.0, compute_mode=None):
    """Pairwise p-norm distances of two point sets [.., P, M] and [.., R, M]: the norm of every
    difference (p = 1 or 2)."""
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 1.0:
        return differences.abs().sum(-1)
    if p == 2.0:
        return torch.linalg.vector_norm(differences, ord=2, dim=-1)
    return NotImplemented


def _type_as(x, other):
    """x.type_as(y) reads only y's dtype: a cast (then folded when x is a constant, as HuggingFace's
    all-ones attention mask is)."""
    return x.to(other.dtype)


def _filled(value):
    def new(x, size, *, dtype=None, layout=None, device=None, pin_memory=None):
        """x.new_ones / new_zeros(size): a constant (x gives only its dtype)."""
        return torch.full(list(size), value, dtype=dtype or x.dtype)
    return new


def _new_full(x, size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return torch.full(list(size), fill_value, dtype=dtype or x.dtype)


# Aliases torch.export keeps under their long names (torch.multiply in ConvBERT): the short op.
_ALIASES = {aten.multiply.Tensor: torch.mul, aten.multiply.Scalar: torch.mul, aten.divide.Tensor: torch.div,
            aten.divide.Scalar: torch.div, aten.true_divide.Tensor: torch.div, aten.subtract.Tensor: torch.sub,
            aten.subtract.Scalar: torch.sub, aten.negative.default: torch.neg, aten.greater.Scalar: torch.gt,
            aten.greater.Tensor: torch.gt, aten.less.Scalar: torch.lt, aten.less.Tensor: torch.lt,
            aten.greater_equal.Scalar: torch.ge, aten.greater_equal.Tensor: torch.ge,
            aten.less_equal.Scalar: torch.le, aten.less_equal.Tensor: torch.le, aten.not_equal.Scalar: torch.ne,
            aten.not_equal.Tensor: torch.ne}


def _triangle(keep):
    def part(x, diagonal=0):
        """tril / triu of activations: a select with a constant triangle (a bool one stays as it is)."""
        if not x.dtype.is_floating_point:
            return NotImplemented
        mask = keep(torch.ones(x.shape[-2:], dtype=torch.bool), diagonal)
        return torch.where(mask, x, 0.0)
    return part


def _one_hot_kernels(channels, kh, kw, dtype):
    """[C * kh * kw, 1, kh, kw]: output channel c * kh * kw + i * kw + j reads tap (i, j) of channel c."""
    eye = torch.eye(kh * kw, dtype=dtype).reshape(kh * kw, 1, kh, kw)
    return eye.repeat(channels, 1, 1, 1)


def _im2col(x, kernel_size, dilation, padding, stride):
    """F.unfold: non-overlapping patches (kernel = stride, HuggingFace's MobileViTV2) are a reshape
    and a permute; any other window a grouped conv with one-hot kernels (each output channel
    copies one tap of one channel), the same numbers in the order unfold gives them."""
    n, c, h, w = x.shape
    kh, kw = kernel_size
    if tuple(kernel_size) == tuple(stride) and tuple(dilation) == (1, 1) and tuple(padding) == (0, 0) \
            and h % kh == 0 and w % kw == 0:
        patches = x.reshape(n, c, h // kh, kh, w // kw, kw).permute(0, 1, 3, 5, 2, 4)
        return patches.reshape(n, c * kh * kw, (h // kh) * (w // kw))
    out = torch.nn.functional.conv2d(x, _one_hot_kernels(c, kh, kw, x.dtype), None, stride, padding, dilation,
                                     groups=c)
    return out.flatten(2)


def _col2im(cols, output_size, kernel_size, dilation, padding, stride):
    """F.fold, unfold's adjoint: non-overlapping patches are a permute and a reshape back; other
    undilated windows a transposed conv with one-hot kernels (overlapping taps are summed)."""
    (h, w), (kh, kw), (sh, sw) = output_size, kernel_size, stride
    batched = cols.dim() == 3
    if not batched:
        cols = cols.unsqueeze(0)
    n, ckk, _ = cols.shape
    c = ckk // (kh * kw)
    if tuple(kernel_size) == tuple(stride) and tuple(dilation) == (1, 1) and tuple(padding) == (0, 0) \
            and h % kh == 0 and w % kw == 0:
        out = cols.reshape(n, c, kh, kw, h // kh, w // kw).permute(0, 1, 4, 2, 5, 3).reshape(n, c, h, w)
    elif tuple(dilation) != (1, 1):
        return NotImplemented     # kept whole: the lowering names it (no dilated transposed conv)
    else:
        oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // sw + 1
        grid = cols.reshape(n, ckk, oh, ow)
        extra = [h + 2 * padding[0] - ((oh - 1) * sh + dilation[0] * (kh - 1) + 1),
                 w + 2 * padding[1] - ((ow - 1) * sw + dilation[1] * (kw - 1) + 1)]
        # Dense [C * kh * kw, C, kh, kw] (the transposed conv lowering takes no groups): row
        # c * kh * kw + t puts tap t back into channel c.
        taps = torch.eye(kh * kw, dtype=cols.dtype).reshape(kh * kw, 1, kh, kw)
        weight = torch.einsum("ab,tkij->atbij", torch.eye(c, dtype=cols.dtype), taps).reshape(ckk, c, kh, kw)
        out = torch.nn.functional.conv_transpose2d(grid, weight, None, stride, padding, extra)
    return out if batched else out.squeeze(0)


def _table() -> dict:
    table = torch.export.default_decompositions()
    own = {aten.addmm.default: _addmm_as_linear, aten.baddbmm.default: _baddbmm, aten.prelu.default: _prelu,
           aten.clamp.Tensor: _clamp_tensor, aten.scaled_dot_product_attention.default: _attention,
           aten.addcmul.default: _addcmul, aten.repeat_interleave.self_int: _repeat_interleave,
           aten.im2col.default: _im2col, aten.col2im.default: _col2im, aten.copy.default: _copy,
           aten.slice_scatter.default: _slice_scatter, aten.select_scatter.default: _select_scatter,
           aten.max.dim: _max_dim, aten.var.dim: _var_dim, aten.var.correction: _variance,
           aten.std.dim: _std_dim, aten.std.correction: _std, aten.conv3d.default: _conv3d,
           aten.mean.default: _every_axis(torch.mean), aten.sum.default: _every_axis(torch.sum),
           aten.max.default: _every_axis(torch.amax), aten.min.default: _every_axis(torch.amin),
           aten.cumsum.default: _cumsum, aten.tril.default: _triangle(torch.tril),
           aten.triu.default: _triangle(torch.triu), aten.logsumexp.default: _logsumexp,
           aten.lerp.Scalar: _lerp, aten.lerp.Tensor: _lerp, aten.cosine_similarity.default: _cosine_similarity,
           aten.cdist.default: _cdist, aten.type_as.default: _type_as, aten.new_ones.default: _filled(1),
           aten.new_zeros.default: _filled(0), aten.new_full.default: _new_full, aten.min.dim: _min_dim,
           aten.var_mean.correction: _var_mean, aten.var_mean.dim: _var_mean_dim,
           aten.instance_norm.default: _instance_norm, aten.channel_shuffle.default: _channel_shuffle,
           aten.native_channel_shuffle.default: _channel_shuffle, aten.clip.Tensor: _clamp_tensor,
           aten.linalg_vector_norm.default: _vector_norm, aten.pairwise_distance.default: _pairwise_distance,
           aten.upsample_linear1d.vec: _linear_1d, aten._upsample_nearest_exact2d.vec: _nearest_exact,
           aten._upsample_nearest_exact1d.vec: _nearest_exact, **_ALIASES}
    # torch's own decompositions for these: einsum -> permute / reshape / bmm, glu -> slices,
    # sigmoid and mul.
    theirs = {op: table[op] for op in (aten.einsum.default, aten.glu.default) if op in table}
    return {**theirs, **own}


def decompose_composites(ep):
    """`ep` with the composite ops above decomposed (`ep` itself when it has none)."""
    table = _table()
    if not any(n.op == "call_function" and n.target in table for n in ep.graph.nodes):
        return ep
    return ep.run_decompositions(table)


def l2_normalize_as_rms_norm(gm: torch.fx.GraphModule) -> None:
    """F.normalize(x, dim=trailing dims), exported as x / expand_as(clamp_min(vector_norm(x), eps)),
    becomes rms_norm(x) / sqrt(n): one normalisation (an integer kernel) instead of a norm and a
    division of two activations. x / sqrt(|x|^2 + eps^2) replaces x / max(|x|, eps): equal unless
    |x| is within a few eps (1e-12 by default) of zero."""
    graph = gm.graph
    rewritten = False
    for div in list(graph.nodes):
        if div.op != "call_function" or div.target is not aten.div.Tensor or len(div.args) != 2:
            continue
        x, den = div.args
        if not isinstance(den, torch.fx.Node) or not isinstance(x, torch.fx.Node):
            continue
        if den.target in (aten.expand_as.default, aten.expand.default) and len(den.users) == 1:
            den = den.args[0]
        eps = 0.0
        if den.target is aten.clamp_min.default and len(den.users) == 1:
            den, eps = den.args[0], float(den.args[1])
        if den.target is not aten.linalg_vector_norm.default or den.args[0] is not x:
            continue
        order = den.args[1] if len(den.args) > 1 else 2
        dims = den.args[2] if len(den.args) > 2 else None
        keepdim = den.args[3] if len(den.args) > 3 else den.kwargs.get("keepdim", False)
        val = x.meta.get("val")
        if order != 2 or not keepdim or dims is None or not isinstance(val, torch.Tensor):
            continue
        rank = val.dim()
        trailing = sorted(d % rank for d in dims)
        if trailing != list(range(rank - len(trailing), rank)):
            continue
        normalized = [int(d) for d in val.shape[rank - len(trailing):]]
        n = math.prod(normalized)
        with graph.inserting_before(div):
            rms = graph.call_function(aten.rms_norm.default, (x, normalized, None, eps * eps / n))
            out = graph.call_function(aten.mul.Tensor, (rms, 1.0 / math.sqrt(n)))
        for node in (rms, out):
            node.meta.update({k: v for k, v in div.meta.items() if k != "val"})
            node.meta["val"] = div.meta.get("val")
        div.replace_all_uses_with(out)
        graph.erase_node(div)
        rewritten = True
    if rewritten:
        graph.eliminate_dead_code()
        gm.recompile()


def _replace(graph, node, target, args) -> None:
    """`node` replaced by target(*args), which takes its source line, module and value."""
    with graph.inserting_before(node):
        new = graph.call_function(target, args)
    new.meta.update(node.meta)
    node.replace_all_uses_with(new)
    graph.erase_node(node)


def square_as_product(gm: torch.fx.GraphModule) -> None:
    """x ** 2 becomes x * x: a multiply of the integers (an elementwise-mul kernel), where a table of
    the square (the lowering of a function of one tensor) loses the small values in int16, whose
    513-point table interpolates x^2 linearly between points 128 apart (a spectrogram's magnitude,
    sqrt(re^2 + im^2), was at 12 dB)."""
    graph = gm.graph
    rewritten = False
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in (aten.pow.Tensor_Scalar, aten.square.default):
            continue
        if node.target is aten.pow.Tensor_Scalar and node.args[1] != 2:
            continue
        _replace(graph, node, aten.mul.Tensor, (node.args[0], node.args[0]))
        rewritten = True
    if rewritten:
        gm.recompile()


def _insert_chain(graph, node, steps) -> torch.fx.Node:
    """Nodes target(*args) for each (target, args) in `steps` before `node` (an arg "prev" is the
    step before), each with `node`'s source line and module and its own value; returns the last."""
    val = node.meta.get("val")
    fake_mode = getattr(val, "fake_mode", None)
    prev = None
    for target, args in steps:
        args = tuple(prev if a == "prev" else a for a in args)
        with graph.inserting_before(node):
            prev = graph.call_function(target, args)
        prev.meta.update({k: node.meta[k] for k in ("stack_trace", "nn_module_stack") if k in node.meta})
        _set_fake_value(prev, fake_mode)
    return prev


def _set_fake_value(node, fake_mode) -> None:
    """node.meta["val"]: its op run on its inputs' values, in the program's fake mode (as export
    leaves on every node)."""
    args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: n.meta.get("val"))
    with fake_mode if fake_mode is not None else contextlib.nullcontext():
        node.meta["val"] = node.target(*args, **kwargs)


def vector_norm_as_square_sum(gm: torch.fx.GraphModule) -> None:
    """linalg.vector_norm(x, 2, dims) becomes sqrt(sum(x * x, dims)): a multiply, a sum and a
    table, each with a lowering (ConvNeXt-V2's global response norm over the spatial dims)."""
    graph = gm.graph
    rewritten = False
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.linalg_vector_norm.default:
            continue
        args = list(node.args) + [None] * (4 - len(node.args))
        x, order, dims, keepdim = args[0], args[1] if args[1] is not None else 2, args[2], bool(args[3])
        if order != 2 or node.kwargs.get("dtype") is not None or not isinstance(x, torch.fx.Node):
            continue
        dims = list(range(x.meta["val"].dim())) if dims is None else list(dims)
        root = _insert_chain(graph, node, [(aten.mul.Tensor, (x, x)), (aten.sum.dim_IntList, ("prev", dims, keepdim)),
                                           (aten.sqrt.default, ("prev",))])
        node.replace_all_uses_with(root)
        graph.erase_node(node)
        rewritten = True
    if rewritten:
        gm.recompile()


def magnitude_as_hypot(gm: torch.fx.GraphModule) -> None:
    """sqrt(a * a + b * b) (a magnitude: an STFT's bins from its real and imaginary parts) becomes
    hypot(a, b), one op whose integer lowering keeps the sum of squares exact; quantized term by
    term, the squares of the quiet bins round to zero."""
    graph = gm.graph
    rewritten = False

    def square_of(n):
        return (n.args[0] if isinstance(n, torch.fx.Node) and n.target is aten.mul.Tensor and len(n.users) == 1
                and n.args[0] is n.args[1] and isinstance(n.args[0], torch.fx.Node) else None)
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.sqrt.default:
            continue
        total = node.args[0]
        if not (isinstance(total, torch.fx.Node) and total.target is aten.add.Tensor and len(total.users) == 1
                and len(total.args) == 2 and not total.kwargs):
            continue
        a, b = square_of(total.args[0]), square_of(total.args[1])
        if a is None or b is None:
            continue
        _replace(graph, node, aten.hypot.default, (a, b))
        rewritten = True
    if rewritten:
        graph.eliminate_dead_code()
        gm.recompile()


_COMPLEX_VIEWS = (aten.reshape.default, aten.view.default, aten._unsafe_view.default, aten.squeeze.dim,
                  aten.unsqueeze.default)


# A complex tensor scaled by a real one: the magnitude scales by its absolute value.
_REAL_SCALINGS = {aten.div.Tensor: aten.div.Tensor, aten.div_.Tensor: aten.div.Tensor,
                  aten.mul.Tensor: aten.mul.Tensor, aten.mul_.Tensor: aten.mul.Tensor}


def _is_real(arg) -> bool:
    if isinstance(arg, (int, float)):
        return True
    val = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and not val.is_complex()


def stft_magnitude_as_conv(gm: torch.fx.GraphModule) -> None:
    """|stft(x)| (torch.stft, torchaudio's Spectrogram / MelSpectrogram / MFCC) becomes what it
    computes on a microcontroller: a strided conv1d whose filters are the windowed cos / -sin basis
    (n_fft taps, hop stride, `normalized` folded in), its two halves the real and imaginary parts,
    and their hypot. The complex tensor never exists; only a magnitude read through views is
    rewritten (an stft read any other way stays, and is refused by name)."""
    graph = gm.graph
    rewritten = False
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.abs.default:
            continue
        chain, src = [], node.args[0]
        while isinstance(src, torch.fx.Node) and len(src.users) == 1 and (
                src.target in _COMPLEX_VIEWS or src.target in _REAL_SCALINGS and _is_real(src.args[1])):
            chain.insert(0, src)
            src = src.args[0]
        if not (isinstance(src, torch.fx.Node) and src.target is aten.stft.default and len(src.users) == 1):
            continue
        basis = _stft_basis(gm, src)
        if basis is None:
            continue
        x = src.args[0]
        val = x.meta.get("val")
        name = f"_mcu_stft_basis_{len([b for b in gm._buffers if b.startswith('_mcu_stft_basis')])}"
        gm.register_buffer(name, basis)
        bins = basis.shape[0] // 2
        hop = src.args[2] if len(src.args) > 2 and src.args[2] is not None else int(src.args[1]) // 4
        before = set(graph.nodes)
        with graph.inserting_before(node):
            weight = graph.get_attr(name)
            signal = graph.call_function(aten.unsqueeze.default, (x, -2))        # (..., 1, T)
            if val.dim() == 1:
                signal = graph.call_function(aten.unsqueeze.default, (signal, 0))
            parts = graph.call_function(aten.conv1d.default, (signal, weight, None, [int(hop)]))
            real = graph.call_function(aten.slice.Tensor, (parts, 1, 0, bins))
            imag = graph.call_function(aten.slice.Tensor, (parts, 1, bins, 2 * bins))
            magnitude = graph.call_function(aten.hypot.default, (real, imag))
            if val.dim() == 1:
                magnitude = graph.call_function(aten.squeeze.dim, (magnitude, 0))
            out = magnitude
            for step in chain:
                if step.target in _REAL_SCALINGS:     # |z / c| = |z| / |c| (torchaudio's normalized=True)
                    factor = step.args[1]
                    factor = graph.call_function(aten.abs.default, (factor,)) if isinstance(factor, torch.fx.Node) \
                        else abs(factor)
                    out = graph.call_function(_REAL_SCALINGS[step.target], (out, factor))
                else:
                    out = graph.call_function(step.target, (out, *step.args[1:]), dict(step.kwargs))
        created = [n for n in graph.nodes if n not in before]
        _describe_new_nodes(created, src, val, basis, weight)
        node.replace_all_uses_with(out)
        for old in [node, *reversed(chain), src]:     # in-place ops (div_) are not dead code to FX
            graph.erase_node(old)
        rewritten = True
    if rewritten:
        graph.eliminate_dead_code()
        gm.recompile()


def _describe_new_nodes(created, src, val, basis, weight) -> None:
    """The stft's source line and module for the nodes that replace it, and each one's value (a fake
    tensor in the program's fake mode, as export left on every node)."""
    fake_mode = getattr(val, "fake_mode", None)
    for new in created:
        new.meta["stack_trace"] = src.meta.get("stack_trace")
        new.meta["nn_module_stack"] = src.meta.get("nn_module_stack")
        if new is weight:
            new.meta["val"] = fake_mode.from_tensor(basis, static_shapes=True) if fake_mode is not None else basis
            continue
        _set_fake_value(new, fake_mode)


def _stft_basis(gm, stft) -> torch.Tensor | None:
    """(2 * bins, 1, n_fft) filters of an aten.stft node: window x cos, window x -sin, or None when
    its arguments are not constants this rewrite knows (a run-time window, two-sided output)."""
    args = list(stft.args) + [None] * (9 - len(stft.args))
    n_fft, _, win_length, window, normalized, onesided = (args[1], args[2], args[3], args[4], args[5], args[6])
    if onesided is False or not isinstance(n_fft, int):
        return None
    win_length = int(win_length) if win_length is not None else n_fft
    if window is None:
        w = torch.ones(win_length, dtype=torch.float64)
    elif isinstance(window, torch.fx.Node) and window.op == "get_attr":
        w = functools.reduce(getattr, window.target.split("."), gm).detach().to(torch.float64).reshape(-1)
    else:
        return None
    if w.numel() < n_fft:      # centred in n_fft, as torch.stft pads a shorter window
        left = (n_fft - w.numel()) // 2
        w = torch.nn.functional.pad(w, (left, n_fft - w.numel() - left))
    return stft_basis(w, n_fft, n_fft // 2 + 1, normalized).unsqueeze(1).to(torch.float32)


def division_by_constant_as_product(gm: torch.fx.GraphModule) -> int:
    """x / C with C a constant tensor (a normalisation by stored statistics: CSATv2's
    (x - mean) / std) becomes x * (1 / C), a product with a constant the lowering takes. A scalar
    divisor stays a division (a table or a rescale already). Returns how many."""
    from .constant_folding import constant_node
    from ..graph.nodes import fetch_attr
    graph = gm.graph
    rewritten = 0
    for div in list(graph.nodes):
        if div.op != "call_function" or div.target is not aten.div.Tensor or div.kwargs or len(div.args) != 2:
            continue
        x, c = div.args
        if not (isinstance(c, torch.fx.Node) and c.op == "get_attr" and isinstance(x, torch.fx.Node)):
            continue
        value = fetch_attr(gm, c.target)
        if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point or value.numel() == 1 \
                or not bool((value != 0).all()):
            continue
        reciprocal = constant_node(gm, div, f"_mcu_reciprocal_{div.name}", 1.0 / value)
        with graph.inserting_before(div):
            product = graph.call_function(aten.mul.Tensor, (x, reciprocal))
        product.meta.update(div.meta)
        div.replace_all_uses_with(product)
        graph.erase_node(div)
        rewritten += 1
    return recompiled(gm, rewritten)
