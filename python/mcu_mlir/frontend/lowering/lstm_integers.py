"""The integer pieces of CMSIS-NN's LSTM step as TOSA, shared by the PyTorch and the `.tflite`
frontends (lowering/recurrent.py, tflite/lstm.py): no torch here."""

from __future__ import annotations

import numpy as np

from ...fixed_point import cmsis_lstm


def shared_const(self, arr: np.ndarray, elem: str):
    """One constant per distinct array: every step of a layer reads the same weights and tables."""
    cache = self.__dict__.setdefault("_lstm_consts", {})
    key = (elem, arr.shape, arr.tobytes())
    if key not in cache:
        cache[key] = self.w.const(arr, elem)
    return cache[key]


def activation_lut(self, v, left_shift: int, kind: str):
    """arm_nn_activation_s16 of an int16 value, as a gather from its table of every input."""
    w = self.w
    n = int(np.prod(v.shape, dtype=np.int64))
    wide = w.cast(v, "i32")
    index = w.add(wide, w.scalar(32768, len(v.shape)))
    table = shared_const(self, cmsis_lstm.activation_table(left_shift, kind).reshape(1, -1, 1), "i16")
    out = w.gather(table, w.reshape(index, (1, n)))
    return w.reshape(out, v.shape)


# |a * b| of two int16 values.
PRODUCT_BOUND = 1 << 30


def saturate16(w, v, bound: int):
    """int32 -> int16, saturating (an identity rescale: TOSA clamps no int32)."""
    return w.rescale(v, [1 << 30], [30], 0, 0, "i16", bound=bound)


def product16(w, a, b):
    """a * b of two int16 values, in int32 (|a * b| <= PRODUCT_BOUND)."""
    wide = [w.cast(v, "i32") for v in (a, b)]
    return w.mul(wide[0], wide[1])
