// RUN: mcu-opt %s --split-input-file --verify-diagnostics --mcu-verify-value-ranges

// Each case can reach, for some input, a REQUIRE of the TOSA specification that fails
// (UNPREDICTABLE: tosa_reference_model stops, a kernel overflows).

// RESCALE of an int32 accumulator: apply_scale_32 REQUIREs |value| < 2**(shift-1); any i32 input
// reaches 2**31 while the shift is 20.
func.func @rescale$value_past_shift(%arg0: tensor<4xi32>) -> tensor<4xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<20> : tensor<1xi8>}> : () -> tensor<1xi8>
  %iz = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{'tosa.rescale' may be UNPREDICTABLE: its input after the zero point reaches [-2147483648, 2147483647]; with shift 20, apply_scale_32 REQUIREs -2**19 <= value < 2**19}}
  %0 = tosa.rescale %arg0, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// Per channel: channel 1's shift admits only [-2**5, 2**5) of a clamped input in [-100, 100].
func.func @rescale$per_channel(%arg0: tensor<1x2xi32>) -> tensor<1x2xi8> {
  %c = tosa.clamp %arg0 {max_val = 100 : i32, min_val = -100 : i32} : (tensor<1x2xi32>) -> tensor<1x2xi32>
  %m = "tosa.const"() <{values = dense<[1073741824, 1073741824]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %s = "tosa.const"() <{values = dense<[30, 6]> : tensor<2xi8>}> : () -> tensor<2xi8>
  %iz = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{its input (channel 1) after the zero point reaches [-100, 100]; with shift 6, apply_scale_32 REQUIREs -2**5 <= value < 2**5}}
  %0 = tosa.rescale %c, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x2xi8>
  return %0 : tensor<1x2xi8>
}

// -----

// apply_scale_32 REQUIREs 2 <= shift <= 62.
func.func @rescale$shift_one(%arg0: tensor<4xi8>) -> tensor<4xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>
  %iz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{its shift is 1; apply_scale_32 REQUIREs 2 <= shift <= 62}}
  %0 = tosa.rescale %arg0, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// apply_scale_32 REQUIREs multiplier >= 0.
func.func @rescale$negative_multiplier(%arg0: tensor<4xi8>) -> tensor<4xi8> {
  %m = "tosa.const"() <{values = dense<-1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %iz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{its multiplier is -1073741824; apply_scale_32 REQUIREs multiplier >= 0}}
  %0 = tosa.rescale %arg0, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// apply_scale_16 of an int48 accumulator REQUIREs an int32 result: 2**47 * 32767 * 2**-2 is not.
func.func @rescale$scale16_result(%arg0: tensor<4xi48>) -> tensor<4xi16> {
  %m = "tosa.const"() <{values = dense<32767> : tensor<1xi16>}> : () -> tensor<1xi16>
  %s = "tosa.const"() <{values = dense<2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %iz = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  // expected-error @below {{past int32 (apply_scale_16 REQUIREs it to fit)}}
  %0 = tosa.rescale %arg0, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<4xi48>, tensor<1xi16>, tensor<1xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

// CONV2D: 1 x 1 x 40000 weights of 127 against int16 inputs overflow the int32 accumulator.
func.func @conv2d$accumulator(%arg0: tensor<1x1x1x40000xi16>) -> tensor<1x1x1x1xi32> {
  %w = "tosa.const"() <{values = dense<127> : tensor<1x1x1x40000xi16>}> : () -> tensor<1x1x1x40000xi16>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  // expected-error @below {{its conv2d accumulator (output channel 0) reaches [-166461440000, 166456360000] for inputs in [-32768, 32767] after the zero point, past i32: apply_add_s REQUIREs every partial sum to fit}}
  %0 = tosa.conv2d %arg0, %w, %b, %z, %z {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x40000xi16>, tensor<1x1x1x40000xi16>, tensor<1xi32>, tensor<1xi16>, tensor<1xi16>) -> tensor<1x1x1x1xi32>
  return %0 : tensor<1x1x1x1xi32>
}

// -----

// The bias addition: an int8 conv's accumulator fits, but 2**31 - 100 more does not.
func.func @conv2d$bias(%arg0: tensor<1x1x1x1xi8>) -> tensor<1x1x1x1xi32> {
  %w = "tosa.const"() <{values = dense<1> : tensor<1x1x1x1xi8>}> : () -> tensor<1x1x1x1xi8>
  %b = "tosa.const"() <{values = dense<2147483547> : tensor<1xi32>}> : () -> tensor<1xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{its accumulator plus bias (output channel 0) reaches [2147483419, 2147483674], past i32: apply_add_s REQUIREs it to fit}}
  %0 = tosa.conv2d %arg0, %w, %b, %z, %z {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x1xi8>, tensor<1x1x1x1xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x1xi32>
  return %0 : tensor<1x1x1x1xi32>
}

// -----

// DEPTHWISE_CONV2D: channel 1's 3x3 taps of 32767 on int16 inputs overflow; channel 0's do not.
func.func @depthwise$accumulator(%arg0: tensor<1x3x3x2xi16>) -> tensor<1x1x1x2xi32> {
  %w = "tosa.const"() <{values = dense<[[[[1], [32767]], [[1], [32767]], [[1], [32767]]], [[[1], [32767]], [[1], [32767]], [[1], [32767]]], [[[1], [32767]], [[1], [32767]], [[1], [32767]]]]> : tensor<3x3x2x1xi16>}> : () -> tensor<3x3x2x1xi16>
  %b = "tosa.const"() <{values = dense<0> : tensor<2xi32>}> : () -> tensor<2xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  // expected-error @below {{its depthwise_conv2d accumulator (output channel 1) reaches [-9663381504, 9663086601]}}
  %0 = tosa.depthwise_conv2d %arg0, %w, %b, %z, %z {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xi16>, tensor<3x3x2x1xi16>, tensor<2xi32>, tensor<1xi16>, tensor<1xi16>) -> tensor<1x1x1x2xi32>
  return %0 : tensor<1x1x1x2xi32>
}

// -----

// MATMUL of two int16 operands over 4 terms: 4 * 2**30 leaves int32.
func.func @matmul$accumulator(%a: tensor<1x2x4xi16>, %b: tensor<1x4x3xi16>) -> tensor<1x2x3xi32> {
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  // expected-error @below {{its matmul accumulator reaches [-4294836224, 4294967296] (4 products of [-32768, 32767] and [-32768, 32767]), past i32}}
  %0 = tosa.matmul %a, %b, %z, %z : (tensor<1x2x4xi16>, tensor<1x4x3xi16>, tensor<1xi16>, tensor<1xi16>) -> tensor<1x2x3xi32>
  return %0 : tensor<1x2x3xi32>
}

// -----

// ADD / SUB of int32: apply_add_s / apply_sub_s REQUIRE the result in int32.
func.func @add$overflow(%arg0: tensor<4xi32>, %arg1: tensor<4xi16>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = tosa.cast %arg1 : (tensor<4xi16>) -> tensor<4xi32>
  %c = "tosa.const"() <{values = dense<2147483000> : tensor<1xi32>}> : () -> tensor<1xi32>
  // expected-error @below {{'tosa.add' may be UNPREDICTABLE: the sum reaches [2147450232, 2147515767], past i32 ([-2147483648, 2147483647]): the specification REQUIREs it to fit}}
  %1 = tosa.add %0, %c : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  // expected-error @below {{'tosa.sub' may be UNPREDICTABLE: the difference reaches [-2147515768, -2147450233]}}
  %2 = tosa.sub %0, %c : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  return %1, %2 : tensor<4xi32>, tensor<4xi32>
}

// -----

// MUL of int32 with a shift REQUIREs the rounded product in int32; a square reads its operand twice, so
// the error names an input that fails (split down to one value).
func.func @mul$shifted(%arg0: tensor<4xi32>) -> tensor<4xi32> {
  %s = "tosa.const"() <{values = dense<15> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{'tosa.mul' may be UNPREDICTABLE: the product rounded by 2**-15 reaches [140737488355328, 140737488355328], past i32 ([-2147483648, 2147483647]): the specification REQUIREs it to fit (where an argument is -2147483648)}}
  %0 = tosa.mul %arg0, %arg0, %s : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Shift amounts: 0 <= shift <= bits - 1 for ARITHMETIC_RIGHT_SHIFT, LOGICAL_LEFT_SHIFT, LOGICAL_RIGHT_SHIFT.
func.func @shifts$amount(%arg0: tensor<4xi32>, %arg1: tensor<4xi8>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = tosa.cast %arg1 : (tensor<4xi8>) -> tensor<4xi32>
  // expected-error @below {{'tosa.arithmetic_right_shift' may be UNPREDICTABLE: its shift amount reaches [-128, 127]; ARITHMETIC_RIGHT_SHIFT of i32 REQUIREs 0 <= shift <= 31}}
  %1 = tosa.arithmetic_right_shift %arg0, %0 {round = true} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %c = tosa.clamp %0 {max_val = 32 : i32, min_val = 0 : i32} : (tensor<4xi32>) -> tensor<4xi32>
  // expected-error @below {{'tosa.logical_left_shift' may be UNPREDICTABLE: its shift amount reaches [0, 32]; LOGICAL_LEFT_SHIFT of i32 REQUIREs 0 <= shift <= 31}}
  %2 = tosa.logical_left_shift %arg0, %c : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // expected-error @below {{'tosa.logical_right_shift' may be UNPREDICTABLE: its shift amount reaches [0, 32]}}
  %3 = tosa.logical_right_shift %arg0, %c : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// INTDIV REQUIREs a divisor that is never 0.
func.func @intdiv$zero(%arg0: tensor<4xi32>, %arg1: tensor<4xi8>) -> tensor<4xi32> {
  %0 = tosa.cast %arg1 : (tensor<4xi8>) -> tensor<4xi32>
  // expected-error @below {{'tosa.intdiv' may be UNPREDICTABLE: its divisor reaches [-128, 127], which holds 0}}
  %1 = tosa.intdiv %arg0, %0 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %1 : tensor<4xi32>
}

// -----

// NEGATE and ABS of int32: 0 - (-2**31) does not fit.
func.func @negate$minimum(%arg0: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  // expected-error @below {{'tosa.negate' may be UNPREDICTABLE: 0 - (input - zero point) reaches [-2147483647, 2147483648]}}
  %0 = tosa.negate %arg0, %z, %z : (tensor<4xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
  // expected-error @below {{'tosa.abs' may be UNPREDICTABLE: its input reaches -2147483648, the type's minimum}}
  %1 = tosa.abs %arg0 : (tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// REDUCE_SUM adds with apply_add_s: 2**16 + 1 int16 values can leave int32.
func.func @reduce_sum$overflow(%arg0: tensor<1x65537xi16>) -> tensor<1x1xi32> {
  %0 = tosa.cast %arg0 : (tensor<1x65537xi16>) -> tensor<1x65537xi32>
  // expected-error @below {{'tosa.reduce_sum' may be UNPREDICTABLE: the sum of 65537 values reaches [-2147516416, 2147450879]}}
  %1 = tosa.reduce_sum %0 {axis = 1 : i32} : (tensor<1x65537xi32>) -> tensor<1x1xi32>
  return %1 : tensor<1x1xi32>
}

// -----

// GATHER REQUIREs 0 <= index < K.
func.func @gather$index(%arg0: tensor<1x4xi32>) -> tensor<1x4x1xi8> {
  %v = "tosa.const"() <{values = dense<1> : tensor<1x16x1xi8>}> : () -> tensor<1x16x1xi8>
  %c = tosa.clamp %arg0 {max_val = 16 : i32, min_val = 0 : i32} : (tensor<1x4xi32>) -> tensor<1x4xi32>
  // expected-error @below {{'tosa.gather' may be UNPREDICTABLE: an index reaches [0, 16], past the values' 16 rows}}
  %0 = tosa.gather %v, %c : (tensor<1x16x1xi8>, tensor<1x4xi32>) -> tensor<1x4x1xi8>
  return %0 : tensor<1x4x1xi8>
}

// -----

// Splitting finds the input that fails: x * (65536 - x) + 2**30 + 1 leaves int32 at x = 32767 only.
func.func @split$one_value(%arg0: tensor<4xi16>) -> tensor<4xi32> {
  %c = tosa.clamp %arg0 {max_val = 32767 : i16, min_val = 0 : i16} : (tensor<4xi16>) -> tensor<4xi16>
  %x = tosa.cast %c : (tensor<4xi16>) -> tensor<4xi32>
  %k = "tosa.const"() <{values = dense<65536> : tensor<1xi32>}> : () -> tensor<1xi32>
  %d = tosa.sub %k, %x : (tensor<1xi32>, tensor<4xi32>) -> tensor<4xi32>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %x, %d, %z8 : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
  %h = "tosa.const"() <{values = dense<1073741825> : tensor<1xi32>}> : () -> tensor<1xi32>
  // expected-error @below {{'tosa.add' may be UNPREDICTABLE: the sum reaches [2147483648, 2147483648], past i32 ([-2147483648, 2147483647]): the specification REQUIREs it to fit (where an argument is 32767)}}
  %s = tosa.add %p, %h : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  return %s : tensor<4xi32>
}

// -----

// The same normalisation with 2**25 / (S + 1): at S = 1 the product reaches 2**24, past the shift's 2**24.
func.func @norm$too_large(%arg0: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %d = tosa.cast %arg0 : (tensor<1x8xi8>) -> tensor<1x8xi32>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sq = tosa.mul %d, %d, %z8 : (tensor<1x8xi32>, tensor<1x8xi32>, tensor<1xi8>) -> tensor<1x8xi32>
  %s = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<1x8xi32>) -> tensor<1x1xi32>
  %one = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %s1 = tosa.add %s, %one : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %c = "tosa.const"() <{values = dense<33554432> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %t = tosa.intdiv %c, %s1 : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %p = tosa.mul %d, %t, %z8 : (tensor<1x8xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x8xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %sh = "tosa.const"() <{values = dense<25> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  // expected-error @below {{'tosa.rescale' may be UNPREDICTABLE: its input after the zero point reaches [-16777216, 16777216]; with shift 25, apply_scale_32 REQUIREs -2**24 <= value < 2**24 (where the 'tosa.reduce_sum' result is 1)}}
  %r = tosa.rescale %p, %m, %sh, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  return %r : tensor<1x8xi8>
}

// -----

// A mask row that keeps nothing: its sum is 0 and the division is UNPREDICTABLE.
func.func @intdiv$empty_mask_row(%arg0: tensor<1x2x2xi8>) -> tensor<1x2x2xi32> {
  %x = tosa.cast %arg0 : (tensor<1x2x2xi8>) -> tensor<1x2x2xi32>
  %e = tosa.clamp %x {max_val = 100 : i32, min_val = 15 : i32} : (tensor<1x2x2xi32>) -> tensor<1x2x2xi32>
  %mask = "tosa.const"() <{values = dense<[[[true, false], [false, false]]]> : tensor<1x2x2xi1>}> : () -> tensor<1x2x2xi1>
  %zero = "tosa.const"() <{values = dense<0> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
  %kept = tosa.select %mask, %e, %zero : (tensor<1x2x2xi1>, tensor<1x2x2xi32>, tensor<1x1x1xi32>) -> tensor<1x2x2xi32>
  %sum = tosa.reduce_sum %kept {axis = 2 : i32} : (tensor<1x2x2xi32>) -> tensor<1x2x1xi32>
  // expected-error @below {{'tosa.intdiv' may be UNPREDICTABLE: its divisor reaches [0, 100], which holds 0 (INTDIV REQUIREs divisor != 0)}}
  %q = tosa.intdiv %e, %sum : (tensor<1x2x2xi32>, tensor<1x2x1xi32>) -> tensor<1x2x2xi32>
  return %q : tensor<1x2x2xi32>
}

// -----

// GATHER of ids read straight from the input (an embedding without its clamp): any int32 reaches
// past the table on both sides.
func.func @gather$unclamped_ids(%ids: tensor<1x4xi32>) -> tensor<1x4x8xi8> {
  %v = "tosa.const"() <{values = dense<1> : tensor<1x16x8xi8>}> : () -> tensor<1x16x8xi8>
  // expected-error @below {{'tosa.gather' may be UNPREDICTABLE: an index reaches [-2147483648, 2147483647], past the values' 16 rows (GATHER REQUIREs 0 <= index < K)}}
  %0 = tosa.gather %v, %ids : (tensor<1x16x8xi8>, tensor<1x4xi32>) -> tensor<1x4x8xi8>
  return %0 : tensor<1x4x8xi8>
}

// -----

// TRANSPOSE_CONV2D: 140000 input channels of int8 against weights of 127 overflow the int32 accumulator.
func.func @transpose_conv2d$accumulator(%arg0: tensor<1x1x1x140000xi8>) -> tensor<1x1x1x1xi32> {
  %w = "tosa.const"() <{values = dense<127> : tensor<1x1x1x140000xi8>}> : () -> tensor<1x1x1x140000xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{'tosa.transpose_conv2d' may be UNPREDICTABLE: its transpose_conv2d accumulator (output channel 0) reaches [-2275840000, 2258060000]}}
  %0 = tosa.transpose_conv2d %arg0, %w, %b, %z, %z {acc_type = i32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x140000xi8>, tensor<1x1x1x140000xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x1xi32>
  return %0 : tensor<1x1x1x1xi32>
}

// -----

// CONV3D: the same accumulator over a 1x1x1 window of 140000 channels.
func.func @conv3d$accumulator(%arg0: tensor<1x1x1x1x140000xi8>) -> tensor<1x1x1x1x1xi32> {
  %w = "tosa.const"() <{values = dense<127> : tensor<1x1x1x1x140000xi8>}> : () -> tensor<1x1x1x1x140000xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{'tosa.conv3d' may be UNPREDICTABLE: its conv3d accumulator (output channel 0) reaches [-2275840000, 2258060000]}}
  %0 = tosa.conv3d %arg0, %w, %b, %z, %z {acc_type = i32, dilation = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>} : (tensor<1x1x1x1x140000xi8>, tensor<1x1x1x1x140000xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x1x1xi32>
  return %0 : tensor<1x1x1x1x1xi32>
}

// -----

// AVG_POOL2D sums its window in int32 (apply_add_s): 257 x 256 int16 values can leave it.
func.func @avg_pool2d$window_sum(%arg0: tensor<1x257x256x1xi16>) -> tensor<1x1x1x1xi16> {
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  // expected-error @below {{'tosa.avg_pool2d' may be UNPREDICTABLE: the sum of a 257x256 window reaches 2155872256 in magnitude, past i32}}
  %0 = tosa.avg_pool2d %arg0, %z, %z {acc_type = i32, kernel = array<i64: 257, 256>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x257x256x1xi16>, tensor<1xi16>, tensor<1xi16>) -> tensor<1x1x1x1xi16>
  return %0 : tensor<1x1x1x1xi16>
}

// -----

// INTDIV REQUIREs a quotient that fits: -2**31 / -1 does not, though the divisor is never 0.
func.func @intdiv$minimum_by_minus_one(%arg0: tensor<4xi32>, %arg1: tensor<4xi8>) -> tensor<4xi32> {
  %c = tosa.clamp %arg1 {max_val = -1 : i8, min_val = -5 : i8} : (tensor<4xi8>) -> tensor<4xi8>
  %d = tosa.cast %c : (tensor<4xi8>) -> tensor<4xi32>
  // expected-error @below {{'tosa.intdiv' may be UNPREDICTABLE: -2147483648 / -1 does not fit (INTDIV REQUIREs the quotient to)}}
  %0 = tosa.intdiv %arg0, %d : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// MUL REQUIREs 0 <= shift <= 63.
func.func @mul$shift_past_63(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>) -> tensor<4xi32> {
  %s = "tosa.const"() <{values = dense<64> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error @below {{'tosa.mul' may be UNPREDICTABLE: its shift is 64; MUL REQUIREs 0 <= shift <= 63}}
  %0 = tosa.mul %arg0, %arg1, %s : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// RESCALE adds its output zero point in int32 (apply_add_s): an int48 accumulator in [0, 24 * 32767]
// scaled by 10923 * 2**-2 reaches 2**31 - 2, and a uint16 output's zero point 32768 more leaves int32.
func.func @rescale$output_zero_point(%arg0: tensor<1x1x1x24xi16>) -> tensor<1x1x1x1xi16> {
  %c = tosa.clamp %arg0 {max_val = 32767 : i16, min_val = 0 : i16} : (tensor<1x1x1x24xi16>) -> tensor<1x1x1x24xi16>
  %w = "tosa.const"() <{values = dense<1> : tensor<1x1x1x24xi8>}> : () -> tensor<1x1x1x24xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %z16 = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %acc = tosa.conv2d %c, %w, %b, %z16, %z8 {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x24xi16>, tensor<1x1x1x24xi8>, tensor<1xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x1x1x1xi48>
  %m = "tosa.const"() <{values = dense<10923> : tensor<1xi16>}> : () -> tensor<1xi16>
  %s = "tosa.const"() <{values = dense<2> : tensor<1xi8>}> : () -> tensor<1xi8>
  %iz = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %oz = "tosa.const"() <{values = dense<-32768> : tensor<1xi16>}> : () -> tensor<1xi16>
  // expected-error @below {{'tosa.rescale' may be UNPREDICTABLE: the scaled value plus the output zero point 32768 leaves int32 (apply_add_s REQUIREs it to fit)}}
  %0 = tosa.rescale %acc, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = true, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<1x1x1x1xi48>, tensor<1xi16>, tensor<1xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<1x1x1x1xi16>
  return %0 : tensor<1x1x1x1xi16>
}

// -----

// The same softmax with the fill 0: a row whose kept scores are all -32768 has a masked max, every
// kept entry then looks up entry 256 (0) and the masked sum is 0.
func.func @softmax$masked_fill_above_a_kept_score(%arg0: tensor<1x3x4xi16>) -> tensor<1x3x4xi32> {
  %mask = "tosa.const"() <{values = dense<[[[true, false, false, false], [true, true, false, false], [true, true, true, false]]]> : tensor<1x3x4xi1>}> : () -> tensor<1x3x4xi1>
  %low = "tosa.const"() <{values = dense<0> : tensor<1x1x1xi16>}> : () -> tensor<1x1x1xi16>
  %s = tosa.select %mask, %arg0, %low : (tensor<1x3x4xi1>, tensor<1x3x4xi16>, tensor<1x1x1xi16>) -> tensor<1x3x4xi16>
  %x = tosa.cast %s : (tensor<1x3x4xi16>) -> tensor<1x3x4xi32>
  %mx = tosa.reduce_max %x {axis = 2 : i32} : (tensor<1x3x4xi32>) -> tensor<1x3x1xi32>
  %d = tosa.sub %mx, %x : (tensor<1x3x1xi32>, tensor<1x3x4xi32>) -> tensor<1x3x4xi32>
  %c = "tosa.const"() <{values = dense<32768> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
  %i = tosa.sub %d, %c : (tensor<1x3x4xi32>, tensor<1x1x1xi32>) -> tensor<1x3x4xi32>
  %i16 = tosa.cast %i : (tensor<1x3x4xi32>) -> tensor<1x3x4xi16>
  %tab = "tosa.const"() <{values = dense<[100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<513xi16>}> : () -> tensor<513xi16>
  %e = tosa.table %i16, %tab : (tensor<1x3x4xi16>, tensor<513xi16>) -> tensor<1x3x4xi32>
  %zero = "tosa.const"() <{values = dense<0> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
  %k = tosa.select %mask, %e, %zero : (tensor<1x3x4xi1>, tensor<1x3x4xi32>, tensor<1x1x1xi32>) -> tensor<1x3x4xi32>
  %sum = tosa.reduce_sum %k {axis = 2 : i32} : (tensor<1x3x4xi32>) -> tensor<1x3x1xi32>
  // expected-error @below {{'tosa.intdiv' may be UNPREDICTABLE: its divisor reaches [0, 38400], which holds 0}}
  %q = tosa.intdiv %e, %sum : (tensor<1x3x4xi32>, tensor<1x3x1xi32>) -> tensor<1x3x4xi32>
  return %q : tensor<1x3x4xi32>
}
