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
from mcu_mlir.passes.analysis.transposes import count_data_moving_transposes

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


# -- integer graphs (bit-exact) ------------------------------------------------------------------

def _ti(shape, elem) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{elem}>"


class _IntGraph(_Graph):
    """i8 activations, i32 accumulators: rescale, clamp, table, cast, int32 joins, convs, pools."""

    def __init__(self, arg_shapes):
        self.lines = []
        self.values = [(f"%arg{i}", tuple(s), "i8") for i, s in enumerate(arg_shapes)]
        self.args = list(self.values)
        self.counter = itertools.count()
        for line in (
                '%zp8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>',
                '%zp32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>',
                '%m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>',
                '%s38 = "tosa.const"() <{values = dense<38> : tensor<1xi8>}> : () -> tensor<1xi8>',
                '%s31 = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>',
                '%tbl = "tosa.const"() <{values = dense<[' + ", ".join(str((i * 37) % 256 - 128) for i in range(256))
                + ']> : tensor<256xi8>}> : () -> tensor<256xi8>'):
            self.lines.append(line)

    def new(self, shape, rhs, elem="i8") -> str:
        name = f"%v{next(self.counter)}"
        self.lines.append(f"{name} = {rhs}")
        self.values.append((name, tuple(shape), elem))
        return name

    def iconst(self, rng, shape, elem) -> str:
        name = f"%k{next(self.counter)}"
        data = rng.integers(-20, 20, size=shape)
        body = np.array2string(data, separator=", ", threshold=10 ** 6)
        self.lines.append(f'{name} = "tosa.const"() <{{values = dense<{body}> : {_ti(shape, elem)}}}> '
                          f': () -> {_ti(shape, elem)}')
        return name

    def step(self, kind: str, rng) -> None:
        name, shape, elem = self.values[rng.integers(len(self.values))]
        rank, t = len(shape), _ti(shape, elem)
        if kind == "transpose":
            perm = tuple(int(p) for p in rng.permutation(rank))
            out = tuple(shape[p] for p in perm)
            self.new(out, f"tosa.transpose {name} {{perms = array<i32: {', '.join(map(str, perm))}>}} "
                          f": ({t}) -> {_ti(out, elem)}", elem)
        elif kind == "reshape":
            out = _random_reshape(shape, rng)
            s = self.shape_const(out)
            self.new(out, f"tosa.reshape {name}, {s} : ({t}, !tosa.shape<{len(out)}>) -> {_ti(out, elem)}", elem)
        elif kind == "unary" and elem == "i8":
            op = rng.integers(4)
            if op == 0:
                self.new(shape, f"tosa.clamp {name} {{max_val = 90 : i8, min_val = -70 : i8}} : ({t}) -> {t}")
            elif op == 1:
                self.new(shape, f"tosa.table {name}, %tbl : ({t}, tensor<256xi8>) -> {t}")
            elif op == 2:
                self.new(shape, f"tosa.rescale {name}, %m, %s31, %zp8, %zp8 {{input_unsigned = false, "
                                f"output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, "
                                f"scale32 = true}} : ({t}, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> {t}")
            else:
                self.new(shape, f"tosa.cast {name} : ({t}) -> {_ti(shape, 'i32')}", "i32")
        elif kind == "unary":   # i32 back to i8, as after every integer op
            self.new(shape, f"tosa.rescale {name}, %m, %s38, %zp32, %zp8 {{input_unsigned = false, "
                            f"output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, "
                            f"scale32 = true}} : ({t}, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) "
                            f"-> {_ti(shape, 'i8')}")
        elif kind in ("binary", "const_binary") and elem == "i32":
            op = ("tosa.add", "tosa.sub", "tosa.maximum", "tosa.minimum")[rng.integers(4)]
            same = [v for v in self.values if v[1] == shape and v[2] == "i32"]
            if kind == "binary" and same:
                other, other_shape = same[rng.integers(len(same))][:2]
            else:
                other_shape = tuple(d if rng.random() < 0.5 else 1 for d in shape)
                other = self.iconst(rng, other_shape, "i32")
            self.new(shape, f"{op} {name}, {other} : ({t}, {_ti(other_shape, 'i32')}) -> {t}", "i32")
        elif kind == "concat":
            axis = int(rng.integers(rank))
            same = [v for v in self.values if v[1] == shape and v[2] == elem]
            other = same[rng.integers(len(same))][0]
            out = tuple(d * 2 if i == axis else d for i, d in enumerate(shape))
            self.new(out, f"tosa.concat {name}, {other} {{axis = {axis} : i32}} : ({t}, {t}) -> {_ti(out, elem)}", elem)
        elif kind == "reduce":
            axis = int(rng.integers(rank))
            out = tuple(1 if i == axis else d for i, d in enumerate(shape))
            op = "tosa.reduce_sum" if elem == "i32" else "tosa.reduce_max"
            self.new(out, f"{op} {name} {{axis = {axis} : i32}} : ({t}) -> {_ti(out, elem)}", elem)
        elif kind == "slice":
            start = [int(rng.integers(d)) for d in shape]
            size = [int(rng.integers(1, d - s + 1)) for d, s in zip(shape, start)]
            a, b = self.shape_const(start), self.shape_const(size)
            self.new(size, f"tosa.slice {name}, {a}, {b} : ({t}, !tosa.shape<{rank}>, !tosa.shape<{rank}>) "
                           f"-> {_ti(size, elem)}", elem)
        elif kind == "pad":
            pads = [int(rng.integers(2)) for _ in range(2 * rank)]
            out = tuple(d + pads[2 * i] + pads[2 * i + 1] for i, d in enumerate(shape))
            p = self.shape_const(pads)
            zp = "%zp8" if elem == "i8" else "%zp32"
            self.new(out, f"tosa.pad {name}, {p}, {zp} : ({t}, !tosa.shape<{2 * rank}>, {_ti((1,), elem)}) "
                          f"-> {_ti(out, elem)}", elem)
        elif kind in ("conv", "pool") and rank == 4 and elem == "i8":
            if kind == "pool":
                self.new(shape, f"tosa.max_pool2d {name} {{kernel = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, "
                                f"stride = array<i64: 1, 1>}} : ({t}) -> {t}")
                return
            cout = int(rng.integers(1, 4))
            w = self.iconst(rng, (cout, 1, 1, shape[3]), "i8")
            b = self.iconst(rng, (cout,), "i32")
            out = shape[:3] + (cout,)
            self.new(out, f"tosa.conv2d {name}, {w}, {b}, %zp8, %zp8 {{acc_type = i32, dilation = array<i64: 1, 1>, "
                          f"pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}} : ({t}, "
                          f"{_ti((cout, 1, 1, shape[3]), 'i8')}, {_ti((cout,), 'i32')}, tensor<1xi8>, tensor<1xi8>) "
                          f"-> {_ti(out, 'i32')}", "i32")

    def text(self, outputs) -> str:
        args = ", ".join(f"{n}: {_ti(s, e)}" for n, s, e in self.args)
        results = ", ".join(_ti(s, e) for _, s, e in outputs)
        body = "\n  ".join(self.lines)
        return (f"func.func @main({args}) -> ({results}) {{\n  {body}\n  "
                f"return {', '.join(n for n, _, _ in outputs)} : {results}\n}}\n")


def build_int_graph(steps, arg_shapes) -> str:
    g = _IntGraph(arg_shapes)
    for kind_index, seed in steps:
        g.step(_KINDS[kind_index % len(_KINDS)], np.random.default_rng(seed))
    if len(g.values) == len(g.args):
        g.step("unary", np.random.default_rng(0))
    produced = g.values[len(g.args):]
    outputs = [produced[-1]] + ([produced[len(produced) // 2]] if len(produced) > 2 else [])
    return g.text(outputs)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(steps=_steps, arg_shapes=st.lists(_shapes, min_size=1, max_size=2),
       io_layout=st.sampled_from(["nchw", "nhwc"]))
def test_pipeline_keeps_integer_outputs_bit_exact(steps, arg_shapes, io_layout):
    text = build_int_graph(steps, arg_shapes)
    module = ir.Module.parse(text, ir.Context())
    assert module.operation.verify()
    before = count_data_moving_transposes(module)
    pipeline.run_pipeline(module, f"builtin.module(mcu-tosa-layout-pipeline{{io-layout={io_layout}}})")
    assert module.operation.verify()
    assert count_data_moving_transposes(module) <= before, text
    support.assert_same_outputs(text, module)
