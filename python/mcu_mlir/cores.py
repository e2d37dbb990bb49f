"""The target description: every core mcu-mlir compiles for, in one place.

The driver, the passes (CMSIS-NN code path, scratch sizes), the build, the QEMU runner and the
report all read this table. The CMake side (cmake/mcu-targets.cmake) states the same compiler
flags and machines for builds run by hand; a test keeps the two equal.

The core is attached to the IR once (mcu-attach-target writes `mcu.target`); every later pass and
the emitter ask the module for it with `of(module)`.
"""

from __future__ import annotations

import dataclasses
import enum


class CodePath(enum.Enum):
    """The CMSIS-NN code path compiled for a core: its kernels' constraints and scratch sizes follow it."""
    SCALAR = "c"      # plain C (M0 / M3 / the host)
    DSP = "dsp"       # the DSP extension's SIMD (M4 / M7 / M33)
    MVE = "mve"       # Helium (M55)


class TargetMissing(LookupError):
    """A module without `mcu.target`: mcu-attach-target did not run on it."""


@dataclasses.dataclass(frozen=True)
class Core:
    name: str
    cmsis_path: CodePath
    cpu_flags: tuple[str, ...]  # arm-none-eabi-gcc flags (empty for the host)
    qemu_machine: str | None   # QEMU -M value
    machine_description: str
    linker_script: str | None  # lib/target/<name>.ld.in
    ram_bytes: int             # RAM the linker script gives data, stack and arena (largest region)
    flash_bytes: int

    @property
    def has_mve(self) -> bool:
        return self.cmsis_path is CodePath.MVE

    @property
    def has_dsp(self) -> bool:
        """The DSP extension's instructions (MVE cores have them too)."""
        return self.cmsis_path is not CodePath.SCALAR

    @property
    def is_host(self) -> bool:
        """This machine: built with the host's compiler and run without QEMU."""
        return self.qemu_machine is None


_MB = 1024 * 1024
# M55: MVE needs a hard or softfp float ABI, and GCC 12.2 miscompiles some MVE auto-vectorised C
# (../shared/TARGET.md), hence -fno-tree-vectorize; CMSIS-NN's MVE paths use intrinsics.
CORES: dict[str, Core] = {c.name: c for c in (
    Core("host", CodePath.SCALAR, (), None, "this machine", None, 0, 0),
    Core("cortex-m0", CodePath.SCALAR, ("-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"), "mps2-an385",
         "MPS2 AN385 running ARMv6-M (Cortex-M0) code", "mps2", 4 * _MB, 4 * _MB),
    Core("cortex-m3", CodePath.SCALAR, ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"), "mps2-an385",
         "MPS2 AN385: Cortex-M3", "mps2", 4 * _MB, 4 * _MB),
    Core("cortex-m4", CodePath.DSP, ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard"), "mps2-an386",
         "MPS2 AN386: Cortex-M4 with DSP", "mps2", 4 * _MB, 4 * _MB),
    Core("cortex-m7", CodePath.DSP, ("-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard"), "mps2-an500",
         "MPS2 AN500: Cortex-M7", "mps2", 4 * _MB, 4 * _MB),
    Core("cortex-m33", CodePath.DSP, ("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard"), "mps2-an505",
         "MPS2 AN505: Cortex-M33 (secure state)", "mps2-an505", 4 * _MB, 4 * _MB),
    Core("cortex-m55", CodePath.MVE, ("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-fno-tree-vectorize"),
         "mps3-an547", "Corstone-300 AN547: Cortex-M55 with MVE", "mps3-an547", 256 * _MB, 512 * 1024),
)}

TARGETS: tuple[str, ...] = tuple(CORES)                      # host first, then by architecture
DEVICE_TARGETS: tuple[str, ...] = tuple(n for n, c in CORES.items() if not c.is_host)
DEFAULT_TARGET = "cortex-m55"                                 # mcu-compile's and mcu-attach-target's default


def core(name: str) -> Core:
    """The core called `name`; KeyError for an unknown one (callers say which names exist)."""
    return CORES[name]


def of(module) -> Core:
    """The core attached to `module` (an ir.Module or its operation) by mcu-attach-target.

    Raises TargetMissing when none is attached, ValueError (naming the known cores) for an unknown name."""
    from .ir import attributes as mcu_attrs
    op = getattr(module, "operation", module)
    if mcu_attrs.TARGET not in op.attributes:
        raise TargetMissing("the module has no mcu.target: run mcu-attach-target{target=...} first")
    name = str(op.attributes[mcu_attrs.TARGET]).strip('"')
    if name not in CORES:
        raise ValueError(f"unknown target '{name}' in mcu.target (targets: {', '.join(TARGETS)})")
    return CORES[name]


def attach(module, target: Core) -> None:
    """Records `target` on `module` as `mcu.target`."""
    from ._mlir import ir
    from .ir import attributes as mcu_attrs
    op = getattr(module, "operation", module)
    op.attributes[mcu_attrs.TARGET] = ir.StringAttr.get(target.name)
