"""The `cmsisnn` dialect: one op per CMSIS-NN function family.

Every op takes its tensors as operands (activations first, then constant weights / bias) and
carries the scalar parameters of the call as typed attributes, in CMSIS-NN's conventions:
`input_offset` / `filter_offset` are negated zero points, `output_offset` the output zero point,
`multiplier` / `shift` the requantisation (`shift` > 0 shifts left, as in `arm_nn_requantize`),
`padding` is `[top, left, bottom, right]`, `activation` is `[min, max]`.

Which `arm_*` function an op calls follows from the op, its element types and, for the
convolutions, the `algorithm` the conversion or the memory planner chose (`function_name`).
Calls into the project's own C kernels are the `portable` dialect.
"""

# No `from __future__ import annotations`: the ext module reads the field annotations as types.
from .._mlir import ir
from .kernel_op import (AddFields, ConcatFields, ConvFields, I32Array, KernelOp, LstmFields, MulFields, PoolFields,
                        UnaryFields, WeightedFields, numel, per_channel_check, rows_check, Softmax16Fields,
                        same_or_leading_repeat)

from torch_mlir.dialects.ext import Dialect, Operand, Result  # noqa: E402  (bindings' own module)


class CmsisNN(Dialect, name="cmsisnn"):
    pass


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


class Softmax16Op(Softmax16Fields, dialect=CmsisNN, name="softmax_s16"):
    """arm_softmax_s16 over consecutive rows of `row_size` int16 values, output 1/32768, 0; `mult`,
    `shift` as TFLite's (x - max onto the exp table's [-10, 0]), the tables its
    cmsis_nn_softmax_lut_s16."""

    def function_name(self) -> str:
        return "arm_softmax_s16"


class AvgPoolOp(PoolFields, dialect=CmsisNN, name="avg_pool"):
    """arm_avgpool_s8 / _s16."""

    def function_name(self) -> str:
        return f"arm_avgpool_{self.type_suffix()}"


class MaxPoolOp(PoolFields, dialect=CmsisNN, name="max_pool"):
    """arm_max_pool_s8 / _s16."""

    def function_name(self) -> str:
        return f"arm_max_pool_{self.type_suffix()}"


class AddOp(AddFields, dialect=CmsisNN, name="add"):
    """arm_elementwise_add_s8 / _s16."""

    def check(self):
        return same_or_leading_repeat(self)

    def function_name(self) -> str:
        return f"arm_elementwise_add_{self.type_suffix()}"


class MulOp(MulFields, dialect=CmsisNN, name="mul"):
    """arm_elementwise_mul_s8 / _s16."""

    def check(self):
        return same_or_leading_repeat(self)

    def function_name(self) -> str:
        return f"arm_elementwise_mul_{self.type_suffix()}"


class PadOp(UnaryFields, dialect=CmsisNN, name="pad"):
    """arm_pad_s8: constant padding of an int8 NHWC tensor; `padding` is [before, after] per axis."""
    padding: I32Array
    pad_value: ir.IntegerAttr
    LENGTHS = {"padding": 8}

    def function_name(self) -> str:
        return "arm_pad_s8"


class TransposeOp(UnaryFields, dialect=CmsisNN, name="transpose"):
    """arm_transpose_s8 of a rank-4 int8 tensor."""
    perms: I32Array
    LENGTHS = {"perms": 4}

    def function_name(self) -> str:
        return "arm_transpose_s8"


class ConcatOp(ConcatFields, dialect=CmsisNN, name="concat"):
    """arm_concatenation_s8_{w,z,y,x} (one call per input) along `axis` of NHWC int8 tensors."""

    def function_name(self) -> str:
        # CMSIS-NN names NHWC's axes from the innermost: x = C, y = W, z = H, w = N.
        return "arm_concatenation_s8_" + "wzyx"[self.int("axis")]


class LstmOp(LstmFields, dialect=CmsisNN, name="lstm"):
    """arm_lstm_unidirectional_s8, one time step (kernel_op.LstmFields)."""

    def function_name(self) -> str:
        return "arm_lstm_unidirectional_s8"


class ReshapeOp(UnaryFields, dialect=CmsisNN, name="reshape"):
    """A view: same bytes, new shape (no code unless the planner must copy)."""

    def check(self):
        src, dst = self.operation.operands[0].type, self.operation.results[0].type
        if numel(src) != numel(dst) or self.elem(0) != self.elem(0, result=True):
            return "must keep the element count and type"
        return None

    def function_name(self) -> str:
        return "mcu_copy"



def load(ctx) -> None:
    """Loads the dialect into `ctx` (once per context)."""
    with ctx:
        if not ctx.is_dialect_loaded("cmsisnn"):
            CmsisNN.load()
