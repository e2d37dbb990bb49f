"""mcu-attach-target: records the core the module is compiled for, once, before the backend."""

from __future__ import annotations

import dataclasses

from ..._mlir import ir
from ... import cores
from ..base import ModulePass


@dataclasses.dataclass(frozen=True)
class AttachTarget(ModulePass):
    """Attaches the target core to the module as `mcu.target`.

    The first backend pass, as tosa-attach-target is for TOSA: every later pass and the C emitter
    read the core from the module (its CMSIS-NN code path decides kernels and scratch sizes), so
    none of them takes a target option of its own.
    """

    NAME = "mcu-attach-target"
    target: str = dataclasses.field(default=cores.DEFAULT_TARGET, metadata={
        "help": "core: " + ", ".join(cores.TARGETS), "choices": cores.TARGETS})

    def run(self, module: ir.Operation) -> None:
        cores.attach(module, cores.core(self.target))
