// RUN: mcu-opt %s --split-input-file | mcu-opt --split-input-file | FileCheck %s

// Every portable op parses, verifies and prints back (twice).

// CHECK-LABEL: func.func @compute
// CHECK: "portable.conv2d"
// CHECK: "portable.depthwise_conv2d"
// CHECK: "portable.transpose_conv2d"
// CHECK: "portable.matmul"
// CHECK: "portable.avg_pool2d"
// CHECK: "portable.max_pool2d"
func.func @compute(%a: tensor<1x4x4x2xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>, %dw: tensor<1x3x3x2xi8>, %tw: tensor<3x2x2x2xi8>, %tb: tensor<3xi32>, %m: tensor<2x3x4xi8>, %r: tensor<1x4x5xi8>, %mb: tensor<5xi32>) -> (tensor<1x4x4x2xi32>, tensor<1x4x4x2xi8>, tensor<1x8x8x3xi32>, tensor<2x3x5xi8>, tensor<1x2x2x2xi8>, tensor<1x2x2x2xi8>) {
  %0 = "portable.conv2d"(%a, %w, %b) {input_offset = 1 : i32, output_offset = 0 : i32, stride = array<i32: 1, 1>, padding = array<i32: 1, 1, 1, 1>, dilation = array<i32: 1, 1>, multiplier = array<i32>, shift = array<i32>, activation = array<i32: -2147483648, 2147483647>} : (tensor<1x4x4x2xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi32>
  %1 = "portable.depthwise_conv2d"(%a, %dw, %b) {input_offset = 1 : i32, output_offset = 0 : i32, stride = array<i32: 1, 1>, padding = array<i32: 1, 1, 1, 1>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: -1, -1>, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>, tensor<1x3x3x2xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi8>
  %2 = "portable.transpose_conv2d"(%a, %tw, %tb) {stride = array<i32: 2, 2>, out_pad = array<i32: 0, 0>, input_zp = -1 : i32, weight_zp = 0 : i32} : (tensor<1x4x4x2xi8>, tensor<3x2x2x2xi8>, tensor<3xi32>) -> tensor<1x8x8x3xi32>
  %3 = "portable.matmul"(%m, %r, %mb) {lhs_offset = 1 : i32, rhs_offset = 0 : i32, output_offset = 2 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -4>, activation = array<i32: -128, 127>} : (tensor<2x3x4xi8>, tensor<1x4x5xi8>, tensor<5xi32>) -> tensor<2x3x5xi8>
  %4 = "portable.avg_pool2d"(%a) {kernel_size = array<i32: 2, 2>, stride = array<i32: 2, 2>, padding = array<i32: 0, 0, 0, 0>, input_zp = -3 : i32, output_zp = -3 : i32, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  %5 = "portable.max_pool2d"(%a) {kernel_size = array<i32: 2, 2>, stride = array<i32: 2, 2>, padding = array<i32: 0, 0, 0, 0>, input_zp = 0 : i32, output_zp = 0 : i32, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  return %0, %1, %2, %3, %4, %5 : tensor<1x4x4x2xi32>, tensor<1x4x4x2xi8>, tensor<1x8x8x3xi32>, tensor<2x3x5xi8>, tensor<1x2x2x2xi8>, tensor<1x2x2x2xi8>
}

// -----

// CHECK-LABEL: func.func @elementwise
// CHECK: "portable.elementwise_add"
// CHECK: "portable.elementwise_mul"
// CHECK: "portable.binary"(%arg2, %arg3) {kind = #portable.binary_kind<"shift_right_round">, shift = 0 : i32}
// CHECK: "portable.select"
// CHECK: "portable.unary"(%arg2) {input_zp = 0 : i32, kind = #portable.unary_kind<"clz">, output_zp = 0 : i32}
// CHECK: "portable.rescale"
// CHECK-SAME: input_unsigned = 1 : i32
// CHECK: "portable.clamp"
// CHECK: "portable.cast"
// CHECK: "portable.table"
// CHECK: "portable.table_rescale"
// CHECK: "portable.log_softmax"
func.func @elementwise(%a: tensor<2x8xi8>, %b: tensor<1x8xi8>, %x: tensor<2x8xi32>, %y: tensor<2x8xi32>, %c: tensor<2x8xi1>, %t: tensor<256xi8>, %h: tensor<2x8xi16>, %t16: tensor<513xi16>, %ls: tensor<2x8xi32>, %et: tensor<1x256x1xi32>) -> (tensor<2x8xi8>, tensor<2x8xi8>, tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xi16>, tensor<2x8xi8>, tensor<2x8xi32>, tensor<2x8xi8>, tensor<2x8xi16>, tensor<2x8xi8>) {
  %0 = "portable.elementwise_add"(%a, %b) {input1_offset = 1 : i32, input1_multiplier = 1073741824 : i32, input1_shift = 0 : i32, input2_offset = 2 : i32, input2_multiplier = 1073741824 : i32, input2_shift = 0 : i32, left_shift = 20 : i32, output_offset = 0 : i32, output_multiplier = 1073741824 : i32, output_shift = -20 : i32, activation = array<i32: -128, 127>} : (tensor<2x8xi8>, tensor<1x8xi8>) -> tensor<2x8xi8>
  %1 = "portable.elementwise_mul"(%a, %b) {input1_offset = 1 : i32, input2_offset = 2 : i32, output_offset = 0 : i32, output_multiplier = 1073741824 : i32, output_shift = -8 : i32, activation = array<i32: -128, 127>} : (tensor<2x8xi8>, tensor<1x8xi8>) -> tensor<2x8xi8>
  %2 = "portable.binary"(%x, %y) {kind = #portable.binary_kind<"shift_right_round">, shift = 0 : i32} : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
  %3 = "portable.select"(%c, %x, %y) : (tensor<2x8xi1>, tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
  %4 = "portable.unary"(%x) {kind = #portable.unary_kind<"clz">, input_zp = 0 : i32, output_zp = 0 : i32} : (tensor<2x8xi32>) -> tensor<2x8xi32>
  %5 = "portable.rescale"(%a) {input_zp = 0 : i32, output_zp = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 30>, scale32 = 1 : i32, double_round = 0 : i32, per_channel = 0 : i32, input_unsigned = 1 : i32, output_unsigned = 0 : i32} : (tensor<2x8xi8>) -> tensor<2x8xi16>
  %6 = "portable.clamp"(%a) {min = -10 : i32, max = 10 : i32} : (tensor<2x8xi8>) -> tensor<2x8xi8>
  %7 = "portable.cast"(%a) : (tensor<2x8xi8>) -> tensor<2x8xi32>
  %8 = "portable.table"(%a, %t) : (tensor<2x8xi8>, tensor<256xi8>) -> tensor<2x8xi8>
  %9 = "portable.table_rescale"(%h, %t16) {input_zp = 0 : i32, output_zp = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 37>, scale32 = 1 : i32, double_round = 1 : i32, per_channel = 0 : i32} : (tensor<2x8xi16>, tensor<513xi16>) -> tensor<2x8xi16>
  %10 = "portable.log_softmax"(%ls, %et, %et) {outer = 2 : i32, axis_size = 8 : i32, inner = 1 : i32, diff_mul = 10000 : i32, diff_shift = 0 : i32, norm_bits = 23 : i32, norm_mask = 255 : i32, exp_bits = 10 : i32, exp_mul = 3000000 : i32, exp_shift = 0 : i32, bias = 32768 : i32, base = 0 : i32, out_shift = 16 : i32, multiplier = 1073741824 : i32, shift = 30 : i32, output_zp = 127 : i32, double_round = 1 : i32} : (tensor<2x8xi32>, tensor<1x256x1xi32>, tensor<1x256x1xi32>) -> tensor<2x8xi8>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<2x8xi8>, tensor<2x8xi8>, tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xi16>, tensor<2x8xi8>, tensor<2x8xi32>, tensor<2x8xi8>, tensor<2x8xi16>, tensor<2x8xi8>
}

// -----

// Concat inputs in runs of equal types: 16 of one type are one group; alternating types take a
// group each.
// CHECK-LABEL: func.func @data_movement
// CHECK: "portable.transpose"
// CHECK: "portable.concat"
// CHECK-SAME: operandSegmentSizes = array<i32: 16, 0, 0, 0, 0, 0, 0, 0>
// CHECK: "portable.concat"
// CHECK-SAME: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0>
// CHECK: "portable.pad"
// CHECK: "portable.slice"
// CHECK: "portable.tile"
// CHECK: "portable.reverse"
// CHECK: "portable.gather"
// CHECK: "portable.resize"
// CHECK-SAME: mode = #portable.resize_mode<"bilinear">
// CHECK: "portable.reduce"
// CHECK-SAME: kind = #portable.reduce_kind<"max">
// CHECK: "portable.argmax"
func.func @data_movement(%a: tensor<2x3xi16>, %b: tensor<2x1xi16>, %v: tensor<1x5x3xi8>, %i: tensor<1x2xi32>, %img: tensor<1x2x2x3xi8>) -> (tensor<3x2xi16>, tensor<32x3xi16>, tensor<2x8xi16>, tensor<4x5xi16>, tensor<1x2xi16>, tensor<4x6xi16>, tensor<2x3xi16>, tensor<1x2x3xi8>, tensor<1x4x4x3xi32>, tensor<1x3xi16>, tensor<3xi32>) {
  %0 = "portable.transpose"(%a) {perms = array<i32: 1, 0>} : (tensor<2x3xi16>) -> tensor<3x2xi16>
  %1 = "portable.concat"(%a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a, %a) {axis = 0 : i32, operandSegmentSizes = array<i32: 16, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>, tensor<2x3xi16>) -> tensor<32x3xi16>
  %2 = "portable.concat"(%a, %b, %a, %b) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0>} : (tensor<2x3xi16>, tensor<2x1xi16>, tensor<2x3xi16>, tensor<2x1xi16>) -> tensor<2x8xi16>
  %3 = "portable.pad"(%a) {padding = array<i32: 1, 1, 1, 1>, pad_value = 0 : i32} : (tensor<2x3xi16>) -> tensor<4x5xi16>
  %4 = "portable.slice"(%a) {start = array<i32: 1, 1>} : (tensor<2x3xi16>) -> tensor<1x2xi16>
  %5 = "portable.tile"(%a) : (tensor<2x3xi16>) -> tensor<4x6xi16>
  %6 = "portable.reverse"(%a) {axis = 1 : i32} : (tensor<2x3xi16>) -> tensor<2x3xi16>
  %7 = "portable.gather"(%v, %i) : (tensor<1x5x3xi8>, tensor<1x2xi32>) -> tensor<1x2x3xi8>
  %8 = "portable.resize"(%img) {scale = array<i32: 4, 2, 4, 2>, offset = array<i32: -1, -1>, border = array<i32: 1, 1>, mode = #portable.resize_mode<"bilinear">} : (tensor<1x2x2x3xi8>) -> tensor<1x4x4x3xi32>
  %9 = "portable.reduce"(%a) {kind = #portable.reduce_kind<"max">, axis = 0 : i32} : (tensor<2x3xi16>) -> tensor<1x3xi16>
  %10 = "portable.argmax"(%a) {axis = 0 : i32} : (tensor<2x3xi16>) -> tensor<3xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<3x2xi16>, tensor<32x3xi16>, tensor<2x8xi16>, tensor<4x5xi16>, tensor<1x2xi16>, tensor<4x6xi16>, tensor<2x3xi16>, tensor<1x2x3xi8>, tensor<1x4x4x3xi32>, tensor<1x3xi16>, tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @scatter
// CHECK: "portable.scatter"(%arg0, %arg1, %arg2) : (tensor<1x5x3xi8>, tensor<1x2xi32>, tensor<1x2x3xi8>) -> tensor<1x5x3xi8>
func.func @scatter(%v: tensor<1x5x3xi8>, %i: tensor<1x2xi32>, %x: tensor<1x2x3xi8>) -> tensor<1x5x3xi8> {
  %0 = "portable.scatter"(%v, %i, %x) : (tensor<1x5x3xi8>, tensor<1x2xi32>, tensor<1x2x3xi8>) -> tensor<1x5x3xi8>
  return %0 : tensor<1x5x3xi8>
}

// -----

// CHECK-LABEL: func.func @softmax_s16_lut
// CHECK: "portable.softmax_s16_lut"(%arg0, %arg1, %arg2) {mult = 1717986918 : i32, num_rows = 2 : i32, row_size = 4 : i32, shift = -2 : i32}
func.func @softmax_s16_lut(%x: tensor<2x4xi16>, %e: tensor<513xi16>, %r: tensor<513xi16>) -> tensor<2x4xi16> {
  %0 = "portable.softmax_s16_lut"(%x, %e, %r) {num_rows = 2 : i32, row_size = 4 : i32, mult = 1717986918 : i32, shift = -2 : i32} : (tensor<2x4xi16>, tensor<513xi16>, tensor<513xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}

// -----

// CHECK-LABEL: func.func @hypot
// CHECK: "portable.hypot"(%arg0, %arg1, %arg2) {a_zp = 0 : i32, b_zp = 0 : i32, headroom = 12 : i32, multiplier = 1073741824 : i32, output_zp = 0 : i32, shift = 30 : i32}
func.func @hypot(%a: tensor<2x4xi16>, %b: tensor<2x4xi16>, %t: tensor<513xi16>) -> tensor<2x4xi16> {
  %0 = "portable.hypot"(%a, %b, %t) {a_zp = 0 : i32, b_zp = 0 : i32, multiplier = 1073741824 : i32, shift = 30 : i32, headroom = 12 : i32, output_zp = 0 : i32} : (tensor<2x4xi16>, tensor<2x4xi16>, tensor<513xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}
