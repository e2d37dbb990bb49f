"""Reads a `.tflite` flatbuffer into plain Python objects, checking it on the way.

Only what the lowering needs is kept: subgraph 0's tensors (shape, integer type, quantization,
constant data), its operators (builtin name, inputs, outputs, options) and its inputs / outputs.
Every check that fails is a UserError naming the operator (index and name) or tensor and what is
wrong with it: a file we cannot read is the user's to fix, never a traceback.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...diagnostics import UserError

# TensorType values of the schema -> (element type name, numpy dtype).
TENSOR_TYPES = {
    0: ("f32", np.float32), 1: ("f16", np.float16), 2: ("i32", np.int32), 3: ("u8", np.uint8),
    4: ("i64", np.int64), 6: ("i1", np.bool_), 7: ("i16", np.int16), 9: ("i8", np.int8),
    10: ("f64", np.float64), 13: ("resource", np.int32),
}
FILE_IDENTIFIER = b"TFL3"


@dataclass(frozen=True)
class Quantization:
    scales: np.ndarray          # float64 of the file's float32, one per channel (or one)
    zero_points: np.ndarray     # int64, as many as scales
    axis: int                   # the channel axis when per channel

    @property
    def per_channel(self) -> bool:
        return len(self.scales) > 1

    @property
    def scale(self) -> float:
        return float(self.scales[0])

    @property
    def zero_point(self) -> int:
        return int(self.zero_points[0])


@dataclass(frozen=True)
class Tensor:
    index: int
    name: str
    shape: tuple
    elem: str
    quant: Quantization | None
    data: np.ndarray | None     # the constant's values (shaped), None for activations
    variable: bool = False      # a variable tensor (is_variable): its values persist across invocations


@dataclass(frozen=True)
class Operator:
    index: int
    name: str                   # the builtin's name, e.g. CONV_2D
    inputs: tuple               # tensor indices (-1: an optional input left out)
    outputs: tuple
    options: dict | None        # the fields of its options table the lowering reads (reader.OPTIONS)

    def describe(self) -> str:
        return f"operator #{self.index} ({self.name})"


@dataclass
class Graph:
    path: str
    tensors: list = field(default_factory=list)
    operators: list = field(default_factory=list)
    inputs: tuple = ()
    outputs: tuple = ()
    # The subgraphs CALL_ONCE operators of this graph run once before the first invocation (TFLite's
    # converter initialises resource variables there), by subgraph index.
    init_graphs: dict = field(default_factory=dict)


def _builtin_names() -> dict[int, str]:
    from tflite.BuiltinOperator import BuiltinOperator
    return {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}


def read(path: Path) -> Graph:
    """The checked graph of subgraph 0 of the `.tflite` file at `path`."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"cannot read input file '{path}'")
    buf = path.read_bytes()
    if len(buf) < 8 or buf[4:8] != FILE_IDENTIFIER:
        raise UserError("not a TFLite flatbuffer (no 'TFL3' file identifier)")
    try:
        return _read(buf, str(path))
    except UserError:
        raise
    except (struct.error, IndexError, ValueError, TypeError, UnicodeDecodeError, OverflowError) as err:
        # The flatbuffer's offsets point outside the file or at the wrong kind of data.
        raise UserError(f"a truncated or corrupt TFLite flatbuffer (reading it failed: {err})") from None


def _read(buf: bytes, path: str) -> Graph:
    import tflite
    (root,) = struct.unpack_from("<I", buf, 0)
    if root + 4 > len(buf):
        raise UserError("a truncated TFLite flatbuffer (its root table lies past the end)")
    model = tflite.Model.GetRootAsModel(buf, 0)
    if model.SubgraphsLength() < 1:
        raise UserError("the model has no subgraph")
    names = _builtin_names()
    graph = _subgraph(model, 0, names, buf, path)
    count = model.SubgraphsLength()
    inits = set()
    for op in graph.operators:
        if op.name == "CALL_ONCE":
            index = int((op.options or {}).get("InitSubgraphIndex", 0))
            if not 0 < index < count:
                raise UserError(f"{op.describe()} runs subgraph {index}, but the model has {count} subgraph(s), "
                                "0 the main one")
            inits.add(index)
    if len(inits) != count - 1:
        raise UserError(f"the model has {model.SubgraphsLength()} subgraphs; only single-subgraph models, and "
                        "subgraphs that CALL_ONCE runs to initialise variables, are supported (no control flow)")
    graph.init_graphs = {index: _subgraph(model, index, names, buf, path) for index in sorted(inits)}
    return graph


def _subgraph(model, index: int, names: dict, buf: bytes, path: str) -> Graph:
    sub = model.Subgraphs(index)
    graph = Graph(path)
    graph.tensors = [_tensor(model, sub.Tensors(i), i, buf) for i in range(sub.TensorsLength())]
    n_tensors = len(graph.tensors)
    graph.inputs = tuple(_indices(sub.InputsAsNumpy(), n_tensors, "the subgraph's inputs"))
    graph.outputs = tuple(_indices(sub.OutputsAsNumpy(), n_tensors, "the subgraph's outputs"))
    for i in range(sub.OperatorsLength()):
        graph.operators.append(_operator(model, sub.Operators(i), i, names, n_tensors))
    return graph


def _indices(array, count: int, what: str, allow_missing: bool = False) -> list[int]:
    values = [] if isinstance(array, int) else [int(v) for v in array]
    for v in values:
        if not (0 <= v < count or (allow_missing and v == -1)):
            raise UserError(f"{what} name tensor {v}, but the subgraph has {count} tensors")
    return values


def _tensor(model, t, index: int, buf: bytes) -> Tensor:
    name = (t.Name() or b"").decode("utf-8", "replace")
    what = f"tensor #{index} ('{name}')"
    shape = tuple(int(d) for d in (t.ShapeAsNumpy() if t.ShapeLength() else ()))
    if any(d < 0 for d in shape):
        raise UserError(f"{what} has a dynamic or negative dimension {list(shape)}")
    if t.Type() not in TENSOR_TYPES:
        raise UserError(f"{what} has tensor type {t.Type()}, which is not supported")
    elem, dtype = TENSOR_TYPES[t.Type()]
    if t.Sparsity() is not None:
        raise UserError(f"{what} is sparse, which is not supported")
    data = _buffer_data(model, t.Buffer(), shape, dtype, buf, what)
    return Tensor(index, name, shape, elem, _quantization(t.Quantization(), shape, what), data, bool(t.IsVariable()))


def _buffer_data(model, buffer_index: int, shape, dtype, buf: bytes, what: str):
    if not 0 <= buffer_index < model.BuffersLength():
        raise UserError(f"{what} names buffer {buffer_index}, but the model has {model.BuffersLength()} buffers")
    buffer = model.Buffers(buffer_index)
    offset, size = int(buffer.Offset()), int(buffer.Size())
    if offset > 1:       # data stored after the flatbuffer (models over 2 GB)
        if offset + size > len(buf):
            raise UserError(f"{what}: its buffer {buffer_index} lies past the end of the file")
        raw = buf[offset:offset + size]
    else:
        if buffer.DataLength() == 0:
            return None
        raw = buffer.DataAsNumpy().tobytes()
        if len(raw) != buffer.DataLength():
            raise UserError(f"{what}: its buffer {buffer_index} lies past the end of the file")
    if not raw:
        return None
    expected = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if len(raw) != expected:
        raise UserError(f"{what}: its shape {list(shape)} needs {expected} bytes, but buffer {buffer_index} holds "
                        f"{len(raw)}")
    return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)


def _quantization(q, shape, what: str) -> Quantization | None:
    if q is None:
        return None
    scales = q.ScaleAsNumpy() if q.ScaleLength() else np.zeros(0)
    zps = q.ZeroPointAsNumpy() if q.ZeroPointLength() else np.zeros(0)
    if len(scales) == 0 and len(zps) == 0:
        return None          # a tensor without quantization (int32 shapes, float tensors)
    if len(scales) == 0:
        raise UserError(f"{what} has zero points but no scales")
    if len(zps) not in (0, len(scales)):
        raise UserError(f"{what} has {len(scales)} scales but {len(zps)} zero points")
    if not np.all(np.isfinite(scales)) or np.any(np.asarray(scales) <= 0):
        raise UserError(f"{what} has a scale that is not a positive number: {list(scales)[:4]}")
    axis = int(q.QuantizedDimension())
    if len(scales) > 1 and not (0 <= axis < len(shape) and shape[axis] == len(scales)):
        raise UserError(f"{what} has {len(scales)} scales on axis {axis}, which does not match its shape "
                        f"{list(shape)}")
    zps = np.asarray(zps, np.int64) if len(zps) else np.zeros(len(scales), np.int64)
    return Quantization(np.asarray(scales, np.float32).astype(np.float64), zps, axis)


def _operator(model, op, index: int, names: dict, n_tensors: int) -> Operator:
    code_index = op.OpcodeIndex()
    if not 0 <= code_index < model.OperatorCodesLength():
        raise UserError(f"operator #{index} names operator code {code_index}, but the model has "
                        f"{model.OperatorCodesLength()}")
    code = model.OperatorCodes(code_index)
    builtin = max(int(code.BuiltinCode()), int(code.DeprecatedBuiltinCode()))
    name = names.get(builtin, f"builtin {builtin}")
    if name == "CUSTOM":
        custom = (code.CustomCode() or b"").decode("utf-8", "replace")
        raise UserError(f"operator #{index} (CUSTOM '{custom}'): custom operators are not supported")
    what = f"operator #{index} ({name})"
    inputs = _indices(op.InputsAsNumpy(), n_tensors, f"operator #{index} ({name})'s inputs", True)
    outputs = _indices(op.OutputsAsNumpy(), n_tensors, f"operator #{index} ({name})'s outputs")
    return Operator(index, name, tuple(inputs), tuple(outputs), _options(op, name, what))


# The options table of each builtin the lowering reads, and the fields it reads (read here, inside
# the reader's checks: a corrupt table fails as the file's error, not later in the lowering).
WINDOW = ("Padding", "StrideH", "StrideW", "FusedActivationFunction")
OPTIONS = {
    "CONV_2D": ("Conv2DOptions", WINDOW + ("DilationHFactor", "DilationWFactor", "QuantizedBiasType")),
    "DEPTHWISE_CONV_2D": ("DepthwiseConv2DOptions", WINDOW + ("DilationHFactor", "DilationWFactor",
                                                              "DepthMultiplier")),
    "FULLY_CONNECTED": ("FullyConnectedOptions", ("FusedActivationFunction", "WeightsFormat", "KeepNumDims",
                                                  "QuantizedBiasType")),
    "AVERAGE_POOL_2D": ("Pool2DOptions", WINDOW + ("FilterHeight", "FilterWidth")),
    "MAX_POOL_2D": ("Pool2DOptions", WINDOW + ("FilterHeight", "FilterWidth")),
    "ADD": ("AddOptions", ("FusedActivationFunction",)),
    "SUB": ("SubOptions", ("FusedActivationFunction",)),
    "MUL": ("MulOptions", ("FusedActivationFunction",)),
    "SOFTMAX": ("SoftmaxOptions", ("Beta",)),
    "CONCATENATION": ("ConcatenationOptions", ("Axis", "FusedActivationFunction")),
    "LEAKY_RELU": ("LeakyReluOptions", ("Alpha",)),
    "MEAN": ("ReducerOptions", ("KeepDims",)),
    "VAR_HANDLE": ("VarHandleOptions", ("Container", "SharedName")),
    "CALL_ONCE": ("CallOnceOptions", ("InitSubgraphIndex",)),
    "SVDF": ("SVDFOptions", ("Rank", "FusedActivationFunction", "AsymmetricQuantizeInputs")),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": ("UnidirectionalSequenceLSTMOptions", ("FusedActivationFunction", "CellClip",
                                                                           "TimeMajor")),
}
# The slicing, stacking, resizing, batch matmul and transposed-convolution ops (shape.py, resize.py,
# batch_matmul.py, transpose_conv.py).
OPTIONS.update({
    "STRIDED_SLICE": ("StridedSliceOptions", ("BeginMask", "EndMask", "EllipsisMask", "NewAxisMask",
                                              "ShrinkAxisMask", "Offset")),
    "SPLIT": ("SplitOptions", ("NumSplits",)),
    "SPLIT_V": ("SplitVOptions", ("NumSplits",)),
    "PACK": ("PackOptions", ("ValuesCount", "Axis")),
    "UNPACK": ("UnpackOptions", ("Num", "Axis")),
    "GATHER": ("GatherOptions", ("Axis", "BatchDims")),
    "RESIZE_BILINEAR": ("ResizeBilinearOptions", ("AlignCorners", "HalfPixelCenters")),
    "RESIZE_NEAREST_NEIGHBOR": ("ResizeNearestNeighborOptions", ("AlignCorners", "HalfPixelCenters")),
    "BATCH_MATMUL": ("BatchMatMulOptions", ("AdjX", "AdjY", "AsymmetricQuantizeInputs")),
    "TRANSPOSE_CONV": ("TransposeConvOptions", ("Padding", "StrideH", "StrideW", "FusedActivationFunction")),
})


def _options(op, name: str, what: str) -> dict | None:
    """The operator's options as {field: value}; None when it has no options table."""
    if name not in OPTIONS:
        return None
    import importlib
    from tflite.BuiltinOptions import BuiltinOptions
    kind, fields = OPTIONS[name]
    table = op.BuiltinOptions()
    if table is None:
        return None
    if op.BuiltinOptionsType() != getattr(BuiltinOptions, kind):
        raise UserError(f"{what}: its options are of type {op.BuiltinOptionsType()}, not {kind}")
    options = getattr(importlib.import_module(f"tflite.{kind}"), kind)()
    options.Init(table.Bytes, table.Pos)
    return {field: getattr(options, field)() for field in fields}
