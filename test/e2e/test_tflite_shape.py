"""The .tflite frontend's slicing, gathering, resizing, batch matmul and transposed convolution
ops (STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, PACK, UNPACK, GATHER, RESIZE_NEAREST_NEIGHBOR,
RESIZE_BILINEAR, BATCH_MATMUL, TRANSPOSE_CONV): small int8 models written here, one per family,
compiled for the host with the CMSIS-NN and the portable backend (arm_transpose_conv_s8 under QEMU
on a Cortex-M55 and M4 too) and compared bit for bit with TFLite Micro's interpreter on random
inputs (the extremes -128 / 127 included); and the refusals of what TFLM's kernels would read
outside the tensor with or what no kernel computes as TFLM does."""

from __future__ import annotations

import numpy as np
import pytest

from tflite_oracle import compare_with_tflm, need_build
from tflite_writer import ModelWriter

from mcu_mlir.diagnostics import UserError
from mcu_mlir.frontend.tflite import import_tflite

IN_SHAPE, IN_SCALE, IN_ZP = (1, 6, 5, 4), 0.05, 3


def _int32(m: ModelWriter, name: str, values) -> int:
    values = np.asarray(values)
    return m.tensor(name, values.shape, "i32", None, 0, values)


def _out(m: ModelWriter, name: str, shape) -> int:
    return m.tensor(name, shape, "i8", IN_SCALE, IN_ZP)


def _strided(m: ModelWriter, x, name, begin, end, strides, shape, **masks) -> int:
    y = _out(m, name, shape)
    m.op("STRIDED_SLICE", [x, _int32(m, f"{name}/begin", begin), _int32(m, f"{name}/end", end),
                           _int32(m, f"{name}/strides", strides)], [y], ("StridedSliceOptions", masks))
    return y


def slicing_model() -> tuple[bytes, list[str]]:
    """(model, what each output tests)."""
    m = ModelWriter()
    x = m.tensor("input", IN_SHAPE, "i8", IN_SCALE, IN_ZP)
    cases = {}
    cases["strided slice: stride 2, a negative begin and stride -1"] = _strided(
        m, x, "ss_neg", [0, 1, -1, 0], [1, 6, 0, 4], [1, 2, -1, 1], (1, 3, 4, 4))
    cases["strided slice: begin / end / shrink masks, stride -2"] = _strided(
        m, x, "ss_masks", [0, 0, 1, 3], [0, 0, 4, 0], [1, 1, 2, -2], (6, 2, 2),
        BeginMask=0b0010, EndMask=0b1010, ShrinkAxisMask=0b0001)
    cases["strided slice: stride 3, ends past the axis (clamped)"] = _strided(
        m, x, "ss_clamped", [0, -100, 0, 1], [1, 100, 5, 100], [1, 3, 1, 1], (1, 2, 5, 3))
    cases["strided slice: the ellipsis / new-axis masks and offset TFLM's kernel ignores"] = _strided(
        m, x, "ss_ignored", [0, 1, 0, 2], [1, 2, 5, 4], [1, 1, 2, 1], (1, 1, 3, 2),
        EllipsisMask=0b0100, NewAxisMask=0b0001, Offset=True)
    y = _out(m, "slice", (1, 4, 3, 2))
    m.op("SLICE", [x, _int32(m, "slice/begin", [0, 2, 1, 0]), _int32(m, "slice/size", [1, -1, 3, 2])], [y])
    cases["slice (a size of -1: to the end)"] = y
    halves = [_out(m, f"split{i}", (1, 6, 5, 2)) for i in range(2)]
    m.op("SPLIT", [_int32(m, "split/axis", [-1]), x], halves, ("SplitOptions", {"NumSplits": 2}))
    cases.update({f"split on axis -1, half {i}": t for i, t in enumerate(halves)})
    parts = [_out(m, f"split_v{i}", (1, n, 5, 4)) for i, n in enumerate((1, 3, 2))]
    m.op("SPLIT_V", [x, _int32(m, "split_v/sizes", [1, -1, 2]), _int32(m, "split_v/axis", [1])], parts,
         ("SplitVOptions", {"NumSplits": 3}))
    cases.update({f"split_v [1, -1, 2] on axis 1, part {i}": t for i, t in enumerate(parts)})
    channels = [_out(m, f"unpack{i}", (1, 6, 5)) for i in range(4)]
    m.op("UNPACK", [x], channels, ("UnpackOptions", {"Num": 4, "Axis": 3}))
    cases["unpack on axis 3, slice 2"] = channels[2]
    stacked = _out(m, "pack", (1, 2, 6, 5))
    m.op("PACK", [channels[3], channels[0]], [stacked], ("PackOptions", {"ValuesCount": 2, "Axis": 1}))
    cases["pack of two unpacked slices on axis 1"] = stacked
    gathered = _out(m, "gather", (1, 6, 2, 2, 4))
    m.op("GATHER", [x, _int32(m, "gather/positions", [[4, 0], [2, 2]])], [gathered],
         ("GatherOptions", {"Axis": 2}))
    cases["gather of [2, 2] positions on axis 2"] = gathered
    rows = _out(m, "rows", (6, 5, 4))
    m.op("RESHAPE", [x, _int32(m, "rows/shape", [6, 5, 4])], [rows])
    picked = _out(m, "gather_batch", (6, 3, 4))
    positions = np.random.default_rng(3).integers(0, 5, (6, 3))
    m.op("GATHER", [rows, _int32(m, "gather_batch/positions", positions)], [picked],
         ("GatherOptions", {"Axis": -2, "BatchDims": 1}))
    cases["gather on axis -2 with batch_dims 1"] = picked
    return m.write([x], list(cases.values())), list(cases)


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_slicing_ops_bit_exact_with_tflite_micro(backend, tmp_path):
    need_build(backend)
    model, cases = slicing_model()
    report, differing = compare_with_tflm(model, tmp_path, backend, count=6)
    assert not differing, [(k, cases[i], d) for k, i, d in differing]
    assert report["transposes"] == 0


def _one_op(tmp_path, build) -> str:
    """The message of the UserError the model `build(m, x)` (one op on an input) gets."""
    m = ModelWriter()
    x = m.tensor("input", IN_SHAPE, "i8", IN_SCALE, IN_ZP)
    y = build(m, x)
    path = tmp_path / "model.tflite"
    path.write_bytes(m.write([x], [y]))
    with pytest.raises(UserError) as err:
        import_tflite(path)
    return str(err.value)


def _gather_out_of_range(m, x):
    y = _out(m, "y", (1, 6, 2, 4))
    m.op("GATHER", [x, _int32(m, "positions", [1, 5])], [y], ("GatherOptions", {"Axis": 2}))
    return y


def _gather_activation_positions(m, x):
    positions = m.tensor("positions", (2,), "i32")
    y = _out(m, "y", (1, 6, 2, 4))
    m.op("GATHER", [x, positions], [y], ("GatherOptions", {"Axis": 2}))
    return y


def _stride_zero(m, x):
    return _strided(m, x, "y", [0, 0, 0, 0], [1, 6, 5, 4], [1, 0, 1, 1], (1, 6, 5, 4))


def _shrink_past_the_end(m, x):
    return _strided(m, x, "y", [0, 7, 0, 0], [1, 8, 5, 4], [1, 1, 1, 1], (1, 5, 4), ShrinkAxisMask=0b0010)


def _slice_outside(m, x):
    y = _out(m, "y", (1, 3, 5, 4))
    m.op("SLICE", [x, _int32(m, "begin", [0, 4, 0, 0]), _int32(m, "size", [1, 3, 5, 4])], [y])
    return y


def _split_requantizing(m, x):
    halves = [m.tensor(f"y{i}", (1, 6, 5, 2), "i8", 0.1, 0) for i in range(2)]
    m.op("SPLIT", [_int32(m, "axis", [3]), x], halves, ("SplitOptions", {"NumSplits": 2}))
    return halves[0]


@pytest.mark.parametrize("build, message", [
    (_gather_out_of_range, "operator #0 (GATHER): its positions reach 1..5, outside axis 2 of size 5"),
    (_gather_activation_positions, "operator #0 (GATHER): its positions ('positions') are computed at run time"),
    (_stride_zero, "operator #0 (STRIDED_SLICE): its stride along axis 1 is 0"),
    (_shrink_past_the_end, "operator #0 (STRIDED_SLICE): it selects no element along axis 1"),
    (_slice_outside, "operator #0 (SLICE): begin [0, 4, 0, 0] and size [1, 3, 5, 4] reach outside its input"),
    (_split_requantizing, "operator #0 (SPLIT): its input 'input' and its output 'y0' are quantized differently"),
])
def test_slicing_refusals(build, message, tmp_path):
    assert message in _one_op(tmp_path, build)


def _matmul_out(m: ModelWriter, name: str, shape, scales, depth: int) -> int:
    """An output step that spreads a random product of `depth` terms over most of int8."""
    return m.tensor(name, shape, "i8", scales[0] * scales[1] * np.sqrt(depth) * 128 * 128 / 300, -4)


def batch_matmul_model() -> tuple[bytes, list[str]]:
    rng = np.random.default_rng(5)
    m = ModelWriter()
    x = m.tensor("x", (2, 4, 6), "i8", 0.05, 3)
    y = m.tensor("y", (2, 3, 6), "i8", 0.03, -7)
    z = m.tensor("z", (1, 3, 6), "i8", 0.02, 11)
    cases = {}

    def matmul(name, lhs, rhs, shape, scales, depth, **adj):
        out = _matmul_out(m, name, shape, scales, depth)
        m.op("BATCH_MATMUL", [lhs, rhs], [out], ("BatchMatMulOptions", adj))
        cases[name] = out

    w = m.tensor("w", (6, 5), "i8", 0.01, 0, rng.integers(-127, 128, (6, 5)))
    matmul("constant rhs, zero point 0 (fully connected)", x, w, (2, 4, 5), (0.05, 0.01), 6)
    v = m.tensor("v", (1, 5, 6), "i8", 0.02, 9, rng.integers(-128, 128, (1, 5, 6)))
    matmul("constant rhs with adj_y and zero point 9", x, v, (2, 4, 5), (0.05, 0.02), 6, AdjY=True)
    matmul("two activations, adj_y", x, y, (2, 4, 3), (0.05, 0.03), 6, AdjY=True)
    matmul("two activations, adj_x (x^T x)", x, x, (2, 6, 6), (0.05, 0.05), 4, AdjX=True)
    u = m.tensor("u", (2, 6, 2), "i8", 0.04, -2, rng.integers(-128, 128, (2, 6, 2)))
    matmul("a batch of one broadcast to a constant's two", z, u, (2, 3, 2), (0.02, 0.04), 6)
    return m.write([x, y, z], list(cases.values())), list(cases)


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_batch_matmul_bit_exact_with_tflite_micro(backend, tmp_path):
    need_build(backend)
    model, cases = batch_matmul_model()
    report, differing = compare_with_tflm(model, tmp_path, backend, count=8)
    assert not differing, [(k, cases[i], d) for k, i, d in differing]
    kernels = [op["kernel"] for op in report["ops"] if "matmul" in op["tosa_op"]]
    if backend == "cmsis-nn":
        assert "arm_fully_connected_s8" in kernels and "arm_batch_matmul_s8" in kernels, kernels
    else:
        assert all(k.startswith("portable:") for k in kernels), kernels


RESIZES = [  # (builtin, output height and width, align_corners, half_pixel_centers)
    ("RESIZE_NEAREST_NEIGHBOR", (10, 8), False, False),
    ("RESIZE_NEAREST_NEIGHBOR", (7, 9), True, False),
    ("RESIZE_NEAREST_NEIGHBOR", (3, 6), False, True),
    ("RESIZE_NEAREST_NEIGHBOR", (11, 3), True, True),
    ("RESIZE_BILINEAR", (10, 8), False, False),
    ("RESIZE_BILINEAR", (9, 7), False, True),
    ("RESIZE_BILINEAR", (7, 10), True, False),
    ("RESIZE_BILINEAR", (3, 3), False, True),
    ("RESIZE_BILINEAR", (2, 13), False, False),
]


def resize_model() -> tuple[bytes, list[str]]:
    m = ModelWriter()
    x = m.tensor("input", (2, 5, 4, 3), "i8", IN_SCALE, IN_ZP)
    outs, cases = [], []
    for i, (kind, hw, align, half) in enumerate(RESIZES):
        if kind == "RESIZE_BILINEAR" and align and half:
            continue
        y = m.tensor(f"resize{i}", (2, *hw, 3), "i8", IN_SCALE, IN_ZP)
        kind_options = "ResizeBilinearOptions" if kind == "RESIZE_BILINEAR" else "ResizeNearestNeighborOptions"
        m.op(kind, [x, _int32(m, f"resize{i}/size", list(hw))], [y],
             (kind_options, {"AlignCorners": align, "HalfPixelCenters": half}))
        outs.append(y)
        cases.append(f"{kind} to {hw}, align_corners {align}, half_pixel_centers {half}")
    return m.write([x], outs), cases


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_resize_bit_exact_with_tflite_micro(backend, tmp_path):
    need_build(backend)
    model, cases = resize_model()
    report, differing = compare_with_tflm(model, tmp_path, backend, count=8)
    assert not differing, [(k, cases[i], d) for k, i, d in differing]
    assert report["transposes"] == 0


def _bilinear_align_and_half(m, x):
    y = _out(m, "y", (1, 12, 10, 4))
    m.op("RESIZE_BILINEAR", [x, _int32(m, "size", [12, 10])], [y],
         ("ResizeBilinearOptions", {"AlignCorners": True, "HalfPixelCenters": True}))
    return y


def _resize_requantizing(m, x):
    y = m.tensor("y", (1, 12, 10, 4), "i8", 0.1, 0)
    m.op("RESIZE_NEAREST_NEIGHBOR", [x, _int32(m, "size", [12, 10])], [y])
    return y


@pytest.mark.parametrize("build, message", [
    (_bilinear_align_and_half, "operator #0 (RESIZE_BILINEAR): align_corners and half_pixel_centers are both set"),
    (_resize_requantizing, "operator #0 (RESIZE_NEAREST_NEIGHBOR): its input 'input' and its output 'y' are "
                           "quantized differently"),
])
def test_resize_refusals(build, message, tmp_path):
    assert message in _one_op(tmp_path, build)


TRANSPOSE_CONVS = [  # (output height, width, channels), kernel, stride, padding, per-channel, bias, activation
    ((10, 8, 6), (4, 5), (2, 2), 0, True, True, 1),
    ((11, 9, 3), (3, 3), (2, 2), 1, False, False, 0),
    ((5, 4, 4), (3, 3), (1, 1), 0, True, None, 3),
    ((15, 12, 2), (2, 2), (3, 3), 0, True, True, 0),
    ((9, 7, 5), (4, 1), (2, 2), 1, True, True, 2),
    ((6, 5, 3), (2, 2), (4, 3), 1, False, True, 0),
]


def transpose_conv_model() -> tuple[bytes, list[str]]:
    rng = np.random.default_rng(7)
    m = ModelWriter()
    x = m.tensor("input", (1, 5, 4, 3), "i8", IN_SCALE, IN_ZP)
    outs, cases = [], []
    for i, (out_shape, kernel, stride, padding, per_channel, bias, act) in enumerate(TRANSPOSE_CONVS):
        cout = out_shape[2]
        scales = list(rng.uniform(0.01, 0.03, cout)) if per_channel else 0.02
        w = m.tensor(f"tc{i}/w", (cout, *kernel, 3), "i8", scales, 0, rng.integers(-127, 128, (cout, *kernel, 3)))
        inputs = [_int32(m, f"tc{i}/shape", [1, *out_shape]), w, x]
        if bias is not None:
            inputs.append(m.tensor(f"tc{i}/b", (cout,), "i32", IN_SCALE * np.asarray(scales) * np.ones(cout), 0,
                                   rng.integers(-3000, 3000, cout)) if bias else -1)
        depth = kernel[0] * kernel[1] * 3 / (stride[0] * stride[1])
        y = m.tensor(f"tc{i}", (1, *out_shape), "i8", IN_SCALE * 0.02 * np.sqrt(depth) * 128 * 127 / 60,
                     int(rng.integers(-20, 20)))
        m.op("TRANSPOSE_CONV", inputs, [y], ("TransposeConvOptions", {
            "Padding": padding, "StrideH": stride[0], "StrideW": stride[1], "FusedActivationFunction": act}))
        outs.append(y)
        cases.append(f"transpose conv to {out_shape}, kernel {kernel}, stride {stride}, "
                     f"{'SAME' if padding == 0 else 'VALID'}, per-channel {per_channel}, bias {bias}, activation {act}")
    return m.write([x], outs), cases


# arm_transpose_conv_s8 under QEMU too: its MVE (M55) and DSP (M4) paths are not the host's C.
@pytest.mark.parametrize("backend, target", [("cmsis-nn", "host"), ("portable", "host"), ("cmsis-nn", "cortex-m55"),
                                             ("cmsis-nn", "cortex-m4")])
def test_transpose_conv_bit_exact_with_tflite_micro(backend, target, tmp_path):
    need_build(backend, target)
    model, cases = transpose_conv_model()
    report, differing = compare_with_tflm(model, tmp_path, backend, 8 if target == "host" else 3, target)
    assert not differing, [(k, cases[i], d) for k, i, d in differing]
    assert report["transposes"] == 0
    kernels = [op["kernel"] for op in report["ops"] if "transpose_conv2d" in op["tosa_op"]]
    # CMSIS-NN: arm_transpose_conv_s8 where its rolling buffer fills exactly the output (all but
    # the last two, whose outputs end before the last input rows' reach).
    expected = ["arm_transpose_conv_s8"] * 4 + ["portable:transpose_conv2d_s8"] * 2
    assert kernels == (expected if backend == "cmsis-nn" else ["portable:transpose_conv2d_s8"] * 6), kernels


def _transpose_conv_shape_operand_disagrees(m, x):
    w = m.tensor("w", (2, 3, 3, 4), "i8", 0.02, 0, np.ones((2, 3, 3, 4)))
    y = _out(m, "y", (1, 12, 10, 2))
    m.op("TRANSPOSE_CONV", [_int32(m, "shape", [1, 12, 11, 2]), w, x], [y],
         ("TransposeConvOptions", {"Padding": 0, "StrideH": 2, "StrideW": 2}))
    return y


def _batch_matmul_per_channel(m, x):
    w = m.tensor("w", (4, 3), "i8", [0.1, 0.2, 0.3], 0, np.ones((4, 3)), axis=1)
    y = _out(m, "y", (1, 6, 5, 3))
    m.op("BATCH_MATMUL", [x, w], [y], ("BatchMatMulOptions", {}))
    return y


@pytest.mark.parametrize("build, message", [
    (_transpose_conv_shape_operand_disagrees, "operator #0 (TRANSPOSE_CONV): its output shape operand disagrees"),
    (_batch_matmul_per_channel, "operator #0 (BATCH_MATMUL): its operand 'w' must be a per-tensor quantized tensor"),
])
def test_matmul_and_transpose_conv_refusals(build, message, tmp_path):
    assert message in _one_op(tmp_path, build)
