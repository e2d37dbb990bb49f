"""mcu-opt: mlir-opt for mcu-mlir. Runs our passes and upstream ones on a .mlir file.

Imports only the MLIR bindings and the passes it runs (never torch), so lit can start it often.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile

from .. import __version__
from ..diagnostics import Diagnostic, UserError, from_mlir_error, repro_command, report_internal_error

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.M)

USAGE = """mcu-opt [FILE|FILE.tflite|-] [--mcu-<pass>[=<options>] | --<upstream-pass>[=<options>] ...]
               [--pass-pipeline='builtin.module(...)'] [--split-input-file] [--verify-diagnostics]
               [-o OUT] [--list-passes] [--mlir-print-ir-after-all] [--mlir-timing]"""


def _arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcu-opt", usage=USAGE, allow_abbrev=False,
                                description="Runs mcu-mlir and upstream MLIR passes on MLIR files.")
    p.add_argument("input", nargs="?", default="-",
                   help="input .mlir file, a .tflite model (read as its integer TOSA), or - for stdin")
    p.add_argument("-o", dest="output", default="-", help="output file (default: stdout)")
    p.add_argument("--pass-pipeline", action="append", default=[],
                   help="textual pipeline, e.g. 'builtin.module(mcu-fold-transposes,cse)'")
    p.add_argument("--split-input-file", action="store_true",
                   help="split the input at '// -----' and process each chunk alone")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check diagnostics against expected-error/-note annotations")
    p.add_argument("--list-passes", action="store_true", help="list passes and pipelines and exit")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass")
    p.add_argument("--mlir-timing", action="store_true", help="print pass timing")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    p.add_argument("--allow-unregistered-dialect", action="store_true")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def _split_pass_flags(parser, argv: list[str]) -> tuple[list[str], list[str]]:
    """(mcu-opt's own arguments, pass flags): a `--name[=options]` that is not one of mcu-opt's
    options is a pass, whatever its options hold (argparse would take `--p=a=1 b=2`, one argument
    with a space, for the input file)."""
    own = {o for action in parser._actions for o in action.option_strings}
    ours, passes = [], []
    takes_value = {o for action in parser._actions if action.nargs is None and action.option_strings
                   and not isinstance(action, (argparse._StoreTrueAction, argparse._HelpAction))
                   for o in action.option_strings}
    i = 0
    while i < len(argv):
        item = argv[i]
        name = item.partition("=")[0]
        if item.startswith("--") and item != "--" and name not in own:
            passes.append(item)
        else:
            ours.append(item)
            if item in takes_value and i + 1 < len(argv):
                ours.append(argv[i + 1])
                i += 1
        i += 1
    return ours, passes


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = _arg_parser()
    own, passes = _split_pass_flags(parser, argv)
    try:
        args, rest = parser.parse_known_args(own)
    except SystemExit as stop:      # --help / --version; a bad flag or value is a user error: 1, not argparse's 2
        return 1 if stop.code else 0
    rest = passes + rest
    try:
        return _run(args, rest)
    except UserError as e:
        print(e.format(_display_name(args.input)), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a compiler bug
        report_internal_error(exc, _repro(args, argv))
        return 2


def _display_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _repro(args, argv) -> str:
    if args.input != "-":
        return repro_command(["mcu-opt", *argv])
    # Keep what came on stdin so the command can be run again.
    saved = getattr(_run, "stdin_text", "")
    fd, path = tempfile.mkstemp(prefix="mcu-opt-repro-", suffix=".mlir")
    with os.fdopen(fd, "w") as f:
        f.write(saved)
    return repro_command(["mcu-opt", path, *[a for a in argv if a != "-"]])


def _pass_steps(args, rest):
    from ..pipeline import element_steps, parse_pipeline
    steps = []
    for item in rest:
        if not item.startswith("--") or item == "--":
            raise UserError(f"unexpected argument '{item}' (see mcu-opt --help)")
        name, sep, opts = item[2:].partition("=")
        steps.extend(element_steps(name, opts if sep else None))
    for text in args.pass_pipeline:
        if steps and rest:
            raise UserError("give passes either as --<pass> flags or with --pass-pipeline, not both")
        steps.extend(parse_pipeline(text))
    return steps


def _run(args, rest) -> int:
    from .. import _mlir
    from ..pipeline import run_steps

    if args.list_passes:
        sys.stdout.write(_list_passes() + "\n")
        return 0

    if args.input == "-":
        text = sys.stdin.read()
    elif args.input.endswith(".tflite"):
        text = _tflite_text(args.input)
    else:
        try:
            with open(args.input, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise UserError(f"cannot read input file '{args.input}': {e.strerror}") from None
        except UnicodeDecodeError:
            raise UserError("not an MLIR text file (a TFLite model is read by its .tflite suffix)") from None
    _run.stdin_text = text
    steps = _pass_steps(args, rest)

    ctx = _mlir.new_context()
    ctx.allow_unregistered_dialects = args.allow_unregistered_dialect
    _load_dialects_for(ctx, text, steps)
    name = _display_name(args.input)

    outputs, failed = [], False
    for start_line, chunk in _chunks(text, args.split_input_file):
        # Leading newlines keep every location's line number equal to the line in the file.
        source = "\n" * start_line + chunk
        try:
            with ctx, _mlir.ir.Location.unknown():
                module = _parse(source)
                run_steps(module, steps, print_ir_after_all=args.mlir_print_ir_after_all,
                          timing=args.mlir_timing)
                outputs.append(_print(module, args.mlir_print_debuginfo))
            produced = []
        except UserError as e:
            produced = e.diagnostics
        if args.verify_diagnostics:
            errs = _verify(source, produced)
            for d in errs:
                print(d.format(name), file=sys.stderr)
            failed |= bool(errs)
        elif produced:
            print(UserError(diagnostics=produced).format(name), file=sys.stderr)
            failed = True
    _write(args.output, "// -----\n".join(outputs))
    return 1 if failed else 0


def _tflite_text(path: str) -> str:
    """A `.tflite` model as the integer TOSA its frontend builds (what mcu-compile writes to
    tosa-import.mlir: the inputs' and outputs' quantization, a stateful model's mcu.state, the
    layer names as locations), so every pass and pipeline runs on it as on a .mlir file."""
    from .. import io_quant
    from ..frontend.tflite import import_tflite
    module, inputs, outputs = import_tflite(path)
    io_quant.annotate(module, inputs, outputs)
    return module.operation.get_asm(enable_debug_info=True)


def _chunks(text: str, split: bool):
    if not split:
        yield 0, text
        return
    pos = 0
    for m in SPLIT_MARKER.finditer(text):
        yield text.count("\n", 0, pos), text[pos:m.start()]
        pos = m.end() + 1
    yield text.count("\n", 0, pos), text[pos:]


def _parse(source: str):
    from .._mlir import ir
    try:
        return ir.Module.parse(source)
    except ir.MLIRError as err:
        raise UserError(diagnostics=from_mlir_error(err)) from None


def _print(module, debuginfo: bool) -> str:
    text = module.operation.get_asm(enable_debug_info=debuginfo, assume_verified=True)
    return text if text.endswith("\n") else text + "\n"


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UserError(f"cannot write output file '{path}': {e.strerror}") from None


def _load_dialects_for(ctx, text: str, steps) -> None:
    """Loads our own dialects only when the input or a pass needs them (keeps start-up fast)."""
    from .. import dialects
    dialects.load_needed(ctx, text, {ns for s in steps if s.py is not None for ns in s.py.DIALECTS})


_EXPECTED = re.compile(
    r"//\s*expected-(?P<sev>error|warning|note|remark)\s*(?:@(?P<where>above|below|[+-]\d+))?\s*"
    r"\{\{(?P<msg>.*?)\}\}")


def _verify(source: str, produced: list[Diagnostic]) -> list[Diagnostic]:
    """MLIR's --verify-diagnostics: every expected diagnostic appears, nothing else does."""
    expected = []
    for lineno, line in enumerate(source.split("\n"), start=1):
        for m in _EXPECTED.finditer(line):
            where = m.group("where")
            target = lineno
            if where == "below":
                target = lineno + 1
                while _EXPECTED.search(source.split("\n")[target - 1] or "") and target < lineno + 50:
                    target += 1
            elif where == "above":
                target = lineno - 1
                while target > 1 and _EXPECTED.search(source.split("\n")[target - 1] or ""):
                    target -= 1
            elif where:
                target = lineno + int(where)
            expected.append([m.group("sev"), m.group("msg"), target, lineno, False])

    flat = []
    for d in produced:
        flat.append(d)
        flat.extend(d.notes)
    problems = []
    for d in flat:
        match = next((e for e in expected if not e[4] and e[0] == d.severity and e[2] == d.line
                      and e[1] in d.message), None)
        if match is None:
            problems.append(Diagnostic("error", f"unexpected {d.severity}: {d.message}", d.file, d.line, d.col))
        else:
            match[4] = True
    for sev, msg, _target, lineno, seen in expected:
        if not seen:
            problems.append(Diagnostic("error", f'expected {sev} "{msg}" was not produced', None, lineno, 1))
    return problems


def _list_passes() -> str:
    from .. import _mlir
    from ..passes import registry
    lines = []
    for title, table, get in (("passes", registry.PASSES, registry.get_pass),
                              ("pipelines", registry.PIPELINES, registry.get_pipeline)):
        lines.append(f"mcu-mlir {title}:")
        for name in sorted(table):
            cls = get(name)
            lines.append(f"  --{name:<38} - {cls.summary()}")
            for f in cls.options():
                lines.append(f"      --{cls.option_name(f):<34} - {f.metadata.get('help', '')}")
    lines.append("Upstream MLIR passes (any other registered upstream pass name works too):")
    ctx = _mlir.ir.Context()
    for text in registry.UPSTREAM_PASSES:
        name = text.split("(")[-1].rstrip(")")
        try:
            _mlir.passmanager.PassManager.parse(f"builtin.module({text})", context=ctx)
        except ValueError:
            continue
        lines.append(f"  --{name}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
