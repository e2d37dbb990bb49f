"""mcu-convert-tosa-to-cmsisnn: integer TOSA -> cmsisnn kernel calls."""

from __future__ import annotations

import dataclasses
import importlib

from .._mlir import ir
from .base import ModulePass
from .conversion import FAMILIES
from .conversion.channel_split import split_sliced_convs
from .conversion.common import CORE_PATH, Rewriter, clear_resource_cache, is_dead

# Ops that stay: constants feed the kernels; shapes are read at compile time and then dropped.
# Patterns that absorb several TOSA ops into one kernel call.
UNIT_PATTERNS = frozenset({"grouped-conv2d", "conv2d", "depthwise-conv2d", "matmul", "avg-pool2d", "max-pool2d",
                           "add-s8", "mul-s8", "table-s16-rescale", "log-softmax"})

LEGAL_OPS = ("tosa.const", "tosa.const_shape", "func.return", "func.func")


def patterns() -> list[tuple[str, str, object]]:
    """(name, root op, function) of every family, in priority order (fused units first)."""
    out = []
    for family in FAMILIES:
        module = importlib.import_module(f"{__package__}.conversion.{family}")
        out.extend(module.PATTERNS)
    return out


@dataclasses.dataclass(frozen=True)
class ConvertTosaToCmsisNN(ModulePass):
    """Converts integer TOSA to cmsisnn kernel calls.

    Conv / depthwise / matmul with their rescale and clamp, add / mul with their rescales, and
    pools with a clamp each become one kernel call; every other TOSA op becomes a portable C
    kernel. `backend=portable` maps everything to portable kernels. Copies are avoided where the
    kernel can read in place: a conv reads past slices that only drop rows / columns it never
    reads, and channel slices into same-shaped convs whose results are concatenated (or sliced
    again) become one grouped conv; a conv read only through channel slices is split into one conv
    per slice (pattern `split-sliced-conv`). The frontend's integer log_softmax becomes one fused
    kernel. A CMSIS-NN call that would
    fail at run time for its parameters (e.g. arm_convolve_1_x_n_s8's padding rule on MVE) is
    replaced at compile time by one that accepts them. An op with no kernel is an error naming it.
    """

    NAME = "mcu-convert-tosa-to-cmsisnn"
    target: str = dataclasses.field(default="cortex-m55", metadata={
        "help": "core: " + ", ".join(CORE_PATH), "choices": tuple(CORE_PATH)})
    backend: str = dataclasses.field(default="cmsis-nn", metadata={
        "help": "cmsis-nn or portable", "choices": ("cmsis-nn", "portable")})
    disabled_patterns: tuple[str, ...] = dataclasses.field(default=(), metadata={
        "help": "pattern names not to apply (comma-separated; for debugging)"})

    def run(self, module: ir.Operation) -> None:
        clear_resource_cache()
        rw = Rewriter(self.target, self.backend, frozenset(self.disabled_patterns))
        table: dict[str, list] = {}
        for name, root, fn in patterns():
            if name not in rw.disabled:
                table.setdefault(root, []).append((name, fn))
        module.attributes["mcu.target"] = ir.StringAttr.get(self.target)
        module.attributes["mcu.backend"] = ir.StringAttr.get(self.backend)
        for fn in self.functions(module):
            block = fn.regions[0].blocks[0]
            if "split-sliced-conv" not in rw.disabled:
                split_sliced_convs(block, rw)
            # Units first: a unit's root (e.g. tosa.add) may come after ops it absorbs (its input
            # rescales), which the single-op patterns would otherwise take first.
            for phase in (UNIT_PATTERNS, None):
                for op in list(block.operations):
                    if is_dead(op):
                        continue
                    name = op.operation.name
                    if name in LEGAL_OPS or name.startswith(("cmsisnn.", "portable.")):
                        continue
                    for pattern_name, pattern in table.get(name, ()):
                        if phase is not None and pattern_name not in phase:
                            continue
                        if pattern(op, rw):
                            break
            rw.sweep(block)
            self._erase_dead_constants(block)
            self._check_legal(block)

    @staticmethod
    def _erase_dead_constants(block) -> None:
        for op in reversed(list(block.operations)):
            if op.operation.name in ("tosa.const", "tosa.const_shape") and \
                    not list(op.results[0].uses):
                op.operation.erase()

    def _check_legal(self, block) -> None:
        for op in block.operations:
            name = op.operation.name
            if name in LEGAL_OPS or name.startswith(("cmsisnn.", "portable.")):
                continue
            if name.startswith("tosa."):
                self.emit_error(op, f"'{name}' has no {self.backend} kernel "
                                    f"(and no portable kernel) for these operand types")
            else:
                self.emit_error(op, f"'{name}' is not integer TOSA; only TOSA ops can be converted")
