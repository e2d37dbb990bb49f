"""mcu-prepare-for-emission: precomputes what the C needs and checks the module is emittable."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..._mlir import ir, tosa
from ...dialects import cmsisnn
from ...dialects.kernel_op import KernelOp
from ...emission.emit_c import missing_emitters
from ..base import ModulePass
from ...ir.constants import const_array
from ...ir.resources import clear_resource_cache
from ...ir import attributes as mcu_attrs


@dataclasses.dataclass(frozen=True)
class PrepareForEmission(ModulePass):
    """Precomputes fully-connected kernel sums (MVE) and checks every op can be emitted as C.

    On the Cortex-M55 (MVE) arm_fully_connected_s8 reads, from its context buffer, the per-output
    sums bias + input_offset * sum(weights row); they are computed here once and become flash
    constants (`mcu.kernel_sums`) instead of run-time work. Every kernel op must have a C emitter
    and have been placed by mcu-plan-memory; every `mcu.*` attribute must be declared (ir/attributes.py).
    """

    NAME = "mcu-prepare-for-emission"
    DIALECTS = ("cmsisnn", "portable")

    def run(self, module: ir.Operation) -> None:
        clear_resource_cache()
        for fn in self.functions(module):
            for op in fn.regions[0].blocks[0].operations:
                name = op.operation.name
                if name.startswith("tosa.") and not isinstance(op, (tosa.ConstOp, tosa.ConstShapeOp)):
                    self.emit_error(op, f"'{name}' was not converted: run mcu-convert-tosa-to-cmsisnn first")
                    continue
                if not isinstance(op, KernelOp):
                    continue
                if missing_emitters([op]):
                    self.emit_error(op, f"'{name}' has no C emitter")
                    continue
                if mcu_attrs.STORAGE not in op.attributes:
                    self.emit_error(op, f"'{name}' has no memory plan: run mcu-plan-memory first")
                    continue
                if isinstance(op, cmsisnn.FullyConnectedOp) and self.core(module).has_mve:
                    self._kernel_sums(op)
        for op, problem in mcu_attrs.verify(module):
            self.emit_error(op, problem)

    @staticmethod
    def _kernel_sums(op) -> None:
        weights = np.asarray(const_array(op.operands[1]), np.int64)
        bias = np.asarray(const_array(op.operands[2]), np.int64).reshape(-1)
        input_offset = int(ir.IntegerAttr(op.attributes["input_offset"]).value)
        sums = bias + input_offset * weights.sum(axis=1)
        op.attributes[mcu_attrs.KERNEL_SUMS] = ir.DenseI32ArrayAttr.get([int(x) for x in sums])
