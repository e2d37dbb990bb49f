"""Intervals of integer tensor values and what the value-range analysis needs to read them from the IR
(mcu-verify-value-ranges, passes/analysis/verify_value_ranges.py)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import ir, tosa
from ...ir.ops import isa
from ...ir.values import element_type, rank as _rank  # noqa: F401  (read by the rules)

# An interval per element of a tensor's last axis (length 1: the same for every element). Bounds are
# numpy object arrays of Python ints, so that no product or sum of bounds can overflow.


@dataclasses.dataclass(frozen=True)
class Interval:
    lo: np.ndarray
    hi: np.ndarray
    # (shape, axis, v, kept): read in row-major order as `shape`, every slice along `axis` holds the
    # value v (x - max(x) holds 0 where x is largest: a softmax's sum is at least the exp of 0); kept,
    # a boolean mask of `shape` or None: where it keeps an element of a slice, v is held at a kept one.
    attains: tuple | None = None

    @staticmethod
    def of(lo, hi) -> "Interval":
        lo = np.atleast_1d(np.asarray(lo, dtype=object))
        hi = np.atleast_1d(np.asarray(hi, dtype=object))
        lo, hi = np.broadcast_arrays(lo, hi)
        return Interval(lo.copy(), hi.copy())

    def whole(self) -> "Interval":
        """One interval for every element."""
        return Interval.of(min(self.lo), max(self.hi))

    @property
    def min(self) -> int:
        return int(min(self.lo))

    @property
    def max(self) -> int:
        return int(max(self.hi))

    def shifted(self, k) -> "Interval":
        return Interval.of(self.lo + k, self.hi + k)

    def clip(self, lo: int, hi: int) -> "Interval":
        return Interval.of(np.minimum(np.maximum(self.lo, lo), hi), np.minimum(np.maximum(self.hi, lo), hi))

    def union(self, other: "Interval") -> "Interval":
        return Interval.of(np.minimum(self.lo, other.lo), np.maximum(self.hi, other.hi))


def _type_range(ty) -> tuple[int, int] | None:
    """The signed range of an integer (or index) type; None for a float or other type."""
    if isinstance(ty, ir.IndexType):
        return -(1 << 63), (1 << 63) - 1
    if not isinstance(ty, ir.IntegerType):
        return None
    bits = ir.IntegerType(ty).width
    if bits == 1:
        return 0, 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _bits(value) -> int:
    return ir.IntegerType(element_type(value)).width


def _last_dim(value) -> int | None:
    ty = value.type
    if isinstance(ty, ir.RankedTensorType) and ty.rank and ty.has_static_shape:
        return ty.shape[-1]
    return None


def _ints(attr) -> list[int]:
    return [int(x) for x in attr]


def _attr_int(op, name: str, default=None):
    if name not in op.attributes:
        return default
    attr = op.attributes[name]
    if isinstance(attr, ir.BoolAttr):
        return bool(attr.value)
    return int(ir.IntegerAttr(attr).value)


def _pow2(x: int) -> str:
    """x as the power of two it is (`2**20`), else the number."""
    return f"{'-' if x < 0 else ''}2**{abs(x).bit_length() - 1}" if x and abs(x) & (abs(x) - 1) == 0 else str(x)


def _scale32(value: int, multiplier: int, shift: int, double_round: bool) -> int:
    """apply_scale_32 / apply_scale_16 of the TOSA specification (without its REQUIREs)."""
    rounding = 1 << (shift - 1)
    if double_round and shift > 31:
        rounding += (1 << 30) if value >= 0 else -(1 << 30)
    return (value * multiplier + rounding) >> shift


class _Unproven(Exception):
    pass


def _unit_reshapes(value):
    """The value a chain of reshapes that only add or drop unit dimensions reads (the same elements in
    the same order), else the value itself."""
    while isa(value.owner, tosa.ReshapeOp):
        source = value.owner.operands[0]
        if not (isinstance(source.type, ir.RankedTensorType) and isinstance(value.type, ir.RankedTensorType)
                and [n for n in source.type.shape if n != 1] == [n for n in value.type.shape if n != 1]):
            break
        value = source
    return value


def _join(a: Interval, b: Interval) -> Interval:
    if len(a.lo) != len(b.lo) and 1 not in (len(a.lo), len(b.lo)):
        a, b = a.whole(), b.whole()
    return a.union(b)


def _describe(value) -> str:
    owner = value.owner
    return "an argument" if isinstance(owner, ir.Block) else f"the '{owner.name}' result"


_LAZY = object()     # a constant's range is computed when first read

# Ops whose result keeps a value's `attains` fact: each element in the same row-major place.
_KEEP_ATTAINS = frozenset({tosa.SubOp, tosa.ReshapeOp, tosa.CastOp, tosa.IdentityOp, tosa.GatherOp, tosa.TableOp})


def rule(*classes):
    """Marks a method of the analysis as the rule for ops of these classes."""
    def mark(method):
        method.op_classes = getattr(method, "op_classes", ()) + classes
        return method
    return mark


def rules_of(analysis: type) -> dict[type, str]:
    """op class -> the name of the method of `analysis` (or of a base) marked as its rule."""
    table = {}
    for klass in reversed(analysis.__mro__):
        for name, method in vars(klass).items():
            for op_class in getattr(method, "op_classes", ()):
                table[op_class] = name
    return table
