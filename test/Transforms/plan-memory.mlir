// RUN: mcu-opt %s --mcu-tosa-to-cmsisnn-pipeline=target=cortex-m55 | FileCheck %s --check-prefix=MVE
// RUN: mcu-opt %s --mcu-tosa-to-cmsisnn-pipeline=target=cortex-m4 | FileCheck %s --check-prefix=DSP
// RUN: not mcu-opt %s '--mcu-tosa-to-cmsisnn-pipeline=target=cortex-m4 ram-bytes=700' 2>&1 | FileCheck %s --check-prefix=RAM
// RUN: mcu-opt %s --mcu-tosa-to-cmsisnn-pipeline=backend=portable | FileCheck %s --check-prefix=PORTABLE

// Two 3x3 convs: the first result lives in the arena, the second goes straight to the output.
// The im2col scratch of arm_convolve_s8 is sized per core: MVE 4 * ceil(8*9/16) * 16 = 320 bytes,
// DSP 2 * 72 * 2 = 288 bytes; the portable kernels need none.
// MVE: module attributes {mcu.arena_bytes = 832 : i64, mcu.arena_lower_bound_bytes = 832 : i64
// MVE: "cmsisnn.conv"
// MVE-SAME: mcu.scratch_bytes = 320 : i64
// MVE-SAME: mcu.storage = "arena"
// MVE: "cmsisnn.conv"
// MVE-SAME: mcu.scratch_bytes = 320 : i64
// MVE-SAME: mcu.storage = "output:0"
// DSP: mcu.arena_bytes = 800 : i64
// DSP: mcu.scratch_bytes = 288 : i64
// RAM: plan-memory.mlir:28:8: error: the model needs a 800-byte arena, 100 bytes over the RAM limit (ram-bytes=700; at least 800 bytes are live at once); the peak is at layer 'line 28' (cmsisnn.conv)
// PORTABLE: mcu.arena_bytes = 512 : i64, mcu.arena_lower_bound_bytes = 512 : i64
// PORTABLE-NOT: mcu.scratch_bytes
func.func @main(%arg0: tensor<1x8x8x8xi8>) -> tensor<1x8x8x8xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<8x3x3x8xi8>} : () -> tensor<8x3x3x8xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<8xi32>} : () -> tensor<8xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x8xi8>, tensor<8x3x3x8xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x8xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x8xi8>
  %2 = tosa.conv2d %1, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x8xi8>, tensor<8x3x3x8xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x8xi32>
  %3 = tosa.rescale %2, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x8xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x8xi8>
  return %3 : tensor<1x8x8x8xi8>
}
