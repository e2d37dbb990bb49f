"""What a TFLite model keeps across invocations, as the streaming state of `--state`.

Two kinds, each one input and one output of the TOSA function, handed from call to call
(`mcu.state`: `mcu_model_step()` and `mcu_model_reset()` in model.h, docs/streaming.md):
- resource variables: VAR_HANDLE names one (by container and shared name), READ_VARIABLE copies
  its integers out, ASSIGN_VARIABLE copies integers in (TFLM's MicroResourceVariables: memcpy, so
  the integers are handed over as they are, whatever the quantization of the tensors around);
  CALL_ONCE runs the subgraph the converter writes to initialise them, before the first call;
- variable tensors (is_variable: SVDF's activation state, an LSTM's hidden and cell state), which
  the op reading them updates in place.

The state starts where TFLite Micro starts it, and `mcu_model_reset()` puts it back there: the
zero point of the state's quantization. TFLM fills a resource variable's buffer with the first
byte of the zero point of the first tensor assigned to it (MicroResourceVariables::Allocate, in
the order of the subgraphs' operators) and a variable tensor with its int8 zero point, else 0
(ResetTensorData); a CALL_ONCE initialisation then assigns its constants. A model whose state
starts elsewhere is refused. A variable the main graph never assigns is a constant (its start); one
it never reads is left out (nothing can observe it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import io_quant
from ...diagnostics import UserError
from ..lowering.tosa_builder import Value
from .reader import Graph, Operator, Quantization, Tensor

VARIABLE_OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")
STATE_ELEMS = ("i8", "i16", "i32")


@dataclass
class _Variable:
    key: tuple                  # (container, shared name); ("tensor", index) for a variable tensor
    name: str
    shape: tuple
    elem: str
    quant: Quantization | None
    start: np.ndarray           # its integers when the first call begins
    argument: Value | None = None
    value: Value | None = None  # its integers at this point of the call


def _fill_bytes(zero_point: int, shape, elem: str) -> np.ndarray:
    """TFLM's memset of a buffer with the low byte of a zero point, read back as `elem`s."""
    dtype = np.dtype({"i8": np.int8, "i16": np.int16, "i32": np.int32}[elem])
    count = int(np.prod(shape, dtype=np.int64))
    return np.full(count * dtype.itemsize, zero_point & 0xFF, np.uint8).view(dtype).reshape(shape)


def _key(op: Operator) -> tuple:
    options = op.options or {}
    return (options.get("Container") or b"").decode("utf-8", "replace"), \
        (options.get("SharedName") or b"").decode("utf-8", "replace")


class State:
    """The variables of one graph while it is lowered; `pairs()` gives its (input, output) pairs."""

    def __init__(self, lw, n_inputs: int):
        self.lw = lw
        self.n_inputs = n_inputs
        self.handles: dict[int, tuple] = {}          # VAR_HANDLE output tensor -> variable key
        self.variables: dict[tuple, _Variable] = {}  # by key (container, shared name)
        self.order: list[_Variable] = []             # state variables in the order their input was made
        self._scan(lw.graph)

    # -- before lowering: which variables exist, where they start --------------------------------
    def _scan(self, graph: Graph) -> None:
        handles, first_assigned = {}, {}
        seen_access = False
        for op in graph.operators:
            if op.name == "VAR_HANDLE":
                handles[op.outputs[0]] = _key(op)
            elif op.name in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
                seen_access = True
                key = self._handle(handles, op, graph)
                if op.name == "ASSIGN_VARIABLE":
                    first_assigned.setdefault(key, (graph.tensors[self._operand(op, 1, "value")], op))
            elif op.name == "CALL_ONCE" and seen_access:
                raise UserError(f"{op.describe()} comes after an operator reading or assigning a variable; the "
                                "initialisation must run first")
        self.main_assigned = set(first_assigned)
        starts = {}
        for index, init in graph.init_graphs.items():
            self._scan_init(index, init, starts, first_assigned)
        for key, (tensor, op) in first_assigned.items():
            elem = tensor.elem
            if elem not in STATE_ELEMS:
                raise UserError(f"{op.describe()}: the variable '{key[1]}' holds {elem}; only i8, i16 and i32 "
                                "variables are supported")
            zero_point = tensor.quant.zero_point if tensor.quant is not None else 0
            start = starts.get(key, _fill_bytes(zero_point, tensor.shape, elem))
            self.variables[key] = _Variable(key, key[1], tuple(tensor.shape), elem, tensor.quant,
                                            np.asarray(start).reshape(tensor.shape))

    def _scan_init(self, index: int, init: Graph, starts: dict, first_assigned: dict) -> None:
        handles = {}
        for op in init.operators:
            where = f"operator #{op.index} ({op.name}) of the initialisation subgraph {index}"
            if op.name == "VAR_HANDLE":
                handles[op.outputs[0]] = _key(op)
            elif op.name == "ASSIGN_VARIABLE":
                key = self._handle(handles, op, init, where)
                value = init.tensors[self._operand(op, 1, "value", where)]
                if value.data is None:
                    raise UserError(f"{where}: assigns a value computed at run time; only constants are supported "
                                    "in an initialisation subgraph")
                starts[key] = value.data
                first_assigned.setdefault(key, (value, op))
            else:
                raise UserError(f"{where}: only VAR_HANDLE and ASSIGN_VARIABLE of constants are supported in an "
                                "initialisation subgraph")

    def _handle(self, handles: dict, op: Operator, graph: Graph, where: str | None = None) -> tuple:
        index = self._operand(op, 0, "resource", where)
        if index not in handles:
            raise UserError(f"{where or op.describe()}: its resource (tensor #{index} "
                            f"'{graph.tensors[index].name}') is not the output of a VAR_HANDLE before it")
        return handles[index]

    @staticmethod
    def _operand(op: Operator, position: int, role: str, where: str | None = None) -> int:
        if position >= len(op.inputs) or op.inputs[position] < 0:
            raise UserError(f"{where or op.describe()}: its {role} (input {position}) is missing")
        return op.inputs[position]

    # -- while lowering ----------------------------------------------------------------------------
    def lower(self, op: Operator) -> None:
        """VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE (its subgraph ran in the scan)."""
        lw = self.lw
        if op.name == "VAR_HANDLE":
            self.handles[op.outputs[0]] = _key(op)
            return
        if op.name == "CALL_ONCE":
            return
        key = self._handle(self.handles, op, lw.graph)
        var = self.variables.get(key)
        if var is None:
            raise UserError(f"{op.describe()}: the variable '{key[1]}' is never assigned, so TFLite Micro has no "
                            "buffer for it")
        if op.name == "READ_VARIABLE":
            out = lw.tensor(op.outputs[0])
            self._check_like(op, out, var, "its output")
            lw.values[op.outputs[0]] = self._current(var)
        else:
            value = lw.tensor(self._operand(op, 1, "value"))
            self._check_like(op, value, var, "its value")
            self._current(var)       # a value assigned before any read: the input is still the state
            var.value = lw.value(value.index, op)

    def _check_like(self, op: Operator, t: Tensor, var: _Variable, role: str) -> None:
        if tuple(t.shape) != var.shape or t.elem != var.elem:
            raise UserError(f"{op.describe()}: {role} ('{t.name}') is {t.elem} {list(t.shape)}, but the variable "
                            f"'{var.name}' holds {var.elem} {list(var.shape)}")

    def _current(self, var: _Variable) -> Value:
        if var.value is None:
            if var.key not in self.main_assigned:
                # Never assigned by a call: its start, for good.
                var.value = self.lw.w.const(var.start, var.elem, var.shape)
                return var.value
            var.argument = self.lw.w.argument(self.n_inputs + len(self.order), var.shape, var.elem)
            var.value = var.argument
            self.order.append(var)
        return var.value

    def tensor_state(self, op: Operator, index: int, zero_point_must_be_zero: str | None = None) -> Value:
        """The value a variable tensor holds when the call begins (a state input); the op that
        reads it gives its new value with update_tensor(). TFLM starts it at its int8 zero point,
        else 0 (ResetTensorData)."""
        t = self.lw.tensor(index)
        if not t.variable:
            raise UserError(f"{op.describe()}: its state ('{t.name}') is not a variable tensor")
        if t.elem not in STATE_ELEMS or t.quant is None:
            raise UserError(f"{op.describe()}: its state ('{t.name}') must be a quantized integer tensor")
        if zero_point_must_be_zero and t.quant.zero_point != 0:
            raise UserError(f"{op.describe()}: its state ('{t.name}') has zero point {t.quant.zero_point}; "
                            f"{zero_point_must_be_zero}")
        key = ("tensor", index)
        if key in self.variables:
            raise UserError(f"{op.describe()}: its state ('{t.name}') is the state of an operator before it too")
        start = _fill_bytes(t.quant.zero_point if t.elem == "i8" else 0, t.shape, t.elem)
        var = _Variable(key, t.name, tuple(t.shape), t.elem, t.quant, start)
        self.variables[key] = var
        self.main_assigned.add(key)
        return self._current(var)

    def update_tensor(self, index: int, value: Value) -> None:
        self.variables[("tensor", index)].value = value

    # -- after lowering --------------------------------------------------------------------------
    def finish(self, where: str):
        """(state inputs, state outputs, their IOQuants): one per variable read and assigned."""
        args, results, quants = [], [], []
        for var in self.order:
            quant = io_quant.IOQuant(var.quant.scale, var.quant.zero_point) if var.quant is not None \
                else io_quant.IOQuant(1.0, 0)
            if np.any(var.start != quant.zero_point):
                raise UserError(f"{where}: the variable '{var.name}' starts at {_describe(var.start)}, not at its zero "
                                f"point {quant.zero_point}; only state that starts at zero is supported")
            if var.value is var.argument:
                raise UserError(f"{where}: the variable '{var.name}' is assigned the value it was read as; "
                                "a state that never changes is not supported")
            args.append(var.argument)
            results.append(var.value)
            quants.append(quant)
        return args, results, quants


def _describe(values: np.ndarray) -> str:
    flat = values.reshape(-1)
    return f"{int(flat[0])}" if np.all(flat == flat[0]) else f"values {[int(v) for v in flat[:4]]}..."
