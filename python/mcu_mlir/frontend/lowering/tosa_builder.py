"""Builds the integer TOSA of a lowered graph with the bindings (constants, shapes, ops with
locations), op by op, in a function whose signature is fixed at the end.

Each TOSA op the frontend builds has a typed method here (`add`, `mul`, `rescale`, `conv2d`,
`max_pool2d`, `reduce_sum`, ...): it builds the op through its `tosa` op class, its attributes
with the bindings' attribute classes, and derives the result type from the operands, so no
lowering names an op or writes attribute text.

The lowering learns a graph input's integer type only when the quantize that first reads it is
reached, so ops are built in a staging block whose arguments appear as inputs are first used;
`finish` moves them into `func.func @main` with the arguments in input order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._mlir import func, ir, tosa
from ...ir.types import BYTES, NUMPY
from .tosa_text import dense_text


def ttype(shape, elem: str) -> ir.RankedTensorType:
    return ir.RankedTensorType.get([int(d) for d in shape], _element_type(elem))


def _element_type(elem: str) -> ir.Type:
    return ir.Type.parse(elem)


@dataclass
class Value:
    """A tensor of the TOSA being built: its SSA value, shape and element type name."""
    value: ir.Value
    shape: tuple
    elem: str

    @property
    def type(self) -> ir.Type:
        return self.value.type


def _dense(arr: np.ndarray, ty: ir.RankedTensorType, elem: str) -> ir.Attribute:
    flat = np.asarray(arr).reshape(-1)
    if flat.size and (flat == flat[0]).all() and elem != "i48":
        et = _element_type(elem)
        scalar = ir.FloatAttr.get(et, float(flat[0])) if elem.startswith("f") else \
            ir.IntegerAttr.get(et, int(flat[0]))
        return ir.DenseElementsAttr.get_splat(ty, scalar)
    if elem in NUMPY and elem != "i1":
        data = np.ascontiguousarray(np.asarray(arr).astype(NUMPY[elem]))
        return ir.DenseElementsAttr.get(data, type=ty)
    if elem == "i1":
        return ir.DenseElementsAttr.get(np.ascontiguousarray(np.asarray(arr).astype(np.bool_)), type=ty)
    # int48 (numpy has no such integer): the attribute's text.
    if flat.size and (flat == flat[0]).all():
        body = str(int(flat[0]))
    else:
        body = "[" + ", ".join(str(int(v)) for v in flat) + "]"
        if np.asarray(arr).ndim > 1:
            return ir.Attribute.parse(f"dense<{_nested(np.asarray(arr))}> : {ty}")
    return ir.Attribute.parse(f"dense<{body}> : {ty}")


def _nested(arr) -> str:
    if arr.ndim == 0:
        return str(int(arr))
    return "[" + ", ".join(_nested(a) for a in arr) + "]"


class TosaBuilder:
    def __init__(self, ctx: ir.Context):
        self.ctx = ctx
        with ctx, ir.Location.unknown():
            self.module = ir.Module.create()
            holder = ir.Operation.create("func.func", regions=1, attributes={
                "sym_name": ir.StringAttr.get("staging"),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get([], []))},
                ip=ir.InsertionPoint(self.module.body))
            self._holder = holder
            self.block = holder.regions[0].blocks.append()
        self._args: dict[int, Value] = {}
        self._const_cache: dict = {}
        self.location = ir.Location.unknown(ctx)

    # -- locations and arguments ---------------------------------------------------------------
    def set_location(self, name: str, file: str | None, line: int | None) -> None:
        with self.ctx:
            child = ir.Location.file(file, line, 0) if file else None
            self.location = ir.Location.name(name, childLoc=child) if child else ir.Location.name(name)

    def argument(self, index: int, shape, elem: str) -> Value:
        """Graph input `index` (created on first use; its type is fixed then)."""
        if index not in self._args:
            with self.ctx, ir.Location.unknown():
                arg = self.block.add_argument(ttype(shape, elem), ir.Location.unknown())
            self._args[index] = Value(arg, tuple(int(d) for d in shape), elem)
        return self._args[index]

    # -- constants -----------------------------------------------------------------------------
    def const(self, arr, elem: str, shape=None) -> Value:
        arr = np.asarray(arr)
        shape = tuple(int(d) for d in (arr.shape if shape is None else shape))
        if arr.size == int(np.prod(shape, dtype=np.int64)):
            arr = arr.reshape(shape)
        # Small constants (printed in under 256 characters) are shared: one constant, one C array.
        flat = arr.reshape(-1)
        small = elem == "i48" or flat.size <= 16 or arr.size * BYTES.get(elem, 8) <= 128 or (flat == flat[0]).all()
        text = dense_text(arr, elem) if small else ""
        key = (text, shape, elem) if small and len(text) < 256 else None
        if key is not None and key in self._const_cache:
            return self._const_cache[key]
        with self.ctx, self.location:
            ty = ttype(shape, elem)
            if arr.size != int(np.prod(shape, dtype=np.int64)):  # a scalar splat to `shape`
                arr = np.full(shape, np.asarray(arr).reshape(-1)[0])
            op = tosa.ConstOp(_dense(arr, ty, elem), results=[ty], ip=ir.InsertionPoint(self.block))
        v = Value(op.results[0], shape, elem)
        if key is not None:
            self._const_cache[key] = v
        return v

    def shape_const(self, dims) -> ir.Value:
        dims = [int(d) for d in dims]
        key = ("shape", tuple(dims))
        if key in self._const_cache:
            return self._const_cache[key]
        with self.ctx, self.location:
            attr = ir.DenseElementsAttr.get(np.asarray(dims, dtype=np.int64),
                                            type=ir.RankedTensorType.get([len(dims)], ir.IndexType.get()))
            # `!tosa.shape<n>` has no Python class: its text is the only way to name it.
            op = tosa.ConstShapeOp(ir.Type.parse(f"!tosa.shape<{len(dims)}>"), attr, ip=ir.InsertionPoint(self.block))
        self._const_cache[key] = op.results[0]
        return op.results[0]

    def zp(self, value: int, elem: str) -> Value:
        return self.const(np.array([value]), elem, (1,))

    def scalar(self, value: int, rank: int, elem: str = "i32") -> Value:
        """One value shaped [1, ..., 1] (`rank` ones): an operand every elementwise op broadcasts."""
        return self.const(np.array([value]), elem, (1,) * rank)

    # -- building one op ----------------------------------------------------------------------
    def _emit(self, op_class, shape, elem: str, *operands, **attributes) -> Value:
        """One `op_class` (a `tosa` OpView) on `operands` (Values, shape values, or a list of values
        for a variadic operand), its result typed `shape` x `elem`; `attributes` are the class's own
        keyword arguments."""
        values = [o.value if isinstance(o, Value) else o for o in operands]
        shape = tuple(int(d) for d in shape)
        with self.ctx, self.location:
            ty = ttype(shape, elem)
            ip = ir.InsertionPoint(self.block)
            if op_class in _RESULT_TYPE_BY_KEYWORD:
                op = op_class(*values, **attributes, results=[ty], ip=ip)
            else:
                op = op_class(ty, *values, **attributes, ip=ip)
        return Value(op.result, shape, elem)

    def _elementwise(self, op_class, operands, elem: str | None = None, **attributes) -> Value:
        """An elementwise op: the result has the operands' broadcast shape and, unless given, the
        first operand's element type."""
        shape = np.broadcast_shapes(*(tuple(o.shape) for o in operands))
        return self._emit(op_class, shape, elem or operands[0].elem, *operands, **attributes)

    # -- elementwise ---------------------------------------------------------------------------
    def add(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.AddOp, [a, b])

    def sub(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.SubOp, [a, b])

    def mul(self, a: Value, b: Value, shift: int = 0) -> Value:
        """a * b >> shift (rounded), in int32."""
        shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return self._emit(tosa.MulOp, shape, "i32", a, b, self.zp(shift, "i8"))

    def intdiv(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.IntDivOp, [a, b])

    def maximum(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.MaximumOp, [a, b])

    def minimum(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.MinimumOp, [a, b])

    def arithmetic_right_shift(self, a: Value, b: Value, *, round: bool) -> Value:
        return self._elementwise(tosa.ArithmeticRightShiftOp, [a, b], round=self._bool(round))

    def logical_left_shift(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.LogicalLeftShiftOp, [a, b])

    def logical_right_shift(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.LogicalRightShiftOp, [a, b])

    def bitwise_and(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.BitwiseAndOp, [a, b])

    def logical_and(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.LogicalAndOp, [a, b])

    def logical_not(self, a: Value) -> Value:
        return self._elementwise(tosa.LogicalNotOp, [a])

    def equal(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.EqualOp, [a, b], "i1")

    def greater(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.GreaterOp, [a, b], "i1")

    def greater_equal(self, a: Value, b: Value) -> Value:
        return self._elementwise(tosa.GreaterEqualOp, [a, b], "i1")

    def select(self, condition: Value, on_true: Value, on_false: Value) -> Value:
        return self._elementwise(tosa.SelectOp, [condition, on_true, on_false], on_true.elem)

    def abs(self, x: Value) -> Value:
        return self._elementwise(tosa.AbsOp, [x])

    def clz(self, x: Value) -> Value:
        return self._elementwise(tosa.ClzOp, [x])

    def cast(self, x: Value, elem: str) -> Value:
        return self._elementwise(tosa.CastOp, [x], elem)

    def table(self, x: Value, table: Value) -> Value:
        """An int8 lookup (int8 result), or an int16 one interpolated in 513 points (int32 result)."""
        return self._emit(tosa.TableOp, x.shape, "i8" if x.elem == "i8" else "i32", x, table)

    # -- reductions ----------------------------------------------------------------------------
    def _reduce(self, op_class, x: Value, axis: int, elem: str | None = None, keep: bool = True) -> Value:
        shape = list(x.shape)
        if keep:
            shape[axis] = 1
        else:
            del shape[axis]
        return self._emit(op_class, shape, elem or x.elem, x, axis=self._i32(axis))

    def reduce_sum(self, x: Value, axis: int) -> Value:
        return self._reduce(tosa.ReduceSumOp, x, axis)

    def reduce_max(self, x: Value, axis: int) -> Value:
        return self._reduce(tosa.ReduceMaxOp, x, axis)

    def reduce_min(self, x: Value, axis: int) -> Value:
        return self._reduce(tosa.ReduceMinOp, x, axis)

    def argmax(self, x: Value, axis: int) -> Value:
        """The int32 index of the largest value along `axis` (the axis is dropped)."""
        return self._reduce(tosa.ArgMaxOp, x, axis, "i32", keep=False)

    # -- data movement -------------------------------------------------------------------------
    def reshape(self, x: Value, shape) -> Value:
        shape = tuple(int(d) for d in shape)
        if shape == tuple(x.shape):
            return x
        return self._emit(tosa.ReshapeOp, shape, x.elem, x, self.shape_const(shape))

    def transpose(self, x: Value, perms) -> Value:
        perms = [int(p) for p in perms]
        if perms == list(range(len(perms))):
            return x
        shape = [x.shape[p] for p in perms]
        return self._emit(tosa.TransposeOp, shape, x.elem, x, perms=self._i32s(perms))

    def slice(self, x: Value, start, size) -> Value:
        if list(start) == [0] * len(start) and tuple(size) == tuple(x.shape):
            return x
        return self._emit(tosa.SliceOp, size, x.elem, x, self.shape_const(start), self.shape_const(size))

    def tile(self, x: Value, multiples) -> Value:
        shape = [d * k for d, k in zip(x.shape, multiples)]
        return self._emit(tosa.TileOp, shape, x.elem, x, self.shape_const(multiples))

    def concat(self, xs: list[Value], axis: int) -> Value:
        if len(xs) == 1:
            return xs[0]
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        return self._emit(tosa.ConcatOp, shape, xs[0].elem, [x.value for x in xs], axis=self._i32(axis))

    def reverse(self, x: Value, axis: int) -> Value:
        return self._emit(tosa.ReverseOp, x.shape, x.elem, x, axis=self._i32(axis))

    def pad(self, x: Value, amounts, fill: int) -> Value:
        """x padded by `amounts` (before / after, per dim) with the integer `fill`."""
        shape = [d + amounts[2 * i] + amounts[2 * i + 1] for i, d in enumerate(x.shape)]
        padding = self.shape_const(amounts)
        return self._emit(tosa.PadOp, shape, x.elem, x, padding, self.zp(fill, x.elem))

    def gather(self, values: Value, indices: Value) -> Value:
        """values [N, K, C] at indices [N, W]: [N, W, C]."""
        shape = (values.shape[0], indices.shape[1], values.shape[2])
        return self._emit(tosa.GatherOp, shape, values.elem, values, indices)

    def scatter(self, values: Value, indices: Value, updates: Value) -> Value:
        """values [N, K, C] with rows indices [N, W] replaced by updates [N, W, C]."""
        return self._emit(tosa.ScatterOp, values.shape, values.elem, values, indices, updates)

    def resize(self, x: Value, scale, offset, border, *, bilinear: bool, out_hw) -> Value:
        """NHWC resize; bilinear sums weighted values in int32 (int8) or int48 (int16)."""
        params = [self.shape_const(scale), self.shape_const(offset), self.shape_const(border)]
        elem = ("i32" if x.elem == "i8" else "i48") if bilinear else x.elem
        shape = (x.shape[0], out_hw[0], out_hw[1], x.shape[3])
        mode = self._tosa_enum("resize_mode", "BILINEAR" if bilinear else "NEAREST_NEIGHBOR")
        return self._emit(tosa.ResizeOp, shape, elem, x, *params, mode=mode)

    # -- arithmetic on tensors -----------------------------------------------------------------
    def matmul(self, a: Value, b: Value, a_zp: int, b_zp: int) -> Value:
        """[B, M, K] x [B, K, N]: int8 accumulates in int32, int16 in int48."""
        shape = (a.shape[0], a.shape[1], b.shape[2])
        elem = "i48" if a.elem == "i16" else "i32"
        return self._emit(tosa.MatMulOp, shape, elem, a, b, self.zp(a_zp, a.elem), self.zp(b_zp, b.elem))

    def conv2d(self, x: Value, weight: Value, bias: Value, *, input_zp: int, pad, stride, dilation) -> Value:
        """NHWC x weight [OC, KH, KW, IC]; accumulates in the bias's type."""
        oh, ow = _window_output(x.shape, weight.shape[1:3], pad, stride, dilation)
        return self._conv(tosa.Conv2DOp, (x.shape[0], oh, ow, weight.shape[0]), x, weight, bias, input_zp,
                          pad=self._i64s(pad), stride=self._i64s(stride), dilation=self._i64s(dilation))

    def depthwise_conv2d(self, x: Value, weight: Value, bias: Value, *, input_zp: int, pad, stride,
                         dilation) -> Value:
        """NHWC x weight [KH, KW, C, M]: C * M output channels."""
        oh, ow = _window_output(x.shape, weight.shape[0:2], pad, stride, dilation)
        shape = (x.shape[0], oh, ow, weight.shape[2] * weight.shape[3])
        return self._conv(tosa.DepthwiseConv2DOp, shape, x, weight, bias, input_zp, pad=self._i64s(pad),
                          stride=self._i64s(stride), dilation=self._i64s(dilation))

    def transpose_conv2d(self, x: Value, weight: Value, bias: Value, *, input_zp: int, out_pad, stride) -> Value:
        """NHWC x weight [OC, KH, KW, IC]; `out_pad` crops (negative) or extends the full output."""
        oh = (x.shape[1] - 1) * stride[0] + weight.shape[1] + out_pad[0] + out_pad[1]
        ow = (x.shape[2] - 1) * stride[1] + weight.shape[2] + out_pad[2] + out_pad[3]
        return self._conv(tosa.TransposeConv2DOp, (x.shape[0], oh, ow, weight.shape[0]), x, weight, bias,
                          input_zp, out_pad=self._i64s(out_pad), stride=self._i64s(stride))

    def _conv(self, op_class, shape, x, weight, bias, input_zp: int, **attributes) -> Value:
        acc = bias.elem
        return self._emit(op_class, shape, acc, x, weight, bias, self.zp(input_zp, x.elem),
                          self.zp(0, weight.elem), acc_type=self._type(acc), **attributes)

    def max_pool2d(self, x: Value, *, kernel, stride, pad) -> Value:
        oh, ow = _window_output(x.shape, kernel, pad, stride, (1, 1))
        return self._emit(tosa.MaxPool2dOp, (x.shape[0], oh, ow, x.shape[3]), x.elem, x,
                          kernel=self._i64s(kernel), stride=self._i64s(stride), pad=self._i64s(pad))

    def avg_pool2d(self, x: Value, *, kernel, stride, pad) -> Value:
        """The mean of the raw integers (zero points 0), accumulated in int32."""
        oh, ow = _window_output(x.shape, kernel, pad, stride, (1, 1))
        zp = self.zp(0, x.elem)
        return self._emit(tosa.AvgPool2dOp, (x.shape[0], oh, ow, x.shape[3]), x.elem, x, zp, zp,
                          kernel=self._i64s(kernel), stride=self._i64s(stride), pad=self._i64s(pad),
                          acc_type=self._type("i32"))

    def clamp(self, x: Value, lo: int, hi: int) -> Value:
        with self.ctx:
            et = _element_type(x.elem)
            bounds = ir.IntegerAttr.get(et, int(lo)), ir.IntegerAttr.get(et, int(hi))
        return self._emit(tosa.ClampOp, x.shape, x.elem, x, min_val=bounds[0], max_val=bounds[1])

    def rescale(self, x: Value, multipliers, shifts, in_zp: int, out_zp: int, out_elem: str,
                *, scale32: bool = True, double_round: bool = True, bound: int | None = None) -> Value:
        """bound: the largest |x - in_zp| the caller can prove; every pair (multiplier, shift) must
        admit it (apply_scale_32's REQUIREs), or the lowering chose parameters no kernel computes."""
        if scale32 and x.elem == "i48":     # TOSA's ERROR_IF: tosa_reference_model refuses the graph
            raise RuntimeError("internal error: a rescale of an int48 value takes 16-bit multipliers (scale32 = false)")
        if bound is not None and scale32:
            from ...fixed_point.qmath import rescale_admits
            for m_, s_ in zip(multipliers, shifts):
                if not rescale_admits(int(bound), int(m_), int(s_), double_round):
                    raise RuntimeError(f"internal error: a rescale by {m_} * 2**-{s_} of values up to {int(bound)} "
                                       "leaves apply_scale_32's REQUIREs (value < 2**(shift-1), an int32 result)")
        per_channel = len(multipliers) > 1
        m = self.const(np.array(multipliers), "i32" if scale32 else "i16", (len(multipliers),))
        s = self.const(np.array(shifts), "i8", (len(shifts),))
        izp = self.zp(in_zp, x.elem)
        ozp = self.zp(out_zp, out_elem)
        mode = "DOUBLE_ROUND" if double_round and scale32 else "SINGLE_ROUND"
        return self._emit(tosa.RescaleOp, x.shape, out_elem, x, m, s, izp, ozp,
                          scale32=self._bool(scale32), rounding_mode=self._tosa_enum("rounding_mode", mode),
                          per_channel=self._bool(per_channel), input_unsigned=self._bool(False),
                          output_unsigned=self._bool(False))

    # -- attributes (the bindings build them in a context) ------------------------------------
    def _i32(self, value: int) -> ir.IntegerAttr:
        with self.ctx:
            return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))

    def _i32s(self, values) -> ir.DenseI32ArrayAttr:
        with self.ctx:
            return ir.DenseI32ArrayAttr.get([int(v) for v in values])

    def _i64s(self, values) -> ir.DenseI64ArrayAttr:
        with self.ctx:
            return ir.DenseI64ArrayAttr.get([int(v) for v in values])

    def _bool(self, value: bool) -> ir.BoolAttr:
        with self.ctx:
            return ir.BoolAttr.get(bool(value))

    def _type(self, elem: str) -> ir.TypeAttr:
        with self.ctx:
            return ir.TypeAttr.get(_element_type(elem))

    def _tosa_enum(self, kind: str, case: str) -> ir.Attribute:
        """A TOSA enum attribute (`#tosa.rounding_mode<DOUBLE_ROUND>`): the bindings have no
        constructor for these, so this is the one place that spells one."""
        with self.ctx:
            return ir.Attribute.parse(f"#tosa.{kind}<{case}>")

    # -- the function --------------------------------------------------------------------------
    def finish(self, args: list[Value], results: list[Value], name: str = "main") -> ir.Module:
        """`func.func @name(args) -> results` holding every op built, in order."""
        with self.ctx, ir.Location.unknown():
            fn_type = ir.FunctionType.get([a.type for a in args], [r.type for r in results])
            fn = func.FuncOp(name, fn_type, ip=ir.InsertionPoint(self.module.body))
            entry = fn.add_entry_block()
            for old, new in zip([a.value for a in args], entry.arguments):
                old.replace_all_uses_with(new)
            ret = func.ReturnOp([r.value for r in results], ip=ir.InsertionPoint(entry))
            for op in list(self.block.operations):
                op.operation.move_before(ret)
            self._holder.erase()
        return self.module


# Ops whose bindings take the result type as `results=` (the others take it first).
_RESULT_TYPE_BY_KEYWORD = frozenset({tosa.ReduceSumOp, tosa.ReduceMaxOp, tosa.ReduceMinOp, tosa.EqualOp,
                                     tosa.ReshapeOp, tosa.ConcatOp})


def _window_output(shape, kernel, pad, stride, dilation) -> tuple[int, int]:
    """The output height and width of a window op on NHWC `shape` (pad: top, bottom, left, right)."""
    return tuple((shape[1 + a] + pad[2 * a] + pad[2 * a + 1] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1
                 for a in range(2))
