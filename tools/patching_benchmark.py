#!/usr/bin/env python3
"""Peak RAM with and without patch-based execution, and what it costs in instructions.

    python tools/patching_benchmark.py [--models tv_mobilenet_v2_035,...] [--target cortex-m55]
                                       [--max-overhead 15] [--markdown FILE] [--json FILE]

For each model (tools/public_models.py, at the input size given here): compiled for the target with
CMSIS-NN layer by layer (the default) and with --prefer memory (the first layers in bands of rows);
per model the layer-by-layer lower bound (the most bytes live at one kernel of the default schedule:
no placement of that schedule does better), both arenas, the patched stage (bands, TOSA ops), the
instructions of one inference of each under QEMU and the overhead, flash, and whether each C equals
tosa_reference_model's integers on a random input. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import figures  # noqa: E402

# name in tools/public_models.py -> input shape (MCU sizes: MCUNetV2's settings)
MODELS = {
    "tv_mobilenet_v2_035": (1, 3, 96, 96),
    "timm_mnasnet_small": (1, 3, 128, 128),
    "tv_mnasnet0_5": (1, 3, 128, 128),
    "timm_semnasnet_050": (1, 3, 128, 128),
    "tv_mobilenet_v3_small_050": (1, 3, 128, 128),
    "tv_mobilenet_v2_035@160": (1, 3, 160, 160),
}


def bench(name: str, shape: tuple, target: str, max_overhead: float, work: str) -> dict:
    import numpy as np
    import torch

    import mcu_mlir
    import public_models
    from mcu_mlir.firmware import run

    entry = public_models.MODELS[name.split("@")[0]]
    model = entry.build(shape)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    row = {"model": name, "input": "x".join(str(d) for d in shape[2:])}
    inputs = [x.numpy()]
    for prefer in ("speed", "memory"):
        out = os.path.join(work, f"{name}-{prefer}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = mcu_mlir.compile(model, (x,), target=target, backend="cmsis-nn", emit="elf", output_dir=out,
                                      prefer=prefer, max_overhead=max_overhead)
        report = result.report
        if prefer == "speed":
            row["bound"] = report["arena_lower_bound_bytes"]
        row[f"arena_{prefer}"] = report["arena_bytes"]
        row[f"flash_{prefer}"] = report.get("flash_bytes")
        row["bands"], row["stage_ops"] = report.get("patched_bands"), report.get("patched_ops")
        got = run.run(out, inputs, target=target, count_instructions=True)
        want = run.run_reference_outdir(out, inputs)
        row[f"bit_exact_{prefer}"] = bool(np.array_equal(got.outputs_q[0],
                                                         want.outputs_q[0].reshape(got.outputs_q[0].shape)))
        row[f"instructions_{prefer}"] = got.instructions["total"]
    row["ratio_to_bound"] = round(row["arena_memory"] / row["bound"], 3)
    row["overhead_pct"] = round(100.0 * (row["instructions_memory"] / row["instructions_speed"] - 1), 1)
    return row


def markdown(rows: list[dict], target: str, max_overhead: float) -> str:
    lines = [f"Target {target}, CMSIS-NN, `--max-overhead {max_overhead:g}`; kB = 1024 bytes.", "",
             "| model | input | layer-by-layer bound | arena, layer by layer | arena, patched | patched / bound "
             "| bands x TOSA ops | instructions, layer by layer | instructions, patched | overhead | flash +"
             " | bit-exact |",
             "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r.get('input', '')} | {r['error']} |" + " |" * 9)
            continue
        stage = f"{r['bands']} x {r['stage_ops']}" if r.get("bands") else "not patched"
        flash = (r["flash_memory"] - r["flash_speed"]) / 1024 if r.get("flash_memory") and r.get("flash_speed") \
            else 0
        exact = "yes" if r["bit_exact_speed"] and r["bit_exact_memory"] else "**no**"
        lines.append(f"| {r['model']} | {r['input']} | {r['bound'] / 1024:.1f} kB | {r['arena_speed'] / 1024:.1f} kB "
                     f"| {r['arena_memory'] / 1024:.1f} kB | {r['ratio_to_bound']:.2f}x | {stage} "
                     f"| {r['instructions_speed']:,} | {r['instructions_memory']:,} | {r['overhead_pct']:+.1f} % "
                     f"| {flash:.1f} kB | {exact} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--target", default="cortex-m55")
    p.add_argument("--max-overhead", type=float, default=15.0)
    p.add_argument("--markdown")
    p.add_argument("--json")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mcu-patching-") as work:
        for name in args.models.split(","):
            try:
                row = bench(name, MODELS[name], args.target, args.max_overhead, work)
            except Exception as exc:  # a figure table: one model's failure is a row, not the end
                row = {"model": name, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"}
            rows.append(row)
            print(json.dumps(row), flush=True)
    figures.save(rows, markdown(rows, args.target, args.max_overhead), args.markdown, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
