// RUN: mcu-opt %s --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
// RUN: mcu-opt %s --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE

// Q . K^T of two int8 activations: arm_batch_matmul_s8 reads K itself (its rows are the
// transposed right-hand side), so the transpose that made K^T goes; the rescale is the call's
// requantisation (CMSIS shift = 31 - TOSA shift), zero points become offsets.
// CHECK-LABEL: func.func @q_kt
// CHECK-NOT: transpose
// CHECK: "cmsisnn.batch_matmul"(%arg0, %arg1)
// CHECK-SAME: activation = array<i32: -128, 127>, lhs_offset = 3 : i32
// CHECK-SAME: multiplier = 1518500250 : i32, output_offset = -5 : i32, rhs_offset = -7 : i32, shift = -6 : i32
// CHECK-SAME: (tensor<2x5x8xi8>, tensor<2x6x8xi8>) -> tensor<2x5x6xi8>
// PORTABLE-LABEL: func.func @q_kt
// PORTABLE: "portable.transpose"
// PORTABLE: "portable.matmul"
func.func @q_kt(%q: tensor<2x5x8xi8>, %k: tensor<2x6x8xi8>) -> tensor<2x5x6xi8> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<2x6x8xi8>) -> tensor<2x8x6xi8>
  %qzp = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %kzp = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.matmul %q, %kt, %qzp, %kzp : (tensor<2x5x8xi8>, tensor<2x8x6xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x5x6xi32>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<37> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.rescale %acc, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x5x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x5x6xi8>
  return %y : tensor<2x5x6xi8>
}

// -----

// attention . V: the right-hand side is not a transpose, so one is made for the call.
// CHECK-LABEL: func.func @attention_v
// CHECK: "cmsisnn.transpose"
// CHECK-SAME: perms = array<i32: 0, 1, 3, 2>
// CHECK: %[[VT:.*]] = "cmsisnn.reshape"
// CHECK-SAME: -> tensor<1x8x6xi8>
// CHECK: "cmsisnn.batch_matmul"(%arg0, %[[VT]])
// CHECK-SAME: (tensor<1x5x6xi8>, tensor<1x8x6xi8>) -> tensor<1x5x8xi8>
func.func @attention_v(%a: tensor<1x5x6xi8>, %v: tensor<1x6x8xi8>) -> tensor<1x5x8xi8> {
  %azp = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %vzp = "tosa.const"() <{values = dense<2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.matmul %a, %v, %azp, %vzp : (tensor<1x5x6xi8>, tensor<1x6x8xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x5x8xi32>
  %m = "tosa.const"() <{values = dense<1300000000> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<40> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.rescale %acc, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x5x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x5x8xi8>
  return %y : tensor<1x5x8xi8>
}

// -----

// Q . K^T with the heads kept apart: K^T is a [1, heads, D, T] transpose of K viewed as
// [heads, D, T]. The call reads a view of K itself, so neither that transpose nor one back is left.
// CHECK-LABEL: func.func @q_kt_heads
// CHECK-NOT: transpose
// CHECK: %[[K:.*]] = "cmsisnn.reshape"(%arg1)
// CHECK-SAME: (tensor<1x2x6x8xi8>) -> tensor<2x6x8xi8>
// CHECK: "cmsisnn.batch_matmul"(%arg0, %[[K]])
// CHECK-SAME: (tensor<2x5x8xi8>, tensor<2x6x8xi8>) -> tensor<2x5x6xi8>
// CHECK-NOT: transpose
func.func @q_kt_heads(%q: tensor<2x5x8xi8>, %k: tensor<1x2x6x8xi8>) -> tensor<2x5x6xi8> {
  %kt4 = tosa.transpose %k {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x2x6x8xi8>) -> tensor<1x2x8x6xi8>
  %shape = tosa.const_shape {values = dense<[2, 8, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %kt = tosa.reshape %kt4, %shape : (tensor<1x2x8x6xi8>, !tosa.shape<3>) -> tensor<2x8x6xi8>
  %qzp = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %kzp = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.matmul %q, %kt, %qzp, %kzp : (tensor<2x5x8xi8>, tensor<2x8x6xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x5x6xi32>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<37> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.rescale %acc, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x5x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x5x6xi8>
  return %y : tensor<2x5x6xi8>
}

// -----

// Channels-first attention (EfficientViT): K as [C, N] made from an NHWC activation by a transpose
// to NCHW and a reshape. Transposed back it is the activation itself: the call reads a view of it.
// CHECK-LABEL: func.func @q_k_channels_first
// CHECK-NOT: transpose
// CHECK: %[[K:.*]] = "cmsisnn.reshape"(%arg1)
// CHECK-SAME: (tensor<1x2x3x4xi8>) -> tensor<1x6x4xi8>
// CHECK: "cmsisnn.batch_matmul"(%arg0, %[[K]])
// CHECK-NOT: transpose
func.func @q_k_channels_first(%q: tensor<1x6x4xi8>, %k: tensor<1x2x3x4xi8>) -> tensor<1x6x6xi8> {
  %kc = tosa.transpose %k {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x3x4xi8>) -> tensor<1x4x2x3xi8>
  %shape = tosa.const_shape {values = dense<[1, 4, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %kt = tosa.reshape %kc, %shape : (tensor<1x4x2x3xi8>, !tosa.shape<3>) -> tensor<1x4x6xi8>
  %zp = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.matmul %q, %kt, %zp, %zp : (tensor<1x6x4xi8>, tensor<1x4x6xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x6x6xi32>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<37> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %y = tosa.rescale %acc, %m, %s, %izp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x6x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x6x6xi8>
  return %y : tensor<1x6x6xi8>
}

// -----

// v . attn^T read only transposed back ([B, C, N] -> [B, N, C], EfficientViT's output to NHWC):
// computed as attn . v^T, whose left side is attn itself (its transpose absorbed) and whose right
// side is v as stored, zero points swapped with the operands. No transpose is left.
// CHECK-LABEL: func.func @transposed_result
// CHECK-NOT: transpose
// CHECK: "cmsisnn.batch_matmul"(%arg1, %arg0)
// CHECK-SAME: lhs_offset = -2 : i32
// CHECK-SAME: rhs_offset = 3 : i32
// CHECK-SAME: (tensor<1x6x6xi8>, tensor<1x4x6xi8>) -> tensor<1x6x4xi8>
// CHECK-NOT: transpose
func.func @transposed_result(%v: tensor<1x4x6xi8>, %attn: tensor<1x6x6xi8>) -> tensor<1x6x4xi8> {
  %at = tosa.transpose %attn {perms = array<i32: 0, 2, 1>} : (tensor<1x6x6xi8>) -> tensor<1x6x6xi8>
  %vzp = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %azp = "tosa.const"() <{values = dense<2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.matmul %v, %at, %vzp, %azp : (tensor<1x4x6xi8>, tensor<1x6x6xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x6xi32>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<37> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.rescale %acc, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x6xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x6xi8>
  %t = tosa.transpose %y {perms = array<i32: 0, 2, 1>} : (tensor<1x4x6xi8>) -> tensor<1x6x4xi8>
  return %t : tensor<1x6x4xi8>
}

// -----

// A constant right-hand side that is no fully connected layer (two batches, a zero point): it is
// stored transposed ([B, N, K], as the call reads it), not transposed at run time.
// CHECK-LABEL: func.func @constant_rhs
// CHECK-NOT: transpose
// CHECK: %[[WT:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}1, 3], [2, 4]], {{\[\[}}5, 7], [6, 8]]]> : tensor<2x2x2xi8>}>
// CHECK: "cmsisnn.batch_matmul"(%arg0, %[[WT]])
// CHECK-SAME: rhs_offset = -9 : i32
func.func @constant_rhs(%x: tensor<2x3x2xi8>) -> tensor<2x3x2xi8> {
  %w = "tosa.const"() <{values = dense<[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]> : tensor<2x2x2xi8>}> : () -> tensor<2x2x2xi8>
  %xzp = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<9> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.matmul %x, %w, %xzp, %wzp : (tensor<2x3x2xi8>, tensor<2x2x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x3x2xi32>
  %m = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<37> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.rescale %acc, %m, %s, %izp, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<2x3x2xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<2x3x2xi8>
  return %y : tensor<2x3x2xi8>
}
