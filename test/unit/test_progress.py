"""Progress lines: a slow step says what it does and how long it took; a quick one prints nothing."""

import io
import time

from mcu_mlir import progress


def test_slow_step_prints_start_and_duration(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(progress, "DELAY", 0.05)
    progress.enable("mcu-compile", stream)
    try:
        with progress.step("calibrating on 32 samples"):
            time.sleep(0.3)
        with progress.step("a quick step"):
            pass
    finally:
        progress.disable()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "mcu-compile: calibrating on 32 samples ..."
    assert lines[1].startswith("mcu-compile: calibrating on 32 samples: done in ")
    assert len(lines) == 2


def test_api_use_prints_nothing(capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    progress.disable()
    with progress.step("exporting"):
        time.sleep(0.05)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_lines_follow_the_current_stderr(monkeypatch, capsys):
    """A tool's main run in-process (tests do) enables progress once: a later step prints to the
    sys.stderr of its own time, not to a stream that may have been closed since."""
    import sys
    monkeypatch.setattr(progress, "DELAY", 0.0)
    progress.enable("mcu-compile")
    try:
        old = io.StringIO()
        monkeypatch.setattr(sys, "stderr", old)
        old.close()
        now = io.StringIO()
        monkeypatch.setattr(sys, "stderr", now)
        with progress.step("calibrating"):
            time.sleep(0.05)
        assert "mcu-compile: calibrating" in now.getvalue()
    finally:
        progress.disable()
