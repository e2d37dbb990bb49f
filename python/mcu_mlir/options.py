"""Compile options: one frozen dataclass, shared by mcu-compile and `mcu_mlir.compile`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .target.cores import TARGETS  # noqa: F401  (the --target choices)

BACKENDS = ("cmsis-nn", "portable")
QUANTIZE = ("int8", "int16", "none")
IO_LAYOUTS = ("nchw", "nhwc")
# speed: the fastest kernels; memory: scratch-free kernels where their scratch raises the arena.
PREFER = ("speed", "memory")
# Stages in order; `--emit X` stops after X.
STAGES = ("torch", "tosa", "tosa-int", "cmsisnn", "c", "elf")


@dataclass(frozen=True)
class CompileOptions:
    target: str = "cortex-m55"
    backend: str = "cmsis-nn"
    quantize: str = "int8"
    calibration: object = None      # None, int N, path to .npz, or an iterable of input tuples
    io_layout: str = "nchw"
    prefer: str = "speed"
    emit: str = "c"
    output_dir: str | None = None
    cmsis_nn_path: str | None = None
    timing: bool = False
    extra: dict = field(default_factory=dict, compare=False)

    def validate(self) -> None:
        from .diagnostics import UserError
        for name, value, allowed in (("target", self.target, TARGETS), ("backend", self.backend, BACKENDS),
                                     ("quantize", self.quantize, QUANTIZE),
                                     ("io-layout", self.io_layout, IO_LAYOUTS), ("prefer", self.prefer, PREFER),
                                     ("emit", self.emit, STAGES)):
            if value not in allowed:
                raise UserError(f"--{name} {value!r} is not one of: {', '.join(allowed)}")
        if self.emit == "tosa-int" and self.quantize == "none":
            raise UserError("--emit tosa-int needs a quantized model; it is incompatible with --quantize none")
        if self.quantize == "none" and self.emit in ("cmsisnn", "c", "elf"):
            raise UserError("Cortex-M code generation needs an integer model: use --quantize int8 or int16 "
                            "(--quantize none stops at --emit tosa)")

    def reaches(self, stage: str) -> bool:
        return STAGES.index(self.emit) >= STAGES.index(stage)
