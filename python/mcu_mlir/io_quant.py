"""Quantization of a model's inputs and outputs, kept in the IR as `mcu.scale` / `mcu.zero_point`
argument and result attributes of the entry function, so a TOSA file carries it to model.h; and
the streaming state (`mcu.state`: which output each call hands to the next call's input)."""

from __future__ import annotations

from dataclasses import dataclass

from ._mlir import func, ir
from .ir import attributes as mcu_attrs
from .ir.ops import isa


@dataclass(frozen=True)
class IOQuant:
    scale: float
    zero_point: int
    # An output concat whose parts keep their own parameters (frontend/quantize/concat_parts.py):
    # (start, stop, scale, zero_point) per slice along `axis`; scale and zero_point are then 0.
    parts: tuple = ()
    axis: int = 0


def _parts_attr(parts, axis: int) -> ir.ArrayAttr:
    i64, f64 = ir.IntegerType.get_signless(64), ir.F64Type.get()
    return ir.ArrayAttr.get([ir.DictAttr.get({
        "axis": ir.IntegerAttr.get(i64, int(axis)), "start": ir.IntegerAttr.get(i64, int(start)),
        "stop": ir.IntegerAttr.get(i64, int(stop)), "scale": ir.FloatAttr.get(f64, float(scale)),
        "zero_point": ir.IntegerAttr.get(i64, int(zp))}) for start, stop, scale, zp in parts])


def _parts_of(attr) -> tuple[tuple, int]:
    """(((start, stop, scale, zero_point), ...), axis) of an mcu.parts attribute."""
    dicts = [ir.DictAttr(e) for e in ir.ArrayAttr(attr)]
    parts = tuple((ir.IntegerAttr(d["start"]).value, ir.IntegerAttr(d["stop"]).value, ir.FloatAttr(d["scale"]).value,
                   ir.IntegerAttr(d["zero_point"]).value) for d in dicts)
    return parts, (ir.IntegerAttr(dicts[0]["axis"]).value if dicts else 0)


def _entry(module):
    """The entry function of a Module or a builtin.module Operation."""
    body = getattr(module, "operation", module).regions[0].blocks[0]
    funcs = [op for op in body.operations if isa(op, func.FuncOp)]
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
            if getattr(q, "parts", ()):
                entries[mcu_attrs.PARTS] = _parts_attr(q.parts, q.axis)
        dicts.append(ir.DictAttr.get(entries))
    return ir.ArrayAttr.get(dicts)


def annotate(module, inputs, outputs) -> None:
    """Records objects with `.scale` / `.zero_point` (one per argument / result; an output's `.parts`
    and `.axis` where it has them) on the entry function."""
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
                parts, axis = _parts_of(d[mcu_attrs.PARTS]) if mcu_attrs.PARTS in d else ((), 0)
                out.append(IOQuant(ir.FloatAttr(d[mcu_attrs.SCALE]).value, ir.IntegerAttr(d[mcu_attrs.ZERO_POINT]).value,
                                   parts, axis))
            else:
                out.append(None)
        return out

    return get("arg_attrs"), get("res_attrs")


def parse_state(spec) -> list[tuple[int, int]]:
    """`IN:OUT[,IN:OUT...]` (or pairs already) -> [(input index, output index), ...]."""
    from .diagnostics import UserError
    if spec is None or spec == "" or spec == []:
        return []
    if isinstance(spec, str):
        pairs = []
        for part in spec.split(","):
            a, sep, b = part.strip().partition(":")
            if not sep or not a.strip().isdigit() or not b.strip().isdigit():
                raise UserError(f"--state {spec!r}: expected INPUT:OUTPUT index pairs like 1:1,2:2")
            pairs.append((int(a), int(b)))
    else:
        try:
            pairs = [(int(a), int(b)) for a, b in spec]
        except (TypeError, ValueError):
            raise UserError(f"state {spec!r}: expected (input index, output index) pairs") from None
    ins, outs = [a for a, _ in pairs], [b for _, b in pairs]
    if len(set(ins)) != len(ins) or len(set(outs)) != len(outs):
        raise UserError(f"--state {spec!r}: an input or output is named twice")
    return pairs


def check_state(pairs, input_shapes, output_shapes, where: str = "") -> None:
    """Each pair names an input and an output of the same shape; at least one input is not state."""
    from .diagnostics import UserError
    for i, j in pairs:
        if i >= len(input_shapes) or j >= len(output_shapes):
            raise UserError(f"--state {i}:{j}: the model{where} has {len(input_shapes)} input(s) and "
                            f"{len(output_shapes)} output(s)")
        if tuple(input_shapes[i]) != tuple(output_shapes[j]):
            raise UserError(f"--state {i}:{j}: input {i} has shape {tuple(input_shapes[i])}, output {j} "
                            f"{tuple(output_shapes[j])}; a state is carried from an output to an input of one shape")
    if len(pairs) == len(input_shapes):
        raise UserError("--state: every input is state; a streaming model takes at least one input per step")


def annotate_state(module, pairs) -> None:
    """Records the state pairs on the entry function (`mcu.state`, flat in, out, in, out...)."""
    fn = _entry(module)
    if fn is None or not pairs:
        return
    with module.context:
        fn.attributes[mcu_attrs.STATE] = ir.DenseI32ArrayAttr.get([v for pair in pairs for v in pair])


def read_state(module) -> list[tuple[int, int]]:
    fn = _entry(module)
    if fn is None or mcu_attrs.STATE not in fn.attributes:
        return []
    flat = list(ir.DenseI32ArrayAttr(fn.attributes[mcu_attrs.STATE]))
    return list(zip(flat[0::2], flat[1::2]))
