"""CMSIS-NN scratch buffer sizes per core, computed as its `*_get_buffer_size` functions do.

Ported from CMSIS-NN (Source/*/arm_*_get_buffer_sizes_s8.c) for GCC builds: `path` is "mve"
(Cortex-M55), "dsp" (M4 / M7 / M33) or "c" (M0 / M3 / host). The generated code re-checks every
size against the library's own function in debug builds.
"""

from __future__ import annotations

CH_IN_BLOCK_MVE = 124
# GCC (not Arm Compiler 6) value of CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD
DW_ONE_INPUT_CH_THRESHOLD = 1


def _is_1x1(pad, dilation, in_c, f):
    return pad[0] == 0 and pad[1] == 0 and f[1] == 1 and f[2] == 1 and dilation == [1, 1] \
        and in_c == f[3]


def _is_1xn(stride, dilation, in_shape, f):
    return in_shape[1] == 1 and dilation[1] == 1 and f[1] == 1 and \
        (stride[1] * in_shape[3]) % 4 == 0 and in_shape[3] == f[3]


def convolve_s8(path, in_c, f_h, f_w) -> int:
    if path == "mve":
        cols = (in_c * f_w * f_h + 15) // 16
        return 4 * cols * 16
    rhs_cols = f_w * f_h * in_c
    aligned = rhs_cols + (4 - rhs_cols % 4) % 4
    return 2 * aligned * 2


def _convolve_1xn_mve(pad_w, stride_w, in_shape, f, out_shape) -> int:
    input_x, kernel_x, output_x, in_c = in_shape[2], f[2], out_shape[2], in_shape[3]
    total_pad = (output_x - 1) * stride_w + kernel_x - input_x
    asym = total_pad % 2
    right = max(1, (pad_w + asym + stride_w - 1) // stride_w) if pad_w + asym != 0 else 0
    left = max(1, (pad_w + stride_w - 1) // stride_w) if pad_w != 0 else 0
    no_pad = max(output_x - (right + left), 0)
    if right + no_pad + left != output_x:
        return convolve_s8("mve", in_c, f[1], f[2])
    pad_left = pad_w * in_c
    pad_right = right * in_c if asym else pad_left
    num_left = kernel_x * in_c
    return max(num_left + pad_left, num_left - in_c + pad_right)


def conv_wrapper_s8(path, kernel, stride, pad, dilation, in_shape, f, out_shape) -> int:
    """pad = [pad_h (top), pad_w (left)]; f = filter [O, H, W, I]."""
    if kernel == "arm_convolve_s8":
        return convolve_s8(path, in_shape[3], f[1], f[2])
    if _is_1x1(pad, dilation, in_shape[3], f):
        return 0  # 1x1 (fast or not) needs no buffer with GCC
    if _is_1xn(stride, dilation, in_shape, f):
        if path == "mve":
            return _convolve_1xn_mve(pad[1], stride[1], in_shape, f, out_shape)
        return convolve_s8(path, in_shape[3], f[1], f[2])
    return convolve_s8(path, in_shape[3], f[1], f[2])


def depthwise_wrapper_s8(path, stride, pad, dilation, in_shape, f, out_shape) -> int:
    """f = filter [1, H, W, C_OUT]."""
    in_c, out_c = in_shape[3], out_shape[3]
    size = 0
    if path == "mve" and in_c == 1 and out_c > DW_ONE_INPUT_CH_THRESHOLD:
        conv_f = [f[3], f[1], f[2], f[0]]
        s = conv_wrapper_s8("mve", "arm_convolve_wrapper_s8", stride, pad, dilation, in_shape,
                            conv_f, out_shape)
        return s + f[0] * f[1] * f[2] * f[3]
    if in_c == out_c and in_shape[0] == 1 and dilation == [1, 1]:
        if path != "mve" and f[1] == 3 and f[2] == 3 and pad[0] <= 1 and pad[1] <= 1:
            return 0
        if path == "mve":
            size = 4 * CH_IN_BLOCK_MVE * f[1] * f[2]
        elif path == "dsp":
            size = in_c * f[1] * f[2] * 2
    return size


def fully_connected_s8(path, out_c) -> int:
    return out_c * 4 if path == "mve" else 0


def batch_matmul_s8(path, rhs_rows) -> int:
    """arm_batch_matmul_s8 on MVE sums each rhs row into the context buffer (int32 each)."""
    return rhs_rows * 4 if path == "mve" else 0


def avgpool_s8(path, ch) -> int:
    return ch * 4 if path == "dsp" else 0


def conv_wrapper_s16(path, in_c, f_h, f_w) -> int:
    if path == "mve":
        return 4 * ((in_c * f_w * f_h + 7) // 8) * 8 * 2
    return 2 * in_c * f_w * f_h * 2


def depthwise_wrapper_s16(path, ch_mult, dilation, in_c, f_h, f_w) -> int:
    if not (ch_mult == 1 and dilation == [1, 1] and f_w * f_h < 512):
        return 0
    if path == "mve":
        return 4 * in_c * f_w * f_h * 2 + 8
    if path == "dsp":
        return in_c * f_w * f_h * 2
    return 0


def avgpool_s16(path, ch) -> int:
    return ch * 4 if path == "dsp" else 0


def lstm_scratch_bytes(rows: int, hidden: int) -> int:
    """An LSTM step's buffers: two int16 gate buffers and the copy of the hidden state the kernel
    reads (it writes the new one there when the step ends)."""
    return 2 * (2 * rows * hidden) + rows * hidden
