// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s --check-prefix=CMSIS
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE

// A strided 1x1 conv never reads the last row / column: the slices that drop them go, and the
// kernel reads the unsliced 8x8 input for the same 4x4 output.
// CMSIS-LABEL: func.func @slice$trailing_rows_cols_strided_conv
// CMSIS-NOT: "portable.slice"
// CMSIS: "cmsisnn.conv"(%arg0,
// CMSIS-SAME: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// CMSIS-SAME: mcu.source_op = "tosa.slice+tosa.slice+tosa.conv2d+tosa.rescale"
// CMSIS-SAME: (tensor<1x8x8x4xi8>, {{.*}}) -> tensor<1x4x4x2xi8>
// PORTABLE-LABEL: func.func @slice$trailing_rows_cols_strided_conv
// PORTABLE-NOT: "portable.slice"
// PORTABLE: "portable.conv2d"(%arg0,
// PORTABLE-SAME: (tensor<1x8x8x4xi8>,
func.func @slice$trailing_rows_cols_strided_conv(%arg0: tensor<1x8x8x4xi8>) -> tensor<1x4x4x2xi8> {
  %start = tosa.const_shape {values = dense<0> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size_h = tosa.const_shape {values = dense<[1, 7, 8, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size_w = tosa.const_shape {values = dense<[1, 7, 7, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.slice %arg0, %start, %size_h : (tensor<1x8x8x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x7x8x4xi8>
  %1 = tosa.slice %0, %start, %size_w : (tensor<1x7x8x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x7x7x4xi8>
  %w = "tosa.const"() {values = dense<1> : tensor<2x1x1x4xi8>} : () -> tensor<2x1x1x4xi8>
  %b = "tosa.const"() {values = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %izp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %2 = tosa.conv2d %1, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x7x7x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<36> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %ozp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %3 = tosa.rescale %2, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  return %3 : tensor<1x4x4x2xi8>
}

// -----

// A padded 3x3 conv whose last window ends on the sliced extent's last row reads the bottom
// padding: the dropped row would replace it, so the slice stays.
// CMSIS-LABEL: func.func @slice$conv_reads_padding
// CMSIS: "portable.slice"
// CMSIS: "cmsisnn.conv"
// CMSIS-SAME: (tensor<1x7x8x4xi8>, {{.*}}) -> tensor<1x7x8x2xi8>
// PORTABLE-LABEL: func.func @slice$conv_reads_padding
// PORTABLE: "portable.slice"
func.func @slice$conv_reads_padding(%arg0: tensor<1x8x8x4xi8>) -> tensor<1x7x8x2xi8> {
  %start = tosa.const_shape {values = dense<0> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 7, 8, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.slice %arg0, %start, %size : (tensor<1x8x8x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x7x8x4xi8>
  %w = "tosa.const"() {values = dense<1> : tensor<2x3x3x4xi8>} : () -> tensor<2x3x3x4xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %1 = tosa.conv2d %0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x7x8x4xi8>, tensor<2x3x3x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x7x8x2xi32>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %ozp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %2 = tosa.rescale %1, %m, %s, %rzp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x7x8x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x7x8x2xi8>
  return %2 : tensor<1x7x8x2xi8>
}

// -----

// A slice at a non-zero offset, or one that also drops channels, is not a trailing trim.
// CMSIS-LABEL: func.func @slice$offset_or_channels
// CMSIS-COUNT-2: "portable.slice"
// PORTABLE-LABEL: func.func @slice$offset_or_channels
// PORTABLE-COUNT-2: "portable.slice"
func.func @slice$offset_or_channels(%arg0: tensor<1x8x8x4xi8>) -> (tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>) {
  %start = tosa.const_shape {values = dense<[0, 1, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %zero = tosa.const_shape {values = dense<0> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 7, 7, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size_c = tosa.const_shape {values = dense<[1, 7, 7, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.slice %arg0, %start, %size : (tensor<1x8x8x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x7x7x4xi8>
  %1 = tosa.slice %arg0, %zero, %size_c : (tensor<1x8x8x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x7x7x2xi8>
  %w = "tosa.const"() {values = dense<1> : tensor<2x1x1x4xi8>} : () -> tensor<2x1x1x4xi8>
  %w2 = "tosa.const"() {values = dense<1> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %2 = tosa.conv2d %0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x7x7x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %3 = tosa.conv2d %1, %w2, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x7x7x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  return %2, %3 : tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>
}
