// RUN: mcu-opt %s --split-input-file --mcu-fold-transposes | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-fold-transposes=io-layout=nhwc | FileCheck %s --check-prefix=NHWC

// An inverse pair cancels.
// CHECK-LABEL: func.func @inverse_pair
// CHECK-NOT: tosa.transpose
// CHECK: return %arg0
func.func @inverse_pair(%arg0: tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
  return %1 : tensor<1x3x4x5xf32>
}

// -----

// A cascade composes into one transpose.
// CHECK-LABEL: func.func @cascade
// CHECK: tosa.transpose %arg0 {perms = array<i32: 0, 3, 2, 1>}
// CHECK-NOT: tosa.transpose
func.func @cascade(%arg0: tensor<1x3x4x5xf32>) -> tensor<1x5x4x3xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x4x5x3xf32>) -> tensor<1x5x4x3xf32>
  return %1 : tensor<1x5x4x3xf32>
}

// -----

// An int8 rescale chain between two convs: the transposes cancel through rescale, clamp and table.
// CHECK-LABEL: func.func @rescale_chain
// CHECK-NOT: tosa.transpose
// CHECK: tosa.rescale %{{.*}} : (tensor<1x4x4x8xi32>
// CHECK: tosa.clamp %{{.*}} : (tensor<1x4x4x8xi8>)
// CHECK: tosa.table %{{.*}} : (tensor<1x4x4x8xi8>
// CHECK: tosa.rescale %{{.*}} : (tensor<1x4x4x8xi8>
// CHECK-NOT: tosa.transpose
// NHWC-LABEL: func.func @rescale_chain
// NHWC-NOT: tosa.transpose
func.func @rescale_chain(%arg0: tensor<1x4x4x8xi8>) -> tensor<1x4x4x8xi32> {
  %w = "tosa.const"() <{values = dense<3> : tensor<8x1x1x8xi8>}> : () -> tensor<8x1x1x8xi8>
  %b = "tosa.const"() <{values = dense<7> : tensor<8xi32>}> : () -> tensor<8xi32>
  %zp8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<38> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m2 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s2 = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %table = "tosa.const"() <{values = dense<5> : tensor<256xi8>}> : () -> tensor<256xi8>
  %c0 = tosa.conv2d %arg0, %w, %b, %zp8, %zp8 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<8x1x1x8xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi32>
  %t0 = tosa.transpose %c0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xi32>) -> tensor<1x8x4x4xi32>
  %r0 = tosa.rescale %t0, %m, %s, %zp32, %zp8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x4x4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x4x4xi8>
  %cl = tosa.clamp %r0 {max_val = 100 : i8, min_val = -20 : i8} : (tensor<1x8x4x4xi8>) -> tensor<1x8x4x4xi8>
  %tb = tosa.table %cl, %table : (tensor<1x8x4x4xi8>, tensor<256xi8>) -> tensor<1x8x4x4xi8>
  %r1 = tosa.rescale %tb, %m2, %s2, %zp8, %zp8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x4x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x4x4xi8>
  %t1 = tosa.transpose %r1 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xi8>) -> tensor<1x4x4x8xi8>
  %c1 = tosa.conv2d %t1, %w, %b, %zp8, %zp8 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<8x1x1x8xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x8xi32>
  return %c1 : tensor<1x4x4x8xi32>
}

// -----

// Elementwise branching: the NCHW value forks into two elementwise branches that join again.
// CHECK-LABEL: func.func @elementwise_branching
// CHECK-NOT: tosa.transpose
// CHECK: tosa.sigmoid %{{.*}} : (tensor<1x4x4x8xf32>)
// CHECK: tosa.tanh %{{.*}} : (tensor<1x4x4x8xf32>)
// CHECK: tosa.add %{{.*}} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>)
// CHECK-NOT: tosa.transpose
func.func @elementwise_branching(%arg0: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %t0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %a = tosa.sigmoid %t0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %b = tosa.tanh %t0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = tosa.add %a, %b : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %t1 = tosa.transpose %c {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  return %t1 : tensor<1x4x4x8xf32>
}

// -----

// Downward fork: one transposed producer, several users each transposing back.
// CHECK-LABEL: func.func @downward_fork
// CHECK-NOT: tosa.transpose
// CHECK: return
func.func @downward_fork(%arg0: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %t0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %a = tosa.exp %t0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %ta = tosa.transpose %a {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  %b = tosa.abs %t0 : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %tb = tosa.transpose %b {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  %pa = tosa.max_pool2d %ta {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>) -> tensor<1x3x3x8xf32>
  return %ta, %tb : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}

// -----

// Upward fork (a join): two NHWC producers go to NCHW, meet in a broadcasting mul and a sub,
// and go back to NHWC.
// CHECK-LABEL: func.func @upward_fork
// CHECK-NOT: tosa.transpose
// CHECK: tosa.mul %{{.*}} : (tensor<1x4x4x8xf32>, tensor<1x1x1x8xf32>, tensor<1xi8>)
// CHECK: tosa.sub %{{.*}} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>)
// CHECK-NOT: tosa.transpose
func.func @upward_fork(%arg0: tensor<1x4x4x8xf32>, %arg1: tensor<1x1x1x8xf32>) -> tensor<1x4x4x8xf32> {
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %t0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %t1 = tosa.transpose %arg1 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x1x8xf32>) -> tensor<1x8x1x1xf32>
  %m = tosa.mul %t0, %t1, %sh : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>, tensor<1xi8>) -> tensor<1x8x4x4xf32>
  %s = tosa.sub %m, %t0 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %t2 = tosa.transpose %s {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  return %t2 : tensor<1x4x4x8xf32>
}

// -----

// A transpose feeding both a conv and an add (NCHW input and output): one transpose in, one out.
// CHECK-LABEL: func.func @conv_and_add
// CHECK: tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>}
// CHECK: tosa.conv2d
// CHECK-COUNT-1: tosa.transpose
// CHECK-NOT: tosa.transpose
// NHWC-LABEL: func.func @conv_and_add
// NHWC-SAME: %arg0: tensor<1x4x4x8xf32> {mcu.layout = "nhwc"}
// NHWC-SAME: -> (tensor<1x4x4x8xf32> {mcu.layout = "nhwc"})
// NHWC-NOT: tosa.transpose
func.func @conv_and_add(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<8x3x3x8xf32>}> : () -> tensor<8x3x3x8xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  %c = tosa.conv2d %t0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>, tensor<8x3x3x8xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x8xf32>
  %t1 = tosa.transpose %c {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %a = tosa.add %t1, %arg0 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %a : tensor<1x8x4x4xf32>
}

// -----

// Constants take the layout of their users: the per-channel constant is transposed at compile time.
// CHECK-LABEL: func.func @into_constant
// CHECK-DAG: "tosa.const"() <{values = dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00]]]]> : tensor<1x1x1x3xf32>}>
// CHECK-NOT: tosa.transpose
func.func @into_constant(%arg0: tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32> {
  %k = "tosa.const"() <{values = dense<[[[[1.0]], [[2.0]], [[3.0]]]]> : tensor<1x3x1x1xf32>}> : () -> tensor<1x3x1x1xf32>
  %t0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x2x3xf32>) -> tensor<1x3x2x2xf32>
  %a = tosa.add %t0, %k : (tensor<1x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x2x2xf32>
  %t1 = tosa.transpose %a {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x3xf32>
  return %t1 : tensor<1x2x2x3xf32>
}

// -----

// A dense_resource weight behind a transpose is repacked at compile time.
// CHECK-LABEL: func.func @resource_weight
// CHECK: "tosa.const"() <{values = dense<{{.*}}> : tensor<2x1x1x3xf32>}>
// CHECK-NOT: tosa.transpose
func.func @resource_weight(%arg0: tensor<1x2x2x3xf32>) -> tensor<1x2x2x2xf32> {
  %w = "tosa.const"() <{values = dense_resource<weights> : tensor<2x3x1x1xf32>}> : () -> tensor<2x3x1x1xf32>
  %wt = tosa.transpose %w {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x3x1x1xf32>) -> tensor<2x1x1x3xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %arg0, %wt, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x3xf32>, tensor<2x1x1x3xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}
{-#
  dialect_resources: { builtin: { weights: "0x040000000000803F0000004000004040000080400000A0400000C040" } }
#-}

// -----

// Concat, reduce, slice and pad have their axes remapped.
// CHECK-LABEL: func.func @axes_remapped
// CHECK-NOT: tosa.transpose
// CHECK: tosa.concat %{{.*}} {axis = 3 : i32} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x16xf32>
// CHECK: tosa.reduce_max %{{.*}} {axis = 3 : i32} : (tensor<1x4x4x16xf32>) -> tensor<1x4x4x1xf32>
// CHECK: tosa.slice %{{.*}} : (tensor<1x4x4x16xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x4xf32>
// CHECK: tosa.pad %{{.*}} : (tensor<1x4x4x4xf32>, !tosa.shape<8>, tensor<1xf32>) -> tensor<1x6x4x4xf32>
// CHECK-NOT: tosa.transpose
func.func @axes_remapped(%arg0: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x1xf32>, tensor<1x6x4x4xf32>) {
  %t0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %cat = tosa.concat %t0, %t0 {axis = 1 : i32} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %red = tosa.reduce_max %cat {axis = 1 : i32} : (tensor<1x16x4x4xf32>) -> tensor<1x1x4x4xf32>
  %start = tosa.const_shape {values = dense<[0, 4, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %size = tosa.const_shape {values = dense<[1, 4, 4, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %sl = tosa.slice %cat, %start, %size : (tensor<1x16x4x4xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x4xf32>
  %padding = tosa.const_shape {values = dense<[0, 0, 0, 0, 1, 1, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %pv = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %pd = tosa.pad %sl, %padding, %pv : (tensor<1x4x4x4xf32>, !tosa.shape<8>, tensor<1xf32>) -> tensor<1x4x6x4xf32>
  %t1 = tosa.transpose %red {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x4x4x1xf32>
  %t2 = tosa.transpose %pd {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x6x4xf32>) -> tensor<1x6x4x4xf32>
  return %t1, %t2 : tensor<1x4x4x1xf32>, tensor<1x6x4x4xf32>
}

// -----

// Reshapes that change rank (conv1d's views) are rewritten for the new layout; the clamp moves
// onto the 4-D tensor and the views cancel.
// CHECK-LABEL: func.func @rank_changing_reshape
// CHECK-NEXT: tosa.clamp %arg0 {{.*}} : (tensor<1x1x6x4xf32>)
// CHECK-NEXT: return
func.func @rank_changing_reshape(%arg0: tensor<1x1x6x4xf32>) -> tensor<1x1x6x4xf32> {
  %s3 = tosa.const_shape {values = dense<[1, 4, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[1, 4, 1, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %t0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x6x4xf32>) -> tensor<1x4x1x6xf32>
  %r0 = tosa.reshape %t0, %s3 : (tensor<1x4x1x6xf32>, !tosa.shape<3>) -> tensor<1x4x6xf32>
  %c = tosa.clamp %r0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %r1 = tosa.reshape %c, %s4 : (tensor<1x4x6xf32>, !tosa.shape<4>) -> tensor<1x4x1x6xf32>
  %t1 = tosa.transpose %r1 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x1x6xf32>) -> tensor<1x1x6x4xf32>
  return %t1 : tensor<1x1x6x4xf32>
}

// -----

// A transpose that only moves unit dims is a reshape.
// CHECK-LABEL: func.func @unit_dims_only
// CHECK-NOT: tosa.transpose
// CHECK: tosa.reshape %arg0, %{{.*}} -> tensor<1x1x1x8xf32>
func.func @unit_dims_only(%arg0: tensor<1x8x1x1xf32>) -> tensor<1x1x1x8xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x1x1xf32>) -> tensor<1x1x1x8xf32>
  return %0 : tensor<1x1x1x8xf32>
}

// -----

// A per-channel rescale scales along the innermost dim: it stays where that dim is the channel.
// CHECK-LABEL: func.func @per_channel_rescale_stays_nhwc
// CHECK: tosa.rescale %{{.*}} : (tensor<1x2x2x4xi32>
// CHECK: tosa.transpose
// CHECK-NOT: tosa.transpose
func.func @per_channel_rescale_stays_nhwc(%arg0: tensor<1x2x2x4xi32>) -> tensor<1x4x2x2xi8> {
  %m = "tosa.const"() <{values = dense<[1073741824, 1518500250, 1073741824, 1518500250]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %s = "tosa.const"() <{values = dense<[31, 32, 33, 34]> : tensor<4xi8>}> : () -> tensor<4xi8>
  %zp32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %zp8 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %arg0, %m, %s, %zp32, %zp8 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x2x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x4xi8>
  %t = tosa.transpose %r {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x2x4xi8>) -> tensor<1x4x2x2xi8>
  return %t : tensor<1x4x2x2xi8>
}

// -----

// A conv1d as torch-mlir writes it (NCW input, reshape, transposes around an H=1 conv2d): with
// NCHW I/O one transpose in and one out; with NHWC I/O the signature becomes NWC and none is left.
// CHECK-LABEL: func.func @conv1d_views
// CHECK-COUNT-2: tosa.transpose
// CHECK-NOT: tosa.transpose
// NHWC-LABEL: func.func @conv1d_views
// NHWC-SAME: (%arg0: tensor<1x6x4xf32> {mcu.layout = "nhwc"}) -> (tensor<1x6x2xf32> {mcu.layout = "nhwc"})
// NHWC-NOT: tosa.transpose
func.func @conv1d_views(%arg0: tensor<1x4x6xf32>) -> tensor<1x2x6xf32> {
  %w = "tosa.const"() <{values = dense<0.25> : tensor<2x1x3x4xf32>}> : () -> tensor<2x1x3x4xf32>
  %b = "tosa.const"() <{values = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s4 = tosa.const_shape {values = dense<[1, 4, 1, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[1, 2, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r0 = tosa.reshape %arg0, %s4 : (tensor<1x4x6xf32>, !tosa.shape<4>) -> tensor<1x4x1x6xf32>
  %t0 = tosa.transpose %r0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x1x6xf32>) -> tensor<1x1x6x4xf32>
  %c = tosa.conv2d %t0, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x1x6x4xf32>, tensor<2x1x3x4xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x6x2xf32>
  %t1 = tosa.transpose %c {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x6x2xf32>) -> tensor<1x2x1x6xf32>
  %r1 = tosa.reshape %t1, %s3 : (tensor<1x2x1x6xf32>, !tosa.shape<3>) -> tensor<1x2x6xf32>
  return %r1 : tensor<1x2x6xf32>
}

// -----

// Through a cast and an integer join (int32 add of a cast value and a broadcast constant).
// CHECK-LABEL: func.func @cast_and_int_add
// CHECK-NOT: tosa.transpose
// CHECK: tosa.cast %arg0 : (tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi32>
// CHECK: tosa.add %{{.*}} : (tensor<1x2x3x4xi32>, tensor<1x1x1x4xi32>)
// CHECK-NOT: tosa.transpose
func.func @cast_and_int_add(%arg0: tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi32> {
  %k = "tosa.const"() <{values = dense<[[[[1]], [[-2]], [[3]], [[-4]]]]> : tensor<1x4x1x1xi32>}> : () -> tensor<1x4x1x1xi32>
  %t0 = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x3x4xi8>) -> tensor<1x4x2x3xi8>
  %c = tosa.cast %t0 : (tensor<1x4x2x3xi8>) -> tensor<1x4x2x3xi32>
  %a = tosa.add %c, %k : (tensor<1x4x2x3xi32>, tensor<1x4x1x1xi32>) -> tensor<1x4x2x3xi32>
  %t1 = tosa.transpose %a {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x4x2x3xi32>) -> tensor<1x2x3x4xi32>
  return %t1 : tensor<1x2x3x4xi32>
}

// -----

// Moving a transpose would cost more than it saves (NCHW in and out around one NHWC pool): the
// region keeps its layout and the transposes stay where they are.
// CHECK-LABEL: func.func @keeps_what_is_cheapest
// CHECK-COUNT-2: tosa.transpose
// CHECK-NOT: tosa.transpose
func.func @keeps_what_is_cheapest(%arg0: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %a = tosa.abs %arg0 : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %t0 = tosa.transpose %a {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x4x4xf32>) -> tensor<1x4x4x3xf32>
  %p = tosa.max_pool2d %t0 {kernel = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %t1 = tosa.transpose %p {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
  %b = tosa.add %t1, %a : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %b : tensor<1x3x4x4xf32>
}

// -----

// With io-layout=nhwc only functions nobody calls change their signature.
// NHWC-LABEL: func.func private @callee
// NHWC-SAME: (%arg0: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
// NHWC-LABEL: func.func @caller
// NHWC-SAME: {mcu.layout = "nhwc"}
// CHECK-LABEL: func.func private @callee
func.func private @callee(%arg0: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  %1 = tosa.max_pool2d %0 {kernel = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x4x2xf32>) -> tensor<1x3x4x2xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x3x4x2xf32>) -> tensor<1x2x3x4xf32>
  return %2 : tensor<1x2x3x4xf32>
}
func.func @caller(%arg0: tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32> {
  %k = "tosa.const"() <{values = dense<1.0> : tensor<1x2x3x4xf32>}> : () -> tensor<1x2x3x4xf32>
  %0 = func.call @callee(%k) : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %1 = tosa.transpose %arg0 {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  %2 = tosa.max_pool2d %1 {kernel = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x4x2xf32>) -> tensor<1x3x4x2xf32>
  return %2 : tensor<1x3x4x2xf32>
}

// -----

// A flatten feeding a linear layer with constant weights: the activations are flattened in the
// order they are stored (NHWC) and the weight rows are permuted at compile time to match.
// CHECK-LABEL: func.func @flatten_into_linear
// CHECK-NOT: tosa.transpose
// CHECK: %[[A:.*]] = tosa.reshape %arg0, %{{.*}} -> tensor<1x1x12xf32>
// CHECK: tosa.matmul %[[A]], %{{.*}} : (tensor<1x1x12xf32>, tensor<1x12x2xf32>
func.func @flatten_into_linear(%arg0: tensor<1x2x2x3xf32>) -> tensor<1x1x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[1.0, -1.0], [2.0, 0.5], [3.0, 0.25], [4.0, -2.0], [5.0, 1.5], [6.0, 0.0], [7.0, -0.5], [8.0, 2.5], [9.0, 1.0], [10.0, -3.0], [11.0, 0.75], [12.0, 2.0]]]> : tensor<1x12x2xf32>}> : () -> tensor<1x12x2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.const_shape {values = dense<[1, 1, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x2x3xf32>) -> tensor<1x3x2x2xf32>
  %f = tosa.reshape %t, %s : (tensor<1x3x2x2xf32>, !tosa.shape<3>) -> tensor<1x1x12xf32>
  %m = tosa.matmul %f, %w, %zp, %zp : (tensor<1x1x12xf32>, tensor<1x12x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x2xf32>
  return %m : tensor<1x1x2xf32>
}

// -----

// A channel shuffle (view 1x2x2x4 as 2 groups of 2 channels, swap them, flatten) into a 1x1
// conv: no layout removes that copy, but the conv's weights can read the channels where they
// are. Input channel c of the new weights is old channel perm^-1(c), perm = [0, 2, 1, 3].
// CHECK-LABEL: func.func @channel_shuffle_into_conv
// CHECK-NOT: tosa.transpose
// CHECK-NOT: tosa.reshape
// CHECK: dense<{{\[\[\[\[}}1, 3, 2, 4]]], {{\[\[\[}}5, 7, 6, 8]]]]> : tensor<2x1x1x4xi8>
// CHECK: tosa.conv2d %arg0
// NHWC-LABEL: func.func @channel_shuffle_into_conv
// NHWC-NOT: tosa.transpose
func.func @channel_shuffle_into_conv(%arg0: tensor<1x2x2x4xi8>) -> tensor<1x2x2x2xi32> {
  %w = "tosa.const"() <{values = dense<[[[[1, 2, 3, 4]]], [[[5, 6, 7, 8]]]]> : tensor<2x1x1x4xi8>}> : () -> tensor<2x1x1x4xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s5 = tosa.const_shape {values = dense<[1, 2, 2, 2, 2]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 2, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %arg0, %s5 : (tensor<1x2x2x4xi8>, !tosa.shape<5>) -> tensor<1x2x2x2x2xi8>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 1, 2, 4, 3>} : (tensor<1x2x2x2x2xi8>) -> tensor<1x2x2x2x2xi8>
  %2 = tosa.reshape %1, %s4 : (tensor<1x2x2x2x2xi8>, !tosa.shape<4>) -> tensor<1x2x2x4xi8>
  %3 = tosa.conv2d %2, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x2xi32>
  return %3 : tensor<1x2x2x2xi32>
}

// -----

// The same shuffle also read by a clamp: the conv reads the unshuffled tensor, the clamp keeps
// the shuffled copy (one transpose left, not two).
// CHECK-LABEL: func.func @channel_shuffle_shared
// NHWC-LABEL: func.func @channel_shuffle_shared
// CHECK: tosa.transpose
// CHECK-NOT: tosa.transpose
// CHECK: tosa.conv2d %arg0
// CHECK-NOT: tosa.transpose
// CHECK: return
func.func @channel_shuffle_shared(%arg0: tensor<1x2x2x4xi8>) -> (tensor<1x2x2x2xi32>, tensor<1x2x2x4xi8>) {
  %w = "tosa.const"() <{values = dense<[[[[1, 2, 3, 4]]], [[[5, 6, 7, 8]]]]> : tensor<2x1x1x4xi8>}> : () -> tensor<2x1x1x4xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s5 = tosa.const_shape {values = dense<[1, 2, 2, 2, 2]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 2, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %arg0, %s5 : (tensor<1x2x2x4xi8>, !tosa.shape<5>) -> tensor<1x2x2x2x2xi8>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 1, 2, 4, 3>} : (tensor<1x2x2x2x2xi8>) -> tensor<1x2x2x2x2xi8>
  %2 = tosa.reshape %1, %s4 : (tensor<1x2x2x2x2xi8>, !tosa.shape<4>) -> tensor<1x2x2x4xi8>
  %3 = tosa.conv2d %2, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x2xi32>
  %4 = tosa.clamp %2 {max_val = 100 : i8, min_val = -100 : i8} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8>
  return %3, %4 : tensor<1x2x2x2xi32>, tensor<1x2x2x4xi8>
}

// -----

// The same with a batch of 2: each batch element is one row of the matmul, its features
// flattened as stored (NHWC); the weight rows are permuted once for all rows.
// CHECK-LABEL: func.func @batched_flatten_into_linear
// CHECK-NOT: tosa.transpose
// CHECK: %[[A:.*]] = tosa.reshape %arg0, %{{.*}} -> tensor<1x2x12xf32>
// CHECK: tosa.matmul %[[A]], %{{.*}} : (tensor<1x2x12xf32>, tensor<1x12x2xf32>
func.func @batched_flatten_into_linear(%arg0: tensor<2x2x2x3xf32>) -> tensor<1x2x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[1.0, -1.0], [2.0, 0.5], [3.0, 0.25], [4.0, -2.0], [5.0, 1.5], [6.0, 0.0], [7.0, -0.5], [8.0, 2.5], [9.0, 1.0], [10.0, -3.0], [11.0, 0.75], [12.0, 2.0]]]> : tensor<1x12x2xf32>}> : () -> tensor<1x12x2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.const_shape {values = dense<[1, 2, 12]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %t = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<2x2x2x3xf32>) -> tensor<2x3x2x2xf32>
  %f = tosa.reshape %t, %s : (tensor<2x3x2x2xf32>, !tosa.shape<3>) -> tensor<1x2x12xf32>
  %m = tosa.matmul %f, %w, %zp, %zp : (tensor<1x2x12xf32>, tensor<1x12x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  return %m : tensor<1x2x2xf32>
}

// -----

// A per-channel rescale moves below a reshape that keeps the channels innermost (a conv on an
// H = 1 input laid out as W = 1 and viewed back): the conv's rescale then follows it directly.
// CHECK-LABEL: func.func @per_channel_rescale_below_reshape
// CHECK: %[[R:.*]] = tosa.rescale %arg0, {{.*}} -> tensor<1x4x1x2xi8>
// CHECK: tosa.reshape %[[R]], {{.*}} -> tensor<1x1x4x2xi8>
func.func @per_channel_rescale_below_reshape(%arg0: tensor<1x4x1x2xi32>) -> tensor<1x1x4x2xi8> {
  %s = tosa.const_shape {values = dense<[1, 1, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %m = "tosa.const"() <{values = dense<[1073741824, 1500000000]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %sh = "tosa.const"() <{values = dense<[35, 36]> : tensor<2xi8>}> : () -> tensor<2xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %z8 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.reshape %arg0, %s : (tensor<1x4x1x2xi32>, !tosa.shape<4>) -> tensor<1x1x4x2xi32>
  %1 = tosa.rescale %0, %m, %sh, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x4x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x4x2xi8>
  return %1 : tensor<1x1x4x2xi8>
}

// -----

// Where the reshape moves channels out of the innermost dim, the per-channel rescale stays.
// CHECK-LABEL: func.func @per_channel_rescale_stays
// CHECK: tosa.reshape %arg0
// CHECK: tosa.rescale
func.func @per_channel_rescale_stays(%arg0: tensor<1x2x4xi32>) -> tensor<1x4x2xi8> {
  %s = tosa.const_shape {values = dense<[1, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %m = "tosa.const"() <{values = dense<[1073741824, 1500000000]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %sh = "tosa.const"() <{values = dense<[35, 36]> : tensor<2xi8>}> : () -> tensor<2xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %z8 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.reshape %arg0, %s : (tensor<1x2x4xi32>, !tosa.shape<3>) -> tensor<1x4x2xi32>
  %1 = tosa.rescale %0, %m, %sh, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x2xi8>
  return %1 : tensor<1x4x2xi8>
}

// -----

// TOSA has no transpose of int48 (an int16 matmul's accumulator): the transpose stays after the
// rescale to int16 even though moving it above would serve both users with one.
// CHECK-LABEL: func.func @int48_stays
// CHECK: tosa.rescale
// CHECK-SAME: -> tensor<1x4x6xi16>
// CHECK: tosa.transpose
// CHECK-SAME: (tensor<1x4x6xi16>) -> tensor<1x6x4xi16>
// CHECK-NOT: xi48>) -> tensor<1x6x4xi48>
func.func @int48_stays(%a: tensor<1x4x8xi16>, %b: tensor<1x8x6xi16>) -> (tensor<1x6x4xi16>, tensor<1x6x4xi16>) {
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %acc = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xi16>, tensor<1x8x6xi16>, tensor<1xi16>, tensor<1xi16>) -> tensor<1x4x6xi48>
  %m = "tosa.const"() <{values = dense<16384> : tensor<1xi16>}> : () -> tensor<1xi16>
  %s = "tosa.const"() <{values = dense<20> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %ozp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %r = tosa.rescale %acc, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<1x4x6xi48>, tensor<1xi16>, tensor<1xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<1x4x6xi16>
  %t1 = tosa.transpose %r {perms = array<i32: 0, 2, 1>} : (tensor<1x4x6xi16>) -> tensor<1x6x4xi16>
  %c = tosa.clamp %r {max_val = 100 : i16, min_val = -100 : i16} : (tensor<1x4x6xi16>) -> tensor<1x4x6xi16>
  %t2 = tosa.transpose %c {perms = array<i32: 0, 2, 1>} : (tensor<1x4x6xi16>) -> tensor<1x6x4xi16>
  return %t1, %t2 : tensor<1x6x4xi16>, tensor<1x6x4xi16>
}

// -----

// A matmul's int32 accumulator keeps its layout up to its rescale: a transpose there would move
// 32-bit values and split the matmul from its requantisation (one kernel call).
// CHECK-LABEL: func.func @accumulator_stays
// CHECK: %[[ACC:.*]] = tosa.matmul
// CHECK-NOT: tosa.transpose
// CHECK: tosa.rescale %[[ACC]]
// CHECK-SAME: -> tensor<1x4x6xi8>
// CHECK: tosa.transpose
// CHECK-SAME: (tensor<1x4x6xi8>) -> tensor<1x6x4xi8>
func.func @accumulator_stays(%a: tensor<1x4x8xi8>, %b: tensor<1x8x6xi8>) -> (tensor<1x6x4xi8>, tensor<1x6x4xi8>) {
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xi8>, tensor<1x8x6xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x6xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<38> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x6xi8>
  %t1 = tosa.transpose %r {perms = array<i32: 0, 2, 1>} : (tensor<1x4x6xi8>) -> tensor<1x6x4xi8>
  %c = tosa.clamp %r {max_val = 100 : i8, min_val = -100 : i8} : (tensor<1x4x6xi8>) -> tensor<1x4x6xi8>
  %t2 = tosa.transpose %c {perms = array<i32: 0, 2, 1>} : (tensor<1x4x6xi8>) -> tensor<1x6x4xi8>
  return %t1, %t2 : tensor<1x6x4xi8>, tensor<1x6x4xi8>
}

// -----

// The shuffle into a depthwise conv, its rescale and a clamp, then a 1x1 conv: the depthwise runs
// on the unshuffled tensor with its weights, bias and multipliers taken in the shuffle's order
// (perm = [0, 2, 1, 3]), and the 1x1 conv's weights take the permutation in its place.
// CHECK-LABEL: func.func @channel_shuffle_through_depthwise
// CHECK-NOT: tosa.transpose
// CHECK-DAG: dense<{{\[\[\[\[}}1], [3], [2], [4]]]]> : tensor<1x1x4x1xi8>
// CHECK-DAG: dense<[10, 30, 20, 40]> : tensor<4xi32>
// CHECK: tosa.depthwise_conv2d %arg0
// CHECK-DAG: dense<[1073741824, 1073741826, 1073741825, 1073741827]> : tensor<4xi32>
// CHECK-DAG: dense<[30, 32, 31, 33]> : tensor<4xi8>
// CHECK-DAG: dense<{{\[\[\[\[}}1, 3, 2, 4]]], {{\[\[\[}}5, 7, 6, 8]]]]> : tensor<2x1x1x4xi8>
// CHECK: tosa.conv2d
// NHWC-LABEL: func.func @channel_shuffle_through_depthwise
// NHWC-NOT: tosa.transpose
func.func @channel_shuffle_through_depthwise(%arg0: tensor<1x2x2x4xi8>) -> tensor<1x2x2x2xi32> {
  %dw = "tosa.const"() <{values = dense<[[[[1], [2], [3], [4]]]]> : tensor<1x1x4x1xi8>}> : () -> tensor<1x1x4x1xi8>
  %db = "tosa.const"() <{values = dense<[10, 20, 30, 40]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %m = "tosa.const"() <{values = dense<[1073741824, 1073741825, 1073741826, 1073741827]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %sh = "tosa.const"() <{values = dense<[30, 31, 32, 33]> : tensor<4xi8>}> : () -> tensor<4xi8>
  %w = "tosa.const"() <{values = dense<[[[[1, 2, 3, 4]]], [[[5, 6, 7, 8]]]]> : tensor<2x1x1x4xi8>}> : () -> tensor<2x1x1x4xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s5 = tosa.const_shape {values = dense<[1, 2, 2, 2, 2]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 2, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.reshape %arg0, %s5 : (tensor<1x2x2x4xi8>, !tosa.shape<5>) -> tensor<1x2x2x2x2xi8>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 1, 2, 4, 3>} : (tensor<1x2x2x2x2xi8>) -> tensor<1x2x2x2x2xi8>
  %2 = tosa.reshape %1, %s4 : (tensor<1x2x2x2x2xi8>, !tosa.shape<4>) -> tensor<1x2x2x4xi8>
  %3 = tosa.depthwise_conv2d %2, %dw, %db, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x4xi8>, tensor<1x1x4x1xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x4xi32>
  %4 = tosa.rescale %3, %m, %sh, %zp32, %zp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2x2x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2x2x4xi8>
  %5 = tosa.clamp %4 {max_val = 127 : i8, min_val = 0 : i8} : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8>
  %6 = tosa.conv2d %5, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x4xi8>, tensor<2x1x1x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x2xi32>
  return %6 : tensor<1x2x2x2xi32>
}
