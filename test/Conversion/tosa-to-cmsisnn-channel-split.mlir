// RUN: mcu-opt %s --split-input-file --mcu-split-sliced-convs --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-split-sliced-convs | FileCheck %s --check-prefix=TOSA
// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s --check-prefix=OFF

// A conv + rescale + table read only through two channel halves: one chain per half, with the
// weights, bias and per-channel multipliers of its channels; no slice left.
// CHECK-LABEL: func.func @split$halves
// CHECK-NOT: "portable.slice"
// CHECK: "cmsisnn.conv"(%arg0,
// CHECK-SAME: multiplier = array<i32: 1073741824, 1100000000>
// CHECK-SAME: -> tensor<1x4x4x2xi8>
// CHECK: "portable.table"
// CHECK: "cmsisnn.conv"(%arg0,
// CHECK-SAME: multiplier = array<i32: 1200000000, 1300000000>
// CHECK-SAME: -> tensor<1x4x4x2xi8>
// CHECK: "portable.table"
// CHECK-NOT: "portable.slice"
// The pass alone: one conv2d + rescale + table per half, on TOSA.
// TOSA-LABEL: func.func @split$halves
// TOSA-COUNT-2: tosa.conv2d
// TOSA-NOT: tosa.slice
// Without the pass, the conversion keeps the slices.
// OFF-LABEL: func.func @split$halves
// OFF-COUNT-2: "portable.slice"
func.func @split$halves(%arg0: tensor<1x4x4x3xi8>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) {
  %w = "tosa.const"() {values = dense<[[[[1, 2, 3]]], [[[4, 5, 6]]], [[[-1, -2, -3]]], [[[7, 8, 9]]]]> : tensor<4x1x1x3xi8>} : () -> tensor<4x1x1x3xi8>
  %b = "tosa.const"() {values = dense<[1, 2, 3, 4]> : tensor<4xi32>} : () -> tensor<4xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x3xi8>, tensor<4x1x1x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x4xi32>
  %m = "tosa.const"() {values = dense<[1073741824, 1100000000, 1200000000, 1300000000]> : tensor<4xi32>} : () -> tensor<4xi32>
  %s = "tosa.const"() {values = dense<[36, 36, 37, 37]> : tensor<4xi8>} : () -> tensor<4xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x4xi8>
  %t = "tosa.const"() {values = dense<3> : tensor<256xi8>} : () -> tensor<256xi8>
  %2 = tosa.table %1, %t : (tensor<1x4x4x4xi8>, tensor<256xi8>) -> tensor<1x4x4x4xi8>
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %3 = tosa.slice %2, %s0, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %4 = tosa.slice %2, %s1, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  return %3, %4 : tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>
}

// -----

// The whole result is also read (here returned): the conv stays whole and the slices stay.
// CHECK-LABEL: func.func @split$whole_result_read
// TOSA-LABEL: func.func @split$whole_result_read
// TOSA-COUNT-2: tosa.slice
// CHECK-COUNT-2: "portable.slice"
func.func @split$whole_result_read(%arg0: tensor<1x4x4x3xi8>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>, tensor<1x4x4x4xi8>) {
  %w = "tosa.const"() {values = dense<1> : tensor<4x1x1x3xi8>} : () -> tensor<4x1x1x3xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x3xi8>, tensor<4x1x1x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x4xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<36> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x4xi8>
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %3 = tosa.slice %1, %s0, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %4 = tosa.slice %1, %s1, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  return %3, %4, %1 : tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>, tensor<1x4x4x4xi8>
}

// -----

// The slices feed two convs of the same shape (the groups of a grouped conv): the producer stays
// whole so that the groups become one grouped call on its result.
// CHECK-LABEL: func.func @split$feeds_groups
// CHECK: "cmsisnn.conv"(%arg0,
// CHECK-SAME: -> tensor<1x4x4x4xi8>
// CHECK: "cmsisnn.conv"
// CHECK-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">
// CHECK-NOT: "portable.slice"
func.func @split$feeds_groups(%arg0: tensor<1x4x4x3xi8>) -> tensor<1x4x4x4xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<4x1x1x3xi8>} : () -> tensor<4x1x1x3xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x3xi8>, tensor<4x1x1x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x4xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<36> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x4xi8>
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x0 = tosa.slice %1, %s0, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %x1 = tosa.slice %1, %s1, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %gw = "tosa.const"() {values = dense<1> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %gb = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %c0 = tosa.conv2d %x0, %gw, %gb, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %c1 = tosa.conv2d %x1, %gw, %gb, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %r0 = tosa.rescale %c0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %r1 = tosa.rescale %c1, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %y = tosa.concat %r0, %r1 {axis = 3 : i32} : (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) -> tensor<1x4x4x4xi8>
  return %y : tensor<1x4x4x4xi8>
}
