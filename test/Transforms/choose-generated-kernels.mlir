// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m4 --mcu-convert-tosa-to-cmsisnn --mcu-choose-generated-kernels | FileCheck %s --check-prefix=DSP
// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn --mcu-choose-generated-kernels | FileCheck %s --check-prefix=MVE
// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m4 --mcu-convert-tosa-to-cmsisnn --mcu-choose-generated-kernels=kernels=cmsis-nn | FileCheck %s --check-prefix=LIB
// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=host --mcu-convert-tosa-to-cmsisnn --mcu-choose-generated-kernels=kernels=generated | FileCheck %s --check-prefix=GEN

// The generated depthwise 3x3 int8 kernel replaces the CMSIS-NN call on a DSP core (M4) where its
// estimate is lower, never on MVE (M55, no form there) nor with kernels=cmsis-nn; kernels=generated
// takes it on any core where it applies.
// DSP-LABEL: func.func @dw3x3_same
// DSP: cmsisnn.depthwise_conv
// DSP-SAME: mcu.generated_kernel = "dw3x3_s8"
// DSP-SAME: mcu.kernel_note = "generated dw3x3_s8: ~{{[0-9,]+}} instructions estimated, arm_depthwise_conv_wrapper_s8 ~{{[0-9,]+}}"
// MVE-LABEL: func.func @dw3x3_same
// MVE-NOT: mcu.generated_kernel
// LIB-LABEL: func.func @dw3x3_same
// LIB-NOT: mcu.generated_kernel
// GEN-LABEL: func.func @dw3x3_same
// GEN: mcu.generated_kernel = "dw3x3_s8"
func.func @dw3x3_same(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<3x3x8x1xi8>} : () -> tensor<3x3x8x1xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<8xi32>} : () -> tensor<8xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.depthwise_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<3x3x8x1xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x8xi8>
  return %r : tensor<1x4x4x8xi8>
}

// -----

// Any padding: none at the top, two rows at the bottom.
// DSP-LABEL: func.func @dw3x3_valid_bottom2
// DSP: mcu.generated_kernel = "dw3x3_s8"
func.func @dw3x3_valid_bottom2(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x4x2x8xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<3x3x8x1xi8>} : () -> tensor<3x3x8x1xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<8xi32>} : () -> tensor<8xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.depthwise_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 2, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<3x3x8x1xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x2x8xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x2x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x2x8xi8>
  return %r : tensor<1x4x2x8xi8>
}

// -----

// Channels not a multiple of 4: the CMSIS-NN call stays.
// DSP-LABEL: func.func @dw3x3_six_channels
// DSP-NOT: mcu.generated_kernel
// GEN-LABEL: func.func @dw3x3_six_channels
// GEN-NOT: mcu.generated_kernel
func.func @dw3x3_six_channels(%arg0: tensor<1x4x4x6xi8>) -> tensor<1x4x4x6xi8> {
  %w = "tosa.const"() {values = dense<3> : tensor<3x3x6x1xi8>} : () -> tensor<3x3x6x1xi8>
  %b = "tosa.const"() {values = dense<100> : tensor<6xi32>} : () -> tensor<6xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.depthwise_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x6xi8>, tensor<3x3x6x1xi8>, tensor<6xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x6xi32>
  %m = "tosa.const"() {values = dense<1518500250> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<40> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<-4> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x6xi8>
  return %r : tensor<1x4x4x6xi8>
}
