#!/usr/bin/env python3
"""Differential fuzzer: random models (grammar.py) through every compile mode on both backends, the C
on the host against tosa_reference_model on the same integer inputs.

    python tools/fuzz/fuzz.py --seed 1 --count 30                  # 30 models x 4 modes x 2 backends
    python tools/fuzz/fuzz.py --seed 1 --count 500 --json fuzz.json --sanitize --jobs 2
    python tools/fuzz/fuzz.py --replay 1234 --modes int8 --backends cmsis-nn   # one model again

Model i of a run is `grammar.generate(seed * 1_000_003 + i)`: `--seed` and `--count` give the same
models, the same inputs and so the same table. Each model is compiled in-process (`mcu_mlir.compile`)
in every mode (int8, int16, int8 with `--int16-layers auto`, with `--prefer memory`, with `--weights int4`, with
`--int4-layers auto`) for each
backend, its C run on the host (`mcu-run`) and its integer TOSA in tosa_reference_model (`mcu-run
--reference`) on the same input, and each run is one of:

    exact          the C's integers equal the reference model's
    refusal        a UserError (mcu-compile's exit 1) that names the model's source line
    refusal-noloc  a UserError with no location in the model: the user cannot tell which layer
    crash          any other exception (mcu-compile's exit 2, a traceback), a C that does not build,
                   or a worker process that died
    wrong          the C's integers differ from the reference model's: a silent wrong answer
    unpredictable  tosa_reference_model fails on our TOSA (UNPREDICTABLE, a REQUIRE, an invalid graph)
    sanitizer      ASan / UBSan reported an error in the C (`--sanitize`: every `--sanitize-every`-th model)
    timeout        the compile took over COMPILE_TIMEOUT seconds

and, apart from the class, `suspect` when the exact C's output is collapsed (every value the same
where float's are not) or under `--suspect-db` of SQNR against the float model: a hint, not a verdict.
Every failure (wrong, crash, unpredictable, sanitizer, refusal-noloc) is minimised, one per kind of
failure: layers dropped, then sizes shrunk, while the same class reproduces in the same mode and
backend; the reproducer is printed as Python source.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import copy
import json
import math
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import grammar  # noqa: E402

MODES = {
    "int8": {"quantize": "int8"},
    "int16": {"quantize": "int16"},
    "int16-auto": {"quantize": "int8", "int16_layers": "auto"},
    "memory": {"quantize": "int8", "prefer": "memory"},
    "int4": {"quantize": "int8", "weights": "int4"},
    "int4-auto": {"quantize": "int8", "int4_layers": "auto"},
}
# mcu-compile's words for each mode, for the printed reproducers.
MODE_FLAGS = {"int8": "--quantize int8", "int16": "--quantize int16",
              "int16-auto": "--quantize int8 --int16-layers auto", "memory": "--quantize int8 --prefer memory",
              "int4": "--quantize int8 --weights int4", "int4-auto": "--quantize int8 --int4-layers auto"}
BACKENDS = ("portable", "cmsis-nn")
CLASSES = ("exact", "refusal", "refusal-noloc", "crash", "wrong", "unpredictable", "sanitizer", "timeout")
# A compile that takes longer is a 'timeout' (reported, not minimised: each try would take as long).
COMPILE_TIMEOUT = 300


class CompileTimeout(Exception):
    pass
FAILURES = ("wrong", "crash", "unpredictable", "sanitizer", "refusal-noloc")
CALIBRATION = 16
SEED_STRIDE = 1_000_003


def model_seed(seed: int, index: int) -> int:
    return seed * SEED_STRIDE + index


# --- in the worker process ----------------------------------------------------------------------

_WORKER: dict = {}


def _init_worker(workdir: str) -> None:
    from mcu_mlir import cpu_paths
    cpu_paths.pin()     # the same C as mcu-compile gives
    import warnings
    warnings.filterwarnings("ignore")
    import logging
    logging.disable(logging.WARNING)
    import torch  # noqa: F401
    _WORKER["dir"] = Path(workdir) / f"w{os.getpid()}"
    _WORKER["dir"].mkdir(parents=True, exist_ok=True)


def _load(spec: dict):
    """The rendered model as a module file of its own (the compiler's locations name its lines)."""
    import importlib.util
    source, used = grammar.render(spec)
    path = _WORKER["dir"] / f"model_{spec['seed']}.py"
    path.write_text(source)
    loader = importlib.util.spec_from_file_location(f"fuzz_model_{spec['seed']}_{time.monotonic_ns()}", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module, path, used


def _located(err, path: Path) -> bool:
    """Whether a UserError names a line of the model's own file."""
    diags = list(err.diagnostics)
    for d in list(diags):
        diags.extend(d.notes)
    if any(d.line is not None and d.file and Path(d.file).name == path.name for d in diags):
        return True
    return f"{path.name}:" in err.format()


def _short(text: str, limit: int = 600) -> str:
    text = re.sub(r"\S*/site-packages/", "", str(text))
    text = text.replace(str(ROOT) + "/", "").replace(str(_WORKER.get("dir", "")) + "/", "")
    return text if len(text) <= limit else text[:limit] + " ..."


def _crash(exc: BaseException) -> dict:
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "mcu_mlir" in f.filename] or frames
    where = f"{Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else "?"
    return {"class": "crash", "message": _short(f"{type(exc).__name__}: {exc}"), "where": where,
            "kind": f"{type(exc).__name__} at {where}"}


def _sqnr(want, got) -> float:
    import numpy as np
    want = np.asarray(want, np.float64).ravel()
    got = np.asarray(got, np.float64).ravel()
    noise = float(np.sum((want - got) ** 2))
    signal = float(np.sum(want ** 2))
    if noise == 0:
        return math.inf
    return 10 * math.log10(signal / noise) if signal > 0 else -math.inf


def run_one(spec: dict, mode: str, backend: str, sanitize: bool = False, suspect_db: float = 8.0) -> dict:
    """One model, one mode, one backend: compile, C on the host, reference model, compare."""
    import numpy as np
    import torch

    import mcu_mlir
    from mcu_mlir.diagnostics import UserError
    from mcu_mlir.firmware import run as target_run
    t0 = time.perf_counter()
    module, path, used = _load(spec)
    model = module.model()
    example = module.inputs(0)
    scale = spec.get("input_scale", 1.0)     # > 1: past the calibrated range, the saturating paths
    test_input = tuple(t * scale if t.is_floating_point() else t for t in module.inputs(_test_seed(spec)))
    out = _WORKER["dir"] / backend     # one folder per backend: the C builds incrementally
    options = dict(MODES[mode], target="host", backend=backend, calibration=CALIBRATION, output_dir=str(out),
                   cmsis_nn_path=os.environ.get("CMSIS_NN_PATH"))
    row = {"mode": mode, "backend": backend}

    def done(**kw):
        row.update(kw)
        row["seconds"] = round(time.perf_counter() - t0, 2)
        return row
    for stale in ("model.c", "model.tosa.mlir", "report.json"):
        (out / stale).unlink(missing_ok=True)
    import signal

    def too_long(signum, frame):
        raise CompileTimeout(f"the compile took over {COMPILE_TIMEOUT} s")
    signal.signal(signal.SIGALRM, too_long)
    signal.alarm(COMPILE_TIMEOUT)
    try:
        mcu_mlir.compile(model, example, **options)
    except CompileTimeout as exc:
        return done(**{"class": "timeout", "message": str(exc), "kind": "compile timeout"})
    except UserError as err:
        located = _located(err, path)
        return done(**{"class": "refusal" if located else "refusal-noloc",
                       "message": _short(err.format(path.name)), "kind": _refusal_kind(err)})
    except Exception as exc:  # a compiler bug, as mcu-compile's exit 2
        return done(**_crash(exc))
    finally:
        signal.alarm(0)
    x = [t.numpy() for t in test_input]
    try:
        c = target_run.run(out, x, target="host", cmsis_nn_path=os.environ.get("CMSIS_NN_PATH"), timeout=60,
                           sanitize=sanitize)
    except UserError as err:
        text = err.format()
        if "sanitizer" in text:
            return done(**{"class": "sanitizer", "message": _short(text, 1500), "kind": _sanitizer_kind(text)})
        return done(**{"class": "crash", "message": _short(text), "kind": "C run: " + _first_line(text)})
    except Exception as exc:
        return done(**_crash(exc))
    try:
        ref = target_run.run_reference_outdir(out, x)
    except Exception as exc:
        text = str(exc)
        kind = "UNPREDICTABLE" if "UNPREDICTABLE" in text else "reference failed"
        return done(**{"class": "unpredictable", "message": _short(text, 1500), "kind": kind})
    diffs = []
    for k, (a, b) in enumerate(zip(c.outputs_q, ref.outputs_q)):
        a = np.asarray(a).astype(np.int64)
        b = np.asarray(b).astype(np.int64).reshape(a.shape) if b.size == a.size else b
        if a.shape != b.shape:
            diffs.append({"output": k, "shape": [list(a.shape), list(b.shape)]})
        elif not np.array_equal(a, b):
            d = np.abs(a - b)
            diffs.append({"output": k, "differ": int((d > 0).sum()), "of": int(a.size), "max_lsb": int(d.max())})
    if diffs:
        return done(**{"class": "wrong", "diffs": diffs, "kind": "C != reference",
                       "message": "; ".join(f"output{d['output']}: " + (f"{d['differ']} of {d['of']} differ, up to "
                                                                         f"{d['max_lsb']} LSB" if "differ" in d
                                                                         else f"shapes {d['shape']}")
                                            for d in diffs)})
    with torch.no_grad():
        want = model(*test_input)
    want = want[0] if isinstance(want, (tuple, list)) else want
    got = c.outputs_float[0]
    sqnr = _sqnr(want.numpy(), np.asarray(got).reshape(tuple(want.shape)) if np.size(got) == want.numel() else got)
    collapsed = bool(np.size(got) >= 4 and np.all(np.asarray(got) == np.asarray(got).ravel()[0])
                     and float(want.std()) > 1e-3)
    suspect = collapsed or sqnr < suspect_db
    return done(**{"class": "exact", "sqnr_db": None if math.isinf(sqnr) else round(sqnr, 1),
                   "collapsed": collapsed, "suspect": suspect})


def _test_seed(spec: dict) -> int:
    return spec["seed"] % 1000 + 1


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")[:160]


def _refusal_kind(err) -> str:
    """A refusal's message without its numbers and names: what groups refusals of one kind."""
    message = err.diagnostics[0].message if err.diagnostics else str(err)
    return re.sub(r"\d+", "N", message.split(":")[0])[:100]


def _sanitizer_kind(text: str) -> str:
    m = re.search(r"(ERROR: AddressSanitizer: [\w-]+|runtime error: [^\n]{0,80})", text)
    return m.group(1) if m else "sanitizer"


def run_graph_config(args: tuple) -> dict:
    spec, mode, backend, sanitize, suspect_db = args
    try:
        return run_one(spec, mode, backend, sanitize, suspect_db)
    except Exception as exc:   # the fuzzer's own harness (the model's float forward, I/O): say so
        row = _crash(exc)
        row.update(mode=mode, backend=backend, harness=True)
        return row


# --- the driver ---------------------------------------------------------------------------------

class Pool:
    """Worker processes that survive a worker dying (a segfault in the bindings is a crash row)."""

    def __init__(self, jobs: int, workdir: str):
        import multiprocessing
        self.jobs, self.workdir = jobs, workdir
        self.ctx = multiprocessing.get_context("spawn")
        self._new()

    def _new(self):
        self.pool = concurrent.futures.ProcessPoolExecutor(self.jobs, mp_context=self.ctx,
                                                           initializer=_init_worker, initargs=(self.workdir,))

    def map(self, tasks: list[tuple]) -> list[dict]:
        results: list[dict | None] = [None] * len(tasks)
        pending = list(range(len(tasks)))
        while pending:
            futures = {self.pool.submit(run_graph_config, tasks[i]): i for i in pending}
            pending = []
            broken = False
            for fut in concurrent.futures.as_completed(futures):
                i = futures[fut]
                try:
                    results[i] = fut.result()
                except concurrent.futures.process.BrokenProcessPool:
                    broken = True
                    pending.append(i)
            if broken:
                self.pool.shutdown(wait=False, cancel_futures=True)
                self._new()
                # Run the unfinished tasks one at a time: the one that kills its worker is the crash.
                for i in pending:
                    results[i] = self._alone(tasks[i])
                pending = []
        return results

    def _alone(self, task: tuple) -> dict:
        fut = self.pool.submit(run_graph_config, task)
        try:
            return fut.result()
        except concurrent.futures.process.BrokenProcessPool:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self._new()
            return {"class": "crash", "mode": task[1], "backend": task[2], "kind": "worker process died",
                    "message": "the compiling process died (a signal: segfault or abort in native code)"}

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


def _signature(row: dict) -> tuple:
    """What one minimisation stands for: a crash, sanitizer report or unlocated refusal of one kind
    (an exception at one place) in any configuration; a wrong answer or UNPREDICTABLE graph per backend."""
    if row["class"] in ("wrong", "unpredictable"):
        return (row["class"], row["backend"], row.get("kind", ""))
    return (row["class"], row.get("kind", ""))


def _same_failure(row: dict, want: dict) -> bool:
    if row["class"] != want["class"]:
        return False
    if want["class"] in ("crash", "sanitizer", "refusal-noloc"):
        return row.get("kind") == want.get("kind")
    return True


def _candidates(spec: dict):
    """Smaller models than `spec`, biggest cuts first: layers dropped, bodies unwrapped, sizes shrunk."""
    layers = spec["layers"]
    n = len(layers)
    size = n // 2
    while size >= 1:
        for start in range(0, n, size):
            if n - size >= 1 or start > 0:
                yield dict(spec, layers=layers[:start] + layers[start + size:])
        size //= 2
    for i, layer in enumerate(layers):
        if layer["op"] == "residual":
            yield dict(spec, layers=layers[:i] + layer["body"] + layers[i + 1:])
            for j in range(len(layer["body"])):
                body = layer["body"][:j] + layer["body"][j + 1:]
                yield dict(spec, layers=layers[:i] + [dict(layer, body=body)] + layers[i + 1:])
    kind, *dims = spec["input"]
    for d in range(len(dims)):
        for smaller in sorted({1, dims[d] // 2, dims[d] - 1}):
            if 1 <= smaller < dims[d]:
                yield dict(spec, input=[kind] + dims[:d] + [smaller] + dims[d + 1:])
    for i, layer in enumerate(layers):
        for key, value in layer.items():
            options = []
            if key in ("out", "hidden", "mult", "layers", "heads") and isinstance(value, int) and value > 1:
                options = sorted({1, value // 2, value - 1})
            elif key in ("stride", "dilation", "sh", "sw") and value not in (None, 1):
                options = [1]
            elif key in ("padding", "output_padding") and value not in (0, "same"):
                options = [0]
            elif key == "size" and value != [1, 1]:
                options = [[1, 1], [max(1, value[0] // 2), max(1, value[1] // 2)]]
            elif key == "k" and value not in (1, [1, 1]):
                options = [1, 3] if value not in (3, [3, 3]) else [1]
            elif key in ("bias", "ceil", "align", "include_pad", "keepdim", "per_channel", "affine") and value is True:
                options = [False]
            for option in options:
                new = copy.deepcopy(layer)
                new[key] = option
                yield dict(spec, layers=layers[:i] + [new] + layers[i + 1:])


def _size(spec: dict) -> tuple:
    def count(layers):
        return sum(1 + count(x.get("body", [])) for x in layers)
    return (count(spec["layers"]), sum(d for d in spec["input"][1:]), json.dumps(spec))


def minimise(pool: Pool, spec: dict, row: dict, sanitize: bool, suspect_db: float, budget: int) -> tuple[dict, dict, int]:
    """Greedy delta debugging: take the first smaller model that fails the same way, until none does."""
    spec = copy.deepcopy(spec)
    spec["layers"] = [spec["layers"][i] for i in grammar.render(spec)[1]]   # the layers that took part
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        batch = []
        for candidate in _candidates(spec):
            if _size(candidate) >= _size(spec) or not grammar.render(candidate)[1]:
                continue
            batch.append(candidate)
            if len(batch) == pool.jobs or tries + len(batch) >= budget:
                tries += len(batch)
                results = pool.map([(c, row["mode"], row["backend"], sanitize, suspect_db) for c in batch])
                hit = next((c, r) for c, r in zip(batch, results) if _same_failure(r, row)) \
                    if any(_same_failure(r, row) for r in results) else None
                batch = []
                if hit:
                    spec, row = copy.deepcopy(hit[0]), hit[1]
                    spec["layers"] = [spec["layers"][i] for i in grammar.render(spec)[1]]
                    improved = True
                    break
                if tries >= budget:
                    break
    return spec, row, tries


def reproducer(spec: dict, row: dict) -> str:
    source, _ = grammar.render(spec)
    shape = _input_shape_arg(spec)
    backend = row["backend"]
    scaled = f" * {spec['input_scale']}" if spec.get("input_scale", 1) != 1 else ""
    header = (f"# fuzz: {row['class']} ({row.get('kind', '')}) in mode {row['mode']}, backend {backend}\n"
              f"# {row.get('message', '')[:300]}\n"
              f"# mcu-compile repro.py:model --input-shape {shape} --target host --backend {backend} "
              f"{MODE_FLAGS[row['mode']]} --calibration {CALIBRATION} -o out\n"
              f"# test input: inputs({_test_seed(spec)}){scaled}; calibration: inputs(0) and 15 torch.randn draws "
              f"(mcu_mlir.compile(model(), inputs(0), calibration={CALIBRATION}, ...))\n"
              f"# mcu-run out --inputs in.npz --outputs c.npz [--sanitize]; "
              f"mcu-run out --inputs in.npz --outputs ref.npz --reference\n")
    return header + source


def _input_shape_arg(spec: dict) -> str:
    kind, *dims = spec["input"]
    if kind == "image":
        return "1," + ",".join(map(str, dims))
    if kind == "seq":
        return f"1,{dims[0]},{dims[1]}"
    return f"1,{dims[0]}:int64"


def table(rows: list[dict], configs: list[tuple[str, str]]) -> str:
    head = "| mode | backend | " + " | ".join(CLASSES) + " | suspect | runs |"
    lines = [head, "|" + "---|" * (len(CLASSES) + 4)]
    totals = {c: 0 for c in CLASSES + ("suspect", "runs")}
    for mode, backend in configs:
        mine = [r for r in rows if r["mode"] == mode and r["backend"] == backend]
        counts = {c: sum(1 for r in mine if r["class"] == c) for c in CLASSES}
        counts["suspect"] = sum(1 for r in mine if r.get("suspect"))
        counts["runs"] = len(mine)
        for k, v in counts.items():
            totals[k] += v
        lines.append(f"| {mode} | {backend} | " + " | ".join(str(counts[c]) for c in CLASSES)
                     + f" | {counts['suspect']} | {counts['runs']} |")
    lines.append("| all | | " + " | ".join(str(totals[c]) for c in CLASSES) + f" | {totals['suspect']} | {totals['runs']} |")
    return "\n".join(lines)


def fuzz(seed: int, count: int, modes: list[str], backends: list[str], jobs: int = 2, sanitize: bool = False,
         sanitize_every: int = 4, suspect_db: float = 8.0, minimise_budget: int = 40, workdir: str | None = None,
         replay: int | None = None, log=print, time_limit: float | None = None,
         model_seeds: list[int] | None = None, rotate_modes: bool = False, wide_inputs: bool = False) -> dict:
    """Runs the fuzzer; returns everything the JSON holds. `rotate_modes`: each model runs the first
    mode and one other, in turn (a cheaper sweep: every mode, a share of the models)."""
    import tempfile
    workdir = workdir or tempfile.mkdtemp(prefix="mcu-fuzz-")
    configs = [(m, b) for m in modes for b in backends]
    if model_seeds is not None:
        seeds = list(model_seeds)
    else:
        seeds = [replay] if replay is not None else [model_seed(seed, i) for i in range(count)]
    pool = Pool(jobs, workdir)
    graphs, rows = [], []
    t0 = time.perf_counter()
    run_seconds = 0.0
    try:
        for n, s in enumerate(seeds):
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                log(f"time limit of {time_limit:.0f} s reached after {n} models")
                break
            spec = grammar.generate(s)
            if wide_inputs and n % 2 == 1:
                spec["input_scale"] = 3.0
            san = sanitize and (n % max(1, sanitize_every) == 0)
            mine = configs
            if rotate_modes and len(modes) > 2:
                other = modes[1 + n % (len(modes) - 1)]
                mine = [(m, b) for m, b in configs if m in (modes[0], other)]
            results = pool.map([(spec, m, b, san, suspect_db) for m, b in mine])
            for r in results:
                r["model_seed"] = s
                r["sanitized"] = san
            rows.extend(results)
            graphs.append({"model_seed": s, "spec": spec, "forms": sorted(grammar.forms(spec))})
            run_seconds = time.perf_counter() - t0
            summary = " ".join(f"{r['mode']}/{r['backend']}:{r['class']}" for r in results if r["class"] != "exact")
            log(f"[{n + 1}/{len(seeds)}] model {s} ({len(spec['layers'])} layers) {time.perf_counter() - t0:.0f} s "
                f"{summary or 'all exact'}")
        failures, seen = [], set()
        for r in rows:
            if r["class"] not in FAILURES:
                continue
            sig = _signature(r)
            if sig in seen:
                continue
            seen.add(sig)
            spec = next(g["spec"] for g in graphs if g["model_seed"] == r["model_seed"])
            t1 = time.perf_counter()
            small, small_row, tries = minimise(pool, spec, r, r.get("sanitized", False), suspect_db, minimise_budget)
            entry = {"class": r["class"], "mode": r["mode"], "backend": r["backend"], "kind": r.get("kind"),
                     "model_seed": r["model_seed"], "message": small_row.get("message", r.get("message")),
                     "same_kind_runs": sum(1 for x in rows if _signature(x) == sig),
                     "configurations": sorted({f"{x['mode']}/{x['backend']}" for x in rows if _signature(x) == sig}),
                     "models": sorted({x["model_seed"] for x in rows if _signature(x) == sig}),
                     "minimised": small, "minimise_tries": tries,
                     "minimise_seconds": round(time.perf_counter() - t1, 1), "reproducer": reproducer(small, small_row)}
            failures.append(entry)
            log(f"\n=== {r['class']} in {r['mode']} / {r['backend']} ({entry['same_kind_runs']} runs of this kind in "
                f"{len(entry['models'])} models, {len(entry['configurations'])} configurations), first model "
                f"{r['model_seed']}, minimised in {tries} tries:\n{entry['reproducer']}")
    finally:
        pool.close()
    refusal_kinds: dict[str, int] = {}
    for r in rows:
        if r["class"] == "refusal":
            refusal_kinds[r.get("kind", "")] = refusal_kinds.get(r.get("kind", ""), 0) + 1
    return {"seed": seed, "count": len(graphs), "wide_inputs": wide_inputs, "modes": modes, "backends": backends,
            "jobs": jobs,
            "sanitize": sanitize, "sanitize_every": sanitize_every, "suspect_db": suspect_db,
            "run_seconds": round(run_seconds, 1), "seconds_per_model": round(run_seconds / max(1, len(graphs)), 2),
            "table": table(rows, configs), "refusal_kinds": dict(sorted(refusal_kinds.items(), key=lambda kv: -kv[1])),
            "failures": failures, "runs": rows, "models": graphs}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=20, help="models to generate")
    p.add_argument("--replay", type=int, default=None, help="run only this model seed (from a JSON or a log)")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--backends", default=None, help="default: portable, and cmsis-nn when CMSIS_NN_PATH is set")
    p.add_argument("--rotate-modes", action="store_true",
                   help="each model in the first mode and one other in turn, not in every mode")
    p.add_argument("--wide-inputs", action="store_true",
                   help="every other model's test input 3x the calibration data's spread (saturation)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--sanitize", action="store_true", help="build the C of a sample of models with ASan / UBSan")
    p.add_argument("--sanitize-every", type=int, default=4, help="with --sanitize: every N-th model (default 4)")
    p.add_argument("--suspect-db", type=float, default=8.0, help="SQNR against float under which a run is 'suspect'")
    p.add_argument("--minimise-budget", type=int, default=40, help="most candidate models tried per failure")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds after which no new model starts (the failures are still minimised)")
    p.add_argument("--workdir", default=None)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    modes = args.modes.split(",")
    backends = args.backends.split(",") if args.backends else \
        [b for b in BACKENDS if b != "cmsis-nn" or os.environ.get("CMSIS_NN_PATH")]
    bad = [m for m in modes if m not in MODES] + [b for b in backends if b not in BACKENDS]
    if bad:
        print(f"fuzz: unknown mode or backend: {', '.join(bad)}", file=sys.stderr)
        return 1
    result = fuzz(args.seed, args.count, modes, backends, args.jobs, args.sanitize, args.sanitize_every,
                  args.suspect_db, args.minimise_budget, args.workdir, args.replay,
                  log=lambda s: print(s, flush=True), time_limit=args.time_limit,
                  rotate_modes=args.rotate_modes, wide_inputs=args.wide_inputs)
    print()
    print(result["table"])
    print(f"\n{result['count']} models in {result['run_seconds']} s ({result['seconds_per_model']} s per model, "
          f"{len(result['runs']) / max(1, result['count']):.0f} compiles and runs each, {args.jobs} jobs); "
          f"{len(result['failures'])} distinct failures")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 1 if any(f["class"] != "refusal-noloc" for f in result["failures"]) else 0


if __name__ == "__main__":
    sys.exit(main())
