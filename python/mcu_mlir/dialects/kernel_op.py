"""What the kernel dialects (`cmsisnn`, `portable`) share: the op base class and its verifier.

Every kernel op declares its operands, result and attributes as fields of its class (IRDL through
the bindings' `dialects.ext`). Scalars are `IntegerAttr` (i32; flags are 0 / 1), integer lists are
`I32Array` fields (`array<i32: ...>`, which IRDL cannot name in this build, so the Python verifier
checks them), choices are enum attributes of the dialect. Lengths of arrays that have one are
declared on the class in `LENGTHS`; an op with more to check overrides `check`.
"""

# No `from __future__ import annotations`: the ext module reads the field annotations as types.
from typing import Any, Sequence

from .._mlir import ir

from torch_mlir.dialects.ext import Operand, Operation, Result  # noqa: E402  (bindings' own module)

# An `array<i32: ...>` attribute field (the bindings' IRDL has no name for dense arrays).
I32Array = Any

# Operands of a kernel that takes any number of tensors: IRDL binds one variadic's elements to
# one type, so inputs come in runs of equal types, each run one variadic group.
Tensors = Sequence[Operand[ir.RankedTensorType]]
GROUPS = 8

# Lengths shared by the window ops.
WINDOW_LENGTHS = {"stride": 2, "padding": 4, "dilation": 2, "activation": 2, "kernel_size": 2}


def ints(attr) -> list[int]:
    return [int(x) for x in ir.DenseI32ArrayAttr(attr)]


def numel(ty) -> int:
    n = 1
    for d in ir.RankedTensorType(ty).shape:
        n *= d
    return n


class MissingKernelFact(NotImplementedError):
    """A kernel op class that does not answer a question the compiler asks about it: a bug in
    the dialect (every kernel op states its scratch size and MACs), never a user error."""

    def __init__(self, op, question: str):
        super().__init__(f"internal error: '{op.OPERATION_NAME}' does not define {question}; "
                         f"declare it on {type(op).__name__}")


class KernelOp(Operation):
    """Base of every kernel op class: verifies the fields the IRDL constraints cannot, and asks
    every op to state what the compiler needs to know about its kernel (scratch buffer, MACs,
    in-place writing, output-over-input overlap)."""

    LENGTHS = {}  # array attribute -> required length
    FLAGS = ()  # integer attributes that are 0 / 1

    def verify_invariants(self):
        problem = self._check_fields() or self.check()
        if problem:
            self.location.emit_error(f"'{self.OPERATION_NAME}' op {problem}")
            return False
        return True

    def _check_fields(self):
        attrs = self.operation.attributes
        for field in type(self)._fields:
            if type(field).__name__ != "AttributeDef":
                continue
            if field.name not in attrs:
                return f"requires attribute '{field.name}'"
            attr = attrs[field.name]
            if field.constraint is I32Array:
                if not isinstance(attr, ir.DenseI32ArrayAttr):
                    return f"attribute '{field.name}' must be array<i32>"
                want = self.LENGTHS.get(field.name)
                if want is not None and len(ints(attr)) != want:
                    return f"attribute '{field.name}' must have {want} elements"
            elif field.constraint is ir.IntegerAttr:
                if str(ir.IntegerAttr(attr).type) != "i32":
                    return f"attribute '{field.name}' must be an i32 integer"
                if field.name in self.FLAGS and ir.IntegerAttr(attr).value not in (0, 1):
                    return f"attribute '{field.name}' must be 0 or 1"
        return None

    def check(self):
        """An op's own invariants: a message, or None when they hold."""
        return None

    # The C kernel of a portable op is `mcu_<KERNEL>`, suffixed by the input type where the
    # library has one kernel per type (TYPED).
    KERNEL = ""
    TYPED = False

    def kernel_name(self) -> str:
        return f"{self.KERNEL}_{self.type_suffix()}" if self.TYPED else self.KERNEL

    def type_suffix(self) -> str:
        return "s16" if self.elem(0) == "i16" else "s8"

    # what the rest of the compiler asks about a kernel ------------------------------------------
    def scratch_bytes(self, core) -> int:
        """Bytes of scratch buffer one call needs on `core` (a cores.Core)."""
        raise MissingKernelFact(self, "scratch_bytes(core)")

    def macs(self) -> int:
        """Multiply-accumulates of one call (0 for a kernel that does none)."""
        raise MissingKernelFact(self, "macs()")

    def writes_in_place(self) -> bool:
        """Whether the kernel reads each element of operand 0 before writing that element of its
        equal-sized output, so the output may take the input's place when the input dies here.
        No by default: buffers kept apart are always correct."""
        return False

    def overlap_step(self, core) -> int | None:
        """Output pixels one step of the kernel computes on `core` when it writes its output in
        raster order and reads only the windows of pixels it has not written (memory_overlap);
        None (the default) when its output may not overlap its input."""
        return None

    def overlap_algorithm(self, core) -> str | None:
        """The `algorithm` of the same call, same integers, whose output may overlap its input on
        `core` where the current one's may not; None (the default) when there is none."""
        return None

    def scratch_free_algorithm(self) -> str | None:
        """The `algorithm` of the same call, same integers and no scratch buffer, if another
        than the current one (prefer=memory); None when there is none."""
        return None

    # reading -----------------------------------------------------------------------------------
    def int(self, name: str) -> int:
        return int(ir.IntegerAttr(self.operation.attributes[name]).value)

    def ints(self, name: str) -> list[int]:
        return ints(self.operation.attributes[name])

    def enum(self, name: str) -> str:
        return type(self).enum_value(self.operation.attributes[name])

    @staticmethod
    def enum_value(attr) -> str:
        # `#dialect.kind<"value">`: the one parameter of a dialect enum attribute.
        text = str(attr)
        return text[text.index('<"') + 2:text.rindex('">')]

    def shape(self, index: int = 0, result: bool = False) -> list[int]:
        value = self.operation.results[index] if result else self.operation.operands[index]
        return list(ir.RankedTensorType(value.type).shape)

    def elem(self, index: int = 0, result: bool = False) -> str:
        value = self.operation.results[index] if result else self.operation.operands[index]
        return str(ir.RankedTensorType(value.type).element_type)


def no_scratch(cls):
    """Class decorator: a kernel that needs no scratch buffer on any core. (The bindings' op
    classes take one base class only, so shared answers are decorators, not mixins.)"""
    cls.scratch_bytes = _zero_scratch
    return cls


def no_macs(cls):
    """Class decorator: a kernel with no multiply-accumulate work (data movement, elementwise
    maps, tables, pooling, normalisations): it counts 0 in the report's MACs."""
    cls.macs = _zero_macs
    return cls


def _zero_scratch(op, core) -> int:
    return 0


def _zero_macs(op) -> int:
    return 0


def window_macs(op, in_channels_per_output: int) -> int:
    """MACs of a 2-D window op (filter [O or 1, H, W, ...]): each output element sums a window
    of filter height x width x `in_channels_per_output` products."""
    f = op.shape(1)
    return numel(op.operation.results[0].type) * f[1] * f[2] * in_channels_per_output


def lstm_macs(op) -> int:
    """One LSTM step: four gates of [B, H] outputs, each over I input and H hidden values."""
    (b, i), (_, h) = op.shape(0), op.shape(1)
    return 4 * b * h * (i + h)


def rows_check(op):
    """num_rows x row_size must be the element count of the input (operand 0) and the result: a
    kernel over consecutive rows (both may be different views of those bytes)."""
    n = op.int("num_rows") * op.int("row_size")
    if n != numel(op.operation.operands[0].type) or n != numel(op.operation.results[0].type):
        return "needs an input and output of num_rows x row_size elements"
    return None


def per_channel_check(op, allow_none: bool = False):
    """multiplier / shift: as many of each, one or one per output channel (or none, where the
    kernel may leave its accumulators unscaled)."""
    channels = op.shape(0, result=True)[-1]
    mult, shift = op.ints("multiplier"), op.ints("shift")
    if len(mult) != len(shift):
        return "needs as many shifts as multipliers"
    if not mult and allow_none:
        return None
    if len(mult) not in (1, channels):
        return f"needs 1 or {channels} multipliers (one per output channel), got {len(mult)}"
    return None


def enum_attr(cls, value: str):
    """The enum attribute `cls` (a dialect Attribute with one string parameter) holding `value`."""
    return cls.get(ir.StringAttr.get(value))


def same_or_leading_repeat(op):
    """Operands hold the output's elements (views of other shapes too), or one repeats over
    leading dimensions (kernels that do not broadcast loop over blocks of the output)."""
    out = op.shape(0, result=True)
    n = numel(op.operation.results[0].type)
    full = [numel(v.type) == n for v in op.operation.operands[:2]]
    if all(full):
        return None
    if full.count(True) == 1:
        small = op.shape(full.index(False))
        lead = 0
        while lead < len(small) and small[lead] == 1:
            lead += 1
        if len(small) == len(out) and small[lead:] == out[lead:]:
            return None
    return "needs operands of the output's size (or one repeated over leading dimensions)"


def concat_check(op):
    """Inputs match the output outside `axis` and add up to it along `axis`."""
    axis, out = op.int("axis"), op.shape(0, result=True)
    if not 0 <= axis < len(out):
        return f"axis {axis} is out of range for rank {len(out)}"
    total = 0
    for k in range(len(op.operation.operands)):
        dims = op.shape(k)
        if len(dims) != len(out) or any(d != o for i, (d, o) in enumerate(zip(dims, out)) if i != axis):
            return f"input {k} does not match the output outside axis {axis}"
        total += dims[axis]
    if total != out[axis]:
        return f"inputs add up to {total} along axis {axis}, the output has {out[axis]}"
    return None


# -- field sets that ops of both dialects declare ----------------------------------------------

class UnaryFields(KernelOp):
    """One tensor in, one out."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]


class BinaryFields(KernelOp):
    """Two tensors in, one out."""
    input1: Operand[ir.RankedTensorType]
    input2: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]


class WeightedFields(KernelOp):
    """An activation, constant weights and bias in; one tensor out."""
    input: Operand[ir.RankedTensorType]
    filter: Operand[ir.RankedTensorType]
    bias: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]


class ConvFields(WeightedFields):
    """A convolution's window and quantisation (CMSIS-NN conventions)."""
    input_offset: ir.IntegerAttr
    output_offset: ir.IntegerAttr
    stride: I32Array
    padding: I32Array
    dilation: I32Array
    multiplier: I32Array
    shift: I32Array
    activation: I32Array
    LENGTHS = WINDOW_LENGTHS


class MulFields(BinaryFields):
    """A quantized multiply: (a + offset1) * (b + offset2) requantized."""
    input1_offset: ir.IntegerAttr
    input2_offset: ir.IntegerAttr
    output_offset: ir.IntegerAttr
    output_multiplier: ir.IntegerAttr
    output_shift: ir.IntegerAttr
    activation: I32Array
    LENGTHS = {"activation": 2}


class AddFields(MulFields):
    """A quantized add: each input rescaled (after a common left shift), the sum requantized."""
    input1_multiplier: ir.IntegerAttr
    input1_shift: ir.IntegerAttr
    input2_multiplier: ir.IntegerAttr
    input2_shift: ir.IntegerAttr
    left_shift: ir.IntegerAttr


class Softmax16Fields(KernelOp):
    """arm_softmax_s16's operands: int16 rows in and out, its two 513-entry int16 tables (exp and
    1 / (1 + x)), `mult` / `shift` scaling x - max (a left shift of at most 15: x - max in int32)."""
    input: Operand[ir.RankedTensorType]
    exp_lut: Operand[ir.RankedTensorType]
    one_by_one_lut: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    num_rows: ir.IntegerAttr
    row_size: ir.IntegerAttr
    mult: ir.IntegerAttr
    shift: ir.IntegerAttr

    def check(self):
        problem = rows_check(self)
        if problem:
            return problem
        if self.elem(0) != "i16" or self.elem(0, result=True) != "i16":
            return "takes and returns int16"
        for i in (1, 2):
            if numel(self.operation.operands[i].type) != 513 or self.elem(i) != "i16":
                return "takes int16 tables of 513 entries"
        if self.int("shift") > 15:
            return "needs a shift of at most 15"
        return None


class PoolFields(UnaryFields):
    """A pooling window (padding [top, left, bottom, right]) and the output clamp."""
    kernel_size: I32Array
    stride: I32Array
    padding: I32Array
    activation: I32Array
    LENGTHS = WINDOW_LENGTHS


class ConcatFields(KernelOp):
    """Concatenation along `axis`. Inputs come in runs of equal types, one variadic group each
    (g0..g7), any number per run."""
    output: Result[ir.RankedTensorType]
    g0: Tensors
    g1: Tensors
    g2: Tensors
    g3: Tensors
    g4: Tensors
    g5: Tensors
    g6: Tensors
    g7: Tensors
    axis: ir.IntegerAttr

    def check(self):
        return concat_check(self)


assert GROUPS == 8  # ConcatFields declares g0..g7


class LstmFields(KernelOp):
    """One LSTM time step in CMSIS-NN's integer arithmetic (fixed_point/cmsis_lstm.py): input [B, I] and hidden
    [B, H] int8, cell [B, H] int16 (scale 2**cell_scale_power) in; the next hidden state and cell
    state out. Weights and effective biases (bias + offset x row sums, as the kernel reads them)
    are stacked per gate in PyTorch's order (input, forget, cell, output): [4, H, I], [4, H, H],
    [4, H]. The per-gate requantizations are in CMSIS-NN's (multiplier, left shift) form."""
    input: Operand[ir.RankedTensorType]
    hidden: Operand[ir.RankedTensorType]
    cell: Operand[ir.RankedTensorType]
    input_weights: Operand[ir.RankedTensorType]
    hidden_weights: Operand[ir.RankedTensorType]
    input_biases: Operand[ir.RankedTensorType]
    hidden_biases: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    cell_out: Result[ir.RankedTensorType]
    input_offset: ir.IntegerAttr
    input_multipliers: I32Array
    input_shifts: I32Array
    hidden_multipliers: I32Array
    hidden_shifts: I32Array
    forget_to_cell: I32Array
    input_to_cell: I32Array
    cell_clip: ir.IntegerAttr
    cell_scale_power: ir.IntegerAttr
    output_multiplier: ir.IntegerAttr
    output_shift: ir.IntegerAttr
    output_offset: ir.IntegerAttr
    LENGTHS = {"input_multipliers": 4, "input_shifts": 4, "hidden_multipliers": 4, "hidden_shifts": 4,
               "forget_to_cell": 2, "input_to_cell": 2}

    def check(self):
        (b, i), (b2, h) = self.shape(0), self.shape(1)
        if self.shape(2) != [b, h] or self.shape(0, result=True) != [b, h] or self.shape(1, result=True) != [b, h] \
                or b2 != b:
            return "needs input [B, I], hidden and cell [B, H], results [B, H]"
        if self.shape(3) != [4, h, i] or self.shape(4) != [4, h, h] or self.shape(5) != [4, h] \
                or self.shape(6) != [4, h]:
            return "needs weights [4, H, I] and [4, H, H], biases [4, H]"
        if (self.elem(0), self.elem(1), self.elem(2)) != ("i8", "i8", "i16") or \
                (self.elem(0, result=True), self.elem(1, result=True)) != ("i8", "i16"):
            return "takes int8 input and hidden state and an int16 cell state"
        return None
