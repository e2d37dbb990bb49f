"""mcu-convert-tosa-to-cmsisnn: integer TOSA -> cmsisnn / portable kernel calls."""

from __future__ import annotations

import dataclasses
import importlib

from ..._mlir import func, ir, tosa
from ...dialects.kernel_op import KernelOp
from ..base import ModulePass
from . import FAMILIES
from ...ir.resources import clear_resource_cache
from .common import Pattern, Phase, Rewriter
from ..pattern_driver import RewritePatternSet, apply_patterns
from ...ir import attributes as mcu_attrs
from ...options import SOFTMAX, CompileOptions

# Ops that stay: constants feed the kernels; shapes are read at compile time and then dropped.
LEGAL_OPS = (tosa.ConstOp, tosa.ConstShapeOp)


def patterns() -> list[Pattern]:
    """Every family's patterns (name, root op class, function, phase), in priority order."""
    out = []
    for family in FAMILIES:
        module = importlib.import_module(f"{__package__}.{family}")
        out.extend(Pattern(*row) for row in module.PATTERNS)
    return out


def _pattern(fn, state: Rewriter):
    """`fn(op, state)` (True when it converted) as the driver's callable (falsy when it did)."""
    def apply(op, rewriter):
        state.rewriter = rewriter
        return not fn(op, state)
    return apply


@dataclasses.dataclass(frozen=True)
class ConvertTosaToCmsisNN(ModulePass):
    """Converts integer TOSA to cmsisnn (CMSIS-NN) and portable (lib/portable) kernel calls.

    Conv / depthwise / matmul with their rescale and clamp, add / mul with their rescales, and
    pools with a clamp each become one kernel call; every other TOSA op becomes a portable C
    kernel. `backend=portable` maps everything to portable kernels. Copies are avoided where the
    kernel can read in place: a conv reads past slices that only drop rows / columns it never
    reads, and channel slices into same-shaped convs whose results are concatenated (or sliced
    again) become one grouped conv (run mcu-split-sliced-convs first to split a conv read only
    through channel slices), and a transpose of a concat nothing else reads is written by the
    concat's own copy (each input straight to its transposed place: ShuffleNet's shuffle). A batch
    matmul reads an operand through the reshapes and transposes that made it when they leave
    their source in order (K^T), and computes a result read only transposed as B^T . A^T.
    The frontend's integer log_softmax and normalisations become one fused kernel each, and
    each LSTM step one arm_lstm_unidirectional_s8 call (its next hidden and cell state). A
    conv or depthwise conv calls CMSIS-NN's wrapper only when the function the wrapper picks on
    the target core computes the window's padding as TOSA does (a call takes the top / left
    padding, the bottom / right is only implied by the output size: the 1x1 paths take none,
    arm_depthwise_conv_3x3_s8 one column on the right, arm_convolve_1_x_n_s8 on MVE its own
    split; kernel_library/cmsis_padding.py), else the generic kernel, which clips every window, with the
    reason in mcu.kernel_note (report.json's kernel_note). An op with no
    kernel is an error naming it. Patterns are applied by the bindings' rewrite driver: the
    fused units first, then one op at a time.
    """

    NAME = "mcu-convert-tosa-to-cmsisnn"
    DIALECTS = ("cmsisnn", "portable")
    backend: str = dataclasses.field(default="cmsis-nn", metadata={
        "help": "cmsis-nn or portable", "choices": ("cmsis-nn", "portable")})
    softmax: str = dataclasses.field(default=CompileOptions.softmax, metadata={
        "help": "int8 softmax: table (exponentials looked up, one portable kernel) or cmsis-nn "
                "(arm_softmax_s8)", "choices": SOFTMAX})
    disabled_patterns: tuple[str, ...] = dataclasses.field(default=(), metadata={
        "help": "pattern names not to apply (comma-separated; for debugging)"})

    def run(self, module: ir.Operation) -> None:
        clear_resource_cache()
        # softmax=cmsis-nn: the table pattern stands aside and arm_softmax_s8's takes the op.
        disabled = frozenset(self.disabled_patterns) | ({"softmax-table"} if self.softmax == "cmsis-nn" else set())
        state = Rewriter(self.core(module), self.backend, disabled)
        module.attributes[mcu_attrs.BACKEND] = ir.StringAttr.get(self.backend)
        table = [p for p in patterns() if p.name not in state.disabled]
        for phase in (Phase.OUTER, Phase.UNIT, Phase.ONE_OP):  # conversion.common.Phase says why
            if phase is Phase.OUTER and not self._has(module, tosa.GatherOp):
                continue  # an LSTM step looks up its activations; a run of the driver also drops dead ops
            rows = [p for p in table if p.phase is phase]
            ps = RewritePatternSet()
            for priority, p in enumerate(rows):
                ps.add(p.root, _pattern(p.fn, state), benefit=len(rows) - priority)
            apply_patterns(module, ps)
        for fn in self.functions(module):
            block = fn.regions[0].blocks[0]
            self._erase_dead_constants(block)
            self._check_legal(block)

    def _has(self, module, cls) -> bool:
        return any(isinstance(op, cls) for fn in self.functions(module) for op in fn.regions[0].blocks[0].operations)

    @staticmethod
    def _erase_dead_constants(block) -> None:
        for op in reversed(list(block.operations)):
            if isinstance(op, LEGAL_OPS) and not list(op.results[0].uses):
                op.operation.erase()

    def _check_legal(self, block) -> None:
        for op in block.operations:
            name = op.operation.name
            if isinstance(op, LEGAL_OPS + (KernelOp, func.ReturnOp, func.FuncOp)):
                continue
            if name.startswith("tosa."):
                which = "portable" if self.backend == "portable" else "CMSIS-NN or portable"
                self.emit_error(op, f"'{name}' has no {which} kernel for these operand types")
            else:
                self.emit_error(op, f"'{name}' is not integer TOSA; only TOSA ops can be converted")
