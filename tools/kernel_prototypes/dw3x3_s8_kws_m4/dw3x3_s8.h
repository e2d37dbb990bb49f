/* Depthwise 3x3 int8 kernel specialised for one layer shape (prototype for issue 38).
 * Layer: input 1xHxWxC int8 NHWC, filter 1x3x3xC, stride 1, SAME (pad 1 each side), ch_mult 1,
 * per-channel multiplier/shift (TFLite double rounding), input/output offset, activation clamp.
 * Bit-exact with arm_depthwise_conv_wrapper_s8 (CMSIS-NN, default double rounding). */
#ifndef DW3X3_S8_H
#define DW3X3_S8_H
#include <stdint.h>

#ifndef DW_H
#define DW_H 25
#endif
#ifndef DW_W
#define DW_W 5
#endif
#ifndef DW_C
#define DW_C 64
#endif
#ifndef DW_ACT_MIN
#define DW_ACT_MIN (-128)
#endif
#ifndef DW_ACT_MAX
#define DW_ACT_MAX 127
#endif
/* 1 when output_offset <= DW_ACT_MIN (a ReLU folded into the clamp, as in KWS): the rounding of negative
 * values then cannot matter, every one of them clamps to DW_ACT_MIN; saves one instruction per output */
#ifndef DW_OUT_OFFSET_AT_ACT_MIN
#define DW_OUT_OFFSET_AT_ACT_MIN 1
#endif
#define DW_G (DW_C / 4)
_Static_assert(DW_C % 4 == 0, "channels must be a multiple of 4");
/* the DSP form addresses the 9 taps as LDR immediates (0..4095) from the top-left tap */
_Static_assert(2 * (DW_W + 1) * DW_C <= 4095, "a row of the image too long for LDR immediates");
_Static_assert(DW_H >= 2 && DW_W >= 2, "borders on both sides assumed distinct");

/* Tables the compiler would emit as constants (here produced by dw3x3_prepare). */
typedef struct {
    /* weights doubled (the doubling of SaturatingRoundingDoublingHighMul) and widened to int16,
     * per group of 4 channels and tap: word 0 = (2w[c0], 2w[c2]), word 1 = (2w[c1], 2w[c3]) */
    int32_t wt[DW_G][9][2];
    /* 2 * (bias + input_offset * sum of the weights of the taps inside the image), per border class
     * (row class * 3 + column class; class 0 = first, 1 = interior, 2 = last) */
    int32_t bias2[9][DW_C];
    /* per channel: multiplier, rounding + output offset constant K = 2^(e-1) + out_off * 2^e, right shift e */
    int32_t rq[DW_C][3];
} dw3x3_tables;

/* returns 0, or -1 when the layer is outside what the kernel supports (shift >= 0, accumulator too big) */
int dw3x3_prepare(dw3x3_tables *t, const int8_t *filter, const int32_t *bias, const int32_t *mult,
                  const int32_t *shift, int32_t input_offset, int32_t output_offset);
void dw3x3_run(const dw3x3_tables *t, const int8_t *input, int8_t *output);
#endif
