"""Builds the integer TOSA of a lowered graph with the bindings (constants, shapes, ops with
locations), op by op, in a function whose signature is fixed at the end.

The lowering learns a graph input's integer type only when the quantize that first reads it is
reached, so ops are built in a staging block whose arguments appear as inputs are first used;
`finish` moves them into `func.func @main` with the arguments in input order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._mlir import func, ir
from ..ir.types import BYTES, NUMPY
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
        self._attr_cache: dict = {}
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
            op = ir.Operation.create("tosa.const", results=[ty], attributes={"values": _dense(arr, ty, elem)},
                                     ip=ir.InsertionPoint(self.block))
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
            op = ir.Operation.create("tosa.const_shape", results=[ir.Type.parse(f"!tosa.shape<{len(dims)}>")],
                                     attributes={"values": attr}, ip=ir.InsertionPoint(self.block))
        self._const_cache[key] = op.results[0]
        return op.results[0]

    def zp(self, value: int, elem: str) -> Value:
        return self.const(np.array([value]), elem, (1,))

    def scalar(self, value: int, rank: int, elem: str = "i32") -> Value:
        """One value shaped [1, ..., 1] (`rank` ones): an operand every elementwise op broadcasts."""
        return self.const(np.array([value]), elem, (1,) * rank)

    # -- generic op ----------------------------------------------------------------------------
    def op(self, name: str, operands: list, shape, elem: str, attrs: str = "") -> Value:
        """`name` on `operands` (Values, or (shape value, type text) pairs); `attrs` as MLIR
        attribute-dictionary text without the braces."""
        values = [o.value if isinstance(o, Value) else o[0] for o in operands]
        with self.ctx, self.location:
            attributes = self._attributes(attrs)
            shape = tuple(int(d) for d in shape)
            op = ir.Operation.create(name, results=[ttype(shape, elem)], operands=values, attributes=attributes,
                                     ip=ir.InsertionPoint(self.block))
        return Value(op.results[0], shape, elem)

    def _attributes(self, text: str) -> dict:
        if text not in self._attr_cache:
            with self.ctx:
                parsed = ir.DictAttr(ir.Attribute.parse("{" + text + "}")) if text else []
                self._attr_cache[text] = {named.name: named.attr for named in parsed}
        return self._attr_cache[text]

    # -- helpers for the ops used everywhere ---------------------------------------------------
    def reshape(self, x: Value, shape) -> Value:
        shape = tuple(int(d) for d in shape)
        if shape == tuple(x.shape):
            return x
        s = self.shape_const(shape)
        return self.op("tosa.reshape", [x, (s, None)], shape, x.elem)

    def transpose(self, x: Value, perms) -> Value:
        perms = [int(p) for p in perms]
        if perms == list(range(len(perms))):
            return x
        shape = [x.shape[p] for p in perms]
        return self.op("tosa.transpose", [x], shape, x.elem, f"perms = array<i32: {', '.join(map(str, perms))}>")

    def slice(self, x: Value, start, size) -> Value:
        if list(start) == [0] * len(start) and tuple(size) == tuple(x.shape):
            return x
        a, b = self.shape_const(start), self.shape_const(size)
        return self.op("tosa.slice", [x, (a, None), (b, None)], size, x.elem)

    def tile(self, x: Value, multiples) -> Value:
        m = self.shape_const(multiples)
        shape = [d * k for d, k in zip(x.shape, multiples)]
        return self.op("tosa.tile", [x, (m, None)], shape, x.elem)

    def concat(self, xs: list[Value], axis: int) -> Value:
        if len(xs) == 1:
            return xs[0]
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        return self.op("tosa.concat", xs, shape, xs[0].elem, f"axis = {axis} : i32")

    def clamp(self, x: Value, lo: int, hi: int) -> Value:
        return self.op("tosa.clamp", [x], x.shape, x.elem, f"max_val = {hi} : {x.elem}, min_val = {lo} : {x.elem}")

    def rescale(self, x: Value, multipliers, shifts, in_zp: int, out_zp: int, out_elem: str,
                *, scale32: bool = True, double_round: bool = True, bound: int | None = None) -> Value:
        """bound: the largest |x - in_zp| the caller can prove; every pair (multiplier, shift) must
        admit it (apply_scale_32's REQUIREs), or the lowering chose parameters no kernel computes."""
        if scale32 and x.elem == "i48":     # TOSA's ERROR_IF: tosa_reference_model refuses the graph
            raise RuntimeError("internal error: a rescale of an int48 value takes 16-bit multipliers (scale32 = false)")
        if bound is not None and scale32:
            from .qmath import rescale_admits
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
        return self.op("tosa.rescale", [x, m, s, izp, ozp], x.shape, out_elem,
                       f"input_unsigned = false, output_unsigned = false, "
                       f"per_channel = {'true' if per_channel else 'false'}, rounding_mode = #tosa.rounding_mode<{mode}>, "
                       f"scale32 = {'true' if scale32 else 'false'}")

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
