"""Every discardable `mcu.*` attribute the passes write or read: its holder, kind and meaning.

Code names an attribute by its constant here, never by a string of its own; `verify` checks
that a module holds only declared `mcu.*` attributes, each of its declared kind.
"""

from __future__ import annotations

import dataclasses

from .._mlir import ir


@dataclasses.dataclass(frozen=True)
class Declared:
    name: str
    holder: str   # "module", "kernel op", "function argument / result"
    kind: str     # "string", "integer", "float", "unit", "array<i32>", "array<dict>"
    written_by: str
    meaning: str


_KINDS = {
    "string": lambda a: isinstance(a, ir.StringAttr),
    "integer": lambda a: isinstance(a, ir.IntegerAttr),
    "float": lambda a: isinstance(a, ir.FloatAttr),
    "unit": lambda a: isinstance(a, ir.UnitAttr),
    "array<i32>": lambda a: isinstance(a, ir.DenseI32ArrayAttr),
    "array<dict>": lambda a: isinstance(a, ir.ArrayAttr) and all(isinstance(e, ir.DictAttr) for e in a),
}

DECLARED: dict[str, Declared] = {}


def _declare(name, holder, kind, written_by, meaning) -> str:
    DECLARED[name] = Declared(name, holder, kind, written_by, meaning)
    return name


# -- module ---------------------------------------------------------------------------------------
TARGET = _declare("mcu.target", "module", "string", "mcu-attach-target",
                  "the core the module is compiled for (cores.py: cores.of(module))")
BACKEND = _declare("mcu.backend", "module", "string", "mcu-convert-tosa-to-cmsisnn",
                   "cmsis-nn or portable")
ARENA_BYTES = _declare("mcu.arena_bytes", "module", "integer", "mcu-plan-memory",
                       "size of the static arena")
ARENA_LOWER_BOUND_BYTES = _declare("mcu.arena_lower_bound_bytes", "module", "integer", "mcu-plan-memory",
                                   "the most bytes live at one kernel (no planner does better)")
ARENA_OVERLAP_BOUND_BYTES = _declare("mcu.arena_overlap_bound_bytes", "module", "integer", "mcu-plan-memory",
                                     "the same, with outputs overlapping their inputs where allowed")
PATCHED_BANDS = _declare("mcu.patched_bands", "function", "integer", "mcu-patch-early-stages",
                         "how many bands of rows the function's first stage runs in")
PATCHED_OPS = _declare("mcu.patched_ops", "function", "integer", "mcu-patch-early-stages",
                       "how many TOSA ops that stage had before it was run band by band")

# -- function arguments and results ---------------------------------------------------------------
SCALE = _declare("mcu.scale", "function argument / result", "float", "frontend",
                 "quantisation scale of a graph input / output (real = scale * (q - zero_point))")
ZERO_POINT = _declare("mcu.zero_point", "function argument / result", "integer", "frontend",
                      "quantisation zero point of a graph input / output")
PARTS = _declare("mcu.parts", "function result", "array<dict>", "frontend",
                 "an output concat whose parts keep their own quantization: {axis, start, stop, scale, "
                 "zero_point} per slice [start, stop) along axis (mcu.scale is then 0)")
STATE = _declare("mcu.state", "entry function", "array<i32>", "frontend / driver",
                 "streaming state: input, output index pairs whose output is the next call's input")
LAYOUT = _declare("mcu.layout", "function argument / result", "string", "mcu-nhwc-canonicalize",
                  "\"nhwc\" where the graph's boundary was moved to NHWC")

# -- kernel ops -----------------------------------------------------------------------------------
SOURCE_OP = _declare("mcu.source_op", "kernel op", "string", "mcu-convert-tosa-to-cmsisnn",
                     "the TOSA op(s) the call replaces (for reports and comments)")
FALLBACK = _declare("mcu.fallback", "kernel op", "string", "mcu-convert-tosa-to-cmsisnn",
                    "why a CMSIS-NN build runs this op on a portable kernel (report.json's ops)")
KERNEL_NOTE = _declare("mcu.kernel_note", "kernel op", "string", "mcu-convert-tosa-to-cmsisnn",
                      "why a CMSIS-NN call is not the wrapper the conversion tries first (report.json's ops)")
GENERATED_KERNEL = _declare("mcu.generated_kernel", "kernel op", "string", "mcu-choose-generated-kernels",
                            "the kernel written for this layer (kernel_generation/) called instead of CMSIS-NN")
STORAGE = _declare("mcu.storage", "kernel op", "string", "mcu-plan-memory",
                   "where the result lives: arena, input:<i> or output:<i>")
OFFSET = _declare("mcu.offset", "kernel op", "integer", "mcu-plan-memory", "byte offset in that storage")
STORAGE_1 = _declare("mcu.storage_1", "kernel op", "string", "mcu-plan-memory",
                     "where a kernel's second result lives (an LSTM step's cell state)")
OFFSET_1 = _declare("mcu.offset_1", "kernel op", "integer", "mcu-plan-memory",
                    "byte offset of the second result in its storage")
VIEW = _declare("mcu.view", "kernel op", "unit", "mcu-plan-memory",
                "the result is a contiguous part of its input: no code")
IN_PLACE = _declare("mcu.in_place", "kernel op", "unit", "mcu-plan-memory",
                    "a concat whose inputs were written into their places in its result: no code")
COPY = _declare("mcu.copy", "kernel op", "unit", "mcu-plan-memory",
                "a reshape the planner could not make a view: copied")
SCRATCH_OFFSET = _declare("mcu.scratch_offset", "kernel op", "integer", "mcu-plan-memory",
                          "arena offset of the CMSIS-NN scratch buffer")
SCRATCH_BYTES = _declare("mcu.scratch_bytes", "kernel op", "integer", "mcu-plan-memory",
                         "size of the CMSIS-NN scratch buffer")
KERNEL_SUMS = _declare("mcu.kernel_sums", "kernel op", "array<i32>", "mcu-prepare-for-emission",
                       "precomputed bias + input_offset * row sums of a fully connected (MVE)")


def _check(attr_name: str, attr, where) -> str | None:
    declared = DECLARED.get(attr_name)
    if declared is None:
        return f"'{attr_name}' is not a declared mcu attribute ({where})"
    if not _KINDS[declared.kind](attr):
        return f"'{attr_name}' must be {declared.kind}, got {attr} ({where})"
    return None


def verify(module_op) -> list[tuple[object, str]]:
    """(op, message) for every undeclared or ill-kinded `mcu.*` attribute in the module."""
    problems = []

    def visit(op):
        for name in op.attributes:
            attr = op.attributes[name]
            if name.startswith("mcu."):
                problem = _check(name, attr, op.name)
                if problem:
                    problems.append((op, problem))
            elif name in ("arg_attrs", "res_attrs") and op.name == "func.func":
                for entry in ir.ArrayAttr(attr):
                    for inner in ir.DictAttr(entry):
                        if inner.name.startswith("mcu."):
                            problem = _check(inner.name, inner.attr, f"{op.name} {name}")
                            if problem:
                                problems.append((op, problem))
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    return problems
