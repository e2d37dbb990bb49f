"""mcu-verify-integer-tosa: the contract of the quantized frontend's output, checked on any TOSA."""

from __future__ import annotations

import dataclasses

from ..._mlir import ir, tosa
from ..base import ModulePass
from ...ir import roles
from ...ir.ops import isa
from ...ir.values import element_name

_FLOAT = ("f16", "f32", "f64", "bf16")


@dataclasses.dataclass(frozen=True)
class VerifyIntegerTosa(ModulePass):
    """Checks that a TOSA module computes in integers the way CMSIS-NN does.

    Every op has integer operands and results (no float op, not even at the boundary: inputs and
    outputs are quantized by the caller); convolutions and matmuls take i8/i16 inputs and produce
    i32/i48 accumulators; a rescale of an int32 accumulator rounds twice (DOUBLE_ROUND), as
    CMSIS-NN's requantization does. One error per offending op.
    """

    NAME = "mcu-verify-integer-tosa"
    double_round: bool = dataclasses.field(
        default=True, metadata={"help": "require DOUBLE_ROUND on int32 -> int8/int16 rescales"})

    def run(self, module: ir.Operation) -> None:
        for fn in self.functions(module):
            for arg in fn.regions[0].blocks[0].arguments:
                if element_name(arg) in _FLOAT:
                    self.emit_error(fn, f"argument #{arg.arg_number} is {element_name(arg)}: integer TOSA takes "
                                        "quantized inputs")
            fn.walk(self._check)

    def _check(self, op):
        name = op.name
        if name == "func.func" or not name.startswith(("tosa.", "func.return")):
            return ir.WalkResult.ADVANCE
        floats = [e for e in (element_name(v) for v in list(op.operands) + list(op.results)) if e in _FLOAT]
        if floats:
            what = "returns" if name == "func.return" else "computes in"
            self.emit_error(op, f"'{name}' {what} {floats[0]}: the model is not fully quantized")
            return ir.WalkResult.ADVANCE
        if isa(op, *roles.ACCUMULATING):
            ins, out = element_name(op.operands[0]), element_name(op.results[0])
            if ins not in ("i8", "i16") or out not in ("i32", "i48"):
                self.emit_error(op, f"'{name}' takes {ins} and accumulates in {out}; expected i8/i16 "
                                    "inputs and an i32/i48 accumulator")
        elif isa(op, tosa.RescaleOp) and self.double_round:
            ins, out = element_name(op.operands[0]), element_name(op.results[0])
            mode = op.attributes["rounding_mode"] if "rounding_mode" in op.attributes else None
            scale32 = op.attributes["scale32"] if "scale32" in op.attributes else None
            if (ins == "i32" and out in ("i8", "i16") and "true" in str(scale32)
                    and "DOUBLE_ROUND" not in str(mode) and not _from_table(op.operands[0])):
                mode_name = str(mode).split("<")[-1].rstrip(">")
                self.emit_error(op, f"'tosa.rescale' of an int32 accumulator rounds with {mode_name}; "
                                    "CMSIS-NN rounds twice (DOUBLE_ROUND)")
        return ir.WalkResult.ADVANCE


def _from_table(value) -> bool:
    """An int16 TABLE's interpolated int32 result is no accumulator: its rescale to int16 drops
    the 7 fraction bits with one rounding, as the portable table kernel does."""
    owner = value.owner
    op = getattr(owner, "operation", None)
    return op is not None and isa(op, tosa.TableOp)
