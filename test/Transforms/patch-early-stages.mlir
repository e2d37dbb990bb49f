// RUN: mcu-opt %s --split-input-file --mcu-patch-early-stages=bands=2 | FileCheck %s

// Two 3x3 convs (the second strided) in two bands of output rows: each band's input is a slice of
// rows (the halo rows recomputed), padded only where it meets the image's edge; the bands' outputs
// are concatenated into the tensor the rest of the function reads.
// CHECK-LABEL: func.func @two_convs
// CHECK-SAME: mcu.patched_bands = 2 : i64, mcu.patched_ops = 4 : i64
// CHECK: %[[S0:.*]] = tosa.slice %arg0, {{.*}} -> tensor<1x5x8x2xi8>
// CHECK: tosa.conv2d %[[S0]], {{.*}} pad = array<i64: 1, 0, 1, 1>{{.*}} -> tensor<1x4x8x4xi32>
// CHECK: tosa.conv2d {{.*}} pad = array<i64: 1, 0, 1, 0>{{.*}} -> tensor<1x2x4x4xi32>
// CHECK: %[[B0:.*]] = tosa.rescale {{.*}} -> tensor<1x2x4x4xi8>
// CHECK: %[[S1:.*]] = tosa.slice %arg0, {{.*}} -> tensor<1x6x8x2xi8>
// CHECK: tosa.conv2d %[[S1]], {{.*}} pad = array<i64: 0, 1, 1, 1>{{.*}} -> tensor<1x5x8x4xi32>
// CHECK: tosa.conv2d {{.*}} pad = array<i64: 0, 0, 1, 0>{{.*}} -> tensor<1x2x4x4xi32>
// CHECK: %[[B1:.*]] = tosa.rescale {{.*}} -> tensor<1x2x4x4xi8>
// CHECK: %[[T:.*]] = tosa.concat %[[B0]], %[[B1]] {axis = 1 : i32}
// CHECK: tosa.reshape %[[T]]
func.func @two_convs(%arg0: tensor<1x8x8x2xi8>) -> tensor<1x64xi8> {
    %w1 = "tosa.const"() {values = dense<1> : tensor<4x3x3x2xi8>} : () -> tensor<4x3x3x2xi8>
    %b1 = "tosa.const"() {values = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
    %w2 = "tosa.const"() {values = dense<-1> : tensor<4x3x3x4xi8>} : () -> tensor<4x3x3x4xi8>
    %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
    %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
    %s = "tosa.const"() {values = dense<33> : tensor<1xi8>} : () -> tensor<1xi8>
    %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
    %0 = tosa.conv2d %arg0, %w1, %b1, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x2xi8>, tensor<4x3x3x2xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x4xi32>
    %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x4xi8>
    %2 = tosa.conv2d %1, %w2, %b1, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 1, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x4xi32>
    %3 = tosa.rescale %2, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x4xi8>
    %shape = tosa.const_shape {values = dense<[1, 64]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %4 = tosa.reshape %3, %shape : (tensor<1x4x4x4xi8>, !tosa.shape<2>) -> tensor<1x64xi8>
    return %4 : tensor<1x64xi8>
}

// -----

// A residual block and a pool: the add reads the input's band rows, the conv the same rows and a
// halo; the input is sliced once per band (its hull) and the add reads a view of that slice.
// CHECK-LABEL: func.func @residual
// CHECK: %[[S0:.*]] = tosa.slice %arg0, {{.*}} -> tensor<1x5x8x4xi8>
// CHECK: tosa.conv2d %[[S0]], {{.*}} -> tensor<1x4x8x4xi32>
// CHECK: %[[R0:.*]] = tosa.slice %[[S0]], {{.*}} -> tensor<1x4x8x4xi8>
// CHECK: tosa.add %[[R0]], {{.*}} -> tensor<1x4x8x4xi8>
// CHECK: tosa.max_pool2d {{.*}} -> tensor<1x2x4x4xi8>
// CHECK: tosa.concat {{.*}} {axis = 1 : i32} : (tensor<1x2x4x4xi8>, tensor<1x2x4x4xi8>) -> tensor<1x4x4x4xi8>
func.func @residual(%arg0: tensor<1x8x8x4xi8>) -> tensor<1x64xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<4x3x3x4xi8>} : () -> tensor<4x3x3x4xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<33> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x4xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x4xi8>
  %2 = tosa.add %arg0, %1 : (tensor<1x8x8x4xi8>, tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>
  %3 = tosa.max_pool2d %2 {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xi8>) -> tensor<1x4x4x4xi8>
  %shape = tosa.const_shape {values = dense<[1, 64]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %4 = tosa.reshape %3, %shape : (tensor<1x4x4x4xi8>, !tosa.shape<2>) -> tensor<1x64xi8>
  return %4 : tensor<1x64xi8>
}

// -----

// A function that starts with an op whose rows are not its input's rows stays as it is.
// CHECK-LABEL: func.func @not_a_stage
// CHECK-NOT: mcu.patched_bands
// CHECK-NOT: tosa.concat
func.func @not_a_stage(%arg0: tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8> {
  %shape = tosa.const_shape {values = dense<[1, 8, 8, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %arg0, %shape : (tensor<1x8x8x4xi8>, !tosa.shape<4>) -> tensor<1x8x8x4xi8>
  %1 = tosa.add %0, %0 : (tensor<1x8x8x4xi8>, tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>
  return %1 : tensor<1x8x8x4xi8>
}

// -----

// A transpose that makes columns rows ends the stage before it: the conv runs in bands, the
// transpose reads the concatenated tensor.
// CHECK-LABEL: func.func @rows_become_columns
// CHECK-SAME: mcu.patched_ops = 2 : i64
// CHECK: %[[T:.*]] = tosa.concat {{.*}} {axis = 1 : i32}
// CHECK: tosa.transpose %[[T]]
func.func @rows_become_columns(%arg0: tensor<1x8x6x4xi8>) -> tensor<1x6x8x4xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<4x3x3x4xi8>} : () -> tensor<4x3x3x4xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<33> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x6x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x6x4xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x6x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x6x4xi8>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x8x6x4xi8>) -> tensor<1x6x8x4xi8>
  %3 = tosa.add %2, %2 : (tensor<1x6x8x4xi8>, tensor<1x6x8x4xi8>) -> tensor<1x6x8x4xi8>
  return %3 : tensor<1x6x8x4xi8>
}
