"""TFLite's int8 TRANSPOSE_CONV as TFLite Micro's reference kernel computes it
(reference_integer_ops::TransposeConv): every input pixel scatters (x - zp_x) * w into the output
at in * stride - pad + k, the rows that land outside the output dropped; then the int32 bias, the
per-channel requantisation (input scale * filter scale / output scale, in double) and the fused
activation's bounds.

TFLM's padding is not the input's: it runs ComputePaddingHeightWidth on the *output* size, as if
the output were a forward convolution's input (pad = max(0, (ComputeOutSize(output) - 1) * stride
+ kernel - output) / 2, both axes 0 when either ComputeOutSize fails). TOSA's transpose_conv2d
scatters the same way with out_pad_top = -pad; out_pad_bottom makes its output the tensor's
size. Where TOSA's ranges (out_pad > -kernel) do not reach, the full output is computed and sliced.
The filter is [OC, KH, KW, IC] in both. Portable kernel (the backend has no CMSIS-NN transposed
convolution).
"""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from .lower import SAME, VALID, Lowering, activation_range
from .reader import Operator
from .shape import constant_ints, operand, options


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def tflm_padding(padding: int, out_hw, kernel, stride) -> tuple[int, int]:
    """TFLM's (pad height, pad width) of a transposed convolution (CalculateOpData)."""
    sizes = []
    for size, k, s in zip(out_hw, kernel, stride):
        forward = _c_div(size + s - 1, s) if padding == SAME else _c_div(size + s - k, s)
        if forward < 0:
            return 0, 0
        sizes.append(forward)
    return tuple(max(0, (f - 1) * s + k - size) // 2 for f, size, k, s in zip(sizes, out_hw, kernel, stride))


def _filter(lw: Lowering, op: Operator, c_in: int):
    w = lw.quantized(op, operand(lw, op, 1, "filter"), "filter")
    if w.data is None or len(w.shape) != 4 or w.shape[3] != c_in:
        raise UserError(f"{lw.where(op)}: its filter ('{w.name}') must be a constant [OC, KH, KW, {c_in}], not "
                        f"{list(w.shape)}")
    c_out = w.shape[0]
    if np.any(w.quant.zero_points != 0):
        raise UserError(f"{lw.where(op)}: its filter ('{w.name}') has a non-zero zero point (TFLite Micro's kernel "
                        "ignores it)")
    if w.quant.per_channel and (w.quant.axis != 0 or len(w.quant.scales) != c_out):
        raise UserError(f"{lw.where(op)}: its filter has {len(w.quant.scales)} scales on axis {w.quant.axis}, "
                        f"expected {c_out} on axis 0")
    return w, np.broadcast_to(w.quant.scales, (c_out,))


def _bias(lw: Lowering, op: Operator, c_out: int):
    if len(op.inputs) < 4 or op.inputs[3] < 0:
        return np.zeros(c_out, np.int64)
    b = lw.tensor(op.inputs[3])
    if b.elem != "i32" or b.data is None or b.data.size != c_out:
        raise UserError(f"{lw.where(op)}: its bias ('{b.name}') must be a constant int32 vector of {c_out} values, "
                        f"not {b.elem} {list(b.shape)}")
    return b.data.reshape(c_out).astype(np.int64)


def _transpose_conv(lw: Lowering, op: Operator):
    o = options(op, Padding=SAME, StrideH=1, StrideW=1, FusedActivationFunction=0)
    xt = lw.quantized(op, operand(lw, op, 2, "input"), "input")
    out = lw.quantized(op, op.outputs[0], "output")
    if len(xt.shape) != 4 or len(out.shape) != 4:
        raise UserError(f"{lw.where(op)}: input and output must be 4-D (NHWC)")
    if o["Padding"] not in (SAME, VALID) or min(o["StrideH"], o["StrideW"]) < 1:
        raise UserError(f"{lw.where(op)}: padding {o['Padding']} and stride {[o['StrideH'], o['StrideW']]} are not "
                        "SAME / VALID and at least 1")
    if constant_ints(lw, op, 0, "output shape", 4) != list(out.shape):
        raise UserError(f"{lw.where(op)}: its output shape operand disagrees with its output {list(out.shape)}")
    w, w_scales = _filter(lw, op, xt.shape[3])
    c_out, kernel, stride = w.shape[0], w.shape[1:3], (o["StrideH"], o["StrideW"])
    if out.shape[0] != xt.shape[0] or out.shape[3] != c_out:
        raise UserError(f"{lw.where(op)}: output {list(out.shape)} does not fit input {list(xt.shape)} and "
                        f"{c_out} filters")
    pads = tflm_padding(o["Padding"], out.shape[1:3], kernel, stride)
    out_pad, start = [], []
    for axis in range(2):
        size, k, s, pad = out.shape[1 + axis], kernel[axis], stride[axis], pads[axis]
        top = max(-pad, 1 - k)              # TOSA: out_pad > -kernel; rows above the output sliced off
        full = (xt.shape[1 + axis] - 1) * s + k + top
        start.append(top + pad)             # TOSA's row y + top + pad is TFLM's row y
        out_pad += [top, max(start[-1] + size - full, 1 - k)]
    bias = lw.w.const(_bias(lw, op, c_out), "i32", (c_out,))
    acc = lw.w.transpose_conv2d(lw.value(xt.index, op), lw.w.const(w.data, "i8"), bias,
                                input_zp=xt.quant.zero_point, out_pad=out_pad, stride=stride)
    acc = lw.w.slice(acc, (0, start[0], start[1], 0), out.shape)
    real = xt.quant.scale * w_scales / out.quant.scale
    y = lw.requantize_accumulator(op, acc, real, out)
    return lw.clamp(y, activation_range(o["FusedActivationFunction"], out, lw.where(op)))


LOWER = {"TRANSPOSE_CONV": _transpose_conv}
