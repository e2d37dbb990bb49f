"""mcu-verify-static-shapes: reject what no static memory plan can hold."""

from __future__ import annotations

import dataclasses

from ..._mlir import ir, tosa
from ..base import ModulePass

_SUPPORTED = ("i1", "i8", "i16", "i32", "i48", "i64", "f16", "f32", "bf16")
# Element types only a constant may have: int4 weights (and their zero point), which kernels read
# packed; no kernel takes or returns an int4 activation.
_CONSTANT_ONLY = ("i4",)


@dataclasses.dataclass(frozen=True)
class VerifyStaticShapes(ModulePass):
    """Checks that every tensor has a static shape and a supported element type.

    A microcontroller build plans all memory ahead of time: a dynamic dimension or an element type
    the kernels cannot compute is reported at the op that produces it, one error per op.
    """

    NAME = "mcu-verify-static-shapes"
    element_types: tuple[str, ...] = dataclasses.field(
        default=_SUPPORTED, metadata={"help": "element types accepted (comma-separated)"})

    def run(self, module: ir.Operation) -> None:
        for fn in self.functions(module):
            for arg in fn.regions[0].blocks[0].arguments:
                self._check(fn, arg.type, f"argument #{arg.arg_number}")
            fn.walk(self._check_op)

    def _check_op(self, op):
        constant = isinstance(op.opview, tosa.ConstOp)
        for i, result in enumerate(op.results):
            if self._check(op, result.type, f"result #{i} of '{op.name}'", constant):
                break
        return ir.WalkResult.ADVANCE

    def _check(self, op, ty, what: str, constant: bool = False) -> bool:
        if not isinstance(ty, ir.RankedTensorType):
            if isinstance(ty, ir.ShapedType):
                self.emit_error(op, f"{what} has unranked type {ty}; a static rank and shape are needed")
                return True
            return False
        if not ty.has_static_shape:
            dims = "x".join("?" if ty.is_dynamic_dim(i) else str(ty.shape[i]) for i in range(ty.rank))
            self.emit_error(op, f"{what} has dynamic shape {dims}; export the model with static shapes")
            return True
        elem = str(ty.element_type)
        if elem not in self.element_types and not (constant and elem in _CONSTANT_ONLY):
            self.emit_error(op, f"{what} has unsupported element type {elem} "
                                f"(supported: {', '.join(self.element_types)})")
            return True
        return False
