"""The target's memory as a constraint: --ram-limit / --flash-limit (default: the target board's RAM
and flash). A model over either fails with exit 1 and a message that names the peak layer (its source
line) and how many bytes over; no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")

MODEL = '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.body = nn.Conv2d(16, 16, 3, padding=1)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = torch.relu(self.body(x))
        return self.head(x.mean((2, 3)))


def make():
    torch.manual_seed(0)
    return Net().eval()
'''


def _compile(tmp_path, *extra):
    src = tmp_path / "net.py"
    src.write_text(MODEL)
    return subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_compile", f"{src}:make", "--input-shape",
                           "1,3,24,24", "--backend", "portable", "--calibration", "2", "-o", str(tmp_path / "out"),
                           *extra], capture_output=True, text=True)


def test_over_the_ram_limit_names_the_peak_layer(tmp_path):
    proc = _compile(tmp_path, "--ram-limit", "8K")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "bytes over the RAM limit (ram-bytes=8192" in proc.stderr
    assert "the peak is at layer '" in proc.stderr
    assert "net.py:1" in proc.stderr         # the peak layer's source line in the model's file


def test_within_the_ram_limit(tmp_path):
    proc = _compile(tmp_path, "--ram-limit", "1M")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["arena_bytes"] <= 1 << 20


def test_over_the_flash_limit_names_the_largest_weights(tmp_path):
    proc = _compile(tmp_path, "--flash-limit", "1000")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "bytes over the flash limit (1000 bytes)" in proc.stderr and "the largest: '" in proc.stderr


@pytest.mark.parametrize("value", ["12X", "-5", "K"])
def test_bad_limit_is_a_clear_error(tmp_path, value):
    proc = _compile(tmp_path, f"--ram-limit={value}")
    assert proc.returncode == 1 and ("expected a byte count" in proc.stderr or "positive" in proc.stderr), proc.stderr
