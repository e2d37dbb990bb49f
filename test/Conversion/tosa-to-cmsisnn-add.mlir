// RUN: mcu-opt %s --mcu-attach-target=target=cortex-m4 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --mcu-attach-target=target=cortex-m4 --mcu-convert-tosa-to-cmsisnn=disabled-patterns=add-s8 | FileCheck %s --check-prefix=UNFUSED
// RUN: mcu-opt %s --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE

// The TFLite form of an int8 add (widen with << 20, rescale each operand, add, rescale) is one call.
// CHECK-LABEL: func.func @add$int8
// CHECK: "cmsisnn.add"(%arg0, %arg1)
// CHECK-SAME: input1_offset = -3 : i32
// CHECK-SAME: input2_shift = -1 : i32
// CHECK-SAME: left_shift = 20 : i32
// CHECK-SAME: output_shift = -19 : i32
// CHECK-NOT: portable.
// PORTABLE-LABEL: func.func @add$int8
// PORTABLE: "portable.elementwise_add"(%arg0, %arg1) {activation = array<i32: -128, 127>, input1_multiplier = 1395864371 : i32, input1_offset = -3 : i32
// PORTABLE-SAME: left_shift = 20 : i32
// With the pattern disabled, every TOSA op becomes its own portable kernel.
// UNFUSED-LABEL: func.func @add$int8
// UNFUSED-COUNT-5: "portable.rescale"
// UNFUSED-NOT: cmsisnn.add
func.func @add$int8(%arg0: tensor<1x8xi8>, %arg1: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %m30 = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s10 = "tosa.const"() {values = dense<10> : tensor<1xi8>} : () -> tensor<1xi8>
  %za = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %zb = "tosa.const"() {values = dense<-9> : tensor<1xi8>} : () -> tensor<1xi8>
  %z32 = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %z8 = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %ma = "tosa.const"() {values = dense<1395864371> : tensor<1xi32>} : () -> tensor<1xi32>
  %sa = "tosa.const"() {values = dense<31> : tensor<1xi8>} : () -> tensor<1xi8>
  %mb = "tosa.const"() {values = dense<1174405120> : tensor<1xi32>} : () -> tensor<1xi32>
  %sb = "tosa.const"() {values = dense<32> : tensor<1xi8>} : () -> tensor<1xi8>
  %mo = "tosa.const"() {values = dense<1288490189> : tensor<1xi32>} : () -> tensor<1xi32>
  %so = "tosa.const"() {values = dense<50> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.rescale %arg0, %m30, %s10, %za, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %1 = tosa.rescale %0, %ma, %sa, %z32, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x8xi32>
  %2 = tosa.rescale %arg1, %m30, %s10, %zb, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<1x8xi32>
  %3 = tosa.rescale %2, %mb, %sb, %z32, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x8xi32>
  %4 = tosa.add %1, %3 : (tensor<1x8xi32>, tensor<1x8xi32>) -> tensor<1x8xi32>
  %5 = tosa.rescale %4, %mo, %so, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  return %5 : tensor<1x8xi8>
}
