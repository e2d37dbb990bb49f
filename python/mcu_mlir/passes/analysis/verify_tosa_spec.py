"""mcu-verify-tosa-spec: ERROR_IF rules of the TOSA specification that upstream checks leave out."""

from __future__ import annotations

import dataclasses

from ..._mlir import ir, tosa
from ..base import ModulePass
from ...ir.ops import isa
from ...ir.values import static_shape


@dataclasses.dataclass(frozen=True)
class VerifyTosaSpec(ModulePass):
    """Rejects programs the TOSA specification declares invalid (ERROR_IF) where neither the dialect's
    verifiers nor `tosa-validate` do, so foreign TOSA is refused rather than compiled to some answer:

    - RESIZE keeps the batch and channel dimensions (ERROR_IF(OH/OW ...), N and C of output == input).
    """

    NAME = "mcu-verify-tosa-spec"

    def run(self, module: ir.Operation) -> None:
        for fn in self.functions(module):
            fn.walk(self._check)

    def _check(self, op):
        if isa(op, tosa.ResizeOp):
            ins, out = static_shape(op.operands[0]), static_shape(op.results[0])
            if ins is not None and out is not None and len(ins) == len(out) == 4:
                for axis, what in ((0, "batch"), (3, "channel")):
                    if ins[axis] != out[axis]:
                        self.emit_error(op, f"'tosa.resize' changes the {what} dimension ({ins[axis]} -> "
                                            f"{out[axis]}); the specification requires it unchanged")
        return ir.WalkResult.ADVANCE
