"""Writes small `.tflite` models with the flatbuffer builder of the `tflite` schema package, for
the .tflite frontend's tests: tensors (shape, int type, per-tensor or per-channel quantization,
constant data) and builtin operators with their options."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import flatbuffers
import numpy as np

TYPES = {"f32": 0, "i32": 2, "i8": 9, "i16": 7, "i64": 4}
DTYPES = {"f32": np.float32, "i32": np.int32, "i8": np.int8, "i16": np.int16, "i64": np.int64}


def _schema(name: str):
    return importlib.import_module(f"tflite.{name}")


@dataclass
class _Tensor:
    name: str
    shape: tuple
    elem: str
    buffer: int
    scales: list | None
    zero_points: list | None
    axis: int


@dataclass
class ModelWriter:
    tensors: list = field(default_factory=list)
    buffers: list = field(default_factory=lambda: [b""])     # buffer 0: the empty one, by convention
    operators: list = field(default_factory=list)            # (code index, inputs, outputs, options)
    codes: list = field(default_factory=list)                # (builtin code, custom name)

    def tensor(self, name, shape, elem="i8", scale=None, zero_point=0, data=None, axis=0) -> int:
        """A tensor's index; `scale` a number (per tensor) or a list (per channel on `axis`)."""
        buffer = 0
        if data is not None:
            self.buffers.append(np.ascontiguousarray(np.asarray(data, DTYPES[elem]).reshape(shape)).tobytes())
            buffer = len(self.buffers) - 1
        scales = None if scale is None else [float(s) for s in np.atleast_1d(scale)]
        zps = None if scale is None else [int(zero_point)] * len(scales)
        self.tensors.append(_Tensor(name, tuple(shape), elem, buffer, scales, zps, axis))
        return len(self.tensors) - 1

    def op(self, builtin: str, inputs, outputs, options: tuple | None = None, custom: str | None = None) -> None:
        """`options`: (options table name, {field: value}), e.g. ("Conv2DOptions", {"Padding": 1})."""
        code = getattr(_schema("BuiltinOperator").BuiltinOperator, builtin)
        key = (code, custom)
        if key not in self.codes:
            self.codes.append(key)
        self.operators.append((self.codes.index(key), list(inputs), list(outputs), options))

    # -- serialisation ---------------------------------------------------------------------------
    def write(self, inputs, outputs, subgraphs: int = 1) -> bytes:
        b = flatbuffers.Builder(1024)
        buffers = [self._buffer(b, data) for data in self.buffers]
        codes = [self._code(b, code, custom) for code, custom in self.codes]
        graphs = self._subgraphs(b, inputs, outputs, subgraphs)
        m = _schema("Model")
        graph_vec = self._tables(b, m.ModelStartSubgraphsVector, graphs)
        buffer_vec = self._tables(b, m.ModelStartBuffersVector, buffers)
        code_vec = self._tables(b, m.ModelStartOperatorCodesVector, codes)
        m.ModelStart(b)
        m.ModelAddVersion(b, 3)
        m.ModelAddOperatorCodes(b, code_vec)
        m.ModelAddSubgraphs(b, graph_vec)
        m.ModelAddBuffers(b, buffer_vec)
        b.Finish(m.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def _subgraphs(self, b, inputs, outputs, copies: int) -> list:
        tensors = [self._tensor(b, t) for t in self.tensors]
        ops = [self._operator(b, *op) for op in self.operators]
        return [self._subgraph(b, tensors, ops, inputs, outputs) for _ in range(copies)]

    @staticmethod
    def _tables(b, start, offsets):
        start(b, len(offsets))
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    @staticmethod
    def _ints(b, values, prepend=None):
        b.StartVector(4, len(values), 4)
        for v in reversed(values):
            (prepend or b.PrependInt32)(v)
        return b.EndVector()

    def _buffer(self, b, data: bytes):
        m = _schema("Buffer")
        vec = b.CreateByteVector(data) if data else None
        m.BufferStart(b)
        if vec is not None:
            m.BufferAddData(b, vec)
        return m.BufferEnd(b)

    def _tensor(self, b, t: _Tensor):
        name = b.CreateString(t.name)
        shape = self._ints(b, list(t.shape))
        quant = None
        if t.scales is not None:
            q = _schema("QuantizationParameters")
            b.StartVector(4, len(t.scales), 4)
            for s in reversed(t.scales):
                b.PrependFloat32(s)
            scales = b.EndVector()
            b.StartVector(8, len(t.zero_points), 8)
            for z in reversed(t.zero_points):
                b.PrependInt64(z)
            zps = b.EndVector()
            q.QuantizationParametersStart(b)
            q.QuantizationParametersAddScale(b, scales)
            q.QuantizationParametersAddZeroPoint(b, zps)
            q.QuantizationParametersAddQuantizedDimension(b, t.axis)
            quant = q.QuantizationParametersEnd(b)
        m = _schema("Tensor")
        m.TensorStart(b)
        m.TensorAddShape(b, shape)
        m.TensorAddType(b, TYPES[t.elem])
        m.TensorAddBuffer(b, t.buffer)
        m.TensorAddName(b, name)
        if quant is not None:
            m.TensorAddQuantization(b, quant)
        return m.TensorEnd(b)

    def _operator(self, b, code_index, inputs, outputs, options):
        table = None
        if options is not None:
            kind, fields = options
            o = _schema(kind)
            o.Start(b)
            for name, value in fields.items():
                getattr(o, f"Add{name}")(b, value)
            table = o.End(b)
        ins, outs = self._ints(b, inputs), self._ints(b, outputs)
        m = _schema("Operator")
        m.OperatorStart(b)
        m.OperatorAddOpcodeIndex(b, code_index)
        m.OperatorAddInputs(b, ins)
        m.OperatorAddOutputs(b, outs)
        if table is not None:
            m.OperatorAddBuiltinOptionsType(b, getattr(_schema("BuiltinOptions").BuiltinOptions, options[0]))
            m.OperatorAddBuiltinOptions(b, table)
        return m.OperatorEnd(b)

    def _code(self, b, code: int, custom: str | None):
        name = b.CreateString(custom) if custom else None
        m = _schema("OperatorCode")
        m.OperatorCodeStart(b)
        m.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
        m.OperatorCodeAddBuiltinCode(b, code)
        m.OperatorCodeAddVersion(b, 1)
        if name is not None:
            m.OperatorCodeAddCustomCode(b, name)
        return m.OperatorCodeEnd(b)

    def _subgraph(self, b, tensors, ops, inputs, outputs):
        m = _schema("SubGraph")
        tensor_vec = self._tables(b, m.SubGraphStartTensorsVector, tensors)
        op_vec = self._tables(b, m.SubGraphStartOperatorsVector, ops)
        ins, outs = self._ints(b, list(inputs)), self._ints(b, list(outputs))
        name = b.CreateString("main")
        m.SubGraphStart(b)
        m.SubGraphAddTensors(b, tensor_vec)
        m.SubGraphAddInputs(b, ins)
        m.SubGraphAddOutputs(b, outs)
        m.SubGraphAddOperators(b, op_vec)
        m.SubGraphAddName(b, name)
        return m.SubGraphEnd(b)


# bool tensors (comparison results, SELECT conditions)
TYPES["i1"] = 6
DTYPES["i1"] = np.bool_


# -- several subgraphs, resource variables, variable tensors ---------------------------------------
TYPES["resource"] = 13


@dataclass
class _VariableTensor(_Tensor):
    variable: bool = False


@dataclass
class GraphsWriter(ModelWriter):
    """A model of several subgraphs sharing buffers and operator codes: build subgraph 0 (the main
    one) with tensor() / op(), close it with end_subgraph(inputs, outputs), build the next (e.g.
    the initialisation subgraph a CALL_ONCE runs), ... Options may hold strings (VarHandleOptions)
    and tensors may be variable (is_variable: SVDF's and LSTM's state)."""
    graphs: list = field(default_factory=list)       # (tensors, operators, inputs, outputs) per subgraph

    def tensor(self, name, shape, elem="i8", scale=None, zero_point=0, data=None, axis=0,
               variable: bool = False) -> int:
        index = super().tensor(name, shape, elem, scale, zero_point, data, axis)
        t = self.tensors[index]
        self.tensors[index] = _VariableTensor(t.name, t.shape, t.elem, t.buffer, t.scales, t.zero_points, t.axis,
                                              variable)
        return index

    def end_subgraph(self, inputs, outputs) -> None:
        self.graphs.append((self.tensors, self.operators, list(inputs), list(outputs)))
        self.tensors, self.operators = [], []

    def write(self, inputs=None, outputs=None, subgraphs: int = 1) -> bytes:
        if inputs is not None or self.tensors:
            self.end_subgraph(inputs or [], outputs or [])
        return super().write(None, None)

    def _subgraphs(self, b, inputs, outputs, copies: int) -> list:
        graphs = []
        for tensors, operators, ins, outs in self.graphs:
            t_offsets = [self._tensor(b, t) for t in tensors]
            o_offsets = [self._operator(b, *op) for op in operators]
            graphs.append(self._subgraph(b, t_offsets, o_offsets, ins, outs))
        return graphs

    def _operator(self, b, code_index, inputs, outputs, options):
        if options is not None:    # strings are made before their table starts
            kind, fields = options
            options = (kind, {k: b.CreateString(v) if isinstance(v, str) else v for k, v in fields.items()})
        return super()._operator(b, code_index, inputs, outputs, options)

    def _tensor(self, b, t):
        if not getattr(t, "variable", False):
            return super()._tensor(b, t)
        # The base table with is_variable set: written by the schema's own builder around the base's.
        m = _schema("Tensor")
        end = m.TensorEnd

        def end_variable(builder):
            m.TensorAddIsVariable(builder, True)
            return end(builder)
        m.TensorEnd = end_variable
        try:
            return super()._tensor(b, t)
        finally:
            m.TensorEnd = end
