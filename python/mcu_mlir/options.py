"""Compile options: one frozen dataclass, shared by mcu-compile and `mcu_mlir.compile`."""

from __future__ import annotations

from dataclasses import dataclass, field

from .cores import DEFAULT_TARGET, TARGETS

BACKENDS = ("cmsis-nn", "portable")
QUANTIZE = ("int8", "int16", "none")
# Weights of conv / linear layers: int8, or int4 (w4a8, CMSIS-NN's s4 kernels).
WEIGHTS = ("int8", "int4")
IO_LAYOUTS = ("nchw", "nhwc")
# speed: the fastest kernels; memory: scratch-free kernels where their scratch raises the arena.
PREFER = ("speed", "memory")
# int8 softmax in arm_softmax_s8's integers: `table` looks its exponentials up (one portable kernel),
# `cmsis-nn` calls arm_softmax_s8 itself (which computes each exponential twice).
SOFTMAX = ("table", "cmsis-nn")
# Kernels the compiler writes per layer (kernel_generation/): auto where their cost estimate beats the
# CMSIS-NN call on the core, cmsis-nn never, generated wherever one applies (any core: tests).
KERNELS = ("auto", "cmsis-nn", "generated")
# Which CMSIS-NN a build links: auto, a checkout given (--cmsis-nn-path, $CMSIS_NN_PATH), else the pinned
# commit fetched once (the portable kernels when it cannot be); off: the portable kernels.
CMSIS_NN_MODES = ("auto", "off")
# int8 activation ranges: min / max, the histogram's least-squares range, or auto: the histogram's
# where the output measures at least 1 dB closer to float (frontend/quantize/range_choice.py).
ACTIVATION_RANGES = ("auto", "minmax", "histogram")
# int8 range equalization: layers' output channels scaled toward one range through ReLUs and residual
# adds (on), not (off), or auto: where the output measures at least 1 dB closer to float
# (frontend/quantize/range_equalization.py).
RANGE_EQUALIZATION = ("auto", "on", "off")
# Stages in order; `--emit X` stops after X. `project` is `c` plus the folder a firmware project
# builds (runtime, kernels, CMakeLists.txt); `elf` does not need it.
STAGES = ("torch", "tosa", "tosa-int", "cmsisnn", "c", "project", "elf")
# The options that choose how a PyTorch model is quantized (a .tflite or TOSA model comes quantized).
PYTORCH_QUANTIZATION = ("quantize", "calibration", "int16_layers", "weights", "int4_layers", "target_sqnr_db",
                        "bias_correction", "activation_ranges", "range_equalization")


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


def _option(default, help: str = "", **cli):
    """A compile option: its default, its help text and how mcu-compile spells it (`flag`, `choices`,
    `metavar`, `type`, `action`; cli=False keeps it out of the command line)."""
    return field(default=default, metadata={"help": help, **cli})


def parse_percent(text: str) -> float:
    """'15' or '15%': a non-negative percentage."""
    import argparse
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage such as 15 or 15%, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a percentage of extra instructions cannot be negative ({text!r})")
    return value


@dataclass(frozen=True)
class CompileOptions:
    """Every option of a compile; mcu-compile's command line is generated from these fields."""

    target: str = _option(DEFAULT_TARGET, "the core to compile for", choices=TARGETS)
    backend: str = _option("cmsis-nn", "kernels: CMSIS-NN where it has one, or portable C only", choices=BACKENDS)
    quantize: str = _option("int8", "integer type of activations (none: float TOSA only)", choices=QUANTIZE)
    calibration: object = _option(
        None, "calibration: N random samples (default 32, with a warning), inputs from an .npz / .npy (samples "
              "stacked along the batch dimension), or a directory of such files", metavar="N|FILE.npz|DIR")
    # (in Python, calibration may also be an iterable of input tuples)
    int16_layers: object = _option(
        None, "int8 model with some layers in int16 (a16w8): auto keeps the layers where int8 loses the most until "
              "the output reaches --target-sqnr; or module paths / op names", metavar="auto|LAYER,...")
    weights: str = _option(
        "int8", "weights of every conv / linear layer: int8 (default) or int4 (int8 activations, CMSIS-NN's s4 "
                "kernels, two weights a byte; transposed convolutions stay int8)", choices=WEIGHTS)
    int4_layers: object = _option(
        None, "int8 model with some layers' weights in int4: auto takes layers, largest weights first, while the "
              "output stays above --target-sqnr and until the weights fit --flash-limit; or module paths / op names",
        metavar="auto|LAYER,...")
    target_sqnr_db: float = _option(35.0, "output SQNR against the float model that --int16-layers auto and "
                                          "--int4-layers auto aim for (default 35)", flag="--target-sqnr",
                                    type=float, metavar="DB")
    bias_correction: bool = _option(
        True, "by default each conv / linear bias absorbs the mean error its int8 weights make on the calibration "
              "data; --no-bias-correction (False) quantizes the biases as they are", flag="--no-bias-correction")
    activation_ranges: str = _option(
        "auto", "int8 activation ranges: the calibrated min / max, the histogram's least-squares range (clips rare "
                "tails), or auto (default): the histogram's where the output measures at least 1 dB closer to the "
                "float model", choices=ACTIVATION_RANGES)
    range_equalization: str = _option(
        "auto", "int8: scale each layer's output channels toward one range through ReLUs and residual adds (the "
                "layers reading them take the factors back; small channels get finer steps): on, off, or auto "
                "(default): where the output measures at least 1 dB closer to the float model",
        choices=RANGE_EQUALIZATION)
    state: object = _option(
        None, "a streaming model: output OUT is the next call's input IN (an LSTM's h and c, a conv's context); "
              "model.h gets mcu_model_reset() / mcu_model_step(), the state kept in static storage",
        metavar="IN:OUT[,IN:OUT...]")
    ram_limit: object = _option(
        None, "the arena must fit in this much RAM (262144, 256K, 1M; default: the target board's RAM); a model "
              "over it fails naming its peak layer and the bytes over", metavar="BYTES")
    flash_limit: object = _option(
        None, "the weights (and with --emit elf the firmware) must fit in this much flash (default: no limit; the "
              "emulated boards keep weights in a large memory beside the code)", metavar="BYTES")
    report: bool = _option(False, "also write report.html: RAM and flash against the target, the arena timeline, "
                                  "a per-layer table (self-contained; mcu-run --count-instructions adds its "
                                  "instruction counts)")
    io_layout: str = _option("nchw", "layout of the graph's inputs and outputs", choices=IO_LAYOUTS)
    prefer: str = _option(
        "speed", "memory: run the first, high-resolution layers of a CNN band of rows by band of rows and call "
                 "scratch-free kernels where a scratch buffer would raise the arena (the same outputs; a model over "
                 "the RAM limit gets this by itself)", choices=PREFER)
    max_overhead: float = _option(
        15.0, "with --prefer memory: the most extra multiply-accumulates (recomputed rows between bands), in "
              "percent of the model's (default 15)", type=parse_percent, metavar="PERCENT")
    softmax: str = _option("table", "int8 softmax, arm_softmax_s8's integers either way: table (looked up, "
                                    "fastest) or cmsis-nn (arm_softmax_s8 itself)", choices=SOFTMAX)
    kernels: str = _option(
        "auto", "auto (default): a kernel written for the layer where it applies and its cost estimate beats the "
                "CMSIS-NN call on the core (depthwise 3x3 int8 on DSP cores); cmsis-nn: the library everywhere; "
                "generated: a written kernel wherever one applies, on any core", choices=KERNELS)
    emit: str = _option("c", "last stage to produce (project: C plus runtime, kernels and CMakeLists.txt, "
                             "self-contained)", choices=STAGES)
    name: str | None = _option(
        None, "prefix of every exported symbol, macro and file (PREFIX_model_run, PREFIX_model.h), so several "
              "models link into one firmware; writes the self-contained folder", metavar="PREFIX")
    cmsis_nn_path: str | None = _option(None, "CMSIS-NN checkout (default: $CMSIS_NN_PATH)")
    cmsis_nn: str = _option(
        "auto", "auto (default): a checkout given (--cmsis-nn-path, $CMSIS_NN_PATH), else with --emit elf the "
                "commit mcu-mlir is tested with, fetched once into the cache (the portable kernels, with a note, "
                "when it cannot be fetched); off: the portable kernels", choices=CMSIS_NN_MODES)
    timing: bool = _option(False, "print the time of each stage")
    output_dir: str | None = _option(None, "output directory", flag=("-o", "--output-dir"), required=True)
    extra: dict = field(default_factory=dict, compare=False, metadata={"cli": False})

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
        from .cores import CORES
        core = CORES.get(self.target)
        return self.ram_limit or (core.ram_bytes if core else 0), self.flash_limit or 0

    def pytorch_quantization_flags(self) -> list[str]:
        """The flags given (away from their defaults) that say how a PyTorch model is quantized: a
        .tflite or TOSA model, quantized already, would silently ignore them."""
        from dataclasses import fields
        return [f.metadata.get("flag", "--" + f.name.replace("_", "-")) for f in fields(self)
                if f.name in PYTORCH_QUANTIZATION and getattr(self, f.name) != f.default]

    def validate(self) -> None:
        from .diagnostics import UserError
        from dataclasses import fields
        for f in fields(self):      # the choices mcu-compile offers, for callers of the Python API too
            allowed, value = f.metadata.get("choices"), getattr(self, f.name)
            if allowed is not None and value not in allowed:
                flag = f.metadata.get("flag", "--" + f.name.replace("_", "-"))
                raise UserError(f"{flag} {value!r} is not one of: {', '.join(allowed)}")
        if self.name is not None:
            from .firmware.project import check_name
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
        self._validate_int4()
        if self.emit == "tosa-int" and self.quantize == "none":
            raise UserError("--emit tosa-int needs a quantized model; it is incompatible with --quantize none")
        if self.quantize == "none" and self.emit in ("cmsisnn", "c", "project", "elf"):
            raise UserError("Cortex-M code generation needs an integer model: use --quantize int8 or int16 "
                            "(--quantize none stops at --emit tosa)")

    def _validate_int4(self) -> None:
        import math

        from .diagnostics import UserError
        if not isinstance(self.target_sqnr_db, (int, float)) or not math.isfinite(self.target_sqnr_db) or \
                self.target_sqnr_db < 0:
            raise UserError(f"--target-sqnr {self.target_sqnr_db!r}: expected a number of dB, 0 or more (such as 30)")
        if self.int4_layers is not None and (not isinstance(self.int4_layers, (str, list, tuple))
                                             or not "".join(self.int4_layers).strip()):
            raise UserError(f"--int4-layers {self.int4_layers!r}: expected auto or layer names (module paths such as "
                            "'features.3', or op names) separated by commas")
        if self.weights == "int4" and self.int4_layers is not None:
            raise UserError("--weights int4 puts every layer's weights in int4; --int4-layers chooses some of them: "
                            "give one or the other")
        if (self.weights == "int4" or self.int4_layers is not None) and self.quantize != "int8":
            flag = "--weights int4" if self.weights == "int4" else "--int4-layers"
            raise UserError(f"{flag} needs int8 activations (CMSIS-NN's s4 kernels take int8 inputs and int4 "
                            f"weights), not --quantize {self.quantize}")

    def reaches(self, stage: str) -> bool:
        return STAGES.index(self.emit) >= STAGES.index(stage)

    def writes_project(self) -> bool:
        """The self-contained folder is written for `--emit project`, and whenever the model is named
        (its renamed runtime and kernels exist nowhere else)."""
        return self.reaches("c") and (self.emit == "project" or self.name is not None)


def with_options(fn):
    """Gives `fn(model, example_inputs=None, options=None, /, **fields)` a signature and help that list
    every CompileOptions field with its default and meaning (the fields stay the one place they are
    written)."""
    import dataclasses
    import inspect
    kept = [p for p in inspect.signature(fn).parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    fields = dataclasses.fields(CompileOptions)
    params = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=f.type,
                                default=f.default if f.default is not dataclasses.MISSING else f.default_factory())
              for f in fields]
    fn.__signature__ = inspect.Signature(kept + params, return_annotation=inspect.signature(fn).return_annotation)
    lines = [f"    {f.name}: {f.metadata.get('help') or 'see CompileOptions'}" for f in fields]
    fn.__doc__ = ((fn.__doc__ or "").rstrip() + "\n\n    Options (keywords; the fields of CompileOptions):\n"
                  + "\n".join(lines))
    return fn


def resolve(options: CompileOptions | None, fields: dict) -> CompileOptions:
    """`options` with `fields` replaced (CompileOptions(**fields) without `options`); unknown names are an error."""
    import dataclasses
    from .diagnostics import UserError
    known = {f.name for f in dataclasses.fields(CompileOptions)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise UserError(f"unknown compile option(s): {', '.join(unknown)} (options: {', '.join(sorted(known))})")
    return dataclasses.replace(options, **fields) if options is not None else CompileOptions(**fields)
