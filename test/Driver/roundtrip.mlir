// Parse, print and parse again: the printed form is stable.
// RUN: mcu-opt %s | mcu-opt | FileCheck %s

// CHECK-LABEL: func.func @conv_rescale
// CHECK: tosa.conv2d
// CHECK-SAME: acc_type = i32
// CHECK: tosa.rescale
func.func @conv_rescale(%x: tensor<1x8x8x4xi8>, %w: tensor<8x3x3x4xi8>, %b: tensor<8xi32>) -> tensor<1x8x8x8xi8> {
  %izp = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.conv2d %x, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<8x3x3x4xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x8xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<8xi32>}> : () -> tensor<8xi32>
  %s = "tosa.const"() <{values = dense<38> : tensor<8xi8>}> : () -> tensor<8xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %z8 = "tosa.const"() <{values = dense<5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.rescale %acc, %m, %s, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x8xi32>, tensor<8xi32>, tensor<8xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x8xi8>
  return %y : tensor<1x8x8x8xi8>
}
