// RUN: mcu-opt %s --split-input-file --mcu-heads-from-linears | FileCheck %s

// A projection split into two heads ([1, 3, 8] -> [1, 3, 2, 4] -> [1, 2, 3, 4]): one linear per
// head with its four weight columns, bias values and multipliers, concatenated along the
// outermost axis (in place), no transpose left. (Each result has a reader in the model: a transpose
// feeding only the output is the model's output layout.)
// CHECK-LABEL: func.func @two_heads
// CHECK-NOT: tosa.transpose
// CHECK-DAG: %[[W0:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}1, 2, 3, 4], [9, 10, 11, 12], [17, 18, 19, 20], [25, 26, 27, 28]]]> : tensor<1x4x4xi8>}>
// CHECK-DAG: %[[W1:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}5, 6, 7, 8], [13, 14, 15, 16], [21, 22, 23, 24], [29, 30, 31, 32]]]> : tensor<1x4x4xi8>}>
// CHECK-DAG: "tosa.const"() <{values = dense<[1, 2, 3, 4]> : tensor<4xi8>}>
// CHECK-DAG: "tosa.const"() <{values = dense<[5, 6, 7, 8]> : tensor<4xi8>}>
// CHECK-DAG: %[[M0:.*]] = tosa.matmul %arg0, %[[W0]], {{.*}} -> tensor<1x3x4xi32>
// CHECK-DAG: %[[M1:.*]] = tosa.matmul %arg0, %[[W1]], {{.*}} -> tensor<1x3x4xi32>
// CHECK: %[[C:.*]] = tosa.concat %{{.*}}, %{{.*}} {axis = 0 : i32} : (tensor<1x3x4xi8>, tensor<1x3x4xi8>) -> tensor<2x3x4xi8>
// CHECK: tosa.reshape %[[C]], %{{.*}} -> tensor<1x2x3x4xi8>
// CHECK-NOT: tosa.transpose
func.func @two_heads(%arg0: tensor<1x3x4xi8>) -> tensor<1x2x3x4xi8> {
  %w = "tosa.const"() <{values = dense<[[[1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 16], [17, 18, 19, 20, 21, 22, 23, 24], [25, 26, 27, 28, 29, 30, 31, 32]]]> : tensor<1x4x8xi8>}> : () -> tensor<1x4x8xi8>
  %zp = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %zp, %wzp : (tensor<1x3x4xi8>, tensor<1x4x8xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x8xi32>
  %b = "tosa.const"() <{values = dense<[[[10, 20, 30, 40, 50, 60, 70, 80]]]> : tensor<1x1x8xi32>}> : () -> tensor<1x1x8xi32>
  %acc = tosa.add %mm, %b : (tensor<1x3x8xi32>, tensor<1x1x8xi32>) -> tensor<1x3x8xi32>
  %m = "tosa.const"() <{values = dense<[1073741824, 1073741825, 1073741826, 1073741827, 1073741828, 1073741829, 1073741830, 1073741831]> : tensor<8xi32>}> : () -> tensor<8xi32>
  %sh = "tosa.const"() <{values = dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi8>}> : () -> tensor<8xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %acc, %m, %sh, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x8xi32>, tensor<8xi32>, tensor<8xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x8xi8>
  %s = tosa.const_shape {values = dense<[1, 3, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v = tosa.reshape %r, %s : (tensor<1x3x8xi8>, !tosa.shape<4>) -> tensor<1x3x2x4xi8>
  %t = tosa.transpose %v {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x3x2x4xi8>) -> tensor<1x2x3x4xi8>
  %o = tosa.clamp %t {max_val = 127 : i8, min_val = -128 : i8} : (tensor<1x2x3x4xi8>) -> tensor<1x2x3x4xi8>
  return %o : tensor<1x2x3x4xi8>
}

// -----

// timm's one Q / K / V linear ([1, 3, 24] -> [1, 3, 3, 2, 4] -> [3, 1, 2, 3, 4]): six parts, one
// per (Q / K / V, head), in the order the transposed tensor holds them.
// CHECK-LABEL: func.func @qkv
// CHECK-NOT: tosa.transpose
// CHECK-COUNT-6: tosa.matmul %arg0
// CHECK: %[[C:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : {{.*}} -> tensor<6x3x4xi8>
// CHECK: tosa.reshape %[[C]], %{{.*}} -> tensor<3x1x2x3x4xi8>
// CHECK-NOT: tosa.transpose
func.func @qkv(%arg0: tensor<1x3x2xi8>) -> tensor<3x1x2x3x4xi8> {
  %w = "tosa.const"() <{values = dense<[[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24], [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20, -21, -22, -23, -24]]]> : tensor<1x2x24xi8>}> : () -> tensor<1x2x24xi8>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %zp, %zp : (tensor<1x3x2xi8>, tensor<1x2x24xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x24xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %sh = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %r = tosa.rescale %mm, %m, %sh, %izp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x24xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x24xi8>
  %s = tosa.const_shape {values = dense<[1, 3, 3, 2, 4]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %v = tosa.reshape %r, %s : (tensor<1x3x24xi8>, !tosa.shape<5>) -> tensor<1x3x3x2x4xi8>
  %t = tosa.transpose %v {perms = array<i32: 2, 0, 3, 1, 4>} : (tensor<1x3x3x2x4xi8>) -> tensor<3x1x2x3x4xi8>
  %o = tosa.clamp %t {max_val = 127 : i8, min_val = -128 : i8} : (tensor<3x1x2x3x4xi8>) -> tensor<3x1x2x3x4xi8>
  return %o : tensor<3x1x2x3x4xi8>
}

// -----

// A transpose that takes a head's channels apart ([1, 3, 2, 4] -> [1, 4, 2, 3]: D outermost) is
// not made of blocks of one linear's output: left as it is.
// CHECK-LABEL: func.func @channels_apart
// CHECK: tosa.matmul
// CHECK: tosa.transpose
func.func @channels_apart(%arg0: tensor<1x3x4xi8>) -> tensor<1x4x2x3xi8> {
  %w = "tosa.const"() <{values = dense<1> : tensor<1x4x8xi8>}> : () -> tensor<1x4x8xi8>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %zp, %zp : (tensor<1x3x4xi8>, tensor<1x4x8xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x8xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %sh = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %r = tosa.rescale %mm, %m, %sh, %izp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x8xi8>
  %s = tosa.const_shape {values = dense<[1, 3, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v = tosa.reshape %r, %s : (tensor<1x3x8xi8>, !tosa.shape<4>) -> tensor<1x3x2x4xi8>
  %t = tosa.transpose %v {perms = array<i32: 0, 3, 2, 1>} : (tensor<1x3x2x4xi8>) -> tensor<1x4x2x3xi8>
  %o = tosa.clamp %t {max_val = 127 : i8, min_val = -128 : i8} : (tensor<1x4x2x3xi8>) -> tensor<1x4x2x3xi8>
  return %o : tensor<1x4x2x3xi8>
}

// -----

// int16 activations: the linear is a 1x1 conv2d over [1, tokens, 1, K] with an int48 bias; each head
// is such a conv with its four filters.
// CHECK-LABEL: func.func @int16_heads
// CHECK-NOT: tosa.transpose
// CHECK: "tosa.const"() <{values = dense<[10, 20, 30, 40]> : tensor<4xi48>}>
// CHECK: tosa.conv2d %arg0, {{.*}} -> tensor<1x3x1x4xi48>
// CHECK: "tosa.const"() <{values = dense<[50, 60, 70, 80]> : tensor<4xi48>}>
// CHECK: tosa.conv2d %arg0, {{.*}} -> tensor<1x3x1x4xi48>
// CHECK: %[[C:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : (tensor<1x3x1x4xi16>, tensor<1x3x1x4xi16>) -> tensor<2x3x1x4xi16>
// CHECK: tosa.reshape %[[C]], %{{.*}} -> tensor<1x2x3x4xi16>
func.func @int16_heads(%arg0: tensor<1x3x1x4xi16>) -> tensor<1x2x3x4xi16> {
  %w = "tosa.const"() <{values = dense<2> : tensor<8x1x1x4xi8>}> : () -> tensor<8x1x1x4xi8>
  %b = "tosa.const"() <{values = dense<[10, 20, 30, 40, 50, 60, 70, 80]> : tensor<8xi48>}> : () -> tensor<8xi48>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x1x4xi16>, tensor<8x1x1x4xi8>, tensor<8xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x3x1x8xi48>
  %m = "tosa.const"() <{values = dense<16384> : tensor<8xi16>}> : () -> tensor<8xi16>
  %sh = "tosa.const"() <{values = dense<20> : tensor<8xi8>}> : () -> tensor<8xi8>
  %inzp = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %r = tosa.rescale %c, %m, %sh, %inzp, %izp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<1x3x1x8xi48>, tensor<8xi16>, tensor<8xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<1x3x1x8xi16>
  %s = tosa.const_shape {values = dense<[1, 3, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v = tosa.reshape %r, %s : (tensor<1x3x1x8xi16>, !tosa.shape<4>) -> tensor<1x3x2x4xi16>
  %t = tosa.transpose %v {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x3x2x4xi16>) -> tensor<1x2x3x4xi16>
  %o = tosa.clamp %t {max_val = 32767 : i16, min_val = -32768 : i16} : (tensor<1x2x3x4xi16>) -> tensor<1x2x3x4xi16>
  return %o : tensor<1x2x3x4xi16>
}

// -----

// One-channel parts (a [1, 13, 29] -> [1, 29, 13] transpose: the channels outermost) are no heads,
// and the model's output layout is left to the output: both stay transposes.
// CHECK-LABEL: func.func @not_heads
// CHECK-COUNT-2: tosa.transpose
func.func @not_heads(%arg0: tensor<1x13x4xi8>) -> (tensor<1x29x13xi8>, tensor<1x2x13x4xi8>) {
  %w = "tosa.const"() <{values = dense<1> : tensor<1x4x29xi8>}> : () -> tensor<1x4x29xi8>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %zp, %zp : (tensor<1x13x4xi8>, tensor<1x4x29xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x13x29xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %sh = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %r = tosa.rescale %mm, %m, %sh, %izp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x13x29xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x13x29xi8>
  %t = tosa.transpose %r {perms = array<i32: 0, 2, 1>} : (tensor<1x13x29xi8>) -> tensor<1x29x13xi8>
  %o = tosa.clamp %t {max_val = 100 : i8, min_val = -100 : i8} : (tensor<1x29x13xi8>) -> tensor<1x29x13xi8>
  %w2 = "tosa.const"() <{values = dense<1> : tensor<1x4x8xi8>}> : () -> tensor<1x4x8xi8>
  %mm2 = tosa.matmul %arg0, %w2, %zp, %zp : (tensor<1x13x4xi8>, tensor<1x4x8xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x13x8xi32>
  %r2 = tosa.rescale %mm2, %m, %sh, %izp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x13x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x13x8xi8>
  %s = tosa.const_shape {values = dense<[1, 13, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v = tosa.reshape %r2, %s : (tensor<1x13x8xi8>, !tosa.shape<4>) -> tensor<1x13x2x4xi8>
  %t2 = tosa.transpose %v {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x13x2x4xi8>) -> tensor<1x2x13x4xi8>
  return %o, %t2 : tensor<1x29x13xi8>, tensor<1x2x13x4xi8>
}

// -----

// K^T made with the head split (HuggingFace: [1, 3, 8] -> [1, 3, 2, 4] -> [1, 2, 4, 3]): the parts
// are the heads' [3, 4] K blocks, and one transpose of their concat gives K^T (the batch matmul
// that reads it takes K itself).
// CHECK-LABEL: func.func @k_transposed
// CHECK-COUNT-2: tosa.matmul %arg0
// CHECK: %[[C:.*]] = tosa.concat {{.*}} {axis = 0 : i32} : (tensor<1x3x4xi8>, tensor<1x3x4xi8>) -> tensor<2x3x4xi8>
// CHECK: %[[F:.*]] = tosa.reshape %[[C]], %{{.*}} -> tensor<2x3x4xi8>
// CHECK: %[[T:.*]] = tosa.transpose %[[F]] {perms = array<i32: 0, 2, 1>} : (tensor<2x3x4xi8>) -> tensor<2x4x3xi8>
// CHECK: tosa.reshape %[[T]], %{{.*}} -> tensor<1x2x4x3xi8>
func.func @k_transposed(%arg0: tensor<1x3x4xi8>) -> tensor<1x2x4x3xi8> {
  %w = "tosa.const"() <{values = dense<1> : tensor<1x4x8xi8>}> : () -> tensor<1x4x8xi8>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %zp, %zp : (tensor<1x3x4xi8>, tensor<1x4x8xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x8xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %sh = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %r = tosa.rescale %mm, %m, %sh, %izp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x8xi8>
  %s = tosa.const_shape {values = dense<[1, 3, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %v = tosa.reshape %r, %s : (tensor<1x3x8xi8>, !tosa.shape<4>) -> tensor<1x3x2x4xi8>
  %t = tosa.transpose %v {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x2x4xi8>) -> tensor<1x2x4x3xi8>
  %o = tosa.clamp %t {max_val = 127 : i8, min_val = -128 : i8} : (tensor<1x2x4x3xi8>) -> tensor<1x2x4x3xi8>
  return %o : tensor<1x2x4x3xi8>
}

// -----

// nn.MultiheadAttention's packed projection: the output viewed as [tokens, 3, E], Q / K / V sliced
// off (after a transpose that puts the 3 first), each then split into two heads. The views form a
// tree: each tensor it ends in becomes its own heads' concat, and no transpose is left.
// CHECK-LABEL: func.func @packed_projection
// CHECK-NOT: tosa.transpose
// CHECK-COUNT-6: tosa.matmul %arg0
// CHECK-NOT: tosa.transpose
func.func @packed_projection(%arg0: tensor<1x3x4xi8>) -> (tensor<2x3x4xi8>, tensor<2x3x4xi8>, tensor<2x3x4xi8>) {
  %w = "tosa.const"() <{values = dense<1> : tensor<1x4x24xi8>}> : () -> tensor<1x4x24xi8>
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %mm = tosa.matmul %arg0, %w, %zp, %zp : (tensor<1x3x4xi8>, tensor<1x4x24xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x24xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %sh = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %r = tosa.rescale %mm, %m, %sh, %izp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x3x24xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x3x24xi8>
  %s3 = tosa.const_shape {values = dense<[3, 3, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %v = tosa.reshape %r, %s3 : (tensor<1x3x24xi8>, !tosa.shape<3>) -> tensor<3x3x8xi8>
  %t = tosa.transpose %v {perms = array<i32: 1, 0, 2>} : (tensor<3x3x8xi8>) -> tensor<3x3x8xi8>
  %size = tosa.const_shape {values = dense<[1, 3, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s0 = tosa.const_shape {values = dense<[0, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s1 = tosa.const_shape {values = dense<[1, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[2, 0, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q = tosa.slice %t, %s0, %size : (tensor<3x3x8xi8>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x3x8xi8>
  %k = tosa.slice %t, %s1, %size : (tensor<3x3x8xi8>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x3x8xi8>
  %vv = tosa.slice %t, %s2, %size : (tensor<3x3x8xi8>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x3x8xi8>
  %h = tosa.const_shape {values = dense<[3, 2, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q3 = tosa.reshape %q, %h : (tensor<1x3x8xi8>, !tosa.shape<3>) -> tensor<3x2x4xi8>
  %k3 = tosa.reshape %k, %h : (tensor<1x3x8xi8>, !tosa.shape<3>) -> tensor<3x2x4xi8>
  %v3 = tosa.reshape %vv, %h : (tensor<1x3x8xi8>, !tosa.shape<3>) -> tensor<3x2x4xi8>
  %qh = tosa.transpose %q3 {perms = array<i32: 1, 0, 2>} : (tensor<3x2x4xi8>) -> tensor<2x3x4xi8>
  %kh = tosa.transpose %k3 {perms = array<i32: 1, 0, 2>} : (tensor<3x2x4xi8>) -> tensor<2x3x4xi8>
  %vh = tosa.transpose %v3 {perms = array<i32: 1, 0, 2>} : (tensor<3x2x4xi8>) -> tensor<2x3x4xi8>
  %qo = tosa.clamp %qh {max_val = 127 : i8, min_val = -128 : i8} : (tensor<2x3x4xi8>) -> tensor<2x3x4xi8>
  %ko = tosa.clamp %kh {max_val = 127 : i8, min_val = -128 : i8} : (tensor<2x3x4xi8>) -> tensor<2x3x4xi8>
  %vo = tosa.clamp %vh {max_val = 127 : i8, min_val = -128 : i8} : (tensor<2x3x4xi8>) -> tensor<2x3x4xi8>
  return %qo, %ko, %vo : tensor<2x3x4xi8>, tensor<2x3x4xi8>, tensor<2x3x4xi8>
}
