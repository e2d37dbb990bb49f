// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s --check-prefix=CMSIS
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE
// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m4 --mcu-convert-tosa-to-cmsisnn | FileCheck %s --check-prefix=DSP

// conv2d + rescale + clamp become one call; the clamp narrows the activation bounds.
// CMSIS-LABEL: func.func @conv$fused
// CMSIS: "cmsisnn.conv"
// CMSIS-SAME: activation = array<i32: 0, 100>
// CMSIS-SAME: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// CMSIS-SAME: input_offset = 7 : i32
// CMSIS-SAME: mcu.source_op = "tosa.conv2d+tosa.rescale+tosa.clamp"
// CMSIS-SAME: output_offset = 5 : i32
// CMSIS-SAME: padding = array<i32: 1, 1, 1, 1>
// CMSIS-SAME: shift = array<i32: -7, -8>
// CMSIS-NOT: tosa.rescale %
// CMSIS-NOT: tosa.clamp %
// PORTABLE-LABEL: func.func @conv$fused
// PORTABLE: "portable.conv2d"
// PORTABLE-NOT: tosa.rescale %
func.func @conv$fused(%arg0: tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<2x3x3x2xi8>} : () -> tensor<2x3x3x2xi8>
  %b = "tosa.const"() {values = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %izp = "tosa.const"() {values = dense<-7> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x3x3x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %m = "tosa.const"() {values = dense<[1073741824, 1500000000]> : tensor<2xi32>} : () -> tensor<2xi32>
  %s = "tosa.const"() {values = dense<[38, 39]> : tensor<2xi8>} : () -> tensor<2xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %ozp = "tosa.const"() {values = dense<5> : tensor<1xi8>} : () -> tensor<1xi8>
  %1 = tosa.rescale %0, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %2 = tosa.clamp %1 {min_val = 0 : i8, max_val = 100 : i8} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
  return %2 : tensor<1x4x4x2xi8>
}

// -----

// A 1xN conv whose padding arm_convolve_1_x_n_s8 rejects on MVE calls arm_convolve_s8 there;
// the DSP path has no such rule and keeps the wrapper.
// CMSIS-LABEL: func.func @conv$one_by_n_asymmetric
// CMSIS: algorithm = #cmsisnn.conv_algorithm<"generic">
// DSP-LABEL: func.func @conv$one_by_n_asymmetric
// DSP: algorithm = #cmsisnn.conv_algorithm<"wrapper">
func.func @conv$one_by_n_asymmetric(%arg0: tensor<1x1x9x4xi8>) -> tensor<1x1x5x4xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<4x1x3x4xi8>} : () -> tensor<4x1x3x4xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 2>, stride = array<i64: 1, 2>} : (tensor<1x1x9x4xi8>, tensor<4x1x3x4xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x5x4xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x5x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x5x4xi8>
  return %1 : tensor<1x1x5x4xi8>
}

// -----

// Ops CMSIS-NN lacks become portable kernels even with backend=cmsis-nn; reshape is a view.
// CMSIS-LABEL: func.func @table$portable
// CMSIS: "portable.table"
// CMSIS: "cmsisnn.reshape"
func.func @table$portable(%arg0: tensor<2x128xi8>) -> tensor<256xi8> {
  %t = "tosa.const"() {values = dense<3> : tensor<256xi8>} : () -> tensor<256xi8>
  %0 = tosa.table %arg0, %t : (tensor<2x128xi8>, tensor<256xi8>) -> tensor<2x128xi8>
  %s = tosa.const_shape {values = dense<[256]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %1 = tosa.reshape %0, %s : (tensor<2x128xi8>, !tosa.shape<1>) -> tensor<256xi8>
  return %1 : tensor<256xi8>
}

// -----

// A 1x1 pooling window with stride 1 copies its input: it becomes a view, not a call.
// CMSIS-LABEL: func.func @avg_pool$identity
// CMSIS: "cmsisnn.reshape"(%arg0)
// CMSIS-NOT: cmsisnn.avg_pool
func.func @avg_pool$identity(%arg0: tensor<1x1x1x8xi8>) -> tensor<1x1x1x8xi8> {
  %zp = "tosa.const"() {values = dense<-5> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.avg_pool2d %arg0, %zp, %zp {acc_type = i32, kernel = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x8xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x8xi8>
  return %0 : tensor<1x1x1x8xi8>
}
