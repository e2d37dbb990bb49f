"""A read TFLite graph -> integer TOSA computing what TFLite Micro's reference kernels compute.

NHWC stays NHWC (TFLite's layout is the kernels' layout: no transposes). Each op is built in the
form the torch frontend gives the same op (lowering/conv.py, pool.py, elementwise.py, softmax.py),
so the backend's patterns put it on the same CMSIS-NN kernel:
  CONV_2D / DEPTHWISE_CONV_2D  conv -> per-channel RESCALE (DOUBLE_ROUND) -> CLAMP (fused activation)
  FULLY_CONNECTED              matmul -> add int32 bias -> RESCALE -> CLAMP
  AVERAGE_POOL_2D              avg_pool on the raw integers (TFLite divides by the valid cells)
  ADD                          (x - zp) << 20, rescaled to twice the larger scale, add, rescale
  SOFTMAX                      arm_softmax_s8's integers (cmsis_softmax.py), TFLite's beta scaling
TFLite's QuantizeMultiplier is qmath.quantize_multiplier; its MultiplyByQuantizedMultiplier with a
multiplier below one is TOSA's DOUBLE_ROUND rescale, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ... import io_quant
from ...diagnostics import UserError
from ...ir.types import RANGE
from ..qmath import quantize_multiplier
from ..tosa_builder import TosaBuilder, Value
from .reader import Graph, Operator, Tensor

# ActivationFunctionType of the schema.
NO_ACTIVATION, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3
ACTIVATION_NAMES = {4: "TANH", 5: "SIGN_BIT"}
SAME, VALID = 0, 1
# The left shift of ADD's inputs before their rescale (TFLite and CMSIS-NN, int8).
ADD_LEFT_SHIFT = 20


def _round_half_away(x: np.float32) -> int:
    return int(np.sign(x) * np.floor(np.abs(x) + np.float32(0.5)))


def activation_range(fused: int, tensor: Tensor, where: str) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized: the fused activation as bounds on the output
    integers (the float bound divided by the float32 scale, rounded half away from zero)."""
    lo, hi = RANGE[tensor.elem]
    scale, zp = np.float32(tensor.quant.scale), tensor.quant.zero_point

    def quantized(f: float) -> int:
        return zp + _round_half_away(np.float32(f) / scale)
    if fused == NO_ACTIVATION:
        return lo, hi
    if fused == RELU:
        return max(lo, quantized(0.0)), hi
    if fused == RELU6:
        return max(lo, quantized(0.0)), min(hi, quantized(6.0))
    if fused == RELU_N1_TO_1:
        return max(lo, quantized(-1.0)), min(hi, quantized(1.0))
    raise UserError(f"{where}: the fused activation {ACTIVATION_NAMES.get(fused, fused)} is not supported")


class Lowering:
    """Builds the TOSA of one graph, op by op, into `self.w` (a TosaBuilder)."""

    def __init__(self, graph: Graph, ctx):
        self.graph = graph
        self.w = TosaBuilder(ctx)
        self.values: dict[int, Value] = {}

    # -- tensors -------------------------------------------------------------------------------
    def tensor(self, index: int) -> Tensor:
        return self.graph.tensors[index]

    def value(self, index: int, op: Operator) -> Value:
        """The TOSA value of tensor `index` (a constant the first time one is read)."""
        if index not in self.values:
            t = self.tensor(index)
            if t.data is None:
                raise UserError(f"{self.where(op)}: its input tensor #{index} ('{t.name}') is computed by no "
                                "operator and is not a graph input or a constant")
            self.values[index] = self.w.const(t.data, t.elem, t.shape)
        return self.values[index]

    def where(self, op: Operator) -> str:
        return f"{self.graph.path}: {op.describe()}"

    def quantized(self, op: Operator, index: int, role: str, elems=("i8",)) -> Tensor:
        t = self.tensor(index)
        if t.elem not in elems:
            kind = "a float" if t.elem.startswith("f") else f"an {t.elem}"
            raise UserError(f"{self.where(op)}: its {role} ('{t.name}') is {kind} tensor; only {'/'.join(elems)} "
                            "quantized models are supported")
        if t.quant is None:
            raise UserError(f"{self.where(op)}: its {role} ('{t.name}') has no quantization parameters")
        return t

    # -- the graph -----------------------------------------------------------------------------
    def run(self):
        """(module, input quantization, output quantization)."""
        from . import ops
        g = self.graph
        args = []
        for i, index in enumerate(g.inputs):
            t = g.tensors[index]
            if t.elem != "i8" or t.quant is None or t.quant.per_channel:
                raise UserError(f"{g.path}: input #{i} ('{t.name}') is {t.elem}, not a per-tensor quantized int8 "
                                "tensor; only int8 models are supported")
            self.values[index] = self.w.argument(i, t.shape, t.elem)
            args.append(self.values[index])
        for op in g.operators:
            lower = ops.LOWER.get(op.name)
            if lower is None:
                raise UserError(f"{self.where(op)}: the operator is not supported (supported: "
                                f"{', '.join(sorted(ops.LOWER))})")
            if len(op.outputs) != 1:
                raise UserError(f"{self.where(op)}: {len(op.outputs)} outputs, expected 1")
            out = self.tensor(op.outputs[0])
            self.w.set_location(out.name or f"{op.name.lower()}_{op.index}", None, None)
            result = lower(self, op)
            if tuple(result.shape) != tuple(out.shape):
                raise UserError(f"{self.where(op)}: its output '{out.name}' is {list(out.shape)}, but the operator "
                                f"computes {list(result.shape)}")
            self.values[op.outputs[0]] = result
        results = []
        for i, index in enumerate(g.outputs):
            t = g.tensors[index]
            if t.elem != "i8" or t.quant is None:
                raise UserError(f"{g.path}: output #{i} ('{t.name}') is {t.elem}, not a quantized int8 tensor")
            if index not in self.values:
                raise UserError(f"{g.path}: output #{i} ('{t.name}') is computed by no operator")
            results.append(self.values[index])
        module = self.w.finish(args, results)
        quant = [[io_quant.IOQuant(g.tensors[i].quant.scale, g.tensors[i].quant.zero_point) for i in indices]
                 for indices in (g.inputs, g.outputs)]
        return module, quant[0], quant[1]

    # -- shared by the ops ---------------------------------------------------------------------
    def requantize_accumulator(self, acc: Value, real_scales, out: Tensor) -> Value:
        """int32 accumulator -> output integers: QuantizeMultiplier of each real scale, then
        MultiplyByQuantizedMultiplier (a DOUBLE_ROUND rescale), per channel when several."""
        pairs = [quantize_multiplier(float(r)) for r in real_scales]
        return self.w.rescale(acc, [p[0] for p in pairs], [p[1] for p in pairs], 0, out.quant.zero_point, out.elem)

    def clamp(self, v: Value, bounds: tuple[int, int]) -> Value:
        if tuple(bounds) == RANGE[v.elem]:
            return v
        return self.w.clamp(v, *bounds)


def import_tflite(path):
    """`.tflite` file -> (integer TOSA module, input IOQuants, output IOQuants)."""
    from ..._mlir import new_context
    from .reader import read
    graph = read(path)
    return Lowering(graph, new_context()).run()
