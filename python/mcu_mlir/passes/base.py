"""The base class of every mcu-mlir pass.

A pass is a frozen dataclass: its fields are its options (``foo_bar`` is spelled ``foo-bar`` on the
command line), its docstring is its help text, ``NAME`` its command-line name. Python passes run on
the module (the bindings cannot nest them) and walk the functions themselves.

The bindings drop an emitted error unless the pass signals failure, so every error goes through
``self.emit_error``, which records it; the wrapper signals failure after ``run`` returns.
"""

from __future__ import annotations

import contextvars
import dataclasses
import typing
from typing import ClassVar, Iterator

from .._mlir import ir
from .options_parser import PipelineSyntaxError, split_options, split_top_level

_errors: contextvars.ContextVar[list] = contextvars.ContextVar("mcu_pass_errors")


class PassError(Exception):
    """Raised inside a pass to stop it with an error located at `op`."""

    def __init__(self, op, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


class OptionError(ValueError):
    """A pass option that does not exist or does not parse."""


@dataclasses.dataclass(frozen=True)
class Options:
    """Options of a pass or a pipeline: the dataclass's fields, parsed from and printed as MLIR
    option text (``a=1 b=x,y``), so mcu-opt and the driver share one typed form."""

    NAME: ClassVar[str] = ""
    KIND: ClassVar[str] = "pass"     # how errors name it: pass 'x' / pipeline 'x'

    # -- metadata -----------------------------------------------------------------------------
    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    @classmethod
    def description(cls) -> str:
        doc = (cls.__doc__ or "").strip()
        return "\n".join(line.strip() for line in doc.splitlines()[1:]).strip()

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        return [f for f in dataclasses.fields(cls) if not f.name.startswith("_")]

    @classmethod
    def option_name(cls, f: dataclasses.Field) -> str:
        return f.name.replace("_", "-")

    @classmethod
    def from_options(cls, text: str) -> "Options":
        """Builds the options from MLIR option text: ``a=1 b=x,y`` (``{...}`` already stripped)."""
        what = f"{cls.KIND} '{cls.NAME}'"
        fields = {cls.option_name(f): f for f in cls.options()}
        hints = typing.get_type_hints(cls)
        values = {}
        try:
            pairs = split_options(text)
        except PipelineSyntaxError as e:
            raise OptionError(f"{what}: {e}") from None
        # A bare `key` means key=true, which only a bool option can take: for any other
        # option it would become the string "true" and fail later with a misleading message.
        bare = {part for part in split_top_level(text.strip(), " ") if "=" not in part}
        for key, raw in pairs:
            if key not in fields:
                known = ", ".join(sorted(fields)) or "none"
                raise OptionError(f"{what} has no option '{key}' (options: {known})")
            f = fields[key]
            if key in bare and hints.get(f.name, str) is not bool:
                raise OptionError(f"{what}: option '{key}' needs a value ({key}=...)")
            values[f.name] = _convert(what, key, raw, hints.get(f.name, str), f)
        return cls(**values)

    def option_text(self, changed_only: bool = False) -> str:
        """``a=1 b=x,y``: every option, or with `changed_only` those not at their default."""
        parts = []
        for f in self.options():
            v = getattr(self, f.name)
            if changed_only and f.default is not dataclasses.MISSING and v == f.default:
                continue
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, (list, tuple)):
                v = ",".join(str(x) for x in v)
            parts.append(f"{self.option_name(f)}={v}")
        return " ".join(parts)

    def pipeline_text(self) -> str:
        """This pass or pipeline as an element of mlir-opt's pipeline text (repro commands)."""
        text = self.option_text(changed_only=True)
        return f"{self.NAME}{{{text}}}" if text else self.NAME

    def passes(self) -> list:
        """What runs, in order: our passes as instances, upstream passes as their MLIR text."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class ModulePass(Options):
    DIALECTS: ClassVar[tuple[str, ...]] = ()  # kernel dialects whose ops the pass builds or reads

    # -- to implement -------------------------------------------------------------------------
    def run(self, module: ir.Operation) -> None:
        raise NotImplementedError

    def passes(self) -> list:
        return [self]

    # -- for pass authors ---------------------------------------------------------------------
    def emit_error(self, op, message: str, kind: type | None = None) -> None:
        """Reports an error at `op` (an op, OpView, Value or Location); the pass then fails. `kind`,
        a UserError subclass, is the exception the driver raises for it (ArenaOverLimit)."""
        loc = _location_of(op)
        loc.emit_error(message)
        _errors.get().append(message)
        if kind is not None:
            _failure_kinds.append(kind)

    def core(self, module: ir.Operation):
        """The target core attached to the module (mcu-attach-target); a PassError when there is none."""
        from .. import cores
        try:
            return cores.of(module)
        except (cores.TargetMissing, ValueError) as e:
            raise PassError(module, str(e)) from None

    @staticmethod
    def functions(module: ir.Operation) -> Iterator[ir.OpView]:
        for op in module.regions[0].blocks[0].operations:
            # A declaration (no body) has nothing to check or rewrite.
            if op.operation.name == "func.func" and op.regions[0].blocks:
                yield op

    # -- the bindings' entry point ------------------------------------------------------------
    def __call__(self, op, pass_) -> None:
        errors: list = []
        token = _errors.set(errors)
        try:
            try:
                self.run(op)
            except PassError as e:
                self.emit_error(e.op, e.message)
        except BaseException as exc:  # a bug: keep it for the driver, which prints a repro
            _internal_errors.append(exc)
            errors.append(str(exc))
            op.location.emit_error(f"internal error in pass '{self.NAME}': {type(exc).__name__}: {exc}")
        finally:
            _errors.reset(token)
        if not errors:
            # IR a pass leaves that does not verify is the pass's bug, not the input's: kept for the
            # driver (internal compiler error and a repro command) like an exception.
            try:
                op.verify()
            except ir.MLIRError as err:
                first = err.error_diagnostics[0].message if err.error_diagnostics else str(err)
                exc = RuntimeError(f"pass '{self.NAME}' left IR that does not verify: {first}")
                _internal_errors.append(exc)
                errors.append(str(exc))
        if errors:
            pass_.signal_pass_failure()


# Exceptions raised by Python passes; the bindings cannot carry them through `pm.run`.
_internal_errors: list[BaseException] = []
# The typed errors (UserError subclasses) passes reported; the bindings carry only the messages.
_failure_kinds: list[type] = []


def take_failure_kinds() -> list[type]:
    out = list(_failure_kinds)
    _failure_kinds.clear()
    return out


def take_internal_errors() -> list[BaseException]:
    out = list(_internal_errors)
    _internal_errors.clear()
    return out


def _location_of(x) -> ir.Location:
    if isinstance(x, ir.Location):
        return x
    if isinstance(x, ir.Value):
        owner = x.owner
        return owner.location if not isinstance(owner, ir.Block) else owner.owner.location
    return x.location


def _convert(what, key, raw, hint, f):
    origin = typing.get_origin(hint)
    try:
        if hint is bool:
            if raw not in ("true", "false", "1", "0"):
                raise ValueError("expected true or false")
            return raw in ("true", "1")
        if hint is int:
            try:
                return int(raw)
            except ValueError:
                raise ValueError("expected an integer") from None
        if hint is float:
            try:
                return float(raw)
            except ValueError:
                raise ValueError("expected a number") from None
        if origin in (tuple, list):
            (elem,) = typing.get_args(hint)[:1]
            items = [x for x in raw.strip("{}[]").split(",") if x]
            return tuple(elem(x) for x in items)
        choices = f.metadata.get("choices")
        if choices and raw not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return raw
    except ValueError as e:
        raise OptionError(f"{what}: bad value '{raw}' for option '{key}' ({e})") from None
