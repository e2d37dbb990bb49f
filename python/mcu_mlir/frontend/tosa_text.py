"""A small writer of TOSA 1.0 MLIR text (constants, shapes, ops with locations).

Text is parsed once at the end into an `ir.Module`; building it as text keeps big weights fast
(one hex string per tensor) and the printed form exactly what `tosa-opt` accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.types import NUMPY

_NP = NUMPY


def ttype(shape, elem: str) -> str:
    shape = tuple(int(d) for d in shape)
    return f"tensor<{'x'.join(str(d) for d in shape)}{'x' if shape else ''}{elem}>"


def _dense(arr: np.ndarray, elem: str) -> str:
    arr = np.asarray(arr)
    flat = arr.reshape(-1)
    if flat.size and (flat == flat[0]).all():
        v = flat[0]
        return f"dense<{_scalar(v, elem)}>"
    if elem == "i48" or flat.size <= 16:
        return "dense<[" + ", ".join(_scalar(v, elem) for v in flat) + "]>" if arr.ndim <= 1 else \
            f"dense<{_nested(arr, elem)}>"
    data = np.ascontiguousarray(arr.astype(_NP[elem]).astype(np.dtype(_NP[elem]).newbyteorder("<")))
    return f'dense<"0x{data.tobytes().hex().upper()}">'


def _nested(arr, elem):
    if arr.ndim == 0:
        return _scalar(arr.item(), elem)
    return "[" + ", ".join(_nested(a, elem) for a in arr) + "]"


def _scalar(v, elem: str) -> str:
    if elem.startswith("f"):
        f = float(v)
        if np.isfinite(f):
            return repr(f) if "e" in repr(f) or "." in repr(f) else f"{f}.0"
        return "0x" + np.float32(f).view(np.uint32).tobytes()[::-1].hex().upper()
    if elem == "i1":
        return "true" if v else "false"
    return str(int(v))


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


@dataclass
class Value:
    name: str
    shape: tuple
    elem: str

    @property
    def type(self) -> str:
        return ttype(self.shape, self.elem)


class TosaWriter:
    def __init__(self):
        self.lines: list[str] = []
        self._n = 0
        self._const_cache: dict = {}
        self.loc = "loc(unknown)"

    def fresh(self) -> str:
        self._n += 1
        return f"%v{self._n}"

    def _emit(self, text: str) -> None:
        self.lines.append(f"    {text} {self.loc}")

    # -- constants ---------------------------------------------------------------------------
    def const(self, arr, elem: str, shape=None) -> Value:
        arr = np.asarray(arr)
        shape = tuple(arr.shape if shape is None else shape)
        dense = _dense(arr.reshape(shape) if arr.size == int(np.prod(shape, dtype=np.int64)) else arr, elem)
        key = (dense, shape, elem) if len(dense) < 256 else None
        if key is not None and key in self._const_cache:
            return self._const_cache[key]
        v = Value(self.fresh(), shape, elem)
        self._emit(f'{v.name} = "tosa.const"() <{{values = {dense} : {v.type}}}> : () -> {v.type}')
        if key is not None:
            self._const_cache[key] = v
        return v

    def shape_const(self, dims) -> str:
        dims = [int(d) for d in dims]
        key = ("shape", tuple(dims))
        if key in self._const_cache:
            return self._const_cache[key]
        name = self.fresh()
        body = "[" + ", ".join(str(d) for d in dims) + "]" if dims else "[]"
        self._emit(f"{name} = tosa.const_shape {{values = dense<{body}> : tensor<{len(dims)}xindex>}} "
                   f": () -> !tosa.shape<{len(dims)}>")
        self._const_cache[key] = name
        return name

    def zp(self, value: int, elem: str) -> Value:
        return self.const(np.array([value]), elem, (1,))

    # -- generic op ----------------------------------------------------------------------------
    def op(self, name: str, operands: list, shape, elem: str, attrs: str = "",
           operand_types: list[str] | None = None) -> Value:
        v = Value(self.fresh(), tuple(int(d) for d in shape), elem)
        names = ", ".join(o.name if isinstance(o, Value) else o[0] for o in operands)
        types = operand_types or [o.type if isinstance(o, Value) else o[1] for o in operands]
        attr_text = f" {{{attrs}}}" if attrs else ""
        self._emit(f"{v.name} = {name} {names}{attr_text} : ({', '.join(types)}) -> {v.type}")
        return v

    # -- helpers for the ops used everywhere ---------------------------------------------------
    def reshape(self, x: Value, shape) -> Value:
        shape = tuple(int(d) for d in shape)
        if shape == tuple(x.shape):
            return x
        s = self.shape_const(shape)
        return self.op("tosa.reshape", [x, (s, f"!tosa.shape<{len(shape)}>")], shape, x.elem)

    def transpose(self, x: Value, perms) -> Value:
        perms = [int(p) for p in perms]
        if perms == list(range(len(perms))):
            return x
        shape = [x.shape[p] for p in perms]
        return self.op("tosa.transpose", [x], shape, x.elem,
                       f"perms = array<i32: {', '.join(map(str, perms))}>")

    def slice(self, x: Value, start, size) -> Value:
        if list(start) == [0] * len(start) and tuple(size) == tuple(x.shape):
            return x
        a, b = self.shape_const(start), self.shape_const(size)
        st = f"!tosa.shape<{len(start)}>"
        return self.op("tosa.slice", [x, (a, st), (b, st)], size, x.elem)

    def tile(self, x: Value, multiples) -> Value:
        m = self.shape_const(multiples)
        shape = [d * k for d, k in zip(x.shape, multiples)]
        return self.op("tosa.tile", [x, (m, f"!tosa.shape<{len(multiples)}>")], shape, x.elem)

    def concat(self, xs: list[Value], axis: int) -> Value:
        if len(xs) == 1:
            return xs[0]
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        return self.op("tosa.concat", xs, shape, xs[0].elem, f"axis = {axis} : i32")

    def clamp(self, x: Value, lo: int, hi: int) -> Value:
        return self.op("tosa.clamp", [x], x.shape, x.elem,
                       f"max_val = {hi} : {x.elem}, min_val = {lo} : {x.elem}")

    def rescale(self, x: Value, multipliers, shifts, in_zp: int, out_zp: int, out_elem: str,
                *, scale32: bool = True, double_round: bool = True) -> Value:
        per_channel = len(multipliers) > 1
        melem = "i32" if scale32 else "i16"
        m = self.const(np.array(multipliers), melem, (len(multipliers),))
        s = self.const(np.array(shifts), "i8", (len(shifts),))
        izp = self.zp(in_zp, x.elem)
        ozp = self.zp(out_zp, out_elem)
        mode = "DOUBLE_ROUND" if double_round and scale32 else "SINGLE_ROUND"
        return self.op("tosa.rescale", [x, m, s, izp, ozp], x.shape, out_elem,
                       f"input_unsigned = false, output_unsigned = false, "
                       f"per_channel = {'true' if per_channel else 'false'}, rounding_mode = {mode}, "
                       f"scale32 = {'true' if scale32 else 'false'}")

    def text(self, args: list[Value], results: list[Value], name: str = "main") -> str:
        sig = ", ".join(f"{a.name}: {a.type}" for a in args)
        res_types = ", ".join(r.type for r in results)
        ret = ", ".join(r.name for r in results)
        res_sig = f"({res_types})" if len(results) != 1 else res_types
        body = "\n".join(self.lines)
        return (f"module {{\n  func.func @{name}({sig}) -> {res_sig} {{\n{body}\n"
                f"    return {ret} : {res_types}\n  }}\n}}\n")
