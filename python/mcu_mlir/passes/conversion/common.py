"""What every TOSA -> cmsisnn pattern needs: reading constants, building kernel ops, quantisation maths."""

from __future__ import annotations

import dataclasses
import enum
from typing import Callable, NamedTuple

import numpy as np

from ..._mlir import ir, tosa
from ...dialects.kernel_op import GROUPS, enum_attr
from ..base import PassError
from ...ir import attributes as mcu_attrs, types
from ...ir.constants import const_array
from ...ir.ops import create
from ...ir.values import elem, numel, only_user, producer, shape, tensor_type, users  # noqa: F401  (the patterns' readers)
from ...cores import Core
from ...fixed_point.qmath import apply_rescale

from torch_mlir.dialects import ext  # noqa: E402  (bindings' own module)

NO_MATCH = False  # a pattern returns this when the op is not its business
CONVERTED = True


class Phase(enum.Enum):
    """When the conversion applies a pattern. A unit absorbs several TOSA ops into one kernel
    call; units run first, over the whole function, because a unit's root (e.g. tosa.add) may
    come after ops it absorbs (its input rescales), which the one-op patterns would otherwise
    take first. Outer units contain other units (an LSTM step's matmuls, rescales, products)
    and run before them."""
    OUTER = "outer"
    UNIT = "unit"
    ONE_OP = "one-op"


OUTER, UNIT = Phase.OUTER, Phase.UNIT


class Pattern(NamedTuple):
    """A row of a family's `PATTERNS`: (name, root op class, function[, phase])."""
    name: str
    root: type
    fn: Callable
    phase: Phase = Phase.ONE_OP

# Integer element types a kernel can take (-> the runtime's enum), and their storage bytes.
DTYPES = types.RUNTIME
DTYPE_BYTES = {n: types.BYTES[n] for n in DTYPES}


@dataclasses.dataclass
class Rewriter:
    """State shared by the patterns of one conversion run, and the driver's rewriter for the
    pattern being applied (every erase goes through it, so the driver never visits a freed op)."""
    core: Core          # the module's target (its code path decides kernels and their constraints)
    backend: str
    disabled: frozenset
    rewriter: object = None

    @property
    def use_cmsis(self) -> bool:
        return self.backend == "cmsis-nn"

    def erase(self, *ops) -> None:
        """Erases ops a pattern absorbed, users before producers (in any order given)."""
        pending = list(ops)
        while pending:
            free = [op for op in pending if not any(list(r.uses) for r in op.results)]
            if not free:
                # A pattern absorbed an op another op still reads: a bug, reported with a repro.
                raise RuntimeError(f"absorbed ops still have users: {[op.operation.name for op in pending]}")
            for op in free:
                self.rewriter.erase_op(op)
            pending = [op for op in pending if all(op.operation != f.operation for f in free)]

    def convert(self, op, cls, operands: list, attrs: dict, result_type=None) -> bool:
        """Replaces the TOSA op `op` by one kernel op of class `cls`; returns CONVERTED."""
        new = make_op(cls, operands, result_type or op.results[0].type, attrs, before=op, loc=op.location,
                      source_op=op.operation.name)
        self.replace([op], op, new)
        return CONVERTED

    def replace(self, old_ops, last, new_op) -> None:
        """Replaces `last` (the op whose value the kernel now computes) by `new_op` and erases the
        other matched ops."""
        self.rewriter.replace_op(last, new_op)
        self.erase(*[op for op in old_ops if op.operation != last.operation])


def pattern_name(cls) -> str:
    """The name of the one-op pattern of an op class, as `disabled-patterns` takes it: the op's
    name without its dialect, with dashes (tosa.reduce_sum -> reduce-sum)."""
    return cls.OPERATION_NAME.split(".", 1)[1].replace("_", "-")


# -- reading the IR ---------------------------------------------------------------------------

def op_name(op) -> str:
    return op.operation.name


def single_user(op, cls=None):
    """The only user of `op`'s single result, if there is exactly one (and it is a `cls`)."""
    return only_user(op.results[0], *(() if cls is None else (cls,)))


def const_ints(value) -> list[int] | None:
    arr = const_array(value)
    return None if arr is None else [int(x) for x in np.asarray(arr).reshape(-1)]


def const_scalar(value) -> int | None:
    vals = const_ints(value)
    return None if not vals else vals[0]


def int_attr(op, name: str) -> int:
    return int(ir.IntegerAttr(op.attributes[name]).value)


def i64_array(op, name: str) -> list[int]:
    return [int(x) for x in ir.DenseI64ArrayAttr(op.attributes[name])]


def str_attr(op, name: str) -> str:
    attr = op.attributes[name]
    text = str(attr)
    return text.strip('"')


def bool_attr(op, name: str) -> bool:
    return ir.BoolAttr(op.attributes[name]).value if name in op.attributes else False


# -- building the IR --------------------------------------------------------------------------

def _attr(value):
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, bool):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))
    if isinstance(value, (int, np.integer)):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return ir.DenseI32ArrayAttr.get([int(v) for v in value])
    if isinstance(value, dict):
        return ir.DictAttr.get({k: _attr(v) for k, v in value.items()})
    raise TypeError(f"no attribute for {value!r}")


def make_const(array: np.ndarray, before, loc) -> ir.Value:
    """A tosa.const holding `array` (signless integers), inserted before `before`."""
    attr = ir.DenseElementsAttr.get(np.ascontiguousarray(array))
    op = create(tosa.ConstOp, results=[attr.type], attributes={"values": attr}, loc=loc,
                ip=ir.InsertionPoint(before))
    return op.results[0]


def make_op(cls, operands: list, result_type, attrs: dict, *, before, loc, source_op: str):
    """Builds a kernel op of class `cls` before `before`; `source_op` records the TOSA op(s) it
    replaces. Enum attributes are given as their value (a string); ops that take any number of
    tensors get them in runs of equal types, one variadic group each. `attrs` must hold exactly
    the class's attribute fields: a missing or unknown key is a bug in the calling pattern."""
    declared = [field for field in cls._fields if type(field).__name__ == "AttributeDef"]
    names = {field.name for field in declared}
    missing, unknown = sorted(names - set(attrs)), sorted(set(attrs) - names)
    if missing or unknown:
        raise RuntimeError(f"building '{cls.OPERATION_NAME}': missing attributes {missing}, unknown {unknown}")
    attributes = {}
    for field in declared:
        value = attrs[field.name]
        if isinstance(field.constraint, type) and issubclass(field.constraint, ext.Attribute):
            value = enum_attr(field.constraint, value)
        attributes[field.name] = _attr(value)
    attributes[mcu_attrs.SOURCE_OP] = ir.StringAttr.get(source_op)
    if any(field.name == "g0" for field in cls._fields):
        runs = _type_runs(operands)
        if len(runs) > GROUPS:
            raise PassError(before, f"'{op_name(before)}' has {len(runs)} runs of differently typed "
                                    f"inputs; a kernel op takes at most {GROUPS}")
        attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(runs + [0] * (GROUPS - len(runs)))
    results = list(result_type) if isinstance(result_type, (list, tuple)) else [result_type]
    return ir.Operation.create(cls.OPERATION_NAME, results=results, operands=list(operands),
                               attributes=attributes, loc=loc, ip=ir.InsertionPoint(before))


def _type_runs(values) -> list[int]:
    runs, last = [], None
    for v in values:
        if runs and v.type == last:
            runs[-1] += 1
        else:
            runs.append(1)
            last = v.type
    return runs


def fused_location(ops) -> ir.Location:
    locs = [op.location for op in ops]
    return locs[0] if len(locs) == 1 else ir.Location.fused(locs)


# -- quantisation -----------------------------------------------------------------------------

# The largest TOSA shift arm_nn_requantize computes without overflow: its right shift of 31 - 62
# makes arm_nn_divide_by_power_of_two's remainder mask (1 << 31) - 1.
CMSIS_MAX_TOSA_SHIFT = 61


@dataclasses.dataclass
class Rescale:
    """A tosa.rescale with constant parameters."""
    op: object
    multiplier: list[int]
    shift: list[int]  # TOSA shifts
    input_zp: int
    output_zp: int
    per_channel: bool
    scale32: bool
    double_round: bool
    input_unsigned: bool
    output_unsigned: bool

    def cmsis_requantize(self) -> tuple[list[int], list[int]]:
        """(multipliers, shifts) for arm_nn_requantize: the shift is 31 - the TOSA shift. A TOSA shift
        of 62 would be a right shift of 31, where CMSIS-NN's arm_nn_divide_by_power_of_two computes
        (1 << 31) - 1, a signed overflow (UBSan's report after a LayerNorm(1), docs/fuzzing.md):
        such a channel scales by less than 2**-31 and requantize_exact admits it only where it gives
        0 for every input, which multiplier 0 and shift 0 give too."""
        mults, shifts = [], []
        for m, s in zip(self.multiplier, self.shift):
            zero = s >= CMSIS_MAX_TOSA_SHIFT + 1
            mults.append(0 if zero else m)
            shifts.append(0 if zero else 31 - s)
        return mults, shifts

    def s16_params(self) -> tuple[list[int], list[int]] | None:
        """CMSIS-NN's s16 requantisation (multiplier << 16, 15 - shift) for a 16-bit-multiplier
        rescale of an int48 accumulator; None when it is not that kind of rescale."""
        if self.scale32 or self.input_unsigned or self.output_unsigned:
            return None
        if any(not 0 <= m <= 0x7FFF for m in self.multiplier) or any(s > 62 for s in self.shift):
            return None
        return [m << 16 for m in self.multiplier], [15 - s for s in self.shift]

    def requantize_exact(self, max_abs_input: int | None = None) -> bool:
        """Whether arm_nn_requantize (CMSIS-NN) computes exactly this rescale.

        Shifts >= 31 need double rounding (equal by construction); smaller shifts become a left
        shift inside arm_nn_requantize, exact while the shifted input fits in 32 bits.
        """
        if not self.scale32 or self.input_unsigned or self.output_unsigned:
            return False
        for m, s in zip(self.multiplier, self.shift):
            if s > 31 and not self.double_round:
                return False
            if s < 31:
                if max_abs_input is None or (max_abs_input << (31 - s)) >= 2 ** 31:
                    return False
            if s > CMSIS_MAX_TOSA_SHIFT:     # passed as a zero multiplier (cmsis_requantize)
                bound = 2 ** 31 if max_abs_input is None else max_abs_input
                if apply_rescale(bound, m, s) != 0 or apply_rescale(-bound, m, s) != 0:
                    return False
        return all(m >= 0 for m in self.multiplier)


def read_rescale(op) -> Rescale | None:
    if op is None or not isinstance(op, tosa.RescaleOp):
        return None
    vals = [const_ints(op.operands[i]) for i in range(1, 5)]
    if any(v is None for v in vals):
        return None
    mult, shift, izp, ozp = vals
    rounding = str_attr(op, "rounding_mode")
    in_unsigned, out_unsigned = bool_attr(op, "input_unsigned"), bool_attr(op, "output_unsigned")
    # An unsigned side's zero point is stored in the signless integer of its tensor: read it
    # unsigned (0x80 in an i8 is 128, not -128).
    izp = _unsigned(izp[0], elem(op.operands[0])) if in_unsigned else izp[0]
    ozp = _unsigned(ozp[0], elem(op.results[0])) if out_unsigned else ozp[0]
    return Rescale(op, mult, shift, izp, ozp, bool_attr(op, "per_channel"), bool_attr(op, "scale32"),
                   "DOUBLE" in rounding, in_unsigned, out_unsigned)


def _unsigned(value: int, elem_name: str) -> int:
    bits = {"i8": 8, "i16": 16, "i32": 32}.get(elem_name)
    return value & ((1 << bits) - 1) if bits else value


def clamp_bounds(op) -> tuple[int, int] | None:
    """min/max of a tosa.clamp on integers."""
    if op is None or not isinstance(op, tosa.ClampOp):
        return None
    return (int(ir.IntegerAttr(op.attributes["min_val"]).value),
            int(ir.IntegerAttr(op.attributes["max_val"]).value))


LIMITS = types.RANGE


def follow_requant_tail(op, out_elem: str = "i8"):
    """The rescale (accumulator -> `out_elem`, only user of `op`) and an optional clamp after it.

    Returns (rescale info, last op, activation [min, max]) or None.
    """
    rescale_op = single_user(op, tosa.RescaleOp)
    rs = read_rescale(rescale_op)
    if rs is None or elem(rescale_op.results[0]) != out_elem or rs.input_zp != 0:
        return None
    last, act = rescale_op, list(LIMITS[out_elem])
    clamp_op = single_user(rescale_op, tosa.ClampOp)
    bounds = clamp_bounds(clamp_op)
    if bounds is not None:
        act = [max(act[0], bounds[0]), min(act[1], bounds[1])]
        last = clamp_op
    return rs, last, act


def per_channel_params(rs: Rescale, channels: int) -> tuple[list[int], list[int]]:
    mult, shift = rs.cmsis_requantize()
    if rs.per_channel and len(mult) != channels:
        raise PassError(rs.op, f"'tosa.rescale' has {len(mult)} multipliers for {channels} channels")
    return mult, shift
