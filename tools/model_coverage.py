#!/usr/bin/env python3
"""Coverage benchmark: public model definitions through `mcu-compile` and `mcu-run`, exactly as a user runs them.

    python tools/model_coverage.py                        # every model in tools/public_models.py
    python tools/model_coverage.py --models tv_mobilenet_v2_035,timm_lcnet_050 --m55 tv_mobilenet_v2_035
    python tools/model_coverage.py --markdown docs/model_coverage.md --json coverage.json
    python tools/model_coverage.py --models timm_fbnetc_100 --compile-args "--int16-layers auto"

Per model: compiles (or the error mcu-compile printed), share of kernel calls on CMSIS-NN, the
portable kernels it uses, arena against the layer-by-layer bound, interior data-moving transposes,
bit-exact (the C on the host against tosa_reference_model on the same integer inputs; with --m55
also under QEMU), and SQNR of the C's output against the float model run eagerly.
Needs `pip install -e .[models]`; the CMSIS-NN backend when CMSIS_NN_PATH is set.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import figures  # noqa: E402
from mcu_mlir.frontend.quantize.layer_sqnr import sqnr_db  # noqa: E402
MODEL_FILE = os.path.join(ROOT, "tools", "public_models.py")
BIN = os.path.dirname(sys.executable)
# Kernels that only rename or view a buffer: no work, left out of the CMSIS-NN share.
NO_WORK = ("alias", "view", "reshape", "none")
# Fresh inputs the SQNR against float is pooled over. A classifier's 10 outputs on 8 inputs moved by
# up to 3 dB from one group of 8 to the next (timm's MobileNetV2-0.35, 64 inputs: 21.1 to 23.2 dB
# per 8, 22.5 and 21.6 per 32, 22.0 on all).
SQNR_INPUTS = 32
# Models are built from torch's global seed (public_models.seeded): two threads building at once
# would draw from one generator in turn and get other weights than the compiler saw.
_BUILD_LOCK = threading.Lock()


def _tool(name: str) -> str:
    local = os.path.join(BIN, name)
    return local if os.path.exists(local) else name


def _run(cmd: list[str], timeout: float) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout:.0f} s"
    return p.returncode, p.stdout + p.stderr


def _first_error(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln
    return lines[-1] if lines else "failed with no output"


def _short_paths(text: str) -> str:
    """Paths as a reader finds them on any machine: the library's own files from its package
    folder, this checkout's from its root."""
    text = re.sub(r"\S*/site-packages/", "", text)
    return text.replace(ROOT + "/", "")


def measure(name: str, outdir: str, backend: str, m55: bool, timeout: float, seed: int,
            compile_args: tuple[str, ...] = (), sqnr_inputs: int = SQNR_INPUTS) -> dict:
    import public_models
    import torch

    entry = public_models.MODELS[name]
    row = {"model": name, "library": entry.library, "family": entry.family,
           "input_shape": list(entry.input_shape), "compiles": False}
    out = os.path.join(outdir, name)
    shapes = [a for shape in entry.input_shapes() for a in ("--input-shape", shape)]
    t0 = time.perf_counter()
    def compile_for(target: str, path: str) -> tuple[int, str]:
        return _run([_tool("mcu-compile"), f"{MODEL_FILE}:{name}", *shapes, "--backend", backend,
                     "--target", target, "-o", path, *compile_args], timeout)

    rc, log = compile_for("host", out)
    row["compile_seconds"] = round(time.perf_counter() - t0, 1)
    if rc != 0:
        row["error"] = _first_error(log)
        row["exit_code"] = rc
        row["traceback"] = "Traceback" in log
        return row
    row["compiles"] = True
    report = json.load(open(os.path.join(out, "report.json")))
    calls = [op["kernel"] for op in report["ops"] if not op["kernel"].startswith(NO_WORK)]
    on_cmsis = [k for k in calls if k.startswith("arm_")]
    row.update(kernel_calls=len(calls), cmsis_share=round(len(on_cmsis) / max(len(calls), 1), 3),
               portable_kernels=sorted({k for k in calls if not k.startswith("arm_")}),
               arena_bytes=report["arena_bytes"], bound_bytes=report["arena_lower_bound_bytes"],
               interior_transposes=report.get("interior_transposes"),
               transpose_kernels=report.get("interior_transpose_kernels"), weights_bytes=report["weights_bytes"])

    x = entry.samples(seed)
    inputs = os.path.join(out, "inputs.npz")
    np.savez(inputs, **{f"input{i}": t.numpy() for i, t in enumerate(x)})
    runs = [("c", out, []), ("reference", out, ["--reference"])]
    if m55:
        rc, log = compile_for("cortex-m55", out + "-m55")
        if rc != 0:
            row["m55_error"] = _first_error(log)
        else:
            runs.append(("m55", out + "-m55", ["--target", "cortex-m55"]))
    results = {}
    for label, folder, extra in runs:
        path = os.path.join(out, f"outputs_{label}.npz")
        rc, log = _run([_tool("mcu-run"), folder, "--inputs", inputs, "--outputs", path] + extra, timeout)
        if rc != 0:
            row[f"{label}_error"] = _first_error(log)
            continue
        results[label] = np.load(path)
    if "c" in results and "reference" in results:
        keys = sorted(k for k in results["c"].files if k.endswith("_q"))
        row["bit_exact_host"] = all(np.array_equal(results["c"][k], results["reference"][k]) for k in keys)
    if "m55" in results and "reference" in results:
        keys = sorted(k for k in results["m55"].files if k.endswith("_q"))
        row["bit_exact_m55"] = all(np.array_equal(results["m55"][k], results["reference"][k]) for k in keys)
    if "c" in results:
        # SQNR pooled over several inputs: a 10-class output of one input is 10 numbers, and its
        # SQNR moved by +-3 dB from one input to the next.
        wants, gots = [], []
        with _BUILD_LOCK:
            model = entry.model()
        for k in range(sqnr_inputs):
            xk = x if k == 0 else entry.samples(seed + k)
            if k == 0:
                got = results["c"]["output0"]
            else:
                path = os.path.join(out, "inputs_sqnr.npz")
                np.savez(path, **{f"input{i}": t.numpy() for i, t in enumerate(xk)})
                rc, log = _run([_tool("mcu-run"), out, "--inputs", path, "--outputs",
                                os.path.join(out, "outputs_sqnr.npz")], timeout)
                if rc != 0:
                    row["sqnr_error"] = _first_error(log)
                    break
                got = np.load(os.path.join(out, "outputs_sqnr.npz"))["output0"]
            with torch.no_grad():
                want = model(*xk)
            want = want[0] if isinstance(want, (tuple, list)) else want
            wants.append(want.numpy().astype(np.float64).reshape(-1))
            gots.append(got.astype(np.float64).reshape(-1))
        row["sqnr_db"] = round(sqnr_db(np.concatenate(wants), np.concatenate(gots)), 1)
        row["sqnr_first_input_db"] = round(sqnr_db(wants[0], gots[0]), 1)
        row["sqnr_inputs"] = len(wants)
    return row


def _fmt_bytes(n) -> str:
    return f"{n / 1024:,.1f} kB" if isinstance(n, (int, float)) else "-"


def markdown(rows: list[dict], backend: str) -> str:
    n = len(rows)
    ok = [r for r in rows if r["compiles"]]
    exact = [r for r in ok if r.get("bit_exact_host")]
    good_sqnr = [r for r in ok if r.get("sqnr_db", -1) >= 25]
    families = []
    for family, label in (("", "CNN"), ("attention", "attention"), ("recurrent", "recurrent")):
        group = [r for r in rows if r["family"] == family]
        if group:
            families.append(f"{label} {sum(1 for r in group if r['compiles'])}/{len(group)}")
    lines = [
        f"Backend {backend}. {len(ok)}/{n} compile ({', '.join(families)}), {len(exact)}/{n} bit-exact on the host. "
        f"SQNR >= 25 dB: {len(good_sqnr)}/{len(ok)} of those that compile.",
        "",
        "| model | library | compiles | CMSIS-NN share | portable kernels | arena / bound "
        "| interior transposes (TOSA / run) | bit-exact host | M55 | SQNR dB | compile s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if not r["compiles"]:
            err = _short_paths(r.get("error", "")).replace("|", "\\|")
            lines.append(f"| {r['model']} | {r['library']} | no: {err} | | | | | | | | {r['compile_seconds']} |")
            continue
        exact_cell = {True: "yes", False: "**no**", None: r.get("c_error", "-")}[r.get("bit_exact_host")]
        m55 = {True: "yes", False: "**no**", None: "-"}[r.get("bit_exact_m55")]
        lines.append(
            f"| {r['model']} | {r['library']} | yes | {r['cmsis_share']:.0%} | {', '.join(r['portable_kernels']) or '-'} "
            f"| {_fmt_bytes(r['arena_bytes'])} / {_fmt_bytes(r['bound_bytes'])} "
            f"| {r['interior_transposes']} / {r.get('transpose_kernels', '-')} "
            f"| {exact_cell} | {m55} | {r.get('sqnr_db', '-')} | {r['compile_seconds']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import public_models

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=None, help="comma-separated names (default: all)")
    p.add_argument("--m55", default="", help="comma-separated names also run on Cortex-M55 under QEMU")
    p.add_argument("--backend", default="cmsis-nn" if os.environ.get("CMSIS_NN_PATH") else "portable")
    p.add_argument("--outdir", default="/tmp/mcu-model-coverage")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=1200, help="seconds per step of one model")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sqnr-inputs", type=int, default=SQNR_INPUTS,
                   help=f"inputs the SQNR against float is pooled over (default {SQNR_INPUTS})")
    p.add_argument("--compile-args", default="", help="more mcu-compile arguments, e.g. '--int16-layers auto'")
    p.add_argument("--json", default=None)
    p.add_argument("--markdown", default=None)
    args = p.parse_args(argv)
    names = args.models.split(",") if args.models else list(public_models.MODELS)
    unknown = [n for n in names if n not in public_models.MODELS]
    if unknown:
        print(f"model_coverage: unknown model(s): {', '.join(unknown)}", file=sys.stderr)
        return 1
    m55 = set(filter(None, args.m55.split(",")))
    rows = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        extra = tuple(args.compile_args.split())
        futures = {pool.submit(measure, n, args.outdir, args.backend, n in m55, args.timeout, args.seed, extra,
                               args.sqnr_inputs): n for n in names}
        for fut in concurrent.futures.as_completed(futures):
            r = fut.result()
            rows[r["model"]] = r
            state = ("bit-exact" if r.get("bit_exact_host") else "NOT bit-exact") if r["compiles"] else r["error"]
            print(f"{r['model']}: {state} sqnr={r.get('sqnr_db', '-')} {r['compile_seconds']} s", flush=True)
    ordered = [rows[n] for n in names]
    figures.save(ordered, markdown(ordered, args.backend), args.markdown, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
