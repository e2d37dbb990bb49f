#!/usr/bin/env python3
"""How many compiles have a REQUIRE mcu-verify-value-ranges cannot prove, per set: each model compiled
to TOSA (`--emit tosa`), report.json's `value_ranges` read (or the compile's error, which names the op).

    tools/value_range_census.py zoo ops coverage conformance     # every set, int8 and int16 where it applies
    tools/value_range_census.py ops --modes int16 --jsonl out.jsonl

Sets: zoo (every zoo model, int8 and int16, calibration 2), ops (test_frontend_ops' op cases, as the
test calibrates them), coverage (test_model_coverage's CI subset, through mcu-compile), conformance
(test_conformance's subset of tosa_verif_build_tests: TOSA files, which get a warning, not an error).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("python", "tools", "test/e2e"):
    sys.path.insert(0, str(ROOT / sub))


def _compiles(which: str, modes: list[str], tmp: Path):
    """(name, mode, thunk returning report.json's dict) per compile of the set."""
    from mcu_mlir import driver
    if which == "zoo":
        from mcu_mlir import zoo
        for n in sorted(zoo.MODELS):
            for q in modes:
                yield n, q, lambda n=n, q=q: driver.compile(*zoo.get(n), emit="tosa", quantize=q, calibration=2,
                                                            output_dir=str(tmp / f"{n}-{q}")).report
    elif which == "ops":
        import torch
        import test_frontend_ops as t
        for n in sorted(t.CASES):
            cls, shapes = t.CASES[n][:2]
            for q in modes:
                def run(cls=cls, shapes=shapes, q=q, n=n):
                    torch.manual_seed(0)
                    example = tuple(torch.randn(s) for s in shapes)
                    ranges = {"activation_ranges": "minmax"} if q == "int8" else {}
                    return driver.compile(cls().eval(), example, emit="tosa", quantize=q, calibration=8,
                                          output_dir=str(tmp / f"{n}-{q}"), **ranges).report
                yield n, q, run
    elif which == "coverage":
        import public_models
        import test_model_coverage as tm
        from mcu_mlir.tools import mcu_compile
        for n in tm.SUBSET + ["ta_deepspeech_small"]:
            shapes = [a for s in public_models.MODELS[n].input_shapes() for a in ("--input-shape", s)]

            def run(n=n, shapes=shapes):
                out = tmp / n
                if mcu_compile.main([f"{ROOT}/tools/public_models.py:{n}", *shapes, "--emit", "tosa", "-o", str(out)]):
                    raise RuntimeError("mcu-compile failed (its message above)")
                return json.loads((out / "report.json").read_text())
            yield n, "int8", run
    elif which == "conformance":
        from mcu_mlir import conformance
        import test_conformance as tc
        for t in conformance.first_per_op(conformance.generate(tmp / "tests", ops=tc.OPS), tc.PER_OP):
            tosa = t / json.loads((t / "desc.json").read_text())["tosa_file"]
            yield t.name, "tosa", lambda t=t, tosa=tosa: driver.compile(str(tosa), None, emit="tosa",
                                                                        output_dir=str(tmp / t.name)).report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sets", nargs="+", choices=("zoo", "ops", "coverage", "conformance"))
    p.add_argument("--modes", default="int8,int16", help="quantizations for zoo and ops (default: int8,int16)")
    p.add_argument("--jsonl", help="also write one line per compile here")
    args = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="value-range-census-"))
    totals = collections.defaultdict(collections.Counter)
    for which in args.sets:
        for name, mode, run in _compiles(which, args.modes.split(","), tmp):
            row = {"set": which, "name": name, "mode": mode}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    row["value_ranges"] = run()["value_ranges"]
                outcome = "proven" if row["value_ranges"]["proven"] else "unproven"
            except Exception as exc:  # noqa: BLE001 - an unproven REQUIRE stops a PyTorch compile
                row["error"] = f"{type(exc).__name__}: {exc}"
                outcome = "unproven" if "UNPREDICTABLE" in row["error"] else "failed"
            totals[which][outcome] += 1
            first = (row.get("value_ranges") or {}).get("unproven") or [{"message": row.get("error", "")}]
            print(f"{which:12} {name:40} {mode:6} {outcome:9} {first[0]['message'][:150] if outcome != 'proven' else ''}",
                  flush=True)
            if args.jsonl:
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps(row) + "\n")
    print("\n| set | compiles | proven | unproven | failed |\n|---|---|---|---|---|")
    for which, c in totals.items():
        print(f"| {which} | {sum(c.values())} | {c['proven']} | {c['unproven']} | {c['failed']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
