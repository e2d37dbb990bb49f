// RUN: mcu-opt %s --split-input-file --verify-diagnostics

func.func @flag_not_boolean(%a: tensor<2x8xi8>) -> tensor<2x8xi16> {
  // expected-error @below {{attribute 'scale32' must be 0 or 1}}
  %0 = "portable.rescale"(%a) {input_zp = 0 : i32, output_zp = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 30>, scale32 = 2 : i32, double_round = 0 : i32, per_channel = 0 : i32, input_unsigned = 0 : i32, output_unsigned = 0 : i32} : (tensor<2x8xi8>) -> tensor<2x8xi16>
  return %0 : tensor<2x8xi16>
}

// -----

func.func @rescale_per_channel_count(%a: tensor<2x8xi8>) -> tensor<2x8xi16> {
  // expected-error @below {{needs one multiplier and shift (per channel when per_channel = 1)}}
  %0 = "portable.rescale"(%a) {input_zp = 0 : i32, output_zp = 0 : i32, multiplier = array<i32: 1, 2>, shift = array<i32: 30, 30>, scale32 = 1 : i32, double_round = 0 : i32, per_channel = 1 : i32, input_unsigned = 0 : i32, output_unsigned = 0 : i32} : (tensor<2x8xi8>) -> tensor<2x8xi16>
  return %0 : tensor<2x8xi16>
}

// -----

func.func @unknown_kind(%a: tensor<2x8xi32>) -> tensor<2x8xi32> {
  // expected-error @below {{does not satisfy the constraint}}
  %0 = "portable.binary"(%a, %a) {kind = #portable.binary_kind<"xnor">, shift = 0 : i32} : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi32>
  return %0 : tensor<2x8xi32>
}

// -----

func.func @slice_outside(%a: tensor<2x3xi16>) -> tensor<1x2xi16> {
  // expected-error @below {{start + output shape must lie inside the input}}
  %0 = "portable.slice"(%a) {start = array<i32: 1, 2>} : (tensor<2x3xi16>) -> tensor<1x2xi16>
  return %0 : tensor<1x2xi16>
}

// -----

func.func @pad_per_axis(%a: tensor<2x3xi16>) -> tensor<4x5xi16> {
  // expected-error @below {{needs two paddings per axis}}
  %0 = "portable.pad"(%a) {padding = array<i32: 1, 1>, pad_value = 0 : i32} : (tensor<2x3xi16>) -> tensor<4x5xi16>
  return %0 : tensor<4x5xi16>
}

// -----

func.func @not_a_permutation(%a: tensor<2x3xi16>) -> tensor<3x2xi16> {
  // expected-error @below {{perms must be a permutation of the input's axes}}
  %0 = "portable.transpose"(%a) {perms = array<i32: 1, 1>} : (tensor<2x3xi16>) -> tensor<3x2xi16>
  return %0 : tensor<3x2xi16>
}

// -----

func.func @concat_outside_axis(%a: tensor<2x3xi16>, %b: tensor<3x1xi16>) -> tensor<2x4xi16> {
  // expected-error @below {{input 1 does not match the output outside axis 1}}
  %0 = "portable.concat"(%a, %b) {axis = 1 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xi16>, tensor<3x1xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}

// -----

func.func @log_softmax_extent(%ls: tensor<2x8xi32>, %et: tensor<1x256x1xi32>) -> tensor<2x8xi8> {
  // expected-error @below {{outer x axis_size x inner must be the input's element count}}
  %0 = "portable.log_softmax"(%ls, %et, %et) {outer = 1 : i32, axis_size = 8 : i32, inner = 1 : i32, diff_mul = 10000 : i32, diff_shift = 0 : i32, norm_bits = 23 : i32, norm_mask = 255 : i32, exp_bits = 10 : i32, exp_mul = 3000000 : i32, exp_shift = 0 : i32, bias = 32768 : i32, base = 0 : i32, out_shift = 16 : i32, multiplier = 1073741824 : i32, shift = 30 : i32, output_zp = 127 : i32, double_round = 1 : i32} : (tensor<2x8xi32>, tensor<1x256x1xi32>, tensor<1x256x1xi32>) -> tensor<2x8xi8>
  return %0 : tensor<2x8xi8>
}

// -----

func.func @conv_unscaled_per_channel(%a: tensor<1x4x4x2xi8>, %w: tensor<3x1x1x2xi8>, %b: tensor<3xi32>) -> tensor<1x4x4x3xi8> {
  // expected-error @below {{needs 1 or 3 multipliers (one per output channel), got 2}}
  %0 = "portable.conv2d"(%a, %w, %b) {input_offset = 1 : i32, output_offset = 0 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1, 2>, shift = array<i32: 1, 2>, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>) -> tensor<1x4x4x3xi8>
  return %0 : tensor<1x4x4x3xi8>
}

// -----

func.func @conv_weight_offset_type(%a: tensor<1x4x4x2xi8>, %w: tensor<3x1x1x2xi8>, %b: tensor<3xi32>) -> tensor<1x4x4x3xi32> {
  // expected-error @below {{attribute 'weight_offset' must be an i32 integer}}
  %0 = "portable.conv2d"(%a, %w, %b) {input_offset = 1 : i32, weight_offset = 3 : i64, output_offset = 0 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32>, shift = array<i32>, activation = array<i32: -2147483648, 2147483647>} : (tensor<1x4x4x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>) -> tensor<1x4x4x3xi32>
  return %0 : tensor<1x4x4x3xi32>
}

// -----

func.func @norm_channel_params(%x: tensor<2x8xi8>, %t: tensor<513xi16>, %p: tensor<4x4xi32>) -> tensor<2x8xi8> {
  // expected-error @below {{channel_params must be 4 x 8}}
  %0 = "portable.norm"(%x, %t, %p) {batch = 2 : i32, spatial = 1 : i32, groups = 1 : i32, group_size = 8 : i32, centre = 1 : i32, count = 8 : i32, input_zp = 0 : i32, s0 = 0 : i32, s1 = 3 : i32, eps = 1 : i32, double_round = 1 : i32, output_multiplier = 1073741824 : i32, output_shift = 40 : i32, output_double_round = 0 : i32, output_zp = 0 : i32, act_min = -128 : i32, act_max = 127 : i32} : (tensor<2x8xi8>, tensor<513xi16>, tensor<4x4xi32>) -> tensor<2x8xi8>
  return %0 : tensor<2x8xi8>
}

// -----

func.func @norm_count(%x: tensor<2x8xi8>, %t: tensor<513xi16>, %p: tensor<4x8xi32>) -> tensor<2x8xi8> {
  // expected-error @below {{batch x spatial x groups x group_size must be the input's and output's element count}}
  %0 = "portable.norm"(%x, %t, %p) {batch = 1 : i32, spatial = 1 : i32, groups = 1 : i32, group_size = 8 : i32, centre = 1 : i32, count = 8 : i32, input_zp = 0 : i32, s0 = 0 : i32, s1 = 3 : i32, eps = 1 : i32, double_round = 1 : i32, output_multiplier = 1073741824 : i32, output_shift = 40 : i32, output_double_round = 0 : i32, output_zp = 0 : i32, act_min = -128 : i32, act_max = 127 : i32} : (tensor<2x8xi8>, tensor<513xi16>, tensor<4x8xi32>) -> tensor<2x8xi8>
  return %0 : tensor<2x8xi8>
}

// -----

func.func @hypot_mixed_types(%a: tensor<2x4xi16>, %b: tensor<2x4xi8>, %t: tensor<513xi16>) -> tensor<2x4xi16> {
  // expected-error @below {{takes int8 or int16 a and b of one type}}
  %0 = "portable.hypot"(%a, %b, %t) {a_zp = 0 : i32, b_zp = 0 : i32, multiplier = 1073741824 : i32, shift = 30 : i32, headroom = 12 : i32, output_zp = 0 : i32} : (tensor<2x4xi16>, tensor<2x4xi8>, tensor<513xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}
