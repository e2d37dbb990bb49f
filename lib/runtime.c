/* mcu-mlir runtime support shared by every generated model. */
#include "mcu/runtime.h"

__attribute__((noinline, used)) void mcu_layer_marker(int32_t index) {
  /* The asm keeps the call and the function body from being optimised away. */
  __asm__ volatile("" : : "r"(index) : "memory");
}
