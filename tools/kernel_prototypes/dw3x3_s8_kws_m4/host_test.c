/* Random tests of dw3x3_run against arm_depthwise_conv_wrapper_s8 (same CMSIS-NN sources). */
#include <stdio.h>
#ifdef DW3X3_SELFTEST /* linked into a firmware: no stdio, returns the number of failures */
#define printf(...) ((void)0)
#define MAIN int dw3x3_selftest(void)
#else
#define MAIN int main(void)
#endif
#include <stdlib.h>
#include <string.h>
#include "arm_nnfunctions.h"
#include "dw3x3_s8.h"

static uint32_t rng = 12345;
static uint32_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return rng; }
static int8_t in[DW_H * DW_W * DW_C] __attribute__((aligned(4)));
static int8_t ref[DW_H * DW_W * DW_C], got[DW_H * DW_W * DW_C];
static int8_t filt[9 * DW_C];
static int32_t bias[DW_C], mult[DW_C], shift[DW_C];
static dw3x3_tables tab;

#ifndef NTEST
#define NTEST 300
#endif

MAIN
{
    int fails = 0, skipped = 0, run = 0;
    for (int it = 0; it < NTEST; it++) {
        const int mode = it % 6;
        for (int i = 0; i < DW_H * DW_W * DW_C; i++)
            in[i] = mode == 1 ? -128 : mode == 2 ? 127 : mode == 3 ? ((rnd() & 1) ? 127 : -128) : (int8_t)rnd();
        for (int i = 0; i < 9 * DW_C; i++)
            filt[i] = mode == 4 ? ((rnd() & 1) ? 127 : -128) : mode == 5 ? -128 : (int8_t)rnd();
        for (int c = 0; c < DW_C; c++) {
            bias[c] = (int32_t)(rnd() % 200001) - 100000;
            mult[c] = (it % 3 == 0) ? (int32_t)(0x40000000u + rnd() % 0x40000000u) : (c & 1) ? 0x7fffffff : 0x40000000;
            shift[c] = -(int32_t)(1 + rnd() % 12);
        }
        const int32_t ioff = (int32_t)(rnd() % 256) - 127; /* -zero point: [-127, 128] */
        const int32_t ooff = (it & 1) ? DW_ACT_MIN : (int32_t)(rnd() % 256) - 128;
        if (dw3x3_prepare(&tab, filt, bias, mult, shift, ioff, ooff) != 0) { skipped++; continue; }
        cmsis_nn_context ctx = {NULL, 0};
        const cmsis_nn_dw_conv_params p = {.input_offset = ioff, .output_offset = ooff, .ch_mult = 1,
                                           .stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1},
                                           .activation = {DW_ACT_MIN, DW_ACT_MAX}};
        const cmsis_nn_per_channel_quant_params q = {mult, shift};
        const cmsis_nn_dims idim = {1, DW_H, DW_W, DW_C}, fdim = {1, 3, 3, DW_C}, bdim = {1, 1, 1, DW_C},
                            odim = {1, DW_H, DW_W, DW_C};
        if (arm_depthwise_conv_wrapper_s8(&ctx, &p, &q, &idim, in, &fdim, filt, &bdim, bias, &odim, ref) != ARM_CMSIS_NN_SUCCESS) {
            printf("cmsis-nn failed\n");
            return 2;
        }
        memset(got, 0x55, sizeof got);
        dw3x3_run(&tab, in, got);
        run++;
        if (memcmp(ref, got, sizeof ref)) {
            int n = 0;
            for (int i = 0; i < (int)sizeof ref; i++) n += ref[i] != got[i];
            printf("test %d (mode %d): %d mismatches\n", it, mode, n);
            fails++;
        }
    }
    printf("dw3x3 host test: %d run, %d bit-exact, %d skipped (outside kernel range)\n", run, run - fails, skipped);
#ifdef DW3X3_SELFTEST
    return fails + (run == 0);
#else
    return fails != 0;
#endif
}
