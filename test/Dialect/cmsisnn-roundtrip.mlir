// RUN: mcu-opt %s --split-input-file | mcu-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @conv
// CHECK: "cmsisnn.conv"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}kernel = "arm_convolve_wrapper_s8"{{.*}}multiplier = array<i32: 1073741824, 1073741824>
func.func @conv(%a: tensor<1x4x4x2xi8>, %w: tensor<2x1x1x2xi8>, %b: tensor<2xi32>) -> tensor<1x4x4x2xi8> {
  %0 = "cmsisnn.conv"(%a, %w, %b) {input_offset = 1 : i32, output_offset = -3 : i32, stride = array<i32: 1, 1>, padding = array<i32: 0, 0, 0, 0>, dilation = array<i32: 1, 1>, multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: -1, -2>, activation = array<i32: -128, 127>, kernel = "arm_convolve_wrapper_s8"} : (tensor<1x4x4x2xi8>, tensor<2x1x1x2xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi8>
  return %0 : tensor<1x4x4x2xi8>
}

// -----

// CHECK-LABEL: func.func @portable
// CHECK: "cmsisnn.portable"(%{{.*}}, %{{.*}}) {kernel = "binary", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>, params = {op = "MCU_BIN_ADD"}}
// CHECK: "cmsisnn.reshape"
func.func @portable(%a: tensor<2x3xi32>) -> tensor<3x2xi32> {
  %0 = "cmsisnn.portable"(%a, %a) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0>, kernel = "binary", params = {op = "MCU_BIN_ADD"}} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %1 = "cmsisnn.reshape"(%0) : (tensor<2x3xi32>) -> tensor<3x2xi32>
  return %1 : tensor<3x2xi32>
}

// -----

// CHECK-LABEL: func.func @pool
// CHECK: "cmsisnn.max_pool"
// CHECK-SAME: kernel_size = array<i32: 2, 2>
func.func @pool(%a: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = "cmsisnn.max_pool"(%a) {stride = array<i32: 2, 2>, padding = array<i32: 0, 0, 0, 0>, kernel_size = array<i32: 2, 2>, activation = array<i32: -128, 127>, kernel = "arm_max_pool_s8"} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  return %0 : tensor<1x2x2x2xi8>
}
