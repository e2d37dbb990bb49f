"""mcu-compile: a PyTorch model (FILE.py:FACTORY) or TOSA (FILE.mlir / FILE.tosa) to C for Cortex-M."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import cpu_paths
from ..diagnostics import UserError, quiet_third_party, repro_command, report_internal_error
from ..options import (ACTIVATION_RANGES, BACKENDS, IO_LAYOUTS, PREFER, QUANTIZE, RANGE_EQUALIZATION, SOFTMAX, STAGES,
                       TARGETS, CompileOptions)

_REPLACED = cpu_paths.overridden()
cpu_paths.pin()     # before torch is imported: the same C on every machine


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcu-compile", allow_abbrev=False,
                                description="Compile a PyTorch model or TOSA to C calling CMSIS-NN kernels.")
    p.add_argument("model", help="FILE.py:FACTORY (FACTORY() returns an nn.Module), FILE.pt2 (a saved torch.export "
                   "program), FILE.mlir (TOSA) or FILE.tosa")
    p.add_argument("--input-shape", action="append", default=[], metavar="D0,D1,...[:int64]",
                   help="shape of one model input; repeat for several inputs. A ':int64' or ':int32' suffix makes "
                        "it an integer input (token ids, looked up by an embedding), int32 in the C")
    p.add_argument("--target", choices=TARGETS, default=CompileOptions.target)
    p.add_argument("--backend", choices=BACKENDS, default="cmsis-nn")
    p.add_argument("--quantize", choices=QUANTIZE, default="int8")
    p.add_argument("--calibration", default=None, metavar="N|FILE.npz|DIR",
                   help="calibration: N random samples (default 32, with a warning), inputs from an .npz / .npy "
                        "(samples stacked along the batch dimension), or a directory of such files")
    p.add_argument("--int16-layers", default=None, metavar="auto|LAYER,...",
                   help="int8 model with some layers in int16 (a16w8): auto keeps the layers where int8 loses "
                        "the most until the output reaches --target-sqnr; or module paths / op names")
    p.add_argument("--target-sqnr", type=float, default=35.0, metavar="DB",
                   help="output SQNR against the float model that --int16-layers auto aims for (default 35)")
    p.add_argument("--no-bias-correction", dest="bias_correction", action="store_false",
                   help="quantize conv / linear biases as they are (by default each absorbs the mean error its "
                        "int8 weights make on the calibration data)")
    p.add_argument("--activation-ranges", choices=ACTIVATION_RANGES, default="auto",
                   help="int8 activation ranges: the calibrated min / max, the histogram's least-squares range "
                        "(clips rare tails), or auto (default): the histogram's where the output measures at least "
                        "1 dB closer to the float model")
    p.add_argument("--range-equalization", choices=RANGE_EQUALIZATION, default="auto",
                   help="int8: scale each layer's output channels toward one range through ReLUs and residual "
                        "adds (the layers reading them take the factors back; small channels get finer steps): on, "
                        "off, or auto (default): where the output measures at least 1 dB closer to the float model")
    p.add_argument("--state", default=None, metavar="IN:OUT[,IN:OUT...]",
                   help="a streaming model: output OUT is the next call's input IN (an LSTM's h and c, a conv's "
                        "context); model.h gets mcu_model_reset() / mcu_model_step(), the state kept in static storage")
    p.add_argument("--ram-limit", default=None, metavar="BYTES",
                   help="the arena must fit in this much RAM (262144, 256K, 1M; default: the target board's RAM); a "
                        "model over it fails naming its peak layer and the bytes over")
    p.add_argument("--flash-limit", default=None, metavar="BYTES",
                   help="the weights (and with --emit elf the firmware) must fit in this much flash (default: no "
                        "limit; the emulated boards keep weights in a large memory beside the code)")
    p.add_argument("--report", action="store_true",
                   help="also write report.html: RAM and flash against the target, the arena timeline, a per-layer "
                        "table (self-contained; mcu-run --count-instructions adds its instruction counts)")
    p.add_argument("--io-layout", choices=IO_LAYOUTS, default="nchw")
    p.add_argument("--prefer", choices=PREFER, default="speed",
                   help="memory: run the first, high-resolution layers of a CNN band of rows by band of rows and call "
                        "scratch-free kernels where a scratch buffer would raise the arena (the same outputs; a model "
                        "over the RAM limit gets this by itself)")
    p.add_argument("--max-overhead", type=_percent, default=15.0, metavar="PERCENT",
                   help="with --prefer memory: the most extra multiply-accumulates (recomputed rows between bands), in "
                        "percent of the model's (default 15)")
    p.add_argument("--softmax", choices=SOFTMAX, default="table",
                   help="int8 softmax, arm_softmax_s8's integers either way: table (looked up, fastest) or cmsis-nn "
                        "(arm_softmax_s8 itself)")
    p.add_argument("--emit", choices=STAGES, default="c",
                   help="last stage to produce (project: C plus runtime, kernels and CMakeLists.txt, self-contained)")
    p.add_argument("--name", default=None, metavar="PREFIX",
                   help="prefix of every exported symbol, macro and file (PREFIX_model_run, PREFIX_model.h), so "
                        "several models link into one firmware; writes the self-contained folder")
    p.add_argument("--cmsis-nn-path", default=None, help="CMSIS-NN checkout (default: $CMSIS_NN_PATH)")
    p.add_argument("--timing", action="store_true", help="print the time of each stage")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also show what torch, torchao and other libraries warn or log")
    p.add_argument("-o", "--output-dir", required=True, help="output directory")
    return p


_INPUT_DTYPES = ("float32", "int32", "int64")


def _percent(text: str) -> float:
    """'15' or '15%': a non-negative percentage."""
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage such as 15 or 15%, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a percentage of extra instructions cannot be negative ({text!r})")
    return value


def _shape(text: str) -> tuple[tuple[int, ...], str]:
    """`D0,D1,...[:DTYPE]` -> (shape, dtype)."""
    dims_text, _, dtype = text.partition(":")
    dtype = dtype or "float32"
    if dtype not in _INPUT_DTYPES:
        raise UserError(f"--input-shape {text!r}: the type after ':' is one of {', '.join(_INPUT_DTYPES)}")
    try:
        dims = tuple(int(d) for d in dims_text.split(","))
    except ValueError:
        raise UserError(f"--input-shape {text!r}: expected comma-separated integers like 1,3,96,96") from None
    if not dims or any(d <= 0 for d in dims):
        raise UserError(f"--input-shape {text!r}: every dimension must be a positive integer")
    return dims, dtype


def _random_inputs(shapes: list[str]) -> tuple:
    """Example inputs: normal floats; integer inputs (indices such as token ids) zeros, valid for
    any lookup (calibration draws its random ids within each table's size)."""
    import torch
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.randn(dims, generator=gen) if dtype == "float32"
                 else torch.zeros(dims, dtype=getattr(torch, dtype)) for dims, dtype in map(_shape, shapes))


def _calibration(text):
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    if not (text.endswith((".npz", ".npy")) or os.path.isdir(text)):
        raise UserError(f"--calibration {text!r}: expected a sample count, an .npz / .npy file or a directory")
    if not os.path.exists(text):
        raise UserError(f"--calibration {text!r}: no such file or directory")
    return text


def run(args) -> int:
    from ..driver import compile as compile_model
    options = dict(target=args.target, backend=args.backend, quantize=args.quantize,
                   calibration=_calibration(args.calibration), io_layout=args.io_layout, prefer=args.prefer,
                   max_overhead=args.max_overhead, softmax=args.softmax, emit=args.emit,
                   output_dir=args.output_dir, cmsis_nn_path=args.cmsis_nn_path, timing=args.timing,
                   name=args.name, int16_layers=args.int16_layers, target_sqnr_db=args.target_sqnr,
                   state=args.state, ram_limit=args.ram_limit, flash_limit=args.flash_limit, report=args.report,
                   bias_correction=args.bias_correction, activation_ranges=args.activation_ranges,
                   range_equalization=args.range_equalization)
    if args.model.endswith((".mlir", ".tosa")):
        if args.input_shape:
            raise UserError("--input-shape is for PyTorch models; a TOSA input has its shapes already")
        result = compile_model(args.model, None, **options)
    elif args.model.endswith(".pt2"):
        # The program's own example inputs give the shapes, unless --input-shape says otherwise.
        inputs = _random_inputs(args.input_shape) if args.input_shape else None
        result = compile_model(args.model, inputs, **options)
    else:
        from .. import frontend
        model = frontend.load_factory(args.model)
        if not args.input_shape:
            raise UserError("a PyTorch model needs --input-shape (one per model input)")
        result = compile_model(model, _random_inputs(args.input_shape), **options)
    _summary(result, args.timing)
    return 0


def portable_layers(report: dict) -> list[tuple[str, str, str, str | None]]:
    """(layer, TOSA op, kernel, reason) of each computing layer a CMSIS-NN build runs on a portable
    kernel; the reason where CMSIS-NN has a kernel for the op but it would not be bit-exact."""
    if report.get("backend") != "cmsis-nn":
        return []
    return [(op["name"], op["tosa_op"], op["kernel"], op.get("fallback")) for op in report.get("ops", [])
            if op["kernel"].startswith("portable:") and op["kernel"] != "portable:copy"]


def _db(value) -> str:
    return "exact" if value is None else f"{value:.1f} dB"


def _output_db(row: dict) -> str:
    """An output's SQNR; for a concat of parts, its worst part's too (one part may collapse)."""
    if not row.get("parts"):
        return _db(row["sqnr_db"])
    part = min(row["parts"], key=lambda p: float("inf") if p["sqnr_db"] is None else p["sqnr_db"])
    return f"{_db(row['sqnr_db'])} (worst part [{part['index'][0]}:{part['index'][1]}] {part['name']}: " \
           f"{_db(part['sqnr_db'])})"


def _summary(result, timing: bool) -> None:
    r = result.report
    out = Path(result.output_dir)
    names = sorted(str(p.relative_to(out)) if p.is_relative_to(out) else str(p) for p in map(Path, result.files.values()))
    print(f"wrote {result.output_dir}: " + ", ".join(names))
    figures = [f"{k}={r[k]}" for k in ("transposes", "arena_bytes", "arena_lower_bound_bytes", "weights_bytes",
                                       "flash_bytes", "compile_seconds") if k in r]
    if figures:
        print("  " + "  ".join(figures))
    sqnr = r.get("quantization", {}).get("layer_sqnr") or []
    outs = [row for row in sqnr if row["kind"] == "output"]
    if outs:
        from ..frontend.layer_sqnr import worst
        shown = ", ".join(_output_db(row) for row in outs)
        lossy = ", ".join(f"{row['name']} ({row['drop_db']:+.1f} dB)" for row in worst(sqnr, 3))
        ranges = r["quantization"].get("activation_ranges", {})
        kept = ", ".join(filter(None, (ranges.get("chosen") if ranges.get("chosen") != "minmax" else None,
                                       "equalized" if ranges.get("equalized") else None)))
        if kept and "minmax" in ranges.get("output_sqnr_db", {}):
            shown += f" ({kept} ranges; min / max gave {ranges['output_sqnr_db']['minmax']:.1f} dB)"
        print(f"  SQNR vs float: output {shown}" + (f"; most lost at {lossy}" if lossy else "") + " (layer_sqnr.md)")
    fallbacks = portable_layers(r)
    if fallbacks:
        shown = ", ".join(f"{name} ({op} -> {kernel}{': ' + why if why else ''})"
                          for name, op, kernel, why in fallbacks[:4])
        more = f" and {len(fallbacks) - 4} more (report.json)" if len(fallbacks) > 4 else ""
        print(f"mcu-compile: note: {len(fallbacks)} layer(s) run on portable kernels, not CMSIS-NN: {shown}{more}",
              file=sys.stderr)
    if timing:
        for stage, seconds in r.get("timings", {}).items():
            print(f"  {stage:<16} {seconds:8.3f} s")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    quiet_third_party("mcu-compile", args.verbose)
    for name, value in _REPLACED.items():
        print(f"note: {name}={value} from the environment is replaced by {cpu_paths.CAPS[name]} for this compile: "
              "calibration runs the same float code on every CPU (mcu_mlir/cpu_paths.py)", file=sys.stderr)
    try:
        return run(args)
    except UserError as e:
        print(e.format(args.model), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        from ..driver import InternalError
        repro = exc.repro if isinstance(exc, InternalError) else repro_command(["mcu-compile", *argv])
        report_internal_error(exc, repro)
        return 2


if __name__ == "__main__":
    sys.exit(main())
