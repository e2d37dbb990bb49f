/* arm_softmax_s8's integers (mcu_mlir/cmsis_softmax.py) from the frontend's two 256-entry tables:
   the exponential of max - x and its share of the row sum are looked up, not computed, so each
   element costs two loads and one multiply (see mcu/portable.h). */
#include "portable_internal.h"

/* The doubling high multiply on non-negative operands (TOSA MUL with shift 31). */
static inline int32_t mul31(int32_t a, int32_t b) { return mcu_tosa_mul_i32(a, b, 31); }

/* 1 / (1 + val / 2^31) in Q1.30 by the kernel's Newton steps (arm_nn_one_over_one_plus_x_for_x_in_0_1),
   saturated to INT32_MAX when it reaches 2^31 as arm_nn_mult_by_power_of_two does. */
static int32_t reciprocal(int32_t val) {
  const int32_t half = (val >> 1) + (1 << 30);
  int32_t r = 1515870810 - mul31(half, 1010580540);
  for (int i = 0; i < 3; ++i) {
    const int32_t u = (1 << 29) - mul31(half, r);
    int32_t step = mul31(r, u < 0 ? -u : u);
    if (u < 0) step = -step;
    r += step * 4;
  }
  const int32_t capped = r < (1 << 30) - 1 ? r : (1 << 30) - 1;
  return capped * 2 + (r > capped);
}

int mcu_softmax_s8(int32_t rows, int32_t row_size, const int32_t *exp_table, const int32_t *sum_table,
                   const int8_t *input, int8_t *output) {
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t *x = input + r * row_size;
    int8_t *y = output + r * row_size;
    int32_t max = x[0];
    for (int32_t i = 1; i < row_size; ++i)
      if (x[i] > max) max = x[i];
    int32_t total = 0;
    for (int32_t i = 0; i < row_size; ++i) total = mcu_wrap_add(total, sum_table[max - x[i]]);
    if (total <= 0) return MCU_STATUS_BAD_ARGUMENT;
    const int32_t headroom = mcu_clz32((uint32_t)total);
    const int32_t bits = 35 - headroom;
    const int32_t scale = reciprocal((int32_t)(((uint32_t)total << headroom) & 0x7FFFFFFFu));
    for (int32_t i = 0; i < row_size; ++i) {
      const int32_t v = mcu_tosa_shift_round(mul31(exp_table[max - x[i]], scale), bits) - 128;
      y[i] = (int8_t)mcu_clip(v, -128, 127);
    }
  }
  return MCU_STATUS_OK;
}

int mcu_softmax_s16(int32_t rows, int32_t row_size, const int16_t *exp_table, const int16_t *input,
                    int16_t *output) {
  for (int32_t r = 0; r < rows; ++r) {
    const int16_t *x = input + r * row_size;
    int16_t *y = output + r * row_size;
    int32_t max = x[0];
    for (int32_t i = 1; i < row_size; ++i)
      if (x[i] > max) max = x[i];
    int32_t total = 0;
    for (int32_t i = 0; i < row_size; ++i)
      total = mcu_wrap_add(total, mcu_tosa_table_s16(exp_table, (int32_t)(int16_t)(max - x[i] - 32768)));
    const int32_t den = total >> 7, half = den >> 1;
    if (den <= 0) return MCU_STATUS_BAD_ARGUMENT;
    for (int32_t i = 0; i < row_size; ++i) {
      const int32_t e = mcu_tosa_table_s16(exp_table, (int32_t)(int16_t)(max - x[i] - 32768));
      y[i] = (int16_t)mcu_clip((e * 256 + half) / den, -32768, 32767);
    }
  }
  return MCU_STATUS_OK;
}

/* One interpolated lookup as arm_softmax_s16 does it (TOSA's int16 TABLE, then a rounded >> 7). */
static inline int32_t lut_s16(const int16_t *table, int32_t v) {
  const int32_t index = 256 + (v >> 7), offset = v & 0x7f;
  const int32_t base = table[index];
  return base + (int16_t)(((int16_t)(table[index + 1] - base) * offset + 64) >> 7);
}

int mcu_softmax_s16_lut(int32_t rows, int32_t row_size, int32_t mult, int32_t shift, const int16_t *exp_lut,
                        const int16_t *one_by_one_lut, const int16_t *input, int16_t *output) {
  const int32_t left = shift > 0 ? shift : 0, right = shift < 0 ? -shift : 0;
  for (int32_t r = 0; r < rows; ++r) {
    const int16_t *x = input + r * row_size;
    int16_t *y = output + r * row_size;
    int32_t max = x[0];
    for (int32_t i = 1; i < row_size; ++i)
      if (x[i] > max) max = x[i];
    int32_t total = 0;
    for (int32_t i = 0; i < row_size; ++i) {
      /* The differences are <= 0: rounding half away from zero is the negated half-up shift. */
      const int32_t scaled = -mcu_tosa_shift_round(-mcu_tosa_mul_i32((x[i] - max) * (1 << left), mult, 31), right);
      const int32_t sym = scaled + 32767 < -32768 ? -32768 : scaled + 32767;
      y[i] = (int16_t)lut_s16(exp_lut, sym);
      total += y[i];
    }
    if (total < 2) return MCU_STATUS_BAD_ARGUMENT;
    const int32_t headroom = mcu_clz32((uint32_t)total);
    const int32_t shifted = mcu_tosa_shift_round((int32_t)((uint32_t)total << (headroom - 1)), 14);
    const int32_t one_by_one = lut_s16(one_by_one_lut, (int16_t)(shifted - 98304));
    for (int32_t i = 0; i < row_size; ++i)
      y[i] = (int16_t)((((y[i] * one_by_one) >> (30 - headroom)) + 1) >> 1);
  }
  return MCU_STATUS_OK;
}
