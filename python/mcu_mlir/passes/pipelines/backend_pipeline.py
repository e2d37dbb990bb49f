"""mcu-tosa-to-cmsisnn-pipeline: integer NHWC TOSA -> planned cmsisnn ready for mcu-emit-c."""

from __future__ import annotations

import dataclasses

from ...options import BACKENDS, KERNELS, PREFER, SOFTMAX, CompileOptions
from ...cores import TARGETS
from ..transforms.attach_target import AttachTarget
from ..base import ModulePass, Options
from ..transforms.choose_generated_kernels import ChooseGeneratedKernels
from ..transforms.chunk_transposes import ChunkTransposes
from ..conversion.convert_tosa_to_cmsisnn import ConvertTosaToCmsisNN
from ..transforms.patch_early_stages import PatchEarlyStages
from ..transforms.plan_memory import PlanMemory
from ..transforms.prepare_for_emission import PrepareForEmission
from ..transforms.split_sliced_convs import SplitSlicedConvs

_DEFAULT = CompileOptions()


@dataclasses.dataclass(frozen=True)
class TosaToCmsisnnOptions(Options):
    """Converts to kernel calls, plans the arena and prepares emission.

    prefer=memory also runs the first layers of a CNN band by band, within max-overhead percent
    more instructions, unless patch=false.
    """

    NAME = "mcu-tosa-to-cmsisnn-pipeline"
    KIND = "pipeline"
    target: str = dataclasses.field(default=_DEFAULT.target, metadata={
        "choices": TARGETS, "help": "core (mcu-attach-target)"})
    backend: str = dataclasses.field(default=_DEFAULT.backend, metadata={
        "choices": BACKENDS, "help": "cmsis-nn or portable (mcu-convert-tosa-to-cmsisnn)"})
    ram_bytes: int = dataclasses.field(default=0, metadata={
        "help": "fail when the arena exceeds this many bytes (0: no limit; mcu-plan-memory)"})
    overlap: bool = dataclasses.field(default=True, metadata={
        "help": "let outputs overlap their dying inputs (mcu-plan-memory)"})
    prefer: str = dataclasses.field(default=_DEFAULT.prefer, metadata={
        "choices": PREFER, "help": "speed or memory (mcu-plan-memory; memory also patches early stages)"})
    softmax: str = dataclasses.field(default=_DEFAULT.softmax, metadata={
        "choices": SOFTMAX, "help": "table or cmsis-nn (mcu-convert-tosa-to-cmsisnn)"})
    kernels: str = dataclasses.field(default=_DEFAULT.kernels, metadata={
        "choices": KERNELS, "help": "generated kernels: auto, cmsis-nn or generated (mcu-choose-generated-kernels)"})
    max_overhead: float = dataclasses.field(default=_DEFAULT.max_overhead, metadata={
        "help": "most extra instructions, in percent, of running early layers in bands (mcu-patch-early-stages)"})
    patch: bool = dataclasses.field(default=True, metadata={
        "help": "with prefer=memory, run the first layers band by band"})

    def passes(self) -> list[ModulePass]:
        return tosa_to_cmsisnn_pipeline(self)


def tosa_to_cmsisnn_pipeline(options: TosaToCmsisnnOptions) -> list[ModulePass]:
    """The passes, in order: the core attached first, then the kernels chosen for it."""
    patch = [PatchEarlyStages(max_overhead=options.max_overhead)] \
        if options.prefer == "memory" and options.patch else []
    return [AttachTarget(target=options.target), *patch, SplitSlicedConvs(), ChunkTransposes(),
            ConvertTosaToCmsisNN(backend=options.backend, softmax=options.softmax),
            ChooseGeneratedKernels(kernels=options.kernels),
            PlanMemory(ram_bytes=options.ram_bytes, overlap=options.overlap, prefer=options.prefer),
            PrepareForEmission()]
