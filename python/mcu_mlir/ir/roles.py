"""What TOSA ops are, as sets of op classes: elementwise, accumulating, layout-sensitive, ...

Each role is defined once, here, from the bindings' op classes (a misspelt op fails at import);
passes test a role with `isa(op, *ROLE)` or `type(view) in ROLE`. The first sets follow the
categories of the TOSA specification; the others are what the passes ask of an op.
"""

from __future__ import annotations

from .._mlir import tosa


def _role(*classes: type) -> frozenset[type]:
    return frozenset(classes)


# -- TOSA's own categories ------------------------------------------------------------------------
UNARY = _role(tosa.AbsOp, tosa.BitwiseNotOp, tosa.CeilOp, tosa.ClzOp, tosa.CosOp, tosa.ExpOp, tosa.FloorOp,
              tosa.LogOp, tosa.LogicalNotOp, tosa.NegateOp, tosa.ReciprocalOp, tosa.RsqrtOp, tosa.SinOp)
BINARY = _role(tosa.AddOp, tosa.ArithmeticRightShiftOp, tosa.BitwiseAndOp, tosa.BitwiseOrOp, tosa.BitwiseXorOp,
               tosa.IntDivOp, tosa.LogicalAndOp, tosa.LogicalLeftShiftOp, tosa.LogicalRightShiftOp,
               tosa.LogicalOrOp, tosa.LogicalXorOp, tosa.MaximumOp, tosa.MinimumOp, tosa.MulOp, tosa.PowOp,
               tosa.SubOp)
COMPARISON = _role(tosa.EqualOp, tosa.GreaterOp, tosa.GreaterEqualOp)
ACTIVATION = _role(tosa.ClampOp, tosa.ErfOp, tosa.SigmoidOp, tosa.TanhOp)
REDUCTION = _role(tosa.ReduceAllOp, tosa.ReduceAnyOp, tosa.ReduceMaxOp, tosa.ReduceMinOp, tosa.ReduceProductOp,
                  tosa.ReduceSumOp)
CONSTANT = _role(tosa.ConstOp, tosa.ConstShapeOp)

# Ops the specification defines on floating-point types only.
FLOAT_ONLY = _role(tosa.CeilOp, tosa.CosOp, tosa.ErfOp, tosa.ExpOp, tosa.FloorOp, tosa.LogOp, tosa.PowOp,
                   tosa.ReciprocalOp, tosa.RsqrtOp, tosa.SigmoidOp, tosa.SinOp, tosa.TanhOp)

# -- what the passes ask ----------------------------------------------------------------------------
# Output element i reads element i of each operand (after broadcasting).
ELEMENTWISE = UNARY | BINARY | COMPARISON | ACTIVATION | _role(
    tosa.SelectOp, tosa.CastOp, tosa.RescaleOp, tosa.TableOp, tosa.IdentityOp)
# The elementwise ops of integer programs (quantized models).
INTEGER_ELEMENTWISE = ELEMENTWISE - FLOAT_ONLY

# Compute an int32 / int48 accumulator from i8 / i16 inputs (a rescale follows them).
ACCUMULATING = _role(tosa.Conv2DOp, tosa.DepthwiseConv2DOp, tosa.TransposeConv2DOp, tosa.Conv3DOp,
                     tosa.MatMulOp)
# Output rows read a window of input rows (kernel, stride, dilation, pad).
WINDOWED = _role(tosa.Conv2DOp, tosa.DepthwiseConv2DOp, tosa.AvgPool2dOp, tosa.MaxPool2dOp)
# Compute in NHWC (or another fixed layout) by TOSA's definition.
LAYOUT_SENSITIVE = _role(
    tosa.Conv2DOp, tosa.Conv3DOp, tosa.DepthwiseConv2DOp, tosa.TransposeConv2DOp, tosa.MaxPool2dOp,
    tosa.AvgPool2dOp, tosa.MaxPool2dAdaptiveOp, tosa.AvgPool2dAdaptiveOp, tosa.ResizeOp, tosa.MatMulOp,
    tosa.MatMulTOp, tosa.GatherOp, tosa.ScatterOp, tosa.FFT2dOp, tosa.RFFT2dOp, tosa.ArgMaxOp)
# Move data without arithmetic and keep every element (a reshape is free, a transpose a copy).
VIEWS = _role(tosa.ReshapeOp, tosa.TransposeOp)
# Reads one contiguous-or-strided part of its input.
SLICES = _role(tosa.SliceOp)
# An `axis` attribute names a data dimension.
AXIS_ATTRIBUTE = REDUCTION | _role(tosa.ConcatOp, tosa.ReverseOp)
