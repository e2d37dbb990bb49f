"""Helpers of the layout tests (oracle runs, boundary-aware transpose counts), and their own tests."""

from __future__ import annotations

import functools

import numpy as np

from mcu_mlir._mlir import ir
from mcu_mlir.passes.transforms.layout import perms as P
from mcu_mlir.ir.ops import isa
from mcu_mlir.passes.transforms.layout.roles import LAYOUT_SENSITIVE
from mcu_mlir.reference import run_reference
from mcu_mlir.passes.analysis.transposes import is_data_moving

CONVS = ("tosa.conv2d", "tosa.depthwise_conv2d", "tosa.transpose_conv2d", "tosa.conv3d")

# torch-mlir's torch-backend-to-tosa-backend-pipeline without its constant folding and transpose
# reduction: the TOSA exactly as the conversion writes it.
RAW_TOSA_PIPELINE = (
    "builtin.module(func.func(torch-fuse-quantized-ops),"
    "func.func(convert-torch-to-tosa{require-full-tosa-conversion=true}),"
    "func.func(tosa-make-broadcastable),func.func(canonicalize),func.func(cse),"
    "torch-func-backend-type-conversion,func.func(canonicalize),"
    "func.func(torch-finalizing-backend-type-conversion))")
DEFAULT_TOSA_PIPELINE = "builtin.module(torch-backend-to-tosa-backend-pipeline)"
# The same with upstream tosa-reduce-transposes right after the conversion, before anything
# folds constants (the order in which it removes the most).
REDUCE_FIRST_TOSA_PIPELINE = (
    "builtin.module(func.func(torch-fuse-quantized-ops),"
    "func.func(convert-torch-to-tosa{require-full-tosa-conversion=true}),"
    "func.func(tosa-reduce-transposes),func.func(tosa-layerwise-constant-fold),"
    "func.func(tosa-make-broadcastable),func.func(canonicalize),func.func(cse),"
    "torch-func-backend-type-conversion,func.func(canonicalize),"
    "func.func(torch-finalizing-backend-type-conversion))")
_FORMS = {"raw": RAW_TOSA_PIPELINE, "default": DEFAULT_TOSA_PIPELINE, "reduce-first": REDUCE_FIRST_TOSA_PIPELINE}


def torch_to_tosa(model, inputs, form: str = "raw") -> str:
    """torch-mlir's TOSA for `model`: `raw` (conversion only), `default` (its whole pipeline) or
    `reduce-first` (its pipeline with tosa-reduce-transposes first)."""
    from torch_mlir import fx
    from torch_mlir import passmanager as torch_pm

    from mcu_mlir.frontend.graph.float_import import decomposition_table
    # With the frontend's decompositions (nearest upsampling), as every column of the table sees it.
    module = fx.export_and_import(model, *inputs, output_type="torch", decomposition_table=decomposition_table())
    with module.context:
        torch_pm.PassManager.parse(_FORMS[form]).run(module.operation)
    return str(module)


def entry(module):
    return next(op for op in module.body.operations if op.operation.name == "func.func")


def _marked(fn, key: str, n: int) -> list[bool]:
    if key not in fn.attributes:
        return [False] * n
    attrs = fn.attributes[key]
    return ["mcu.layout" in ir.DictAttr(attrs[i]) for i in range(n)]


def random_inputs(fn, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for arg in fn.regions[0].blocks[0].arguments:
        shape, elem = tuple(arg.type.shape), str(arg.type.element_type)
        if elem.startswith("f"):
            out.append(rng.standard_normal(shape).astype(np.float32))
        elif elem == "i1":
            out.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            bits = int(elem[1:])
            lo, hi = (-128, 128) if bits == 8 else (-(1 << 15), 1 << 15) if bits == 16 else (-1000, 1000)
            out.append(rng.integers(lo, hi, shape).astype({8: np.int8, 16: np.int16}.get(bits, np.int32)))
    return out


@functools.lru_cache(maxsize=64)
def _reference_before(text: str, seed: int):
    before = ir.Module.parse(text, ir.Context())
    inputs = random_inputs(entry(before), seed)
    return inputs, run_reference(text, inputs)


def assert_same_outputs(before_text: str, after_module, *, atol: float = 0.0, seed: int = 0):
    """tosa_reference_model gives the same outputs before and after (bit-exact when atol == 0).

    Arguments and results marked `mcu.layout = "nhwc"` are fed and read channels-last.
    """
    inputs, expected = _reference_before(before_text, seed)
    fn = entry(after_module)
    args = fn.regions[0].blocks[0].arguments
    fed = [np.ascontiguousarray(x.transpose(P.channels_last(x.ndim))) if mark else x
           for x, mark in zip(inputs, _marked(fn, "arg_attrs", len(args)))]
    got = run_reference(_runnable(after_module), fed)
    marks = _marked(fn, "res_attrs", len(got))
    assert len(got) == len(expected)
    for i, (e, g, mark) in enumerate(zip(expected, got, marks)):
        if mark:
            g = g.transpose(P.inverse(P.channels_last(g.ndim)))
        assert e.shape == g.shape, f"output {i}: {e.shape} vs {g.shape}"
        if atol == 0:
            np.testing.assert_array_equal(g, e, err_msg=f"output {i}")
        else:
            np.testing.assert_allclose(g, e, atol=atol, rtol=0, err_msg=f"output {i}")


def _runnable(module):
    """A copy where no result is an argument itself (the reference model cannot output its input)."""
    copy = ir.Module.parse(module.operation.get_asm(), module.context)
    block = entry(copy).regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    for i, v in enumerate(ret.operands):
        if isinstance(v.owner, ir.Block):
            with ir.InsertionPoint(ret), ret.location:
                ret.operands[i] = ir.Operation.create("tosa.identity", results=[v.type], operands=[v]).results[0]
    return copy


def _walk_ops(module):
    return list(entry(module).regions[0].blocks[0].operations)


def _reaches_only_arguments(value, seen=None) -> bool:
    """Whether `value` is computed from the function's arguments and constants without passing a
    layout-sensitive op (so a transpose of it is an input-boundary transpose). `seen`: the ops
    already found to, each visited once (a graph of branches and joins, as YOLO's)."""
    seen = {} if seen is None else seen
    owner = value.owner
    if isinstance(owner, ir.Block):
        return True
    key = owner.operation
    if key in seen:
        return seen[key]
    name = owner.operation.name
    if name in ("tosa.const", "tosa.const_shape"):
        result = True
    elif isa(owner, *LAYOUT_SENSITIVE) or name.startswith("func.") or name == "tosa.custom":
        result = False
    else:
        result = all(_reaches_only_arguments(v, seen) for v in owner.operands)
    seen[key] = result
    return result


def _reaches_only_return(value) -> bool:
    for use in value.uses:
        user = use.owner
        name = user.operation.name if hasattr(user, "operation") else user.name
        if name == "func.return":
            continue
        if isa(user, *LAYOUT_SENSITIVE) and not _is_table_lookup(user):
            return False
        if not all(_reaches_only_return(r) for r in user.results):
            return False
    return True


def _is_table_lookup(op) -> bool:
    """A gather from a constant table is elementwise (integer softmax reads its exp table so)."""
    if op.operation.name != "tosa.gather":
        return False
    table = op.operands[0].owner
    return not isinstance(table, ir.Block) and table.operation.name == "tosa.const"


def interior_transposes(module) -> int:
    """Data-moving transposes that are neither fed only by the inputs nor feed only the outputs."""
    count = 0
    for op in _walk_ops(module):
        if op.operation.name != "tosa.transpose" or not is_data_moving(op):
            continue
        if _reaches_only_arguments(op.operands[0]) or _reaches_only_return(op.results[0]):
            continue
        count += 1
    return count


def ops_between_convs(module) -> list[str]:
    """Names of reshapes/transposes on any path from one convolution to the next."""
    found = []

    def walk(value, path, depth):
        if depth > 20:
            return
        for use in value.uses:
            user = use.owner
            name = user.operation.name
            if name in CONVS:
                found.extend(path)
                continue
            if isa(user, *LAYOUT_SENSITIVE) or name == "func.return":
                continue
            step = path + ([name] if name in ("tosa.reshape", "tosa.transpose") else [])
            for r in user.results:
                walk(r, step, depth + 1)

    for op in _walk_ops(module):
        if op.operation.name in CONVS:
            walk(op.results[0], [], 0)
    return sorted(set(found))


# -- tests of the permutation algebra the passes rely on -------------------------------------------

def test_transpose_free_layouts_agree_with_numpy():
    rng = np.random.default_rng(1)
    shape = (2, 3, 1, 5)
    x = rng.standard_normal(shape)
    for t in [(0, 2, 3, 1), (0, 3, 1, 2), (3, 2, 1, 0)]:
        y = x.transpose(t)
        for p_in in [(0, 1, 2, 3), (0, 2, 3, 1), (1, 0, 3, 2)]:
            p_out = P.transpose_free_output_layout(t, p_in)
            assert P.transpose_is_free(shape, t, p_in, p_out)
            # stored y is the stored x reinterpreted, byte for byte
            assert np.array_equal(x.transpose(p_in).ravel(), y.transpose(p_out).ravel())
            assert P.transpose_free_input_layout(t, p_out) == p_in


def test_reshape_free_layouts_agree_with_numpy():
    x = np.arange(2 * 3 * 4).reshape(1, 3, 2, 4)   # N C H W
    stored = x.transpose(0, 2, 3, 1)                 # as NHWC
    flat = x.reshape(1, 3, 8)                        # flatten H, W
    for p in P.reshape_free_layouts((1, 3, 2, 4), (0, 2, 3, 1), (1, 3, 8), True):
        assert np.array_equal(stored.ravel(), flat.transpose(p).ravel())
    assert P.reshape_free_layouts((1, 3, 2, 4), (0, 2, 3, 1), (1, 3, 8), True)[0] == (0, 2, 1)
    assert not P.reshape_is_free((1, 3, 2, 4), (0, 2, 3, 1), (1, 3, 8), (0, 1, 2))


def test_unit_dim_transposes_do_not_move_data():
    assert not P.moves_data((1, 8, 1, 1), (0, 2, 3, 1))
    assert P.moves_data((1, 8, 2, 1), (0, 2, 3, 1))
    assert P.equivalent((1, 1, 5), (0, 1, 2), (1, 0, 2))


def test_count_data_moving_transposes():
    from mcu_mlir.passes.analysis.transposes import count_data_moving_transposes
    module = ir.Module.parse("""
      func.func @f(%a: tensor<1x8x1x1xf32>, %b: tensor<1x2x3x4xf32>) -> (tensor<1x1x1x8xf32>, tensor<1x3x4x2xf32>) {
        %0 = tosa.transpose %a {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x1x1xf32>) -> tensor<1x1x1x8xf32>
        %1 = tosa.transpose %b {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
        return %0, %1 : tensor<1x1x1x8xf32>, tensor<1x3x4x2xf32>
      }""", ir.Context())
    assert count_data_moving_transposes(module) == 1


def test_boundary_layouts_report_nhwc_io():
    from mcu_mlir import pipeline
    from mcu_mlir.passes.analysis.transposes import boundary_layouts
    text = """
      func.func @f(%a: tensor<1x2x3x4xf32>, %b: tensor<1x5xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x5xf32>) {
        %0 = tosa.transpose %a {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
        %1 = tosa.max_pool2d %0 {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x4x2xf32>) -> tensor<1x2x3x2xf32>
        %2 = tosa.transpose %1 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x3x2xf32>) -> tensor<1x2x2x3xf32>
        %3 = tosa.abs %b : (tensor<1x5xf32>) -> tensor<1x5xf32>
        return %2, %3 : tensor<1x2x2x3xf32>, tensor<1x5xf32>
      }"""
    module = ir.Module.parse(text, ir.Context())
    assert boundary_layouts(module) == (["as-written"] * 2, ["as-written"] * 2)
    pipeline.run_pipeline(module, "builtin.module(mcu-tosa-layout-pipeline{io-layout=nhwc})")
    assert boundary_layouts(module) == (["nhwc", "as-written"], ["nhwc", "as-written"])
    assert_same_outputs(text, module, atol=1e-6)
