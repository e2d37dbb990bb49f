#!/usr/bin/env python3
"""Measures the frontend on zoo models: integer TOSA (tosa_reference_model) vs the PT2E model
(max |diff| in LSB, fraction exactly equal, top-1), float TOSA vs eager, and import times.

    python tools/quant_report.py                      # every zoo model but the large ones, int8
    python tools/quant_report.py --all --quantize int8 none
    python tools/quant_report.py mobilenet_v2_100 --json figures.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

import numpy as np  # noqa: E402


def measure(name: str, mode: str, calibration: int, seed: int) -> dict:
    import torch

    from mcu_mlir import zoo
    from mcu_mlir.frontend import import_model
    from mcu_mlir.reference import run_reference

    model, example = zoo.get(name)
    timings: dict = {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = import_model(model, example, quantize=mode, calibration=calibration, timings=timings)
    total = time.perf_counter() - t0
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(x.shape, generator=g).numpy() for x in example]
    row = {"model": name, "quantize": mode, "frontend_seconds": round(total, 3),
           "timings": {k: round(v, 3) for k, v in timings.items()}, "outputs": []}
    if mode == "none":
        outs = run_reference(result.module, xs)
        for out, want in zip(outs, result.eager(xs)):
            row["outputs"].append({"relative_error": float(np.abs(out - want).max() / max(np.abs(want).max(), 1e-12))})
        return row
    q_in = [tq.quantize(x) for tq, x in zip(result.inputs, xs)]
    outs = run_reference(result.module, q_in)
    ref = result.reference([tq.dequantize(q) for tq, q in zip(result.inputs, q_in)])
    eager = result.eager([tq.dequantize(q) for tq, q in zip(result.inputs, q_in)])
    for out, want, float_out, tq in zip(outs, ref, eager, result.outputs):
        want_q = tq.quantize(want).astype(np.int64)
        diff = np.abs(out.astype(np.int64) - want_q)
        entry = {"max_lsb": int(diff.max()), "exact_fraction": round(float((diff == 0).mean()), 4),
                 "elements": int(diff.size)}
        if out.ndim == 2 and out.shape[-1] > 1:
            entry["top1_vs_pt2e"] = bool((out.argmax(-1) == want_q.argmax(-1)).all())
            entry["top1_vs_eager"] = bool((out.argmax(-1) == float_out.argmax(-1)).all())
        entry["vs_eager_max_abs"] = float(np.abs(tq.dequantize(out) - float_out).max())
        row["outputs"].append(entry)
    return row


def main(argv=None) -> int:
    from mcu_mlir import zoo
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*")
    p.add_argument("--all", action="store_true", help="include the large benchmark models")
    p.add_argument("--quantize", nargs="+", default=["int8"], choices=["int8", "int16", "none"])
    p.add_argument("--calibration", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="also write the rows to this file")
    args = p.parse_args(argv)
    names = args.models or [n for n in zoo.MODELS if args.all or n not in zoo.LARGE]
    rows = []
    for name in names:
        for mode in args.quantize:
            try:
                row = measure(name, mode, args.calibration, args.seed)
            except Exception as e:  # keep going: a report row says what failed
                row = {"model": name, "quantize": mode, "error": f"{type(e).__name__}: {e}"[:500]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
