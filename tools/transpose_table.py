#!/usr/bin/env python3
"""Prints, per model, the data-moving transposes left in its TOSA after:

  torch-mlir   torch-mlir's own `torch-backend-to-tosa-backend-pipeline`
  upstream     upstream `tosa-reduce-transposes` in the best of several pass orders (first among
               them: right after the conversion, before constant folding)
  ours         `mcu-tosa-layout-pipeline`
  int8         the frontend's integer TOSA before / after `mcu-tosa-layout-pipeline`

for NCHW I/O and for NHWC I/O. torch-mlir has no NHWC I/O option, so for its columns the model is
wrapped to take and return channels-last tensors (permutes at the boundary), which is what a user
of it would write. Models: the zoo (mcu_mlir.zoo) when present, else the layout tests' stand-ins.

    python tools/transpose_table.py [--models a,b] [--stand-ins]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "unit"))

UPSTREAM_ORDERS = (
    "func.func(tosa-reduce-transposes),func.func(tosa-layerwise-constant-fold),canonicalize,cse",
    "canonicalize,func.func(tosa-reduce-transposes),func.func(tosa-layerwise-constant-fold),canonicalize,"
    "func.func(tosa-reduce-transposes),canonicalize,cse",
    "func.func(tosa-layerwise-constant-fold),func.func(tosa-reduce-transposes),canonicalize,cse",
)


def _models(stand_ins: bool = False):
    """name -> factory returning (nn.Module, [example inputs])."""
    try:
        from mcu_mlir import zoo
    except ImportError:
        zoo = None
    if not stand_ins and zoo is not None and getattr(zoo, "MODELS", None):
        return {name: (lambda n=name: (lambda m, x: (m, list(x)))(*zoo.get(n))) for name in zoo.MODELS}
    import test_layout_models as stand_ins
    return {name: (lambda n=name: stand_ins.build(n)) for name in stand_ins.MODELS}


def _int8_count(model, inputs, io: str):
    """Ours on the frontend's integer TOSA (None if the frontend cannot import the model)."""
    try:
        from mcu_mlir.frontend import import_model
        text = import_model(model, tuple(inputs), quantize="int8", calibration=2).module.operation.get_asm()
    except Exception:
        return None
    return text


def _channels_last_wrapper(model, inputs):
    """The model taking and returning channels-last tensors for every rank-3/4 input and output."""
    import torch

    def to_last(t):
        return t.permute(0, *range(2, t.dim()), 1).contiguous() if t.dim() in (3, 4) else t

    def to_first(t):
        return t.permute(0, t.dim() - 1, *range(1, t.dim() - 1)) if t.dim() in (3, 4) else t

    class ChannelsLast(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, *xs):
            out = self.inner(*[to_first(x) for x in xs])
            if isinstance(out, (tuple, list)):
                return tuple(to_last(o) for o in out)
            return to_last(out)

    return ChannelsLast().eval(), [to_last(x) for x in inputs]


def _count(text: str, passes: str | None) -> int:
    from mcu_mlir import pipeline
    from mcu_mlir._mlir import ir
    from mcu_mlir.passes.analysis.transposes import count_data_moving_transposes
    module = ir.Module.parse(text, ir.Context())
    if passes:
        pipeline.run_pipeline(module, f"builtin.module({passes})")
    return count_data_moving_transposes(module)


def row(name: str, factory) -> dict:
    import test_layout_support as support
    model, inputs = factory()
    out = {"model": name}
    int8 = _int8_count(model, inputs, "nchw")
    for io in ("nchw", "nhwc"):
        m, xs = (model, inputs) if io == "nchw" else _channels_last_wrapper(model, inputs)
        ours = f"mcu-tosa-layout-pipeline{{io-layout={io}}}"
        try:
            raw = support.torch_to_tosa(m, xs, "raw")
            default = support.torch_to_tosa(m, xs, "default")
            out[f"torch-mlir {io}"] = _count(default, None)
            out[f"upstream {io}"] = min([_count(support.torch_to_tosa(m, xs, "reduce-first"), None)]
                                        + [_count(raw, order) for order in UPSTREAM_ORDERS])
            nchw_raw = raw if io == "nchw" else support.torch_to_tosa(model, inputs, "raw")
            out[f"ours {io}"] = _count(nchw_raw, ours)
        except Exception as exc:  # torch-mlir cannot convert the float model
            for key in ("torch-mlir", "upstream", "ours"):
                out[f"{key} {io}"] = f"n/a ({type(exc).__name__})"
        out[f"ours int8 {io}"] = "n/a" if int8 is None else _count(int8, ours)
    out["int8 before"] = "n/a" if int8 is None else _count(int8, None)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="", help="comma-separated subset")
    p.add_argument("--stand-ins", action="store_true",
                   help="the layout tests' small stand-ins (test/unit/test_layout_models.py) instead of the zoo")
    args = p.parse_args(argv)
    models = _models(args.stand_ins)
    names = [n for n in (args.models.split(",") if args.models else sorted(models)) if n]
    cols = ["model", "torch-mlir nchw", "upstream nchw", "ours nchw",
            "torch-mlir nhwc", "upstream nhwc", "ours nhwc",
            "int8 before", "ours int8 nchw", "ours int8 nhwc"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    start = time.time()
    for name in names:
        r = row(name, models[name])
        print("| " + " | ".join(str(r[c]) for c in cols) + " |", flush=True)
    print(f"\n({len(names)} models, {time.time() - start:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
