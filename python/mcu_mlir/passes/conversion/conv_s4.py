"""int4 weights on CMSIS-NN's s4 kernels: TOSA's conv2d / depthwise_conv2d of int8 by int4 with
their per-channel rescale to int8 (+ clamp) as one arm_convolve_wrapper_s4 /
arm_depthwise_conv_wrapper_s4 call (or the generic arm_convolve_s4 / arm_depthwise_conv_s4 where
the function the wrapper picks would compute the window's padding wrongly: cmsis_padding), and the
1x1 per-tensor conv2d that stands for a fully connected layer (arm_fully_connected_s4).

The weights are packed two per byte in the filter's row-major order, as the kernels read them
(OHWI for conv, H x W x (C x M) for depthwise). What no s4 kernel takes (a weight zero point, an
int32 result, a rescale arm_nn_requantize would round differently, the portable backend) is left
to conv.py, which unpacks the weights to int8 for the portable kernels."""

from __future__ import annotations

import numpy as np

from ..._mlir import ir, tosa
from ...dialects import cmsisnn
from ...ir import attributes as mcu_attrs
from ...kernel_library import cmsis_padding
from .common import (UNIT, CONVERTED, NO_MATCH, const_array, const_scalar, elem, follow_requant_tail,
                     fused_location, make_const, make_op, per_channel_params, shape)
from .conv import _bias_per_channel, _trailing_slice_source, _window, accumulator_bound


def pack_int4(values: np.ndarray) -> np.ndarray:
    """CMSIS-NN's packing of int4 weights: consecutive elements in pairs, the first in the low
    nibble ([1, 2, 3, 4] -> [0x21, 0x43]); an odd count leaves the last high nibble 0."""
    flat = np.asarray(values, np.int64).reshape(-1)
    if flat.size % 2:
        flat = np.append(flat, 0)
    return ((flat[0::2] & 0xF) | ((flat[1::2] & 0xF) << 4)).astype(np.uint8).view(np.int8)


def convert_fully_connected_s4(op, rw):
    """A 1x1, stride 1, unpadded conv2d of int8 by int4 weights (TOSA's form of a fully connected
    layer with int4 weights) with a per-tensor rescale to int8 (+ clamp): arm_fully_connected_s4
    over its rows of C."""
    inp, weight, bias, izp_v, wzp_v = op.operands
    if not rw.use_cmsis or elem(inp) != "i8" or elem(weight) != "i4":
        return NO_MATCH
    pad, stride, dilation = _window(op)
    out_c, k_h, k_w, depth = shape(weight)
    w, wzp, izp = const_array(weight), const_scalar(wzp_v), const_scalar(izp_v)
    if w is None or wzp != 0 or izp is None or const_array(bias) is None or \
            (k_h, k_w) != (1, 1) or any(pad) or stride != [1, 1] or dilation != [1, 1] or not -128 <= izp <= 127:
        return NO_MATCH
    tail = follow_requant_tail(op)
    b = np.abs(np.asarray(const_array(bias), np.int64)).reshape(-1)
    bound = int((np.abs(w).reshape(out_c, -1).sum(axis=1) * max(127 - izp, izp + 128) + b).max())
    if tail is None or tail[0].per_channel or not tail[0].requantize_exact(max_abs_input=bound):
        return NO_MATCH
    rs, last, act = tail
    ops = [op, rs.op] + ([last] if last is not rs.op else [])
    bias = _bias_per_channel(op, bias, out_c)
    packed = make_const(pack_int4(w.reshape(out_c, depth)), op, op.location)
    (m, *_), (shift, *_) = rs.cmsis_requantize()
    attrs = {"input_offset": -izp, "output_offset": rs.output_zp, "multiplier": m, "shift": shift,
             "activation": act}
    new = make_op(cmsisnn.FullyConnectedS4Op, [inp, packed, bias], last.results[0].type, attrs, before=op,
                  loc=fused_location(ops), source_op="+".join(o.operation.name for o in ops))
    rw.replace(ops, last, new)
    return CONVERTED


def convert_conv2d_s4(op, rw):
    return _convert_s4(op, rw, depthwise=False)


def convert_depthwise_conv2d_s4(op, rw):
    return _convert_s4(op, rw, depthwise=True)


def _s4_call(rw, w, depthwise: bool, ch_mult: int):
    """(algorithm, note): the wrapper unless the function it picks on this core would compute the
    window wrongly; then the generic kernel, which clips every window, and the note says why;
    (None, None) when that one is wrong too (depthwise, odd input channels)."""
    if depthwise:
        fn = cmsis_padding.depthwise_s4_function(rw.core, "wrapper", w, ch_mult)
    else:
        fn = cmsis_padding.conv_s4_function(rw.core, "wrapper", w)
    why = cmsis_padding.problem(fn, rw.core, w)
    if why is None:
        return "wrapper", None
    generic = "arm_depthwise_conv_s4" if depthwise else "arm_convolve_s4"
    if cmsis_padding.problem(generic, rw.core, w) is not None:
        return None, None
    return "generic", f"{why}: {generic} instead"


def _convert_s4(op, rw, depthwise: bool):
    inp, weight, bias, izp_v, wzp_v = op.operands
    if not rw.use_cmsis or elem(inp) != "i8" or elem(weight) != "i4":
        return NO_MATCH
    w, izp, wzp = const_array(weight), const_scalar(izp_v), const_scalar(wzp_v)
    if w is None or izp is None or wzp != 0 or const_array(bias) is None:
        return NO_MATCH   # conv.py refuses it or unpacks it for a portable kernel, saying why
    tail = follow_requant_tail(op, "i8")
    if tail is None or not tail[0].requantize_exact(
            max_abs_input=accumulator_bound(weight, bias, izp, depthwise)):
        return NO_MATCH
    rs, last, act = tail
    pad, stride, dilation = _window(op)
    in_shape, w_shape, out_shape = shape(inp), shape(weight), shape(op.results[0])
    # Slices that only drop rows / columns the conv never reads (a strided 1x1 shortcut's input)
    # are read past, as for int8 weights: the kernel loops over the output.
    read_past = None if depthwise else _trailing_slice_source(op, rw, inp, w_shape, out_shape, pad, stride,
                                                              dilation)
    absorbed = []
    if read_past is not None:
        inp, absorbed = read_past
        in_shape = shape(inp)
    ops = absorbed[::-1] + [op, rs.op] + ([last] if last is not rs.op else [])
    out_c = out_shape[3]
    if depthwise:
        k_h, k_w, channels, ch_mult = w_shape
        dims = [1, k_h, k_w, channels * ch_mult]
    else:
        dims, ch_mult = list(w_shape), 1
    padding = [pad[0], pad[2], pad[1], pad[3]]
    win = cmsis_padding.window(in_shape, out_shape, dims[1:3], stride, dilation, padding,
                               1 if depthwise else dims[3])
    algorithm, note = _s4_call(rw, win, depthwise, ch_mult)
    if algorithm is None:
        return NO_MATCH   # conv.py takes it on an int8 kernel with the weights unpacked, saying why
    mult, shift = per_channel_params(rs, out_c)
    attrs = {"input_offset": -izp, "output_offset": rs.output_zp, "stride": stride, "padding": padding,
             "dilation": dilation, "multiplier": mult, "shift": shift, "activation": act,
             "filter_dims": dims, "algorithm": algorithm}
    cls = cmsisnn.DepthwiseConvS4Op if depthwise else cmsisnn.ConvS4Op
    if depthwise:
        attrs["ch_mult"] = ch_mult
    bias = _bias_per_channel(op, bias, out_c)
    packed = make_const(pack_int4(w), op, op.location)
    new = make_op(cls, [inp, packed, bias], last.results[0].type, attrs, before=op, loc=fused_location(ops),
                  source_op="+".join(o.operation.name for o in ops))
    if note is not None:
        new.attributes[mcu_attrs.KERNEL_NOTE] = ir.StringAttr.get(note)
    rw.replace(ops, last, new)
    return CONVERTED


PATTERNS = [
    ("fully-connected-s4", tosa.Conv2DOp, convert_fully_connected_s4, UNIT),
    ("conv2d-s4", tosa.Conv2DOp, convert_conv2d_s4, UNIT),
    ("depthwise-conv2d-s4", tosa.DepthwiseConv2DOp, convert_depthwise_conv2d_s4, UNIT),
]
