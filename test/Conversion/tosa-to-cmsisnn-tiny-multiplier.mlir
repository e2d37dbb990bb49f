// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s

// A channel scaled by less than 2**-31 (TOSA shift 62: an input at the 2**-24 scale floor, after a
// LayerNorm(1), times a weight scale at the floor): arm_nn_requantize would shift right by 31, where
// arm_nn_divide_by_power_of_two computes (1 << 31) - 1, a signed overflow. Its results are 0 for
// every int32 accumulator (multiplier 5173521 < 2**30), so CMSIS-NN gets multiplier 0, shift 0.
// CHECK-LABEL: func.func @fully_connected$zero_channel
// CHECK: "cmsisnn.fully_connected"
// CHECK-SAME: multiplier = array<i32: 0, 1091914196>
// CHECK-SAME: shift = array<i32: 0, -22>
// CHECK-NOT: = tosa.
func.func @fully_connected$zero_channel(%arg0: tensor<1x1x1xi8>) -> (tensor<1x1x2xi8>) {
  %w = "tosa.const"() {values = dense<[[[1, 127]]]> : tensor<1x1x2xi8>} : () -> tensor<1x1x2xi8>
  %azp = "tosa.const"() {values = dense<[-128]> : tensor<1xi8>} : () -> tensor<1xi8>
  %bzp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %azp, %bzp : (tensor<1x1x1xi8>, tensor<1x1x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x2xi32>
  %bias = "tosa.const"() {values = dense<[[[0, 1000]]]> : tensor<1x1x2xi32>} : () -> tensor<1x1x2xi32>
  %ab = tosa.add %mm, %bias : (tensor<1x1x2xi32>, tensor<1x1x2xi32>) -> tensor<1x1x2xi32>
  %rm = "tosa.const"() {values = dense<[5173521, 1091914196]> : tensor<2xi32>} : () -> tensor<2xi32>
  %rs = "tosa.const"() {values = dense<[62, 53]> : tensor<2xi8>} : () -> tensor<2xi8>
  %riz = "tosa.const"() {values = dense<[0]> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<[2]> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %ab, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x2xi8>
  return %r : tensor<1x1x2xi8>
}

// -----

// Shift 62 with a multiplier of 2**30 or more: an accumulator past 2**30 would round to +-1, and a
// matmul's accumulator is not bounded here, so no zero multiplier stands for it: the rescale stays
// TOSA's, on the portable kernel.
// CHECK-LABEL: func.func @fully_connected$unbounded_tiny_channel
// CHECK-NOT: cmsisnn.fully_connected
// CHECK: "portable.matmul"
// CHECK: "portable.rescale"
// CHECK-SAME: multiplier = array<i32: 1500000000, 1091914196>
// CHECK-SAME: shift = array<i32: 62, 53>
func.func @fully_connected$unbounded_tiny_channel(%arg0: tensor<1x1x1xi8>) -> (tensor<1x1x2xi8>) {
  %w = "tosa.const"() {values = dense<[[[1, 127]]]> : tensor<1x1x2xi8>} : () -> tensor<1x1x2xi8>
  %azp = "tosa.const"() {values = dense<[-128]> : tensor<1xi8>} : () -> tensor<1xi8>
  %bzp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %azp, %bzp : (tensor<1x1x1xi8>, tensor<1x1x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x2xi32>
  %bias = "tosa.const"() {values = dense<[[[0, 1000]]]> : tensor<1x1x2xi32>} : () -> tensor<1x1x2xi32>
  %ab = tosa.add %mm, %bias : (tensor<1x1x2xi32>, tensor<1x1x2xi32>) -> tensor<1x1x2xi32>
  %rm = "tosa.const"() {values = dense<[1500000000, 1091914196]> : tensor<2xi32>} : () -> tensor<2xi32>
  %rs = "tosa.const"() {values = dense<[62, 53]> : tensor<2xi8>} : () -> tensor<2xi8>
  %riz = "tosa.const"() {values = dense<[0]> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<[2]> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %ab, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x2xi8>
  return %r : tensor<1x1x2xi8>
}
