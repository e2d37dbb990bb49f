// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s --check-prefix=MVE
// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m4 --mcu-convert-tosa-to-cmsisnn | FileCheck %s --check-prefix=DSP

// A window padded more at the bottom / right than at the top / left (TOSA pad = [top, bottom,
// left, right]). A CMSIS-NN call gets only {top, left} and the output size; the conversion calls
// the wrapper when the function the wrapper picks on the core computes the implied bottom / right
// padding (kernel_library/cmsis_padding.py), else the generic kernel, and says why in mcu.kernel_note.

// The wrapper's 1x1 paths size their work from the input: arm_convolve_s8 on every core.
// MVE-LABEL: func.func @conv$1x1_bottom
// MVE: algorithm = #cmsisnn.conv_algorithm<"generic">
// MVE-SAME: mcu.kernel_note = "arm_convolve_1x1_s8_fast sizes its work from the input: the outputs of the padding 1 row(s) below and 0 column(s) right of the input are never computed: arm_convolve_s8 instead
// DSP-LABEL: func.func @conv$1x1_bottom
// DSP: algorithm = #cmsisnn.conv_algorithm<"generic">
// DSP-SAME: mcu.kernel_note = "arm_convolve_1x1_s8_fast
func.func @conv$1x1_bottom(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x5x4x16xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<16x1x1x8xi8>} : () -> tensor<16x1x1x8xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<16xi32>} : () -> tensor<16xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<16x1x1x8xi8>, tensor<16xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x5x4x16xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x5x4x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x5x4x16xi8>
  return %r : tensor<1x5x4x16xi8>
}

// -----

// Strided, the wrapper takes arm_convolve_1x1_s8, which reads past the input for the padded row / column.
// MVE-LABEL: func.func @conv$1x1_right_stride2
// MVE: algorithm = #cmsisnn.conv_algorithm<"generic">
// MVE-SAME: mcu.kernel_note = "arm_convolve_1x1_s8 takes no padding
// DSP-LABEL: func.func @conv$1x1_right_stride2
// DSP: algorithm = #cmsisnn.conv_algorithm<"generic">
// DSP-SAME: mcu.kernel_note = "arm_convolve_1x1_s8 takes no padding
func.func @conv$1x1_right_stride2(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x3x3x16xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<16x1x1x8xi8>} : () -> tensor<16x1x1x8xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<16xi32>} : () -> tensor<16xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>} : (tensor<1x4x4x8xi8>, tensor<16x1x1x8xi8>, tensor<16xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x16xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x16xi8>
  return %r : tensor<1x3x3x16xi8>
}

// -----

// No padding: the wrapper (its 1x1 fast path).
// MVE-LABEL: func.func @conv$1x1_unpadded
// MVE: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// MVE-NOT: mcu.kernel_note
// DSP-LABEL: func.func @conv$1x1_unpadded
// DSP: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// DSP-NOT: mcu.kernel_note
func.func @conv$1x1_unpadded(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x4x4x16xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<16x1x1x8xi8>} : () -> tensor<16x1x1x8xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<16xi32>} : () -> tensor<16xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<16x1x1x8xi8>, tensor<16xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x16xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x16xi8>
  return %r : tensor<1x4x4x16xi8>
}

// -----

// H = 1 with a 1xN filter: arm_convolve_1_x_n_s8 on MVE computes one output row; C / DSP forward to
// arm_convolve_s8, which clips.
// MVE-LABEL: func.func @conv$1xn_bottom
// MVE: algorithm = #cmsisnn.conv_algorithm<"generic">
// MVE-SAME: mcu.kernel_note = "arm_convolve_1_x_n_s8 (MVE) computes one output row from input row 0
// DSP-LABEL: func.func @conv$1xn_bottom
// DSP: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// DSP-NOT: mcu.kernel_note
func.func @conv$1xn_bottom(%arg0: tensor<1x1x8x8xi8>) -> tensor<1x2x8x16xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<16x1x3x8xi8>} : () -> tensor<16x1x3x8xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<16xi32>} : () -> tensor<16xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x1x8x8xi8>, tensor<16x1x3x8xi8>, tensor<16xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x8x16xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x8x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x8x16xi8>
  return %r : tensor<1x2x8x16xi8>
}

// -----

// arm_depthwise_conv_3x3_s8 (C / DSP) always reads a window's middle column: one column of right
// padding at most. MVE's wrapper takes arm_depthwise_conv_s8_opt, which clips.
// MVE-LABEL: func.func @depthwise$3x3_right2
// MVE: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// MVE-NOT: mcu.kernel_note
// DSP-LABEL: func.func @depthwise$3x3_right2
// DSP: algorithm = #cmsisnn.conv_algorithm<"generic">
// DSP-SAME: mcu.kernel_note = "arm_depthwise_conv_3x3_s8 reads every window's middle column
func.func @depthwise$3x3_right2(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x2x4x8xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<3x3x8x1xi8>} : () -> tensor<3x3x8x1xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<8xi32>} : () -> tensor<8xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.depthwise_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 2>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<3x3x8x1xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x4x8xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x4x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x4x8xi8>
  return %r : tensor<1x2x4x8xi8>
}

// -----

// One column of right padding: arm_depthwise_conv_3x3_s8 computes it.
// MVE-LABEL: func.func @depthwise$3x3_right1
// MVE: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// MVE-NOT: mcu.kernel_note
// DSP-LABEL: func.func @depthwise$3x3_right1
// DSP: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// DSP-NOT: mcu.kernel_note
func.func @depthwise$3x3_right1(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x3x3x8xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<3x3x8x1xi8>} : () -> tensor<3x3x8x1xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<8xi32>} : () -> tensor<8xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.depthwise_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<3x3x8x1xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x8xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x3x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x3x8xi8>
  return %r : tensor<1x3x3x8xi8>
}

// -----

// With one input channel the MVE depthwise wrapper calls arm_convolve_wrapper_s8, whose 1x1 path
// ignores the bottom padding.
// MVE-LABEL: func.func @depthwise$one_channel_1x1_bottom
// MVE: algorithm = #cmsisnn.conv_algorithm<"generic">
// MVE-SAME: mcu.kernel_note = "arm_convolve_1x1_s8_fast sizes its work
// DSP-LABEL: func.func @depthwise$one_channel_1x1_bottom
// DSP: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// DSP-NOT: mcu.kernel_note
func.func @depthwise$one_channel_1x1_bottom(%arg0: tensor<1x4x4x1xi8>) -> tensor<1x5x4x8xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<1x1x1x8xi8>} : () -> tensor<1x1x1x8xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<8xi32>} : () -> tensor<8xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.depthwise_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x1xi8>, tensor<1x1x1x8xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x5x4x8xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x5x4x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x5x4x8xi8>
  return %r : tensor<1x5x4x8xi8>
}
