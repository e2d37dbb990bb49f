"""The benchmark runs in its quick mode, so it cannot rot: every figure is printed and consistent."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_quick_benchmark_prints_every_figure(tmp_path):
    out = tmp_path / "rows.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "benchmark.py"), "--quick",
                           "--backend", "portable", "--targets", "cortex-m55", "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "mcu-opt start-up on a small file" in proc.stdout
    assert "arena/LB" in proc.stdout and "vs ExecuTorch" in proc.stdout
    rows = json.loads(out.read_text())
    assert [r["model"] for r in rows] == ["ds_cnn", "autoencoder"]
    for r in rows:
        assert r["overlap_bound"] <= r["arena"], r        # no plan beats the overlap-aware bound
        assert r["overlap_bound"] <= r["lower_bound"], r
        assert r["arena"] <= 1.05 * r["lower_bound"], r   # issue 6's target, on the classic bound
        assert r["arena_memory"] <= r["arena"], r         # memory first never plans a larger arena
        assert r["weights"] >= r["param_int8"] * 0.99, r  # every parameter is in flash
        assert r["flash"] > r["weights"], r
        assert r["cortex-m55_instructions"] > 0, r
        assert 0.0 <= r["cortex-m55_outside_share"] < 1.0, r
        assert r["transposes"] == 0, r
        assert r["calls"] == r["cmsis_calls"] + r["portable_calls"]
