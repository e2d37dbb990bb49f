"""The performance benchmark: every figure of the product per zoo model, side by side, in one run.

Per model: kernel calls on CMSIS-NN vs portable, arena bytes vs the lower bound (and vs ExecuTorch's
planned memory where published), flash (weights + constants vs int8 parameter bytes, code), transposes
left, compile seconds (torch model -> C), instructions per inference on Cortex-M55 and M4 and the share
spent outside kernels; plus `mcu-opt` start-up. Figures, not pass/fail: ratios are measured in one run.

Usage: python tools/benchmark.py [--models a,b] [--backend cmsis-nn|portable] [--quick] [--no-run] [--prefer speed|memory]
       [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

# Published or measured figures of peers (DESIGN.md).
EXECUTORCH_ARENA = {"mobilenet_v2": 142_704, "ds_cnn": 20_464}
EXECUTORCH_COMPILE_S = {"mobilenet_v2": 50.0, "ds_cnn": 7.2}
QUICK_MODELS = ("ds_cnn", "autoencoder")


def int8_parameter_bytes(model) -> int:
    """The smallest honest size of the parameters: int8 weights, int32 biases."""
    import torch
    total = 0
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if isinstance(module, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
                continue  # folded into the conv before it
            total += p.numel() * (4 if name == "bias" else 1)
    return total


def mcu_opt_startup_seconds(repeats: int = 3) -> float:
    src = "func.func @main(%a: tensor<1xi8>) -> tensor<1xi8> {\n  return %a : tensor<1xi8>\n}\n"
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_opt", "-"], input=src, text=True,
                       check=True, capture_output=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
        best = min(best, time.perf_counter() - t0)
    return best


def bench_model(name: str, backend: str, run: bool, targets: tuple[str, ...], prefer: str = "speed") -> dict:
    from mcu_mlir import zoo
    from mcu_mlir.driver import compile as compile_model

    model, example = zoo.get(name)
    row: dict = {"model": name}
    out = tempfile.mkdtemp(prefix=f"mcu-bench-{name}-")
    cmsis_nn = os.environ.get("CMSIS_NN_PATH") if backend == "cmsis-nn" else None
    # Code is generated per core (CMSIS-NN scratch sizes differ by kernel path), so compile per target.
    from mcu_mlir.diagnostics import UserError
    for target in targets:
        tout = os.path.join(out, target)
        try:
            result = compile_model(model, example, target=target, backend=backend, emit="elf" if run else "c",
                                   output_dir=tout, cmsis_nn_path=cmsis_nn, prefer=prefer)
        except UserError as e:   # e.g. a model larger than the machine's flash: a figure, not a crash
            row[f"{target}_instructions"] = "does not fit"
            row.setdefault("notes", []).append(f"{target}: {e}")
            if target != targets[0]:
                continue
            result = compile_model(model, example, target=target, backend=backend, emit="c",
                                   output_dir=tout, cmsis_nn_path=cmsis_nn, prefer=prefer)
            run_here = False
        else:
            run_here = run
        r = result.report
        if target == targets[0]:
            row["compile_s"] = r["compile_seconds"]          # torch model -> C, without the C build
            # Views (reshapes planned as aliases) cost nothing at run time: they are not calls.
            kernels = [op["kernel"] for op in r.get("ops", []) if op["kernel"] != "view"]
            row["calls"] = len(kernels)
            row["cmsis_calls"] = sum(1 for k in kernels if not k.startswith("portable:"))
            row["portable_calls"] = len(kernels) - row["cmsis_calls"]
            row["arena"] = r.get("arena_bytes")
            row["lower_bound"] = r.get("arena_lower_bound_bytes")
            # With outputs overlapping their dying inputs, fewer bytes must exist at once than the
            # classic live-set bound counts: the planner reports that bound too.
            row["overlap_bound"] = r.get("arena_overlap_bound_bytes", row["lower_bound"])
            row["weights"] = r.get("weights_bytes")
            row["flash"] = r.get("flash_bytes")
            row["code"] = r.get("code_bytes")
            row["param_int8"] = int8_parameter_bytes(model)
            row["transposes"] = r.get("transposes")
            # The same model with memory before speed: scratch-free kernels where a scratch buffer
            # raises the arena (what it costs in instructions shows with --prefer memory).
            mem = compile_model(model, example, target=target, backend=backend, emit="c", prefer="memory",
                                output_dir=tout + "-memory", cmsis_nn_path=cmsis_nn)
            row["arena_memory"] = mem.report.get("arena_bytes")
        if run_here:
            from mcu_mlir.firmware.run import run as run_firmware
            fw = run_firmware(tout, [t.detach().numpy() for t in example], target=target,
                              count_instructions=True, cmsis_nn_path=cmsis_nn)
            ins = fw.instructions or {}
            row[f"{target}_instructions"] = ins.get("total")
            if ins.get("total"):
                # Outside any kernel (driver code, copies); and outside CMSIS-NN (portable kernels count too).
                row[f"{target}_outside_share"] = 1.0 - ins["kernel_share"]
                row[f"{target}_outside_cmsis_share"] = 1.0 - ins["cmsis-nn"] / ins["total"]
    return row


def _fmt(v, spec="{:,}"):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return spec.format(v)


def print_table(rows: list[dict], targets) -> None:
    head = ["model", "calls cmsis/port", "arena B", "lower B", "arena/LB", "overlap LB", "arena/OLB", "vs ExecuTorch", "arena B (memory first)", "weights B",
            "w/int8 params", "code B", "transposes", "compile s"] + [f"{t} instr" for t in targets] + \
           [f"{t} outside kernels %" for t in targets] + [f"{t} outside CMSIS-NN %" for t in targets]
    lines = [head]
    for r in rows:
        et = EXECUTORCH_ARENA.get(r["model"])
        ratio = (r["arena"] / r["lower_bound"]) if r.get("arena") and r.get("lower_bound") else None
        lines.append([
            r["model"], f"{r['cmsis_calls']}/{r['portable_calls']}", _fmt(r["arena"]), _fmt(r["lower_bound"]),
            _fmt(ratio, "{:.3f}"), _fmt(r.get("overlap_bound")),
            _fmt(r["arena"] / r["overlap_bound"] if r.get("arena") and r.get("overlap_bound") else None, "{:.3f}"),
            (f"{r['arena'] / et:.3f}x of {et:,}" if et and r.get("arena") else "-"),
            _fmt(r.get("arena_memory")) + (f" ({r['arena_memory'] / et:.3f}x)" if et and r.get("arena_memory") else ""),
            _fmt(r["weights"]), _fmt(r["weights"] / r["param_int8"] if r.get("weights") else None, "{:.3f}"),
            _fmt(r.get("code")),
            _fmt(r["transposes"]), _fmt(r["compile_s"], "{:.2f}") + (
                f" (ET {EXECUTORCH_COMPILE_S[r['model']]})" if r["model"] in EXECUTORCH_COMPILE_S else ""),
        ] + [_fmt(r.get(f"{t}_instructions")) for t in targets]
          + [_fmt(100 * r[f"{t}_outside_share"] if r.get(f"{t}_outside_share") is not None else None, "{:.2f}")
             for t in targets]
          + [_fmt(100 * r[f"{t}_outside_cmsis_share"] if r.get(f"{t}_outside_cmsis_share") is not None else None,
                  "{:.2f}") for t in targets])
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    for line in lines:
        print("  ".join(str(c).rjust(w) for c, w in zip(line, widths)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=None)
    p.add_argument("--backend", default="cmsis-nn" if os.environ.get("CMSIS_NN_PATH") else "portable")
    p.add_argument("--targets", default="cortex-m55,cortex-m4")
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_MODELS)}")
    p.add_argument("--no-run", action="store_true", help="compile only; no build, no QEMU")
    p.add_argument("--prefer", choices=("speed", "memory"), default="speed",
                   help="kernel choice of the main columns (the memory-first arena is always printed)")
    p.add_argument("--json", default=None, help="also write the rows as JSON")
    args = p.parse_args(argv)
    from mcu_mlir import zoo
    names = args.models.split(",") if args.models else (QUICK_MODELS if args.quick else tuple(zoo.MODELS))
    targets = tuple(args.targets.split(","))
    print(f"backend: {args.backend}   targets: {', '.join(targets)}   prefer: {args.prefer}")
    print(f"mcu-opt start-up on a small file: {mcu_opt_startup_seconds():.3f} s (target < 0.5 s)")
    rows = []
    for name in names:
        rows.append(bench_model(name, args.backend, not args.no_run, targets, args.prefer))
        print(f"  {name}: done in {rows[-1]['compile_s']:.2f} s compile", file=sys.stderr)
    print_table(rows, targets)
    for r in rows:
        for note in r.get("notes", []):
            print(f"note: {r['model']}: {note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
