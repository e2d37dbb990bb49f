// RUN: mcu-opt %s --split-input-file | mcu-opt --split-input-file | FileCheck %s

// Every cmsisnn op parses, verifies and prints back (twice).

// CHECK-LABEL: func.func @conv
// CHECK: "cmsisnn.conv"(%{{.*}}, %{{.*}}, %{{.*}}) {activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"wrapper">
// CHECK-SAME: multiplier = array<i32: 1073741824, 1073741824>
// CHECK: "cmsisnn.conv"
// CHECK-SAME: algorithm = #cmsisnn.conv_algorithm<"1x1">
// CHECK: "cmsisnn.depthwise_conv"
// CHECK-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">, ch_mult = 2 : i32
func.func @conv(%a: tensor<1x4x4x2xi8>, %w: tensor<2x1x1x2xi8>, %b: tensor<2xi32>, %dw: tensor<1x3x3x4xi8>, %db: tensor<4xi32>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>, tensor<1x4x4x4xi8>) {
  %0 = "cmsisnn.conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = -3 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: -1, -2>, activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"wrapper">} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi8>
  %1 = "cmsisnn.conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = -3 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1073741824>, shift = array<i32: -1>, activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"1x1">} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi8>
  %2 = "cmsisnn.depthwise_conv"(%a, %dw, %db) {input_offset = 1 : i32, output_offset = 0 : i32, stride = array<i32: 1, 1>, padding = array<i32: 1, 1, 1, 1>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1073741824>, shift = array<i32: -1>, activation = array<i32: -128, 127>, ch_mult = 2 : i32, algorithm = #cmsisnn.conv_algorithm<"generic">} : (tensor<1x4x4x2xi8>, tensor<1x3x3x4xi8>, tensor<4xi32>) -> tensor<1x4x4x4xi8>
  return %0, %1, %2 : tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>, tensor<1x4x4x4xi8>
}

// -----

// CHECK-LABEL: func.func @fully_connected
// CHECK: "cmsisnn.fully_connected"
// CHECK-SAME: filter_offset = 0 : i32
func.func @fully_connected(%a: tensor<1x8xi8>, %w: tensor<4x8xi8>, %b: tensor<4xi32>) -> tensor<1x4xi8> {
  %0 = "cmsisnn.fully_connected"(%a, %w, %b) {input_offset = 3 : i32, filter_offset = 0 : i32, output_offset = -1 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -3>, activation = array<i32: -128, 127>} : (tensor<1x8xi8>, tensor<4x8xi8>, tensor<4xi32>) -> tensor<1x4xi8>
  return %0 : tensor<1x4xi8>
}

// -----

// CHECK-LABEL: func.func @pools
// CHECK: "cmsisnn.max_pool"
// CHECK-SAME: kernel_size = array<i32: 2, 2>
// CHECK: "cmsisnn.avg_pool"
func.func @pools(%a: tensor<1x4x4x2xi8>) -> (tensor<1x2x2x2xi8>, tensor<1x2x2x2xi8>) {
  %0 = "cmsisnn.max_pool"(%a) {stride = array<i32: 2, 2>, padding = array<i32: 0, 0, 0, 0>, kernel_size = array<i32: 2, 2>, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  %1 = "cmsisnn.avg_pool"(%a) {stride = array<i32: 2, 2>, padding = array<i32: 0, 0, 0, 0>, kernel_size = array<i32: 2, 2>, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  return %0, %1 : tensor<1x2x2x2xi8>, tensor<1x2x2x2xi8>
}

// -----

// CHECK-LABEL: func.func @elementwise
// CHECK: "cmsisnn.add"
// CHECK-SAME: left_shift = 20 : i32
// CHECK: "cmsisnn.mul"(%arg0, %arg1)
func.func @elementwise(%a: tensor<1x4x4x2xi8>, %b: tensor<1x1x1x2xi8>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) {
  %0 = "cmsisnn.add"(%a, %a) {input1_offset = 0 : i32, input1_multiplier = 1 : i32, input1_shift = 0 : i32, input2_offset = 0 : i32, input2_multiplier = 1 : i32, input2_shift = 0 : i32, left_shift = 20 : i32, output_offset = 0 : i32, output_multiplier = 1 : i32, output_shift = 0 : i32, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
  %1 = "cmsisnn.mul"(%a, %b) {input1_offset = 0 : i32, input2_offset = 0 : i32, output_offset = 0 : i32, output_multiplier = 1 : i32, output_shift = 0 : i32, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>, tensor<1x1x1x2xi8>) -> tensor<1x4x4x2xi8>
  return %0, %1 : tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>
}

// -----

// Sixteen inputs of one type are one variadic group.
// CHECK-LABEL: func.func @data_movement
// CHECK: "cmsisnn.transpose"
// CHECK: "cmsisnn.pad"
// CHECK: "cmsisnn.concat"(%arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0, %arg0)
// CHECK-SAME: operandSegmentSizes = array<i32: 16, 0, 0, 0, 0, 0, 0, 0>
// CHECK: "cmsisnn.reshape"
func.func @data_movement(%a: tensor<1x2x3x4xi8>) -> (tensor<1x4x2x3xi8>, tensor<1x4x3x4xi8>, tensor<1x32x3x4xi8>, tensor<24xi8>) {
  %0 = "cmsisnn.transpose"(%a) {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x3x4xi8>) -> tensor<1x4x2x3xi8>
  %1 = "cmsisnn.pad"(%a) {padding = array<i32: 0, 0, 1, 1, 0, 0, 0, 0>, pad_value = -5 : i32} : (tensor<1x2x3x4xi8>) -> tensor<1x4x3x4xi8>
  %2 = "cmsisnn.concat"(%a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a) {axis = 1 : i32, operandSegmentSizes = array<i32: 16, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>, tensor<1x2x3x4xi8>) -> tensor<1x32x3x4xi8>
  %3 = "cmsisnn.reshape"(%a) : (tensor<1x2x3x4xi8>) -> tensor<24xi8>
  return %0, %1, %2, %3 : tensor<1x4x2x3xi8>, tensor<1x4x3x4xi8>, tensor<1x32x3x4xi8>, tensor<24xi8>
}

// -----

// CHECK-LABEL: func.func @softmax_s16
// CHECK: "cmsisnn.softmax_s16"(%arg0, %arg1, %arg2) {mult = 1717986918 : i32, num_rows = 2 : i32, row_size = 4 : i32, shift = 1 : i32}
func.func @softmax_s16(%x: tensor<2x4xi16>, %e: tensor<513xi16>, %r: tensor<513xi16>) -> tensor<2x4xi16> {
  %0 = "cmsisnn.softmax_s16"(%x, %e, %r) {num_rows = 2 : i32, row_size = 4 : i32, mult = 1717986918 : i32, shift = 1 : i32} : (tensor<2x4xi16>, tensor<513xi16>, tensor<513xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}

// -----

// CHECK-LABEL: func.func @fully_connected_s4
// CHECK: "cmsisnn.fully_connected_s4"
// CHECK-SAME: (tensor<2x5xi8>, tensor<8xi8>, tensor<3xi32>) -> tensor<2x3xi8>
func.func @fully_connected_s4(%a: tensor<2x5xi8>, %w: tensor<8xi8>, %b: tensor<3xi32>) -> tensor<2x3xi8> {
  %0 = "cmsisnn.fully_connected_s4"(%a, %w, %b) {input_offset = 3 : i32, output_offset = -1 : i32, multiplier = 1073741824 : i32, shift = -3 : i32, activation = array<i32: -128, 127>} : (tensor<2x5xi8>, tensor<8xi8>, tensor<3xi32>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

// CHECK-LABEL: func.func @transpose_conv
// CHECK: "cmsisnn.transpose_conv"(%{{.*}}, %{{.*}}, %{{.*}}) {activation = array<i32: -128, 127>, input_offset = 1 : i32
// CHECK-SAME: padding = array<i32: 1, 0>
func.func @transpose_conv(%a: tensor<1x4x3x2xi8>, %w: tensor<3x3x2x2xi8>, %b: tensor<3xi32>) -> tensor<1x8x6x3xi8> {
  %0 = "cmsisnn.transpose_conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = -3 : i32, stride = array<i32: 2, 2>, padding = array<i32: 1, 0>, multiplier = array<i32: 1073741824>, shift = array<i32: -1>, activation = array<i32: -128, 127>} : (tensor<1x4x3x2xi8>, tensor<3x3x2x2xi8>, tensor<3xi32>) -> tensor<1x8x6x3xi8>
  return %0 : tensor<1x8x6x3xi8>
}

// -----

// CHECK-LABEL: func.func @conv_s4
// CHECK: "cmsisnn.conv_s4"
// CHECK-SAME: filter_dims = array<i32: 3, 1, 3, 1>
// CHECK-SAME: (tensor<1x4x5x1xi8>, tensor<5xi8>, tensor<3xi32>) -> tensor<1x4x5x3xi8>
// CHECK: "cmsisnn.depthwise_conv_s4"
// CHECK-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">, ch_mult = 1 : i32
// CHECK-SAME: (tensor<1x3x3x3xi8>, tensor<6xi8>, tensor<3xi32>) -> tensor<1x2x2x3xi8>
func.func @conv_s4(%a: tensor<1x4x5x1xi8>, %w: tensor<5xi8>, %b: tensor<3xi32>, %d: tensor<1x3x3x3xi8>, %dw: tensor<6xi8>) -> (tensor<1x4x5x3xi8>, tensor<1x2x2x3xi8>) {
  %0 = "cmsisnn.conv_s4"(%a, %w, %b) {activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"wrapper">, dilation = array<i32: 1, 1>, filter_dims = array<i32: 3, 1, 3, 1>, input_offset = 9 : i32, multiplier = array<i32: 1073741824>, output_offset = 4 : i32, padding = array<i32: 0, 1, 0, 1>, shift = array<i32: -3>, stride = array<i32: 1, 1>} : (tensor<1x4x5x1xi8>, tensor<5xi8>, tensor<3xi32>) -> tensor<1x4x5x3xi8>
  %1 = "cmsisnn.depthwise_conv_s4"(%d, %dw, %b) {activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"generic">, ch_mult = 1 : i32, dilation = array<i32: 1, 1>, filter_dims = array<i32: 1, 2, 2, 3>, input_offset = 0 : i32, multiplier = array<i32: 1073741824>, output_offset = 0 : i32, padding = array<i32: 0, 0, 0, 0>, shift = array<i32: -3>, stride = array<i32: 1, 1>} : (tensor<1x3x3x3xi8>, tensor<6xi8>, tensor<3xi32>) -> tensor<1x2x2x3xi8>
  return %0, %1 : tensor<1x4x5x3xi8>, tensor<1x2x2x3xi8>
}
