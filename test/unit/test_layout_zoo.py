"""The layout pipeline on every zoo model (but the large ones), integer and float.

Integer and float TOSA come from the frontend (`--quantize int8` / `none`, NCHW as PyTorch lays
it out; its decompositions let torch-mlir convert every zoo model, nearest upsampling included). Acceptance: no data-moving transpose inside the model; with NCHW I/O at
most one per input and output; with NHWC I/O none; tosa_reference_model outputs bit-identical
(integer) or within 1e-5 (float) before and after.
"""

from __future__ import annotations

import functools

import pytest

torch = pytest.importorskip("torch")

from mcu_mlir import pipeline, zoo  # noqa: E402
from mcu_mlir._mlir import ir  # noqa: E402
from mcu_mlir.passes.analysis.transposes import count_data_moving_transposes  # noqa: E402

import test_layout_support as support  # noqa: E402

MODELS = sorted(n for n in zoo.MODELS if n not in zoo.LARGE)


@functools.lru_cache(maxsize=None)
def tosa_text(name: str, kind: str) -> str:
    model, inputs = zoo.get(name)
    from mcu_mlir.frontend import import_model
    result = import_model(model, inputs, quantize="int8" if kind == "int8" else "none", calibration=2)
    return result.module.operation.get_asm()


def _text_or_skip(name, kind):
    try:
        return tosa_text(name, kind)
    except Exception as exc:  # the frontend's own tests own its failures
        pytest.skip(f"no {kind} TOSA for {name}: {type(exc).__name__}: {str(exc)[:200]}")


@pytest.mark.parametrize("single_pass", ["mcu-nhwc-canonicalize", "mcu-conv1d-to-conv2d", "mcu-fold-transposes"])
@pytest.mark.parametrize("name", MODELS)
def test_each_layout_pass_keeps_int8_outputs(name, single_pass):
    text = _text_or_skip(name, "int8")
    module = ir.Module.parse(text, ir.Context())
    pipeline.run_pipeline(module, f"builtin.module({single_pass})")
    assert module.operation.verify()
    support.assert_same_outputs(text, module)


@pytest.mark.parametrize("io_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("kind", ["int8", "float"])
@pytest.mark.parametrize("name", MODELS)
def test_zoo_model_layout(name, kind, io_layout):
    text = _text_or_skip(name, kind)
    module = ir.Module.parse(text, ir.Context())
    fn = support.entry(module)
    n_io = len(fn.regions[0].blocks[0].arguments) + len(ir.FunctionType(fn.attributes["function_type"].value).results)
    pipeline.run_pipeline(module, f"builtin.module(mcu-tosa-layout-pipeline{{io-layout={io_layout}}})")
    assert module.operation.verify()
    left = count_data_moving_transposes(module)
    if io_layout == "nhwc":
        assert left == 0
    else:
        assert left <= n_io
        assert support.interior_transposes(module) == 0
    support.assert_same_outputs(text, module, atol=1e-5 if kind == "float" else 0)


@pytest.mark.parametrize("kind", ["int8", "float"])
@pytest.mark.parametrize("name", [n for n in ("wav2letter_small", "silero_vad") if n in zoo.MODELS])
def test_zoo_conv1d_chains_have_no_views_between_convs(name, kind):
    module = ir.Module.parse(_text_or_skip(name, kind), ir.Context())
    pipeline.run_pipeline(module, "builtin.module(mcu-tosa-layout-pipeline)")
    assert support.ops_between_convs(module) == []
