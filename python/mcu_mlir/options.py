"""Compile options: one frozen dataclass, shared by mcu-compile and `mcu_mlir.compile`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .target.cores import TARGETS  # noqa: F401  (the --target choices)

BACKENDS = ("cmsis-nn", "portable")
QUANTIZE = ("int8", "int16", "none")
IO_LAYOUTS = ("nchw", "nhwc")
# speed: the fastest kernels; memory: scratch-free kernels where their scratch raises the arena.
PREFER = ("speed", "memory")
# int8 softmax in arm_softmax_s8's integers: `table` looks its exponentials up (one portable kernel),
# `cmsis-nn` calls arm_softmax_s8 itself (which computes each exponential twice).
SOFTMAX = ("table", "cmsis-nn")
# int8 activation ranges: min / max, the histogram's least-squares range, or auto: the histogram's
# where the output measures at least 1 dB closer to float (frontend/range_choice.py).
ACTIVATION_RANGES = ("auto", "minmax", "histogram")
# int8 range equalization: layers' output channels scaled toward one range through ReLUs and residual
# adds (on), not (off), or auto: where the output measures at least 1 dB closer to float
# (frontend/range_equalization.py).
RANGE_EQUALIZATION = ("auto", "on", "off")
# Stages in order; `--emit X` stops after X. `project` is `c` plus the folder a firmware project
# builds (runtime, kernels, CMakeLists.txt); `elf` does not need it.
STAGES = ("torch", "tosa", "tosa-int", "cmsisnn", "c", "project", "elf")


_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "KIB": 1024, "M": 1024 * 1024, "MB": 1024 * 1024, "MIB": 1024 * 1024}


def parse_bytes(value, what: str) -> int | None:
    """A byte count: an int, or text such as 262144, 256K, 256KiB, 1M."""
    from .diagnostics import UserError
    if value is None or value == "":
        return None
    if isinstance(value, int):
        count = value
    else:
        import re
        m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", str(value))
        if m is None or m.group(2).upper() not in _UNITS:
            raise UserError(f"{what} {value!r}: expected a byte count such as 262144, 256K or 1M")
        count = int(m.group(1)) * _UNITS[m.group(2).upper()]
    if count <= 0:
        raise UserError(f"{what} {value!r}: must be a positive number of bytes")
    return count


@dataclass(frozen=True)
class CompileOptions:
    target: str = "cortex-m55"
    backend: str = "cmsis-nn"
    quantize: str = "int8"
    calibration: object = None      # None, int N, path to .npz, or an iterable of input tuples
    io_layout: str = "nchw"
    prefer: str = "speed"
    max_overhead: float = 15.0       # prefer="memory": most extra MACs (percent) for running early layers in bands
    softmax: str = "table"
    emit: str = "c"
    output_dir: str | None = None
    cmsis_nn_path: str | None = None
    timing: bool = False
    name: str | None = None          # prefix of every exported symbol, macro and file
    int16_layers: object = None      # int8 models: "auto", or layer names kept in int16
    target_sqnr_db: float = 35.0     # what int16_layers="auto" aims for at the outputs
    bias_correction: bool = True     # biases absorb the mean error of the rounded weights
    activation_ranges: str = "auto"  # int8 activations: "minmax", "histogram", or auto (ACTIVATION_RANGES)
    range_equalization: str = "auto"  # int8: "on", "off", or auto (RANGE_EQUALIZATION)
    state: object = None             # streaming: "IN:OUT,..." or [(input, output), ...] carried between calls
    ram_limit: object = None         # bytes (or "256K", "1M") the arena must fit in; default: the target's RAM
    flash_limit: object = None       # bytes the weights and the firmware must fit in; default: none
    report: bool = False             # also write report.html (the memory and layer report for a person)
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        # "1:1,2:2" or pairs -> ((1, 1), (2, 2)); a bad spec is the user's error, raised here.
        from .io_quant import parse_state
        object.__setattr__(self, "state", tuple(parse_state(self.state)))
        for name in ("ram_limit", "flash_limit"):
            object.__setattr__(self, name, parse_bytes(getattr(self, name), "--" + name.replace("_", "-")))

    def memory_limits(self) -> tuple[int, int]:
        """(RAM, flash) bytes the model must fit in (0: none): the options', else for RAM the target
        board's (what its linker script gives data, stack and arena). Flash only when given: the boards
        hold weights in memory beside their code region (mps3-an547: 256 MB DDR, 512 kB for code)."""
        from .target.cores import CORES
        core = CORES.get(self.target)
        return self.ram_limit or (core.ram_bytes if core else 0), self.flash_limit or 0

    def validate(self) -> None:
        from .diagnostics import UserError
        for name, value, allowed in (("target", self.target, TARGETS), ("backend", self.backend, BACKENDS),
                                     ("quantize", self.quantize, QUANTIZE),
                                     ("io-layout", self.io_layout, IO_LAYOUTS), ("prefer", self.prefer, PREFER),
                                     ("softmax", self.softmax, SOFTMAX), ("emit", self.emit, STAGES),
                                     ("activation-ranges", self.activation_ranges, ACTIVATION_RANGES),
                                     ("range-equalization", self.range_equalization, RANGE_EQUALIZATION)):
            if value not in allowed:
                raise UserError(f"--{name} {value!r} is not one of: {', '.join(allowed)}")
        if self.name is not None:
            from .target.project import check_name
            check_name(self.name)
        if self.activation_ranges != "auto" and self.quantize != "int8":
            raise UserError(f"--activation-ranges chooses how int8 activations are calibrated; with --quantize "
                            f"{self.quantize} it has nothing to do")
        if self.range_equalization != "auto" and self.quantize != "int8":
            raise UserError(f"--range-equalization scales int8 activation ranges; with --quantize {self.quantize} "
                            f"it has nothing to do")
        if self.int16_layers is not None and self.quantize != "int8":
            raise UserError(f"--int16-layers mixes int16 layers into an int8 model; with --quantize "
                            f"{self.quantize} it has nothing to do")
        if self.emit == "tosa-int" and self.quantize == "none":
            raise UserError("--emit tosa-int needs a quantized model; it is incompatible with --quantize none")
        if self.quantize == "none" and self.emit in ("cmsisnn", "c", "project", "elf"):
            raise UserError("Cortex-M code generation needs an integer model: use --quantize int8 or int16 "
                            "(--quantize none stops at --emit tosa)")

    def reaches(self, stage: str) -> bool:
        return STAGES.index(self.emit) >= STAGES.index(stage)

    def writes_project(self) -> bool:
        """The self-contained folder is written for `--emit project`, and whenever the model is named
        (its renamed runtime and kernels exist nowhere else)."""
        return self.reaches("c") and (self.emit == "project" or self.name is not None)
