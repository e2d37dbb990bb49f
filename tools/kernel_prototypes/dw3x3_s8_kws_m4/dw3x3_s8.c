#include "dw3x3_s8.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define SXTB16(x) ((int32_t)__sxtb16(x))
static inline __attribute__((always_inline)) int32_t SXTB16_ROR8(int32_t x)
{
    int32_t r;
    __asm("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}
#define SMLABB(a, b, c) __smlabb((a), (b), (c))
#define SMLATT(a, b, c) __smlatt((a), (b), (c))
static inline __attribute__((always_inline)) int32_t SMMULR(int32_t a, int32_t b)
{
    int32_t r;
    __asm("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
static inline __attribute__((always_inline)) int32_t SMMLAR(int32_t a, int32_t b, int32_t c)
{
    int32_t r;
    __asm("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
#define SSAT8(x) __ssat((x), 8)
#else /* the same integers in portable C (host reference form) */
static inline int32_t SXTB16(int32_t x) { return (int32_t)(uint16_t)(int8_t)x | (int32_t)((uint32_t)(int8_t)(x >> 16) << 16); }
static inline int32_t SXTB16_ROR8(int32_t x) { return SXTB16((int32_t)(((uint32_t)x >> 8) | ((uint32_t)x << 24))); }
static inline int32_t SMLABB(int32_t a, int32_t b, int32_t c) { return c + (int16_t)a * (int16_t)b; }
static inline int32_t SMLATT(int32_t a, int32_t b, int32_t c) { return c + (a >> 16) * (b >> 16); }
static inline int32_t SMMULR(int32_t a, int32_t b) { return (int32_t)(((int64_t)a * b + 0x80000000LL) >> 32); }
static inline int32_t SMMLAR(int32_t a, int32_t b, int32_t c) { return (int32_t)(((int64_t)a * b + ((int64_t)c << 32) + 0x80000000LL) >> 32); }
static inline int32_t SSAT8(int32_t x) { return x < -128 ? -128 : x > 127 ? 127 : x; }
#endif

int dw3x3_prepare(dw3x3_tables *t, const int8_t *filter, const int32_t *bias, const int32_t *mult,
                  const int32_t *shift, int32_t input_offset, int32_t output_offset)
{
    for (int c = 0; c < DW_C; c++) {
        const int32_t e = -shift[c];
        if (e < 1 || e > 20) return -1;
        int64_t wabs = 0;
        for (int k = 0; k < 9; k++) wabs += filter[k * DW_C + c] < 0 ? -filter[k * DW_C + c] : filter[k * DW_C + c];
        for (int rc = 0; rc < 3; rc++)
            for (int cc = 0; cc < 3; cc++) {
                int64_t s = bias[c];
                for (int ky = 0; ky < 3; ky++)
        #pragma GCC unroll 3
            for (int kx = 0; kx < 3; kx++) {
                        if ((rc == 0 && ky == 0) || (rc == 2 && ky == 2) || (cc == 0 && kx == 0) || (cc == 2 && kx == 2))
                            continue;
                        s += (int64_t)input_offset * filter[(ky * 3 + kx) * DW_C + c];
                    }
                /* partial sums stay within bias' +- 128 * sum|w|; the final one equals CMSIS-NN's accumulator.
                 * SMMULR on the doubled accumulator is exact only when it does not overflow. */
                int64_t lim = (s < 0 ? -s : s) + 128 * wabs;
                int64_t b = bias[c] < 0 ? -(int64_t)bias[c] : bias[c];
                int64_t lim2 = b + (int64_t)(128 + (input_offset < 0 ? -input_offset : input_offset)) * wabs;
                if (2 * lim >= (1LL << 31) || 2 * lim2 >= (1LL << 31)) return -1;
                t->bias2[rc * 3 + cc][c] = (int32_t)(2 * s);
            }
        int64_t K = (1LL << (e - 1)) + (int64_t)output_offset * (1LL << e);
        if (K > INT32_MAX / 2 || K < INT32_MIN / 2) return -1;
#if DW_OUT_OFFSET_AT_ACT_MIN
        if (output_offset > DW_ACT_MIN) return -1;
#endif
        t->rq[c][0] = mult[c];
        t->rq[c][1] = (int32_t)K;
        t->rq[c][2] = e;
    }
    for (int g = 0; g < DW_G; g++)
        for (int k = 0; k < 9; k++) {
            const int8_t *f = filter + k * DW_C + 4 * g;
            t->wt[g][k][0] = (int32_t)((uint32_t)(uint16_t)(2 * f[0]) | ((uint32_t)(uint16_t)(2 * f[2]) << 16));
            t->wt[g][k][1] = (int32_t)((uint32_t)(uint16_t)(2 * f[1]) | ((uint32_t)(uint16_t)(2 * f[3]) << 16));
        }
    return 0;
}


#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* One tap for 4 channels, as one asm block so that GCC keeps the 4 accumulators in registers (left to
 * itself it groups the MACs by accumulator and spills the widened inputs). The input pointer is biased by
 * (DW_W + 1) * DW_C so that every offset is a non-negative LDR immediate. */
#define TAP(in, off, wt, k)                                                                                   \
    do {                                                                                                      \
        int32_t x_, t_, we_, wo_;                                                                             \
        __asm("ldr %[x], [%[p], #%c[io]]\n\t"                                                                   \
              "ldrd %[we], %[wo], [%[w], #%c[wof]]\n\t"                                                         \
              "sxtb16 %[t], %[x]\n\t"                                                                          \
              "sxtb16 %[x], %[x], ror #8\n\t"                                                                  \
              "smlabb %[a0], %[t], %[we], %[a0]\n\t"                                                           \
              "smlatt %[a2], %[t], %[we], %[a2]\n\t"                                                           \
              "smlabb %[a1], %[x], %[wo], %[a1]\n\t"                                                           \
              "smlatt %[a3], %[x], %[wo], %[a3]"                                                               \
              : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "=&r"(x_), [t] "=&r"(t_),     \
                [we] "=&r"(we_), [wo] "=&r"(wo_)                                                              \
              : [p] "r"(in - (DW_W + 1) * DW_C), [io] "n"((off) + (DW_W + 1) * DW_C), [w] "r"(wt),          \
                [wof] "n"((k) * 8));                                                                          \
    } while (0)
/* the 4 biases in 2 LDRD (left to itself GCC uses 4 LDR + 4 MOV to meet the TAP asm's register choice) */
#define BIAS4(a0, a1, a2, a3, b) \
    __asm("ldrd %0, %1, [%4]\n\tldrd %2, %3, [%4, #8]" : "=&r"(a0), "=&r"(a1), "=&r"(a2), "=r"(a3) : "r"(b) : "memory")
#else
#define BIAS4(a0, a1, a2, a3, b) ((a0) = (b)[0], (a1) = (b)[1], (a2) = (b)[2], (a3) = (b)[3])
#define TAP(in, off, wt, k)                                                                                   \
    do {                                                                                                      \
        const int32_t x = *(const int32_t *)((in) + (off));                                                  \
        const int32_t xe = SXTB16(x), xo = SXTB16_ROR8(x);                                                    \
        const int32_t we = (wt)[k][0], wo = (wt)[k][1];                                                       \
        a0 = SMLABB(xe, we, a0);                                                                              \
        a2 = SMLATT(xe, we, a2);                                                                              \
        a1 = SMLABB(xo, wo, a1);                                                                              \
        a3 = SMLATT(xo, wo, a3);                                                                              \
    } while (0)
#endif

static inline __attribute__((always_inline)) int8_t requant(int32_t acc2, const int32_t *rq)
{
#if DW_OUT_OFFSET_AT_ACT_MIN
    /* a negative x rounds to <= 0 either way and every such output clamps to DW_ACT_MIN, so the midpoint
     * fix-up of negative values can go, and K joins the multiply: SMMLAR = SMMULR + K exactly */
    int32_t x = SMMLAR(acc2, rq[0], rq[1]);
#else
    int32_t x = SMMULR(acc2, rq[0]); /* == arm_nn_doubling_high_mult_no_sat(acc, M) since acc2 = 2 * acc */
    x += x >> 31;                    /* rounding divide by 2^e, midpoint away from zero ... */
    x += rq[1];                      /* ... + 2^(e-1), and the output offset times 2^e */
#endif
    x >>= rq[2];
#if DW_ACT_MIN > -128
    if (x < DW_ACT_MIN - 0) x = DW_ACT_MIN;
#endif
#if DW_ACT_MAX < 127
    if (x > DW_ACT_MAX) x = DW_ACT_MAX;
#endif
    return (int8_t)SSAT8(x);
}

/* One output pixel; `rows`/`cols` are compile-time masks of the valid tap rows / columns (bit k = offset k-1). */
static inline __attribute__((always_inline)) void pixel(const dw3x3_tables *t, const int8_t *in, int8_t *out,
                                                        const int32_t *bias2, const unsigned rows, const unsigned cols)
{
    const int32_t(*wt)[2] = t->wt[0];
    const int32_t(*rq)[3] = t->rq;
    for (int g = 0; g < DW_G; g++) {
        int32_t a0, a1, a2, a3;
        BIAS4(a0, a1, a2, a3, bias2);
#pragma GCC unroll 3
        for (int ky = 0; ky < 3; ky++) {
            if (!(rows & (1u << ky))) continue;
#pragma GCC unroll 3
            for (int kx = 0; kx < 3; kx++) {
                if (!(cols & (1u << kx))) continue;
                TAP(in, ((ky - 1) * DW_W + (kx - 1)) * DW_C, wt, ky * 3 + kx);
            }
        }
        out[0] = requant(a0, rq[0]);
        out[1] = requant(a1, rq[1]);
        out[2] = requant(a2, rq[2]);
        out[3] = requant(a3, rq[3]);
        in += 4;
        out += 4;
        bias2 += 4;
        wt += 9;
        rq += 4;
    }
}

#define ROW(cls, rows)                                                                   \
    do {                                                                                 \
        pixel(t, in, out, t->bias2[(cls) * 3 + 0], (rows), 6u);                          \
        in += DW_C;                                                                      \
        out += DW_C;                                                                     \
        for (int w = 1; w < DW_W - 1; w++, in += DW_C, out += DW_C)                      \
            pixel(t, in, out, t->bias2[(cls) * 3 + 1], (rows), 7u);                      \
        pixel(t, in, out, t->bias2[(cls) * 3 + 2], (rows), 3u);                          \
        in += DW_C;                                                                      \
        out += DW_C;                                                                     \
    } while (0)

void dw3x3_run(const dw3x3_tables *t, const int8_t *input, int8_t *output)
{
    const int8_t *in = input;
    int8_t *out = output;
    ROW(0, 6u);
    for (int h = 1; h < DW_H - 1; h++)
        ROW(1, 7u);
    ROW(2, 3u);
}
