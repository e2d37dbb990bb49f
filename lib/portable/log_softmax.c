/* The frontend's integer log_softmax as one pass per column (see mcu/portable.h). */
#include "portable_internal.h"

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
        const int32_t d = mcu_wrap_sub(max, input_at(p, input, first + k * stride));
        if (d < 0 || d >= p->table_size) return MCU_STATUS_BAD_ARGUMENT;
        sum = mcu_wrap_add(sum, exp_table[d]);
      }
      const int32_t z = mcu_clz32((uint32_t)sum);
      const int32_t amount = mcu_wrap_sub(p->norm_bits, z);
      if (amount < 0 || amount > 31) return MCU_STATUS_BAD_ARGUMENT;
      const int32_t index = (int32_t)((uint32_t)sum >> amount) & p->norm_mask;
      if (index < 0 || index >= p->table_size) return MCU_STATUS_BAD_ARGUMENT;
      const int32_t log_sum =
          mcu_wrap_add(mcu_tosa_mul_i32(mcu_wrap_sub(p->exp_bits, z), p->exp_mul, p->exp_shift), log_table[index]);
      for (int32_t k = 0; k < p->axis; ++k) {
        const int32_t d = mcu_wrap_sub(max, input_at(p, input, first + k * stride));
        const int32_t v =
            mcu_wrap_sub(mcu_wrap_add(mcu_tosa_mul_i32(d, p->diff_mul, p->diff_shift), log_sum), p->bias);
        const int32_t r = mcu_wrap_sub(p->base, v) >> p->out_shift;
        const int64_t q = (int64_t)mcu_tosa_apply_scale_32(r, p->multiplier, p->shift, p->double_round) +
                          p->output_zp;
        y[k * stride] = (int8_t)mcu_clip(q, -128, 127);
      }
    }
  return MCU_STATUS_OK;
}
