// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE

// Patterns of conversion/conv.py, matmul.py and pool.py (conv2d fusion, slices and groups are in
// tosa-to-cmsisnn.mlir, -grouped-conv.mlir and -slice-into-conv.mlir).

// depthwise_conv2d + rescale + clamp: one call; the HWCM weights become 1 x H x W x (C*M).
// CHECK-LABEL: func.func @depthwise$int8
// CHECK: "cmsisnn.depthwise_conv"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {activation = array<i32: -20, 100>, algorithm = #cmsisnn.conv_algorithm<"wrapper">, ch_mult = 2 : i32, dilation = array<i32: 1, 2>, input_offset = 7 : i32, mcu.source_op = "tosa.depthwise_conv2d+tosa.rescale+tosa.clamp", multiplier = array<i32: 1825655789, 1741801683, 1439915611, 2135629695>, output_offset = 5 : i32, padding = array<i32: 1, 0, 1, 1>, shift = array<i32: -6, -5, -8, -5>, stride = array<i32: 2, 1>} : (tensor<1x5x5x2xi8>, tensor<1x3x3x4xi8>, tensor<4xi32>) -> tensor<1x3x2x4xi8>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @depthwise$int8
// PORTABLE: "portable.depthwise_conv2d"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {activation = array<i32: -20, 100>, dilation = array<i32: 1, 2>, input_offset = 7 : i32, mcu.source_op = "tosa.depthwise_conv2d+tosa.rescale+tosa.clamp", multiplier = array<i32: 1825655789, 1741801683, 1439915611, 2135629695>, output_offset = 5 : i32, padding = array<i32: 1, 0, 1, 1>, shift = array<i32: -6, -5, -8, -5>, stride = array<i32: 2, 1>} : (tensor<1x5x5x2xi8>, tensor<1x3x3x4xi8>, tensor<4xi32>) -> tensor<1x3x2x4xi8>
// PORTABLE-NOT: = tosa.
func.func @depthwise$int8(%arg0: tensor<1x5x5x2xi8>) -> (tensor<1x3x2x4xi8>) {
  %w = "tosa.const"() {values = dense<[[[[ 17,   5],   [  7,  15]],  [[  3,  11],   [ 13, -11]],  [[-18,  -8],   [ -9,  14]]], [[[ 16, -20],   [ -1,  12]],  [[-15,  11],   [-16,  -2]],  [[ 12,  -8],   [ -7,  -9]]], [[[  8, -10],   [ 19,  -3]],  [[ -1,   0],   [  3,   2]],  [[  0,  19],   [ 12,  11]]]]> : tensor<3x3x2x2xi8>} : () -> tensor<3x3x2x2xi8>
  %b = "tosa.const"() {values = dense<[357, 112, -386, -457]> : tensor<4xi32>} : () -> tensor<4xi32>
  %izp = "tosa.const"() {values = dense<[-7]> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.depthwise_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 2>, pad = array<i64: 1, 1, 0, 1>, stride = array<i64: 2, 1>} : (tensor<1x5x5x2xi8>, tensor<3x3x2x2xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x2x4xi32>
  %rm = "tosa.const"() {values = dense<[1825655789, 1741801683, 1439915611, 2135629695]> : tensor<4xi32>} : () -> tensor<4xi32>
  %rs = "tosa.const"() {values = dense<[37, 36, 39, 36]> : tensor<4xi8>} : () -> tensor<4xi8>
  %riz = "tosa.const"() {values = dense<[0]> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<[5]> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x2x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x2x4xi8>
  %cl = tosa.clamp %r {min_val = -20 : i8, max_val = 100 : i8} : (tensor<1x3x2x4xi8>) -> tensor<1x3x2x4xi8>
  return %cl : tensor<1x3x2x4xi8>
}

// -----

// A per-tensor rescale gives one multiplier; no clamp leaves the int8 range.
// CHECK-LABEL: func.func @conv$int8_per_tensor_no_clamp
// CHECK: "cmsisnn.conv"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"wrapper">, dilation = array<i32: 1, 2>, input_offset = 7 : i32, mcu.source_op = "tosa.conv2d+tosa.rescale", multiplier = array<i32: 1592035092>, output_offset = 5 : i32, padding = array<i32: 1, 0, 1, 1>, shift = array<i32: -8>, stride = array<i32: 2, 1>} : (tensor<1x5x5x2xi8>, tensor<3x3x3x2xi8>, tensor<3xi32>) -> tensor<1x3x2x3xi8>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @conv$int8_per_tensor_no_clamp
// PORTABLE: "portable.conv2d"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {activation = array<i32: -128, 127>, dilation = array<i32: 1, 2>, input_offset = 7 : i32, mcu.source_op = "tosa.conv2d+tosa.rescale", multiplier = array<i32: 1592035092>, output_offset = 5 : i32, padding = array<i32: 1, 0, 1, 1>, shift = array<i32: -8>, stride = array<i32: 2, 1>} : (tensor<1x5x5x2xi8>, tensor<3x3x3x2xi8>, tensor<3xi32>) -> tensor<1x3x2x3xi8>
// PORTABLE-NOT: = tosa.
func.func @conv$int8_per_tensor_no_clamp(%arg0: tensor<1x5x5x2xi8>) -> (tensor<1x3x2x3xi8>) {
  %w = "tosa.const"() {values = dense<[[[[  4,  14],   [  7,  -6],   [  5,   3]],  [[-16, -18],   [  6,  -5],   [  3,  -8]],  [[-11, -14],   [ -5,  12],   [ -4,  -5]]], [[[  3,  19],   [ -5,   3],   [ -3,   4]],  [[ -3,   5],   [  1,   7],   [ 18, -14]],  [[  2,  -3],   [ -6, -11],   [-18,  -4]]], [[[ 13, -17],   [ -4,  18],   [ 18, -12]],  [[-20,   6],   [-20,  -8],   [ -1,  14]],  [[-17,   6],   [  1, -15],   [ 13,  13]]]]> : tensor<3x3x3x2xi8>} : () -> tensor<3x3x3x2xi8>
  %b = "tosa.const"() {values = dense<[106, 403, 460]> : tensor<3xi32>} : () -> tensor<3xi32>
  %izp = "tosa.const"() {values = dense<[-7]> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 2>, pad = array<i64: 1, 1, 0, 1>, stride = array<i64: 2, 1>} : (tensor<1x5x5x2xi8>, tensor<3x3x3x2xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x2x3xi32>
  %rm = "tosa.const"() {values = dense<[1592035092]> : tensor<1xi32>} : () -> tensor<1xi32>
  %rs = "tosa.const"() {values = dense<[39]> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<[0]> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<[5]> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x2x3xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x2x3xi8>
  return %r : tensor<1x3x2x3xi8>
}

// -----

// A transpose_conv2d whose output extends left of the first input column (out_pad left 1) is no
// arm_transpose_conv_s8 (it reads its columns from the padding on): a portable one to int32, then
// the rescale.
// CHECK-LABEL: func.func @transpose_conv$int8
// CHECK: "portable.transpose_conv2d"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {input_zp = 4 : i32, mcu.source_op = "tosa.transpose_conv2d", out_pad = array<i32: 0, 1>, stride = array<i32: 2, 1>, weight_zp = 0 : i32} : (tensor<1x4x3x3xi8>, tensor<5x3x2x3xi8>, tensor<5xi32>) -> tensor<1x8x5x5xi32>
// CHECK: "portable.rescale"(%{{[0-9]+}}) {double_round = 1 : i32, input_unsigned = 0 : i32, input_zp = 0 : i32, mcu.source_op = "tosa.rescale", multiplier = array<i32: 1918224351, 1939219767, 1803708102, 1800097243, 1406612422>, output_unsigned = 0 : i32, output_zp = -2 : i32, per_channel = 1 : i32, scale32 = 1 : i32, shift = array<i32: 39, 37, 38, 39, 39>} : (tensor<1x8x5x5xi32>) -> tensor<1x8x5x5xi8>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @transpose_conv$int8
// PORTABLE: "portable.transpose_conv2d"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {input_zp = 4 : i32, mcu.source_op = "tosa.transpose_conv2d", out_pad = array<i32: 0, 1>, stride = array<i32: 2, 1>, weight_zp = 0 : i32} : (tensor<1x4x3x3xi8>, tensor<5x3x2x3xi8>, tensor<5xi32>) -> tensor<1x8x5x5xi32>
// PORTABLE: "portable.rescale"(%{{[0-9]+}}) {double_round = 1 : i32, input_unsigned = 0 : i32, input_zp = 0 : i32, mcu.source_op = "tosa.rescale", multiplier = array<i32: 1918224351, 1939219767, 1803708102, 1800097243, 1406612422>, output_unsigned = 0 : i32, output_zp = -2 : i32, per_channel = 1 : i32, scale32 = 1 : i32, shift = array<i32: 39, 37, 38, 39, 39>} : (tensor<1x8x5x5xi32>) -> tensor<1x8x5x5xi8>
// PORTABLE-NOT: = tosa.
func.func @transpose_conv$int8(%arg0: tensor<1x4x3x3xi8>) -> (tensor<1x8x5x5xi8>) {
  %w = "tosa.const"() {values = dense<[[[[  1,  -4,  22],   [ 10, -10, -27]],  [[  5, -14,  11],   [ 21,  -9,  24]],  [[  1,   1,  15],   [ 17,  24,  29]]], [[[-21,  -6,  26],   [-12, -30,   4]],  [[ 15,  14,  18],   [  8, -22,  20]],  [[ -5,  20,  18],   [ 28, -30,  21]]], [[[  7,  -1,  17],   [ 27,   0, -25]],  [[ 13, -17, -17],   [-19, -19,  24]],  [[ -9, -24, -20],   [ -7, -10, -12]]], [[[ 26,  21,   4],   [ 29, -10, -22]],  [[-14, -25,  27],   [-17,  -4, -18]],  [[ 28, -21,   0],   [ 27,   1,  23]]], [[[ 23,  16,  14],   [  4,   4,  19]],  [[ -5,  26,  22],   [ -8,  -6,  12]],  [[ 25, -25, -26],   [-16,  -5, -21]]]]> : tensor<5x3x2x3xi8>} : () -> tensor<5x3x2x3xi8>
  %b = "tosa.const"() {values = dense<[11, 24, 270, 147, -150]> : tensor<5xi32>} : () -> tensor<5xi32>
  %izp = "tosa.const"() {values = dense<[4]> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.transpose_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, out_pad = array<i64: 0, -1, 1, 0>, stride = array<i64: 2, 1>} : (tensor<1x4x3x3xi8>, tensor<5x3x2x3xi8>, tensor<5xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x5x5xi32>
  %rm = "tosa.const"() {values = dense<[1918224351, 1939219767, 1803708102, 1800097243, 1406612422]> : tensor<5xi32>} : () -> tensor<5xi32>
  %rs = "tosa.const"() {values = dense<[39, 37, 38, 39, 39]> : tensor<5xi8>} : () -> tensor<5xi8>
  %riz = "tosa.const"() {values = dense<[0]> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<[-2]> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x5x5xi32>, tensor<5xi32>, tensor<5xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x5x5xi8>
  return %r : tensor<1x8x5x5xi8>
}

// -----

// A matmul by constant weights shared by every row is a fully connected layer (weights [O, K]).
// CHECK-LABEL: func.func @fully_connected$int8
// CHECK: "cmsisnn.fully_connected"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {activation = array<i32: -128, 127>, filter_offset = 0 : i32, input_offset = -11 : i32, mcu.source_op = "tosa.matmul+tosa.add+tosa.rescale", multiplier = array<i32: 1721457668, 1497890476, 1409095972, 1762256338, 1286091586, 1271788824, 2012266106, 1889242795, 1708309512, 1887305979>, output_offset = -3 : i32, shift = array<i32: -7, -9, -7, -8, -7, -8, -8, -8, -8, -7>} : (tensor<1x3x24xi8>, tensor<10x24xi8>, tensor<10xi32>) -> tensor<1x3x10xi8>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @fully_connected$int8
// PORTABLE: "portable.matmul"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {activation = array<i32: -128, 127>, lhs_offset = -11 : i32, mcu.source_op = "tosa.matmul+tosa.add+tosa.rescale", multiplier = array<i32: 1721457668, 1497890476, 1409095972, 1762256338, 1286091586, 1271788824, 2012266106, 1889242795, 1708309512, 1887305979>, output_offset = -3 : i32, rhs_offset = 0 : i32, shift = array<i32: -7, -9, -7, -8, -7, -8, -8, -8, -8, -7>} : (tensor<1x3x24xi8>, tensor<10x24xi8>, tensor<10xi32>) -> tensor<1x3x10xi8>
// PORTABLE-NOT: = tosa.
func.func @fully_connected$int8(%arg0: tensor<1x3x24xi8>) -> (tensor<1x3x10xi8>) {
  %w = "tosa.const"() {values = dense<[[[ 14, -27,  10,  -6, -30,  15,  11,  18,  23,  13],  [ 20, -24,  25,  24,  11,  18,  14,  22,  23,   1],  [ 18,  24, -13, -28, -20, -29,  -4, -29, -15, -15],  [ 12, -16,  26, -19,  28,   4, -16, -28, -12,   5],  [-24, -21, -24,  10, -25, -29,  -3, -12,   4,  26],  [ 21,   2,   8,  18,  -4,   9, -18,   6, -16, -19],  [ 15,   4,  -8, -28, -16,  18,  -2,  27,  24,  21],  [-30, -27,   4, -10,  20, -11, -21, -24, -12,   7],  [-23,  17, -12, -12,   9,  21,  -4,  17, -12, -23],  [ 19,  16,  15,  22,  -1, -19,   5,   4,  -7,   8],  [-15,   6,  17, -25,  -3,   9, -27,   7,  24,  19],  [ 11,  18,  -9, -11, -25,  13, -12,  22,  -3,  23],  [-22, -21, -10, -29,  -1,   9,   9, -18, -21,   3],  [  7,  26,  23,  -8, -21, -15,  22,  -3,  29,   9],  [  5, -24,   5,  -8,  20, -22, -19,   9,  10,  19],  [  1,  -8, -12,  -8,   9,   2, -13, -18,  12, -16],  [-18, -11,  21,  -3,   5, -26, -10,  15,  16,   4],  [ 22, -13, -21, -26, -19,  15,  24, -23,   0, -23],  [ 20, -23,   8, -26,  14,  24,  13, -14,  20, -12],  [ 15,  19,  -1,   7,  21, -19, -29,  -4, -20,  23],  [ 22,  -8, -12,  12,  -3, -25,   9,  13, -26,  16],  [  2,  19,  21,  10, -10,  -8,  13, -27, -17,   1],  [ 26,  15,  18, -19, -14, -15,  14,   2, -18,  14],  [  8,  23,   3, -23,  23, -19, -27,  17,  -3,   8]]]> : tensor<1x24x10xi8>} : () -> tensor<1x24x10xi8>
  %azp = "tosa.const"() {values = dense<[11]> : tensor<1xi8>} : () -> tensor<1xi8>
  %bzp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %azp, %bzp : (tensor<1x3x24xi8>, tensor<1x24x10xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x10xi32>
  %bias = "tosa.const"() {values = dense<[[[-1482,   883,  -379,  1987,   543,  1756,  1171,  1372, -1649,  1108]]]> : tensor<1x1x10xi32>} : () -> tensor<1x1x10xi32>
  %ab = tosa.add %mm, %bias : (tensor<1x3x10xi32>, tensor<1x1x10xi32>) -> tensor<1x3x10xi32>
  %rm = "tosa.const"() {values = dense<[1721457668, 1497890476, 1409095972, 1762256338, 1286091586, 1271788824, 2012266106, 1889242795, 1708309512, 1887305979]> : tensor<10xi32>} : () -> tensor<10xi32>
  %rs = "tosa.const"() {values = dense<[38, 40, 38, 39, 38, 39, 39, 39, 39, 38]> : tensor<10xi8>} : () -> tensor<10xi8>
  %riz = "tosa.const"() {values = dense<[0]> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<[-3]> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %ab, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x10xi32>, tensor<10xi32>, tensor<10xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x10xi8>
  return %r : tensor<1x3x10xi8>
}

// -----

// A matmul of two activations (no rescale after it) stays a matmul to int32.
// CHECK-LABEL: func.func @batch_matmul$int8
// CHECK: "portable.matmul"(%arg0, %arg1, %{{[0-9]+}}) {activation = array<i32: -2147483648, 2147483647>, lhs_offset = -3 : i32, mcu.source_op = "tosa.matmul", multiplier = array<i32>, output_offset = 0 : i32, rhs_offset = 2 : i32, shift = array<i32>} : (tensor<2x3x5xi8>, tensor<2x5x4xi8>, tensor<4xi32>) -> tensor<2x3x4xi32>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @batch_matmul$int8
// PORTABLE: "portable.matmul"(%arg0, %arg1, %{{[0-9]+}}) {activation = array<i32: -2147483648, 2147483647>, lhs_offset = -3 : i32, mcu.source_op = "tosa.matmul", multiplier = array<i32>, output_offset = 0 : i32, rhs_offset = 2 : i32, shift = array<i32>} : (tensor<2x3x5xi8>, tensor<2x5x4xi8>, tensor<4xi32>) -> tensor<2x3x4xi32>
// PORTABLE-NOT: = tosa.
func.func @batch_matmul$int8(%arg0: tensor<2x3x5xi8>, %arg1: tensor<2x5x4xi8>) -> (tensor<2x3x4xi32>) {
  %azp = "tosa.const"() {values = dense<[3]> : tensor<1xi8>} : () -> tensor<1xi8>
  %bzp = "tosa.const"() {values = dense<[-2]> : tensor<1xi8>} : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %arg1, %azp, %bzp : (tensor<2x3x5xi8>, tensor<2x5x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x4xi32>
  return %mm : tensor<2x3x4xi32>
}

// -----

// Pools with their clamp; padding [top, left, bottom, right].
// CHECK-LABEL: func.func @avg_pool$int8
// CHECK: "cmsisnn.avg_pool"(%arg0) {activation = array<i32: -100, 90>, kernel_size = array<i32: 3, 3>, mcu.source_op = "tosa.avg_pool2d+tosa.clamp", padding = array<i32: 1, 1, 0, 1>, stride = array<i32: 2, 2>} : (tensor<1x8x9x3xi8>) -> tensor<1x4x5x3xi8>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @avg_pool$int8
// PORTABLE: "portable.avg_pool2d"(%arg0) {activation = array<i32: -100, 90>, input_zp = 0 : i32, kernel_size = array<i32: 3, 3>, mcu.source_op = "tosa.avg_pool2d+tosa.clamp", output_zp = 0 : i32, padding = array<i32: 1, 1, 0, 1>, stride = array<i32: 2, 2>} : (tensor<1x8x9x3xi8>) -> tensor<1x4x5x3xi8>
// PORTABLE-NOT: = tosa.
func.func @avg_pool$int8(%arg0: tensor<1x8x9x3xi8>) -> (tensor<1x4x5x3xi8>) {
  %izp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %ozp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %p = tosa.avg_pool2d %arg0, %izp, %ozp {acc_type = i32, kernel = array<i64: 3, 3>, pad = array<i64: 1, 0, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x9x3xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x5x3xi8>
  %c = tosa.clamp %p {min_val = -100 : i8, max_val = 90 : i8} : (tensor<1x4x5x3xi8>) -> tensor<1x4x5x3xi8>
  return %c : tensor<1x4x5x3xi8>
}

// -----

// CHECK-LABEL: func.func @max_pool$int8
// CHECK: "cmsisnn.max_pool"(%arg0) {activation = array<i32: -100, 90>, kernel_size = array<i32: 3, 3>, mcu.source_op = "tosa.max_pool2d+tosa.clamp", padding = array<i32: 1, 1, 0, 1>, stride = array<i32: 2, 2>} : (tensor<1x8x9x3xi8>) -> tensor<1x4x5x3xi8>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @max_pool$int8
// PORTABLE: "portable.max_pool2d"(%arg0) {activation = array<i32: -100, 90>, input_zp = 0 : i32, kernel_size = array<i32: 3, 3>, mcu.source_op = "tosa.max_pool2d+tosa.clamp", output_zp = 0 : i32, padding = array<i32: 1, 1, 0, 1>, stride = array<i32: 2, 2>} : (tensor<1x8x9x3xi8>) -> tensor<1x4x5x3xi8>
// PORTABLE-NOT: = tosa.
func.func @max_pool$int8(%arg0: tensor<1x8x9x3xi8>) -> (tensor<1x4x5x3xi8>) {
  %p = tosa.max_pool2d %arg0 {kernel = array<i64: 3, 3>, pad = array<i64: 1, 0, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x9x3xi8>) -> tensor<1x4x5x3xi8>
  %c = tosa.clamp %p {min_val = -100 : i8, max_val = 90 : i8} : (tensor<1x4x5x3xi8>) -> tensor<1x4x5x3xi8>
  return %c : tensor<1x4x5x3xi8>
}

// -----

// Asymmetric weights (a weight zero point, which TOSA allows and CMSIS-NN does not): the portable
// kernel takes minus the zero point as `weight_offset`, and a CMSIS-NN build records why it fell back.
// CHECK-LABEL: func.func @conv$weight_zero_point
// CHECK: "portable.conv2d"{{.*}}mcu.fallback = "weight zero point 3: CMSIS-NN takes symmetric weights only"{{.*}}weight_offset = -3 : i32
// CHECK-NOT: cmsisnn.conv
// PORTABLE-LABEL: func.func @conv$weight_zero_point
// PORTABLE: "portable.conv2d"
// PORTABLE-NOT: mcu.fallback
// PORTABLE-SAME: weight_offset = -3 : i32
func.func @conv$weight_zero_point(%arg0: tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %izp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %rm = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %rs = "tosa.const"() {values = dense<33> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  return %r : tensor<1x4x4x2xi8>
}

// -----

// A requantization that scales up (TOSA shift 29 < 31: arm_nn_requantize shifts left by 2 first)
// is the same integers while the shifted accumulator fits in 32 bits: here |acc| <= 2 x 100 x 255
// + 7, so the conv runs on CMSIS-NN; with weights of 127 and a bias of 2**29 it could overflow and
// stays portable, saying why.
// CHECK-LABEL: func.func @conv$scale_up
// CHECK: "cmsisnn.conv"{{.*}}shift = array<i32: 2>
// CHECK: "portable.conv2d"{{.*}}mcu.fallback = "no requantization after it that CMSIS-NN computes bit-exactly
func.func @conv$scale_up(%arg0: tensor<1x4x4x2xi8>) -> (tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>) {
  %w = "tosa.const"() {values = dense<100> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %b = "tosa.const"() {values = dense<7> : tensor<2xi32>} : () -> tensor<2xi32>
  %w2 = "tosa.const"() {values = dense<127> : tensor<2x1x1x2xi8>} : () -> tensor<2x1x1x2xi8>
  %b2 = "tosa.const"() {values = dense<536870912> : tensor<2xi32>} : () -> tensor<2xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %acc2 = tosa.conv2d %arg0, %w2, %b2, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  %rm = "tosa.const"() {values = dense<1226902588> : tensor<1xi32>} : () -> tensor<1xi32>
  %rs = "tosa.const"() {values = dense<29> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  %r2 = tosa.rescale %acc2, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x2xi8>
  return %r, %r2 : tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8>
}

// -----

// conv3d: a portable kernel to raw accumulators, any zero points; the [1] bias stands for every
// output channel and is expanded.
// CHECK-LABEL: func.func @conv3d$int8
// CHECK: "portable.conv3d"(%arg0, %{{[0-9]+}}, %{{[0-9]+}}) {dilation = array<i32: 1, 1, 2>, input_zp = 5 : i32, mcu.source_op = "tosa.conv3d", padding = array<i32: 1, 1, 0, 0, 1, 0>, stride = array<i32: 1, 2, 1>, weight_zp = -3 : i32} : (tensor<1x3x4x5x2xi8>, tensor<4x2x2x2x2xi8>, tensor<4xi32>) -> tensor<1x4x2x4x4xi32>
// PORTABLE-LABEL: func.func @conv3d$int8
// PORTABLE: "portable.conv3d"
func.func @conv3d$int8(%arg0: tensor<1x3x4x5x2xi8>) -> tensor<1x4x2x4x4xi32> {
  %w = "tosa.const"() {values = dense<2> : tensor<4x2x2x2x2xi8>} : () -> tensor<4x2x2x2x2xi8>
  %b = "tosa.const"() {values = dense<7> : tensor<1xi32>} : () -> tensor<1xi32>
  %izp = "tosa.const"() {values = dense<5> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<-3> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv3d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1, 2>, pad = array<i64: 1, 1, 0, 0, 1, 0>, stride = array<i64: 1, 2, 1>} : (tensor<1x3x4x5x2xi8>, tensor<4x2x2x2x2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x2x4x4xi32>
  return %0 : tensor<1x4x2x4x4xi32>
}

// -----

// arm_transpose_conv_s8 with the rescale: padding 1 (out_pad -1) on top and left, the output
// the rows and columns its rolling buffer fills (8 = 4 * 2 - 1 + the last row's one extra).
// CHECK-LABEL: func.func @transpose_conv$cmsis
// CHECK: "cmsisnn.transpose_conv"(%arg0, %{{[0-9]+}}, %{{[0-9]+}})
// CHECK-SAME: activation = array<i32: -128, 127>, input_offset = -4 : i32
// CHECK-SAME: output_offset = -2 : i32, padding = array<i32: 1, 1>
// CHECK-SAME: stride = array<i32: 2, 2>
// CHECK-SAME: -> tensor<1x8x6x2xi8>
// CHECK-NOT: = tosa.
// PORTABLE-LABEL: func.func @transpose_conv$cmsis
// PORTABLE: "portable.transpose_conv2d"
func.func @transpose_conv$cmsis(%arg0: tensor<1x4x3x3xi8>) -> (tensor<1x8x6x2xi8>) {
  %w = "tosa.const"() {values = dense<3> : tensor<2x3x3x3xi8>} : () -> tensor<2x3x3x3xi8>
  %b = "tosa.const"() {values = dense<[11, -24]> : tensor<2xi32>} : () -> tensor<2xi32>
  %izp = "tosa.const"() {values = dense<[4]> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {values = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.transpose_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, out_pad = array<i64: -1, 0, -1, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x3x3xi8>, tensor<2x3x3x3xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x6x2xi32>
  %rm = "tosa.const"() {values = dense<[1918224351, 1939219767]> : tensor<2xi32>} : () -> tensor<2xi32>
  %rs = "tosa.const"() {values = dense<[39, 37]> : tensor<2xi8>} : () -> tensor<2xi8>
  %riz = "tosa.const"() {values = dense<[0]> : tensor<1xi32>} : () -> tensor<1xi32>
  %roz = "tosa.const"() {values = dense<[-2]> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x6x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x6x2xi8>
  return %r : tensor<1x8x6x2xi8>
}

// -----

// int16 transpose_conv2d: int48 accumulators (int64 in the C), int48 bias.
// CHECK-LABEL: func.func @transpose_conv$int16
// CHECK: "portable.transpose_conv2d"{{.*}} : (tensor<1x2x2x3xi16>, tensor<2x2x2x3xi8>, tensor<2xi48>) -> tensor<1x3x3x2xi48>
func.func @transpose_conv$int16(%arg0: tensor<1x2x2x3xi16>) -> tensor<1x3x3x2xi48> {
  %w = "tosa.const"() {values = dense<1> : tensor<2x2x2x3xi8>} : () -> tensor<2x2x2x3xi8>
  %b = "tosa.const"() {values = dense<[1, -1]> : tensor<2xi48>} : () -> tensor<2xi48>
  %izp = "tosa.const"() {values = dense<0> : tensor<1xi16>} : () -> tensor<1xi16>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.transpose_conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i48, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x3xi16>, tensor<2x2x2x3xi8>, tensor<2xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x3x3x2xi48>
  return %0 : tensor<1x3x3x2xi48>
}

// -----

// An average pool with zero points (equal, non-zero): arm_avgpool_s8 has none and a tie could round
// the other way, so even a CMSIS-NN build runs the portable kernel, and says why.
// CHECK-LABEL: func.func @avg_pool$zero_points
// CHECK: "portable.avg_pool2d"{{.*}}input_zp = 3 : i32{{.*}}mcu.fallback = "zero points 3 / 3: arm_avgpool has none
// CHECK-NOT: cmsisnn.avg_pool
func.func @avg_pool$zero_points(%arg0: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %zp = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %p = tosa.avg_pool2d %arg0, %zp, %zp {acc_type = i32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x2xi8>
  return %p : tensor<1x2x2x2xi8>
}

// -----

// int16: CMSIS-NN's s16 convolutions sum input x weight in int32 (the int64 bias comes after):
// 516 weights of 127 keep |sum| <= 32768 x 65532 < 2**31 and run on arm_convolve_wrapper_s16;
// 517 could wrap and stay portable (int64 sums), saying why.
// CHECK-LABEL: func.func @conv$int16_sums
// CHECK: "cmsisnn.conv"{{.*}} -> tensor<1x2x1x1xi16>
// CHECK: "portable.conv2d"{{.*}}mcu.fallback = "its sums of input x weight can pass int32{{.*}} -> tensor<1x2x1x1xi16>
func.func @conv$int16_sums(%arg0: tensor<1x2x1x516xi16>, %arg1: tensor<1x2x1x517xi16>) -> (tensor<1x2x1x1xi16>, tensor<1x2x1x1xi16>) {
  %w = "tosa.const"() {values = dense<127> : tensor<1x1x1x516xi8>} : () -> tensor<1x1x1x516xi8>
  %w2 = "tosa.const"() {values = dense<127> : tensor<1x1x1x517xi8>} : () -> tensor<1x1x1x517xi8>
  %b = "tosa.const"() {values = dense<3> : tensor<1xi48>} : () -> tensor<1xi48>
  %izp = "tosa.const"() {values = dense<0> : tensor<1xi16>} : () -> tensor<1xi16>
  %wzp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %acc = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x1x516xi16>, tensor<1x1x1x516xi8>, tensor<1xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x2x1x1xi48>
  %acc2 = tosa.conv2d %arg1, %w2, %b, %izp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x1x517xi16>, tensor<1x1x1x517xi8>, tensor<1xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x2x1x1xi48>
  %rm = "tosa.const"() {values = dense<16384> : tensor<1xi16>} : () -> tensor<1xi16>
  %rs = "tosa.const"() {values = dense<30> : tensor<1xi8>} : () -> tensor<1xi8>
  %riz = "tosa.const"() {values = dense<0> : tensor<1xi48>} : () -> tensor<1xi48>
  %roz = "tosa.const"() {values = dense<0> : tensor<1xi16>} : () -> tensor<1xi16>
  %r = tosa.rescale %acc, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<1x2x1x1xi48>, tensor<1xi16>, tensor<1xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<1x2x1x1xi16>
  %r2 = tosa.rescale %acc2, %rm, %rs, %riz, %roz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<1x2x1x1xi48>, tensor<1xi16>, tensor<1xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<1x2x1x1xi16>
  return %r, %r2 : tensor<1x2x1x1xi16>, tensor<1x2x1x1xi16>
}
