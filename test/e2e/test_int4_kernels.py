"""int4 weights on CMSIS-NN's s4 kernels, per kernel family, against tosa_reference_model.

Each model is one TOSA function of independent layers (conv2d or depthwise_conv2d of int8 by int4,
per-channel rescale, clamp), each on its own input: hand-picked shapes for every entry point of
arm_convolve_wrapper_s4 / arm_depthwise_conv_wrapper_s4 (1x1 fast, 1x1 strided, 1xN, even and
odd filter depths, opt and generic depthwise) with odd channel counts that split a byte,
1-pixel images, asymmetric padding, strides, dilations and depth multipliers, plus random shapes.
The C must equal the reference bit for bit: on the host (CMSIS-NN's C path, and the portable
backend, which takes the weights unpacked to int8) and under QEMU on a DSP (Cortex-M4) and an MVE
(Cortex-M55) core. Under QEMU CI runs the hand-picked shapes and two random ones per family;
MCU_INT4_ALL_SHAPES=1 runs the host's whole random sample there too.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from mcu_mlir import _mlir
from mcu_mlir.dialects import load_all
from mcu_mlir.emission.emit_c import emit_c, model_report
from mcu_mlir.firmware import run
from mcu_mlir.pipeline import run_pipeline
from mcu_mlir.reference import run_reference

from test_backend_host import CC, cmsis_nn_lib, compile_and_run, const, rand_i8, rescale, rescale_consts, zp  # noqa: F401

CROSS_TOOLS = ("cmake", "arm-none-eabi-gcc", "qemu-system-arm")
RANDOM_HOST, RANDOM_QEMU = 12, 2

# (n, h, w, c, out channels (conv) or depth multiplier (depthwise), kernel, stride, dilation,
# pad [top, bottom, left, right]): every wrapper entry point and the shapes that split a byte.
CONV_SHAPES = {
    "1x1_fast_odd_c": (1, 3, 5, 7, 5, (1, 1), (1, 1), (1, 1), (0, 0, 0, 0)),
    "1x1_strided": (1, 7, 5, 3, 9, (1, 1), (2, 2), (1, 1), (0, 0, 0, 0)),
    "1x1_bottom_right_pad": (1, 4, 4, 5, 3, (1, 1), (1, 1), (1, 1), (0, 1, 0, 2)),
    "1xn_even_c": (1, 1, 11, 4, 7, (1, 3), (1, 1), (1, 1), (0, 0, 1, 1)),
    "1xn_odd_c_stride4": (1, 1, 13, 3, 5, (1, 3), (4, 4), (1, 1), (0, 0, 1, 1)),
    "1xn_asymmetric": (1, 1, 10, 8, 3, (1, 4), (1, 1), (1, 1), (0, 0, 1, 2)),
    "3x3_odd_depth": (1, 6, 5, 3, 5, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    "3x3_even_depth_stride2": (1, 10, 8, 6, 4, (3, 3), (2, 2), (1, 1), (1, 0, 0, 1)),
    "dilated_5x3": (1, 9, 9, 5, 3, (3, 2), (1, 2), (2, 3), (2, 2, 0, 3)),
    "one_pixel": (1, 1, 1, 5, 3, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    "batch_2": (2, 4, 3, 3, 5, (2, 2), (1, 1), (1, 1), (0, 1, 1, 0)),
}
DEPTHWISE_SHAPES = {
    "opt_odd_c": (1, 6, 5, 7, 1, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    "opt_even_c_stride2": (1, 8, 8, 10, 1, (3, 3), (2, 2), (1, 1), (0, 1, 1, 0)),
    "mult3_odd_c": (1, 5, 5, 3, 3, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    "mult2_odd_c": (1, 5, 7, 5, 2, (2, 3), (1, 2), (1, 1), (0, 1, 1, 1)),
    "dilated": (1, 9, 9, 5, 1, (3, 3), (1, 1), (2, 2), (2, 2, 2, 2)),
    "one_pixel": (1, 1, 1, 9, 1, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    "one_pixel_mult2": (1, 1, 1, 3, 2, (5, 5), (1, 1), (1, 1), (2, 2, 2, 2)),
    "batch_2": (2, 4, 4, 3, 1, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    "wide_5x5_bottom_right": (1, 7, 6, 129, 1, (5, 5), (1, 1), (1, 1), (0, 2, 1, 3)),
}


def _out_size(size, k, stride, dil, before, after):
    return (size - 1 + before + after - (k - 1) * dil) // stride + 1


def random_shape(rng, depthwise: bool):
    """A random layer whose output size TOSA accepts (the padded extent divides by the stride)."""
    n = 1 if rng.random() < 0.8 else 2
    h, w = (1, 1) if rng.random() < 0.15 else (int(rng.integers(1, 10)), int(rng.integers(1, 10)))
    c = int(rng.integers(1, 12))
    out = int(rng.integers(1, 4)) if depthwise else int(rng.integers(1, 12))
    kernel = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    dil = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    pad = []
    for size, k, s, d in ((h, kernel[0], stride[0], dil[0]), (w, kernel[1], stride[1], dil[1])):
        span = (k - 1) * d
        before = int(rng.integers(0, span + 1))
        after = int(rng.integers(0, span + 1))
        while size - 1 + before + after - span < 0 or (size - 1 + before + after - span) % s:
            after += 1
        pad += [before, after]
    return (n, h, w, c, out, kernel, stride, dil, tuple(pad))


def int4_model(rng, shapes: list, depthwise: bool):
    """TOSA text of one function with a layer per shape, and an int8 input for each."""
    op = "tosa.depthwise_conv2d" if depthwise else "tosa.conv2d"
    args, results, body, ret, inputs = [], [], "", [], []
    for i, (n, h, w, c, out, kernel, stride, dil, pad) in enumerate(shapes):
        kh, kw = kernel
        oc = c * out if depthwise else out
        weights = rng.integers(-7, 8, (kh, kw, c, out) if depthwise else (oc, kh, kw, c))
        oh = _out_size(h, kh, stride[0], dil[0], pad[0], pad[1])
        ow = _out_size(w, kw, stride[1], dil[1], pad[2], pad[3])
        in_ty, acc_ty, out_ty = (f"tensor<{n}x{h}x{w}x{c}xi8>", f"tensor<{n}x{oh}x{ow}x{oc}xi32>",
                                 f"tensor<{n}x{oh}x{ow}x{oc}xi8>")
        wty = "x".join(map(str, weights.shape)) + "xi4"
        p = f"l{i}_"
        body += (const(f"{p}w", weights, "i4") + const(f"{p}b", rng.integers(-400, 400, oc), "i32")
                 + zp(f"{p}izp", int(rng.integers(-128, 128))) + zp(f"{p}wzp", 0, "i4"))
        body += (f"  %{p}acc = {op} %arg{i}, %{p}w, %{p}b, %{p}izp, %{p}wzp {{acc_type = i32, "
                 f"dilation = array<i64: {dil[0]}, {dil[1]}>, pad = array<i64: {', '.join(map(str, pad))}>, "
                 f"stride = array<i64: {stride[0]}, {stride[1]}>}} : ({in_ty}, tensor<{wty}>, tensor<{oc}xi32>, "
                 f"tensor<1xi8>, tensor<1xi4>) -> {acc_ty}\n")
        # Multipliers and shifts that keep the outputs spread over the int8 range.
        body += rescale_consts(f"{p}r", rng.integers(1 << 30, (1 << 31) - 1, oc), rng.integers(33, 37, oc),
                               0, int(rng.integers(-20, 20)))
        body += rescale(f"{p}r", f"{p}acc", acc_ty, out_ty, oc, per_channel=True)
        body += (f"  %{p}cl = tosa.clamp %{p}r {{min_val = -110 : i8, max_val = 120 : i8}} : "
                 f"({out_ty}) -> {out_ty}\n")
        args.append(in_ty)
        results.append(out_ty)
        ret.append(f"{p}cl")
        inputs.append(rand_i8(rng, (n, h, w, c)))
    sig = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(args))
    text = (f"func.func @main({sig}) -> ({', '.join(results)}) {{\n{body}"
            f"  return {', '.join('%' + r for r in ret)} : {', '.join(results)}\n}}\n")
    return text, inputs


def family_shapes(depthwise: bool, random_count: int, seed: int = 40):
    fixed = DEPTHWISE_SHAPES if depthwise else CONV_SHAPES
    rng = np.random.default_rng(seed + depthwise)
    names = list(fixed) + [f"random{i}" for i in range(random_count)]
    return names, list(fixed.values()) + [random_shape(rng, depthwise) for _ in range(random_count)]


S4_FUNCTIONS = {"arm_convolve_wrapper_s4", "arm_convolve_s4", "arm_depthwise_conv_wrapper_s4",
                "arm_depthwise_conv_s4"}


def on_s4_kernel(shape, depthwise: bool, mve: bool = False) -> bool:
    """Whether a layer runs on an s4 kernel. Depthwise layers with an odd input channel count run
    on the s8 kernel (their weights unpacked) unless arm_depthwise_conv_s4_opt takes them (one
    image, depth multiplier 1, no dilation; not on MVE): arm_depthwise_conv_s4 reads their weights
    wrongly, and _s4_opt's MVE path as GCC 12.2 builds it is wrong (kernel_library/cmsis_padding.py)."""
    n, c, mult, dil = shape[0], shape[3], shape[4], shape[7]
    return not depthwise or c % 2 == 0 or (not mve and n == 1 and mult == 1 and dil == (1, 1))


def check_kernels(report, shapes, depthwise: bool, mve: bool = False):
    for shape, op in zip(shapes, report["ops"]):
        if on_s4_kernel(shape, depthwise, mve):
            assert op["kernel"] in S4_FUNCTIONS, (shape, op)
        else:
            assert op["kernel"].startswith("arm_depthwise_conv") and op["kernel"].endswith("_s8"), (shape, op)
            assert "int4 weights unpacked to int8" in op.get("kernel_note", ""), op


def _compare(names, got, want):
    wrong = []
    for name, g, w in zip(names, got, want):
        w = np.asarray(w).reshape(g.shape).astype(g.dtype)
        if not np.array_equal(g, w):
            wrong.append(f"{name}: {int((g != w).sum())} of {g.size} differ, up to "
                         f"{int(np.abs(g.astype(np.int64) - w).max())} LSB")
    assert not wrong, "\n".join(wrong)


@pytest.mark.skipif(CC is None, reason="no host C compiler (cc/gcc) on PATH")
@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
@pytest.mark.parametrize("family", ["conv", "depthwise"])
def test_host_equals_reference(family, backend, tmp_path, request):
    names, shapes = family_shapes(family == "depthwise", RANDOM_HOST)
    text, inputs = int4_model(np.random.default_rng(7), shapes, family == "depthwise")
    expected = run_reference(text, inputs)
    extra = {}
    if backend == "cmsis-nn":
        lib, include = request.getfixturevalue("cmsis_nn_lib")
        extra = dict(target="cortex-m3", extra_sources=[lib], extra_includes=[include], defines=["MCU_DEBUG_SCRATCH"])
    got, report, _ = compile_and_run(text, inputs, tmp_path, backend=backend, **extra)
    kernels = [op["kernel"] for op in report["ops"]]
    depthwise = family == "depthwise"
    if backend == "cmsis-nn":
        check_kernels(report, shapes, depthwise)
        # The report counts the packed weights (two a byte; unpacked: one) and the int32 bias.
        for shape, op in zip(shapes, report["ops"]):
            count = int(np.prod(shape[5])) * shape[3] * shape[4]
            weights = (count + 1) // 2 if on_s4_kernel(shape, depthwise) else count
            assert op["weights_bytes"] == weights + 4 * (shape[3] * shape[4] if depthwise else shape[4]), op
    else:
        assert all(k.startswith("portable:") for k in kernels), kernels
    _compare(names, got, expected)


def _need_cross():
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    missing = [t for t in CROSS_TOOLS if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")
    return path


def compile_for(text: str, outdir, target: str):
    """The TOSA text through the conversion pipeline alone (the layout passes would turn the H = 1
    layers that reach arm_convolve_1_x_n_s4 into W = 1 ones) to model.c / model.h in `outdir`."""
    ctx = _mlir.new_context()
    load_all(ctx)
    with ctx, _mlir.ir.Location.unknown():
        module = _mlir.ir.Module.parse(text)
        run_pipeline(module, f"mcu-tosa-to-cmsisnn-pipeline{{target={target} backend=cmsis-nn}}")
        files, report = emit_c(module), model_report(module)
    outdir.mkdir()
    for name, body in files.items():
        (outdir / name).write_text(body)
    return report


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("family", ["conv", "depthwise"])
def test_qemu_equals_reference(family, target, tmp_path):
    path = _need_cross()
    count = RANDOM_HOST if os.environ.get("MCU_INT4_ALL_SHAPES") == "1" else RANDOM_QEMU
    names, shapes = family_shapes(family == "depthwise", count)
    rng = np.random.default_rng(7)
    # The firmware takes at most 15 input files: a model per 12 layers.
    for first in range(0, len(shapes), 12):
        chunk = shapes[first:first + 12]
        text, inputs = int4_model(rng, chunk, family == "depthwise")
        expected = run_reference(text, inputs)
        outdir = tmp_path / f"out{first}"
        report = compile_for(text, outdir, target)
        check_kernels(report, chunk, family == "depthwise", mve=target == "cortex-m55")
        got = run.run(outdir, inputs, target=target, cmsis_nn_path=path)
        _compare(names[first:first + 12], got.outputs_q, expected)
