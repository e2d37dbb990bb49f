"""The compile driver: torch model (or TOSA) -> TOSA -> cmsisnn -> C -> ELF, stage by stage.

Each stage writes its IR into the output directory, so a failure can be reproduced from the files
of the last stage that succeeded. `report.json` collects the figures of every stage reached.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import io_quant, progress
from .diagnostics import ArenaOverLimit, UserError
from .options import CompileOptions, resolve, with_options


@dataclass
class CompileResult:
    output_dir: Path
    options: CompileOptions
    report: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)   # stage -> path
    frontend: object = None                     # FrontendResult when the input was a torch model
    module: object = None                       # the last MLIR module

    def __getitem__(self, key):
        return self.report[key]


class _Timer:
    def __init__(self, timings: dict, name: str):
        self.timings, self.name = timings, name

    def __enter__(self):
        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        self.timings[self.name] = self.timings.get(self.name, 0.0) + time.perf_counter() - self.t0


@with_options
def compile(model, example_inputs=None, options: CompileOptions | None = None, /,  # noqa: A001 - the contract's name
            **fields) -> CompileResult:
    """Compiles an nn.Module (with example inputs), a TOSA `.mlir` file, a `.tosa` flatbuffer or a `.tflite` model.

    `options` is a CompileOptions; keyword arguments set its fields (over `options` when both are given)."""
    options = resolve(options, fields)
    options.validate()
    out = Path(options.output_dir or tempfile.mkdtemp(prefix="mcu-mlir-"))
    out.mkdir(parents=True, exist_ok=True)
    result = CompileResult(out, options)
    timings: dict[str, float] = {}
    report = result.report
    options, cmsis_nn = _choose_cmsis_nn(options, report)
    result.options = options
    model, example_inputs = _exported_program(model, example_inputs)
    if not isinstance(model, (str, Path)):
        # torch's first-use imports (once per process) are reported apart from the model's compile.
        from .frontend import preload_torch
        timings["torch-imports"] = preload_torch()
    t_start = time.perf_counter()

    module = _frontend(model, example_inputs, options, result, timings)
    result.module = module
    state = io_quant.read_state(module)    # --state, or a TOSA file's own mcu.state
    if state:
        report["state"] = [list(pair) for pair in state]
    if options.reaches("tosa") or options.emit == "torch":
        if options.emit != "torch":
            _tosa_stage(module, options, result, timings)
    if options.reaches("cmsisnn"):
        _backend_stage(module, options, result, timings)
    if options.reaches("c"):
        _emit_stage(module, options, result, timings)
    report["compile_seconds"] = round(time.perf_counter() - t_start, 3)
    if options.reaches("elf"):
        with _Timer(timings, "build"), progress.step(f"building the firmware for {options.target}"):
            from .firmware import build as target_build
            elf = target_build.build(out, target=options.target, cmsis_nn_path=cmsis_nn.path if cmsis_nn else None)
        result.files["elf"] = Path(elf)
        report.update(_flash_report(Path(elf), options.target, report))
        _check_flash(report, options)
    report["timings"] = {k: round(v, 3) for k, v in timings.items()}
    if options.reaches("cmsisnn"):
        report["ram_limit_bytes"], report["flash_limit_bytes"] = options.memory_limits()
    _write_report(out, report)
    if options.report and options.reaches("c"):
        from .emission import report_html
        result.files["report.html"] = report_html.write(out)
    return result


def _exported_program(model, example_inputs):
    """A `.pt2` file or an ExportedProgram -> its module, and its example inputs unless given."""
    from_file = isinstance(model, (str, Path)) and str(model).endswith(".pt2")
    if not from_file and type(model).__name__ != "ExportedProgram":
        return model, example_inputs
    from .frontend.graph import exported_program
    if from_file:
        module, saved = exported_program.load_exported(model)
    else:
        module, saved = exported_program.module_of(model), tuple(model.example_inputs[0]) if model.example_inputs else ()
    if example_inputs is None:
        if not saved:
            raise UserError("the exported program holds no example inputs: give the input shapes (--input-shape)")
        example_inputs = saved
    return module, example_inputs


def _choose_cmsis_nn(options: CompileOptions, report: dict):
    """(options, the CMSIS-NN a build links) and report.json's `cmsis_nn`: a checkout given, else the
    pinned commit fetched once. Without one (--cmsis-nn off, or the pinned commit out of reach) the
    model is compiled for the portable kernels, and the report's note says why."""
    if options.backend != "cmsis-nn" or not (options.reaches("elf") or options.cmsis_nn == "off"):
        if options.reaches("elf"):
            report["cmsis_nn"] = {"source": "off", "note": f"--backend {options.backend}: the portable C kernels"}
        return options, None
    from .firmware import cmsis_nn
    used = cmsis_nn.resolve(options.cmsis_nn_path, options.cmsis_nn)
    report["cmsis_nn"] = used.as_report()
    if used.source == "off":
        return replace(options, backend="portable"), None
    return options, used


def _ir(module) -> str:
    """A stage's IR with its locations, so that layer names survive a compile from this file."""
    return module.operation.get_asm(enable_debug_info=True)


def _write(out: Path, name: str, text: str, result: CompileResult, stage: str) -> Path:
    path = out / name
    path.write_text(text)
    result.files[stage] = path
    return path


def _frontend(model, example_inputs, options, result, timings):
    """Brings the input to TOSA in an MLIR module."""
    if isinstance(model, (str, Path)) and str(model).endswith((".tflite", ".mlir", ".tosa")):
        given = options.pytorch_quantization_flags()
        if given:
            raise UserError(f"{', '.join(given)} choose how a PyTorch model is quantized; {model} is a quantized "
                            "model already, so they would do nothing")
    if isinstance(model, (str, Path)) and str(model).endswith(".tflite"):
        return _tflite_frontend(Path(model), options, result, timings)
    if isinstance(model, (str, Path)) and str(model).endswith((".mlir", ".tosa")):
        if options.emit == "torch":
            raise UserError(f"--emit torch needs a PyTorch model, but {model} is already TOSA")
        with _Timer(timings, "import"):
            module = load_tosa_file(Path(model))
        _write(result.output_dir, "tosa-import.mlir", _ir(module), result, "tosa-import")
        with _Timer(timings, "import"):
            _validate_tosa(module, str(model))
        if options.state:
            _annotate_tosa_state(module, options.state, str(model))
        return module
    from . import cpu_paths, frontend
    if options.quantize != "none":
        result.report["float_paths_pinned"] = cpu_paths.in_effect()
        if not result.report["float_paths_pinned"]:
            warnings.warn("torch was imported before its float kernels could be pinned, so this C may differ "
                          "between machines: set " + " ".join(f"{k}={v}" for k, v in cpu_paths.CAPS.items())
                          + " in the environment, or import mcu_mlir and call mcu_mlir.cpu_paths.pin() before "
                          "importing torch", stacklevel=3)
    fres = frontend.import_model(model, tuple(example_inputs), options, timings=timings)
    result.frontend = fres
    torch_text = getattr(fres, "torch_text", None)
    if torch_text:
        _write(result.output_dir, "torch.mlir", torch_text, result, "torch")
    if options.emit == "torch":
        if not torch_text:
            raise UserError("this build's frontend does not keep the torch-dialect IR")
        return fres.module
    io_quant.annotate(fres.module, fres.inputs, fres.outputs)
    if options.state:
        io_quant.check_state(options.state, [t.shape for t in fres.inputs], [t.shape for t in fres.outputs])
        io_quant.annotate_state(fres.module, options.state)
    _write(result.output_dir, "tosa-import.mlir", _ir(fres.module), result, "tosa-import")
    result.report["quantization"] = {
        "inputs": [_io_entry(t) for t in fres.inputs],
        "outputs": [_io_entry(t) for t in fres.outputs],
        "layers": list(fres.layers),
    }
    if fres.activation_ranges:
        result.report["quantization"]["activation_ranges"] = fres.activation_ranges
    if fres.layer_sqnr:
        from .frontend.quantize.layer_sqnr import table
        result.report["quantization"]["sqnr_measured_on"] = fres.sqnr_measured_on
        result.report["quantization"]["layer_sqnr"] = fres.layer_sqnr
        from .frontend.quantize.int4_choice import table as int4_table
        if fres.int4:
            result.report["quantization"]["int4"] = fres.int4
        _write(result.output_dir, "layer_sqnr.md", table(fres.layer_sqnr) + int4_table(fres.int4), result,
               "layer-sqnr")
    return fres.module


def _tflite_frontend(path: Path, options, result, timings):
    """A TFLite int8 model: its integer TOSA and its inputs' / outputs' quantization."""
    if options.emit == "torch":
        raise UserError(f"--emit torch needs a PyTorch model, but {path} is a TFLite model")
    from .frontend.tflite import import_tflite
    with _Timer(timings, "import"):
        module, inputs, outputs = import_tflite(path)
    io_quant.annotate(module, inputs, outputs)
    if options.state:     # more pairs beside the model's own variables (already in mcu.state)
        _annotate_tosa_state(module, io_quant.read_state(module) + list(options.state), str(path))
    _write(result.output_dir, "tosa-import.mlir", _ir(module), result, "tosa-import")
    result.report["quantization"] = {"inputs": [_io_entry(t) for t in inputs], "outputs": [_io_entry(t) for t in outputs]}
    return module


def _annotate_tosa_state(module, pairs, path: str) -> None:
    """--state on a TOSA file: the pairs must name inputs and outputs of one shape, type and
    quantization (the integers are handed over as they are)."""
    from ._mlir import ir
    fn = io_quant._entry(module)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    ins, outs = list(ftype.inputs), list(ftype.results)
    io_quant.check_state(pairs, [list(ir.RankedTensorType(t).shape) for t in ins],
                         [list(ir.RankedTensorType(t).shape) for t in outs], f" in {path}")
    q_in, q_out = io_quant.read(module)
    for i, j in pairs:
        quant_in, quant_out = (q_in[i] if i < len(q_in) else None), (q_out[j] if j < len(q_out) else None)
        if str(ins[i]) != str(outs[j]) or quant_in != quant_out:
            raise UserError(f"--state {i}:{j}: in {path}, input {i} and output {j} differ in type or quantization "
                            "(mcu.scale / mcu.zero_point); a state is handed over as the same integers")
    io_quant.annotate_state(module, pairs)


def _io_entry(t) -> dict:
    """report.json's entry of an output: its parts (an output concat whose parts keep their own
    scales) as {start, stop, scale, zero_point} along `axis`, only where it has them."""
    entry = _asdict(t)
    parts = entry.pop("parts", ())
    axis = entry.pop("axis", 0)
    if parts:
        entry["axis"] = axis
        entry["parts"] = [dict(zip(("start", "stop", "scale", "zero_point"), p)) for p in parts]
    return entry


def _asdict(obj):
    import dataclasses
    return dataclasses.asdict(obj) if dataclasses.is_dataclass(obj) else dict(obj)


def load_tosa_file(path: Path):
    """Parses a TOSA `.mlir` file or deserializes a `.tosa` flatbuffer into a module."""
    from . import _mlir
    from .diagnostics import from_mlir_error
    if not path.exists():
        raise UserError(f"cannot read input file '{path}'")
    if path.suffix == ".tosa":
        with tempfile.TemporaryDirectory() as tmp:
            mlir_path = Path(tmp) / "deserialized.mlir"
            proc = subprocess.run(["tosa-opt", "/dev/null", "--tosa-deserialize",
                                   f"--tosa-deserialize-filename={path}", "-o", str(mlir_path)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise UserError(f"{path}: not a TOSA flatbuffer tosa-opt can read: {proc.stderr.strip()}")
            text = mlir_path.read_text()
    else:
        text = path.read_text()
    ctx = _mlir.new_context()
    try:
        with ctx, _mlir.ir.Location.unknown():
            module = _mlir.ir.Module.parse(text)
    except _mlir.ir.MLIRError as err:
        diags = from_mlir_error(err)
        for d in diags:
            d.file = str(path) if d.file in (None, "-") else d.file
        raise UserError(diagnostics=diags) from None
    body = [op for op in module.body.operations
            if op.operation.name == "func.func" and op.regions[0].blocks]
    if not body:
        raise UserError("no function with a body to compile: the file holds no model")
    if path.suffix == ".tosa" and len(body) == 1:
        from .tosa_flatbuffer import arity_mismatches
        from .diagnostics import Diagnostic
        bad = arity_mismatches(path, body[0])
        if bad:
            raise UserError(diagnostics=[Diagnostic(
                "error", f"invalid TOSA: the flatbuffer's operator #{i} ({op.operation.name}) has {n_in} input(s) "
                         f"and {n_out} output(s); the op takes {len(op.operands)} and {len(op.results)}", str(path))
                for i, (op, n_in, n_out) in enumerate(bad)])
    return module


# TOSA from another producer is checked against the specification (its ERROR_IF conditions, level
# 8K limits such as rank <= 6) before anything is compiled: an invalid program is refused, never
# compiled to some answer. Type combinations outside a profile (an i8 ABS, say) stay accepted: the
# kernels compute them exactly, and producers do write them. Static shapes are checked first, for
# the clearer message.
TOSA_VALIDATION = ("tosa-attach-target{specification_version=1.1.draft profiles=pro_int,pro_fp "
                   "extensions=int16,int4,int64,bf16,fp8e4m3,fp8e5m2,fft,variable,controlflow,doubleround,"
                   "inexactround,dynamic level=8k}",
                   "tosa-validate{strict-op-spec-alignment allow-invalid-op-datatype-combinations}")


def _validate_tosa(module, path: str) -> None:
    from .pipeline import run_passes
    from .passes.analysis.verify_static_shapes import VerifyStaticShapes
    from .passes.analysis.verify_tosa_spec import VerifyTosaSpec
    with module.context, _location(module):
        run_passes(module, [VerifyStaticShapes()])
    validated = module.operation.clone()   # the target attribute stays off the user's program
    try:
        with module.context, _location(module):
            run_passes(validated, [*TOSA_VALIDATION, VerifyTosaSpec()])
    except UserError as err:
        for d in err.diagnostics:
            d.file = path if d.file in (None, "-") else d.file
            d.message = f"invalid TOSA: {d.message}"
        raise
    finally:
        validated.erase()


def _run(module, pipeline, out: Path, stage: str):
    """Runs a pass or pipeline (its options object); a compiler bug leaves the input module on disk
    with the command to reproduce."""
    from .pipeline import pipeline_text, run_passes
    before = _ir(module)
    try:
        with module.context, _location(module):
            run_passes(module, pipeline.passes())
    except UserError:
        raise
    except Exception as exc:
        repro = out / f"repro-{stage}.mlir"
        repro.write_text(before)
        raise InternalError(exc, f"mcu-opt {repro} --pass-pipeline='{pipeline_text([pipeline])}'") from exc


def _location(module):
    from . import _mlir
    return _mlir.ir.Location.unknown(module.context)


class InternalError(Exception):
    def __init__(self, exc, repro: str):
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.repro = repro


def _tosa_stage(module, options, result, timings):
    from .passes.pipelines.layout_pipeline import LayoutOptions
    from .passes.analysis.verify_integer_tosa import VerifyIntegerTosa
    out = result.output_dir
    with _Timer(timings, "layout-passes"), progress.step("layout passes"):
        # Static shapes (a static memory plan needs them) were checked on import (_validate_tosa).
        _run(module, LayoutOptions(io_layout=options.io_layout), out, "tosa")
    if options.emit == "tosa-int" or options.reaches("cmsisnn"):
        # Integer contract of everything below: no float op. A single-rounding rescale (valid TOSA,
        # never what the frontend writes) is computed exactly too: it is not fused into a CMSIS-NN
        # requantization, so it is not refused either.
        _run(module, VerifyIntegerTosa(double_round=False), out, "tosa-int")
    with _Timer(timings, "value-ranges"):
        _check_value_ranges(module, result)
    _write(out, "model.tosa.mlir", _ir(module), result, "tosa")
    from .passes.analysis.transposes import count_data_moving_transposes
    result.report["transposes"] = count_data_moving_transposes(module)
    result.report["interior_transposes"] = count_data_moving_transposes(module, interior_only=True)


def _check_value_ranges(module, result) -> None:
    """mcu-verify-value-ranges' analysis on every compile: report.json's `value_ranges` lists each op
    whose REQUIRE of the TOSA specification (RESCALE's apply_scale_32, accumulators, int32 sums,
    shift amounts) it cannot prove for every input, with a warning. It does not refuse them yet:
    the zoo, softmax, attention (masked too), LSTM, LayerNorm, RMSNorm and 41 of the 44 op cases of
    test_frontend_ops are proven, but GroupNorm's / InstanceNorm's last rescale is not (its sum of
    squares spans two axes), nor an int16 softmax masked between its max and its table, and the
    wider coverage set has not been measured with it."""
    from .passes.analysis.verify_value_ranges import RangeAnalysis
    unproven = []
    for fn in module.body.operations:
        if fn.operation.name == "func.func" and fn.regions[0].blocks:
            for op, message in RangeAnalysis().run(fn):
                unproven.append({"op": op.operation.name, "location": _loc_text(op.operation.location),
                                 "message": message})
    result.report["value_ranges"] = {"proven": not unproven, "unproven": unproven}
    if unproven:
        first = unproven[0]
        warnings.warn(f"{len(unproven)} op(s) of the integer TOSA may be UNPREDICTABLE for some input (a REQUIRE "
                      f"of the TOSA specification the range analysis cannot prove); the first, at "
                      f"{first['location']}: {first['message']} (report.json's value_ranges lists them all)",
                      stacklevel=3)


def _loc_text(loc) -> str:
    """file:line of an op's location (its layer), else the location as MLIR prints it."""
    import re
    m = re.search(r'"([^"]+)":(\d+)', str(loc))
    return f"{m.group(1)}:{m.group(2)}" if m else str(loc)


def _backend_stage(module, options, result, timings):
    out = result.output_dir
    from .dialects import load_all
    load_all(module.context)
    from .passes.pipelines.backend_pipeline import TosaToCmsisnnOptions
    with _Timer(timings, "backend-passes"), progress.step("converting to kernels and planning memory"):
        ram, _ = options.memory_limits()

        def pipeline(prefer: str, patch: bool = True) -> TosaToCmsisnnOptions:
            return TosaToCmsisnnOptions(target=options.target, backend=options.backend, prefer=prefer,
                                        softmax=options.softmax, kernels=options.kernels, ram_bytes=ram,
                                        max_overhead=options.max_overhead,
                                        patch=patch)
        if options.prefer == "memory":
            _plan_for_memory(module, pipeline, out)
        else:
            # A model over the RAM limit is planned again with its first layers in bands of rows.
            kept = module.operation.clone()
            try:
                _run(module, pipeline(options.prefer), out, "cmsisnn")
            except ArenaOverLimit:
                _replace_body(module, kept)
                result.report["planned_for_memory_to_fit_ram"] = True
                try:
                    _plan_for_memory(module, pipeline, out)
                except UserError as again:
                    from .diagnostics import Diagnostic
                    note = Diagnostic("note", "that is with its first layers run in bands of rows and scratch-free "
                                              "kernels (--prefer memory)")
                    raise UserError(diagnostics=again.diagnostics + [note]) from None
            except UserError:
                kept.erase()
                raise
            else:
                kept.erase()
    _write(out, "cmsisnn.mlir", _ir(module), result, "cmsisnn")
    from .ir import attributes as mcu_attrs
    for op in module.body.operations:
        if op.operation.name == "func.func" and mcu_attrs.PATCHED_BANDS in op.attributes:
            result.report["patched_bands"] = int(op.attributes[mcu_attrs.PATCHED_BANDS].value)
            result.report["patched_ops"] = int(op.attributes[mcu_attrs.PATCHED_OPS].value)
    from .passes.analysis.transposes import count_transpose_kernels
    result.report["interior_transpose_kernels"] = count_transpose_kernels(module, interior_only=True)


def _arena(module) -> int:
    from .ir import attributes as mcu_attrs
    return int(module.operation.attributes[mcu_attrs.ARENA_BYTES].value)


def _plan_for_memory(module, pipeline, out) -> None:
    """The smaller arena of the plan with the first layers in bands and the plan without: the band
    plan is chosen on an estimate of the bytes live at once, which the planner's overlapping of
    outputs and inputs can beat. When neither fits the RAM limit, the band plan's error."""
    kept = module.operation.clone()
    try:
        _run(module, pipeline("memory"), out, "cmsisnn")
        error = None
    except UserError as err:
        error = err
    from .ir import attributes as mcu_attrs
    if error is None and not any(mcu_attrs.PATCHED_BANDS in op.attributes for op in module.body.operations
                                 if op.operation.name == "func.func"):
        kept.erase()
        return
    try:
        _run(kept, pipeline("memory", patch=False), out, "cmsisnn")
    except UserError:
        kept.erase()
        if error is not None:
            raise error from None
        return
    if error is not None or _arena(kept) < _arena(module):
        _replace_body(module, kept)
    else:
        kept.erase()


def _replace_body(module, source) -> None:
    """Makes `module` hold `source`'s ops and attributes again (`source`, a clone, is consumed)."""
    from . import _mlir
    body = module.operation.regions[0].blocks[0]
    for op in list(body.operations):
        op.operation.erase()
    attrs = module.operation.attributes
    for name in list(attrs):
        del attrs[name]
    for name in source.attributes:
        attrs[name] = source.attributes[name]
    for op in list(source.regions[0].blocks[0].operations):
        _mlir.ir.InsertionPoint(body).insert(op.detach_from_parent())
    source.erase()


def _emit_stage(module, options, result, timings):
    from .emission import emit_c
    out = result.output_dir
    with _Timer(timings, "emit-c"):
        files = emit_c.emit_c(module)
        report = emit_c.model_report(module)
        if options.writes_project():
            from .firmware import project
            uses_cmsis = any(op["kernel"].startswith("arm_") for op in report["ops"])
            folder = project.project_files(files, options.name, uses_cmsis, result.report.get("cmsis_nn"))
            for path in project.write_project(out, folder):
                result.files[str(path.relative_to(out))] = path
            report["name"] = options.name or project.DEFAULT_PREFIX
        else:
            for name, text in sorted(files.items()):
                _write(out, name, text, result, name)
    from .emission.kernel_share import int32_temporaries
    report["int32_temporaries"] = int32_temporaries(report)
    result.report.update(report)
    _, flash = options.memory_limits()
    if flash and report["weights_bytes"] > flash:
        heaviest = sorted((op for op in report["ops"] if op["weights_bytes"]), key=lambda op: -op["weights_bytes"])[:3]
        names = ", ".join(f"'{op['name']}' ({op['weights_bytes']} bytes)" for op in heaviest)
        raise UserError(f"the model's weights take {report['weights_bytes']} bytes, "
                        f"{report['weights_bytes'] - flash} bytes over the flash limit ({flash} bytes) before any "
                        f"code; the largest: {names}")


def _check_flash(report: dict, options) -> None:
    _, flash = options.memory_limits()
    if flash and report.get("flash_bytes", 0) > flash:
        raise UserError(f"the firmware takes {report['flash_bytes']} bytes of flash ({report['weights_bytes']} of "
                        f"them weights), {report['flash_bytes'] - flash} bytes over the flash limit ({flash} bytes)")


def _flash_report(elf: Path, target: str, report: dict) -> dict:
    """Flash = code + read-only data of the firmware, from the ELF's sections."""
    from . import cores
    size_tool = "size" if cores.core(target).is_host else "arm-none-eabi-size"
    proc = subprocess.run([size_tool, "-A", str(elf)], capture_output=True, text=True)
    if proc.returncode != 0:
        return {}
    flash = 0
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in (".text", ".rodata", ".data", ".ARM.exidx", ".init_array", ".fini_array"):
            flash += int(parts[1])
    return {"flash_bytes": flash, "code_bytes": max(0, flash - report.get("weights_bytes", 0))}


def _write_report(out: Path, report: dict) -> None:
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True, default=str) + "\n")
