"""The float arithmetic of calibration on the same code paths on every x86 CPU.

torch picks its float kernels by the CPU's instruction set: MKL's matrix products, oneDNN's
convolutions and ATen's vectorised reductions run AVX-512 code on one machine and AVX2 code on the
next, and their sums round differently in the last bit. A calibrated range one ulp apart is a
different scale, and the same model and calibration data would give different C on two machines.
Capped at AVX2 (which every x86-64 CPU of the last decade has), they take the same instruction
set everywhere; MKL's conditional numerical reproducibility mode promises the same results, and
for oneDNN and ATen the cap removes the difference measured between an AVX-512 and an AVX2 machine
(oneDNN may still block a convolution by cache size). The caps are read when torch starts:
the command-line tools set them before importing it; a Python user who wants the same C on every
machine sets them in the environment. A value already set is left as it is.
"""

from __future__ import annotations

import os
import sys

CAPS = {"MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}


def pin() -> bool:
    """Sets the caps unless torch is already loaded (too late: its kernels are chosen). Returns
    whether they are in effect."""
    if "torch" in sys.modules:
        return all(os.environ.get(k) == v for k, v in CAPS.items())
    for key, value in CAPS.items():
        os.environ.setdefault(key, value)
    return True
