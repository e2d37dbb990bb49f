"""The target description: every core mcu-mlir compiles for, in one place.

The driver, the passes (CMSIS-NN code path, scratch sizes), the build, the QEMU runner and the
report all read this table. The CMake side (cmake/mcu-targets.cmake) states the same compiler
flags and machines for builds run by hand; a test keeps the two equal.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Core:
    name: str
    cmsis_path: str            # CMSIS-NN code path compiled for it: "c", "dsp" or "mve"
    cpu_flags: tuple[str, ...]  # arm-none-eabi-gcc flags (empty for the host)
    qemu_machine: str | None   # QEMU -M value
    machine_description: str
    linker_script: str | None  # lib/target/<name>.ld.in
    ram_bytes: int             # RAM the linker script gives data, stack and arena (largest region)
    flash_bytes: int

    @property
    def has_mve(self) -> bool:
        return self.cmsis_path == "mve"

    @property
    def has_dsp(self) -> bool:
        return self.cmsis_path in ("dsp", "mve")


_MB = 1024 * 1024
# M55: MVE needs a hard or softfp float ABI, and GCC 12.2 miscompiles some MVE auto-vectorised C
# (../shared/TARGET.md), hence -fno-tree-vectorize; CMSIS-NN's MVE paths use intrinsics.
CORES: dict[str, Core] = {c.name: c for c in (
    Core("host", "c", (), None, "this machine", None, 0, 0),
    Core("cortex-m0", "c", ("-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"), "mps2-an385",
         "MPS2 AN385 running ARMv6-M (Cortex-M0) code", "mps2", 4 * _MB, 4 * _MB),
    Core("cortex-m3", "c", ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"), "mps2-an385",
         "MPS2 AN385: Cortex-M3", "mps2", 4 * _MB, 4 * _MB),
    Core("cortex-m4", "dsp", ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard"), "mps2-an386",
         "MPS2 AN386: Cortex-M4 with DSP", "mps2", 4 * _MB, 4 * _MB),
    Core("cortex-m7", "dsp", ("-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard"), "mps2-an500",
         "MPS2 AN500: Cortex-M7", "mps2", 4 * _MB, 4 * _MB),
    Core("cortex-m33", "dsp", ("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard"), "mps2-an505",
         "MPS2 AN505: Cortex-M33 (secure state)", "mps2-an505", 4 * _MB, 4 * _MB),
    Core("cortex-m55", "mve", ("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-fno-tree-vectorize"),
         "mps3-an547", "Corstone-300 AN547: Cortex-M55 with MVE", "mps3-an547", 256 * _MB, 512 * 1024),
)}

TARGETS: tuple[str, ...] = tuple(CORES)                      # host first, then by architecture
DEVICE_TARGETS: tuple[str, ...] = tuple(n for n in CORES if n != "host")
CMSIS_PATH: dict[str, str] = {n: c.cmsis_path for n, c in CORES.items()}


def core(name: str) -> Core:
    """The core called `name`; KeyError for an unknown one (callers say which names exist)."""
    return CORES[name]
