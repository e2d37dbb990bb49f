"""Grouped convolutions (the frontend's channel slices, a conv + rescale per group, a concat) as
one arm_convolve_s8 call (groups = input channels / filter channels), against
tosa_reference_model: on the host (CMSIS-NN's C path and the portable backend) and under QEMU on
a DSP (Cortex-M4) and an MVE (Cortex-M55) core.

The groups' rescales mix shifts of 30 with larger ones, as RegNetX-400MF's 2x2 stages have: a
shift below 31 is a left shift inside arm_nn_requantize, exact while the accumulator times
2**(31 - shift) fits in 32 bits, which the groups' weights and biases bound. Before, any shift
below 31 kept the groups apart (25 slice copies and 25 calls per RegNetX block).
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from mcu_mlir.firmware import run
from mcu_mlir.reference import run_reference

from test_backend_host import CC, cmsis_nn_lib, compile_and_run, const, func, rand_i8, rescale, rescale_consts, zp  # noqa: F401
from test_int4_kernels import compile_for

# (h, w, groups, channels per group in, out, kernel, stride, pad [top, bottom, left, right])
SHAPES = {
    "regnet_2x2": (2, 2, 3, 4, 4, (3, 3), (1, 1), (1, 1, 1, 1)),
    "strided_odd_channels": (5, 6, 2, 3, 5, (3, 3), (2, 2), (1, 1, 1, 0)),
}


def grouped_graph(rng, h, w, groups, cin_g, cout_g, kernel, stride, pad):
    """Slices of the input along C, a conv2d + per-channel rescale + clamp each, concatenated."""
    kh, kw = kernel
    c, oc = groups * cin_g, groups * cout_g
    oh = (h - 1 + pad[0] + pad[1] - (kh - 1)) // stride[0] + 1
    ow = (w - 1 + pad[2] + pad[3] - (kw - 1)) // stride[1] + 1
    in_ty, size = f"tensor<1x{h}x{w}x{c}xi8>", f"tensor<1x{h}x{w}x{cin_g}xi8>"
    acc_ty, out_ty = f"tensor<1x{oh}x{ow}x{cout_g}xi32>", f"tensor<1x{oh}x{ow}x{cout_g}xi8>"
    body = zp("izp", -7) + zp("wzp", 0)
    body += f"  %size = tosa.const_shape {{values = dense<[1, {h}, {w}, {cin_g}]> : tensor<4xindex>}} : () -> !tosa.shape<4>\n"
    outs = []
    for g in range(groups):
        body += (f"  %s{g} = tosa.const_shape {{values = dense<[0, 0, 0, {g * cin_g}]> : tensor<4xindex>}} : "
                 f"() -> !tosa.shape<4>\n"
                 f"  %x{g} = tosa.slice %arg0, %s{g}, %size : ({in_ty}, !tosa.shape<4>, !tosa.shape<4>) -> {size}\n")
        body += const(f"w{g}", rand_i8(rng, (cout_g, kh, kw, cin_g), -20, 20), "i8")
        body += const(f"b{g}", rng.integers(-500, 500, cout_g), "i32")
        body += (f"  %acc{g} = tosa.conv2d %x{g}, %w{g}, %b{g}, %izp, %wzp {{acc_type = i32, "
                 f"dilation = array<i64: 1, 1>, pad = array<i64: {', '.join(map(str, pad))}>, "
                 f"stride = array<i64: {stride[0]}, {stride[1]}>}} : ({size}, tensor<{cout_g}x{kh}x{kw}x{cin_g}xi8>, "
                 f"tensor<{cout_g}xi32>, tensor<1xi8>, tensor<1xi8>) -> {acc_ty}\n")
        shift = rng.choice([30, 30, 36, 38], cout_g)
        mult = rng.integers(1 << 30, (1 << 31) - 1, cout_g)
        body += rescale_consts(f"r{g}", mult, shift, 0, 5)
        body += rescale(f"r{g}", f"acc{g}", acc_ty, out_ty, cout_g, per_channel=True)
        body += f"  %a{g} = tosa.clamp %r{g} {{min_val = -20 : i8, max_val = 100 : i8}} : ({out_ty}) -> {out_ty}\n"
        outs.append(f"%a{g}")
    y_ty = f"tensor<1x{oh}x{ow}x{oc}xi8>"
    body += (f"  %y = tosa.concat {', '.join(outs)} {{axis = 3 : i32}} : ({', '.join([out_ty] * groups)}) -> {y_ty}\n")
    return func([in_ty], [y_ty], body, ["y"]), [rand_i8(rng, (1, h, w, c))]


def _model(name):
    return grouped_graph(np.random.default_rng(11), *SHAPES[name])


def _one_grouped_call(report):
    kernels = [op["kernel"] for op in report["ops"]]
    assert kernels == ["arm_convolve_s8"], kernels


@pytest.mark.skipif(CC is None, reason="no host C compiler (cc/gcc) on PATH")
@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
@pytest.mark.parametrize("name", list(SHAPES))
def test_host_equals_reference(name, backend, tmp_path, request):
    text, inputs = _model(name)
    expected = run_reference(text, inputs)[0]
    extra = {}
    if backend == "cmsis-nn":
        lib, include = request.getfixturevalue("cmsis_nn_lib")
        extra = dict(target="cortex-m3", extra_sources=[lib], extra_includes=[include], defines=["MCU_DEBUG_SCRATCH"])
    got, report, _ = compile_and_run(text, inputs, tmp_path, backend=backend, **extra)
    if backend == "cmsis-nn":
        _one_grouped_call(report)
    else:
        assert [op["kernel"] for op in report["ops"]] == ["portable:conv2d_s8"], report["ops"]
    np.testing.assert_array_equal(got[0], np.asarray(expected).reshape(got[0].shape))


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_qemu_equals_reference(target, tmp_path):
    path = os.environ.get("CMSIS_NN_PATH")
    if not path:
        pytest.skip("CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")
    missing = [t for t in ("cmake", "arm-none-eabi-gcc", "qemu-system-arm") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: needed to build and run the generated C")
    text, inputs = _model("regnet_2x2")
    expected = run_reference(text, inputs)[0]
    report = compile_for(text, tmp_path / "out", target)
    _one_grouped_call(report)
    got = run.run(tmp_path / "out", inputs, target=target, cmsis_nn_path=path).outputs_q[0]
    np.testing.assert_array_equal(got, np.asarray(expected).reshape(got.shape))
