"""mcu-patch-early-stages against the reference model: random stages of convs, depthwise convs,
pools, pads, rescales and residual adds (kernel sizes, strides, dilations and paddings drawn at
random) give the same integers in tosa_reference_model before and after being split into bands."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from mcu_mlir._mlir import ir
from mcu_mlir.passes.transforms import patch_early_stages
from mcu_mlir.pipeline import run_pipeline
from mcu_mlir.reference import run_reference

pytestmark = pytest.mark.skipif(shutil.which("tosa_reference_model") is None,
                                reason="tosa-tools (tosa_reference_model) not installed")

RESCALE_ATTRS = ("{input_unsigned = false, output_unsigned = false, per_channel = false, "
                 "rounding_mode = DOUBLE_ROUND, scale32 = true}")


class _Writer:
    """MLIR text of one function, one line per op; constants first."""

    def __init__(self, rng):
        self.rng, self.consts, self.body, self.n = rng, [], [], 0

    def name(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def const(self, values: np.ndarray, elem: str) -> str:
        v = self.name()
        data = np.asarray(values, dtype={"i8": "<i1", "i32": "<i4"}[elem]).tobytes().hex().upper()
        ty = _t(values.shape, elem)
        self.consts.append(f'  {v} = "tosa.const"() {{values = dense<"0x{data}"> : {ty}}} : () -> {ty}')
        return v


def _t(shape, elem="i8") -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}x{elem}>"


def _window(rng, size, k, d, s):
    """(top, bottom) padding so that the output size is exact, and the output size."""
    reach = (k - 1) * d
    top = int(rng.integers(0, reach + 1)) if reach else 0
    for bottom in range(0, reach + s + 1):
        span = size - 1 + top + bottom - reach
        if span >= 0 and span % s == 0 and bottom <= max(reach, 0):
            return top, bottom, span // s + 1
    return None


def _random_stage(seed: int) -> tuple[str, tuple]:
    rng = np.random.default_rng(seed)
    w = _Writer(rng)
    h, wd, c = int(rng.integers(9, 20)), int(rng.integers(5, 9)), int(rng.integers(1, 4))
    shape = (1, h, wd, c)
    cur, history = "%arg0", [("%arg0", shape)]
    zp = w.const(np.array([0]), "i8")
    izp = w.const(np.array([int(rng.integers(-3, 4))]), "i8")
    for _ in range(int(rng.integers(2, 6))):
        kind = rng.choice(["conv", "depthwise", "avg", "max", "pad", "add"])
        n, hh, ww, cc = shape
        if kind in ("conv", "depthwise"):
            k, s, d = int(rng.choice([1, 3, 5])), int(rng.choice([1, 2])), int(rng.choice([1, 2]))
            rows, cols = _window(rng, hh, k, d, s), _window(rng, ww, k, d, s)
            if rows is None or cols is None or rows[2] < 1 or cols[2] < 1:
                continue
            oc = int(rng.integers(1, 5)) if kind == "conv" else cc
            w_shape = (oc, k, k, cc) if kind == "conv" else (k, k, cc, 1)
            weights = w.const(rng.integers(-20, 21, size=w_shape), "i8")
            bias = w.const(rng.integers(-300, 300, size=(oc,)), "i32")
            acc, out = w.name(), w.name()
            pad = f"array<i64: {rows[0]}, {rows[1]}, {cols[0]}, {cols[1]}>"
            op = "tosa.conv2d" if kind == "conv" else "tosa.depthwise_conv2d"
            new = (1, rows[2], cols[2], oc)
            m, sh = w.const(np.array([int(rng.integers(1 << 29, 1 << 30))]), "i32"), w.const(np.array([38]), "i8")
            rzp = w.const(np.array([0]), "i32")
            w.body.append(f"  {acc} = {op} {cur}, {weights}, {bias}, {izp}, {zp} {{acc_type = i32, "
                          f"dilation = array<i64: {d}, {d}>, pad = {pad}, stride = array<i64: {s}, {s}>}} : "
                          f"({_t(shape)}, {_t(w_shape)}, {_t((oc,), 'i32')}, "
                          f"tensor<1xi8>, tensor<1xi8>) -> {_t(new, 'i32')}")
            w.body.append(f"  {out} = tosa.rescale {acc}, {m}, {sh}, {rzp}, {zp} {RESCALE_ATTRS} : "
                          f"({_t(new, 'i32')}, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> {_t(new)}")
        elif kind in ("avg", "max"):
            k, s = int(rng.choice([2, 3])), int(rng.choice([1, 2]))
            rows, cols = _window(rng, hh, k, 1, s), _window(rng, ww, k, 1, s)
            if rows is None or cols is None or max(rows[:2] + cols[:2]) >= k:
                continue
            new, out = (1, rows[2], cols[2], cc), w.name()
            attrs = (f"kernel = array<i64: {k}, {k}>, pad = array<i64: {rows[0]}, {rows[1]}, {cols[0]}, {cols[1]}>, "
                     f"stride = array<i64: {s}, {s}>")
            if kind == "avg":
                w.body.append(f"  {out} = tosa.avg_pool2d {cur}, {zp}, {zp} {{acc_type = i32, {attrs}}} : "
                              f"({_t(shape)}, tensor<1xi8>, tensor<1xi8>) -> {_t(new)}")
            else:
                w.body.append(f"  {out} = tosa.max_pool2d {cur} {{{attrs}}} : ({_t(shape)}) -> {_t(new)}")
        elif kind == "pad":
            top, bottom = int(rng.integers(0, 3)), int(rng.integers(0, 3))
            amounts, fill, out = w.name(), w.const(np.array([int(rng.integers(-5, 6))]), "i8"), w.name()
            w.consts.append(f"  {amounts} = tosa.const_shape {{values = dense<[0, 0, {top}, {bottom}, 1, 0, 0, 0]> : "
                            f"tensor<8xindex>}} : () -> !tosa.shape<8>")
            new = (1, hh + top + bottom, ww + 1, cc)
            w.body.append(f"  {out} = tosa.pad {cur}, {amounts}, {fill} : ({_t(shape)}, !tosa.shape<8>, tensor<1xi8>) "
                          f"-> {_t(new)}")
        else:
            same = [v for v, s_ in history[:-1] if s_ == shape]
            if not same:
                continue
            new, out = shape, w.name()
            w.body.append(f"  {out} = tosa.add {same[int(rng.integers(0, len(same)))]}, {cur} : "
                          f"({_t(shape)}, {_t(shape)}) -> {_t(shape)}")
        cur, shape = out, new
        history.append((cur, shape))
    flat = int(np.prod(shape))
    shape_v, out = w.name(), w.name()
    w.consts.append(f"  {shape_v} = tosa.const_shape {{values = dense<[1, {flat}]> : tensor<2xindex>}} : "
                    f"() -> !tosa.shape<2>")
    w.body.append(f"  {out} = tosa.reshape {cur}, {shape_v} : ({_t(shape)}, !tosa.shape<2>) -> {_t((1, flat))}")
    text = (f"func.func @main(%arg0: {_t(history[0][1])}) -> {_t((1, flat))} {{\n" + "\n".join(w.consts + w.body)
            + f"\n  return {out} : {_t((1, flat))}\n}}\n")
    return text, history[0][1]


@pytest.mark.parametrize("seed", range(24))
def test_bands_compute_what_the_stage_computes(seed):
    text, in_shape = _random_stage(seed)
    x = np.random.default_rng(100 + seed).integers(-128, 128, size=in_shape).astype(np.int8)
    expected = run_reference(text, [x])
    ctx = ir.Context()
    module = ir.Module.parse(text, ctx)
    fn = next(iter(module.body.operations))
    rows = len(patch_early_stages._stages(fn.regions[0].blocks[0]))
    assert rows > 0, "the random stage should be patchable"
    bands = int(np.random.default_rng(seed).integers(2, 5))
    with ctx, ir.Location.unknown():
        run_pipeline(module, f"builtin.module(mcu-patch-early-stages{{bands={bands}}})")
    patched = str(module)
    if "mcu.patched_bands" not in patched:
        pytest.skip(f"no stage of this random function has {bands} rows of output")
    assert "tosa.concat" in patched
    got = run_reference(patched, [x])
    assert all(np.array_equal(a, b) for a, b in zip(expected, got)), text
