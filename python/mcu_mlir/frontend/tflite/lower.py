"""What every TFLite op's lowering shares: the graph's tensors as TOSA values, TFLite's
requantisation and its fused activations as clamps.

NHWC stays NHWC (TFLite's layout is the kernels' layout: no transposes). Each op is built in the
form the torch frontend gives the same op (lowering/conv.py, pool.py, elementwise.py, softmax.py),
so the backend's patterns put it on the same CMSIS-NN kernel:
  CONV_2D / DEPTHWISE_CONV_2D  conv -> per-channel RESCALE (DOUBLE_ROUND) -> CLAMP (fused activation)
  FULLY_CONNECTED              matmul -> add int32 bias -> RESCALE -> CLAMP
  AVERAGE_POOL_2D              avg_pool on the raw integers (TFLite divides by the valid cells)
  ADD                          (x - zp) << 20, rescaled to twice the larger scale, add, rescale
  SOFTMAX                      arm_softmax_s8's integers (fixed_point/cmsis_softmax.py), TFLite's beta scaling
TFLite's QuantizeMultiplier is qmath.quantize_multiplier; its MultiplyByQuantizedMultiplier is TOSA's
DOUBLE_ROUND rescale bit for bit (its doubling high multiply rounds half up, as a rescale with a
shift of 31 or less does; above 31 the double rounding is TFLite's two roundings), as long as a
factor of 1 or more does not overflow TFLite's int32 left shift of the accumulator.
"""

from __future__ import annotations

import numpy as np

from ...diagnostics import UserError
from ...ir.types import RANGE
from ...fixed_point.qmath import quantize_multiplier
from ..lowering.tosa_builder import TosaBuilder, Value
from .reader import Graph, Operator, Tensor

# ActivationFunctionType of the schema.
NO_ACTIVATION, RELU, RELU_N1_TO_1, RELU6 = 0, 1, 2, 3
ACTIVATION_NAMES = {4: "TANH", 5: "SIGN_BIT"}
SAME, VALID = 0, 1
# The activation types of the ops that take TFLite's 16x8 quantization as well as int8.
ACTIVATIONS = ("i8", "i16")
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
        self.state = None       # variables.State: the variables and variable tensors kept across calls

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
        return op.describe()

    def quantized(self, op: Operator, index: int, role: str, elems=("i8",)) -> Tensor:
        t = self.tensor(index)
        if t.elem not in elems:
            kind = "a float" if t.elem.startswith("f") else f"an {t.elem}"
            raise UserError(f"{self.where(op)}: its {role} ('{t.name}') is {kind} tensor; only {'/'.join(elems)} "
                            "quantized models are supported")
        if t.quant is None:
            raise UserError(f"{self.where(op)}: its {role} ('{t.name}') has no quantization parameters")
        if t.elem == "i16" and np.any(t.quant.zero_points != 0):
            raise UserError(f"{self.where(op)}: its {role} ('{t.name}') is int16 with zero point "
                            f"{t.quant.zero_point}; TFLite's int16 kernels take zero point 0")
        return t

    def same_type(self, op: Operator, tensors, out: Tensor) -> None:
        """The op's activations share one integer type (QUANTIZE converts between int8 and int16)."""
        for t in tensors:
            if t.elem != out.elem:
                raise UserError(f"{self.where(op)}: its input '{t.name}' is {t.elem} but its output {out.elem}; "
                                "int8 and int16 do not mix within an operator")

    # -- shared by the ops ---------------------------------------------------------------------
    def multiplier(self, op: Operator, real: float) -> tuple[int, int]:
        """TFLite's QuantizeMultiplier of `real` as a TOSA (multiplier, shift)."""
        try:
            return quantize_multiplier(float(real))
        except ValueError:
            raise UserError(f"{op.describe()}: its quantization gives the rescale factor {float(real):g}, which no "
                            "32-bit multiplier and shift express") from None

    def requantize_accumulator(self, op: Operator, acc: Value, real_scales, out: Tensor) -> Value:
        """int32 accumulator -> output integers: QuantizeMultiplier of each real scale, then
        MultiplyByQuantizedMultiplier (a DOUBLE_ROUND rescale), per channel when they differ (one
        multiplier lets the backend pick the per-tensor kernels: arm_fully_connected_s8)."""
        pairs = [self.multiplier(op, r) for r in real_scales]
        if len(set(pairs)) == 1:
            pairs = pairs[:1]
        return self.w.rescale(acc, [p[0] for p in pairs], [p[1] for p in pairs], 0, out.quant.zero_point, out.elem)

    def clamp(self, v: Value, bounds: tuple[int, int]) -> Value:
        if tuple(bounds) == RANGE[v.elem]:
            return v
        return self.w.clamp(v, *bounds)
