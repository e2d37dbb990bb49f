"""The printed form of a dense constant (`dense<...>`), as MLIR prints it: what the TOSA builder
keys shared constants by (equal text, one constant)."""

from __future__ import annotations


import numpy as np

from ...ir.types import NUMPY

_NP = NUMPY


def dense_text(arr: np.ndarray, elem: str) -> str:
    arr = np.asarray(arr)
    flat = arr.reshape(-1)
    if flat.size and (flat == flat[0]).all():
        v = flat[0]
        return f"dense<{_scalar(v, elem)}>"
    if elem == "i48" or flat.size <= 16:
        return "dense<[" + ", ".join(_scalar(v, elem) for v in flat) + "]>" if arr.ndim <= 1 else \
            f"dense<{_nested(arr, elem)}>"
    data = np.ascontiguousarray(arr.astype(_NP[elem]).astype(np.dtype(_NP[elem]).newbyteorder("<")))
    return f'dense<"0x{data.tobytes().hex().upper()}">'


def _nested(arr, elem):
    if arr.ndim == 0:
        return _scalar(arr.item(), elem)
    return "[" + ", ".join(_nested(a, elem) for a in arr) + "]"


def _scalar(v, elem: str) -> str:
    if elem.startswith("f"):
        f = float(v)
        if np.isfinite(f):
            return repr(f) if "e" in repr(f) or "." in repr(f) else f"{f}.0"
        return "0x" + np.float32(f).view(np.uint32).tobytes()[::-1].hex().upper()
    if elem == "i1":
        return "true" if v else "false"
    return str(int(v))
