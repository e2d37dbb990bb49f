// RUN: mcu-opt %s --split-input-file --verify-diagnostics

func.func @missing_attr(%a: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  // expected-error @below {{'cmsisnn.max_pool' op requires attribute 'kernel_size'}}
  %0 = "cmsisnn.max_pool"(%a) {stride = array<i32: 2, 2>, padding = array<i32: 0, 0, 0, 0>, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}

// -----

func.func @bad_multipliers(%a: tensor<1x4x4x2xi8>, %w: tensor<3x1x1x2xi8>, %b: tensor<3xi32>) -> tensor<1x4x4x3xi8> {
  // expected-error @below {{needs 1 or 3 multipliers (one per output channel), got 2}}
  %0 = "cmsisnn.conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = -3 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1, 2>, shift = array<i32: -1, -2>, activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"wrapper">} : (tensor<1x4x4x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>) -> tensor<1x4x4x3xi8>
  return %0 : tensor<1x4x4x3xi8>
}

// -----

func.func @bad_stride(%a: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  // expected-error @below {{attribute 'stride' must have 2 elements}}
  %0 = "cmsisnn.avg_pool"(%a) {stride = array<i32: 2>, padding = array<i32: 0, 0, 0, 0>, kernel_size = array<i32: 2, 2>, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}

// -----

func.func @not_an_array(%a: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  // expected-error @below {{attribute 'activation' must be array<i32>}}
  %0 = "cmsisnn.avg_pool"(%a) {stride = array<i32: 2, 2>, padding = array<i32: 0, 0, 0, 0>, kernel_size = array<i32: 2, 2>, activation = [-128, 127]} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}

// -----

func.func @wide_integer(%a: tensor<1x4x4x2xi8>) -> tensor<1x6x4x2xi8> {
  // expected-error @below {{attribute 'pad_value' must be an i32 integer}}
  %0 = "cmsisnn.pad"(%a) {padding = array<i32: 0, 0, 1, 1, 0, 0, 0, 0>, pad_value = 0 : i64} : (tensor<1x4x4x2xi8>) -> tensor<1x6x4x2xi8>
  return %0 : tensor<1x6x4x2xi8>
}

// -----

func.func @unknown_algorithm(%a: tensor<1x4x4x2xi8>, %w: tensor<2x1x1x2xi8>, %b: tensor<2xi32>) -> tensor<1x4x4x2xi8> {
  // expected-error @below {{does not satisfy the constraint}}
  %0 = "cmsisnn.conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = -3 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1>, shift = array<i32: -1>, activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"winograd">} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi8>
  return %0 : tensor<1x4x4x2xi8>
}

// -----

func.func @s16_generic(%a: tensor<1x4x4x2xi16>, %w: tensor<2x1x1x2xi8>, %b: tensor<2xi64>) -> tensor<1x4x4x2xi16> {
  // expected-error @below {{int16 convolutions call the wrapper only}}
  %0 = "cmsisnn.conv"(%a, %w, %b) {input_offset = 0 : i32, output_offset = 0 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1>, shift = array<i32: -1>, activation = array<i32: -32768, 32767>, algorithm = #cmsisnn.conv_algorithm<"generic">} : (tensor<1x4x4x2xi16>, tensor<2x1x1x2xi8>, tensor<2xi64>) -> tensor<1x4x4x2xi16>
  return %0 : tensor<1x4x4x2xi16>
}

// -----

func.func @depthwise_channels(%a: tensor<1x4x4x2xi8>, %w: tensor<1x3x3x6xi8>, %b: tensor<6xi32>) -> tensor<1x4x4x6xi8> {
  // expected-error @below {{needs output channels = input channels x ch_mult}}
  %0 = "cmsisnn.depthwise_conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = 0 : i32, stride = array<i32: 1, 1>, padding = array<i32: 1, 1, 1, 1>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1>, shift = array<i32: -1>, activation = array<i32: -128, 127>, ch_mult = 2 : i32, algorithm = #cmsisnn.conv_algorithm<"wrapper">} : (tensor<1x4x4x2xi8>, tensor<1x3x3x6xi8>, tensor<6xi32>) -> tensor<1x4x4x6xi8>
  return %0 : tensor<1x4x4x6xi8>
}

// -----

func.func @depthwise_1x1(%a: tensor<1x4x4x2xi8>, %w: tensor<1x1x1x2xi8>, %b: tensor<2xi32>) -> tensor<1x4x4x2xi8> {
  // expected-error @below {{has no '1x1' algorithm for i8}}
  %0 = "cmsisnn.depthwise_conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = 0 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1>, shift = array<i32: -1>, activation = array<i32: -128, 127>, ch_mult = 1 : i32, algorithm = #cmsisnn.conv_algorithm<"1x1">} : (tensor<1x4x4x2xi8>, tensor<1x1x1x2xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi8>
  return %0 : tensor<1x4x4x2xi8>
}

// -----

func.func @add_broadcast(%a: tensor<1x4x4x2xi8>, %b: tensor<1x1x4x1xi8>) -> tensor<1x4x4x2xi8> {
  // expected-error @below {{needs operands of the output's size (or one repeated over leading dimensions)}}
  %0 = "cmsisnn.add"(%a, %b) {input1_offset = 0 : i32, input1_multiplier = 1 : i32, input1_shift = 0 : i32, input2_offset = 0 : i32, input2_multiplier = 1 : i32, input2_shift = 0 : i32, left_shift = 20 : i32, output_offset = 0 : i32, output_multiplier = 1 : i32, output_shift = 0 : i32, activation = array<i32: -128, 127>} : (tensor<1x4x4x2xi8>, tensor<1x1x4x1xi8>) -> tensor<1x4x4x2xi8>
  return %0 : tensor<1x4x4x2xi8>
}

// -----

func.func @concat_sizes(%a: tensor<1x2x2x3xi8>, %b: tensor<1x2x2x1xi8>) -> tensor<1x2x2x5xi8> {
  // expected-error @below {{inputs add up to 4 along axis 3, the output has 5}}
  %0 = "cmsisnn.concat"(%a, %b) {axis = 3 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>} : (tensor<1x2x2x3xi8>, tensor<1x2x2x1xi8>) -> tensor<1x2x2x5xi8>
  return %0 : tensor<1x2x2x5xi8>
}

// -----

func.func @concat_group_of_two_types(%a: tensor<1x2x2x3xi8>, %b: tensor<1x2x2x1xi8>) -> tensor<1x2x2x4xi8> {
  // IRDL binds a variadic group to one type: differently typed inputs take a group each.
  // expected-error @below {{expected 'tensor<1x2x2x3xi8>' but got 'tensor<1x2x2x1xi8>'}}
  // expected-note @below {{see current operation}}
  %0 = "cmsisnn.concat"(%a, %b) {axis = 3 : i32, operandSegmentSizes = array<i32: 2, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1x2x2x3xi8>, tensor<1x2x2x1xi8>) -> tensor<1x2x2x4xi8>
  return %0 : tensor<1x2x2x4xi8>
}

// -----

func.func @bad_view(%a: tensor<2x3xi8>) -> tensor<7xi8> {
  // expected-error @below {{must keep the element count and type}}
  %0 = "cmsisnn.reshape"(%a) : (tensor<2x3xi8>) -> tensor<7xi8>
  return %0 : tensor<7xi8>
}

// -----

func.func @softmax_s16_short_table(%x: tensor<2x4xi16>, %e: tensor<512xi16>, %r: tensor<513xi16>) -> tensor<2x4xi16> {
  // expected-error @below {{takes int16 tables of 513 entries}}
  %0 = "cmsisnn.softmax_s16"(%x, %e, %r) {num_rows = 2 : i32, row_size = 4 : i32, mult = 1717986918 : i32, shift = 1 : i32} : (tensor<2x4xi16>, tensor<512xi16>, tensor<513xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}

// -----

func.func @softmax_s16_overflowing_shift(%x: tensor<2x4xi16>, %e: tensor<513xi16>, %r: tensor<513xi16>) -> tensor<2x4xi16> {
  // expected-error @below {{needs a shift of at most 15}}
  %0 = "cmsisnn.softmax_s16"(%x, %e, %r) {num_rows = 2 : i32, row_size = 4 : i32, mult = 1717986918 : i32, shift = 16 : i32} : (tensor<2x4xi16>, tensor<513xi16>, tensor<513xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}

// -----

func.func @fully_connected_s4_unpacked(%a: tensor<2x5xi8>, %w: tensor<15xi8>, %b: tensor<3xi32>) -> tensor<2x3xi8> {
  // expected-error @below {{'cmsisnn.fully_connected_s4' op needs the 3 x 5 int4 weights packed in 8 bytes}}
  %0 = "cmsisnn.fully_connected_s4"(%a, %w, %b) {input_offset = 3 : i32, output_offset = -1 : i32, multiplier = 1073741824 : i32, shift = -3 : i32, activation = array<i32: -128, 127>} : (tensor<2x5xi8>, tensor<15xi8>, tensor<3xi32>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

func.func @conv_s4_unpacked(%a: tensor<1x4x5x1xi8>, %w: tensor<9xi8>, %b: tensor<3xi32>) -> tensor<1x4x5x3xi8> {
  // expected-error @below {{'cmsisnn.conv_s4' op needs the 9 int4 weights of [3, 1, 3, 1] packed in 5 bytes}}
  %0 = "cmsisnn.conv_s4"(%a, %w, %b) {activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"wrapper">, dilation = array<i32: 1, 1>, filter_dims = array<i32: 3, 1, 3, 1>, input_offset = 9 : i32, multiplier = array<i32: 1073741824>, output_offset = 4 : i32, padding = array<i32: 0, 1, 0, 1>, shift = array<i32: -3>, stride = array<i32: 1, 1>} : (tensor<1x4x5x1xi8>, tensor<9xi8>, tensor<3xi32>) -> tensor<1x4x5x3xi8>
  return %0 : tensor<1x4x5x3xi8>
}

// -----

func.func @depthwise_conv_s4_wrong_filter_channels(%d: tensor<1x3x3x3xi8>, %dw: tensor<4xi8>, %b: tensor<3xi32>) -> tensor<1x2x2x3xi8> {
  // expected-error @below {{'cmsisnn.depthwise_conv_s4' op needs filter_dims of 3 channels, got [1, 2, 2, 2]}}
  %0 = "cmsisnn.depthwise_conv_s4"(%d, %dw, %b) {activation = array<i32: -128, 127>, algorithm = #cmsisnn.conv_algorithm<"wrapper">, ch_mult = 1 : i32, dilation = array<i32: 1, 1>, filter_dims = array<i32: 1, 2, 2, 2>, input_offset = 0 : i32, multiplier = array<i32: 1073741824>, output_offset = 0 : i32, padding = array<i32: 0, 0, 0, 0>, shift = array<i32: -3>, stride = array<i32: 1, 1>} : (tensor<1x3x3x3xi8>, tensor<4xi8>, tensor<3xi32>) -> tensor<1x2x2x3xi8>
  return %0 : tensor<1x2x2x3xi8>
}
