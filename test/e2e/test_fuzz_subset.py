"""CI subset of the differential fuzzer (tools/fuzz/fuzz.py): a fixed selection of small random models
that together exercise every form of the grammar (grammar.covering_seeds: issue 35's F.pad before a
1x1 / depthwise 3x3 conv and the one-step LSTM first), each compiled int8 and, in turn, int16, with
--int16-layers auto, with --prefer memory, with --weights int4 or with --int4-layers auto, on both backends, the C on the host against
tosa_reference_model on the same integers (the first model's C built with ASan / UBSan). No run may be
wrong, crash, leave the reference model UNPREDICTABLE or trip a sanitizer, and every refusal names
the op's line in the model's source. A failure's message holds its minimised reproducer."""

from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

pytest.importorskip("torch")
if shutil.which("tosa_reference_model") is None and not os.path.exists(
        os.path.join(os.path.dirname(sys.executable), "tosa_reference_model")):
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)
if shutil.which("cmake") is None:
    pytest.skip("cmake is needed to build the C on the host", allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "fuzz"))
import fuzz  # noqa: E402
import grammar  # noqa: E402

BACKENDS = ["portable"] + (["cmsis-nn"] if os.environ.get("CMSIS_NN_PATH") else [])
# What a refusal must say: the model file's line, and which op (the source line's layer or an op name).
_LOCATION = re.compile(r"model_\d+\.py:\d+")


def test_fuzz_subset(tmp_path):
    seeds = grammar.covering_seeds()
    result = fuzz.fuzz(seed=0, count=0, modes=list(fuzz.MODES), backends=BACKENDS, jobs=2, sanitize=True,
                       sanitize_every=len(seeds), minimise_budget=16, workdir=str(tmp_path), model_seeds=seeds,
                       rotate_modes=True)
    print(result["table"])
    runs = result["runs"]
    assert len(runs) == len(seeds) * 2 * len(BACKENDS)
    assert {r["mode"] for r in runs} == set(fuzz.MODES)
    bad = [f for f in result["failures"]]
    assert not bad, "\n\n".join(f"{f['class']} in {f['mode']} / {f['backend']}: {f['message']}\n{f['reproducer']}"
                                for f in bad)
    counts = {c: sum(1 for r in runs if r["class"] == c) for c in fuzz.CLASSES}
    assert counts["wrong"] == counts["crash"] == counts["unpredictable"] == counts["sanitizer"] == 0, counts
    assert counts["refusal-noloc"] == counts["timeout"] == 0, counts
    for r in runs:
        if r["class"] == "refusal":
            assert _LOCATION.search(r["message"]) and re.search(r"op '[\w.]+'", r["message"]), r
    # Most of the subset must really run: a compiler that refused everything would pass the rest.
    assert counts["exact"] >= 0.75 * len(runs), counts
