/* Test fixture following the generated model.h interface. */
#ifndef MCU_MODEL_H
#define MCU_MODEL_H

#include <stdint.h>

#include "mcu/runtime.h"

#define MCU_MODEL_ARENA_BYTES 4096
#define MCU_MODEL_NUM_INPUTS 1
#define MCU_MODEL_NUM_OUTPUTS 1
#define MCU_MODEL_USES_CMSIS_NN 1

extern const mcu_tensor_info_t mcu_model_inputs[MCU_MODEL_NUM_INPUTS];
extern const mcu_tensor_info_t mcu_model_outputs[MCU_MODEL_NUM_OUTPUTS];

int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena);

#endif /* MCU_MODEL_H */
