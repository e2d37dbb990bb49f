"""TOSA conformance tests through the compiler: tests nobody on the project wrote.

    tests = generate(out_dir, ops=["add", "conv2d"])        # tosa_verif_build_tests, fixed seed
    outcome = run_test(tests[0], work_dir)                  # compile, build, run, compare

`tosa_verif_build_tests` (tosa-tools) writes each test as `desc.json`, `test.tosa` (flatbuffer) and
its inputs (`.npy`), choosing a few tests per op / type / attribute with the conformance suite's own
selection config, border-value data sets included. The expected outputs come from
`tosa_reference_model` on that flatbuffer; the compiler takes the same flatbuffer as a user's
`mcu-compile FILE.tosa` would. Every test ends in one of:

    exact     the C's outputs equal the reference model's, bit for bit
    refused   a compile-time user error (exit 1) naming what is unsupported: allowed, listed in docs
    wrong     the C ran and differs: never allowed
    failed    the C did not run to the end (a kernel's error status, a crash, a sanitizer report)
    crashed   the compiler raised something other than a user error (a compiler bug)
    skipped   the reference model itself did not produce outputs for the test

Negative (ERROR_IF) tests must be rejected with a diagnostic: `rejected`, else `accepted` (a bug).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .diagnostics import UserError
from . import cores

EXTENSIONS = ("tosa-ext-int16", "tosa-ext-doubleround")
SEED = 42
# Ops of the integer profile the compiler is expected to take (shape-only and control-flow ops are
# not graph data: the generator writes them as standalone programs a model never holds).
SKIPPED_OPS = re.compile(r"_shape$|^(cond_if|while_loop|const|identity|dim|assert_equal_shape)$")
# Ops of the 1.1 draft the generator writes whatever --tosa-version says: not TOSA 1.0 PRO-INT.
DRAFT_OPS = re.compile(r"block_scaled|^(matmul_t|row_gather)$")


def _tool(name: str) -> str:
    here = Path(sys.executable).with_name(name)
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise UserError(f"{name} not found: it comes with tosa-tools (tools/setup.sh installs it)")
    return found


def selection_config() -> Path:
    """The conformance suite's own test-selection config, shipped with tosa-tools."""
    import conformance   # tosa-tools' package (a namespace package: no __file__)
    return Path(list(conformance.__path__)[0]) / "cts-config_v1.0.json"


def generate(out_dir: Path | str, *, ops: list[str] | None = None, negative: bool = False,
             seed: int = SEED) -> list[Path]:
    """Generates the integer-profile tests (int16 and doubleround extensions) of `ops` (all when None)
    into out_dir; returns the test directories, sorted."""
    out_dir = Path(out_dir)
    cmd = [_tool("tosa_verif_build_tests"), "-o", str(out_dir), "--seed", str(seed),
           "--profile", "tosa-pro-int", "--extension", *EXTENSIONS,
           "--test-type", "negative" if negative else "positive",
           "--test-selection-config", str(selection_config())]
    if ops:
        cmd += ["--filter", "^(" + "|".join(re.escape(op) for op in ops) + ")$"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"tosa_verif_build_tests failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return sorted(p.parent for p in out_dir.rglob("desc.json"))


def first_per_op(tests: list[Path], count: int) -> list[Path]:
    """The first `count` tests of each op, in the given order."""
    kept, seen = [], {}
    for test in tests:
        op = op_of(test)
        seen[op] = seen.get(op, 0) + 1
        if seen[op] <= count:
            kept.append(test)
    return kept


def op_of(test_dir: Path) -> str:
    desc = json.loads((Path(test_dir) / "desc.json").read_text())
    return str((desc.get("test_details") or {}).get("operator", Path(test_dir).parent.name)).lower()


@dataclass
class Outcome:
    test: str
    op: str
    status: str
    detail: str = ""
    cmsis_calls: int = 0     # arm_* kernel calls in the compiled model


def expected_outputs(test_dir: Path, desc: dict, work: Path) -> list[np.ndarray] | None:
    """The reference model's outputs for the test's flatbuffer and inputs (None when it gives none)."""
    out_files = [str(work / f"expected-{i}.npy") for i in range(len(desc["ofm_name"]))]
    cmd = [_tool("tosa_reference_model"), f"--tosa_file={test_dir / desc['tosa_file']}", "--tosa_level=NONE",
           f"--ifm_name={','.join(desc['ifm_name'])}",
           f"--ifm_file={','.join(str(test_dir / f) for f in desc['ifm_file'])}",
           f"--ofm_name={','.join(desc['ofm_name'])}", f"--ofm_file={','.join(out_files)}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not all(os.path.exists(f) for f in out_files):
        return None
    return [np.load(f) for f in out_files]


def _runtime_library(work_root: Path, sanitize: bool) -> tuple[list[str], list[str]]:
    """Compiler flags and link inputs for the host harness; the runtime and kernels are compiled once."""
    from .firmware import build, sources
    root = sources.root()
    flags = ["-O1", "-g", "-std=gnu99", f"-I{root / 'include'}", f"-I{root / 'lib' / 'target'}"]
    if sanitize:
        flags += build.SANITIZE_FLAGS.split()
    library = work_root / ("libmcu-asan.a" if sanitize else "libmcu.a")
    link = [str(library), "-lm"]
    if sanitize:   # its settings: no leak report for the harness's buffers, reports exit with 86
        link.insert(0, str(root / "lib" / "target" / "sanitizer_options.c"))
    if not library.exists():
        objects = []
        for source in [root / "lib" / "runtime.c", *sorted((root / "lib" / "portable").glob("*.c")),
                       root / "lib" / "target" / "platform_host.c"]:
            obj = work_root / f"{source.stem}{'-asan' if sanitize else ''}.o"
            subprocess.run(["cc", *flags, "-c", str(source), "-o", str(obj)], check=True, capture_output=True)
            objects.append(str(obj))
        subprocess.run(["ar", "rcs", str(library), *objects], check=True, capture_output=True)
    return flags, link


def _build_host(outdir: Path, work_root: Path, sanitize: bool) -> Path:
    from .firmware import build, sources
    flags, link = _runtime_library(work_root, sanitize)
    if build.model_uses_cmsis_nn(outdir):   # CMSIS-NN's C paths, built once with its own CMakeLists
        cmsis = os.environ.get("CMSIS_NN_PATH")
        if not cmsis:
            raise UserError("the model calls CMSIS-NN: set CMSIS_NN_PATH")
        flags = [*flags, f"-I{Path(cmsis) / 'Include'}"]
        link = [*link[:-1], str(build.cmsis_nn_library(cmsis, "host", sanitize=sanitize)), link[-1]]
    executable = outdir / "harness"
    cmd = ["cc", *flags, f"-I{outdir}", str(outdir / "model.c"), str(sources.root() / "lib" / "target" / "harness.c"),
           "-o", str(executable), *link]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the generated C does not compile:\n{proc.stderr[-2000:]}")
    return executable


def _first_line(text: str) -> str:
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def run_test(test_dir: Path | str, work_root: Path | str, *, backend: str = "portable",
             sanitize: bool = False, target: str = "host") -> Outcome:
    """Compiles one positive test's flatbuffer, runs it (on the host, or a Cortex-M under QEMU)
    and compares with the reference."""
    from .driver import compile as compile_model
    from .firmware import run
    test_dir, work_root = Path(test_dir), Path(work_root)
    desc = json.loads((test_dir / "desc.json").read_text())
    name, op = test_dir.name, op_of(test_dir)
    work = work_root / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    expected = expected_outputs(test_dir, desc, work)
    if expected is None:
        return Outcome(name, op, "skipped", "tosa_reference_model gives no outputs")
    try:
        result = compile_model(str(test_dir / desc["tosa_file"]), None, target=target, backend=backend, emit="c",
                               output_dir=str(work / "out"))
    except UserError as err:
        return Outcome(name, op, "refused", _first_line(err.format()))
    except Exception as exc:  # noqa: BLE001 - a compiler bug is an outcome here, reported with its trace
        return Outcome(name, op, "crashed", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
    inputs = [np.load(test_dir / f) for f in desc["ifm_file"]]
    try:
        if cores.core(target).is_host:
            executable = _build_host(work / "out", work_root, sanitize)
            got = run.run_executable(executable, work / "out", inputs, target="host", timeout=300).outputs_q
        else:   # the firmware's own CMake build, run under QEMU
            got = run.run(work / "out", inputs, target=target, timeout=300).outputs_q
    except (UserError, RuntimeError) as err:
        return Outcome(name, op, "failed", _first_line(str(err)) + "\n" + str(err)[-1500:])
    for i, (g, want) in enumerate(zip(got, expected)):
        want = np.asarray(want)
        if g.shape != want.shape or not np.array_equal(g.astype(np.int64), want.astype(np.int64)):
            diff = int(np.count_nonzero(g.reshape(-1).astype(np.int64) != want.reshape(-1).astype(np.int64))) \
                if g.size == want.size else -1
            return Outcome(name, op, "wrong", f"output {i}: {diff} of {want.size} values differ")
    shutil.rmtree(work, ignore_errors=True)
    calls = sum(entry["kernel"].startswith("arm_") for entry in result.report.get("ops", []))
    return Outcome(name, op, "exact", cmsis_calls=calls)


def run_negative_test(test_dir: Path | str, work_root: Path | str) -> Outcome:
    """An ERROR_IF test: the compiler must reject the invalid program with a diagnostic."""
    from .driver import compile as compile_model
    test_dir = Path(test_dir)
    desc = json.loads((test_dir / "desc.json").read_text())
    name, op = test_dir.name, op_of(test_dir)
    try:
        compile_model(str(test_dir / desc["tosa_file"]), None, target="host", backend="portable", emit="c",
                      output_dir=str(Path(work_root) / name))
    except UserError as err:
        return Outcome(name, op, "rejected", _first_line(err.format()))
    except Exception as exc:  # noqa: BLE001 - a crash is no diagnostic
        return Outcome(name, op, "crashed", f"{type(exc).__name__}: {exc}")
    finally:
        shutil.rmtree(Path(work_root) / name, ignore_errors=True)
    return Outcome(name, op, "accepted", "the invalid program compiled")
