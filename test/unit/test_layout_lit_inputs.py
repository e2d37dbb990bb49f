"""Every lit input of the layout passes that runs: tosa_reference_model gives the same outputs
before and after each pass its RUN lines name (bit-exact; float within 1e-5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcu_mlir import pipeline
from mcu_mlir._mlir import ir

import test_layout_support as support

TRANSFORMS = Path(__file__).resolve().parents[1] / "Transforms"
LAYOUT_FILES = ["fold-transposes.mlir", "nhwc-canonicalize.mlir", "conv1d-to-conv2d.mlir",
                "layout-pipeline.mlir"]
_SPLIT = re.compile(r"^// -----\s*$", re.M)
_PASS = re.compile(r"--(mcu-[\w-]+)(?:=(\S+))?")


def _cases():
    for name in LAYOUT_FILES:
        path = TRANSFORMS / name
        if not path.exists():
            continue
        text = path.read_text()
        passes = set()
        for line in text.splitlines():
            if line.startswith("// RUN:"):
                command = line.split("|")[0]
                steps = [f"{p}{{{o}}}" if o else p for p, o in _PASS.findall(command)]
                if steps:
                    passes.add(",".join(steps))
        for i, chunk in enumerate(_SPLIT.split(text)):
            fn = re.search(r"func\.func @([\w$]+)", chunk)
            if fn:
                for p in sorted(passes):
                    yield pytest.param(chunk, p, id=f"{name}:{fn.group(1)}:{p}")


@pytest.mark.parametrize("chunk,passes", list(_cases()))
def test_lit_input_keeps_its_outputs(chunk, passes):
    if "func.call" in chunk:
        pytest.skip("tosa_reference_model runs one function without calls; the case checks signatures")
    ctx = ir.Context()
    module = ir.Module.parse(chunk, ctx)
    floats = "xf32>" in chunk or "xf16>" in chunk
    pipeline.run_pipeline(module, f"builtin.module({passes})")
    assert module.operation.verify()
    support.assert_same_outputs(chunk, module, atol=1e-5 if floats else 0)
