/* The frontend's integer LayerNorm / RMSNorm / GroupNorm in three passes per group (see
   mcu/portable.h): the sum, the sum of squares, then the normalised, rescaled output. One loop
   body per input / output type pair, so the element loops do not dispatch on types. */
#include "portable_internal.h"

static inline int32_t deviation(const mcu_norm_params_t *p, int32_t x, int32_t sum) {
  const int32_t d = p->centre ? mcu_wrap_sub((int32_t)((int64_t)x * p->count), sum) : mcu_wrap_sub(x, p->input_zp);
  return mcu_tosa_shift_round(d, p->s0);
}

/* 1 / sqrt(var) as TOSA computes it: the table at var's mantissa, and the shift that goes with it. */
static inline int32_t rsqrt_of(const int16_t *table, int32_t var, int32_t *amount) {
  const int32_t e = (17 - mcu_clz32((uint32_t)var)) & -2;
  const int32_t up = -e > 0 ? -e : 0, down = e > 0 ? e : 0;
  const int32_t m = (int32_t)((uint32_t)var << up) >> down;
  *amount = (e >> 1) + 7;
  return mcu_tosa_table_s16(table, (int32_t)(int16_t)(m - 32768));
}

#define NORM_LOOPS(IN_T, OUT_T)                                                                          \
  do {                                                                                                   \
    const IN_T *x = (const IN_T *)input;                                                                 \
    OUT_T *y = (OUT_T *)output;                                                                          \
    for (int32_t b = 0; b < p->batch; ++b)                                                               \
      for (int32_t g = 0; g < groups; ++g) {                                                             \
        /* Element (s, k) of this group is at ((b * spatial + s) * groups + g) * size + k. */            \
        const int32_t first = (b * p->spatial * groups + g) * size;                                      \
        int32_t sum = 0, var = 0, amount;                                                                \
        if (p->centre)                                                                                   \
          for (int32_t s = 0; s < p->spatial; ++s) {                                                     \
            const IN_T *row = x + first + s * channels;                                                  \
            for (int32_t k = 0; k < size; ++k) sum = mcu_wrap_add(sum, row[k]);                          \
          }                                                                                              \
        for (int32_t s = 0; s < p->spatial; ++s) {                                                       \
          const IN_T *row = x + first + s * channels;                                                    \
          for (int32_t k = 0; k < size; ++k) {                                                           \
            const int32_t d = deviation(p, row[k], sum);                                                 \
            var = mcu_wrap_add(var, mcu_tosa_mul_i32(d, d, p->s1));                                      \
          }                                                                                              \
        }                                                                                                \
        const int32_t rsqrt = rsqrt_of(rsqrt_table, mcu_wrap_add(var, p->eps), &amount);                 \
        for (int32_t s = 0; s < p->spatial; ++s) {                                                       \
          const IN_T *row = x + first + s * channels;                                                    \
          OUT_T *out = y + first + s * channels;                                                         \
          const int32_t c0 = g * size;                                                                   \
          for (int32_t k = 0; k < size; ++k) {                                                           \
            const int32_t c = c0 + k;                                                                    \
            const int32_t z = mcu_tosa_shift_round(mcu_tosa_mul_i32(deviation(p, row[k], sum), rsqrt, 7), amount) * sign[c]; \
            const int32_t v = mcu_wrap_add(mcu_tosa_apply_scale_32(z, mult[c], shift[c], p->double_round), offset[c]); \
            const int64_t q = (int64_t)mcu_tosa_apply_scale_32(v, p->output_multiplier, p->output_shift,        \
                                                               p->output_double_round) + p->output_zp;         \
            out[k] = (OUT_T)mcu_clip(q, lo, hi);                                                         \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
  } while (0)

int mcu_norm(const mcu_norm_params_t *p, const int16_t *rsqrt_table, const int32_t *channel_params,
             const void *input, void *output) {
  const int32_t groups = p->groups, size = p->group_size, channels = groups * size;
  const int32_t *mult = channel_params, *shift = channel_params + channels;
  const int32_t *offset = channel_params + 2 * channels, *sign = channel_params + 3 * channels;
  const int64_t lo = mcu_clip(p->act_min, mcu_type_min(p->output_type), mcu_type_max(p->output_type));
  const int64_t hi = mcu_clip(p->act_max, mcu_type_min(p->output_type), mcu_type_max(p->output_type));
  if (p->s0 < 0 || p->s0 > 31 || p->s1 < 0 || p->s1 > 63) return MCU_STATUS_BAD_ARGUMENT;
  if (p->output_type == MCU_I8) {
    if (p->input_type == MCU_I8) NORM_LOOPS(int8_t, int8_t);
    else if (p->input_type == MCU_I16) NORM_LOOPS(int16_t, int8_t);
    else if (p->input_type == MCU_I32) NORM_LOOPS(int32_t, int8_t);
    else return MCU_STATUS_BAD_ARGUMENT;
  } else if (p->output_type == MCU_I16) {
    if (p->input_type == MCU_I8) NORM_LOOPS(int8_t, int16_t);
    else if (p->input_type == MCU_I16) NORM_LOOPS(int16_t, int16_t);
    else if (p->input_type == MCU_I32) NORM_LOOPS(int32_t, int16_t);
    else return MCU_STATUS_BAD_ARGUMENT;
  } else {
    return MCU_STATUS_BAD_ARGUMENT;
  }
  return MCU_STATUS_OK;
}
