"""mcu-compile: a PyTorch model (FILE.py:FACTORY) or TOSA (FILE.mlir / FILE.tosa) to C for Cortex-M."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from .. import __version__, cpu_paths
from ..diagnostics import UserError, quiet_third_party, repro_command, report_internal_error
from ..options import CompileOptions

_REPLACED = cpu_paths.overridden()
cpu_paths.pin()     # before torch is imported: the same C on every machine


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcu-compile", allow_abbrev=False,
                                description="Compile a PyTorch model or TOSA to C calling CMSIS-NN kernels.")
    p.add_argument("model", help="FILE.py:FACTORY (FACTORY() returns an nn.Module), FILE.pt2 (a saved torch.export "
                   "program), FILE.mlir (TOSA), FILE.tosa or FILE.tflite (an int8 TFLite model)")
    p.add_argument("--input-shape", action="append", default=[], metavar="D0,D1,...[:int64]",
                   help="shape of one model input; repeat for several inputs. A ':int64' or ':int32' suffix makes "
                        "it an integer input (token ids, looked up by an embedding), int32 in the C")
    for f in _cli_fields():
        _add_option(p, f)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also show what torch, torchao and other libraries warn or log")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def _cli_fields() -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(CompileOptions) if f.metadata.get("cli", True)]


def _add_option(p: argparse.ArgumentParser, f: dataclasses.Field) -> None:
    """One CompileOptions field as a flag: its help, default and choices are the field's."""
    meta = dict(f.metadata)
    flags = meta.pop("flag", "--" + f.name.replace("_", "-"))
    flags = (flags,) if isinstance(flags, str) else flags
    kwargs = {"dest": f.name, "help": meta.pop("help", None)}
    if isinstance(f.default, bool):
        # A switch: --report turns a False default on, --no-bias-correction a True one off.
        kwargs["action"] = "store_false" if f.default else "store_true"
    else:
        kwargs["default"] = f.default
        kwargs.update(meta)
    p.add_argument(*flags, **kwargs)


_INPUT_DTYPES = ("float32", "int32", "int64")


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
    options = {f.name: getattr(args, f.name) for f in _cli_fields()}
    options["calibration"] = _calibration(args.calibration)
    if args.model.endswith((".mlir", ".tosa", ".tflite")):
        if args.input_shape:
            raise UserError("--input-shape is for PyTorch models; a TOSA or TFLite input has its shapes already")
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
    """An output's SQNR; for a concat of parts, each part's too (one part may collapse), the worst
    ones first when there are many."""
    if not row.get("parts"):
        return _db(row["sqnr_db"])
    parts = row["parts"]
    if len(parts) > 4:
        parts = sorted(parts, key=lambda p: float("inf") if p["sqnr_db"] is None else p["sqnr_db"])[:4]
    more = f", {len(row['parts']) - len(parts)} more" if len(parts) < len(row["parts"]) else ""
    return f"{_db(row['sqnr_db'])} (parts " + ", ".join(
        f"[{p['index'][0]}:{p['index'][1]}] {p['name']} {_db(p['sqnr_db'])}" for p in parts) + more + ")"


def _cmsis_nn_summary(used: dict | None) -> None:
    """Which CMSIS-NN the firmware links; the one note when there is none (report.json's cmsis_nn)."""
    if used is None:
        return
    if used["source"] != "off":
        from ..firmware.cmsis_nn import describe
        print(f"  CMSIS-NN {describe(used)}")
    elif not used["note"].startswith("--backend"):   # none, though the model was to call it: say why
        print(f"mcu-compile: note: {used['note']}", file=sys.stderr)


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
        from ..frontend.quantize.layer_sqnr import worst
        shown = ", ".join(_output_db(row) for row in outs)
        lossy = ", ".join(f"{row['name']} ({row['drop_db']:+.1f} dB)" for row in worst(sqnr, 3))
        ranges = r["quantization"].get("activation_ranges", {})
        kept = ", ".join(filter(None, (ranges.get("chosen") if ranges.get("chosen") != "minmax" else None,
                                       "equalized" if ranges.get("equalized") else None)))
        if kept and "minmax" in ranges.get("output_sqnr_db", {}):
            shown += f" ({kept} ranges; min / max gave {ranges['output_sqnr_db']['minmax']:.1f} dB)"
        held = "held-out inputs" if "held out" in r["quantization"].get("sqnr_measured_on", "") or \
            "none of them calibrated" in r["quantization"].get("sqnr_measured_on", "") else "calibration inputs"
        print(f"  SQNR vs float on {held}: output {shown}" + (f"; most lost at {lossy}" if lossy else "")
              + " (layer_sqnr.md)")
    int4 = r.get("quantization", {}).get("int4")
    if int4:
        print(f"  int4 weights: {int4['int4_layers']} of {len(int4['layers'])} conv / linear layers, "
              f"{int4['weight_bytes']} of their {int4['int8_weight_bytes']} int8 weight bytes (layer_sqnr.md)")
    _cmsis_nn_summary(r.get("cmsis_nn"))
    fallbacks = portable_layers(r)
    if fallbacks:
        shown = ", ".join(f"{name} ({op} -> {kernel}{': ' + why if why else ''})"
                          for name, op, kernel, why in fallbacks[:4])
        more = f" and {len(fallbacks) - 4} more (report.json)" if len(fallbacks) > 4 else ""
        print(f"mcu-compile: note: {len(fallbacks)} layer(s) run on portable kernels, not CMSIS-NN: {shown}{more}",
              file=sys.stderr)
    from ..emission.kernel_share import int32_note
    wide = int32_note(r)
    if wide:
        print(f"mcu-compile: note: {wide}", file=sys.stderr)
    if timing:
        for stage, seconds in r.get("timings", {}).items():
            print(f"  {stage:<16} {seconds:8.3f} s")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:      # --help / --version; a bad flag or value is a user error: 1, not argparse's 2
        return 1 if stop.code else 0
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
