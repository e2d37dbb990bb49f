"""Backend on the host: integer TOSA -> cmsisnn -> C (portable kernels), built with the host C
compiler and compared bit for bit with tosa_reference_model on the same TOSA, per op family."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mcu_mlir import _mlir
from mcu_mlir.dialects import load_all
from mcu_mlir.pipeline import run_pipeline
from mcu_mlir.ir.types import STORAGE
from mcu_mlir.reference import run_reference
from mcu_mlir.emission.emit_c import emit_c, model_report

ROOT = Path(__file__).resolve().parents[2]
CC = shutil.which("cc") or shutil.which("gcc")
RNG_SEED = 1234

pytestmark = pytest.mark.skipif(CC is None, reason="no host C compiler (cc/gcc) on PATH")

HARNESS = textwrap.dedent(r"""
    #include <stdio.h>
    #include <stdlib.h>
    #include "model.h"
    static uint8_t arena[MCU_MODEL_ARENA_BYTES + 16] __attribute__((aligned(16)));
    int main(int argc, char **argv) {
      const void *inputs[MCU_MODEL_NUM_INPUTS];
      void *outputs[MCU_MODEL_NUM_OUTPUTS];
      (void)argc;
      for (int i = 0; i < MCU_MODEL_NUM_INPUTS; ++i) {
        void *buf = malloc(mcu_model_inputs[i].size_bytes + 1);
        FILE *f = fopen(argv[1 + i], "rb");
        if (!f || fread(buf, 1, mcu_model_inputs[i].size_bytes, f) != (size_t)mcu_model_inputs[i].size_bytes) return 90;
        fclose(f);
        inputs[i] = buf;
      }
      for (int i = 0; i < MCU_MODEL_NUM_OUTPUTS; ++i) outputs[i] = calloc(1, mcu_model_outputs[i].size_bytes + 1);
      int status = mcu_model_run(inputs, outputs, arena);
      if (status != 0) return 100 + (status < 0 ? -status : status);
      for (int i = 0; i < MCU_MODEL_NUM_OUTPUTS; ++i) {
        FILE *f = fopen(argv[1 + MCU_MODEL_NUM_INPUTS + i], "wb");
        fwrite(outputs[i], 1, mcu_model_outputs[i].size_bytes, f);
        fclose(f);
      }
      return 0;
    }
    """)


def compile_and_run(text: str, inputs: list[np.ndarray], tmp: Path, backend="portable",
                    target="host", extra_sources=(), extra_includes=(), defines=()):
    """Lowers TOSA text to C, builds it for the host, runs it; returns (outputs, report, files)."""
    ctx = _mlir.new_context()
    load_all(ctx)
    with ctx, _mlir.ir.Location.unknown():
        module = _mlir.ir.Module.parse(text)
        run_pipeline(module, f"mcu-tosa-to-cmsisnn-pipeline{{target={target} backend={backend}}}")
        files = emit_c(module)
        report = model_report(module)
        out_types = [_mlir.ir.RankedTensorType(t) for t in
                     module.body.operations[0].type.results]
    for name, body in files.items():
        (tmp / name).write_text(body)
    (tmp / "main.c").write_text(HARNESS)
    exe = tmp / "model"
    cmd = [CC, "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "include"),
           "-I", str(tmp), *[f"-I{d}" for d in extra_includes], *[f"-D{d}" for d in defines],
           str(tmp / "model.c"), str(tmp / "main.c"), str(ROOT / "lib" / "runtime.c"),
           *map(str, sorted((ROOT / "lib" / "portable").glob("*.c"))), *map(str, extra_sources),
           "-o", str(exe), "-lm"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    args = []
    for i, x in enumerate(inputs):
        path = tmp / f"in{i}.bin"
        path.write_bytes(np.ascontiguousarray(x).tobytes())
        args.append(str(path))
    outs = [tmp / f"out{i}.bin" for i in range(len(out_types))]
    proc = subprocess.run([str(exe), *args, *map(str, outs)], capture_output=True, text=True)
    assert proc.returncode == 0, f"model run failed with {proc.returncode}: {proc.stderr}"
    results = []
    for path, ty in zip(outs, out_types):
        arr = np.frombuffer(path.read_bytes(), dtype=STORAGE[str(ty.element_type)])
        results.append(arr.reshape(list(ty.shape)))
    return results, report, files


# -- graph builders ------------------------------------------------------------------------------

def dense(arr: np.ndarray, ty: str) -> str:
    shape = "x".join(str(d) for d in arr.shape)
    flat = ", ".join(str(int(v)) for v in arr.reshape(-1))
    body = f"[{flat}]" if arr.ndim else flat
    if arr.ndim > 1:
        body = np.array2string(arr, separator=", ", threshold=10 ** 9, max_line_width=10 ** 9).replace("\n", "")
    return f"dense<{body}> : tensor<{shape}x{ty}>" if shape else f"dense<{body}> : tensor<{ty}>"


def const(name: str, arr: np.ndarray, ty: str) -> str:
    shape = "x".join(str(d) for d in arr.shape)
    return f'  %{name} = "tosa.const"() {{values = {dense(arr, ty)}}} : () -> tensor<{shape}x{ty}>\n'


def zp(name: str, value: int, ty: str = "i8") -> str:
    return const(name, np.array([value]), ty)


def rescale_consts(prefix: str, mult, shift, in_zp: int, out_zp: int, in_ty="i32", out_ty="i8"):
    return (const(f"{prefix}m", np.asarray(mult), "i32") + const(f"{prefix}s", np.asarray(shift), "i8")
            + zp(f"{prefix}iz", in_zp, in_ty) + zp(f"{prefix}oz", out_zp, out_ty))


def rescale(prefix, src, src_ty, dst_ty, n, per_channel=False, rounding="DOUBLE_ROUND", out=None):
    return (f"  %{out or prefix} = tosa.rescale %{src}, %{prefix}m, %{prefix}s, %{prefix}iz, %{prefix}oz "
            f"{{input_unsigned = false, output_unsigned = false, per_channel = {str(per_channel).lower()}, "
            f"rounding_mode = {rounding}, scale32 = true}} : ({src_ty}, tensor<{n}xi32>, tensor<{n}xi8>, "
            f"tensor<1x{src_ty.split('x')[-1]}, tensor<1x{dst_ty.split('x')[-1]}) -> {dst_ty}\n")


def func(args: list[str], results: list[str], body: str, ret: list[str]) -> str:
    sig = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(args))
    res = ", ".join(results)
    return (f"func.func @main({sig}) -> ({res}) {{\n{body}"
            f"  return {', '.join('%' + r for r in ret)} : {res}\n}}\n")


def rand_i8(rng, shape, lo=-128, hi=128):
    return rng.integers(lo, hi, shape).astype(np.int8)


def conv_graph(rng, depthwise=False, groups=1, clamp=True, per_channel=True, n=1, h=9, w=7, c=4,
               kernel=(3, 3), stride=(2, 1), pad=(1, 1, 0, 1), dil=(1, 2), oc=6, m=2):
    kh, kw = kernel
    if depthwise:
        oc = c * m
        weights = rand_i8(rng, (kh, kw, c, m), -20, 20)
        op = "tosa.depthwise_conv2d"
    else:
        weights = rand_i8(rng, (oc, kh, kw, c // groups), -20, 20)
        op = "tosa.conv2d"
    oh = (h - 1 + pad[0] + pad[1] - (kh - 1) * dil[0]) // stride[0] + 1
    ow = (w - 1 + pad[2] + pad[3] - (kw - 1) * dil[1]) // stride[1] + 1
    k = oc if per_channel else 1
    mult = rng.integers(1 << 30, (1 << 31) - 1, k)
    shift = rng.integers(36, 40, k)
    wty = "x".join(map(str, weights.shape)) + "xi8"
    body = (const("w", weights, "i8") + const("b", rng.integers(-500, 500, oc), "i32")
            + zp("izp", -7) + zp("wzp", 0))
    body += (f"  %acc = {op} %arg0, %w, %b, %izp, %wzp {{acc_type = i32, dilation = array<i64: {dil[0]}, {dil[1]}>, "
             f"pad = array<i64: {', '.join(map(str, pad))}>, stride = array<i64: {stride[0]}, {stride[1]}>}} : "
             f"(tensor<{n}x{h}x{w}x{c}xi8>, tensor<{wty}>, tensor<{oc}xi32>, tensor<1xi8>, tensor<1xi8>) "
             f"-> tensor<{n}x{oh}x{ow}x{oc}xi32>\n")
    out_ty = f"tensor<{n}x{oh}x{ow}x{oc}xi8>"
    body += rescale_consts("r", mult, shift, 0, 5)
    body += rescale("r", "acc", f"tensor<{n}x{oh}x{ow}x{oc}xi32>", out_ty, k, per_channel)
    last = "r"
    if clamp:
        body += f"  %cl = tosa.clamp %r {{min_val = -20 : i8, max_val = 100 : i8}} : ({out_ty}) -> {out_ty}\n"
        last = "cl"
    text = func([f"tensor<{n}x{h}x{w}x{c}xi8>"], [out_ty], body, [last])
    return text, [rand_i8(rng, (n, h, w, c))]


def shifts_graph(rng):
    """Right shifts of negative int8 / int32 values: logical ones bring in zeros at the element's
    width, arithmetic ones copies of the sign, rounded or not."""
    body = ""
    outs = []
    for et, n in (("i32", "a"), ("i8", "b")):
        t = f"tensor<2x8x{et}>"
        sh = f"%s{n}"
        body += f"  %l{n} = tosa.logical_right_shift %{n}, {sh} : ({t}, {t}) -> {t}\n"
        body += f"  %r{n} = tosa.arithmetic_right_shift %{n}, {sh} {{round = true}} : ({t}, {t}) -> {t}\n"
        body += f"  %t{n} = tosa.arithmetic_right_shift %{n}, {sh} {{round = false}} : ({t}, {t}) -> {t}\n"
        outs += [f"l{n}", f"r{n}", f"t{n}"]
    types = ["tensor<2x8xi32>"] * 3 + ["tensor<2x8xi8>"] * 3
    text = func(["tensor<2x8xi32>", "tensor<2x8xi32>", "tensor<2x8xi8>", "tensor<2x8xi8>"], types, body, outs)
    text = text.replace("%arg0", "%a").replace("%arg1", "%sa").replace("%arg2", "%b").replace("%arg3", "%sb")
    return text, [rng.integers(-2 ** 31, 2 ** 31, (2, 8)).astype(np.int32), rng.integers(0, 32, (2, 8)).astype(np.int32),
                  rand_i8(rng, (2, 8)), rng.integers(0, 8, (2, 8)).astype(np.int8)]


def broadcast_bias_graph(rng):
    """TOSA lets a [1] bias stand for every output channel: conv2d, depthwise_conv2d and
    transpose_conv2d with one (the kernels read one per channel: a [1] array was read past its end)."""
    x = "tensor<1x5x5x2xi8>"
    body = (const("w", rand_i8(rng, (6, 3, 3, 2), -20, 20), "i8") + const("dw", rand_i8(rng, (3, 3, 2, 3), -20, 20), "i8")
            + const("tw", rand_i8(rng, (4, 2, 2, 2), -20, 20), "i8") + const("b", np.array([321]), "i32")
            + zp("izp", -7) + zp("wzp", 0))
    body += ("  %c = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, "
             "pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x5x5x2xi8>, tensor<6x3x3x2xi8>, "
             "tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x5x5x6xi32>\n")
    body += ("  %d = tosa.depthwise_conv2d %arg0, %dw, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, "
             "pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x5x5x2xi8>, tensor<3x3x2x3xi8>, "
             "tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x6xi32>\n")
    body += ("  %t = tosa.transpose_conv2d %arg0, %tw, %b, %izp, %wzp {acc_type = i32, out_pad = array<i64: 0, 0, 0, 0>, "
             "stride = array<i64: 1, 1>} : (tensor<1x5x5x2xi8>, tensor<4x2x2x2xi8>, tensor<1xi32>, tensor<1xi8>, "
             "tensor<1xi8>) -> tensor<1x6x6x4xi32>\n")
    text = func([x], ["tensor<1x5x5x6xi32>", "tensor<1x3x3x6xi32>", "tensor<1x6x6x4xi32>"], body, ["c", "d", "t"])
    return text, [rand_i8(rng, (1, 5, 5, 2))]


def unsigned_rescale_graph(rng):
    """RESCALE from and to unsigned 8-bit: zero points 128 and 200 are stored as the i8 bytes
    0x80 and 0xC8 (-128 and -56 read as signed)."""
    body = (const("m", np.array([1500000000]), "i32") + const("s", np.array([31]), "i8")
            + zp("iz", -128) + zp("oz", -56) + zp("z16", 0, "i16"))
    body += ("  %u = tosa.rescale %arg0, %m, %s, %iz, %z16 {input_unsigned = true, output_unsigned = false, "
             "per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2x8xi8>, tensor<1xi32>, "
             "tensor<1xi8>, tensor<1xi8>, tensor<1xi16>) -> tensor<2x8xi16>\n")
    body += ("  %v = tosa.rescale %arg1, %m, %s, %z16, %oz {input_unsigned = false, output_unsigned = true, "
             "per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2x8xi16>, tensor<1xi32>, "
             "tensor<1xi8>, tensor<1xi16>, tensor<1xi8>) -> tensor<2x8xi8>\n")
    text = func(["tensor<2x8xi8>", "tensor<2x8xi16>"], ["tensor<2x8xi16>", "tensor<2x8xi8>"], body, ["u", "v"])
    return text, [rand_i8(rng, (2, 8)), rng.integers(-300, 300, (2, 8)).astype(np.int16)]


def int48_output_graph(rng):
    """An int16 conv's int48 accumulators returned as they are: an int48 graph output (stored as
    int64 by the C, 8 bytes an element)."""
    weights = rand_i8(rng, (3, 1, 1, 2), -20, 20)
    body = (const("w", weights, "i8") + const("b", rng.integers(-500, 500, 3), "i48")
            + zp("izp", 0, "i16") + zp("wzp", 0))
    body += ("  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, "
             "pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xi16>, tensor<3x1x1x2xi8>, "
             "tensor<3xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x3x3x3xi48>\n")
    text = func(["tensor<1x3x3x2xi16>"], ["tensor<1x3x3x3xi48>"], body, ["acc"])
    return text, [rng.integers(-32768, 32768, (1, 3, 3, 2)).astype(np.int16)]


def fc_graph(rng, per_channel=False):
    k, o, rows = 24, 10, 3
    weights = rand_i8(rng, (1, k, o), -30, 30)
    nm = o if per_channel else 1
    body = const("w", weights, "i8") + zp("azp", 11) + zp("bzp", 0)
    body += (f"  %mm = tosa.matmul %arg0, %w, %azp, %bzp : (tensor<1x{rows}x{k}xi8>, tensor<1x{k}x{o}xi8>, "
             f"tensor<1xi8>, tensor<1xi8>) -> tensor<1x{rows}x{o}xi32>\n")
    body += const("bias", rng.integers(-2000, 2000, (1, 1, o)), "i32")
    body += (f"  %ab = tosa.add %mm, %bias : (tensor<1x{rows}x{o}xi32>, tensor<1x1x{o}xi32>) -> "
             f"tensor<1x{rows}x{o}xi32>\n")
    body += rescale_consts("r", rng.integers(1 << 30, (1 << 31) - 1, nm), rng.integers(38, 41, nm), 0, -3)
    body += rescale("r", "ab", f"tensor<1x{rows}x{o}xi32>", f"tensor<1x{rows}x{o}xi8>", nm, per_channel)
    text = func([f"tensor<1x{rows}x{k}xi8>"], [f"tensor<1x{rows}x{o}xi8>"], body, ["r"])
    return text, [rand_i8(rng, (1, rows, k))]


def batch_matmul_graph(rng):
    body = zp("azp", 3) + zp("bzp", -2)
    body += ("  %mm = tosa.matmul %arg0, %arg1, %azp, %bzp : (tensor<2x3x5xi8>, tensor<2x5x4xi8>, "
             "tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x4xi32>\n")
    text = func(["tensor<2x3x5xi8>", "tensor<2x5x4xi8>"], ["tensor<2x3x4xi32>"], body, ["mm"])
    return text, [rand_i8(rng, (2, 3, 5)), rand_i8(rng, (2, 5, 4))]


def pool_graph(rng, avg: bool, pool_zp: int = -4):
    ty, oty = "tensor<1x8x9x3xi8>", "tensor<1x4x5x3xi8>"
    if avg:
        body = zp("izp", pool_zp) + zp("ozp", pool_zp)
        body += (f"  %p = tosa.avg_pool2d %arg0, %izp, %ozp {{acc_type = i32, kernel = array<i64: 3, 3>, "
                 f"pad = array<i64: 1, 0, 1, 1>, stride = array<i64: 2, 2>}} : ({ty}, tensor<1xi8>, tensor<1xi8>) -> {oty}\n")
    else:
        body = (f"  %p = tosa.max_pool2d %arg0 {{kernel = array<i64: 3, 3>, pad = array<i64: 1, 0, 1, 1>, "
                f"stride = array<i64: 2, 2>}} : ({ty}) -> {oty}\n")
    body += f"  %c = tosa.clamp %p {{min_val = -100 : i8, max_val = 90 : i8}} : ({oty}) -> {oty}\n"
    return func([ty], [oty], body, ["c"]), [rand_i8(rng, (1, 8, 9, 3))]


def add_graph(rng, mul=False, broadcast=False):
    ty, ity = "tensor<1x4x4x8xi8>", "tensor<1x4x4x8xi32>"
    ty2, ity2 = ("tensor<1x1x1x8xi8>", "tensor<1x1x1x8xi32>") if broadcast else (ty, ity)
    if mul:
        body = rescale_consts("a", [1 << 30], [30], 3, 0, "i8", "i32") + rescale_consts("b", [1 << 30], [30], -9, 0, "i8", "i32")
    else:
        body = rescale_consts("a", [1395864371], [28], 3, 0, "i8", "i32") + rescale_consts("b", [1174405120], [29], -9, 0, "i8", "i32")
    body += rescale("a", "arg0", ty, ity, 1) + rescale("b", "arg1", ty2, ity2, 1)
    if mul:
        body += const("sh", np.array([0]), "i8")
        body += f"  %s = tosa.mul %a, %b, %sh : ({ity}, {ity2}, tensor<1xi8>) -> {ity}\n"
        body += rescale_consts("o", [1518500250], [42], 0, 2)
    else:
        body += f"  %s = tosa.add %a, %b : ({ity}, {ity2}) -> {ity}\n"
        body += rescale_consts("o", [1288490189], [40], 0, 2)
    body += rescale("o", "s", ity, ty, 1)
    body += f"  %c = tosa.clamp %o {{min_val = -128 : i8, max_val = 120 : i8}} : ({ty}) -> {ty}\n"
    second = (1, 1, 1, 8) if broadcast else (1, 4, 4, 8)
    return func([ty, ty2], [ty], body, ["c"]), [rand_i8(rng, (1, 4, 4, 8)), rand_i8(rng, second)]


def square_graph(rng):
    """x * x (one widening rescale used twice), as a squared magnitude is written."""
    ty, ity = "tensor<1x3x5xi8>", "tensor<1x3x5xi32>"
    body = rescale_consts("a", [1 << 30], [30], -6, 0, "i8", "i32") + rescale("a", "arg0", ty, ity, 1)
    body += const("sh", np.array([0]), "i8")
    body += f"  %s = tosa.mul %a, %a, %sh : ({ity}, {ity}, tensor<1xi8>) -> {ity}\n"
    body += rescale_consts("o", [1518500250], [44], 0, -100) + rescale("o", "s", ity, ty, 1)
    return func([ty], [ty], body, ["o"]), [rand_i8(rng, (1, 3, 5))]


def add_through_reshape_graph(rng):
    """An int8 add whose second operand is reshaped between its rescales and the add."""
    ty_a, ty_b, ity_a, ity_b = "tensor<1x8xi8>", "tensor<1x1x8xi8>", "tensor<1x8xi32>", "tensor<1x1x8xi32>"
    body = rescale_consts("a", [1 << 30], [10], 3, 0, "i8", "i32") + rescale_consts("a2", [1395864371], [31], 0, 0, "i32", "i32")
    body += rescale_consts("b", [1 << 30], [10], -9, 0, "i8", "i32") + rescale_consts("b2", [1174405120], [32], 0, 0, "i32", "i32")
    body += rescale("a", "arg0", ty_a, ity_a, 1) + rescale("a2", "a", ity_a, ity_a, 1)
    body += rescale("b", "arg1", ty_b, ity_b, 1) + rescale("b2", "b", ity_b, ity_b, 1)
    body += '  %rs = tosa.const_shape {values = dense<[1, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>\n'
    body += f"  %bv = tosa.reshape %b2, %rs : ({ity_b}, !tosa.shape<2>) -> {ity_a}\n"
    body += f"  %s = tosa.add %a2, %bv : ({ity_a}, {ity_a}) -> {ity_a}\n"
    body += rescale_consts("o", [1288490189], [51], 0, 2) + rescale("o", "s", ity_a, ty_a, 1)
    return func([ty_a, ty_b], [ty_a], body, ["o"]), [rand_i8(rng, (1, 8)), rand_i8(rng, (1, 1, 8))]


def data_movement_s8_graph(rng):
    """4-D int8 transpose, pad and concatenations on two axes (CMSIS-NN has kernels for these)."""
    ty = "tensor<1x3x4x5xi8>"
    body = f"  %t = tosa.transpose %arg0 {{perms = array<i32: 0, 2, 3, 1>}} : ({ty}) -> tensor<1x4x5x3xi8>\n"
    body += '  %pads = tosa.const_shape {values = dense<[0, 0, 1, 2, 0, 1, 2, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>\n'
    body += zp("pv", -7)
    body += "  %p = tosa.pad %t, %pads, %pv : (tensor<1x4x5x3xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x7x6x5xi8>\n"
    body += ("  %c = tosa.concat %p, %arg1, %p {axis = 3 : i32} : (tensor<1x7x6x5xi8>, tensor<1x7x6x2xi8>, "
             "tensor<1x7x6x5xi8>) -> tensor<1x7x6x12xi8>\n")
    body += ("  %d = tosa.concat %c, %c {axis = 1 : i32} : (tensor<1x7x6x12xi8>, tensor<1x7x6x12xi8>) "
             "-> tensor<1x14x6x12xi8>\n")
    text = func([ty, "tensor<1x7x6x2xi8>"], ["tensor<1x14x6x12xi8>"], body, ["d"])
    return text, [rand_i8(rng, (1, 3, 4, 5)), rand_i8(rng, (1, 7, 6, 2))]


def transposes_any_rank_graph(rng):
    """Transposes of rank 5 (ShuffleNet's channel shuffle), 3 and 2: one arm_transpose_s8 each once
    unit dims are dropped and dims that stay together merged."""
    a, b = "tensor<1x3x4x2x6xi8>", "tensor<5x7xi8>"
    body = (f"  %s = tosa.transpose %arg0 {{perms = array<i32: 0, 1, 2, 4, 3>}} : ({a}) -> tensor<1x3x4x6x2xi8>\n"
            f"  %u = tosa.transpose %arg0 {{perms = array<i32: 3, 4, 0, 2, 1>}} : ({a}) -> tensor<2x6x1x4x3xi8>\n"
            f"  %t = tosa.transpose %arg1 {{perms = array<i32: 1, 0>}} : ({b}) -> tensor<7x5xi8>\n")
    text = func([a, b], ["tensor<1x3x4x6x2xi8>", "tensor<2x6x1x4x3xi8>", "tensor<7x5xi8>"], body, ["s", "u", "t"])
    return text, [rand_i8(rng, (1, 3, 4, 2, 6)), rand_i8(rng, (5, 7))]


def transposes_wide_graph(rng):
    """int16 and int32 transposes (the portable kernel's typed runs): unit dims, dims the
    permutation keeps together, an innermost dim that stays innermost (whole-run copies) and one
    that moves (strided runs)."""
    a, b = "tensor<2x3x1x4x5xi16>", "tensor<3x4x5xi32>"
    body = (f"  %s = tosa.transpose %arg0 {{perms = array<i32: 3, 0, 2, 1, 4>}} : ({a}) -> tensor<4x2x1x3x5xi16>\n"
            f"  %u = tosa.transpose %arg0 {{perms = array<i32: 4, 2, 0, 1, 3>}} : ({a}) -> tensor<5x1x2x3x4xi16>\n"
            f"  %t = tosa.transpose %arg1 {{perms = array<i32: 2, 0, 1>}} : ({b}) -> tensor<5x3x4xi32>\n")
    text = func([a, b], ["tensor<4x2x1x3x5xi16>", "tensor<5x1x2x3x4xi16>", "tensor<5x3x4xi32>"], body,
                ["s", "u", "t"])
    return text, [rng.integers(-32768, 32768, (2, 3, 1, 4, 5)).astype(np.int16),
                  rng.integers(-2 ** 31, 2 ** 31, (3, 4, 5)).astype(np.int32)]


def many_inputs_concat_graph(rng):
    """Concatenations of many tensors: 16 of one type (an unrolled recurrence's stack) and 20 of
    alternating types (more runs of types than a kernel op's operand groups: concatenated in parts)."""
    a, b = "tensor<1x2x3x4xi8>", "tensor<1x2x3x1xi8>"
    same = ", ".join(["%arg0"] * 16)
    mixed = ", ".join(["%arg0", "%arg1"] * 10)
    body = (f"  %s = tosa.concat {same} {{axis = 1 : i32}} : ({', '.join([a] * 16)}) -> tensor<1x32x3x4xi8>\n"
            f"  %m = tosa.concat {mixed} {{axis = 3 : i32}} : ({', '.join([a, b] * 10)}) -> tensor<1x2x3x50xi8>\n")
    text = func([a, b], ["tensor<1x32x3x4xi8>", "tensor<1x2x3x50xi8>"], body, ["s", "m"])
    return text, [rand_i8(rng, (1, 2, 3, 4)), rand_i8(rng, (1, 2, 3, 1))]


def misc_graph(rng):
    """table, transpose, concat, pad, slice, reshape, argmax, cast, maximum (broadcast), reduce_sum, rescale."""
    ty = "tensor<1x4x6x2xi8>"
    table = rand_i8(rng, (256,))
    body = const("tab", table, "i8")
    body += f"  %t = tosa.table %arg0, %tab : ({ty}, tensor<256xi8>) -> {ty}\n"
    body += f"  %tr = tosa.transpose %t {{perms = array<i32: 0, 3, 1, 2>}} : ({ty}) -> tensor<1x2x4x6xi8>\n"
    body += (f"  %cc = tosa.concat %tr, %tr {{axis = 2 : i32}} : (tensor<1x2x4x6xi8>, tensor<1x2x4x6xi8>) "
             f"-> tensor<1x2x8x6xi8>\n")
    body += '  %pads = tosa.const_shape {values = dense<[0, 0, 1, 0, 0, 2, 1, 1]> : tensor<8xindex>} : () -> !tosa.shape<8>\n'
    body += zp("pv", -5)
    body += "  %pd = tosa.pad %cc, %pads, %pv : (tensor<1x2x8x6xi8>, !tosa.shape<8>, tensor<1xi8>) -> tensor<1x3x10x8xi8>\n"
    body += '  %st = tosa.const_shape {values = dense<[0, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += '  %sz = tosa.const_shape {values = dense<[1, 2, 5, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += "  %sl = tosa.slice %pd, %st, %sz : (tensor<1x3x10x8xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x2x5x6xi8>\n"
    body += '  %rs = tosa.const_shape {values = dense<[2, 30]> : tensor<2xindex>} : () -> !tosa.shape<2>\n'
    body += "  %re = tosa.reshape %sl, %rs : (tensor<1x2x5x6xi8>, !tosa.shape<2>) -> tensor<2x30xi8>\n"
    body += "  %am = tosa.argmax %re {axis = 1 : i32} : (tensor<2x30xi8>) -> tensor<2xi32>\n"
    body += "  %ca = tosa.cast %re : (tensor<2x30xi8>) -> tensor<2x30xi32>\n"
    body += "  %cb = tosa.cast %arg1 : (tensor<1x30xi8>) -> tensor<1x30xi32>\n"
    body += "  %mx = tosa.maximum %ca, %cb : (tensor<2x30xi32>, tensor<1x30xi32>) -> tensor<2x30xi32>\n"
    body += "  %rsum = tosa.reduce_sum %mx {axis = 1 : i32} : (tensor<2x30xi32>) -> tensor<2x1xi32>\n"
    body += rescale_consts("q", [1234567890], [37], 0, 0, "i32", "i16")
    body += ("  %q = tosa.rescale %rsum, %qm, %qs, %qiz, %qoz {input_unsigned = false, output_unsigned = false, "
             "per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2x1xi32>, tensor<1xi32>, "
             "tensor<1xi8>, tensor<1xi32>, tensor<1xi16>) -> tensor<2x1xi16>\n")
    text = func([ty, "tensor<1x30xi8>"], ["tensor<2xi32>", "tensor<2x1xi16>", "tensor<2x30xi32>"], body,
                ["am", "q", "mx"])
    return text, [rand_i8(rng, (1, 4, 6, 2)), rand_i8(rng, (1, 30))]


def transpose_conv_graph(rng):
    """tosa.transpose_conv2d (portable, int32 out) then its rescale."""
    n, h, w, c, oc, kh, kw = 1, 4, 3, 3, 5, 3, 2
    stride, out_pad = (2, 1), (0, -1, 1, 0)
    oh = (h - 1) * stride[0] + out_pad[0] + out_pad[1] + kh
    ow = (w - 1) * stride[1] + out_pad[2] + out_pad[3] + kw
    body = (const("w", rand_i8(rng, (oc, kh, kw, c), -30, 30), "i8") + const("b", rng.integers(-300, 300, oc), "i32")
            + zp("izp", 4) + zp("wzp", 0))
    acc_ty, out_ty = f"tensor<{n}x{oh}x{ow}x{oc}xi32>", f"tensor<{n}x{oh}x{ow}x{oc}xi8>"
    body += (f"  %acc = tosa.transpose_conv2d %arg0, %w, %b, %izp, %wzp {{acc_type = i32, "
             f"out_pad = array<i64: {', '.join(map(str, out_pad))}>, stride = array<i64: {stride[0]}, {stride[1]}>}} : "
             f"(tensor<{n}x{h}x{w}x{c}xi8>, tensor<{oc}x{kh}x{kw}x{c}xi8>, tensor<{oc}xi32>, tensor<1xi8>, tensor<1xi8>) -> {acc_ty}\n")
    body += rescale_consts("r", rng.integers(1 << 30, (1 << 31) - 1, oc), rng.integers(37, 40, oc), 0, -2)
    body += rescale("r", "acc", acc_ty, out_ty, oc, True)
    return func([f"tensor<{n}x{h}x{w}x{c}xi8>"], [out_ty], body, ["r"]), [rand_i8(rng, (n, h, w, c))]


def int16_table_mul_graph(rng):
    """int16: interpolated TABLE + RESCALE (a sigmoid's form) gating a broadcast multiply."""
    ty, gty = "tensor<1x4x4x6xi16>", "tensor<1x1x1x6xi16>"
    ity, gity = "tensor<1x4x4x6xi32>", "tensor<1x1x1x6xi32>"
    table = np.sort(rng.integers(-32768, 32767, 513)).astype(np.int16)
    body = const("tab", table, "i16")
    body += f"  %t = tosa.table %arg1, %tab : ({gty}, tensor<513xi16>) -> {gity}\n"
    body += rescale_consts("g", [1 << 30], [37], 0, 0, "i32", "i16")
    body += rescale("g", "t", gity, gty, 1, rounding="SINGLE_ROUND")
    body += rescale_consts("a", [1 << 30], [30], 0, 0, "i16", "i32") + rescale("a", "arg0", ty, ity, 1)
    body += rescale_consts("b", [1 << 30], [30], 0, 0, "i16", "i32") + rescale("b", "g", gty, gity, 1)
    body += const("sh", np.array([0]), "i8")
    body += f"  %m = tosa.mul %a, %b, %sh : ({ity}, {gity}, tensor<1xi8>) -> {ity}\n"
    body += rescale_consts("o", [1518500250], [45], 0, 0, "i32", "i16") + rescale("o", "m", ity, ty, 1)
    inputs = [rng.integers(-32768, 32767, (1, 4, 4, 6)).astype(np.int16),
              rng.integers(-32768, 32767, (1, 1, 1, 6)).astype(np.int16)]
    return func([ty, gty], [ty], body, ["o"]), inputs


def dense_resource_graph(rng):
    """Weights and bias as dense_resource blobs, the way torch-mlir prints large constants."""
    text, inputs = conv_graph(rng, clamp=False)
    blobs = {}
    for name, ty in (("w", "i8"), ("b", "i32")):
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(f"%{name} = "))
        attr_text = line[line.index("values = ") + len("values = "):line.rindex("}")]
        arr, tensor_ty = _parse_dense(attr_text)
        blobs[f"{name}_blob"] = "0x04000000" + arr.astype({"i8": np.int8, "i32": np.int32}[ty]).tobytes().hex().upper()
        text = text.replace(line, f'  %{name} = "tosa.const"() {{values = dense_resource<{name}_blob> : {tensor_ty}}} '
                                  f': () -> {tensor_ty}')
    entries = ",\n".join(f'      {k}: "{v}"' for k, v in blobs.items())
    return text + "{-#\n  dialect_resources: {\n    builtin: {\n" + entries + "\n    }\n  }\n#-}\n", inputs


def _parse_dense(attr_text: str):
    body, _, ty = attr_text.rpartition(" : ")
    dims = [int(d) for d in ty[len("tensor<"):-1].split("x")[:-1]]
    values = [int(v) for v in __import__("re").findall(r"-?\d+", body[len("dense<"):-1])]
    return np.array(values).reshape(dims), ty


def slice_views_graph(rng):
    """Slices that are one contiguous run of their input (rows of an NHWC tensor, of the arena and
    of a graph input) become views at an offset; the others stay copies."""
    body = const("tab", rand_i8(rng, (256,)), "i8")
    body += "  %t = tosa.table %arg0, %tab : (tensor<1x6x3x4xi8>, tensor<256xi8>) -> tensor<1x6x3x4xi8>\n"
    body += '  %st = tosa.const_shape {values = dense<[0, 2, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += '  %sz = tosa.const_shape {values = dense<[1, 3, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += "  %s1 = tosa.slice %t, %st, %sz : (tensor<1x6x3x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x3x3x4xi8>\n"
    body += "  %u = tosa.table %s1, %tab : (tensor<1x3x3x4xi8>, tensor<256xi8>) -> tensor<1x3x3x4xi8>\n"
    body += '  %st2 = tosa.const_shape {values = dense<[0, 5, 1, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += '  %sz2 = tosa.const_shape {values = dense<[1, 1, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += "  %s2 = tosa.slice %arg0, %st2, %sz2 : (tensor<1x6x3x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x1x2x4xi8>\n"
    body += "  %v = tosa.table %s2, %tab : (tensor<1x1x2x4xi8>, tensor<256xi8>) -> tensor<1x1x2x4xi8>\n"
    body += '  %st4 = tosa.const_shape {values = dense<[0, 4, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += '  %sz4 = tosa.const_shape {values = dense<[1, 2, 3, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += "  %s4 = tosa.slice %arg0, %st4, %sz4 : (tensor<1x6x3x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x2x3x4xi8>\n"
    body += "  %w = tosa.table %s4, %tab : (tensor<1x2x3x4xi8>, tensor<256xi8>) -> tensor<1x2x3x4xi8>\n"
    body += '  %st3 = tosa.const_shape {values = dense<[0, 0, 0, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += '  %sz3 = tosa.const_shape {values = dense<[1, 6, 3, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
    body += "  %s3 = tosa.slice %t, %st3, %sz3 : (tensor<1x6x3x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x6x3x2xi8>\n"
    text = func(["tensor<1x6x3x4xi8>"], ["tensor<1x3x3x4xi8>", "tensor<1x1x2x4xi8>", "tensor<1x2x3x4xi8>",
                                         "tensor<1x6x3x2xi8>"], body, ["u", "v", "w", "s3"])
    return text, [rand_i8(rng, (1, 6, 3, 4))]


def random_conv_case(seed: int):
    """A conv or depthwise conv with random shape, kernel, stride, padding and dilation."""
    def build(rng):
        r = np.random.default_rng(seed)
        kh, kw = int(r.integers(1, 4)), int(r.integers(1, 5))
        h, w = int(r.integers(kh, 10)), int(r.integers(kw, 10))
        dil = (int(r.integers(1, 3)), int(r.integers(1, 3)))
        if (kh - 1) * dil[0] + 1 > h + 2 or (kw - 1) * dil[1] + 1 > w + 2:
            dil = (1, 1)
        pad = tuple(int(r.integers(0, k)) for k in (kh, kh, kw, kw))
        stride = (int(r.integers(1, 3)), int(r.integers(1, 4)))
        if h + pad[0] + pad[1] < (kh - 1) * dil[0] + 1 or w + pad[2] + pad[3] < (kw - 1) * dil[1] + 1:
            pad = (kh - 1, kh - 1, kw - 1, kw - 1)
        # TOSA wants the padded extent to fit the strides exactly: grow the bottom/right padding.
        pad = list(pad)
        for axis, (size, k, d) in enumerate(((h, kh, dil[0]), (w, kw, dil[1]))):
            rem = (size - 1 + pad[2 * axis] + pad[2 * axis + 1] - (k - 1) * d) % stride[axis]
            if rem:
                pad[2 * axis + 1] += stride[axis] - rem
        pad = tuple(pad)
        depthwise = bool(r.integers(0, 2))
        return conv_graph(rng, depthwise=depthwise, n=int(r.integers(1, 3)), h=h, w=w,
                          c=int(r.integers(1, 9)), kernel=(kh, kw), stride=stride, pad=pad, dil=dil,
                          oc=int(r.integers(1, 12)), m=int(r.integers(1, 3)),
                          per_channel=bool(r.integers(0, 2)), clamp=bool(r.integers(0, 2)))
    return build


RANDOM_CONVS = [f"random-conv-{seed}" for seed in range(8)]

def resize_graph(rng, bilinear: bool):
    """TOSA RESIZE with a fractional scale and an offset (nearest: int8 out; bilinear: int32 out)."""
    ty, out_elem = "tensor<1x4x5x2xi8>", "i32" if bilinear else "i8"
    oty = f"tensor<1x5x12x2x{out_elem}>"
    body = ('  %sc = tosa.const_shape {values = dense<[4, 3, 5, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>\n'
            '  %of = tosa.const_shape {values = dense<[0, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>\n'
            '  %bo = tosa.const_shape {values = dense<[0, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>\n')
    mode = "BILINEAR" if bilinear else "NEAREST_NEIGHBOR"
    body += (f"  %r = tosa.resize %arg0, %sc, %of, %bo {{mode = {mode}}} : ({ty}, !tosa.shape<4>, "
             f"!tosa.shape<2>, !tosa.shape<2>) -> {oty}\n")
    return func([ty], [oty], body, ["r"]), [rand_i8(rng, (1, 4, 5, 2))]


CASES = {
    "resize-nearest": lambda rng: resize_graph(rng, False),
    "resize-bilinear": lambda rng: resize_graph(rng, True),
    "conv2d": lambda rng: conv_graph(rng),
    "conv2d-per-tensor-no-clamp": lambda rng: conv_graph(rng, clamp=False, per_channel=False),
    "depthwise-conv2d": lambda rng: conv_graph(rng, depthwise=True),
    "fully-connected": lambda rng: fc_graph(rng),
    "fully-connected-per-channel": lambda rng: fc_graph(rng, per_channel=True),
    "batch-matmul": batch_matmul_graph,
    "avg-pool2d": lambda rng: pool_graph(rng, True),
    "avg-pool2d-zp0": lambda rng: pool_graph(rng, True, pool_zp=0),
    "max-pool2d": lambda rng: pool_graph(rng, False),
    "add": lambda rng: add_graph(rng),
    "mul": lambda rng: add_graph(rng, mul=True),
    "add-broadcast": lambda rng: add_graph(rng, broadcast=True),
    "mul-broadcast": lambda rng: add_graph(rng, mul=True, broadcast=True),
    "data-movement-and-reductions": misc_graph,
    "mul-square": square_graph,
    "transpose-conv2d": transpose_conv_graph,
    "int16-table-mul": int16_table_mul_graph,
    "dense-resource-weights": dense_resource_graph,
    "slice-views": slice_views_graph,
    "data-movement-s8": data_movement_s8_graph,
    "concat-many-inputs": many_inputs_concat_graph,
    "transposes-any-rank": transposes_any_rank_graph,
    "transposes-int16-int32": transposes_wide_graph,
    "int48-output": int48_output_graph,
    "right-shifts": shifts_graph,
    "broadcast-bias": broadcast_bias_graph,
    "unsigned-rescale": unsigned_rescale_graph,
    "add-through-reshape": add_through_reshape_graph,
    **{name: random_conv_case(int(name.rsplit("-", 1)[1])) for name in RANDOM_CONVS},
}


# The one kernel each fused case must become (the TOSA ops it absorbs leave no other call).
FUSED_KERNEL = {
    "conv2d": "portable:conv2d_s8", "depthwise-conv2d": "portable:depthwise_conv2d_s8",
    "fully-connected": "portable:matmul", "avg-pool2d": "portable:avg_pool2d",
    "avg-pool2d-zp0": "portable:avg_pool2d",
    "max-pool2d": "portable:max_pool2d", "add": "portable:elementwise_add_s8",
    "mul": "portable:elementwise_mul_s8", "add-broadcast": "portable:elementwise_add_s8",
    "mul-broadcast": "portable:elementwise_mul_s8", "mul-square": "portable:elementwise_mul_s8",
    "add-through-reshape": "portable:elementwise_add_s8",
}
# Cases that become a fixed sequence of kernels.
KERNEL_SEQUENCE = {"int16-table-mul": ["portable:table_s16_rescale", "portable:elementwise_mul_s16"],
                   "slice-views": ["portable:table_s8", "view", "portable:table_s8", "portable:slice",
                                   "portable:table_s8", "view", "portable:table_s8", "portable:slice"]}


@pytest.mark.parametrize("case", sorted(CASES))
def test_portable_matches_reference(case, tmp_path):
    rng = np.random.default_rng(RNG_SEED)
    text, inputs = CASES[case](rng)
    expected = run_reference(text, inputs)
    got, report, _ = compile_and_run(text, inputs, tmp_path)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e.reshape(g.shape).astype(g.dtype))
    assert all(op["kernel"].startswith("portable:") or op["kernel"] == "view" for op in report["ops"])
    assert report["arena_bytes"] >= report["arena_overlap_bound_bytes"]  # overlap-aware physical limit
    if case in FUSED_KERNEL:
        assert [op["kernel"] for op in report["ops"]] == [FUSED_KERNEL[case]]
    if case in KERNEL_SEQUENCE:
        assert [op["kernel"] for op in report["ops"]] == KERNEL_SEQUENCE[case]


# -- CMSIS-NN backend on the host (its pure C path) ------------------------------------------------

CMSIS_CASES = ["conv2d", "conv2d-per-tensor-no-clamp", "depthwise-conv2d", "fully-connected",
               "fully-connected-per-channel", "max-pool2d", "avg-pool2d-zp0", "add", "mul", "mul-square",
               "add-through-reshape", "data-movement-s8", "concat-many-inputs", "transposes-any-rank", "add-broadcast", "mul-broadcast", *RANDOM_CONVS]


@pytest.fixture(scope="session")
def cmsis_nn_lib(tmp_path_factory):
    path = os.environ.get("CMSIS_NN_PATH")
    if not path or not (Path(path) / "Include" / "arm_nnfunctions.h").exists():
        pytest.skip("CMSIS_NN_PATH is not set to a CMSIS-NN checkout: the CMSIS-NN backend cannot be built")
    out = tmp_path_factory.mktemp("cmsis-nn")
    sources = [s for s in sorted((Path(path) / "Source").glob("*/*.c"))
               if not any(t in s.name for t in ("_f16", "_f32", "flt"))]
    objects = []
    for s in sources:
        obj = out / (s.stem + ".o")
        subprocess.run([CC, "-std=c99", "-O1", "-I", str(Path(path) / "Include"), "-c", str(s), "-o", str(obj)],
                       check=True, capture_output=True)
        objects.append(obj)
    lib = out / "libcmsis-nn.a"
    subprocess.run(["ar", "rcs", str(lib), *map(str, objects)], check=True)
    return lib, Path(path) / "Include"


@pytest.mark.parametrize("case", CMSIS_CASES)
def test_cmsis_nn_matches_reference(case, tmp_path, cmsis_nn_lib):
    lib, include = cmsis_nn_lib
    rng = np.random.default_rng(RNG_SEED)
    text, inputs = CASES[case](rng)
    expected = run_reference(text, inputs)
    got, report, files = compile_and_run(text, inputs, tmp_path, backend="cmsis-nn", target="cortex-m3",
                                         extra_sources=[lib], extra_includes=[include],
                                         defines=["MCU_DEBUG_SCRATCH"])
    assert all(op["kernel"].startswith("arm_") or op["kernel"] == "view" for op in report["ops"]), report["ops"]
    assert '#include "arm_nnfunctions.h"' in files["model.c"]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e.reshape(g.shape).astype(g.dtype))


def test_cmsis_nn_build_keeps_an_average_pool_with_zero_points_portable(tmp_path, cmsis_nn_lib):
    """CMSIS-NN's average pool has no zero points: with equal non-zero ones it rounded a tie the other
    way (1 LSB, measured here before). A CMSIS-NN build now runs the portable kernel, says why, and is exact."""
    lib, include = cmsis_nn_lib
    text, inputs = CASES["avg-pool2d"](np.random.default_rng(RNG_SEED))
    expected = run_reference(text, inputs)
    got, report, _ = compile_and_run(text, inputs, tmp_path, backend="cmsis-nn", target="cortex-m3",
                                     extra_sources=[lib], extra_includes=[include])
    pools = [op for op in report["ops"] if op["tosa_op"].startswith("tosa.avg_pool2d")]
    assert [op["kernel"] for op in pools] == ["portable:avg_pool2d"]
    assert "arm_avgpool has none" in pools[0]["fallback"]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e.reshape(g.shape).astype(g.dtype))


# -- zoo models through the whole compiler ----------------------------------------------------------

ZOO_MODELS = [("ds_cnn", "int8"), ("resnet8", "int8"), ("autoencoder", "int8"),
              ("ds_cnn", "int16"), ("resnet8", "int16")]


def _compile_zoo(name, quantize, tmp_path, backend, target):
    import mcu_mlir
    from mcu_mlir import zoo

    model, example = zoo.get(name)
    result = mcu_mlir.compile(model, example, target=target, backend=backend, quantize=quantize,
                              emit="c", output_dir=str(tmp_path / "out"))
    q = [result.frontend.inputs[i].quantize(np.asarray(x)) for i, x in enumerate(example)]
    expected = run_reference(str(tmp_path / "out" / "model.tosa.mlir"), q)
    return result, q, expected


def _build_outdir(out: Path, inputs, n_outputs, extra=()):
    (out / "main.c").write_text(HARNESS)
    cmd = [CC, "-std=c99", "-O2", "-Wall", "-Wextra", "-I", str(ROOT / "include"), "-I", str(out),
           str(out / "model.c"), str(out / "main.c"), str(ROOT / "lib" / "runtime.c"),
           *map(str, sorted((ROOT / "lib" / "portable").glob("*.c"))), *extra, "-o", str(out / "model"), "-lm"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    args = []
    for i, x in enumerate(inputs):
        (out / f"in{i}.bin").write_bytes(np.ascontiguousarray(x).tobytes())
        args.append(str(out / f"in{i}.bin"))
    outs = [out / f"out{i}.bin" for i in range(n_outputs)]
    proc = subprocess.run([str(out / "model"), *args, *map(str, outs)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return [p.read_bytes() for p in outs]


@pytest.mark.parametrize("name,quantize", ZOO_MODELS)
def test_zoo_portable_matches_reference(name, quantize, tmp_path):
    result, q, expected = _compile_zoo(name, quantize, tmp_path, "portable", "host")
    got = _build_outdir(tmp_path / "out", q, len(expected))
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(np.frombuffer(g, dtype=e.dtype).reshape(e.shape), e)
    report = result.report
    assert report["arena_overlap_bound_bytes"] <= report["arena_bytes"] <= 1.1 * report["arena_lower_bound_bytes"] + 512
    assert not any(op["kernel"].startswith("arm_") for op in report["ops"])


@pytest.mark.parametrize("name,quantize", ZOO_MODELS)
def test_zoo_cmsis_nn_matches_reference(name, quantize, tmp_path, cmsis_nn_lib):
    lib, include = cmsis_nn_lib
    result, q, expected = _compile_zoo(name, quantize, tmp_path, "cmsis-nn", "cortex-m3")
    got = _build_outdir(tmp_path / "out", q, len(expected), extra=[str(lib), f"-I{include}"])
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(np.frombuffer(g, dtype=e.dtype).reshape(e.shape), e)
    # Every conv / depthwise / fully connected / pool / int8 add is a CMSIS-NN call.
    for op in result.report["ops"]:
        if any(f in op["tosa_op"] for f in ("conv2d", "matmul", "pool", "add")):
            assert op["kernel"].startswith("arm_"), op


def test_int16_table_activations_compile_and_match_reference(tmp_path):
    """int16 sigmoid / tanh / hardswish: TOSA's interpolated TABLE and its one-rounding rescale pass
    the integer contract and the portable C equals the reference model bit for bit."""
    torch = pytest.importorskip("torch")
    import mcu_mlir
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(4, 8, 3), nn.Sigmoid(), nn.Conv2d(8, 8, 1), nn.Tanh(),
                          nn.Conv2d(8, 4, 1), nn.Hardswish()).eval()
    example = (torch.randn(1, 4, 8, 8),)
    result = mcu_mlir.compile(model, example, target="host", backend="portable", quantize="int16",
                              calibration=4, emit="c", output_dir=str(tmp_path / "out"))
    assert sum(op["kernel"] == "portable:table_s16_rescale" for op in result.report["ops"]) == 3
    q = [result.frontend.inputs[0].quantize(np.asarray(example[0]))]
    expected = run_reference(str(tmp_path / "out" / "model.tosa.mlir"), q)
    got = _build_outdir(tmp_path / "out", q, len(expected))
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(np.frombuffer(g, dtype=e.dtype).reshape(e.shape), e)


# -- int4 weights: arm_fully_connected_s4 ---------------------------------------------------------

def fc_s4_graph(rng, n=2, h=1, w=1, k=7, o=5, clamp=True):
    """TOSA's form of a fully connected layer with int4 weights: a 1x1 conv2d of int8 by int4
    (zero points -9 and 0), a per-tensor rescale, a clamp. TOSA's int4 is [-7, 7]
    (tosa_reference_model refuses -8)."""
    weights = rng.integers(-7, 8, (o, 1, 1, k))
    body = (const("w", weights, "i4") + const("b", rng.integers(-300, 300, o), "i32")
            + zp("izp", -9) + zp("wzp", 0, "i4"))
    acc_ty, out_ty = f"tensor<{n}x{h}x{w}x{o}xi32>", f"tensor<{n}x{h}x{w}x{o}xi8>"
    body += ("  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, "
             "pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : "
             f"(tensor<{n}x{h}x{w}x{k}xi8>, tensor<{o}x1x1x{k}xi4>, tensor<{o}xi32>, tensor<1xi8>, tensor<1xi4>) "
             f"-> {acc_ty}\n")
    body += rescale_consts("r", rng.integers(1 << 30, (1 << 31) - 1, 1), rng.integers(33, 36, 1), 0, 4)
    body += rescale("r", "acc", acc_ty, out_ty, 1)
    last = "r"
    if clamp:
        body += f"  %cl = tosa.clamp %r {{min_val = -100 : i8, max_val = 90 : i8}} : ({out_ty}) -> {out_ty}\n"
        last = "cl"
    return func([f"tensor<{n}x{h}x{w}x{k}xi8>"], [out_ty], body, [last]), [rand_i8(rng, (n, h, w, k))]


S4_CASES = {
    "odd-weight-count": dict(k=7, o=5),          # 35 int4 weights: the last byte holds one
    "rows-of-pixels": dict(n=1, h=3, w=2, k=16, o=8),  # every pixel a row of the fully connected call
    "no-clamp": dict(k=32, o=3, clamp=False),
}


@pytest.mark.parametrize("case", sorted(S4_CASES))
def test_cmsis_nn_int4_fully_connected_matches_reference(case, tmp_path, cmsis_nn_lib):
    lib, include = cmsis_nn_lib
    text, inputs = fc_s4_graph(np.random.default_rng(RNG_SEED), **S4_CASES[case])
    expected = run_reference(text, inputs)
    got, report, files = compile_and_run(text, inputs, tmp_path, backend="cmsis-nn", target="cortex-m3",
                                         extra_sources=[lib], extra_includes=[include],
                                         defines=["MCU_DEBUG_SCRATCH"])
    assert [op["kernel"] for op in report["ops"]] == ["arm_fully_connected_s4"]
    np.testing.assert_array_equal(got[0], expected[0].reshape(got[0].shape).astype(got[0].dtype))


def test_int4_weights_without_cmsis_nn_run_unpacked_on_the_portable_kernel(tmp_path):
    text, inputs = fc_s4_graph(np.random.default_rng(RNG_SEED))
    expected = run_reference(text, inputs)
    got, report, _ = compile_and_run(text, inputs, tmp_path)
    assert [op["kernel"] for op in report["ops"]] == ["portable:conv2d_s8"]
    assert report["ops"][0]["weights_bytes"] == 5 * 7 + 4 * 5   # one byte a weight, the int32 bias
    np.testing.assert_array_equal(got[0], expected[0].reshape(got[0].shape).astype(got[0].dtype))
