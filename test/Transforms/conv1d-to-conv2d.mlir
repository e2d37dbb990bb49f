// RUN: mcu-opt %s --split-input-file --mcu-conv1d-to-conv2d | FileCheck %s

// A strided conv1d with PyTorch's asymmetric padding: laid out as H=L, W=1 with the padding on H,
// weights repacked OHWI [O, K, 1, I] at compile time.
// CHECK-LABEL: func.func @strided
// CHECK-DAG: %[[W:.*]] = "tosa.const"() <{values = dense<{{.*}}> : tensor<2x3x1x4xf32>}>
// CHECK-DAG: %[[X:.*]] = tosa.reshape %arg0, %{{.*}} -> tensor<1x8x1x4xf32>
// CHECK: %[[C:.*]] = tosa.conv2d %[[X]], %[[W]], {{.*}} {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 0, 0>, stride = array<i64: 2, 1>} {{.*}} -> tensor<1x4x1x2xf32>
// CHECK: tosa.reshape %[[C]], %{{.*}} -> tensor<1x1x4x2xf32>
func.func @strided(%arg0: tensor<1x1x8x4xf32>) -> tensor<1x1x4x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]], [[[-1.0, -2.0, -3.0, -4.0], [-5.0, -6.0, -7.0, -8.0], [-9.0, -10.0, -11.0, -12.0]]]]> : tensor<2x1x3x4xf32>}> : () -> tensor<2x1x3x4xf32>
  %b = "tosa.const"() <{values = dense<[0.5, -0.5]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 2>} : (tensor<1x1x8x4xf32>, tensor<2x1x3x4xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x2xf32>
  return %c : tensor<1x1x4x2xf32>
}

// -----

// Dilation moves to H with the kernel.
// CHECK-LABEL: func.func @dilated_int8
// CHECK: tosa.conv2d {{.*}} {acc_type = i32, dilation = array<i64: 2, 1>, pad = array<i64: 2, 2, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x1x3xi8>, tensor<4x3x1x3xi8>
func.func @dilated_int8(%arg0: tensor<1x1x8x3xi8>) -> tensor<1x1x8x4xi32> {
  %w = "tosa.const"() <{values = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]], [[[1, 0, -1], [0, 1, 0], [-1, 0, 1]]], [[[3, 3, 3], [2, 2, 2], [1, 1, 1]]]]> : tensor<4x1x3x3xi8>}> : () -> tensor<4x1x3x3xi8>
  %b = "tosa.const"() <{values = dense<[1, 2, 3, 4]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %izp = "tosa.const"() <{values = dense<5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 2>, pad = array<i64: 0, 0, 2, 2>, stride = array<i64: 1, 1>} : (tensor<1x1x8x3xi8>, tensor<4x1x3x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x8x4xi32>
  return %c : tensor<1x1x8x4xi32>
}

// -----

// Depthwise conv1d: weights [1, K, C, M] become [K, 1, C, M].
// CHECK-LABEL: func.func @depthwise
// CHECK: tosa.depthwise_conv2d {{.*}} pad = array<i64: 1, 1, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x5x1x2xf32>, tensor<3x1x2x1xf32>
func.func @depthwise(%arg0: tensor<1x1x5x2xf32>) -> tensor<1x1x5x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[[1.0], [2.0]], [[3.0], [4.0]], [[5.0], [6.0]]]]> : tensor<1x3x2x1xf32>}> : () -> tensor<1x3x2x1xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.depthwise_conv2d %arg0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x1x5x2xf32>, tensor<1x3x2x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x5x2xf32>
  return %c : tensor<1x1x5x2xf32>
}

// -----

// in_channels = 1 (an STFT layer), pointwise kernel = 1, and 1-D max pooling take the same path.
// CHECK-LABEL: func.func @stft_pointwise_pool
// CHECK: tosa.conv2d {{.*}} stride = array<i64: 4, 1>} : (tensor<1x20x1x1xf32>, tensor<6x8x1x1xf32>
// CHECK: tosa.conv2d {{.*}} : (tensor<1x4x1x6xf32>, tensor<3x1x1x6xf32>
// CHECK: tosa.max_pool2d {{.*}} {kernel = array<i64: 2, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 1>} : (tensor<1x4x1x3xf32>) -> tensor<1x2x1x3xf32>
func.func @stft_pointwise_pool(%arg0: tensor<1x1x20x1xf32>) -> tensor<1x1x2x3xf32> {
  %w = "tosa.const"() <{values = dense<0.125> : tensor<6x1x8x1xf32>}> : () -> tensor<6x1x8x1xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<6xf32>}> : () -> tensor<6xf32>
  %w2 = "tosa.const"() <{values = dense<0.5> : tensor<3x1x1x6xf32>}> : () -> tensor<3x1x1x6xf32>
  %b2 = "tosa.const"() <{values = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 4>} : (tensor<1x1x20x1xf32>, tensor<6x1x8x1xf32>, tensor<6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x6xf32>
  %p = tosa.conv2d %c, %w2, %b2, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x4x6xf32>, tensor<3x1x1x6xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x3xf32>
  %m = tosa.max_pool2d %p {kernel = array<i64: 1, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 2>} : (tensor<1x1x4x3xf32>) -> tensor<1x1x2x3xf32>
  return %m : tensor<1x1x2x3xf32>
}

// -----

// 2-D convolutions are left alone.
// CHECK-LABEL: func.func @conv2d_untouched
// CHECK-NOT: tosa.reshape
// CHECK: tosa.conv2d %arg0
func.func @conv2d_untouched(%arg0: tensor<1x3x3x2xf32>) -> tensor<1x1x1x1xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x3x3x2xf32>}> : () -> tensor<1x3x3x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x1x1xf32>
  return %c : tensor<1x1x1x1xf32>
}

// -----

// An int16 conv1d's int48 accumulator is not reshaped (TOSA has no int48 reshape): its one rescale
// moves with the conv, and the view back is taken of the int16 result.
// CHECK-LABEL: func.func @int16_accumulator
// CHECK: %[[C:.*]] = tosa.conv2d {{.*}} -> tensor<1x6x1x2xi48>
// CHECK-NOT: tosa.reshape
// CHECK: %[[R:.*]] = tosa.rescale %[[C]], {{.*}} -> tensor<1x6x1x2xi16>
// CHECK: tosa.reshape %[[R]], %{{.*}} -> tensor<1x1x6x2xi16>
func.func @int16_accumulator(%arg0: tensor<1x1x6x3xi16>) -> tensor<1x1x6x2xi16> {
  %w = "tosa.const"() <{values = dense<[[[[1, 2, 3]]], [[[-1, 0, 1]]]]> : tensor<2x1x1x3xi8>}> : () -> tensor<2x1x1x3xi8>
  %b = "tosa.const"() <{values = dense<[10, -10]> : tensor<2xi48>}> : () -> tensor<2xi48>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x6x3xi16>, tensor<2x1x1x3xi8>, tensor<2xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x1x6x2xi48>
  %m = "tosa.const"() <{values = dense<[16384, 16384]> : tensor<2xi16>}> : () -> tensor<2xi16>
  %sh = "tosa.const"() <{values = dense<[20, 21]> : tensor<2xi8>}> : () -> tensor<2xi8>
  %inzp = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %outzp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %r = tosa.rescale %c, %m, %sh, %inzp, %outzp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<1x1x6x2xi48>, tensor<2xi16>, tensor<2xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<1x1x6x2xi16>
  return %r : tensor<1x1x6x2xi16>
}
