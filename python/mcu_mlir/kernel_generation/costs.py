"""Cost entries: instructions a kernel is estimated to take on a core family, for the choice
between a generated kernel and the CMSIS-NN call it would replace (passes/transforms/
choose_generated_kernels.py). Fitted to QEMU counts (`mcu-run --count-instructions`); a generated
kernel is chosen only where its estimate is below the library call's.
"""

from __future__ import annotations

# CMSIS-NN (commit 99f736a) depthwise int8 on the DSP path, per multiply-accumulate of the window taps
# inside the image: arm_depthwise_conv_3x3_s8 on KWS layer 1 (25x5x64, SAME): 599,644 instructions for
# 60,736 MACs inside the image (9.87); arm_depthwise_conv_s8_opt (the strides and paddings the 3x3 kernel
# does not take) is not cheaper.
CMSIS_DEPTHWISE_DSP_PER_MAC = 9.87


def cmsis_depthwise_dsp(pixels_by_taps, channels: int) -> float:
    return CMSIS_DEPTHWISE_DSP_PER_MAC * channels * sum(pixels * taps for pixels, taps in pixels_by_taps)


# dw3x3_s8 (generated) per output pixel and group of 4 channels: 8 per tap (LDR, LDRD, 2 SXTB16,
# 4 SMLAxy), 2 LDRD of biases, 4 x 6 to requantise and store (7 with the negative rounding fix-up),
# ~8 of loop and pointers. KWS layer 1: 189,580 measured (the prototype), 189,472 estimated.
DW3X3_PER_TAP = 8
DW3X3_PER_GROUP = 34
DW3X3_FIXUP_PER_GROUP = 4


def dw3x3_s8_dsp(pixels_by_taps, channels: int, fold: bool) -> float:
    per_group = DW3X3_PER_GROUP + (0 if fold else DW3X3_FIXUP_PER_GROUP)
    return (channels // 4) * sum(pixels * (DW3X3_PER_TAP * taps + per_group) for pixels, taps in pixels_by_taps)
