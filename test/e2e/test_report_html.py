"""report.html (mcu-compile --report) rendered in headless Chromium: the page shows the memory bars,
one timeline bar per arena buffer with the peak marked, one table row per kernel call, and after
`mcu-run --count-instructions` the instruction counts; it loads nothing from anywhere."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import mcu_mlir  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (Debian package; tools/setup.sh installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.body = nn.Conv2d(8, 16, 3, padding=1)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        x = torch.relu(self.body(torch.relu(self.stem(x))))
        return self.head(x.mean((2, 3)))


class Strided(Net):
    """Net with one more strided conv: its first three convs run in bands (given the instructions)."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(16, 16, 3, stride=2, padding=1)

    def forward(self, x):
        x = torch.relu(self.body(torch.relu(self.stem(x))))
        return self.head(torch.relu(self.down(x)).mean((2, 3)))


def _chromium(tmp_path, page, *args) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120)


def _compile(out, target="host", net=Net, size=16, **options):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mcu_mlir.compile(net().eval(), (torch.randn(1, 3, size, size),), target=target, backend="portable",
                                calibration=4, emit="c", output_dir=str(out), report=True, ram_limit="64K", **options)


def test_report_page_renders_timeline_and_table(tmp_path):
    result = _compile(tmp_path / "out")
    page = tmp_path / "out" / "report.html"
    text = page.read_text()
    assert not re.search(r"""\b(src|href)\s*=|url\(|@import""", text)      # self-contained
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    dom = _chromium(tmp_path, page, "--dump-dom").stdout
    assert dom.count('<rect class="buffer') == len(report["buffers"]) > 0
    assert dom.count("<tr><td>") == len(report["ops"])
    assert "peak: " in dom and "of 64.0 kB" in dom
    shot = tmp_path / "page.png"
    proc = _chromium(tmp_path, page, "--window-size=1200,1200", f"--screenshot={shot}")
    assert shot.exists(), proc.stderr[-2000:]
    from PIL import Image
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    # The timeline's bars are drawn: many colours, and the peak line's red among them.
    assert len({tuple(p) for p in pixels.reshape(-1, 3)[::7]}) > 50
    assert ((np.abs(pixels.astype(int) - (217, 83, 79)).sum(-1)) < 30).sum() > 50
    assert result.report["arena_bytes"] <= 64 * 1024


def test_patched_stage_is_shaded(tmp_path):
    result = _compile(tmp_path / "out", net=Strided, size=32, prefer="memory", max_overhead=100)
    bands = result.report["patched_bands"]
    page = tmp_path / "out" / "report.html"
    dom = _chromium(tmp_path, page, "--dump-dom").stdout
    assert dom.count('<rect class="patched"') == 1 and f"patched stage ({bands} bands)" in dom
    assert dom.count(f" of {bands})</td>") >= 2 * bands  # each band's calls named in the table
    shot = tmp_path / "page.png"
    _chromium(tmp_path, page, "--window-size=1200,1200", f"--screenshot={shot}")
    from PIL import Image
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    assert ((np.abs(pixels.astype(int) - (227, 238, 251)).sum(-1)) < 8).sum() > 500  # the stage's shading


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
                    reason="needs qemu-system-arm and arm-none-eabi-gcc")
def test_counted_instructions_join_the_report(tmp_path):
    out = tmp_path / "m55"
    _compile(out, target="cortex-m55")
    inputs = tmp_path / "in.npz"
    np.savez(inputs, input0=np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32))
    proc = subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_run", str(out), "--inputs", str(inputs),
                           "--outputs", str(tmp_path / "o.npz"), "--target", "cortex-m55", "--count-instructions"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    counts = json.loads((out / "instructions.json").read_text())
    dom = _chromium(tmp_path, out / "report.html", "--dump-dom").stdout
    assert f"{counts['total']:,} instructions on cortex-m55" in dom
    first = next(layer for layer in counts["layers"] if layer["instructions"])
    assert f'<td class="num">{first["instructions"]:,}</td></tr>' in dom
