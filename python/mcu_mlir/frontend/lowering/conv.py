"""Convolutions and linear layers (conv1d / conv2d / linear / conv_transpose): one TOSA conv with its
rescale and clamp."""

from __future__ import annotations

import numpy as np
import torch

from ...diagnostics import UserError
from .tosa_builder import Value
from .values import Const, Q
from ..graph.nodes import aten, describe, shape_of, tuple_of


def _lower_conv(self, node, ins, scale, zp, elem, clamp):
    t = node.target
    x, w = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else node.kwargs.get("bias")
    if isinstance(bias, torch.fx.Node):
        bias = self.values[bias]
    if not isinstance(w, Const) or w.scales is None:
        raise UserError(f"{describe(node)}: the weight is not a quantized constant")
    xq = self.operand(x)
    linear = t == aten.linear.default
    if linear:
        rank = len(xq.shape)
        stride, padding, dilation, groups = (1, 1), (0, 0), (1, 1), 1
    else:
        xq, rank, stride, padding, dilation, groups = _conv_geometry(self, node, ins, w, xq)
    wq = np.asarray(w.data)
    if np.any(w.zps != 0):
        raise UserError(f"{describe(node)}: weights must be quantized symmetrically (CMSIS-NN has no weight zero point)")
    out_shape = shape_of(node)
    # View everything as NCHW 2-D convolution.
    if linear:
        k_in = xq.shape[-1]
        rows = int(np.prod(xq.shape[:-1], dtype=np.int64))
        # The rows along the height (NHWC already), the axis 1-D convolutions use: a convolution
        # kernel takes several pixels of one image at a time (CMSIS-NN's int16 one: four with MVE,
        # two with DSP) but one image at a time.
        x4 = self.w.reshape(xq.v, (1, rows, 1, k_in))
        w4 = wq.reshape(wq.shape[0], 1, 1, k_in)        # OHWI
        nhwc = x4
    else:
        if rank == 3:
            x4 = self.w.reshape(xq.v, (xq.shape[0], xq.shape[1], xq.shape[2], 1))
            wq = wq.reshape(*wq.shape, 1)
        else:
            x4 = xq.v
        nhwc = self.w.transpose(x4, [0, 2, 3, 1])
        w4 = None
    acc_elem = "i48" if xq.elem == "i16" else "i32"
    welem = _weight_elem(node, w, xq)
    c_out = wq.shape[0]
    w_scales = np.broadcast_to(np.asarray(w.scales, np.float64), (c_out,))
    bias_q = _quantized_bias(node, bias, xq.scale * w_scales, c_out)
    # The zero points first, the weights after: the constants keep their order.
    self.w.zp(xq.zp, xq.elem)
    self.w.zp(0, welem)
    n, h, wd, c_in = nhwc.shape
    if linear and xq.elem == "i8" and welem == "i8":
        # Fully connected as TOSA 1.0 writes it: matmul with a constant [1, K, M] right-hand side,
        # then the int32 bias add (the backend matches matmul + add + rescale as one kernel).
        a = self.w.reshape(xq.v, (1, rows, k_in))
        wv = self.w.const(wq.T.reshape(1, k_in, c_out), "i8")
        mm = self.w.matmul(a, wv, xq.zp, 0)
        b = self.w.const(bias_q.reshape(1, 1, c_out), "i32", (1, 1, c_out))
        acc = self.w.add(mm, b)
        kind = "linear"
    elif linear:
        # int16 x int8 and int8 x int4 have no TOSA matmul: a 1x1 convolution over [1, rows, 1, K].
        wv = self.w.const(w4, welem)
        b = self.w.const(bias_q, acc_elem, (c_out,))
        acc = self.w.conv2d(nhwc, wv, b, input_zp=xq.zp, pad=(0, 0, 0, 0), stride=(1, 1), dilation=dilation)
        kind = "linear"
    else:
        kh, kw = wq.shape[2], wq.shape[3]
        pads, nhwc = exact_pads(self, nhwc, (kh, kw), stride, padding, dilation, xq.zp)
        n, h, wd, c_in = nhwc.shape
        window = dict(input_zp=xq.zp, pad=pads, stride=stride, dilation=dilation)
        cin_g = wq.shape[1]
        if groups == 1:
            wv = self.w.const(wq.transpose(0, 2, 3, 1), welem)
            b = self.w.const(bias_q, acc_elem, (c_out,))
            acc = self.w.conv2d(nhwc, wv, b, **window)
            kind = "conv2d" if rank == 4 else "conv1d"
        elif cin_g == 1 and groups == c_in:
            mult = c_out // c_in
            wv = self.w.const(wq.reshape(c_in, mult, kh, kw).transpose(2, 3, 0, 1), welem)
            b = self.w.const(bias_q, acc_elem, (c_out,))
            acc = self.w.depthwise_conv2d(nhwc, wv, b, **window)
            kind = "depthwise_conv2d" if rank == 4 else "depthwise_conv1d"
        else:
            parts = _grouped_convs(self, nhwc, wq, bias_q, groups, acc_elem, window, welem)
            kind = "grouped_conv2d" if rank == 4 else "grouped_conv1d"
    real = xq.scale * w_scales / scale
    if welem == "i4" and np.size(w.scales) == 1:
        real = real[:1]     # one weight scale (an int4 linear layer): arm_fully_connected_s4's per-tensor rescale
    if kind.startswith("grouped"):
        # Each group's accumulator is rescaled on its own (int48 cannot be concatenated).
        cout_g = c_out // groups
        outs = [self.acc_rescale(p, real[g * cout_g:(g + 1) * cout_g], zp, elem) for g, p in enumerate(parts)]
        out = Q(self.w.concat(outs, 3), scale, zp)
    else:
        out = Q(self.acc_rescale(acc, real, zp, elem), scale, zp)
    out = self.apply_clamp(out, clamp)
    if linear:
        res = self.w.reshape(out.v, out_shape)
    else:
        res = self.w.transpose(out.v, [0, 3, 1, 2])
        res = self.w.reshape(res, out_shape)
    self.record_layer(node, kind, xq, w, scale, zp)
    return Q(res, scale, zp)


def _weight_elem(node, w: Const, xq: Q) -> str:
    """int4 weights (frontend/quantize/int4_weights.py) stay int4 constants (TOSA's i8 x i4
    convolutions); every other weight is int8."""
    if w.elem != "i4":
        return "i8"
    if xq.elem != "i8":
        raise UserError(f"{describe(node)}: int4 weights take int8 activations (CMSIS-NN's s4 kernels), "
                        f"not {xq.elem}")
    return "i4"


def _conv_geometry(self, node, ins, w, xq):
    """A convolution's input (batched) and window as a 2-D one's: (xq, rank, stride, padding,
    dilation, groups), 1-D convolutions over a height of one."""
    rank = len(xq.shape)

    def arg(i, default):
        return ins[i] if len(ins) > i else node.kwargs.get(("stride", "padding", "dilation", "groups")[i - 3], default)
    stride, padding, dilation, groups = arg(3, 1), arg(4, 0), arg(5, 1), arg(6, 1)
    n_sp = w.data.ndim - 2
    if rank == n_sp + 1:    # unbatched input: add the batch dimension
        xq = Q(self.w.reshape(xq.v, (1,) + tuple(xq.shape)), xq.scale, xq.zp)
        rank += 1
    stride, dilation = tuple_of(stride, n_sp), tuple_of(dilation, n_sp)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * n_sp
        else:   # "same": PyTorch puts the odd row / column of padding at the bottom / right
            totals = [d * (kk - 1) for d, kk in zip(dilation, w.data.shape[2:])]
            padding = tuple((t // 2, t - t // 2) for t in totals)
    padding = tuple_of(padding, n_sp)
    if n_sp == 1:
        stride, padding, dilation = (stride[0], 1), (padding[0], (0, 0)), (dilation[0], 1)
    elif n_sp != 2:
        raise UserError(f"{describe(node)}: only 1-D and 2-D convolutions are supported")
    return xq, rank, stride, padding, dilation, groups


def _grouped_convs(self, nhwc, wq, bias_q, groups, acc_elem, window, welem="i8") -> list:
    """A grouped convolution as one convolution per group: their accumulators, rescaled apart later."""
    n, h, wd, _ = nhwc.shape
    cin_g, cout_g = wq.shape[1], wq.shape[0] // groups
    parts = []
    for g in range(groups):
        xs = self.w.slice(nhwc, (0, 0, 0, g * cin_g), (n, h, wd, cin_g))
        wv = self.w.const(wq[g * cout_g:(g + 1) * cout_g].transpose(0, 2, 3, 1), welem)
        b = self.w.const(bias_q[g * cout_g:(g + 1) * cout_g], acc_elem, (cout_g,))
        parts.append(self.w.conv2d(xs, wv, b, **window))
    return parts


def _quantized_bias(node, bias, expect, c_out):
    """The bias as int32/int48 integers at the accumulator's scale `expect` (input x weight scales)."""
    if bias is None:
        return np.zeros(c_out, np.int64)
    if isinstance(bias, Const) and bias.scales is not None:
        bias_q = np.asarray(bias.data, np.int64).reshape(-1)
        scales = np.broadcast_to(np.asarray(bias.scales, np.float64), (c_out,))
        if not np.allclose(scales, expect, rtol=1e-5):
            # A bias that layers with other inputs share (CoaT's one position-encoding conv for
            # every block of a stage) was quantized for one of them: this layer takes its value
            # at its own input scale x weight scale.
            bias_q = np.round(np.broadcast_to(bias_q, (c_out,)) * scales / expect).astype(np.int64)
        return bias_q
    if isinstance(bias, Const):
        return np.round(np.asarray(bias.data, np.float64) / expect).astype(np.int64)
    raise UserError(f"{describe(node)}: the bias is not a constant")


def _lower_conv_transpose(self, node, ins, scale, zp, elem, clamp):
    """ConvTranspose1d / 2d as TOSA TRANSPOSE_CONV2D: a dilated kernel becomes the larger kernel
    with zeros between its taps (the same sums), a grouped one one transposed convolution per
    group, each rescaled and the groups concatenated."""
    x, w = ins[0], ins[1]
    a = list(node.args) + [None] * 8
    bias = self.values.get(a[2]) if isinstance(a[2], torch.fx.Node) else None
    if not isinstance(w, Const) or w.scales is None:
        raise UserError(f"{describe(node)}: the weight is not a quantized constant")
    xq = self.operand(x)
    acc_elem = "i48" if xq.elem == "i16" else "i32"
    wq = np.asarray(w.data)
    n_sp = wq.ndim - 2
    stride, padding = tuple_of(a[3] or 1, n_sp), tuple_of(a[4] or 0, n_sp)
    out_padding, groups, dilation = tuple_of(a[5] or 0, n_sp), a[6] or 1, tuple_of(a[7] or 1, n_sp)
    if np.any(w.zps != 0):
        raise UserError(f"{describe(node)}: weights must be quantized symmetrically")
    if n_sp == 1:
        wq = wq.reshape(*wq.shape, 1)
        stride, padding, out_padding, dilation = (stride[0], 1), (padding[0], 0), (out_padding[0], 0), (dilation[0], 1)
        x4 = self.w.reshape(xq.v, (xq.shape[0], xq.shape[1], xq.shape[2], 1))
    else:
        x4 = xq.v
    wq = _dilated_kernel(wq, dilation)
    cout_g = wq.shape[1]
    c_out = cout_g * groups
    # Weight axis 1 holds one group's output channels: its scales repeat for every group.
    w_scales = np.asarray(w.scales, np.float64).reshape(-1)
    w_scales = np.tile(w_scales, c_out // w_scales.size)
    if isinstance(bias, Const) and bias.scales is not None:
        bias_q = np.broadcast_to(np.asarray(bias.data, np.int64).reshape(-1), (c_out,))
    elif isinstance(bias, Const):
        bias_q = np.round(np.asarray(bias.data, np.float64) / (xq.scale * w_scales)).astype(np.int64)
    else:
        bias_q = np.zeros(c_out, np.int64)
    nhwc = self.w.transpose(x4, [0, 2, 3, 1])
    # PyTorch's padding crops the full output; output_padding adds rows at the bottom / right.
    out_pad = [-padding[0], -padding[0] + out_padding[0], -padding[1], -padding[1] + out_padding[1]]
    real = xq.scale * w_scales / scale
    n, h, wd, c_in = nhwc.shape
    cin_g = c_in // groups
    outs = []
    for g in range(groups):
        xs = nhwc if groups == 1 else self.w.slice(nhwc, (0, 0, 0, g * cin_g), (n, h, wd, cin_g))
        channels = slice(g * cout_g, (g + 1) * cout_g)
        wv = self.w.const(wq[g * cin_g:(g + 1) * cin_g].transpose(1, 2, 3, 0), "i8")   # [IC, OC, KH, KW] -> OHWI
        b = self.w.const(bias_q[channels], acc_elem, (cout_g,))
        acc = self.w.transpose_conv2d(xs, wv, b, input_zp=xq.zp, out_pad=out_pad, stride=stride)
        # Each group's accumulator is rescaled on its own (int48 cannot be concatenated).
        outs.append(self.acc_rescale(acc, real[channels], zp, elem))
    out = Q(outs[0] if groups == 1 else self.w.concat(outs, 3), scale, zp)
    out = self.apply_clamp(out, clamp)
    res = self.w.reshape(self.w.transpose(out.v, [0, 3, 1, 2]), shape_of(node))
    self.record_layer(node, "transpose_conv2d" if n_sp == 2 else "transpose_conv1d", xq, w, scale, zp)
    return Q(res, scale, zp)


def _dilated_kernel(wq: np.ndarray, dilation) -> np.ndarray:
    """A [.., .., KH, KW] kernel with dilation (dh, dw) as the undilated kernel of
    (dh * (KH - 1) + 1, dw * (KW - 1) + 1) taps, zero between the original ones."""
    if all(d == 1 for d in dilation):
        return wq
    kh, kw = wq.shape[2:]
    spread = np.zeros(wq.shape[:2] + (dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1), wq.dtype)
    spread[:, :, ::dilation[0], ::dilation[1]] = wq
    return spread


def exact_pads(self, nhwc: Value, k, stride, padding, dilation, pad_value: int | None = None):
    """TOSA wants (in + pads - dilated kernel) divisible by the stride: trim the bottom/right
    padding (and input rows PyTorch would never read) like PyTorch's floor division does. Where
    the windows read the leading padding only (a 1-row input, padding 1, stride 3), no input row
    is left to keep: that padding is made explicit with `pad_value` (the input's zero point).
    `padding`: per axis one amount for both sides or a (top / left, bottom / right) pair."""
    pads = [p for axis in padding for p in (tuple(axis) if isinstance(axis, (tuple, list)) else (axis, axis))]
    n, h, w, c = nhwc.shape
    for axis, (size, kk, s, d) in enumerate(zip((h, w), k, stride, dilation)):
        lo, hi = pads[2 * axis], pads[2 * axis + 1]
        rem = (size + lo + hi - d * (kk - 1) - 1) % s
        if rem - min(rem, hi) >= size and lo:
            if pad_value is None:
                raise UserError(f"a window that reads only padding ({size} input rows, padding {lo}, stride {s}) "
                                "is not supported here")
            amounts = [0] * 8
            amounts[2 + 2 * axis] = lo
            nhwc = self.w.pad(nhwc, amounts, pad_value)
            size, lo = size + lo, 0
            pads[2 * axis] = 0
            rem = (size + hi - d * (kk - 1) - 1) % s
        cut = min(rem, hi)
        hi -= cut
        rem -= cut
        pads[2 * axis + 1] = hi
        if rem:
            shape = list(nhwc.shape)
            shape[1 + axis] -= rem
            nhwc = self.w.slice(nhwc, (0, 0, 0, 0), shape)
    return pads, nhwc


LOWER = {
    aten.conv1d.default: _lower_conv, aten.conv2d.default: _lower_conv,
    aten.conv1d.padding: _lower_conv, aten.conv2d.padding: _lower_conv,
    aten.linear.default: _lower_conv,
    aten.conv_transpose2d.input: _lower_conv_transpose, aten.conv_transpose1d.default: _lower_conv_transpose,
}
EAGER = {}
