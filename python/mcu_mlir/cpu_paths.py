"""The float arithmetic of calibration on the same code on every x86-64 CPU.

torch picks its float kernels by the CPU: ATen's vectorised loops and reductions run AVX-512, AVX2
or baseline code; MKL's matrix products (also the im2col convolutions) take a code path per CPU
family, and on AMD CPUs another one than on Intel CPUs of the same instruction set; oneDNN blocks
its convolutions by ISA and cache size; reductions split by thread count. Their sums round apart in
the last bit, a calibrated range one ulp apart is a different scale, and the same model and data
would give different C on two machines (capping at AVX2 was not enough: an AMD EPYC still differed
from an Intel machine in 9 of the 11 zoo models).

So calibration runs code that does not depend on the CPU at all:
- ATen's baseline kernels (`ATEN_CPU_CAPABILITY=default`, the same SSE2 code on every x86-64 CPU),
- MKL's conditional numerical reproducibility in its COMPATIBLE mode (`MKL_CBWR=COMPATIBLE`, the
  one mode MKL documents as giving the same results on Intel and non-Intel processors),
- no oneDNN or NNPACK convolutions (their kernels are chosen by the CPU), and one thread
  (`reproducible()`, around the whole frontend).
The first two are read when torch starts: the command-line tools and the tests call `pin()` before
importing torch, replacing any other value in the environment; from Python, set them before
importing torch (or import mcu_mlir and call `pin()` first). `test/e2e/test_same_c_everywhere.py`
compiles under other CPU settings and compares the C byte for byte.
"""

from __future__ import annotations

import contextlib
import os
import sys

CAPS = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"}


def overridden() -> dict[str, str]:
    """The environment's values that `pin()` replaces (name -> the value that was set)."""
    return {k: os.environ[k] for k, v in CAPS.items() if k in os.environ and os.environ[k] != v}


def pin() -> bool:
    """Sets the caps unless torch is already loaded (too late: its kernels are chosen). Returns
    whether they are in effect."""
    if "torch" in sys.modules:
        return in_effect()
    os.environ.update(CAPS)
    return True


def in_effect() -> bool:
    """Whether this process's torch runs the pinned paths (the environment it started with)."""
    if any(os.environ.get(k) != v for k, v in CAPS.items()):
        return False
    backends = getattr(sys.modules.get("torch"), "backends", None)    # None until torch is loaded
    return backends is None or backends.cpu.get_cpu_capability() == "DEFAULT"


@contextlib.contextmanager
def reproducible():
    """One thread, and convolutions on ATen's own im2col + MKL path rather than oneDNN or NNPACK,
    for the float work whose results become quantization parameters."""
    import torch
    threads = torch.get_num_threads()
    mkldnn, nnpack = torch._C._get_mkldnn_enabled(), torch._C._get_nnpack_enabled()
    torch.set_num_threads(1)
    torch._C._set_mkldnn_enabled(False)
    torch._C._set_nnpack_enabled(False)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch._C._set_mkldnn_enabled(mkldnn)
        torch._C._set_nnpack_enabled(nnpack)
