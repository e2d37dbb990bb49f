// RUN: mcu-opt %s --split-input-file --verify-diagnostics --mcu-prepare-for-emission | FileCheck %s

// On the M55 (MVE) a fully connected reads bias + input_offset * (sum of its weight row) from its
// context buffer: the sums become a constant. Row sums 1+2+3+4 = 10 and -4: 5 + 3 * 10 = 35,
// -1 + 3 * -4 = -13.
// CHECK-LABEL: func.func @kernel_sums
// CHECK: "cmsisnn.fully_connected"
// CHECK-SAME: mcu.kernel_sums = array<i32: 35, -13>
module attributes {mcu.target = "cortex-m55", mcu.backend = "cmsis-nn"} {
func.func @kernel_sums(%a: tensor<1x4xi8>) -> tensor<1x2xi8> {
  %w = "tosa.const"() {values = dense<[[1, 2, 3, 4], [-1, -1, -1, -1]]> : tensor<2x4xi8>} : () -> tensor<2x4xi8>
  %b = "tosa.const"() {values = dense<[5, -1]> : tensor<2xi32>} : () -> tensor<2xi32>
  %0 = "cmsisnn.fully_connected"(%a, %w, %b) {input_offset = 3 : i32, filter_offset = 0 : i32, output_offset = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -3>, activation = array<i32: -128, 127>, mcu.storage = "output:0", mcu.offset = 0 : i64} : (tensor<1x4xi8>, tensor<2x4xi8>, tensor<2xi32>) -> tensor<1x2xi8>
  return %0 : tensor<1x2xi8>
}
}

// -----

// The DSP path computes them at run time: nothing added.
// CHECK-LABEL: func.func @no_sums_on_dsp
// CHECK-NOT: mcu.kernel_sums
module attributes {mcu.target = "cortex-m4", mcu.backend = "cmsis-nn"} {
func.func @no_sums_on_dsp(%a: tensor<1x4xi8>) -> tensor<1x2xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<2x4xi8>} : () -> tensor<2x4xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
  %0 = "cmsisnn.fully_connected"(%a, %w, %b) {input_offset = 3 : i32, filter_offset = 0 : i32, output_offset = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -3>, activation = array<i32: -128, 127>, mcu.storage = "output:0", mcu.offset = 0 : i64} : (tensor<1x4xi8>, tensor<2x4xi8>, tensor<2xi32>) -> tensor<1x2xi8>
  return %0 : tensor<1x2xi8>
}
}

// -----

func.func @not_converted(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @below {{'tosa.abs' was not converted: run mcu-convert-tosa-to-cmsisnn first}}
  %0 = tosa.abs %a : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @not_planned(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @below {{'portable.clamp' has no memory plan: run mcu-plan-memory first}}
  %0 = "portable.clamp"(%a) {min = 0 : i32, max = 9 : i32} : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @undeclared_attribute(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @below {{'mcu.dead' is not a declared mcu attribute (portable.clamp)}}
  %0 = "portable.clamp"(%a) {min = 0 : i32, max = 9 : i32, mcu.storage = "output:0", mcu.offset = 0 : i64, mcu.dead} : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @ill_kinded_attribute(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @below {{'mcu.offset' must be integer, got "zero" (portable.clamp)}}
  %0 = "portable.clamp"(%a) {min = 0 : i32, max = 9 : i32, mcu.storage = "output:0", mcu.offset = "zero"} : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
