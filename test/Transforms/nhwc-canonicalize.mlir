// RUN: mcu-opt %s --split-input-file --mcu-nhwc-canonicalize | FileCheck %s

// Weights behind a transpose (torch-mlir's OIHW -> OHWI) become an OHWI constant.
// CHECK-LABEL: func.func @weights_repacked
// CHECK: "tosa.const"() <{values = dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x2xf32>}>
// CHECK-NOT: tosa.transpose %{{.*}} : (tensor<1x2x1x1xf32>)
func.func @weights_repacked(%arg0: tensor<1x2x2x2xf32>) -> tensor<1x2x2x1xf32> {
  %w = "tosa.const"() <{values = dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>}> : () -> tensor<1x2x1x1xf32>
  %wt = tosa.transpose %w {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x1x1xf32>) -> tensor<1x1x1x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %arg0, %wt, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
  return %c : tensor<1x2x2x1xf32>
}

// -----

// A chain of transposes is one; an identity chain is none; unit-dim moves are a reshape.
// CHECK-LABEL: func.func @chains
// CHECK: %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 0, 3, 2, 1>}
// CHECK: %[[R:.*]] = tosa.reshape %arg1
// CHECK: return %[[T]], %arg0, %[[R]]
func.func @chains(%arg0: tensor<1x2x3x4xf32>, %arg1: tensor<1x5x1x1xf32>) -> (tensor<1x4x3x2xf32>, tensor<1x2x3x4xf32>, tensor<1x1x1x5xf32>) {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x3x4x2xf32>) -> tensor<1x4x3x2xf32>
  %2 = tosa.transpose %0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x3x4x2xf32>) -> tensor<1x2x3x4xf32>
  %3 = tosa.transpose %arg1 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x5x1x1xf32>) -> tensor<1x1x1x5xf32>
  return %1, %2, %3 : tensor<1x4x3x2xf32>, tensor<1x2x3x4xf32>, tensor<1x1x1x5xf32>
}

// -----

// torch-mlir's nearest upsample: a gather over the flattened NCHW tensor with computed indices.
// It becomes an NHWC tosa.resize between explicit transposes.
// CHECK-LABEL: func.func @upsample_nearest
// CHECK-NOT: tosa.gather
// CHECK: %[[IN:.*]] = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x2x3xf32>) -> tensor<1x2x3x2xf32>
// CHECK: %[[UP:.*]] = tosa.resize %[[IN]], {{.*}} {mode = NEAREST_NEIGHBOR} : (tensor<1x2x3x2xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x4x6x2xf32>
// CHECK: tosa.transpose %[[UP]] {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x6x2xf32>) -> tensor<1x2x4x6xf32>
func.func @upsample_nearest(%arg0: tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32> {
  %s3 = tosa.const_shape {values = dense<[1, 12, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[1, 2, 4, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %idx = "tosa.const"() <{values = dense<[[0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 9, 9, 10, 10, 11, 11]]> : tensor<1x48xi32>}> : () -> tensor<1x48xi32>
  %v = tosa.reshape %arg0, %s3 : (tensor<1x2x2x3xf32>, !tosa.shape<3>) -> tensor<1x12x1xf32>
  %g = tosa.gather %v, %idx : (tensor<1x12x1xf32>, tensor<1x48xi32>) -> tensor<1x48x1xf32>
  %r = tosa.reshape %g, %s4 : (tensor<1x48x1xf32>, !tosa.shape<4>) -> tensor<1x2x4x6xf32>
  return %r : tensor<1x2x4x6xf32>
}

// -----

// A gather that is not an upsample is left alone.
// CHECK-LABEL: func.func @other_gather
// CHECK: tosa.gather
func.func @other_gather(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %s3 = tosa.const_shape {values = dense<[1, 4, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[1, 1, 2, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %idx = "tosa.const"() <{values = dense<[[3, 2, 1, 0]]> : tensor<1x4xi32>}> : () -> tensor<1x4xi32>
  %v = tosa.reshape %arg0, %s3 : (tensor<1x1x2x2xf32>, !tosa.shape<3>) -> tensor<1x4x1xf32>
  %g = tosa.gather %v, %idx : (tensor<1x4x1xf32>, tensor<1x4xi32>) -> tensor<1x4x1xf32>
  %r = tosa.reshape %g, %s4 : (tensor<1x4x1xf32>, !tosa.shape<4>) -> tensor<1x1x2x2xf32>
  return %r : tensor<1x1x2x2xf32>
}
