// RUN: mcu-opt %s --mcu-tosa-to-cmsisnn-pipeline=backend=portable --mcu-emit-c=print=true -o /dev/null | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t && mcu-opt %s --mcu-tosa-to-cmsisnn-pipeline=backend=portable --mcu-emit-c=output-dir=%t -o /dev/null
// RUN: cc -std=c99 -Wall -Wextra -Werror -c -I %S/../../include -I %t %t/model.c -o %t/model.o

// CHECK-LABEL: // ----- model.c
// CHECK: static const int8_t mcu_const0_layer0_filter[8] __attribute__((aligned(16)))
// CHECK: int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena) {
// CHECK: /* layer 0: conv1 (tosa.conv2d+tosa.rescale -> portable:conv2d_s8) */
// CHECK-NEXT: mcu_layer_marker(0);
// CHECK: status = mcu_conv2d_s8(&layer0_params, {{.*}}, (int8_t *)((uint8_t *)outputs[0]));
// CHECK: /* layer 1: lut (tosa.table -> portable:table_s8) */
// The table runs in place in the output buffer: no arena is needed at all.
// CHECK: status = mcu_table_s8(64, mcu_const2_layer1_table, (const int8_t *)((uint8_t *)outputs[0]), (int8_t *)((uint8_t *)outputs[0]));
// CHECK: mcu_layer_marker(-1);
// CHECK-LABEL: // ----- model.h
// CHECK: #define MCU_MODEL_ARENA_BYTES 0
// CHECK: #define MCU_MODEL_NUM_INPUTS 1
// CHECK-NOT: MCU_MODEL_USES_CMSIS_NN
// CHECK: int mcu_model_run(const void *const *inputs, void *const *outputs, uint8_t *arena);
func.func @main(%arg0: tensor<1x4x4x2xi8>) -> tensor<1x4x4x4xi8> {
  %w = "tosa.const"() {values = dense<[[[[1, 2]]], [[[3, -4]]], [[[5, 6]]], [[[7, 8]]]]> : tensor<4x1x1x2xi8>} : () -> tensor<4x1x1x2xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<4x1x1x2xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x4xi32> loc("conv1")
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<31> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x4xi8> loc("conv1")
  %t = "tosa.const"() {values = dense<3> : tensor<256xi8>} : () -> tensor<256xi8>
  %2 = tosa.table %1, %t : (tensor<1x4x4x4xi8>, tensor<256xi8>) -> tensor<1x4x4x4xi8> loc("lut")
  return %2 : tensor<1x4x4x4xi8>
}
