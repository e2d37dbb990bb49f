"""Pass pipelines that mix mcu-mlir's Python passes with upstream MLIR passes.

A Python pass cannot be named in MLIR's textual pipeline syntax, so a pipeline is split here into
steps: our passes become Python callables, every other element goes to MLIR as text, all in one
PassManager and in the order given.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._mlir import ir, passmanager
from .diagnostics import UserError, from_mlir_error
from .passes import base, registry
from .passes.options_parser import PipelineSyntaxError, matching, split_top_level


@dataclass(frozen=True)
class Step:
    name: str
    text: str | None = None          # upstream pipeline element, as MLIR text
    py: base.ModulePass | None = None


def _name_and_options(element: str) -> tuple[str, str, str]:
    """'a{x=1}' -> ('a', 'x=1', ''); 'func.func(b)' -> ('func.func', '', 'b')."""
    cut = len(element)
    for ch in "{(":
        i = element.find(ch)
        if i != -1:
            cut = min(cut, i)
    name, rest = element[:cut].strip(), element[cut:].strip()
    if rest.startswith("{"):
        close = matching(rest, 0)
        return name, rest[1:close], rest[close + 1:].strip()
    if rest.startswith("("):
        return name, "", rest[1:-1]
    return name, "", ""


def parse_pipeline(text: str) -> list[Step]:
    """Steps of `builtin.module(...)` text (the anchor may be omitted)."""
    try:
        return _parse_pipeline(text)
    except PipelineSyntaxError as e:
        raise UserError(f"bad pass pipeline: {e}") from None


def _parse_pipeline(text: str) -> list[Step]:
    text = text.strip()
    name, options, inner = _name_and_options(text)
    if name == "builtin.module" and not options:
        text = inner
    steps: list[Step] = []
    for element in split_top_level(text):
        steps.extend(element_steps(element))
    return steps


def element_steps(element: str, options: str | None = None) -> list[Step]:
    """The steps of one pipeline element; `options` overrides any given in braces."""
    name, opts, inner = _name_and_options(element)
    if options is not None:
        opts = options
    if name in registry.PASSES:
        try:
            return [Step(name, py=registry.get_pass(name).from_options(opts))]
        except base.OptionError as e:
            raise UserError(str(e)) from None
    if name in registry.PIPELINES:
        try:
            return steps_of(registry.get_pipeline(name).from_options(opts).passes())
        except base.OptionError as e:
            raise UserError(str(e)) from None
    if inner and any(registry.is_ours(p) for p in _names_in(inner)):
        raise UserError(f"mcu-mlir passes run on the module: put them at the top level, not in '{name}(...)'")
    return [Step(name, text=element if options is None else f"{name}{{{options}}}")]


def steps_of(passes: list) -> list[Step]:
    """Steps of a pipeline's passes: our passes as instances, upstream ones as MLIR text."""
    steps = []
    for p in passes:
        if isinstance(p, str):
            steps.extend(element_steps(p))
        else:
            steps.append(Step(p.NAME, py=p))
    return steps


def pipeline_text(passes: list) -> str:
    """The mlir-opt text of a list of passes (repro commands, docs)."""
    return "builtin.module(" + ",".join(p if isinstance(p, str) else p.pipeline_text() for p in passes) + ")"


def _names_in(text: str) -> list[str]:
    return [_name_and_options(e)[0] for e in split_top_level(text)]


def build_pass_manager(steps: list[Step], ctx: ir.Context, *, print_ir_after_all=False,
                       timing=False) -> passmanager.PassManager:
    pm = passmanager.PassManager("builtin.module", context=ctx)
    for step in steps:
        if step.py is not None:
            pm.add(step.py, name=step.name, argument=step.name, description=step.py.summary())
        else:
            _add_upstream(pm, step)
    if print_ir_after_all:
        pm.enable_ir_printing(print_after_all=True, print_module_scope=True)
    if timing:
        pm.enable_timing()
    return pm


def _add_upstream(pm, step: Step) -> None:
    try:
        pm.add(step.text)
        return
    except ValueError as e:
        msg = str(e)
    # Function-level passes named at the top level run on every function, as in mlir-opt.
    if "restricted to 'func.func'" in msg or "restricted to 'func.func'" in msg.replace('"', "'"):
        try:
            pm.add(f"func.func({step.text})")
            return
        except ValueError as e:
            msg = str(e)
    first = msg.split("\n")[0]
    if "does not refer to a registered pass" in first:
        raise UserError(f"unknown pass or pipeline '{step.name}' (see --list-passes)") from None
    raise UserError(f"bad pass '{step.text}': {first}") from None


def run_steps(module: ir.Module, steps: list[Step], *, line_offset: int = 0, **pm_options) -> None:
    """Runs the steps on `module`; user-visible failures raise UserError, bugs re-raise."""
    pm = build_pass_manager(steps, module.context, **pm_options)
    base.take_failure_kinds()
    try:
        pm.run(module.operation)
    except ir.MLIRError as err:
        bugs = base.take_internal_errors()
        if bugs:
            raise bugs[0]
        kinds = base.take_failure_kinds()   # a typed failure (ArenaOverLimit) keeps its type
        raise (kinds[0] if kinds else UserError)(diagnostics=from_mlir_error(err, line_offset)) from None
    bugs = base.take_internal_errors()
    if bugs:
        raise bugs[0]


def run_pipeline(module: ir.Module, text: str, **kwargs) -> None:
    run_steps(module, parse_pipeline(text), **kwargs)


def run_passes(module: ir.Module, passes: list, **kwargs) -> None:
    """Runs pass instances (and upstream passes given as MLIR text) on `module`."""
    run_steps(module, steps_of(passes), **kwargs)
