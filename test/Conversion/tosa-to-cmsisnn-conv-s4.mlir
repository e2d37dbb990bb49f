// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE

// A conv2d of int8 by int4 with its per-channel rescale and clamp is one arm_convolve_wrapper_s4
// call: the OHWI weights packed two per byte in row-major order, first in the low nibble
// (1, -2 -> 0xE1; the ninth alone), the filter's shape in filter_dims. The portable backend
// takes the same values unpacked to int8.
// CHECK-LABEL: func.func @conv2d$int4
// CHECK: %[[W:.*]] = "tosa.const"() <{values = dense<[-31, -61, -91, -105, 0]> : tensor<5xi8>}>
// CHECK: "cmsisnn.conv_s4"(%arg0, %[[W]], %{{[0-9]+}})
// CHECK-SAME: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// CHECK-SAME: filter_dims = array<i32: 3, 1, 3, 1>
// CHECK-SAME: input_offset = 9 : i32
// CHECK-SAME: padding = array<i32: 1, 1, 0, 1>
// CHECK-SAME: (tensor<1x4x5x1xi8>, tensor<5xi8>, tensor<3xi32>) -> tensor<1x5x5x3xi8>
// CHECK-NOT: tosa.conv2d
// PORTABLE-LABEL: func.func @conv2d$int4
// PORTABLE: %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[\[}}1], [-2], [3]]], {{\[\[\[}}-4], [5], [-6]]], {{\[\[\[}}7], [-7], [0]]]]> : tensor<3x1x3x1xi8>}>
// PORTABLE: "portable.conv2d"(%arg0, %[[W]], %{{[0-9]+}})
func.func @conv2d$int4(%x: tensor<1x4x5x1xi8>) -> tensor<1x5x5x3xi8> {
  %w = "tosa.const"() <{values = dense<[[[[1], [-2], [3]]], [[[-4], [5], [-6]]], [[[7], [-7], [0]]]]> : tensor<3x1x3x1xi4>}> : () -> tensor<3x1x3x1xi4>
  %b = "tosa.const"() <{values = dense<[10, -20, 30]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %izp = "tosa.const"() <{values = dense<-9> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi4>}> : () -> tensor<1xi4>
  %acc = tosa.conv2d %x, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x5x1xi8>, tensor<3x1x3x1xi4>, tensor<3xi32>, tensor<1xi8>, tensor<1xi4>) -> tensor<1x5x5x3xi32>
  %m = "tosa.const"() <{values = dense<[1518500250, 1073741824, 1300000000]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %s = "tosa.const"() <{values = dense<[34, 33, 35]> : tensor<3xi8>}> : () -> tensor<3xi8>
  %rzp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<4> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x5x5x3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x5x5x3xi8>
  %c = tosa.clamp %r {min_val = -20 : i8, max_val = 100 : i8} : (tensor<1x5x5x3xi8>) -> tensor<1x5x5x3xi8>
  return %c : tensor<1x5x5x3xi8>
}

// -----

// A depthwise conv2d of int8 by int4 (depth multiplier 1): the KH x KW x C x M weights packed in
// that order (1 x H x W x C*M for CMSIS-NN). On the M55 the wrapper would take
// arm_depthwise_conv_s4_opt, whose MVE path is wrong as GCC builds it: arm_depthwise_conv_s4.
// CHECK-LABEL: func.func @depthwise$int4
// CHECK: %[[W:.*]] = "tosa.const"() <{values = dense<[33, -93, -17, 93, 84, 6, -68, 121]> : tensor<8xi8>}>
// CHECK: "cmsisnn.depthwise_conv_s4"(%arg0, %[[W]], %{{[0-9]+}})
// CHECK-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">, ch_mult = 1 : i32
// CHECK-SAME: filter_dims = array<i32: 1, 2, 2, 4>
// CHECK-SAME: mcu.kernel_note = "arm_depthwise_conv_s4_opt (MVE, built by GCC 12.2) computes wrong outputs: arm_depthwise_conv_s4 instead"
// CHECK-SAME: (tensor<1x3x3x4xi8>, tensor<8xi8>, tensor<4xi32>) -> tensor<1x2x2x4xi8>
// PORTABLE-LABEL: func.func @depthwise$int4
// PORTABLE: "portable.depthwise_conv2d"
// PORTABLE-SAME: tensor<1x2x2x4xi8>
func.func @depthwise$int4(%x: tensor<1x3x3x4xi8>) -> tensor<1x2x2x4xi8> {
  %w = "tosa.const"() <{values = dense<[[[[1], [2], [3], [-6]], [[-1], [-2], [-3], [5]]], [[[4], [5], [6], [0]], [[-4], [-5], [-7], [7]]]]> : tensor<2x2x4x1xi4>}> : () -> tensor<2x2x4x1xi4>
  %b = "tosa.const"() <{values = dense<[10, -20, 30, 0]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %izp = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi4>}> : () -> tensor<1xi4>
  %acc = tosa.depthwise_conv2d %x, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x4xi8>, tensor<2x2x4x1xi4>, tensor<4xi32>, tensor<1xi8>, tensor<1xi4>) -> tensor<1x2x2x4xi32>
  %m = "tosa.const"() <{values = dense<[1518500250, 1073741824, 1300000000, 1100000000]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %s = "tosa.const"() <{values = dense<[34, 33, 35, 34]> : tensor<4xi8>}> : () -> tensor<4xi8>
  %rzp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<-1> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x2x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x4xi8>
  return %r : tensor<1x2x2x4xi8>
}

// -----

// An odd input channel count with a depth multiplier of 2: arm_depthwise_conv_s4 would read the
// packed weights wrongly and arm_depthwise_conv_s4_opt takes no multiplier, so the layer runs on
// the int8 kernel with its weights unpacked, and says why.
// CHECK-LABEL: func.func @depthwise$int4_odd_channels_multiplier
// CHECK: "cmsisnn.depthwise_conv"
// CHECK-SAME: mcu.kernel_note = "int4 weights unpacked to int8 (arm_depthwise_conv_s4 reads the packed filter of an odd input channel count wrongly)"
// CHECK-SAME: (tensor<1x2x2x1xi8>, tensor<1x1x1x2xi8>, tensor<2xi32>) -> tensor<1x2x2x2xi8>
func.func @depthwise$int4_odd_channels_multiplier(%x: tensor<1x2x2x1xi8>) -> tensor<1x2x2x2xi8> {
  %w = "tosa.const"() <{values = dense<[[[[3, -5]]]]> : tensor<1x1x1x2xi4>}> : () -> tensor<1x1x1x2xi4>
  %b = "tosa.const"() <{values = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi4>}> : () -> tensor<1xi4>
  %acc = tosa.depthwise_conv2d %x, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x1xi8>, tensor<1x1x1x2xi4>, tensor<2xi32>, tensor<1xi8>, tensor<1xi4>) -> tensor<1x2x2x2xi32>
  %m = "tosa.const"() <{values = dense<[1518500250, 1073741824]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %s = "tosa.const"() <{values = dense<[34, 33]> : tensor<2xi8>}> : () -> tensor<2xi8>
  %rzp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x2x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x2xi8>
  return %r : tensor<1x2x2x2xi8>
}
