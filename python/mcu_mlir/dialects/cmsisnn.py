"""The `cmsisnn` dialect: one op per CMSIS-NN (or portable) kernel call.

Every op takes its tensors as operands (activations first, then constant weights / bias) and
carries every scalar parameter of the call as an attribute, in CMSIS-NN's conventions:
`input_offset` / `filter_offset` are negated zero points, `output_offset` the output zero point,
`multiplier` / `shift` the requantisation (`shift` > 0 shifts left, as in `arm_nn_requantize`),
`padding` is `[top, left, bottom, right]`, `activation` is `[min, max]`.

`cmsisnn.portable` stands for a call into our portable C kernels (lib/portable): `kernel` names it
and `params` holds its parameters in the same conventions.

The ops are IRDL-backed (torch_mlir.dialects.ext); attribute kinds and shapes are checked by the
Python verifiers below. Operands are separate fields, never one variadic: IRDL binds a constraint
to the first type it sees, so a variadic operand would force all its tensors to one type. Ops with a
varying number of tensors (concat, portable) have optional operands in0..in7.
"""

# No `from __future__ import annotations`: the ext module reads the field annotations as types.
from typing import Optional

from .._mlir import ir

from torch_mlir.dialects.ext import Dialect, Operand, Result  # noqa: E402  (bindings' own module)


class CmsisNN(Dialect, name="cmsisnn"):
    pass


# -- attribute kinds -------------------------------------------------------------------------
_INT = "i32 integer"
_INTS = "array<i32>"
_STR = "string"
_DICT = "dictionary"

MAX_OPERANDS = 8

# op name -> (attribute -> kind, (min operands, max operands))
SIGNATURES: dict[str, tuple[dict[str, str], tuple[int, int]]] = {}


def _check_kind(attr, kind: str) -> bool:
    if kind == _INT:
        return isinstance(attr, ir.IntegerAttr)
    if kind == _INTS:
        return isinstance(attr, ir.DenseI32ArrayAttr)
    if kind == _STR:
        return isinstance(attr, ir.StringAttr)
    if kind == _DICT:
        return isinstance(attr, ir.DictAttr)
    return True


def ints(attr) -> list[int]:
    return list(ir.DenseI32ArrayAttr(attr))


class _KernelOp(CmsisNN.Operation):
    """Shared verifier: declared attributes have the right kind; array lengths agree."""

    _ARRAY_LENGTHS = {}  # attribute -> required length (not annotated: annotations are op fields)

    def verify_invariants(self):
        attrs, (lo, hi) = SIGNATURES[self.OPERATION_NAME]
        problem = None
        n = len(self.operation.operands)
        if not lo <= n <= hi:
            problem = f"expects {lo}..{hi} operands, got {n}"
        for name, kind in attrs.items():
            if problem:
                break
            if name not in self.operation.attributes:
                problem = f"requires attribute '{name}'"
            elif not _check_kind(self.operation.attributes[name], kind):
                problem = f"attribute '{name}' must be {kind}"
        if not problem:
            for name, length in self._ARRAY_LENGTHS.items():
                if name in attrs and len(ints(self.operation.attributes[name])) != length:
                    problem = f"attribute '{name}' must have {length} elements"
                    break
        if not problem:
            problem = self.extra_check()
        if problem:
            self.location.emit_error(f"'{self.OPERATION_NAME}' op {problem}")
            return False
        return True

    def extra_check(self):
        return None

    def attr_int(self, name: str) -> int:
        return ir.IntegerAttr(self.operation.attributes[name]).value


def _register(cls, attrs: dict[str, str], operands: tuple[int, int]):
    SIGNATURES[cls.OPERATION_NAME] = (attrs, operands)
    return cls


_WINDOW = {"stride": _INTS, "padding": _INTS, "activation": _INTS}
_LENGTHS = {"stride": 2, "padding": 4, "dilation": 2, "activation": 2, "kernel_size": 2}


def _per_channel_check(self):
    out_ty = ir.RankedTensorType(self.operation.results[0].type)
    channels = out_ty.shape[-1]
    mult = ints(self.operation.attributes["multiplier"])
    shift = ints(self.operation.attributes["shift"])
    if len(mult) != len(shift):
        return "needs as many shifts as multipliers"
    if len(mult) not in (1, channels):
        return f"needs 1 or {channels} multipliers (one per output channel), got {len(mult)}"
    return None


class ConvOp(_KernelOp, name="conv"):
    """arm_convolve_wrapper_s8 (or a kernel it dispatches to): input, filter (OHWI), bias?."""
    input: Operand[ir.RankedTensorType]
    filter: Operand[ir.RankedTensorType]
    bias: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = _LENGTHS

    def extra_check(self):
        return _per_channel_check(self)


class DepthwiseConvOp(_KernelOp, name="depthwise_conv"):
    """arm_depthwise_conv_wrapper_s8: input, filter (1HWC*M), bias?."""
    input: Operand[ir.RankedTensorType]
    filter: Operand[ir.RankedTensorType]
    bias: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = _LENGTHS

    def extra_check(self):
        return _per_channel_check(self)


class FullyConnectedOp(_KernelOp, name="fully_connected"):
    """arm_fully_connected_s8 / _per_channel_s8: input [N, K], filter [O, K], bias?."""
    input: Operand[ir.RankedTensorType]
    filter: Operand[ir.RankedTensorType]
    bias: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = {"activation": 2}

    def extra_check(self):
        return _per_channel_check(self)


class BatchMatmulOp(_KernelOp, name="batch_matmul"):
    """arm_batch_matmul_s8: lhs [B, M, K], rhs [B, N, K] (transposed)."""
    input1: Operand[ir.RankedTensorType]
    input2: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = {"activation": 2}


class AvgPoolOp(_KernelOp, name="avg_pool"):
    """arm_avgpool_s8."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = _LENGTHS


class MaxPoolOp(_KernelOp, name="max_pool"):
    """arm_max_pool_s8."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = _LENGTHS


class AddOp(_KernelOp, name="add"):
    """arm_elementwise_add_s8 (same-shape operands)."""
    input1: Operand[ir.RankedTensorType]
    input2: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = {"activation": 2}


class MulOp(_KernelOp, name="mul"):
    """arm_elementwise_mul_s8 (same-shape operands)."""
    input1: Operand[ir.RankedTensorType]
    input2: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = {"activation": 2}


class MaximumOp(_KernelOp, name="maximum"):
    """arm_maximum_s8 (broadcasting)."""
    input1: Operand[ir.RankedTensorType]
    input2: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]


class MinimumOp(_KernelOp, name="minimum"):
    """arm_minimum_s8 (broadcasting)."""
    input1: Operand[ir.RankedTensorType]
    input2: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]


class SoftmaxOp(_KernelOp, name="softmax"):
    """arm_softmax_s8 over the last axis."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]


class ActivationOp(_KernelOp, name="activation"):
    """Clamp to [min, max] (arm_relu6_s8 / arm_relu_q7 when the bounds fit, else a portable clamp)."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]
    _ARRAY_LENGTHS = {"activation": 2}


class PadOp(_KernelOp, name="pad"):
    """arm_pad_s8: constant padding of an NHWC tensor."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]


class TransposeOp(_KernelOp, name="transpose"):
    """arm_transpose_s8."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]


class ConcatOp(_KernelOp, name="concat"):
    """arm_concatenation_s8_{x,y,z,w} (one call per input)."""
    output: Result[ir.RankedTensorType]
    in0: Optional[Operand[ir.RankedTensorType]] = None
    in1: Optional[Operand[ir.RankedTensorType]] = None
    in2: Optional[Operand[ir.RankedTensorType]] = None
    in3: Optional[Operand[ir.RankedTensorType]] = None
    in4: Optional[Operand[ir.RankedTensorType]] = None
    in5: Optional[Operand[ir.RankedTensorType]] = None
    in6: Optional[Operand[ir.RankedTensorType]] = None
    in7: Optional[Operand[ir.RankedTensorType]] = None


class ReshapeOp(_KernelOp, name="reshape"):
    """A view: same bytes, new shape (no code unless the planner must copy)."""
    input: Operand[ir.RankedTensorType]
    output: Result[ir.RankedTensorType]

    def extra_check(self):
        src = ir.RankedTensorType(self.operation.operands[0].type)
        dst = ir.RankedTensorType(self.operation.results[0].type)
        if _numel(src) != _numel(dst) or src.element_type != dst.element_type:
            return "must keep the element count and type"
        return None


class PortableOp(_KernelOp, name="portable"):
    """A call of a portable C kernel `mcu_<kernel>` with `params`."""
    output: Result[ir.RankedTensorType]
    in0: Optional[Operand[ir.RankedTensorType]] = None
    in1: Optional[Operand[ir.RankedTensorType]] = None
    in2: Optional[Operand[ir.RankedTensorType]] = None
    in3: Optional[Operand[ir.RankedTensorType]] = None
    in4: Optional[Operand[ir.RankedTensorType]] = None
    in5: Optional[Operand[ir.RankedTensorType]] = None
    in6: Optional[Operand[ir.RankedTensorType]] = None
    in7: Optional[Operand[ir.RankedTensorType]] = None


def _numel(ty) -> int:
    n = 1
    for d in ty.shape:
        n *= d
    return n


_CONV_ATTRS = {"input_offset": _INT, "output_offset": _INT, "stride": _INTS, "padding": _INTS,
               "dilation": _INTS, "multiplier": _INTS, "shift": _INTS, "activation": _INTS,
               "kernel": _STR}
_POOL_ATTRS = {"stride": _INTS, "padding": _INTS, "kernel_size": _INTS, "activation": _INTS,
               "kernel": _STR}
_register(ConvOp, _CONV_ATTRS, (3, 3))
_register(DepthwiseConvOp, {**_CONV_ATTRS, "ch_mult": _INT}, (3, 3))
_register(FullyConnectedOp, {"input_offset": _INT, "filter_offset": _INT, "output_offset": _INT,
                             "multiplier": _INTS, "shift": _INTS, "activation": _INTS,
                             "kernel": _STR}, (3, 3))
_register(BatchMatmulOp, {"lhs_offset": _INT, "rhs_offset": _INT, "output_offset": _INT,
                          "multiplier": _INT, "shift": _INT, "activation": _INTS,
                          "kernel": _STR}, (2, 2))
_register(AvgPoolOp, _POOL_ATTRS, (1, 1))
_register(MaxPoolOp, _POOL_ATTRS, (1, 1))
_BINARY = {"input1_offset": _INT, "input2_offset": _INT, "output_offset": _INT,
           "output_multiplier": _INT, "output_shift": _INT, "activation": _INTS, "kernel": _STR}
_register(AddOp, {**_BINARY, "left_shift": _INT, "input1_multiplier": _INT, "input1_shift": _INT,
                  "input2_multiplier": _INT, "input2_shift": _INT}, (2, 2))
_register(MulOp, _BINARY, (2, 2))
_register(MaximumOp, {"kernel": _STR}, (2, 2))
_register(MinimumOp, {"kernel": _STR}, (2, 2))
_register(SoftmaxOp, {"multiplier": _INT, "shift": _INT, "diff_min": _INT, "kernel": _STR}, (1, 1))
_register(ActivationOp, {"activation": _INTS, "kernel": _STR}, (1, 1))
_register(PadOp, {"padding": _INTS, "pad_value": _INT, "kernel": _STR}, (1, 1))
_register(TransposeOp, {"perms": _INTS, "kernel": _STR}, (1, 1))
_register(ConcatOp, {"axis": _INT, "kernel": _STR}, (1, MAX_OPERANDS))
_register(ReshapeOp, {}, (1, 1))
_register(PortableOp, {"kernel": _STR, "params": _DICT}, (1, MAX_OPERANDS))


def load(ctx) -> None:
    """Loads the dialect into `ctx` (once per context)."""
    with ctx:
        if not ctx.is_dialect_loaded("cmsisnn"):
            CmsisNN.load()
