"""Quantization of a model's inputs and outputs, kept in the IR as `mcu.scale` / `mcu.zero_point`
argument and result attributes of the entry function, so a TOSA file carries it to model.h."""

from __future__ import annotations

from dataclasses import dataclass

from ._mlir import ir
from .ir import attributes as mcu_attrs


@dataclass(frozen=True)
class IOQuant:
    scale: float
    zero_point: int


def _entry(module):
    """The entry function of a Module or a builtin.module Operation."""
    body = getattr(module, "operation", module).regions[0].blocks[0]
    funcs = [op for op in body.operations if op.operation.name == "func.func"]
    return funcs[0] if len(funcs) == 1 else next(
        (f for f in funcs if ir.StringAttr(f.attributes["sym_name"]).value == "main"), funcs[0] if funcs else None)


def _with(old, count: int, quants) -> ir.ArrayAttr:
    dicts = []
    for i in range(count):
        entries = {}
        if old is not None and i < len(old):
            d = ir.DictAttr(old[i])
            entries = {d[j].name: d[j].attr for j in range(len(d))}
        q = quants[i] if i < len(quants) else None
        if q is not None:
            entries[mcu_attrs.SCALE] = ir.FloatAttr.get(ir.F64Type.get(), float(q.scale))
            entries[mcu_attrs.ZERO_POINT] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(q.zero_point))
        dicts.append(ir.DictAttr.get(entries))
    return ir.ArrayAttr.get(dicts)


def annotate(module, inputs, outputs) -> None:
    """Records objects with `.scale` / `.zero_point` (one per argument / result) on the entry function."""
    fn = _entry(module)
    if fn is None:
        return
    with module.context, ir.Location.unknown():
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        for key, count, quants in (("arg_attrs", len(ftype.inputs), inputs), ("res_attrs", len(ftype.results), outputs)):
            old = fn.attributes[key] if key in fn.attributes else None
            fn.attributes[key] = _with(old, count, list(quants or []))


def read(module) -> tuple[list[IOQuant | None], list[IOQuant | None]]:
    """The recorded quantization per argument and per result (None where there is none)."""
    fn = _entry(module)
    if fn is None:
        return [], []

    def get(key):
        if key not in fn.attributes:
            return []
        out = []
        for entry in ir.ArrayAttr(fn.attributes[key]):
            d = ir.DictAttr(entry)
            if mcu_attrs.SCALE in d and mcu_attrs.ZERO_POINT in d:
                out.append(IOQuant(ir.FloatAttr(d[mcu_attrs.SCALE]).value, ir.IntegerAttr(d[mcu_attrs.ZERO_POINT]).value))
            else:
                out.append(None)
        return out

    return get("arg_attrs"), get("res_attrs")
