// RUN: mcu-opt %s --mcu-verify-integer-tosa | FileCheck %s
// RUN: mcu-opt %s --mcu-verify-integer-tosa=double-round=true | FileCheck %s --check-prefix=STRICT

// An int8 conv + per-channel double-rounding rescale + clamp, as the frontend writes it, passes.
// CHECK-LABEL: func.func @conv$int8
// CHECK: tosa.conv2d
// CHECK: rounding_mode = DOUBLE_ROUND
func.func @conv$int8(%arg0: tensor<1x8x8x3xi8>) -> tensor<1x8x8x4xi8> {
  %w = "tosa.const"() <{values = dense<1> : tensor<4x3x3x3xi8>}> : () -> tensor<4x3x3x3xi8>
  %b = "tosa.const"() <{values = dense<5> : tensor<4xi32>}> : () -> tensor<4xi32>
  %izp = "tosa.const"() <{values = dense<-3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xi8>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x4xi32>
  %m = "tosa.const"() <{values = dense<[1073741824, 1073741824, 1500000000, 2000000000]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %s = "tosa.const"() <{values = dense<[35, 36, 37, 38]> : tensor<4xi8>}> : () -> tensor<4xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %1 = tosa.rescale %0, %m, %s, %z32, %ozp {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x4xi32>, tensor<4xi32>, tensor<4xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x4xi8>
  %2 = tosa.clamp %1 {max_val = 127 : i8, min_val = 7 : i8} : (tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>
  return %2 : tensor<1x8x8x4xi8>
}

// int16 activations: int48 accumulator, 16-bit multiplier (scale32 = false) rounds once.
// CHECK-LABEL: func.func @fc$int16
// CHECK: SINGLE_ROUND
func.func @fc$int16(%arg0: tensor<2x1x1x4xi16>) -> tensor<2x1x1x3xi16> {
  %w = "tosa.const"() <{values = dense<2> : tensor<3x1x1x4xi8>}> : () -> tensor<3x1x1x4xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<3xi48>}> : () -> tensor<3xi48>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %izp, %wzp {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x1x1x4xi16>, tensor<3x1x1x4xi8>, tensor<3xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<2x1x1x3xi48>
  %m = "tosa.const"() <{values = dense<16384> : tensor<1xi16>}> : () -> tensor<1xi16>
  %s = "tosa.const"() <{values = dense<20> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z48 = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %ozp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %1 = tosa.rescale %0, %m, %s, %z48, %ozp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<2x1x1x3xi48>, tensor<1xi16>, tensor<1xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<2x1x1x3xi16>
  return %1 : tensor<2x1x1x3xi16>
}

// An int16 TABLE's int32 result carries 7 fraction bits, not an accumulator: its rescale to int16
// rounds once even where double rounding is required.
// CHECK-LABEL: func.func @table$int16
// STRICT-LABEL: func.func @table$int16
// STRICT: tosa.table
// STRICT: SINGLE_ROUND
func.func @table$int16(%arg0: tensor<1x8xi16>) -> tensor<1x8xi16> {
  %t = "tosa.const"() <{values = dense<3> : tensor<513xi16>}> : () -> tensor<513xi16>
  %0 = tosa.table %arg0, %t : (tensor<1x8xi16>, tensor<513xi16>) -> tensor<1x8xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<37> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %z16 = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %1 = tosa.rescale %0, %m, %s, %z32, %z16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi16>) -> tensor<1x8xi16>
  return %1 : tensor<1x8xi16>
}

// A declaration has no body to check.
// CHECK-LABEL: func.func private @declared
func.func private @declared(tensor<1x4xi8>) -> tensor<1x4xi8>
