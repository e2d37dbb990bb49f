// RUN: mcu-opt %s --split-input-file --verify-diagnostics

func.func @missing_attr(%a: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  // expected-error @below {{'cmsisnn.max_pool' op requires attribute 'kernel_size'}}
  %0 = "cmsisnn.max_pool"(%a) {stride = array<i32: 2, 2>, padding = array<i32: 0, 0, 0, 0>, activation = array<i32: -128, 127>, kernel = "arm_max_pool_s8"} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}

// -----

func.func @bad_multipliers(%a: tensor<1x4x4x2xi8>, %w: tensor<3x1x1x2xi8>, %b: tensor<3xi32>) -> tensor<1x4x4x3xi8> {
  // expected-error @below {{needs 1 or 3 multipliers (one per output channel), got 2}}
  %0 = "cmsisnn.conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = -3 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1, 2>, shift = array<i32: -1, -2>, activation = array<i32: -128, 127>, kernel = "arm_convolve_wrapper_s8"} : (tensor<1x4x4x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>) -> tensor<1x4x4x3xi8>
  return %0 : tensor<1x4x4x3xi8>
}

// -----

func.func @bad_stride(%a: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  // expected-error @below {{attribute 'stride' must have 2 elements}}
  %0 = "cmsisnn.avg_pool"(%a) {stride = array<i32: 2>, padding = array<i32: 0, 0, 0, 0>, kernel_size = array<i32: 2, 2>, activation = array<i32: -128, 127>, kernel = "arm_avgpool_s8"} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}

// -----

func.func @bad_view(%a: tensor<2x3xi8>) -> tensor<7xi8> {
  // expected-error @below {{must keep the element count and type}}
  %0 = "cmsisnn.reshape"(%a) : (tensor<2x3xi8>) -> tensor<7xi8>
  return %0 : tensor<7xi8>
}
