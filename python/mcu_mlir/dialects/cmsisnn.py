"""The `cmsisnn` dialect: one op per CMSIS-NN function family.

Every op takes its tensors as operands (activations first, then constant weights / bias) and
carries the scalar parameters of the call as typed attributes, in CMSIS-NN's conventions:
`input_offset` / `filter_offset` are negated zero points, `output_offset` the output zero point,
`multiplier` / `shift` the requantisation (`shift` > 0 shifts left, as in `arm_nn_requantize`),
`padding` is `[top, left, bottom, right]`, `activation` is `[min, max]`.

Which `arm_*` function an op calls follows from the op, its element types and, for the
convolutions, the `algorithm` the conversion or the memory planner chose (`function_name`).
Each op also answers what the memory planner and the report ask about that function: its scratch
buffer per core (CMSIS-NN's `*_get_buffer_size`, ported below), its MACs, whether it writes in
place or over its input (kernel_op.KernelOp). Calls into the project's own C kernels are the
`portable` dialect.
"""

# No `from __future__ import annotations`: the ext module reads the field annotations as types.
import math

from .._mlir import ir
from ..ir import attributes as mcu_attrs
from .kernel_op import (AddFields, ConcatFields, ConvFields, I32Array, KernelOp, LstmFields, MulFields, PoolFields,
                        UnaryFields, WeightedFields, lstm_macs, no_macs, no_scratch, numel, per_channel_check,
                        rows_check, Softmax16Fields, same_or_leading_repeat, window_macs, WINDOW_LENGTHS)

from torch_mlir.dialects.ext import Dialect, Operand, Result  # noqa: E402  (bindings' own module)


class CmsisNN(Dialect, name="cmsisnn"):
    pass


# -- scratch buffers --------------------------------------------------------------------------
# CMSIS-NN's `*_get_buffer_size` functions (Source/*/arm_*_get_buffer_sizes_s8.c) for GCC
# builds, per core: MVE (Cortex-M55), DSP (M4 / M7 / M33) or plain C (M0 / M3 / host). The
# generated code re-checks every size against the library's own function in debug builds.

CH_IN_BLOCK_MVE = 124
# GCC (not Arm Compiler 6) value of CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD
DW_ONE_INPUT_CH_THRESHOLD = 1


def _dsp_only(core) -> bool:
    """The DSP code path: DSP instructions and no MVE (CMSIS-NN takes the MVE path over it)."""
    return core.has_dsp and not core.has_mve


def _is_1x1(pad, dilation, in_c, f):
    return pad[0] == 0 and pad[1] == 0 and f[1] == 1 and f[2] == 1 and dilation == [1, 1] \
        and in_c == f[3]


def _is_1xn(stride, dilation, in_shape, f):
    return in_shape[1] == 1 and dilation[1] == 1 and f[1] == 1 and \
        (stride[1] * in_shape[3]) % 4 == 0 and in_shape[3] == f[3]


def convolve_s8_scratch(core, in_c, f_h, f_w) -> int:
    if core.has_mve:
        cols = (in_c * f_w * f_h + 15) // 16
        return 4 * cols * 16
    rhs_cols = f_w * f_h * in_c
    aligned = rhs_cols + (4 - rhs_cols % 4) % 4
    return 2 * aligned * 2


def _convolve_1xn_mve_scratch(core, pad_w, stride_w, in_shape, f, out_shape) -> int:
    input_x, kernel_x, output_x, in_c = in_shape[2], f[2], out_shape[2], in_shape[3]
    total_pad = (output_x - 1) * stride_w + kernel_x - input_x
    asym = total_pad % 2
    right = max(1, (pad_w + asym + stride_w - 1) // stride_w) if pad_w + asym != 0 else 0
    left = max(1, (pad_w + stride_w - 1) // stride_w) if pad_w != 0 else 0
    no_pad = max(output_x - (right + left), 0)
    if right + no_pad + left != output_x:
        return convolve_s8_scratch(core, in_c, f[1], f[2])
    pad_left = pad_w * in_c
    pad_right = right * in_c if asym else pad_left
    num_left = kernel_x * in_c
    return max(num_left + pad_left, num_left - in_c + pad_right)


def conv_wrapper_s8_scratch(core, kernel, stride, pad, dilation, in_shape, f, out_shape) -> int:
    """pad = [pad_h (top), pad_w (left)]; f = filter [O, H, W, I]."""
    if kernel == "arm_convolve_s8":
        return convolve_s8_scratch(core, in_shape[3], f[1], f[2])
    if _is_1x1(pad, dilation, in_shape[3], f):
        return 0  # 1x1 (fast or not) needs no buffer with GCC
    if _is_1xn(stride, dilation, in_shape, f) and core.has_mve:
        return _convolve_1xn_mve_scratch(core, pad[1], stride[1], in_shape, f, out_shape)
    return convolve_s8_scratch(core, in_shape[3], f[1], f[2])


def depthwise_wrapper_s8_scratch(core, stride, pad, dilation, in_shape, f, out_shape) -> int:
    """f = filter [1, H, W, C_OUT]."""
    in_c, out_c = in_shape[3], out_shape[3]
    if core.has_mve and in_c == 1 and out_c > DW_ONE_INPUT_CH_THRESHOLD:
        conv_f = [f[3], f[1], f[2], f[0]]
        s = conv_wrapper_s8_scratch(core, "arm_convolve_wrapper_s8", stride, pad, dilation, in_shape,
                                    conv_f, out_shape)
        return s + f[0] * f[1] * f[2] * f[3]
    if in_c == out_c and in_shape[0] == 1 and dilation == [1, 1]:
        if not core.has_mve and f[1] == 3 and f[2] == 3 and pad[0] <= 1 and pad[1] <= 1:
            return 0
        if core.has_mve:
            return 4 * CH_IN_BLOCK_MVE * f[1] * f[2]
        if core.has_dsp:
            return in_c * f[1] * f[2] * 2
    return 0


def conv_wrapper_s16_scratch(core, in_c, f_h, f_w) -> int:
    if core.has_mve:
        return 4 * ((in_c * f_w * f_h + 7) // 8) * 8 * 2
    return 2 * in_c * f_w * f_h * 2


def depthwise_wrapper_s16_scratch(core, ch_mult, dilation, in_c, f_h, f_w) -> int:
    if not (ch_mult == 1 and dilation == [1, 1] and f_w * f_h < 512):
        return 0
    if core.has_mve:
        return 4 * in_c * f_w * f_h * 2 + 8
    if core.has_dsp:
        return in_c * f_w * f_h * 2
    return 0


# -- output over input ------------------------------------------------------------------------
# Output pixels one step of the exact kernel a conv calls may compute together, when it writes
# its output in raster order (passes/transforms/memory_overlap.py), read from the kernel sources (CMSIS-NN
# commit 99f736a). None: the kernel does not (or is not modelled).

# Output pixels one kernel step may compute together (MVE: 4, DSP: 2; 4 bounds both).
STEP_PIXELS = 4


def conv_overlap_step(op, core):
    kernel = op.function_name()
    in_shape, out_shape, f = op.shape(0), op.shape(0, result=True), op.shape(1)
    stride, pad, dil = op.ints("stride"), op.ints("padding"), op.ints("dilation")
    if kernel.endswith("_s16"):
        return None  # not modelled
    if in_shape[3] != f[3]:
        return None  # grouped: arm_convolve_s8 sweeps the image once per group
    if kernel == "arm_convolve_s8":
        return STEP_PIXELS  # im2col of 4 (MVE) / 2 (DSP) pixels, then their outputs
    if kernel == "arm_convolve_1x1_s8":
        # One arm_nn_mat_mult_nt_t_s8 call per output row: a row is the step.
        return max(out_shape[2], STEP_PIXELS)
    is_1x1 = pad[0] == 0 and pad[1] == 0 and f[1] == 1 and f[2] == 1 and dil == [1, 1]
    if is_1x1 and stride == [1, 1]:
        # arm_convolve_1x1_s8_fast -> arm_nn_mat_mult_nt_t_s8: on MVE 4 rows (pixels) at a
        # time; on DSP / C its outer loop runs over output-channel pairs, so every pixel is read
        # again after the first outputs are written: no overlap there.
        return STEP_PIXELS if core.has_mve else None
    if is_1x1:  # the wrapper calls arm_convolve_1x1_s8
        return max(out_shape[2], STEP_PIXELS)
    is_1xn = in_shape[1] == 1 and dil[1] == 1 and f[1] == 1 and (stride[1] * in_shape[3]) % 4 == 0
    if is_1xn:
        if not core.has_mve:
            return STEP_PIXELS  # arm_convolve_1_x_n_s8 calls arm_convolve_s8 there
        # MVE: the left-padded pixels as one step (their windows copied to the buffer first),
        # the unpadded ones 4 rows per step, then the right-padded ones as one step.
        pad_w, stride_w, k_w, out_w = pad[1], stride[1], f[2], out_shape[2]
        asym = ((out_w - 1) * stride_w + k_w - in_shape[2]) % 2
        right = max(1, (pad_w + asym + stride_w - 1) // stride_w) if pad_w + asym else 0
        left = max(1, (pad_w + stride_w - 1) // stride_w) if pad_w else 0
        return max(STEP_PIXELS, left, right)
    return STEP_PIXELS  # arm_convolve_s8


def depthwise_overlap_step(op, core):
    kernel = op.function_name()
    in_shape, out_shape = op.shape(0), op.shape(0, result=True)
    if kernel == "arm_depthwise_conv_s8":
        return STEP_PIXELS  # called directly (prefer=memory): raster order, one pixel a step (4 is safe)
    if kernel != "arm_depthwise_conv_wrapper_s8":
        return None
    if core.has_mve and in_shape[3] == 1 and out_shape[3] > 1:
        return None  # the wrapper turns it into a convolution
    takes_opt = op.int("ch_mult") == 1 and in_shape[0] == 1 and op.ints("dilation") == [1, 1]
    if core.has_mve and takes_opt and in_shape[3] > CH_IN_BLOCK_MVE:
        return None  # arm_depthwise_conv_s8_opt (MVE) sweeps the image once per channel block
    # arm_depthwise_conv_3x3_s8, arm_depthwise_conv_s8_opt (DSP: one pixel; MVE: im2col of
    # up to 4 pixels, counted across rows) and arm_depthwise_conv_s8 all go in raster order.
    return STEP_PIXELS


class ConvAlgorithm(CmsisNN.Attribute, name="conv_algorithm"):
    """Which CMSIS-NN convolution a conv calls: `wrapper` lets CMSIS-NN pick (arm_*_wrapper_*),
    `generic` is arm_convolve_s8 / arm_depthwise_conv_s8 (no shape constraints, no or less
    scratch), `1x1` is arm_convolve_1x1_s8 (a row-by-row 1x1 that may overwrite its input)."""
    value: ir.StringAttr["wrapper"] | ir.StringAttr["generic"] | ir.StringAttr["1x1"]


class ConvOp(ConvFields, dialect=CmsisNN, name="conv"):
    """arm_convolve_*: input NHWC, filter OHWI, bias [O]."""
    algorithm: ConvAlgorithm

    def check(self):
        if self.type_suffix() == "s16" and self.enum("algorithm") != "wrapper":
            return "int16 convolutions call the wrapper only"
        return per_channel_check(self)

    def function_name(self) -> str:
        if self.type_suffix() == "s16":
            return "arm_convolve_wrapper_s16"
        return {"wrapper": "arm_convolve_wrapper_s8", "generic": "arm_convolve_s8",
                "1x1": "arm_convolve_1x1_s8"}[self.enum("algorithm")]

    def scratch_bytes(self, core) -> int:
        in_shape, f, out_shape = self.shape(0), self.shape(1), self.shape(0, result=True)
        if self.type_suffix() == "s16":
            return conv_wrapper_s16_scratch(core, in_shape[3], f[1], f[2])
        return conv_wrapper_s8_scratch(core, self.function_name(), self.ints("stride"), self.ints("padding")[:2],
                                       self.ints("dilation"), in_shape, f, out_shape)

    def macs(self) -> int:
        return window_macs(self, self.shape(1)[3])

    def overlap_step(self, core):
        return conv_overlap_step(self, core)

    def overlap_algorithm(self, core):
        # On the DSP / C paths the wrapper sends a 1x1 stride-1 conv to arm_convolve_1x1_s8_fast,
        # which sweeps the whole image per channel pair; arm_convolve_1x1_s8 runs the same matrix
        # product one output row at a time.
        f, in_shape = self.shape(1), self.shape(0)
        whole_image_1x1 = (f[1], f[2]) == (1, 1) and in_shape[3] == f[3] and self.ints("padding") == [0, 0, 0, 0] \
            and self.ints("stride") == [1, 1] and self.ints("dilation") == [1, 1]
        if core.has_mve or self.function_name() != "arm_convolve_wrapper_s8" or not whole_image_1x1:
            return None
        return "1x1"


class DepthwiseConvOp(ConvFields, dialect=CmsisNN, name="depthwise_conv"):
    """arm_depthwise_conv_*: input NHWC, filter 1 x H x W x (C * ch_mult), bias."""
    ch_mult: ir.IntegerAttr
    algorithm: ConvAlgorithm

    def check(self):
        algorithm = self.enum("algorithm")
        if algorithm == "1x1" or (self.type_suffix() == "s16" and algorithm != "wrapper"):
            return f"has no '{algorithm}' algorithm for {self.elem(0)}"
        if self.shape(0)[-1] * self.int("ch_mult") != self.shape(0, result=True)[-1]:
            return "needs output channels = input channels x ch_mult"
        return per_channel_check(self)

    def function_name(self) -> str:
        if self.enum("algorithm") == "generic":
            return "arm_depthwise_conv_s8"
        return f"arm_depthwise_conv_wrapper_{self.type_suffix()}"

    def scratch_bytes(self, core) -> int:
        in_shape, f, out_shape = self.shape(0), self.shape(1), self.shape(0, result=True)
        dilation = self.ints("dilation")
        if self.type_suffix() == "s16":
            return depthwise_wrapper_s16_scratch(core, self.int("ch_mult"), dilation, in_shape[3], f[1], f[2])
        if self.function_name() == "arm_depthwise_conv_s8" or mcu_attrs.GENERATED_KERNEL in self.operation.attributes:
            return 0  # called directly, not through the wrapper, or a generated kernel: no scratch
        return depthwise_wrapper_s8_scratch(core, self.ints("stride"), self.ints("padding")[:2], dilation,
                                            in_shape, f, out_shape)

    def scratch_free_algorithm(self):
        # arm_depthwise_conv_s8 computes the wrapper's integers with no scratch buffer.
        return "generic" if self.function_name() == "arm_depthwise_conv_wrapper_s8" else None

    def macs(self) -> int:
        return window_macs(self, 1)

    def overlap_step(self, core):
        return depthwise_overlap_step(self, core)


class FullyConnectedOp(WeightedFields, dialect=CmsisNN, name="fully_connected"):
    """arm_fully_connected_s8 / _per_channel_s8: input [..., K], filter [O, K], bias [O]."""
    input_offset: ir.IntegerAttr
    filter_offset: ir.IntegerAttr
    output_offset: ir.IntegerAttr
    multiplier: I32Array
    shift: I32Array
    activation: I32Array
    LENGTHS = {"activation": 2}

    def check(self):
        return per_channel_check(self)

    def function_name(self) -> str:
        per_channel = len(self.ints("multiplier")) > 1
        return "arm_fully_connected_per_channel_s8" if per_channel else "arm_fully_connected_s8"

    def scratch_bytes(self, core) -> int:
        # On MVE the kernel reads per-row weight sums (its buffer-size function asks for them),
        # which mcu-prepare-for-emission precomputes into flash: no scratch on any core.
        return 0

    def macs(self) -> int:
        return numel(self.operation.results[0].type) * self.shape(1)[1]


@no_scratch
class FullyConnectedS4Op(WeightedFields, dialect=CmsisNN, name="fully_connected_s4"):
    """arm_fully_connected_s4: int8 input [..., K] (rows of K), int4 weights [O, K] packed two per
    byte (element 2j in the low nibble of byte j, rows not padded: ceil(O x K / 2) bytes), int32
    bias [O]; int8 output [..., O], requantized per tensor. The weights are symmetric (no filter
    offset)."""
    input_offset: ir.IntegerAttr
    output_offset: ir.IntegerAttr
    multiplier: ir.IntegerAttr
    shift: ir.IntegerAttr
    activation: I32Array
    LENGTHS = {"activation": 2}

    def depth_and_outputs(self) -> tuple[int, int]:
        return self.shape(0)[-1], self.shape(0, result=True)[-1]

    def check(self):
        k, o = self.depth_and_outputs()
        if (self.elem(0), self.elem(1), self.elem(0, result=True)) != ("i8", "i8", "i8"):
            return "takes int8 input and packed weights, returns int8"
        if numel(self.operation.operands[1].type) != (o * k + 1) // 2:
            return f"needs the {o} x {k} int4 weights packed in {(o * k + 1) // 2} bytes"
        if numel(self.operation.operands[2].type) != o:
            return f"needs {o} bias values"
        if numel(self.operation.operands[0].type) // k != numel(self.operation.results[0].type) // o:
            return "needs as many input rows (of K) as output rows (of O)"
        return None

    def function_name(self) -> str:
        return "arm_fully_connected_s4"

    def macs(self) -> int:
        return numel(self.operation.results[0].type) * self.shape(0)[-1]


# -- int4 weights ----------------------------------------------------------------------------------
# The s4 kernels read a filter packed two weights per byte in its row-major order (element 2j in
# the low nibble of byte j; an odd count leaves the last high nibble 0; rows are not padded, so an
# odd row length starts the next row mid-byte). The packed operand is an i8 tensor of that many
# bytes; `filter_dims` keeps the filter's shape. None of them takes precomputed kernel sums: the
# MVE paths (arm_nn_mat_mult_nt_t_s4, arm_nn_mat_mul_core_1x_s4) sum the weights as they go.

def _s4_rhs_cols(in_c, f) -> int:
    return f[1] * f[2] * in_c


def conv_s4_scratch(core, algorithm, stride, pad, dilation, in_shape, f, out_shape) -> int:
    """arm_convolve_wrapper_s4_get_buffer_size(_mve) for the function the wrapper picks (as
    arm_convolve_wrapper_s4 picks it), or arm_convolve_s4's own size when it is called directly."""
    rhs_cols = f[1] * f[2] * in_shape[3]
    mve_im2col = 4 * ((rhs_cols + 15) // 16) * 16
    plain = 4 * rhs_cols   # arm_convolve_s4_get_buffer_size: two columns of int16
    if algorithm == "generic":
        # The public size function has no MVE branch; the MVE kernel's 4 im2col rows may need more.
        return max(plain, mve_im2col) if core.has_mve else plain
    if _is_1x1(pad, dilation, in_shape[3], f):
        return 0
    if not core.has_mve:
        return plain
    if _is_1xn(stride, dilation, in_shape, f):
        total = (out_shape[2] - 1) * stride[1] + f[2] - in_shape[2]
        pad_w, stride_w = pad[1], stride[1]
        asym = int(math.fmod(total, 2))   # C's remainder: -1 for a negative total
        right = max(1, (pad_w + asym + stride_w - 1) // stride_w) if pad_w + asym else 0
        left = max(1, (pad_w + stride_w - 1) // stride_w) if pad_w else 0
        return mve_im2col if left + right > out_shape[2] else 0
    return mve_im2col


def depthwise_s4_scratch(core, algorithm, dilation, in_shape, f, out_shape) -> int:
    """arm_depthwise_conv_wrapper_s4_get_buffer_size: arm_depthwise_conv_s4_opt's buffer (the DSP
    size on plain C cores too, as CMSIS-NN's function returns it); arm_depthwise_conv_s4 none."""
    if algorithm != "wrapper" or in_shape[3] != out_shape[3] or in_shape[0] != 1 or dilation != [1, 1]:
        return 0
    if core.has_mve:
        return 4 * CH_IN_BLOCK_MVE * f[1] * f[2]
    return in_shape[3] * f[1] * f[2] * 2


class ConvS4Fields(ConvFields):
    """A convolution with int4 weights: int8 input NHWC, the filter packed (see above) with its
    shape in `filter_dims`, int32 bias, per-channel requantization to int8."""
    filter_dims: I32Array
    algorithm: ConvAlgorithm
    LENGTHS = {**WINDOW_LENGTHS, "filter_dims": 4}

    def filter_shape(self) -> list[int]:
        return self.ints("filter_dims")

    def s4_check(self, filter_c: int):
        f = self.filter_shape()
        if (self.elem(0), self.elem(1), self.elem(0, result=True)) != ("i8", "i8", "i8"):
            return "takes int8 input and packed weights, returns int8"
        if self.enum("algorithm") == "1x1":
            return "has no '1x1' algorithm for int4 weights"
        if f[3] != filter_c:
            return f"needs filter_dims of {filter_c} channels, got {f}"
        count = f[0] * f[1] * f[2] * f[3]
        if numel(self.operation.operands[1].type) != (count + 1) // 2:
            return f"needs the {count} int4 weights of {f} packed in {(count + 1) // 2} bytes"
        if numel(self.operation.operands[2].type) != self.shape(0, result=True)[3]:
            return "needs one bias value per output channel"
        return per_channel_check(self)

    def s4_macs(self, in_channels_per_output: int) -> int:
        f = self.filter_shape()
        return numel(self.operation.results[0].type) * f[1] * f[2] * in_channels_per_output


class ConvS4Op(ConvS4Fields, dialect=CmsisNN, name="conv_s4"):
    """arm_convolve_wrapper_s4 (`wrapper`) or arm_convolve_s4 (`generic`): filter_dims = O, H, W, I."""

    def check(self):
        if self.filter_shape()[0] != self.shape(0, result=True)[3]:
            return "needs filter_dims[0] = output channels"
        return self.s4_check(self.shape(0)[3])

    def function_name(self) -> str:
        return {"wrapper": "arm_convolve_wrapper_s4", "generic": "arm_convolve_s4"}[self.enum("algorithm")]

    def scratch_bytes(self, core) -> int:
        return conv_s4_scratch(core, self.enum("algorithm"), self.ints("stride"), self.ints("padding")[:2],
                               self.ints("dilation"), self.shape(0), self.filter_shape(), self.shape(0, result=True))

    def macs(self) -> int:
        return self.s4_macs(self.filter_shape()[3])


class DepthwiseConvS4Op(ConvS4Fields, dialect=CmsisNN, name="depthwise_conv_s4"):
    """arm_depthwise_conv_wrapper_s4 (`wrapper`) or arm_depthwise_conv_s4 (`generic`):
    filter_dims = 1, H, W, C x ch_mult (output channel c x ch_mult + m)."""
    ch_mult: ir.IntegerAttr

    def check(self):
        if self.shape(0)[-1] * self.int("ch_mult") != self.shape(0, result=True)[-1]:
            return "needs output channels = input channels x ch_mult"
        return self.s4_check(self.shape(0, result=True)[3])

    def function_name(self) -> str:
        return {"wrapper": "arm_depthwise_conv_wrapper_s4", "generic": "arm_depthwise_conv_s4"}[self.enum("algorithm")]

    def scratch_bytes(self, core) -> int:
        return depthwise_s4_scratch(core, self.enum("algorithm"), self.ints("dilation"), self.shape(0),
                                    self.filter_shape(), self.shape(0, result=True))

    def scratch_free_algorithm(self):
        # arm_depthwise_conv_s4 computes the wrapper's integers with no scratch buffer (for an
        # even input channel count: kernel_library/cmsis_padding.py).
        return "generic" if self.enum("algorithm") == "wrapper" and self.shape(0)[3] % 2 == 0 else None

    def macs(self) -> int:
        return self.s4_macs(1)


class BatchMatmulOp(KernelOp, dialect=CmsisNN, name="batch_matmul"):
    """arm_batch_matmul_s8 / _s16: lhs [B, M, K] times the transpose of rhs_t [B, N, K] (both
    activations), requantized per tensor: output [B, M, N]. int16: offsets 0, the multiplier in
    CMSIS-NN's s16 form (reduced to 16 bits by the kernel)."""
    lhs: Operand[ir.RankedTensorType]
    rhs_t: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    lhs_offset: ir.IntegerAttr
    rhs_offset: ir.IntegerAttr
    output_offset: ir.IntegerAttr
    multiplier: ir.IntegerAttr
    shift: ir.IntegerAttr
    activation: I32Array
    LENGTHS = {"activation": 2}

    def check(self):
        (b, m, k), (b2, n, k2) = self.shape(0), self.shape(1)
        if (b, k) != (b2, k2) or self.shape(0, result=True) != [b, m, n]:
            return "needs lhs [B, M, K], rhs_t [B, N, K] and output [B, M, N]"
        return None

    def function_name(self) -> str:
        return f"arm_batch_matmul_{self.type_suffix()}"

    def scratch_bytes(self, core) -> int:
        # arm_batch_matmul_s8 on MVE sums each rhs row into the context buffer (int32 each).
        return 4 * self.shape(1)[1] if self.type_suffix() == "s8" and core.has_mve else 0

    def macs(self) -> int:
        return numel(self.operation.results[0].type) * self.shape(0)[-1]


@no_scratch
@no_macs
class SoftmaxOp(KernelOp, dialect=CmsisNN, name="softmax"):
    """arm_softmax_s8 over consecutive rows of `row_size` int8 values (`num_rows` of them; input
    and output may be different views of those bytes), output scale 1/256 and zero point -128;
    `mult`, `shift`, `diff_min` as TFLite's softmax parameters."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    num_rows: ir.IntegerAttr
    row_size: ir.IntegerAttr
    mult: ir.IntegerAttr
    shift: ir.IntegerAttr
    diff_min: ir.IntegerAttr

    def check(self):
        problem = rows_check(self)
        if problem:
            return problem
        if self.elem(0) != "i8" or self.elem(0, result=True) != "i8":
            return "takes and returns int8"
        return None

    def function_name(self) -> str:
        return "arm_softmax_s8"


@no_scratch
@no_macs
class Softmax16Op(Softmax16Fields, dialect=CmsisNN, name="softmax_s16"):
    """arm_softmax_s16 over consecutive rows of `row_size` int16 values, output 1/32768, 0; `mult`,
    `shift` as TFLite's (x - max onto the exp table's [-10, 0]), the tables its
    cmsis_nn_softmax_lut_s16."""

    def function_name(self) -> str:
        return "arm_softmax_s16"


@no_macs
class AvgPoolOp(PoolFields, dialect=CmsisNN, name="avg_pool"):
    """arm_avgpool_s8 / _s16."""

    def function_name(self) -> str:
        return f"arm_avgpool_{self.type_suffix()}"

    def scratch_bytes(self, core) -> int:
        return 4 * self.shape(0)[-1] if _dsp_only(core) else 0  # an int32 sum per channel


@no_scratch
@no_macs
class MaxPoolOp(PoolFields, dialect=CmsisNN, name="max_pool"):
    """arm_max_pool_s8 / _s16."""

    def function_name(self) -> str:
        return f"arm_max_pool_{self.type_suffix()}"


@no_scratch
@no_macs
class AddOp(AddFields, dialect=CmsisNN, name="add"):
    """arm_elementwise_add_s8 / _s16."""

    def check(self):
        return same_or_leading_repeat(self)

    def function_name(self) -> str:
        return f"arm_elementwise_add_{self.type_suffix()}"

    def writes_in_place(self) -> bool:
        # Reads each block of both inputs (1, 4 or 16 elements on the C, DSP and MVE paths)
        # before writing it: input 1 may be the output, where it does not broadcast.
        return self.shape(0) == self.shape(0, result=True)


@no_scratch
@no_macs
class MulOp(MulFields, dialect=CmsisNN, name="mul"):
    """arm_elementwise_mul_s8 / _s16."""

    def check(self):
        return same_or_leading_repeat(self)

    def function_name(self) -> str:
        return f"arm_elementwise_mul_{self.type_suffix()}"

    def writes_in_place(self) -> bool:
        # Reads each block of both inputs (1, 4 or 16 elements on the C, DSP and MVE paths)
        # before writing it: input 1 may be the output, where it does not broadcast.
        return self.shape(0) == self.shape(0, result=True)


@no_scratch
@no_macs
class PadOp(UnaryFields, dialect=CmsisNN, name="pad"):
    """arm_pad_s8: constant padding of an int8 NHWC tensor; `padding` is [before, after] per axis."""
    padding: I32Array
    pad_value: ir.IntegerAttr
    LENGTHS = {"padding": 8}

    def function_name(self) -> str:
        return "arm_pad_s8"


@no_scratch
@no_macs
class TransposeOp(UnaryFields, dialect=CmsisNN, name="transpose"):
    """arm_transpose_s8 of a rank-4 int8 tensor."""
    perms: I32Array
    LENGTHS = {"perms": 4}

    def function_name(self) -> str:
        return "arm_transpose_s8"


@no_scratch
@no_macs
class ConcatOp(ConcatFields, dialect=CmsisNN, name="concat"):
    """arm_concatenation_s8_{w,z,y,x} (one call per input) along `axis` of NHWC int8 tensors."""

    def function_name(self) -> str:
        # CMSIS-NN names NHWC's axes from the innermost: x = C, y = W, z = H, w = N.
        return "arm_concatenation_s8_" + "wzyx"[self.int("axis")]


class LstmOp(LstmFields, dialect=CmsisNN, name="lstm"):
    """arm_lstm_unidirectional_s8, one time step (kernel_op.LstmFields)."""

    def function_name(self) -> str:
        return "arm_lstm_unidirectional_s8"

    def scratch_bytes(self, core) -> int:
        # Two int16 gate buffers and the copy of the hidden state the kernel reads (it writes
        # the new one there when the step ends).
        rows, hidden = self.shape(1)
        return 2 * (2 * rows * hidden) + rows * hidden

    def macs(self) -> int:
        return lstm_macs(self)


@no_scratch
@no_macs
class ReshapeOp(UnaryFields, dialect=CmsisNN, name="reshape"):
    """A view: same bytes, new shape (no code unless the planner must copy)."""

    def check(self):
        src, dst = self.operation.operands[0].type, self.operation.results[0].type
        if numel(src) != numel(dst) or self.elem(0) != self.elem(0, result=True):
            return "must keep the element count and type"
        return None

    def function_name(self) -> str:
        return "mcu_copy"


class TransposeConvOp(WeightedFields, dialect=CmsisNN, name="transpose_conv"):
    """arm_transpose_conv_s8 (called directly: the wrapper's stride <= 2 path reverses the filter
    into a second buffer): input NHWC, filter [O, H, W, I], bias [O]; input pixel (y, x) scatters
    into output (y * stride - padding + ky, x * stride - padding + kx); requantized per channel.
    `padding` is [h, w]; the conversion calls it only where its rolling buffer writes exactly the
    output's rows and columns."""
    input_offset: ir.IntegerAttr
    output_offset: ir.IntegerAttr
    stride: I32Array
    padding: I32Array
    multiplier: I32Array
    shift: I32Array
    activation: I32Array
    LENGTHS = {"stride": 2, "padding": 2, "activation": 2}

    def check(self):
        if (self.elem(0), self.elem(1), self.elem(0, result=True)) != ("i8", "i8", "i8"):
            return "takes int8 input and filter, returns int8"
        return per_channel_check(self)

    def function_name(self) -> str:
        return "arm_transpose_conv_s8"

    def scratch_bytes(self, core) -> int:
        # int32 rows of ((W - 1) * stride_w + max(KW, stride)) x O accumulators, max(KH, stride_h)
        # of them (arm_transpose_conv_s8_get_buffer_size takes max(KW, stride_h): the larger).
        (_, _, w, _), (o, kh, kw, _) = self.shape(0), self.shape(1)
        sh, sw = self.ints("stride")
        return 4 * ((w - 1) * sw + max(kw, sw, sh)) * o * max(kh, sh)

    def macs(self) -> int:
        f = self.shape(1)
        return numel(self.operation.operands[0].type) * f[0] * f[1] * f[2]



def load(ctx) -> None:
    """Loads the dialect into `ctx` (once per context)."""
    with ctx:
        if not ctx.is_dialect_loaded("cmsisnn"):
            CmsisNN.load()
