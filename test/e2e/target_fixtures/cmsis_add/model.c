/* Test fixture: y = relu(x0 + x1) with one CMSIS-NN call per layer (the core's MVE, DSP or C path).
 * Quantization as TFLite's add: left_shift 20, input multipliers/shifts to a common scale. */
#include "model.h"

#include "arm_nnfunctions.h"

#define COUNT 100 /* not a multiple of 4 or 16: the kernels' tail loops run too */

const mcu_tensor_info_t mcu_model_inputs[MCU_MODEL_NUM_INPUTS] = {
    {"input0", 2, {1, COUNT}, 1, 0, 0.05f, -3, COUNT},
    {"input1", 2, {1, COUNT}, 1, 0, 0.1f, 5, COUNT},
};
const mcu_tensor_info_t mcu_model_outputs[MCU_MODEL_NUM_OUTPUTS] = {
    {"output0", 2, {1, COUNT}, 1, 0, 0.12f, -10, COUNT},
};

int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena) {
  int8_t *y = (int8_t *)outputs[0];
  (void)arena;
  mcu_layer_marker(0);
  arm_cmsis_nn_status status = arm_elementwise_add_s8(
      (const int8_t *)inputs[0], (const int8_t *)inputs[1],
      /*input_1_offset=*/3, /*input_1_mult=*/1073741824, /*input_1_shift=*/-1,
      /*input_2_offset=*/-5, /*input_2_mult=*/1073741824, /*input_2_shift=*/0,
      /*left_shift=*/20, y, /*out_offset=*/-10, /*out_mult=*/1789569707, /*out_shift=*/-19,
      /*out_activation_min=*/-128, /*out_activation_max=*/127, COUNT);
  if (status != ARM_CMSIS_NN_SUCCESS) return 1;
  mcu_layer_marker(1);
  arm_relu_q7(y, COUNT);
  mcu_layer_marker(-1);
  return 0;
}
