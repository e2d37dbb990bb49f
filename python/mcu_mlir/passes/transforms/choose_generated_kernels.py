"""mcu-choose-generated-kernels: where a kernel written for the layer beats the CMSIS-NN call."""

from __future__ import annotations

import dataclasses

from ..._mlir import ir
from ... import cores, kernel_generation
from ...dialects.kernel_op import KernelOp
from ...ir import attributes as mcu_attrs
from ..base import ModulePass


@dataclasses.dataclass(frozen=True)
class ChooseGeneratedKernels(ModulePass):
    """Marks each CMSIS-NN call a generated kernel (kernel_generation/) replaces with `mcu.generated_kernel`.

    A kernel is taken where it applies to the layer (its checks run on the layer's constants at
    compile time) and its cost estimate on the module's core is below the CMSIS-NN call's; the
    estimates go to mcu.kernel_note (report.json). kernels=cmsis-nn keeps the library everywhere;
    kernels=generated takes a kernel wherever it applies, on any core (its portable C off the DSP
    cores). Runs after mcu-convert-tosa-to-cmsisnn and before mcu-plan-memory (a generated kernel
    needs no scratch buffer).
    """

    NAME = "mcu-choose-generated-kernels"
    kernels: str = dataclasses.field(default="auto", metadata={
        "help": "auto (where the cost estimate is lower), cmsis-nn (never) or generated (wherever one applies)",
        "choices": kernel_generation.MODES})

    def run(self, module: ir.Operation) -> None:
        if self.kernels == "cmsis-nn":
            return
        core = cores.of(module)
        ops = [op for fn in self.functions(module) for op in fn.regions[0].blocks[0].operations
               if isinstance(op, KernelOp)]
        for op in ops:
            name, note = kernel_generation.choose(op, core, self.kernels)
            if name is None:
                continue
            op.operation.attributes[mcu_attrs.GENERATED_KERNEL] = ir.StringAttr.get(name)
            if note:
                old = op.operation.attributes[mcu_attrs.KERNEL_NOTE] \
                    if mcu_attrs.KERNEL_NOTE in op.operation.attributes else None
                text = f"{str(old).strip(chr(34))}; {note}" if old is not None else note
                op.operation.attributes[mcu_attrs.KERNEL_NOTE] = ir.StringAttr.get(text)
