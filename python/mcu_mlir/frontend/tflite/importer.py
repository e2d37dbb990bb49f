"""A `.tflite` file -> integer TOSA computing what TFLite Micro's reference kernels compute: the
graph read and checked (reader.py), each operator lowered in order (ops.py), inputs and outputs
with their int8 quantization."""

from __future__ import annotations

from ... import io_quant
from ...diagnostics import UserError
from .lower import Lowering
from .ops import LOWER


def import_tflite(path):
    """`.tflite` file -> (integer TOSA module, input IOQuants, output IOQuants)."""
    from ..._mlir import new_context
    from .reader import read
    return build_module(Lowering(read(path), new_context()))


def build_module(lw: Lowering):
    """(module, input quantization, output quantization) of the graph `lw` lowers."""
    g = lw.graph
    args = []
    for i, index in enumerate(g.inputs):
        t = g.tensors[index]
        if t.elem != "i8" or t.quant is None or t.quant.per_channel:
            raise UserError(f"input #{i} ('{t.name}') is {t.elem}, not a per-tensor quantized int8 "
                            "tensor; only int8 models are supported")
        lw.values[index] = lw.w.argument(i, t.shape, t.elem)
        args.append(lw.values[index])
    for op in g.operators:
        lower = LOWER.get(op.name)
        if lower is None:
            raise UserError(f"{lw.where(op)}: the operator is not supported (supported: "
                            f"{', '.join(sorted(LOWER))})")
        if len(op.outputs) != 1:
            raise UserError(f"{lw.where(op)}: {len(op.outputs)} outputs, expected 1")
        out = lw.tensor(op.outputs[0])
        lw.w.set_location(out.name or f"{op.name.lower()}_{op.index}", None, None)
        result = lower(lw, op)
        if tuple(result.shape) != tuple(out.shape):
            raise UserError(f"{lw.where(op)}: its output '{out.name}' is {list(out.shape)}, but the operator "
                            f"computes {list(result.shape)}")
        lw.values[op.outputs[0]] = result
    results = []
    for i, index in enumerate(g.outputs):
        t = g.tensors[index]
        if t.elem != "i8" or t.quant is None:
            raise UserError(f"output #{i} ('{t.name}') is {t.elem}, not a quantized int8 tensor")
        if index not in lw.values:
            raise UserError(f"output #{i} ('{t.name}') is computed by no operator")
        results.append(lw.values[index])
    module = lw.w.finish(args, results)
    quant = [[io_quant.IOQuant(g.tensors[i].quant.scale, g.tensors[i].quant.zero_point) for i in indices]
             for indices in (g.inputs, g.outputs)]
    return module, quant[0], quant[1]
