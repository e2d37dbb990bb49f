"""Fixed-point arithmetic shared by the quantized lowering and the C backend.

`quantize_multiplier` is TFLite's QuantizeMultiplier (what CMSIS-NN expects), expressed as a TOSA
RESCALE (multiplier, shift) pair: real ~= multiplier * 2**-shift.
"""

from __future__ import annotations

import math

TOSA_MIN_SHIFT, TOSA_MAX_SHIFT = 2, 62


def q31_frexp(real: float) -> tuple[int, int]:
    """(q_fixed, e) with real ~= q_fixed * 2**(e - 31), q_fixed in [2**30, 2**31): TFLite's
    frexp step (q rounded half away from zero), which every multiplier TFLite and CMSIS-NN
    compute starts from."""
    q, e = math.frexp(real)
    q_fixed = int(math.floor(q * (1 << 31) + 0.5))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        e += 1
    return q_fixed, e


def quantize_multiplier(real: float) -> tuple[int, int]:
    """(multiplier, shift) with multiplier in [2**30, 2**31) and real = multiplier * 2**-shift.

    TFLite: q, e = frexp(real); q_fixed = round(q * 2**31) (half away from zero); its left shift is
    e, so the TOSA right shift is 31 - e.
    """
    if real < 0:
        raise ValueError(f"negative scale {real}")
    if real == 0.0:
        # TOSA requires |value| < 2**(shift - 1) whatever the multiplier: the largest shift admits
        # every int32 (a zero gain: timm's GroupNorm zero-initialised at the end of a block).
        return 0, TOSA_MAX_SHIFT
    q_fixed, e = q31_frexp(real)
    shift = 31 - e
    if shift < TOSA_MIN_SHIFT:
        raise ValueError(f"scale {real} too large for a rescale")
    if shift > TOSA_MAX_SHIFT:
        # Tiny scales: drop mantissa bits so the shift stays representable (result rounds to 0 anyway).
        drop = shift - TOSA_MAX_SHIFT
        q_fixed = (q_fixed + (1 << (drop - 1))) >> drop
        shift = TOSA_MAX_SHIFT
    return q_fixed, shift


def quantize_multiplier_16(real: float) -> tuple[int, int]:
    """A 16-bit multiplier (TOSA RESCALE with scale32=false, e.g. int48 -> int16).

    The same reduction CMSIS-NN's arm_nn_requantize_s64 applies to the 32-bit multiplier.
    """
    m32, shift = quantize_multiplier(real)
    m16 = (m32 + (1 << 15)) >> 16
    shift -= 16
    if m16 >= 1 << 15:
        m16 >>= 1
        shift -= 1
    if shift < TOSA_MIN_SHIFT:
        raise ValueError(f"scale {real} too large for a 16-bit rescale")
    return m16, shift


def apply_rescale(value: int, multiplier: int, shift: int, double_round: bool = True) -> int:
    """TOSA 1.0 apply_scale_32 on one value (for tests and ahead-of-time folding)."""
    rounding = 1 << (shift - 1)
    if double_round and shift > 31:
        rounding += (1 << 30) if value >= 0 else -(1 << 30)
    return (value * multiplier + rounding) >> shift


def rescale_admits(bound: int, multiplier: int, shift: int, double_round: bool = True) -> bool:
    """Whether every value in [-bound, bound] meets apply_scale_32's REQUIREs: the value in
    [-2**(shift-1), 2**(shift-1)) and the scaled result in int32. Past them tosa_reference_model
    stops ('Graph result: UNPREDICTABLE') and kernels overflow: the integers mean nothing."""
    if bound >= 1 << (shift - 1):
        return False
    worst = max(abs(apply_rescale(v, multiplier, shift, double_round)) for v in (-bound, bound))
    return worst <= (1 << 31) - 1
