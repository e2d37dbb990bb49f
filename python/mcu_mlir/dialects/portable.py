"""The `portable` dialect: one op per C kernel of the project's own library (lib/portable).

These compute what CMSIS-NN has no kernel for (or everything, with `backend=portable`). Their
attributes are MLIR integers, arrays and enums; what follows from the operand types (element
types, shapes, counts) is not repeated. The C emitter maps each op class to one emit function;
`kernel_name` names the C kernel (`mcu_<kernel_name>`) the op calls.
"""

# No `from __future__ import annotations`: the ext module reads the field annotations as types.
from .._mlir import ir
from .kernel_op import (AddFields, BinaryFields, ConcatFields, ConvFields, I32Array, KernelOp, LstmFields,
                        MulFields, no_macs, no_scratch, numel, lstm_macs, PoolFields, rows_check, Softmax16Fields,
                        UnaryFields, WeightedFields, per_channel_check, window_macs)

from torch_mlir.dialects.ext import Dialect, Operand, Result  # noqa: E402  (bindings' own module)


class Portable(Dialect, name="portable"):
    pass


def _choice(*values):
    out = ir.StringAttr[values[0]]
    for v in values[1:]:
        out = out | ir.StringAttr[v]
    return out


BINARY_KINDS = ("add", "sub", "mul", "maximum", "minimum", "equal", "greater", "greater_equal",
                "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
                "shift_left", "shift_right", "shift_right_round", "shift_right_logical", "intdiv", "pow")
UNARY_KINDS = ("abs", "negate", "bitwise_not", "logical_not", "clz")
REDUCE_KINDS = ("sum", "max", "min", "product", "all", "any")


class BinaryKind(Portable.Attribute, name="binary_kind"):
    value: _choice(*BINARY_KINDS)


class UnaryKind(Portable.Attribute, name="unary_kind"):
    value: _choice(*UNARY_KINDS)


class ReduceKind(Portable.Attribute, name="reduce_kind"):
    value: _choice(*REDUCE_KINDS)


class ResizeMode(Portable.Attribute, name="resize_mode"):
    value: _choice("nearest", "bilinear")


# -- compute ----------------------------------------------------------------------------------

def _weight_offset_check(op):
    """`weight_offset` (optional, i32): minus the weight zero point of asymmetric weights (TOSA
    allows them; CMSIS-NN does not, so only the portable kernels take them). Absent means 0."""
    attrs = op.operation.attributes
    if "weight_offset" in attrs:
        attr = attrs["weight_offset"]
        if not isinstance(attr, ir.IntegerAttr) or str(ir.IntegerAttr(attr).type) != "i32":
            return "attribute 'weight_offset' must be an i32 integer"
    return per_channel_check(op, allow_none=True)


@no_scratch
class Conv2DOp(ConvFields, dialect=Portable, name="conv2d"):
    """Grouped 2-D convolution (groups = input channels / filter channels); no multipliers
    leaves the int32 (int64 for int16) accumulators unscaled. Optional `weight_offset`: minus the
    weight zero point (asymmetric weights)."""
    KERNEL, TYPED = "conv2d", True

    def check(self):
        return _weight_offset_check(self)

    def macs(self) -> int:
        return window_macs(self, self.shape(1)[3])

    def overlap_step(self, core):
        # lib/portable/nn.c: loops n, oy, ox, oc and reads only the window of the pixel it writes.
        return 1


@no_scratch
class DepthwiseConv2DOp(ConvFields, dialect=Portable, name="depthwise_conv2d"):
    """Depthwise convolution; filter 1 x H x W x (C * channel multiplier). Optional `weight_offset`
    as for conv2d."""
    KERNEL, TYPED = "depthwise_conv2d", True

    def check(self):
        return _weight_offset_check(self)

    def macs(self) -> int:
        return window_macs(self, 1)

    def overlap_step(self, core):
        # lib/portable/nn.c: loops n, oy, ox, oc and reads only the window of the pixel it writes.
        return 1


@no_scratch
class TransposeConv2DOp(WeightedFields, dialect=Portable, name="transpose_conv2d"):
    """Transposed convolution to raw accumulators (int8: int32; int16: int48 held in int64);
    `out_pad` is [top, left]."""
    stride: I32Array
    out_pad: I32Array
    input_zp: ir.IntegerAttr
    weight_zp: ir.IntegerAttr
    LENGTHS = {"stride": 2, "out_pad": 2}
    KERNEL, TYPED = "transpose_conv2d", True

    def macs(self) -> int:
        # Every input element times the filter's [O, H, W] taps of its channel.
        o, k_h, k_w, _ = self.shape(1)
        return numel(self.operation.operands[0].type) * o * k_h * k_w


@no_scratch
class Conv3DOp(WeightedFields, dialect=Portable, name="conv3d"):
    """3-D convolution to raw accumulators (int8: int32; int16: int48 held in int64); `padding` is
    [front, back, top, bottom, left, right], `stride` and `dilation` are [d, h, w]."""
    stride: I32Array
    padding: I32Array
    dilation: I32Array
    input_zp: ir.IntegerAttr
    weight_zp: ir.IntegerAttr
    LENGTHS = {"stride": 3, "padding": 6, "dilation": 3}
    KERNEL, TYPED = "conv3d", True

    def macs(self) -> int:
        _, k_d, k_h, k_w, c = self.shape(1)
        return numel(self.operation.results[0].type) * k_d * k_h * k_w * c


@no_scratch
class MatmulOp(KernelOp, dialect=Portable, name="matmul"):
    """lhs [B, M, K] x rhs [B or 1, K, N] (or a transposed rhs [N, K] shared by every row) + bias."""
    lhs: Operand[ir.RankedTensorType]
    rhs: Operand[ir.RankedTensorType]
    bias: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    lhs_offset: ir.IntegerAttr
    rhs_offset: ir.IntegerAttr
    output_offset: ir.IntegerAttr
    multiplier: I32Array
    shift: I32Array
    activation: I32Array
    LENGTHS = {"activation": 2}
    KERNEL = "matmul"

    def check(self):
        return per_channel_check(self, allow_none=True)

    def macs(self) -> int:
        return numel(self.operation.results[0].type) * self.shape(0)[-1]


class _ZeroPointPoolFields(PoolFields):
    input_zp: ir.IntegerAttr
    output_zp: ir.IntegerAttr


@no_scratch
@no_macs
class AvgPool2DOp(_ZeroPointPoolFields, dialect=Portable, name="avg_pool2d"):
    """Average pool over NHWC (padding [top, left, bottom, right] not counted)."""
    KERNEL = "avg_pool2d"


@no_scratch
@no_macs
class MaxPool2DOp(_ZeroPointPoolFields, dialect=Portable, name="max_pool2d"):
    """Max pool over NHWC."""
    KERNEL = "max_pool2d"


@no_scratch
@no_macs
class ElementwiseAddOp(AddFields, dialect=Portable, name="elementwise_add"):
    """CMSIS-NN's quantized add, broadcasting."""
    KERNEL, TYPED = "elementwise_add", True

    def writes_in_place(self) -> bool:
        return True  # element i is read before element i is written


@no_scratch
@no_macs
class ElementwiseMulOp(MulFields, dialect=Portable, name="elementwise_mul"):
    """CMSIS-NN's quantized multiply, broadcasting."""
    KERNEL, TYPED = "elementwise_mul", True

    def writes_in_place(self) -> bool:
        return True  # element i is read before element i is written


@no_scratch
@no_macs
class BinaryOp(BinaryFields, dialect=Portable, name="binary"):
    """TOSA's integer binary ops, broadcasting; `shift` is tosa.mul's right shift."""
    kind: BinaryKind
    shift: ir.IntegerAttr
    KERNEL = "binary"

    def writes_in_place(self) -> bool:
        return self.shape(0) == self.shape(0, result=True)  # it broadcasts otherwise


@no_scratch
@no_macs
class SelectOp(KernelOp, dialect=Portable, name="select"):
    """cond ? input1 : input2, broadcasting."""
    cond: Operand[ir.RankedTensorType]
    input1: Operand[ir.RankedTensorType]
    input2: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    KERNEL = "select"


@no_scratch
@no_macs
class UnaryOp(UnaryFields, dialect=Portable, name="unary"):
    """TOSA's integer unary ops; zero points for negate."""
    kind: UnaryKind
    input_zp: ir.IntegerAttr
    output_zp: ir.IntegerAttr
    KERNEL = "unary"

    def writes_in_place(self) -> bool:
        return True  # element i is read before element i is written


class _RescaleFields(UnaryFields):
    input_zp: ir.IntegerAttr
    output_zp: ir.IntegerAttr
    multiplier: I32Array
    shift: I32Array
    scale32: ir.IntegerAttr
    double_round: ir.IntegerAttr
    per_channel: ir.IntegerAttr
    FLAGS = ("scale32", "double_round", "per_channel", "input_unsigned", "output_unsigned")

    def check(self):
        mult, shift = self.ints("multiplier"), self.ints("shift")
        channels = self.shape(0)[-1] if self.shape(0) else 1
        if len(mult) != len(shift) or len(mult) != (channels if self.int("per_channel") else 1):
            return "needs one multiplier and shift (per channel when per_channel = 1)"
        return None


@no_scratch
@no_macs
class RescaleOp(_RescaleFields, dialect=Portable, name="rescale"):
    """tosa.rescale, TOSA semantics (shifts as in TOSA)."""
    input_unsigned: ir.IntegerAttr
    output_unsigned: ir.IntegerAttr
    KERNEL = "rescale"

    def writes_in_place(self) -> bool:
        return True  # element i is read before element i is written


@no_scratch
@no_macs
class ClampOp(UnaryFields, dialect=Portable, name="clamp"):
    min: ir.IntegerAttr
    max: ir.IntegerAttr
    KERNEL = "clamp"

    def writes_in_place(self) -> bool:
        return True  # element i is read before element i is written


@no_scratch
@no_macs
class CastOp(UnaryFields, dialect=Portable, name="cast"):
    """Integer / boolean conversion, TOSA semantics."""
    KERNEL = "cast"

    def writes_in_place(self) -> bool:
        return True  # element i is read before element i is written


@no_scratch
@no_macs
class TableOp(KernelOp, dialect=Portable, name="table"):
    """tosa.table: int8 -> int8 lookup, or int16 -> int32 interpolated lookup; an int8 -> int16
    lookup in 256 int16 entries (a TABLE and / or an int8 -> int16 RESCALE composed)."""
    input: Operand[ir.RankedTensorType]
    table: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    KERNEL = "table"

    def kernel_name(self) -> str:
        if self.elem(0) == "i8" and str(ir.RankedTensorType(self.results[0].type).element_type) == "i16":
            return "table_s8_s16"
        return f"table_{self.type_suffix()}"

    def writes_in_place(self) -> bool:
        return self.kernel_name() == "table_s8"  # one byte looked up, one written


@no_scratch
@no_macs
class TableRescaleOp(_RescaleFields, dialect=Portable, name="table_rescale"):
    """An int16 table (operands: input, table) and the rescale of its int32 result back to int16,
    in one pass."""
    table: Operand[ir.RankedTensorType]
    KERNEL = "table_s16_rescale"

    def writes_in_place(self) -> bool:
        return True  # element i is read before element i is written


@no_scratch
@no_macs
class LogSoftmaxOp(KernelOp, dialect=Portable, name="log_softmax"):
    """The frontend's integer log_softmax (int8 or int32 input, int8 output) over `axis_size`
    elements `inner` apart, `outer` times."""
    input: Operand[ir.RankedTensorType]
    exp_table: Operand[ir.RankedTensorType]
    log_table: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    outer: ir.IntegerAttr
    axis_size: ir.IntegerAttr
    inner: ir.IntegerAttr
    diff_mul: ir.IntegerAttr
    diff_shift: ir.IntegerAttr
    norm_bits: ir.IntegerAttr
    norm_mask: ir.IntegerAttr
    exp_bits: ir.IntegerAttr
    exp_mul: ir.IntegerAttr
    exp_shift: ir.IntegerAttr
    bias: ir.IntegerAttr
    base: ir.IntegerAttr
    out_shift: ir.IntegerAttr
    multiplier: ir.IntegerAttr
    shift: ir.IntegerAttr
    output_zp: ir.IntegerAttr
    double_round: ir.IntegerAttr
    FLAGS = ("double_round",)
    KERNEL = "log_softmax_s8"

    def check(self):
        n = 1
        for d in self.shape(0):
            n *= d
        if self.int("outer") * self.int("axis_size") * self.int("inner") != n:
            return "outer x axis_size x inner must be the input's element count"
        return None


# -- data movement ----------------------------------------------------------------------------

@no_scratch
@no_macs
class TransposeOp(UnaryFields, dialect=Portable, name="transpose"):
    perms: I32Array
    KERNEL = "transpose"

    def check(self):
        if sorted(self.ints("perms")) != list(range(len(self.shape(0)))):
            return "perms must be a permutation of the input's axes"
        return None


@no_scratch
@no_macs
class ConcatOp(ConcatFields, dialect=Portable, name="concat"):
    """Concatenation along `axis` (copies into the output)."""
    KERNEL = "concat"


@no_scratch
@no_macs
class ConcatTransposedOp(ConcatFields, dialect=Portable, name="concat_transposed"):
    """A concatenation along `axis` whose result is written transposed: each input is copied, read
    in order, to output[offset + sum_d i_d * stride_d]; `layout` holds per input its rank, offset
    and (size, stride) per dim, outermost first. One copy does what the concat and a transpose
    of its result did with two."""
    layout: I32Array
    KERNEL = "copy_strided"

    def layouts(self) -> list[tuple[int, list[tuple[int, int]]]]:
        """(offset, [(size, stride), ...]) per input."""
        flat, out, at = self.ints("layout"), [], 0
        for _ in range(len(self.operation.operands)):
            rank, offset = flat[at], flat[at + 1]
            pairs = flat[at + 2:at + 2 + 2 * rank]
            out.append((offset, list(zip(pairs[0::2], pairs[1::2]))))
            at += 2 + 2 * rank
        return out

    def check(self):
        flat, n = self.ints("layout"), len(self.operation.operands)
        at, total = 0, 0
        for k in range(n):
            if at + 2 > len(flat) or not 1 <= flat[at] <= 6 or at + 2 + 2 * flat[at] > len(flat):
                return f"layout of input {k} is malformed"
            at += 2 + 2 * flat[at]
        if at != len(flat):
            return "layout has entries past the last input"
        out_n = numel(self.operation.results[0].type)
        for k, (offset, dims) in enumerate(self.layouts()):
            size = 1
            for d, _ in dims:
                size *= d
            have = numel(self.operation.operands[k].type)
            if size != have:
                return f"layout of input {k} covers {size} elements, the input has {have}"
            last = offset + sum((d - 1) * max(s, 0) for d, s in dims)
            first = offset + sum((d - 1) * min(s, 0) for d, s in dims)
            if first < 0 or last >= out_n:
                return f"input {k} is written outside the output"
            total += size
        if total != out_n:
            return f"inputs hold {total} elements, the output {out_n}"
        return None


@no_scratch
@no_macs
class PadOp(UnaryFields, dialect=Portable, name="pad"):
    """Constant padding; `padding` is [before, after] per axis."""
    padding: I32Array
    pad_value: ir.IntegerAttr
    KERNEL = "pad"

    def check(self):
        if len(self.ints("padding")) != 2 * len(self.shape(0)):
            return "needs two paddings per axis"
        return None


@no_scratch
@no_macs
class SliceOp(UnaryFields, dialect=Portable, name="slice"):
    """The output's shape, read from `start` of the input."""
    start: I32Array
    KERNEL = "slice"

    def check(self):
        start, dims, out = self.ints("start"), self.shape(0), self.shape(0, result=True)
        if len(start) != len(dims) or any(s < 0 or s + o > d for s, o, d in zip(start, out, dims)):
            return "start + output shape must lie inside the input"
        return None


@no_scratch
@no_macs
class TileOp(UnaryFields, dialect=Portable, name="tile"):
    """Repeats the input to the output's shape."""
    KERNEL = "tile"


@no_scratch
@no_macs
class ReverseOp(UnaryFields, dialect=Portable, name="reverse"):
    axis: ir.IntegerAttr
    KERNEL = "reverse"


@no_scratch
@no_macs
class SoftmaxOp(KernelOp, dialect=Portable, name="softmax"):
    """arm_softmax_s8's integers over consecutive rows of `row_size` int8 values, from the
    exponential and row-sum tables (256 int32 each, indexed by max - x); output 1/256, -128."""
    input: Operand[ir.RankedTensorType]
    exp_table: Operand[ir.RankedTensorType]
    sum_table: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    num_rows: ir.IntegerAttr
    row_size: ir.IntegerAttr
    KERNEL = "softmax_s8"

    def check(self):
        problem = rows_check(self)
        if problem:
            return problem
        for i in (1, 2):
            if numel(self.operation.operands[i].type) != 256:
                return "takes tables of 256 entries"
        return None


@no_scratch
@no_macs
class Softmax16Op(KernelOp, dialect=Portable, name="softmax_s16"):
    """The frontend's int16 softmax over consecutive rows of `row_size` values, fused: the
    exponential from a 513-point interpolated int16 table of max - x, then a rounded division
    by the row sum; output 1/32768, 0."""
    input: Operand[ir.RankedTensorType]
    exp_table: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    num_rows: ir.IntegerAttr
    row_size: ir.IntegerAttr
    KERNEL = "softmax_s16"

    def check(self):
        problem = rows_check(self)
        if problem:
            return problem
        if numel(self.operation.operands[1].type) != 513:
            return "takes a table of 513 entries"
        return None


@no_scratch
@no_macs
class Softmax16LutOp(Softmax16Fields, dialect=Portable, name="softmax_s16_lut"):
    """arm_softmax_s16's integers over consecutive rows of `row_size` int16 values (the frontend's
    CMSIS form; fixed_point/cmsis_softmax.py), for builds without CMSIS-NN; output 1/32768, 0."""
    KERNEL = "softmax_s16_lut"


@no_scratch
@no_macs
class HypotOp(KernelOp, dialect=Portable, name="hypot"):
    """The frontend's integer hypot(a, b) (a magnitude; frontend/lowering/elementwise.py), fused:
    a and b int8 / int16 of one shape with their zero points, the square-root table (513 int16),
    the rescale (`multiplier`, `shift`), `headroom` bits shifted back with the normalisation,
    `output_zp`."""
    a: Operand[ir.RankedTensorType]
    b: Operand[ir.RankedTensorType]
    table: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    a_zp: ir.IntegerAttr
    b_zp: ir.IntegerAttr
    multiplier: ir.IntegerAttr
    shift: ir.IntegerAttr
    headroom: ir.IntegerAttr
    output_zp: ir.IntegerAttr
    KERNEL = "hypot"

    def check(self):
        if self.shape(0) != self.shape(1) or self.shape(0) != self.shape(0, result=True):
            return "needs a, b and the output of one shape"
        if self.elem(0) != self.elem(1) or self.elem(0) not in ("i8", "i16") or \
                self.elem(0, result=True) not in ("i8", "i16"):
            return "takes int8 or int16 a and b of one type, returns int8 or int16"
        if numel(self.operation.operands[2].type) != 513:
            return "takes a table of 513 entries"
        if not 0 <= self.int("headroom") <= 16:
            return "needs a headroom of 0 to 16 bits"
        return None


@no_scratch
class LstmOp(LstmFields, dialect=Portable, name="lstm"):
    """mcu_lstm_step_s8: one LSTM time step, the integers arm_lstm_unidirectional_s8 computes
    (kernel_op.LstmFields), for builds without CMSIS-NN."""
    KERNEL = "mcu_lstm_step_s8"

    def macs(self) -> int:
        return lstm_macs(self)


@no_scratch
@no_macs
class NormOp(KernelOp, dialect=Portable, name="norm"):
    """The frontend's integer LayerNorm / RMSNorm / GroupNorm (int8, int16 or int32 input; int8 or
    int16 output), fused. The input is viewed as batch x spatial x groups x group_size; each
    (batch, group) is normalised over spatial x group_size. `centre`: subtract the mean (`count`
    values) rather than `input_zp`; `s0`, `s1`, `eps`: the statistics' shifts and epsilon term;
    `channel_params` [4, groups x group_size] i32: per channel multiplier, TOSA shift, int32 offset
    and sign; then a per-tensor rescale to the output and the activation clamp."""
    input: Operand[ir.RankedTensorType]
    rsqrt_table: Operand[ir.RankedTensorType]
    channel_params: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    batch: ir.IntegerAttr
    spatial: ir.IntegerAttr
    groups: ir.IntegerAttr
    group_size: ir.IntegerAttr
    centre: ir.IntegerAttr
    count: ir.IntegerAttr
    input_zp: ir.IntegerAttr
    s0: ir.IntegerAttr
    s1: ir.IntegerAttr
    eps: ir.IntegerAttr
    double_round: ir.IntegerAttr
    output_multiplier: ir.IntegerAttr
    output_shift: ir.IntegerAttr
    output_double_round: ir.IntegerAttr
    output_zp: ir.IntegerAttr
    act_min: ir.IntegerAttr
    act_max: ir.IntegerAttr
    FLAGS = ("centre", "double_round", "output_double_round")
    KERNEL = "norm"

    def check(self):
        n = self.int("batch") * self.int("spatial") * self.int("groups") * self.int("group_size")
        if n != numel(self.operation.operands[0].type) or n != numel(self.operation.results[0].type):
            return "batch x spatial x groups x group_size must be the input's and output's element count"
        channels = self.int("groups") * self.int("group_size")
        if list(ir.RankedTensorType(self.operation.operands[2].type).shape) != [4, channels]:
            return f"channel_params must be 4 x {channels}"
        if list(ir.RankedTensorType(self.operation.operands[1].type).shape) != [513]:
            return "rsqrt_table must have 513 entries"
        if not 0 <= self.int("s0") <= 31 or not 0 <= self.int("s1") <= 63:
            return "s0 must be in [0, 31] and s1 in [0, 63]"


@no_scratch
@no_macs
class PReluOp(KernelOp, dialect=Portable, name="prelu"):
    """The frontend's integer PReLU (relu(x) + slope * min(x, 0), the product a 1x1 depthwise
    conv; passes/conversion/prelu.py), fused: int8 in and out, the channel the last axis.
    `tables` [3, 256] i32: the channel-independent parts over every int8 value (the relu part's
    int32, the int8 negative part, the int32 added for a product); `channel_params` [4, channels]
    i32: slope, bias and the per-channel rescale (multiplier, TOSA shift) of the product; then the
    output rescale and clamp."""
    input: Operand[ir.RankedTensorType]
    tables: Operand[ir.RankedTensorType]
    channel_params: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    channels: ir.IntegerAttr
    slope_input_offset: ir.IntegerAttr
    slope_weight_offset: ir.IntegerAttr
    slope_output_zp: ir.IntegerAttr
    slope_double_round: ir.IntegerAttr
    slope_act_min: ir.IntegerAttr
    slope_act_max: ir.IntegerAttr
    output_multiplier: ir.IntegerAttr
    output_shift: ir.IntegerAttr
    output_input_zp: ir.IntegerAttr
    output_zp: ir.IntegerAttr
    output_double_round: ir.IntegerAttr
    act_min: ir.IntegerAttr
    act_max: ir.IntegerAttr
    FLAGS = ("slope_double_round", "output_double_round")
    KERNEL = "prelu"

    def check(self):
        channels = self.int("channels")
        if self.elem(0) != "i8" or self.elem(0, result=True) != "i8":
            return "takes and returns int8"
        if numel(self.operation.operands[0].type) != numel(self.operation.results[0].type) or \
                self.shape(0)[-1] != channels:
            return "needs the input's element count in the output and `channels` as its last axis"
        if list(ir.RankedTensorType(self.operation.operands[1].type).shape) != [3, 256]:
            return "tables must be 3 x 256"
        if list(ir.RankedTensorType(self.operation.operands[2].type).shape) != [4, channels]:
            return f"channel_params must be 4 x {channels}"
        return None


@no_scratch
@no_macs
class GatherOp(KernelOp, dialect=Portable, name="gather"):
    """tosa.gather: values [N, K, C], int32 indices [N, W] -> [N, W, C]."""
    values: Operand[ir.RankedTensorType]
    indices: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    KERNEL = "gather"


@no_scratch
@no_macs
class ScatterOp(KernelOp, dialect=Portable, name="scatter"):
    """tosa.scatter: values_in [N, K, C] with the rows of int32 indices [N, W] replaced by input
    [N, W, C] -> [N, K, C]."""
    values_in: Operand[ir.RankedTensorType]
    indices: Operand[ir.RankedTensorType]
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    KERNEL = "scatter"


@no_scratch
@no_macs
class ResizeOp(UnaryFields, dialect=Portable, name="resize"):
    """tosa.resize of NHWC: scale [y_n, y_d, x_n, x_d], offset [y, x], border [y, x]."""
    scale: I32Array
    offset: I32Array
    border: I32Array
    mode: ResizeMode
    LENGTHS = {"scale": 4, "offset": 2, "border": 2}
    KERNEL = "resize"


@no_scratch
@no_macs
class ReduceOp(UnaryFields, dialect=Portable, name="reduce"):
    kind: ReduceKind
    axis: ir.IntegerAttr
    KERNEL = "reduce"


@no_scratch
@no_macs
class ArgmaxOp(UnaryFields, dialect=Portable, name="argmax"):
    axis: ir.IntegerAttr
    KERNEL = "argmax"



def load(ctx) -> None:
    """Loads the dialect into `ctx` (once per context)."""
    with ctx:
        if not ctx.is_dialect_loaded("portable"):
            Portable.load()
