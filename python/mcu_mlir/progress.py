"""Progress lines for slow steps, printed by the command-line tools (the Python API stays silent).

    with progress.step("calibrating on 32 samples"):
        ...

A step that is still running after DELAY seconds prints `mcu-compile: calibrating on 32 samples ...`
and, when it ends, how long it took; quick steps print nothing.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

DELAY = 2.0
_sink = None   # (tool name, stream or None: sys.stderr when printing) once a tool enables progress lines


def enable(tool: str, stream=None) -> None:
    """stream None: whatever sys.stderr is when a line is printed (a tool's main run in-process, as
    tests do, must not keep writing to the stream of the run that enabled it)."""
    global _sink
    _sink = (tool, stream)


def disable() -> None:
    global _sink
    _sink = None


@contextlib.contextmanager
def step(what: str):
    if _sink is None:
        yield
        return
    tool, fixed = _sink
    started = time.perf_counter()
    shown = threading.Event()

    def show():
        shown.set()
        print(f"{tool}: {what} ...", file=fixed or sys.stderr, flush=True)

    timer = threading.Timer(DELAY, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if shown.is_set():
            print(f"{tool}: {what}: done in {time.perf_counter() - started:.1f} s", file=fixed or sys.stderr,
                  flush=True)
