// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s

// A 1x1 conv2d of int8 by int4 weights with a per-tensor rescale and a clamp (TOSA's form of a
// fully connected layer with int4 weights) is one arm_fully_connected_s4 call over the rows of
// C: the [3, 5] weights packed two per byte, first in the low nibble (1, -2 -> 0xE1), the odd
// last one alone; the input zero point negated, the CMSIS shift 31 - 34.
// CHECK-LABEL: func.func @int4_weights
// CHECK: %[[W:.*]] = "tosa.const"() <{values = dense<[-31, -61, -107, 112, -46, 68, 111, 11]> : tensor<8xi8>}>
// CHECK: "cmsisnn.fully_connected_s4"(%arg0, %[[W]], %{{[0-9]+}})
// CHECK-SAME: activation = array<i32: -20, 100>, input_offset = 9 : i32
// CHECK-SAME: multiplier = 1518500250 : i32, output_offset = 4 : i32, shift = -3 : i32
// CHECK-SAME: (tensor<1x2x2x5xi8>, tensor<8xi8>, tensor<3xi32>) -> tensor<1x2x2x3xi8>
// CHECK-NOT: tosa.conv2d
func.func @int4_weights(%x: tensor<1x2x2x5xi8>) -> tensor<1x2x2x3xi8> {
  %w = "tosa.const"() <{values = dense<[[[[1, -2, 3, -4, 5]]], [[[-7, 0, 7, 2, -3]]], [[[4, 4, -1, 6, -5]]]]> : tensor<3x1x1x5xi4>}> : () -> tensor<3x1x1x5xi4>
  %b = "tosa.const"() <{values = dense<[10, -20, 30]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %izp = "tosa.const"() <{values = dense<-9> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi4>}> : () -> tensor<1xi4>
  %acc = tosa.conv2d %x, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x5xi8>, tensor<3x1x1x5xi4>, tensor<3xi32>, tensor<1xi8>, tensor<1xi4>) -> tensor<1x2x2x3xi32>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<34> : tensor<1xi8>}> : () -> tensor<1xi8>
  %rzp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<4> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x2x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x3xi8>
  %c = tosa.clamp %r {min_val = -20 : i8, max_val = 100 : i8} : (tensor<1x2x2x3xi8>) -> tensor<1x2x2x3xi8>
  return %c : tensor<1x2x2x3xi8>
}
