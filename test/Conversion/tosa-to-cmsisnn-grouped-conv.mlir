// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s --check-prefix=CMSIS
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE

// Two channel slices, a conv + rescale each, concatenated along C: one grouped call on the whole
// input, weights / biases / multipliers of the groups in order.
// CMSIS-LABEL: func.func @grouped$concat
// CMSIS-NOT: "portable.slice"
// CMSIS: "cmsisnn.conv"(%arg0,
// CMSIS-SAME: activation = array<i32: 0, 127>
// CMSIS-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">
// CMSIS-SAME: multiplier = array<i32: 1073741824, 1073741824, 1500000000, 1500000000>
// CMSIS-SAME: (tensor<1x4x4x4xi8>, tensor<4x3x3x2xi8>, tensor<4xi32>) -> tensor<1x4x4x4xi8>
// CMSIS-NOT: concat
// PORTABLE-LABEL: func.func @grouped$concat
// PORTABLE-NOT: "portable.slice"
// Two groups: 4 input channels, 2 per filter.
// PORTABLE: "portable.conv2d"(%arg0,
// PORTABLE-SAME: (tensor<1x4x4x4xi8>, tensor<4x3x3x2xi8>, tensor<4xi32>)
// PORTABLE-NOT: concat
func.func @grouped$concat(%arg0: tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8> {
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x0 = tosa.slice %arg0, %s0, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %x1 = tosa.slice %arg0, %s1, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %w0 = "tosa.const"() {values = dense<1> : tensor<2x3x3x2xi8>} : () -> tensor<2x3x3x2xi8>
  %w1 = "tosa.const"() {values = dense<-2> : tensor<2x3x3x2xi8>} : () -> tensor<2x3x3x2xi8>
  %b = "tosa.const"() {values = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %izp = "tosa.const"() {values = dense<-7> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c0 = tosa.conv2d %x0, %w0, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x3x3x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %c1 = tosa.conv2d %x1, %w1, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x3x3x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %m0 = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %m1 = "tosa.const"() {values = dense<1500000000> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %ozp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %r0 = tosa.rescale %c0, %m0, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %r1 = tosa.rescale %c1, %m1, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %a0 = tosa.clamp %r0 {min_val = 0 : i8, max_val = 127 : i8} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
  %a1 = tosa.clamp %r1 {min_val = 0 : i8, max_val = 127 : i8} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
  %y = tosa.concat %a0, %a1 {axis = 3 : i32} : (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) -> tensor<1x4x4x4xi8>
  return %y : tensor<1x4x4x4xi8>
}

// -----

// Group results read through channel slices (a concat folded into the next layer's slices):
// the slices now cut the grouped result, at the group's channel offset.
// CMSIS-LABEL: func.func @grouped$sliced_results
// CMSIS: %[[G:.*]] = "cmsisnn.conv"(%arg0,
// CMSIS-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">
// CMSIS: "portable.slice"(%[[G]])
// CMSIS-SAME: start = array<i32: 0, 0, 0, 3>
// CMSIS-SAME: -> tensor<1x4x4x1xi8>
func.func @grouped$sliced_results(%arg0: tensor<1x4x4x4xi8>) -> tensor<1x4x4x1xi8> {
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s2 = tosa.const_shape {values = dense<[0, 0, 0, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size1 = tosa.const_shape {values = dense<[1, 4, 4, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x0 = tosa.slice %arg0, %s0, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %x1 = tosa.slice %arg0, %s1, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %w = "tosa.const"() {values = dense<1> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c0 = tosa.conv2d %x0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %c1 = tosa.conv2d %x1, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %r0 = tosa.rescale %c0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %r1 = tosa.rescale %c1, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %y = tosa.slice %r1, %s2, %size1 : (tensor<1x4x4x2xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x1xi8>
  return %y : tensor<1x4x4x1xi8>
}

// -----

// Groups whose results have different zero points are not one grouped conv: the slices stay.
// CMSIS-LABEL: func.func @grouped$different_output_zero_points
// CMSIS-COUNT-2: "portable.slice"
// CMSIS-NOT: conv_algorithm<"generic">
// PORTABLE-LABEL: func.func @grouped$different_output_zero_points
// PORTABLE-COUNT-2: "portable.slice"
// PORTABLE-COUNT-2: "portable.conv2d"{{.*}}(tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>
func.func @grouped$different_output_zero_points(%arg0: tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8> {
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x0 = tosa.slice %arg0, %s0, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %x1 = tosa.slice %arg0, %s1, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %w = "tosa.const"() {values = dense<1> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %zp5 = "tosa.const"() {values = dense<5> : tensor<1xi8>} : () -> tensor<1xi8>
  %c0 = tosa.conv2d %x0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %c1 = tosa.conv2d %x1, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %r0 = tosa.rescale %c0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %r1 = tosa.rescale %c1, %m, %s, %rzp, %zp5 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %y = tosa.concat %r0, %r1 {axis = 3 : i32} : (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) -> tensor<1x4x4x4xi8>
  return %y : tensor<1x4x4x4xi8>
}

// -----

// A conv1d's channel split after the layout passes: reshape, slice along W, reshape back. On
// element indices it is a channel cut, so the groups read one view of the input.
// CMSIS-LABEL: func.func @grouped$cut_between_reshapes
// CMSIS-NOT: "portable.slice"
// CMSIS: %[[V:.*]] = "cmsisnn.reshape"(%arg0) {{.*}} -> tensor<1x4x1x4xi8>
// CMSIS: "cmsisnn.conv"(%[[V]],
// CMSIS-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">
// CMSIS-SAME: -> tensor<1x4x1x4xi8>
// PORTABLE-LABEL: func.func @grouped$cut_between_reshapes
// PORTABLE-NOT: "portable.slice"
// PORTABLE: "portable.conv2d"{{.*}}(tensor<1x4x1x4xi8>, tensor<4x3x1x2xi8>
func.func @grouped$cut_between_reshapes(%arg0: tensor<1x2x2x4xi8>) -> tensor<1x4x1x4xi8> {
  %flat = tosa.const_shape {values = dense<[1, 4, 4, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x = tosa.reshape %arg0, %flat : (tensor<1x2x2x4xi8>, !tosa.shape<4>) -> tensor<1x4x4x1xi8>
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 2, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %back = tosa.const_shape {values = dense<[1, 4, 1, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x0 = tosa.slice %x, %s0, %size : (tensor<1x4x4x1xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x2x1xi8>
  %x1 = tosa.slice %x, %s1, %size : (tensor<1x4x4x1xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x2x1xi8>
  %v0 = tosa.reshape %x0, %back : (tensor<1x4x2x1xi8>, !tosa.shape<4>) -> tensor<1x4x1x2xi8>
  %v1 = tosa.reshape %x1, %back : (tensor<1x4x2x1xi8>, !tosa.shape<4>) -> tensor<1x4x1x2xi8>
  %w = "tosa.const"() {values = dense<1> : tensor<2x3x1x2xi8>} : () -> tensor<2x3x1x2xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c0 = tosa.conv2d %v0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x1x2xi8>, tensor<2x3x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x1x2xi32>
  %c1 = tosa.conv2d %v1, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x1x2xi8>, tensor<2x3x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x1x2xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %r0 = tosa.rescale %c0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x1x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x1x2xi8>
  %r1 = tosa.rescale %c1, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x1x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x1x2xi8>
  %y = tosa.concat %r0, %r1 {axis = 3 : i32} : (tensor<1x4x1x2xi8>, tensor<1x4x1x2xi8>) -> tensor<1x4x1x4xi8>
  return %y : tensor<1x4x1x4xi8>
}

// -----

// Slices along W of a reshape that are not channel cuts of any NHWC view (every other column
// here): the rule must not fire.
// CMSIS-LABEL: func.func @grouped$not_a_channel_cut
// CMSIS-COUNT-2: "portable.slice"
// PORTABLE-LABEL: func.func @grouped$not_a_channel_cut
// PORTABLE-COUNT-2: "portable.slice"
func.func @grouped$not_a_channel_cut(%arg0: tensor<1x4x4x1xi8>) -> tensor<1x4x1x4xi8> {
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 2, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size_h = tosa.const_shape {values = dense<[1, 2, 4, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %back = tosa.const_shape {values = dense<[1, 2, 1, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x0 = tosa.slice %arg0, %s0, %size_h : (tensor<1x4x4x1xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x2x4x1xi8>
  %x1 = tosa.slice %arg0, %s1, %size : (tensor<1x4x4x1xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x2x1xi8>
  %v0 = tosa.reshape %x0, %back : (tensor<1x2x4x1xi8>, !tosa.shape<4>) -> tensor<1x2x1x4xi8>
  %v1 = tosa.reshape %x1, %back : (tensor<1x4x2x1xi8>, !tosa.shape<4>) -> tensor<1x2x1x4xi8>
  %w = "tosa.const"() {values = dense<1> : tensor<2x1x1x4xi8>} : () -> tensor<2x1x1x4xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c0 = tosa.conv2d %v0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x1x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x1x2xi32>
  %c1 = tosa.conv2d %v1, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x1x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x1x2xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %r0 = tosa.rescale %c0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x1x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x1x2xi8>
  %r1 = tosa.rescale %c1, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x1x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x1x2xi8>
  %y = tosa.concat %r0, %r1 {axis = 3 : i32} : (tensor<1x2x1x2xi8>, tensor<1x2x1x2xi8>) -> tensor<1x2x1x4xi8>
  %f = tosa.const_shape {values = dense<[1, 4, 1, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %z = tosa.reshape %y, %f : (tensor<1x2x1x4xi8>, !tosa.shape<4>) -> tensor<1x4x1x2xi8>
  %y2 = tosa.concat %z, %z {axis = 3 : i32} : (tensor<1x4x1x2xi8>, tensor<1x4x1x2xi8>) -> tensor<1x4x1x4xi8>
  return %y2 : tensor<1x4x1x4xi8>
}

// -----

// A rescale shift below 31 (30: RegNetX's 2x2 stages) is exact in arm_nn_requantize while the
// accumulator times 2 fits in 32 bits; the groups' weights and biases bound it (18 x 135 + 2):
// one grouped call.
// CMSIS-LABEL: func.func @grouped$shift_below_31
// CMSIS-NOT: "portable.slice"
// CMSIS: "cmsisnn.conv"(%arg0,
// CMSIS-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">
// CMSIS-SAME: shift = array<i32: 1, 1, 1, 1>
// CMSIS-NOT: concat
func.func @grouped$shift_below_31(%arg0: tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8> {
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x0 = tosa.slice %arg0, %s0, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %x1 = tosa.slice %arg0, %s1, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %w0 = "tosa.const"() {values = dense<1> : tensor<2x3x3x2xi8>} : () -> tensor<2x3x3x2xi8>
  %w1 = "tosa.const"() {values = dense<-1> : tensor<2x3x3x2xi8>} : () -> tensor<2x3x3x2xi8>
  %b = "tosa.const"() {values = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %izp = "tosa.const"() {values = dense<-7> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c0 = tosa.conv2d %x0, %w0, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x3x3x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %c1 = tosa.conv2d %x1, %w1, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x3x3x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %m = "tosa.const"() {values = dense<1500000000> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<30> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %ozp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %r0 = tosa.rescale %c0, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %r1 = tosa.rescale %c1, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %y = tosa.concat %r0, %r1 {axis = 3 : i32} : (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) -> tensor<1x4x4x4xi8>
  return %y : tensor<1x4x4x4xi8>
}

// -----

// Shift 30 with a bias of 2**30: the accumulator times 2 can leave 32 bits, so arm_nn_requantize
// is not exact; the groups stay apart (each rescale a kernel of its own).
// CMSIS-LABEL: func.func @grouped$shift_below_31_unbounded
// CMSIS-COUNT-2: "portable.slice"
// CMSIS-NOT: conv_algorithm<"generic">
func.func @grouped$shift_below_31_unbounded(%arg0: tensor<1x4x4x4xi8>) -> tensor<1x4x4x4xi8> {
  %s0 = tosa.const_shape {values = dense<[0, 0, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s1 = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %x0 = tosa.slice %arg0, %s0, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %x1 = tosa.slice %arg0, %s1, %size : (tensor<1x4x4x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x2xi8>
  %w = "tosa.const"() {values = dense<1> : tensor<2x3x3x2xi8>} : () -> tensor<2x3x3x2xi8>
  %b = "tosa.const"() {values = dense<1073741824> : tensor<2xi32>} : () -> tensor<2xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c0 = tosa.conv2d %x0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x3x3x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %c1 = tosa.conv2d %x1, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x3x3x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %m = "tosa.const"() {values = dense<1500000000> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<30> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %r0 = tosa.rescale %c0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %r1 = tosa.rescale %c1, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %y = tosa.concat %r0, %r1 {axis = 3 : i32} : (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) -> tensor<1x4x4x4xi8>
  return %y : tensor<1x4x4x4xi8>
}
