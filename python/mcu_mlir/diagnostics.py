"""User-facing errors and MLIR locations.

User mistakes become `UserError` (printed as `FILE:LINE:COL: error: ...`, exit 1); anything else
is a compiler bug and is reported with a command that reproduces it.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field

from .ir.locations import parse_location  # noqa: F401  (part of the diagnostics API)



@dataclass
class Diagnostic:
    severity: str  # "error" | "warning" | "note" | "remark"
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    notes: list["Diagnostic"] = field(default_factory=list)

    def format(self, file_name: str | None = None) -> str:
        where = ""
        if self.line is not None:
            name = file_name if self.file in (None, "-") and file_name else self.file
            where = f"{name}:{self.line}:{self.col}: "
        elif file_name:
            where = f"{file_name}: "
        text = f"{where}{self.severity}: {self.message}"
        for note in self.notes:
            text += "\n" + note.format(file_name)
        return text


class UserError(Exception):
    """An error in what the user gave us; carries one or more diagnostics."""

    def __init__(self, message: str | None = None, diagnostics: list[Diagnostic] | None = None):
        self.diagnostics = list(diagnostics or [])
        if message is not None:
            self.diagnostics.insert(0, Diagnostic("error", message))
        super().__init__("\n".join(d.message for d in self.diagnostics))

    def format(self, file_name: str | None = None) -> str:
        return "\n".join(d.format(file_name) for d in self.diagnostics)


class ArenaOverLimit(UserError):
    """mcu-plan-memory's arena does not fit the RAM limit (the driver then plans for memory)."""


_SEVERITY = {0: "error", 1: "warning", 2: "note", 3: "remark"}


def from_mlir(diag, line_offset: int = 0) -> Diagnostic:
    """Converts a bindings `DiagnosticInfo` (from `MLIRError.error_diagnostics`)."""
    sev = getattr(diag.severity, "name", str(diag.severity)).lower()
    sev = _SEVERITY.get(sev, sev) if isinstance(sev, int) else sev
    file, line, col = parse_location(str(diag.location))
    if line is not None:
        line += line_offset
    out = Diagnostic(sev, diag.message, file, line, col)
    out.notes = [from_mlir(n, line_offset) for n in diag.notes]
    return out


def from_mlir_error(err, line_offset: int = 0) -> list[Diagnostic]:
    diags = [from_mlir(d, line_offset) for d in err.error_diagnostics]
    if not diags:
        diags = [Diagnostic("error", str(err).strip())]
    return diags


def repro_command(argv: list[str] | None = None) -> str:
    argv = sys.argv if argv is None else argv
    return " ".join(shlex.quote(a) for a in argv)


def report_internal_error(exc: BaseException, repro: str) -> None:
    """A compiler bug: say so, print the traceback and the command that reproduces it."""
    import traceback
    traceback.print_exception(exc, file=sys.stderr)
    print(f"internal compiler error: {type(exc).__name__}: {exc}\n"
          f"This is a bug in mcu-mlir, not in your input. Reproduce it with:\n  {repro}",
          file=sys.stderr)


_PACKAGE_DIR = __file__.rsplit("/", 1)[0]
verbose = False   # show third-party warnings and logs (a tool's -v)
tool = ""         # the command-line tool running (quiet_third_party), "" from Python: advice names its options
_THIRD_PARTY_LOGGERS = ("torch", "torchao", "torch_mlir")


def quiet_third_party(tool_name: str, verbose_flag: bool = False) -> None:
    """What a command-line tool prints: its own warnings as one `TOOL: warning: ...` line each and
    progress lines for slow steps; warnings and logs of torch, torchao and others only when verbose."""
    import logging
    import warnings

    from . import progress
    global verbose, tool
    verbose = bool(verbose_flag)
    tool = tool_name

    def show(message, category, filename, lineno, file=None, line=None):
        ours = str(filename).startswith(_PACKAGE_DIR)
        if ours:
            print(f"{tool_name}: warning: {message}", file=sys.stderr)
        elif verbose:
            print(f"{tool_name}: {category.__name__} from {filename}:{lineno}: {message}", file=sys.stderr)

    warnings.showwarning = show
    for name in _THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if verbose_flag else logging.ERROR)
    progress.enable(tool_name)
