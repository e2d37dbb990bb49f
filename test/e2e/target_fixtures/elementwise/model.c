/* Test fixture: three integer layers written by hand.
 *   t  = requantize(x0 - zp0) + 5          (int8, in the arena)
 *   y0 = max(t, x1)                        (int8 output)
 *   y1[r] = sum_c (x0[r,c] - zp0) * (x1[r,c] - zp1)   (int32 output, one per row of 8)
 * The requantization is CMSIS-NN's double rounding (arm_nn_requantize). */
#include "model.h"

const mcu_tensor_info_t mcu_model_inputs[MCU_MODEL_NUM_INPUTS] = {
    {"input0", 4, {1, 2, 4, 8}, 1, 0, 0.05f, -3, 64},
    {"input1", 4, {1, 2, 4, 8}, 1, 0, 0.1f, 5, 64},
};
const mcu_tensor_info_t mcu_model_outputs[MCU_MODEL_NUM_OUTPUTS] = {
    {"output0", 4, {1, 2, 4, 8}, 1, 0, 0.1f, 5, 64},
    {"output1", 3, {1, 2, 4}, 4, 0, 0.005f, 0, 32},
};

static const int32_t requant_multiplier = 1073741824; /* 0.5 in Q31 */
static const int32_t requant_shift = 0;

static int32_t doubling_high_mult(int32_t a, int32_t b) {
  int64_t product = (int64_t)a * b + (1LL << 30);
  return (int32_t)(product >> 31);
}

static int32_t divide_by_power_of_two(int32_t dividend, int32_t exponent) {
  int32_t mask = (int32_t)((1u << exponent) - 1u);
  int32_t remainder = dividend & mask;
  int32_t result = dividend >> exponent;
  int32_t threshold = (mask >> 1) + (result < 0 ? 1 : 0);
  return result + (remainder > threshold ? 1 : 0);
}

static int32_t requantize(int32_t value, int32_t multiplier, int32_t shift) {
  int32_t left = shift > 0 ? shift : 0;
  int32_t right = shift > 0 ? 0 : -shift;
  return divide_by_power_of_two(doubling_high_mult(value * (1 << left), multiplier), right);
}

static int8_t saturate_s8(int32_t value) {
  return (int8_t)(value < -128 ? -128 : value > 127 ? 127 : value);
}

int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena) {
  const int8_t *x0 = (const int8_t *)inputs[0];
  const int8_t *x1 = (const int8_t *)inputs[1];
  int8_t *y0 = (int8_t *)outputs[0];
  int32_t *y1 = (int32_t *)outputs[1];
  int8_t *t = (int8_t *)arena;

  mcu_layer_marker(0);
  for (int i = 0; i < 64; i++) t[i] = saturate_s8(requantize(x0[i] + 3, requant_multiplier, requant_shift) + 5);

  mcu_layer_marker(1);
  for (int i = 0; i < 64; i++) y0[i] = t[i] > x1[i] ? t[i] : x1[i];

  mcu_layer_marker(2);
  for (int r = 0; r < 8; r++) {
    int32_t sum = 0;
    for (int c = 0; c < 8; c++) sum += (x0[r * 8 + c] + 3) * (x1[r * 8 + c] - 5);
    y1[r] = sum;
  }
  mcu_layer_marker(-1);
  return 0;
}
