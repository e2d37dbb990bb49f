/* The frontend's integer log_softmax as one pass per column (see mcu/portable.h). */
#include "portable_internal.h"

/* TOSA MUL on int32: int64 product, rounded right shift when shift > 0, int32 result. */
static inline int32_t tosa_mul_i32(int32_t a, int32_t b, int32_t shift) {
  int64_t product = (int64_t)a * b;
  if (shift > 0) product = (product + ((int64_t)1 << (shift - 1))) >> shift;
  return (int32_t)product;
}

static inline int32_t clz32(int32_t v) {
  uint32_t u = (uint32_t)v;
  int32_t n = 0;
  if (u == 0) return 32;
  while (!(u & 0x80000000u)) {
    u <<= 1;
    ++n;
  }
  return n;
}

/* Two's complement wrap without signed overflow (TOSA forbids the overflow anyway). */
static inline int32_t wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline int32_t wrap_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

/* The input element: int8 (the cast to int32 before it absorbed) or int32. */
static inline int32_t input_at(const mcu_log_softmax_params_t *p, const void *input, int32_t i) {
  return p->input_s8 ? ((const int8_t *)input)[i] : ((const int32_t *)input)[i];
}

int mcu_log_softmax_s8(const mcu_log_softmax_params_t *p, const int32_t *exp_table,
                       const int32_t *log_table, const void *input, int8_t *output) {
  const int32_t stride = p->inner;
  for (int32_t o = 0; o < p->outer; ++o)
    for (int32_t i = 0; i < p->inner; ++i) {
      const int32_t first = o * p->axis * stride + i;
      int8_t *y = output + first;
      int32_t max = input_at(p, input, first);
      for (int32_t k = 1; k < p->axis; ++k) {
        const int32_t v = input_at(p, input, first + k * stride);
        if (v > max) max = v;
      }
      int32_t sum = 0;
      for (int32_t k = 0; k < p->axis; ++k) {
        const int32_t d = wrap_sub(max, input_at(p, input, first + k * stride));
        if (d < 0 || d >= p->table_size) return MCU_STATUS_BAD_ARGUMENT;
        sum = wrap_add(sum, exp_table[d]);
      }
      const int32_t z = clz32(sum);
      const int32_t amount = wrap_sub(p->norm_bits, z);
      if (amount < 0 || amount > 31) return MCU_STATUS_BAD_ARGUMENT;
      const int32_t index = (int32_t)((uint32_t)sum >> amount) & p->norm_mask;
      if (index < 0 || index >= p->table_size) return MCU_STATUS_BAD_ARGUMENT;
      const int32_t log_sum = wrap_add(tosa_mul_i32(wrap_sub(p->exp_bits, z), p->exp_mul, p->exp_shift),
                                       log_table[index]);
      for (int32_t k = 0; k < p->axis; ++k) {
        const int32_t d = wrap_sub(max, input_at(p, input, first + k * stride));
        const int32_t v = wrap_sub(wrap_add(tosa_mul_i32(d, p->diff_mul, p->diff_shift), log_sum), p->bias);
        const int32_t r = wrap_sub(p->base, v) >> p->out_shift;
        const int64_t q = (int64_t)mcu_tosa_apply_scale_32(r, p->multiplier, p->shift, p->double_round) +
                          p->output_zp;
        y[k * stride] = (int8_t)mcu_clip(q, -128, 127);
      }
    }
  return MCU_STATUS_OK;
}
