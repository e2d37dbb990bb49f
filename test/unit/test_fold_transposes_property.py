"""Property: the layout pipeline keeps the outputs of any graph of transposes, reshapes, elementwise
ops, forks and joins (checked in tosa_reference_model), and never adds a data-moving transpose.

Graphs are drawn as a list of steps; each step reads earlier values (so values fork) and binary
ops, concat and select join them. 1x1 convolutions and max pools pin NHWC where they appear.
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcu_mlir import pipeline
from mcu_mlir._mlir import ir
from mcu_mlir.transposes import count_data_moving_transposes

import test_layout_support as support

_UNARY = ("tosa.abs", "tosa.sigmoid", "tosa.tanh", "tosa.clamp", "tosa.ceil")
_BINARY = ("tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum")
_KINDS = ("transpose", "transpose", "reshape", "unary", "binary", "binary", "concat", "reduce",
          "slice", "pad", "conv", "pool", "const_binary")


def _t(shape) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


class _Graph:
    def __init__(self, arg_shapes):
        self.lines: list[str] = []
        self.values: list[tuple[str, tuple]] = [(f"%arg{i}", tuple(s)) for i, s in enumerate(arg_shapes)]
        self.args = list(self.values)
        self.counter = itertools.count()
        self.lines.append('%zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>')
        self.lines.append('%shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>')

    def new(self, shape, line_rhs) -> str:
        name = f"%v{next(self.counter)}"
        self.lines.append(f"{name} = {line_rhs}")
        self.values.append((name, tuple(shape)))
        return name

    def shape_const(self, values) -> str:
        name = f"%s{next(self.counter)}"
        vals = ", ".join(str(v) for v in values)
        self.lines.append(f"{name} = tosa.const_shape {{values = dense<[{vals}]> : tensor<{len(values)}xindex>}} "
                          f": () -> !tosa.shape<{len(values)}>")
        return name

    def const(self, rng, shape) -> str:
        name = f"%k{next(self.counter)}"
        data = np.round(rng.uniform(-1, 1, size=shape), 3)
        body = np.array2string(data, separator=", ", threshold=10 ** 6, floatmode="fixed",
                               formatter={"float_kind": lambda x: f"{x:.3f}"})
        self.lines.append(f'{name} = "tosa.const"() <{{values = dense<{body}> : {_t(shape)}}}> : () -> {_t(shape)}')
        return name

    # -- steps ---------------------------------------------------------------------------------
    def step(self, kind: str, rng) -> None:
        name, shape = self.values[rng.integers(len(self.values))]
        rank = len(shape)
        if kind == "transpose":
            perm = tuple(int(p) for p in rng.permutation(rank))
            out = tuple(shape[p] for p in perm)
            self.new(out, f"tosa.transpose {name} {{perms = array<i32: {', '.join(map(str, perm))}>}} "
                          f": ({_t(shape)}) -> {_t(out)}")
        elif kind == "reshape":
            out = _random_reshape(shape, rng)
            s = self.shape_const(out)
            self.new(out, f"tosa.reshape {name}, {s} : ({_t(shape)}, !tosa.shape<{len(out)}>) -> {_t(out)}")
        elif kind == "unary":
            op = _UNARY[rng.integers(len(_UNARY))]
            attrs = " {max_val = 0.5 : f32, min_val = -0.25 : f32}" if op == "tosa.clamp" else ""
            self.new(shape, f"{op} {name}{attrs} : ({_t(shape)}) -> {_t(shape)}")
        elif kind in ("binary", "const_binary"):
            op = _BINARY[rng.integers(len(_BINARY))]
            same = [v for v in self.values if v[1] == shape]
            if kind == "binary" and same:
                other = same[rng.integers(len(same))][0]
                other_shape = shape
            else:
                other_shape = tuple(d if rng.random() < 0.5 else 1 for d in shape)
                other = self.const(rng, other_shape)
            extra = ", %shift" if op == "tosa.mul" else ""
            extra_t = ", tensor<1xi8>" if op == "tosa.mul" else ""
            a, b = (name, other) if rng.random() < 0.5 else (other, name)
            ta, tb = (shape, other_shape) if a == name else (other_shape, shape)
            self.new(shape, f"{op} {a}, {b}{extra} : ({_t(ta)}, {_t(tb)}{extra_t}) -> {_t(shape)}")
        elif kind == "concat":
            axis = int(rng.integers(rank))
            same = [v for v in self.values if v[1] == shape]
            other = same[rng.integers(len(same))][0]
            out = tuple(d * 2 if i == axis else d for i, d in enumerate(shape))
            self.new(out, f"tosa.concat {name}, {other} {{axis = {axis} : i32}} : ({_t(shape)}, {_t(shape)}) -> {_t(out)}")
        elif kind == "reduce":
            axis = int(rng.integers(rank))
            out = tuple(1 if i == axis else d for i, d in enumerate(shape))
            op = ("tosa.reduce_sum", "tosa.reduce_max")[rng.integers(2)]
            self.new(out, f"{op} {name} {{axis = {axis} : i32}} : ({_t(shape)}) -> {_t(out)}")
        elif kind == "slice":
            start = [int(rng.integers(d)) for d in shape]
            size = [int(rng.integers(1, d - s + 1)) for d, s in zip(shape, start)]
            a, b = self.shape_const(start), self.shape_const(size)
            self.new(size, f"tosa.slice {name}, {a}, {b} : ({_t(shape)}, !tosa.shape<{rank}>, "
                           f"!tosa.shape<{rank}>) -> {_t(size)}")
        elif kind == "pad":
            pads = [int(rng.integers(2)) for _ in range(2 * rank)]
            out = tuple(d + pads[2 * i] + pads[2 * i + 1] for i, d in enumerate(shape))
            p = self.shape_const(pads)
            self.new(out, f"tosa.pad {name}, {p}, %zp : ({_t(shape)}, !tosa.shape<{2 * rank}>, tensor<1xf32>) -> {_t(out)}")
        elif kind in ("conv", "pool"):
            if rank != 4:
                return
            if kind == "pool":
                self.new(shape, f"tosa.max_pool2d {name} {{kernel = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, "
                                f"stride = array<i64: 1, 1>}} : ({_t(shape)}) -> {_t(shape)}")
                return
            cout = int(rng.integers(1, 4))
            w = self.const(rng, (cout, 1, 1, shape[3]))
            b = self.const(rng, (cout,))
            out = shape[:3] + (cout,)
            self.new(out, f"tosa.conv2d {name}, {w}, {b}, %zp, %zp {{acc_type = f32, dilation = array<i64: 1, 1>, "
                          f"pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}} : ({_t(shape)}, "
                          f"{_t((cout, 1, 1, shape[3]))}, {_t((cout,))}, tensor<1xf32>, tensor<1xf32>) -> {_t(out)}")

    def text(self, outputs) -> str:
        args = ", ".join(f"{n}: {_t(s)}" for n, s in self.args)
        results = ", ".join(_t(s) for _, s in outputs)
        body = "\n  ".join(self.lines)
        ret = ", ".join(n for n, _ in outputs)
        return (f"func.func @main({args}) -> ({results}) {{\n  {body}\n  return {ret} : {results}\n}}\n")


def _random_reshape(shape, rng):
    shape = list(shape)
    choice = rng.integers(3)
    if choice == 0 and len(shape) > 2:      # merge two neighbours
        i = int(rng.integers(len(shape) - 1))
        return tuple(shape[:i] + [shape[i] * shape[i + 1]] + shape[i + 2:])
    if choice == 1 and len(shape) < 5:      # insert a unit dim
        i = int(rng.integers(len(shape) + 1))
        return tuple(shape[:i] + [1] + shape[i:])
    splittable = [i for i, d in enumerate(shape) if d in (4, 6) and len(shape) < 5]
    if splittable:                          # split a dim
        i = splittable[rng.integers(len(splittable))]
        return tuple(shape[:i] + [2, shape[i] // 2] + shape[i + 1:])
    return tuple(reversed(shape)) if len(shape) <= 2 else tuple(shape)


def build_graph(steps, arg_shapes) -> str:
    g = _Graph(arg_shapes)
    for kind_index, seed in steps:
        g.step(_KINDS[kind_index % len(_KINDS)], np.random.default_rng(seed))
    if len(g.values) == len(g.args):
        g.step("unary", np.random.default_rng(0))
    produced = g.values[len(g.args):]
    outputs = [produced[-1]]
    if len(produced) > 2:
        outputs.append(produced[len(produced) // 2])
    return g.text(outputs)


_shapes = st.lists(st.sampled_from([1, 2, 3, 4]), min_size=3, max_size=4)
_steps = st.lists(st.tuples(st.integers(0, len(_KINDS) - 1), st.integers(0, 2 ** 16)), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(steps=_steps, arg_shapes=st.lists(_shapes, min_size=1, max_size=2),
       io_layout=st.sampled_from(["nchw", "nhwc"]))
def test_pipeline_keeps_outputs_of_random_graphs(steps, arg_shapes, io_layout):
    text = build_graph(steps, arg_shapes)
    ctx = ir.Context()
    module = ir.Module.parse(text, ctx)
    assert module.operation.verify()
    before = count_data_moving_transposes(module)
    pipeline.run_pipeline(module, f"builtin.module(mcu-tosa-layout-pipeline{{io-layout={io_layout}}})")
    assert module.operation.verify()
    assert count_data_moving_transposes(module) <= before, text
    support.assert_same_outputs(text, module, atol=1e-5)
