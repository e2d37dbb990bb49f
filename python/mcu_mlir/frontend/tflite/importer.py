"""A `.tflite` file -> integer TOSA computing what TFLite Micro's reference kernels compute: the
graph read and checked (reader.py), each operator lowered in order (ops.py), inputs and outputs
with their int8 or int16 quantization; what persists across calls as more inputs and outputs, the
streaming state (variables.py)."""

from __future__ import annotations

from ... import io_quant
from ...diagnostics import UserError
from .lower import ACTIVATIONS, Lowering
from .ops import LOWER
from .variables import VARIABLE_OPS, State


def import_tflite(path):
    """`.tflite` file -> (integer TOSA module, input IOQuants, output IOQuants)."""
    from ..._mlir import new_context
    from .reader import read
    return build_module(Lowering(read(path), new_context()))


def build_module(lw: Lowering):
    """(module, input quantization, output quantization) of the graph `lw` lowers. A float graph input
    read by a QUANTIZE, or output written by a DEQUANTIZE, stays integer in the C API
    (requantize.float_boundary); a bool input or output is int8 0 / 1 (nonzero: true) in the C API."""
    from .requantize import float_boundary
    g = lw.graph
    boundary = float_boundary(g)
    inputs = [boundary.inputs.get(index, index) for index in g.inputs]
    outputs = [boundary.outputs.get(index, index) for index in g.outputs]
    args, in_quant = [], []
    for i, index in enumerate(inputs):
        t = g.tensors[index]
        if t.elem == "i1":      # a bool input (a SELECT's condition): int8 0 / 1 in the C API
            args.append(lw.w.argument(i, t.shape, "i8"))
            nonzero = lw.w.equal(lw.w.cast(args[-1], "i32"), lw.w.scalar(0, len(t.shape)))
            lw.values[index] = lw.w.logical_not(nonzero)
            in_quant.append(io_quant.IOQuant(1.0, 0))
            continue
        if t.elem not in ACTIVATIONS or t.quant is None or t.quant.per_channel:
            raise UserError(f"input #{i} ('{t.name}') is {t.elem}, not a per-tensor quantized int8 or int16 "
                            "tensor; only int8 and int16x8 models are supported")
        lw.values[index] = lw.w.argument(i, t.shape, t.elem)
        args.append(lw.values[index])
        in_quant.append(io_quant.IOQuant(t.quant.scale, t.quant.zero_point))
    state = State(lw, len(args))
    lw.state = state
    for op in g.operators:
        if op.index in boundary.skipped:
            continue
        if op.name in VARIABLE_OPS:
            state.lower(op)
            continue
        lower = LOWER.get(op.name)
        if lower is None:
            raise UserError(f"{lw.where(op)}: the operator is not supported (supported: "
                            f"{', '.join(sorted(LOWER))})")
        if not op.outputs:
            raise UserError(f"{lw.where(op)}: it has no outputs")
        lw.w.set_location(lw.tensor(op.outputs[0]).name or f"{op.name.lower()}_{op.index}", None, None)
        result = lower(lw, op)
        # SPLIT, SPLIT_V and UNPACK give a list, one value per output.
        computed = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(computed) != len(op.outputs):
            raise UserError(f"{lw.where(op)}: {len(op.outputs)} outputs, but the operator computes {len(computed)}")
        for index, value in zip(op.outputs, computed):
            out = lw.tensor(index)
            if tuple(value.shape) != tuple(out.shape):
                raise UserError(f"{lw.where(op)}: its output '{out.name}' is {list(out.shape)}, but the operator "
                                f"computes {list(value.shape)}")
            lw.values[index] = value
    results, out_quant = [], []
    for i, index in enumerate(outputs):
        t = g.tensors[index]
        if t.elem == "i1" and index in lw.values:
            results.append(lw.w.cast(lw.values[index], "i8"))
            out_quant.append(io_quant.IOQuant(1.0, 0))
            continue
        if t.elem not in ACTIVATIONS or t.quant is None:
            raise UserError(f"output #{i} ('{t.name}') is {t.elem}, not a quantized int8 or int16 tensor")
        if index not in lw.values:
            raise UserError(f"output #{i} ('{t.name}') is computed by no operator")
        results.append(lw.values[index])
        out_quant.append(io_quant.IOQuant(t.quant.scale, t.quant.zero_point))
    state_args, state_results, state_quant = state.finish(f"the model '{g.path}'")
    module = lw.w.finish(args + state_args, results + state_results)
    # Each variable is one more input and output, the output handed to the next call's input.
    io_quant.annotate_state(module, [(len(args) + k, len(results) + k) for k in range(len(state_args))])
    return module, in_quant + state_quant, out_quant + state_quant
