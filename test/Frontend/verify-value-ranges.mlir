// RUN: mcu-opt %s --split-input-file --mcu-verify-value-ranges | FileCheck %s

// Programs whose REQUIREs hold for every input pass unchanged.

// The accumulator of an int8 conv from its actual weights: |w| sums 4 * 127 (channel 0) and 4 * 1
// (channel 1), times 255 after the zero point, plus the bias; each channel's rescale admits its
// own bound (channel 1's shift of 13 admits only |value| < 2**12).
// CHECK-LABEL: func.func @conv2d$per_channel
// CHECK: tosa.rescale
func.func @conv2d$per_channel(%arg0: tensor<1x2x2x1xi8>) -> tensor<1x1x1x2xi8> {
  %w = "tosa.const"() <{values = dense<[[[[127], [-127]], [[127], [-127]]], [[[1], [-1]], [[1], [-1]]]]> : tensor<2x2x2x1xi8>}> : () -> tensor<2x2x2x1xi8>
  %b = "tosa.const"() <{values = dense<[1000, -10]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %iz = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %iz, %wz {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x1xi8>, tensor<2x2x2x1xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x2xi32>
  %m = "tosa.const"() <{values = dense<[1073741824, 1073741824]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %s = "tosa.const"() <{values = dense<[30, 13]> : tensor<2xi8>}> : () -> tensor<2xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %1 = tosa.rescale %0, %m, %s, %z32, %oz {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x1x1x2xi32>, tensor<2xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x1x1x2xi8>
  return %1 : tensor<1x1x1x2xi8>
}

// -----

// A clamp narrows the interval: the rescale that refuses any int32 admits [-100, 100], through a
// reshape, a transpose, a slice, a pad and a concat.
// CHECK-LABEL: func.func @clamp$narrows
// CHECK: tosa.rescale
func.func @clamp$narrows(%arg0: tensor<2x3xi32>) -> tensor<3x5xi8> {
  %c = tosa.clamp %arg0 {max_val = 100 : i32, min_val = -100 : i32} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %t = tosa.transpose %c {perms = array<i32: 1, 0>} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %shape = tosa.const_shape {values = dense<[3, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %r = tosa.reshape %t, %shape : (tensor<3x2xi32>, !tosa.shape<2>) -> tensor<3x2xi32>
  %start = tosa.const_shape {values = dense<[0, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[3, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sl = tosa.slice %r, %start, %size : (tensor<3x2xi32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<3x1xi32>
  %padding = tosa.const_shape {values = dense<[0, 0, 0, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %pv = "tosa.const"() <{values = dense<7> : tensor<1xi32>}> : () -> tensor<1xi32>
  %p = tosa.pad %sl, %padding, %pv : (tensor<3x1xi32>, !tosa.shape<4>, tensor<1xi32>) -> tensor<3x3xi32>
  %cat = tosa.concat %p, %r {axis = 1 : i32} : (tensor<3x3xi32>, tensor<3x2xi32>) -> tensor<3x5xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<8> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %1 = tosa.rescale %cat, %m, %s, %z32, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<3x5xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<3x5xi8>
  return %1 : tensor<3x5xi8>
}

// -----

// A rescale's output is its own rounding of its input's bounds; an int16 TABLE's output is the
// entries its input can index (<< 7); int48 accumulators go through apply_scale_16.
// CHECK-LABEL: func.func @table$entries
// CHECK: tosa.table
func.func @table$entries(%arg0: tensor<4xi8>) -> tensor<4xi32> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z16 = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %0 = tosa.rescale %arg0, %m, %s, %z8, %z16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi16>) -> tensor<4xi16>
  %t = "tosa.const"() <{values = dense<1000> : tensor<513xi16>}> : () -> tensor<513xi16>
  %1 = tosa.table %0, %t : (tensor<4xi16>, tensor<513xi16>) -> tensor<4xi32>
  %s2 = "tosa.const"() <{values = dense<20> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  // 128000 < 2**19: admitted (any int32 would not be).
  %2 = tosa.rescale %1, %m, %s2, %z32, %z32 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
  return %2 : tensor<4xi32>
}

// -----

// An int16 conv's int48 accumulator rescaled by apply_scale_16: the result fits int32.
// CHECK-LABEL: func.func @conv2d$int48
// CHECK: tosa.rescale
func.func @conv2d$int48(%arg0: tensor<1x1x1x8xi16>) -> tensor<1x1x1x1xi16> {
  %w = "tosa.const"() <{values = dense<127> : tensor<1x1x1x8xi8>}> : () -> tensor<1x1x1x8xi8>
  %b = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %z16 = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %z16, %z8 {acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x8xi16>, tensor<1x1x1x8xi8>, tensor<1xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x1x1x1xi48>
  %m = "tosa.const"() <{values = dense<16384> : tensor<1xi16>}> : () -> tensor<1xi16>
  %s = "tosa.const"() <{values = dense<20> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z48 = "tosa.const"() <{values = dense<0> : tensor<1xi48>}> : () -> tensor<1xi48>
  %1 = tosa.rescale %0, %m, %s, %z48, %z16 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = false} : (tensor<1x1x1x1xi48>, tensor<1xi16>, tensor<1xi8>, tensor<1xi48>, tensor<1xi16>) -> tensor<1x1x1x1xi16>
  return %1 : tensor<1x1x1x1xi16>
}

// -----

// A softmax's normalisation: max(x) - x is in [0, 255] and 0 in every row, so the sum of its
// exponentials is at least the table's first entry and the shift 23 - clz(sum) is never negative.
// CHECK-LABEL: func.func @softmax$sum
// CHECK: tosa.logical_right_shift
func.func @softmax$sum(%arg0: tensor<1x10x3xi8>) -> tensor<1x1x3xi32> {
  %x = tosa.cast %arg0 : (tensor<1x10x3xi8>) -> tensor<1x10x3xi32>
  %max = tosa.reduce_max %x {axis = 1 : i32} : (tensor<1x10x3xi32>) -> tensor<1x1x3xi32>
  %d = tosa.sub %max, %x : (tensor<1x1x3xi32>, tensor<1x10x3xi32>) -> tensor<1x10x3xi32>
  %flat = tosa.const_shape {values = dense<[1, 30]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %i = tosa.reshape %d, %flat : (tensor<1x10x3xi32>, !tosa.shape<2>) -> tensor<1x30xi32>
  %exp = "tosa.const"() <{values = dense<2097152> : tensor<1x256x1xi32>}> : () -> tensor<1x256x1xi32>
  %e = tosa.gather %exp, %i : (tensor<1x256x1xi32>, tensor<1x30xi32>) -> tensor<1x30x1xi32>
  %back = tosa.const_shape {values = dense<[1, 10, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %e3 = tosa.reshape %e, %back : (tensor<1x30x1xi32>, !tosa.shape<3>) -> tensor<1x10x3xi32>
  %sum = tosa.reduce_sum %e3 {axis = 1 : i32} : (tensor<1x10x3xi32>) -> tensor<1x1x3xi32>
  %clz = tosa.clz %sum : (tensor<1x1x3xi32>) -> tensor<1x1x3xi32>
  %c23 = "tosa.const"() <{values = dense<23> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
  %sh = tosa.sub %c23, %clz : (tensor<1x1x1xi32>, tensor<1x1x3xi32>) -> tensor<1x1x3xi32>
  %n = tosa.logical_right_shift %sum, %sh : (tensor<1x1x3xi32>, tensor<1x1x3xi32>) -> tensor<1x1x3xi32>
  return %n : tensor<1x1x3xi32>
}

// -----

// A square is non-negative, and x << (clz(x) - 1) keeps x below 2**31 (a square root's normalisation).
// CHECK-LABEL: func.func @normalise$clz
// CHECK: tosa.rescale
func.func @normalise$clz(%arg0: tensor<4xi16>) -> tensor<4xi8> {
  %x = tosa.cast %arg0 : (tensor<4xi16>) -> tensor<4xi32>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sq = tosa.mul %x, %x, %z8 : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
  %clz = tosa.clz %sq : (tensor<4xi32>) -> tensor<4xi32>
  %one = "tosa.const"() <{values = dense<1> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = tosa.sub %clz, %one : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %mask = "tosa.const"() <{values = dense<-2> : tensor<1xi32>}> : () -> tensor<1xi32>
  %even = tosa.bitwise_and %s, %mask : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %n = tosa.logical_left_shift %sq, %even : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s31 = "tosa.const"() <{values = dense<32> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %r = tosa.rescale %n, %m, %s31, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<4xi8>
  return %r : tensor<4xi8>
}

// -----

// MATMUL by constant weights: each output column's own |w| sum; AVG_POOL2D's window sum.
// CHECK-LABEL: func.func @matmul$constant
// CHECK: tosa.matmul
func.func @matmul$constant(%arg0: tensor<1x2x4xi8>, %arg1: tensor<1x4x4x8xi8>) -> (tensor<1x2x3xi32>, tensor<1x1x1x8xi8>) {
  %b = "tosa.const"() <{values = dense<127> : tensor<1x4x3xi8>}> : () -> tensor<1x4x3xi8>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.matmul %arg0, %b, %z, %z : (tensor<1x2x4xi8>, tensor<1x4x3xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x3xi32>
  %1 = tosa.avg_pool2d %arg1, %z, %z {acc_type = i32, kernel = array<i64: 4, 4>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x8xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x8xi8>
  return %0, %1 : tensor<1x2x3xi32>, tensor<1x1x1x8xi8>
}

// -----

// Intervals forget that both operands come from x: x * (65536 - x) + 2**30 looks like it reaches
// 32767 * 65536 + 2**30 > 2**31, but the chain from x, evaluated again on halves of x's interval,
// is at most 32767 * 32769 + 2**30 = 2**31 - 1.
// CHECK-LABEL: func.func @split$correlated
// CHECK: tosa.add
func.func @split$correlated(%arg0: tensor<4xi16>) -> tensor<4xi32> {
  %c = tosa.clamp %arg0 {max_val = 32767 : i16, min_val = 0 : i16} : (tensor<4xi16>) -> tensor<4xi16>
  %x = tosa.cast %c : (tensor<4xi16>) -> tensor<4xi32>
  %k = "tosa.const"() <{values = dense<65536> : tensor<1xi32>}> : () -> tensor<1xi32>
  %d = tosa.sub %k, %x : (tensor<1xi32>, tensor<4xi32>) -> tensor<4xi32>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %x, %d, %z8 : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
  %h = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = tosa.add %p, %h : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  return %s : tensor<4xi32>
}

// -----

// A select whose predicate is decided takes one branch; a mask of low bits (0x7FFFFFFF) or of high
// bits (-2) keeps an interval that stays in one block; a shift by one amount wraps both bounds alike.
// CHECK-LABEL: func.func @bits$masks
// CHECK: tosa.rescale
func.func @bits$masks(%arg0: tensor<4xi8>, %arg1: tensor<4xi32>) -> tensor<4xi8> {
  %x = tosa.cast %arg0 : (tensor<4xi8>) -> tensor<4xi32>
  %c = tosa.clamp %x {max_val = 127 : i32, min_val = 64 : i32} : (tensor<4xi32>) -> tensor<4xi32>
  %s25 = "tosa.const"() <{values = dense<25> : tensor<1xi32>}> : () -> tensor<1xi32>
  // [64, 127] << 25 = [2**31, 2**32 - 2**25]: as int32, [-2**31, -2**25].
  %w = tosa.logical_left_shift %c, %s25 : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %low = "tosa.const"() <{values = dense<2147483647> : tensor<1xi32>}> : () -> tensor<1xi32>
  %a = tosa.bitwise_and %w, %low : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %even = "tosa.const"() <{values = dense<-2> : tensor<1xi32>}> : () -> tensor<1xi32>
  %b = tosa.bitwise_and %c, %even : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi32>
  %zero = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %pos = tosa.greater %c, %zero : (tensor<4xi32>, tensor<1xi32>) -> tensor<4xi1>
  // Always %a, in [0, 2**31 - 2**25]; the other branch (any int32) is never taken.
  %sel = tosa.select %pos, %a, %arg1 : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<32> : tensor<1xi8>}> : () -> tensor<1xi8>
  %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.rescale %sel, %m, %s, %zero, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<4xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<4xi8>
  return %r : tensor<4xi8>
}

// -----

// A normalisation: d * (2**24 / (S + 1)) with S = sum(d * d) over the row. Intervals alone give
// |d| * 2**24 = 2**31; in a row whose S is at most s, |d| <= sqrt(s) (Cauchy-Schwarz), so splitting
// S's interval bounds the product by 2**23 (at S = 1), which the rescale's shift of 25 admits.
// CHECK-LABEL: func.func @norm$cauchy_schwarz
// CHECK: tosa.rescale
func.func @norm$cauchy_schwarz(%arg0: tensor<1x8xi8>) -> tensor<1x8xi8> {
  %d = tosa.cast %arg0 : (tensor<1x8xi8>) -> tensor<1x8xi32>
  %z8 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sq = tosa.mul %d, %d, %z8 : (tensor<1x8xi32>, tensor<1x8xi32>, tensor<1xi8>) -> tensor<1x8xi32>
  %s = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<1x8xi32>) -> tensor<1x1xi32>
  %one = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %s1 = tosa.add %s, %one : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %c = "tosa.const"() <{values = dense<16777216> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %t = tosa.intdiv %c, %s1 : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %p = tosa.mul %d, %t, %z8 : (tensor<1x8xi32>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<1x8xi32>
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %sh = "tosa.const"() <{values = dense<25> : tensor<1xi8>}> : () -> tensor<1xi8>
  %z32 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %r = tosa.rescale %p, %m, %sh, %z32, %z8 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8xi8>
  return %r : tensor<1x8xi8>
}

// -----

// An attention mask: each row of the constant mask keeps at least one entry, so the sum of the kept
// exponentials (each >= 1920) is never 0 and divides; a divisor whose zeros are replaced by 1
// (x == 0 ? 1 : x) divides too.
// CHECK-LABEL: func.func @intdiv$nonzero
// CHECK: tosa.intdiv
func.func @intdiv$nonzero(%arg0: tensor<1x3x3xi8>, %arg1: tensor<1x3x3xi8>) -> (tensor<1x3x3xi32>, tensor<1x3x3xi32>) {
  %x = tosa.cast %arg0 : (tensor<1x3x3xi8>) -> tensor<1x3x3xi32>
  %e = tosa.clamp %x {max_val = 100 : i32, min_val = 15 : i32} : (tensor<1x3x3xi32>) -> tensor<1x3x3xi32>
  %mask = "tosa.const"() <{values = dense<[[[true, false, false], [true, true, false], [true, true, true]]]> : tensor<1x3x3xi1>}> : () -> tensor<1x3x3xi1>
  %zero = "tosa.const"() <{values = dense<0> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
  %kept = tosa.select %mask, %e, %zero : (tensor<1x3x3xi1>, tensor<1x3x3xi32>, tensor<1x1x1xi32>) -> tensor<1x3x3xi32>
  %sum = tosa.reduce_sum %kept {axis = 2 : i32} : (tensor<1x3x3xi32>) -> tensor<1x3x1xi32>
  %q = tosa.intdiv %e, %sum : (tensor<1x3x3xi32>, tensor<1x3x1xi32>) -> tensor<1x3x3xi32>
  %y = tosa.cast %arg1 : (tensor<1x3x3xi8>) -> tensor<1x3x3xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
  %isz = tosa.equal %y, %z : (tensor<1x3x3xi32>, tensor<1x1x1xi32>) -> tensor<1x3x3xi1>
  %one = "tosa.const"() <{values = dense<1> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
  %d = tosa.select %isz, %one, %y : (tensor<1x3x3xi1>, tensor<1x1x1xi32>, tensor<1x3x3xi32>) -> tensor<1x3x3xi32>
  %r = tosa.intdiv %x, %d : (tensor<1x3x3xi32>, tensor<1x3x3xi32>) -> tensor<1x3x3xi32>
  return %q, %r : tensor<1x3x3xi32>, tensor<1x3x3xi32>
}

// -----

// GroupNorm(2, 8) as the frontend lowers it (frontend/lowering/norm.py): the deviation d times the
// rsqrt of S = sum(d * d) over a group of rows and channels (two reduce_sums), reshaped from
// [.., G, C / G] back to [.., C] before the rescale by gamma. Intervals alone leave that rescale's
// input past 2**22 (d and S look independent); in each piece of S's interval |d| <= sqrt(S)
// (Cauchy-Schwarz over the group) proves it.
// CHECK-LABEL: func.func @group_norm$two_axis_sum
// CHECK: tosa.rescale
func.func @group_norm$two_axis_sum(%arg0: tensor<1x6x6x8xi8>) -> tensor<1x8x6x6xi8> {
  %0 = tosa.const_shape  {values = dense<[1, 8, 6, 6]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %1 = tosa.const_shape  {values = dense<[1, 36, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %2 = "tosa.const"() <{values = dense<144> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
  %3 = tosa.const_shape  {values = dense<[1, 36, 2, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %4 = "tosa.const"() <{values = dense<-8> : tensor<1xi8>}> : () -> tensor<1xi8>
  %5 = "tosa.const"() <{values = dense<46> : tensor<1xi8>}> : () -> tensor<1xi8>
  %6 = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %7 = "tosa.const"() <{values = dense<23> : tensor<8xi8>}> : () -> tensor<8xi8>
  %8 = "tosa.const"() <{values = dense<1084051052> : tensor<8xi32>}> : () -> tensor<8xi32>
  %9 = "tosa.const"() <{values = dense<7> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
  %10 = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %11 = "tosa.const"() <{values = dense<"0xFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7FFF7F807F027F867E0B7E917D197DA27C2D7CB87B457BD47A637AF47986791979AD784278D97770770977A2763D76D87575751375B1745174F17392733573D8727C722172C6716D711471BC7065700F70B96F656F116FBD6E6B6E196EC86D786D286DD96C8A6C3D6CF06BA36B576B0C6BC26A786A2E6AE5699D6956690F69C86882683D68F867B46770672C67EA66A76666662466E465A36563652465E564A76469642B64EE63B16375633963FE62C36288624E621462DB61A26169613161F960C2608A6054601D60E75FB25F7C5F475F135FDE5EAA5E775E445E115EDE5DAC5D7A5D485D175DE55CB55C845C545C245CF55BC55B965B675B395B0B5BDD5AAF5A825A555A285AFB59CF59A35977594B592059F558CA589F5875584B582158F757CE57A5577C5753572A570257DA56B2568B5663563C561556EE55C755A1557B5555552F550955E454BF549954755450542B540754E353BF539B537853545331530E53EB52C852A652845261523F521D52FC51DA51B95197517651565135511451F450D350B35093507350545034501550F54FD64FB74F984F7A4F5B4F3D4F1E4F004FE24EC44EA74E894E6B4E4E4E314E144EF74DDA4DBD4DA04D844D684D4B4D2F4D134DF74CDC4CC04CA44C894C6E4C524C374C1C4C024CE74BCC4BB24B974B7D4B634B494B2F4B154BFB4AE14AC84AAE4A954A7C4A624A494A304A174AFF49E649CD49B5499D4984496C4954493C4924490C49F448DD48C548AE4896487F48684851483A4823480C48F547DE47C847B1479B4784476E47584742472C4716470047EA46D446BF46A94694467E46694654463E4629461446FF45EA45D645C145AC45974583456E455A45464532451D450945F544E144CD44B944A64492447E446B445744444430441D440A44F743E343D043BD43AA439843854372435F434D433A43284315430343F042DE42CC42BA42A84296428442724260424E423C422A4219420742F641E441D341C141B0419F418E417C416B415A4149413841274116410641F540E440D440C340B240A2409140814071406040504040403040204010400040"> : tensor<513xi16>}> : () -> tensor<513xi16>
  %12 = "tosa.const"() <{values = dense<32768> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
  %13 = "tosa.const"() <{values = dense<0> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
  %14 = "tosa.const"() <{values = dense<-2> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
  %15 = "tosa.const"() <{values = dense<17> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
  %16 = "tosa.const"() <{values = dense<607> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
  %17 = "tosa.const"() <{values = dense<6> : tensor<1xi8>}> : () -> tensor<1xi8>
  %18 = "tosa.const"() <{values = dense<1> : tensor<1x1x1x1xi32>}> : () -> tensor<1x1x1x1xi32>
  %20 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %25 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %30 = tosa.cast %arg0 : (tensor<1x6x6x8xi8>) -> tensor<1x6x6x8xi32>
  %31 = tosa.reshape %30, %3 : (tensor<1x6x6x8xi32>, !tosa.shape<4>) -> tensor<1x36x2x4xi32>
  %32 = tosa.reduce_sum %31 {axis = 1 : i32} : (tensor<1x36x2x4xi32>) -> tensor<1x1x2x4xi32>
  %33 = tosa.reduce_sum %32 {axis = 3 : i32} : (tensor<1x1x2x4xi32>) -> tensor<1x1x2x1xi32>
  %34 = tosa.mul %30, %2, %25 : (tensor<1x6x6x8xi32>, tensor<1x1x1x1xi32>, tensor<1xi8>) -> tensor<1x6x6x8xi32>
  %35 = tosa.reshape %34, %3 : (tensor<1x6x6x8xi32>, !tosa.shape<4>) -> tensor<1x36x2x4xi32>
  %36 = tosa.sub %35, %33 : (tensor<1x36x2x4xi32>, tensor<1x1x2x1xi32>) -> tensor<1x36x2x4xi32>
  %37 = tosa.arithmetic_right_shift %36, %18 {round = true} : (tensor<1x36x2x4xi32>, tensor<1x1x1x1xi32>) -> tensor<1x36x2x4xi32>
  %38 = tosa.mul %37, %37, %17 : (tensor<1x36x2x4xi32>, tensor<1x36x2x4xi32>, tensor<1xi8>) -> tensor<1x36x2x4xi32>
  %39 = tosa.reduce_sum %38 {axis = 1 : i32} : (tensor<1x36x2x4xi32>) -> tensor<1x1x2x4xi32>
  %40 = tosa.reduce_sum %39 {axis = 3 : i32} : (tensor<1x1x2x4xi32>) -> tensor<1x1x2x1xi32>
  %41 = tosa.add %40, %16 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
  %42 = tosa.clz %41 : (tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
  %43 = tosa.sub %15, %42 : (tensor<1x1x1x1xi32>, tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
  %44 = tosa.bitwise_and %43, %14 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
  %45 = tosa.sub %13, %44 : (tensor<1x1x1x1xi32>, tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
  %46 = tosa.maximum %45, %13 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
  %47 = tosa.maximum %44, %13 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
  %48 = tosa.logical_left_shift %41, %46 : (tensor<1x1x2x1xi32>, tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
  %49 = tosa.arithmetic_right_shift %48, %47 {round = false} : (tensor<1x1x2x1xi32>, tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi32>
  %50 = tosa.sub %49, %12 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
  %51 = tosa.cast %50 : (tensor<1x1x2x1xi32>) -> tensor<1x1x2x1xi16>
  %52 = tosa.table %51, %11 : (tensor<1x1x2x1xi16>, tensor<513xi16>) -> tensor<1x1x2x1xi32>
  %53 = tosa.mul %37, %52, %10 : (tensor<1x36x2x4xi32>, tensor<1x1x2x1xi32>, tensor<1xi8>) -> tensor<1x36x2x4xi32>
  %54 = tosa.arithmetic_right_shift %44, %18 {round = false} : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
  %55 = tosa.add %54, %9 : (tensor<1x1x2x1xi32>, tensor<1x1x1x1xi32>) -> tensor<1x1x2x1xi32>
  %56 = tosa.arithmetic_right_shift %53, %55 {round = true} : (tensor<1x36x2x4xi32>, tensor<1x1x2x1xi32>) -> tensor<1x36x2x4xi32>
  %57 = tosa.reshape %56, %1 : (tensor<1x36x2x4xi32>, !tosa.shape<3>) -> tensor<1x36x8xi32>
  %58 = tosa.rescale %57, %8, %7, %20, %20 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x36x8xi32>, tensor<8xi32>, tensor<8xi8>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x36x8xi32>
  %59 = tosa.rescale %58, %6, %5, %20, %4 {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<1x36x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x36x8xi8>
  %60 = tosa.transpose %59 {perms = array<i32: 0, 2, 1>} : (tensor<1x36x8xi8>) -> tensor<1x8x36xi8>
  %61 = tosa.reshape %60, %0 : (tensor<1x8x36xi8>, !tosa.shape<4>) -> tensor<1x8x6x6xi8>
  return %61 : tensor<1x8x6x6xi8>
}

// -----

// The same masked sum with the select's result reshaped before the sum (the layout passes leave
// [1, 9, 1] -> [1, 3, 3]): the mask is viewed in the summed shape, every row keeps one entry of at
// least 15, and the divisor is never 0.
// CHECK-LABEL: func.func @intdiv$masked_sum_reshaped
// CHECK: tosa.intdiv
func.func @intdiv$masked_sum_reshaped(%arg0: tensor<1x9x1xi8>) -> tensor<1x3x3xi32> {
  %x = tosa.cast %arg0 : (tensor<1x9x1xi8>) -> tensor<1x9x1xi32>
  %e = tosa.clamp %x {max_val = 100 : i32, min_val = 15 : i32} : (tensor<1x9x1xi32>) -> tensor<1x9x1xi32>
  %mask = "tosa.const"() <{values = dense<[[[true], [false], [false], [true], [true], [false], [true], [true], [true]]]> : tensor<1x9x1xi1>}> : () -> tensor<1x9x1xi1>
  %zero = "tosa.const"() <{values = dense<0> : tensor<1x1x1xi32>}> : () -> tensor<1x1x1xi32>
  %kept = tosa.select %mask, %e, %zero : (tensor<1x9x1xi1>, tensor<1x9x1xi32>, tensor<1x1x1xi32>) -> tensor<1x9x1xi32>
  %shape = tosa.const_shape {values = dense<[1, 3, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %rows = tosa.reshape %kept, %shape : (tensor<1x9x1xi32>, !tosa.shape<3>) -> tensor<1x3x3xi32>
  %sum = tosa.reduce_sum %rows {axis = 2 : i32} : (tensor<1x3x3xi32>) -> tensor<1x3x1xi32>
  %e3 = tosa.reshape %e, %shape : (tensor<1x9x1xi32>, !tosa.shape<3>) -> tensor<1x3x3xi32>
  %q = tosa.intdiv %e3, %sum : (tensor<1x3x3xi32>, tensor<1x3x1xi32>) -> tensor<1x3x3xi32>
  return %q : tensor<1x3x3xi32>
}

// -----

// Run-time ids clamped to [0, K - 1] before their GATHER (the frontend's lookup of token ids, in
// either order of maximum and minimum): the index is in range for any int32.
// CHECK-LABEL: func.func @gather$clamped_ids
// CHECK-COUNT-2: tosa.gather
func.func @gather$clamped_ids(%ids: tensor<1x4xi32>) -> (tensor<1x4x8xi8>, tensor<1x4x8xi8>) {
  %v = "tosa.const"() <{values = dense<1> : tensor<1x16x8xi8>}> : () -> tensor<1x16x8xi8>
  %lo = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %hi = "tosa.const"() <{values = dense<15> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %0 = tosa.maximum %ids, %lo : (tensor<1x4xi32>, tensor<1x1xi32>) -> tensor<1x4xi32>
  %1 = tosa.minimum %0, %hi : (tensor<1x4xi32>, tensor<1x1xi32>) -> tensor<1x4xi32>
  %2 = tosa.gather %v, %1 : (tensor<1x16x8xi8>, tensor<1x4xi32>) -> tensor<1x4x8xi8>
  %3 = tosa.minimum %ids, %hi : (tensor<1x4xi32>, tensor<1x1xi32>) -> tensor<1x4xi32>
  %4 = tosa.maximum %3, %lo : (tensor<1x4xi32>, tensor<1x1xi32>) -> tensor<1x4xi32>
  %5 = tosa.gather %v, %4 : (tensor<1x16x8xi8>, tensor<1x4xi32>) -> tensor<1x4x8xi8>
  return %2, %5 : tensor<1x4x8xi8>, tensor<1x4x8xi8>
}

// -----

// The accumulators of a transpose conv, a conv3d and a depthwise conv of int8 from their weights
// (|w| sums 127 * 4): far inside int32.
// CHECK-LABEL: func.func @accumulators$fit
// CHECK: tosa.transpose_conv2d
// CHECK: tosa.conv3d
// CHECK: tosa.depthwise_conv2d
func.func @accumulators$fit(%a: tensor<1x2x2x4xi8>, %b: tensor<1x1x1x1x4xi8>, %c: tensor<1x2x2x4xi8>) -> (tensor<1x2x2x1xi32>, tensor<1x1x1x1x1xi32>, tensor<1x1x1x4xi32>) {
  %w = "tosa.const"() <{values = dense<127> : tensor<1x1x1x4xi8>}> : () -> tensor<1x1x1x4xi8>
  %w3 = "tosa.const"() <{values = dense<-127> : tensor<1x1x1x1x4xi8>}> : () -> tensor<1x1x1x1x4xi8>
  %wd = "tosa.const"() <{values = dense<127> : tensor<2x2x4x1xi8>}> : () -> tensor<2x2x4x1xi8>
  %b1 = "tosa.const"() <{values = dense<2000000000> : tensor<1xi32>}> : () -> tensor<1xi32>
  %b4 = "tosa.const"() <{values = dense<0> : tensor<4xi32>}> : () -> tensor<4xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.transpose_conv2d %a, %w, %b1, %z, %z {acc_type = i32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x4xi8>, tensor<1x1x1x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x1xi32>
  %1 = tosa.conv3d %b, %w3, %b1, %z, %z {acc_type = i32, dilation = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>} : (tensor<1x1x1x1x4xi8>, tensor<1x1x1x1x4xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x1x1xi32>
  %2 = tosa.depthwise_conv2d %c, %wd, %b4, %z, %z {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x4xi8>, tensor<2x2x4x1xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x1x1x4xi32>
  return %0, %1, %2 : tensor<1x2x2x1xi32>, tensor<1x1x1x1x1xi32>, tensor<1x1x1x4xi32>
}

// -----

// NEGATE, ABS and INTDIV of int32 values that cannot be -2**31 (a cast int16), divided by a clamp
// that never reaches 0.
// CHECK-LABEL: func.func @negate_abs_intdiv$fit
// CHECK: tosa.intdiv
func.func @negate_abs_intdiv$fit(%arg0: tensor<4xi16>, %arg1: tensor<4xi32>) -> tensor<4xi32> {
  %x = tosa.cast %arg0 : (tensor<4xi16>) -> tensor<4xi32>
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %n = tosa.negate %x, %z, %z : (tensor<4xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>
  %a = tosa.abs %n : (tensor<4xi32>) -> tensor<4xi32>
  %d = tosa.clamp %arg1 {max_val = 100 : i32, min_val = 1 : i32} : (tensor<4xi32>) -> tensor<4xi32>
  %q = tosa.intdiv %a, %d : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %q : tensor<4xi32>
}

// -----

// An int16 softmax masked before its max (a causal attention): the fill -32768 is below every kept
// score, so in each row a kept element is the max and its table entry (exp of 0: 100 << 7) is in the
// masked sum, which is never 0. The fact goes through x - c, the casts and the int16 TABLE.
// CHECK-LABEL: func.func @softmax$masked_int16
// CHECK: tosa.intdiv
func.func @softmax$masked_int16(%arg0: tensor<1x3x4xi16>) -> tensor<1x3x4xi32> {
  %mask = "tosa.const"() <{values = dense<[[[true, false, false, false], [true, true, false, false], [true, true, true, false]]]> : tensor<1x3x4xi1>}> : () -> tensor<1x3x4xi1>
  %low = "tosa.const"() <{values = dense<-32768> : tensor<1x1x1xi16>}> : () -> tensor<1x1x1xi16>
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
  %q = tosa.intdiv %e, %sum : (tensor<1x3x4xi32>, tensor<1x3x1xi32>) -> tensor<1x3x4xi32>
  return %q : tensor<1x3x4xi32>
}
