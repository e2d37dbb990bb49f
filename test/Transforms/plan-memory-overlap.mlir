// RUN: mcu-opt %s --split-input-file --pass-pipeline='builtin.module(mcu-attach-target{target=cortex-m55},mcu-convert-tosa-to-cmsisnn,mcu-plan-memory)' | FileCheck %s --check-prefix=MVE
// RUN: mcu-opt %s --split-input-file --pass-pipeline='builtin.module(mcu-attach-target{target=cortex-m55},mcu-convert-tosa-to-cmsisnn,mcu-plan-memory{overlap=false})' | FileCheck %s --check-prefix=APART
// RUN: mcu-opt %s --split-input-file --pass-pipeline='builtin.module(mcu-attach-target{target=cortex-m4},mcu-convert-tosa-to-cmsisnn,mcu-plan-memory{prefer=memory})' | FileCheck %s --check-prefix=DSP
// RUN: mcu-opt %s --split-input-file --pass-pipeline='builtin.module(mcu-attach-target{target=cortex-m4},mcu-convert-tosa-to-cmsisnn,mcu-plan-memory{overlap=false})' | FileCheck %s --check-prefix=DSP-APART
// RUN: mcu-opt %s --split-input-file --pass-pipeline='builtin.module(mcu-attach-target{target=cortex-m4},mcu-convert-tosa-to-cmsisnn,mcu-plan-memory)' | FileCheck %s --check-prefix=DSP-SPEED
// RUN: mcu-opt %s --split-input-file --pass-pipeline='builtin.module(mcu-attach-target,mcu-convert-tosa-to-cmsisnn{backend=portable},mcu-plan-memory)' | FileCheck %s --check-prefix=PORTABLE
// RUN: mcu-opt %s --split-input-file --pass-pipeline='builtin.module(mcu-attach-target{target=cortex-m55},mcu-convert-tosa-to-cmsisnn,mcu-plan-memory{prefer=memory})' | FileCheck %s --check-prefix=MEM
// RUN: not mcu-opt %s --split-input-file --mcu-plan-memory=prefer=fast 2>&1 | FileCheck %s --check-prefix=PREFER
// PREFER: error: pass 'mcu-plan-memory': bad value 'fast' for option 'prefer' (expected one of speed, memory)

// conv 3x3 -> depthwise 3x3 -> conv 1x1 -> conv 3x3 on 8x8x16 int8 (1024 B per tensor).
// The depthwise output may start D bytes before its dying input: a pixel's window starts at most
// one row and one pixel back, and MVE computes 4 pixels per step, so D = (8 + 1 + 4) * 16 = 208.
// At the depthwise the classic plan holds input + output + the 4464-byte MVE scratch = 6512 B;
// overlapped, 208 + 1024 + 4464 = 5696 B.
// MVE: mcu.arena_bytes = 5696 : i64, mcu.arena_lower_bound_bytes = 6512 : i64, mcu.arena_overlap_bound_bytes = 5696 : i64
// The depthwise output sits exactly 208 B below its input; the scratch apart from both.
// MVE: "cmsisnn.conv"
// MVE-SAME: mcu.offset = 4672 : i64
// MVE-SAME: mcu.storage = "arena"
// MVE: "cmsisnn.depthwise_conv"
// MVE-SAME: mcu.offset = 4464 : i64
// MVE-SAME: mcu.scratch_offset = 0 : i64

// prefer=memory: the depthwise's scratch holds the arena's top bytes, so it calls the scratch-free
// arm_depthwise_conv_s8 (same arguments, raster order, so still overlapped): the 3x3 convs'
// 576-byte im2col buffers fit beside their tensors and the arena drops to 1600 B.
// MEM: mcu.arena_bytes = 1600 : i64, mcu.arena_lower_bound_bytes = 2048 : i64
// MEM: "cmsisnn.conv"
// MEM-SAME: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// MEM-SAME: mcu.scratch_bytes = 576 : i64
// MEM: "cmsisnn.depthwise_conv"
// MEM-SAME: algorithm = #cmsisnn.conv_algorithm<"generic">
// MEM-NOT: mcu.scratch_bytes = 4464
// MEM: algorithm = #cmsisnn.conv_algorithm<"wrapper">

// Without overlap every live buffer is apart: the classic lower bound.
// APART: mcu.arena_bytes = 6512 : i64, mcu.arena_lower_bound_bytes = 6512 : i64, mcu.arena_overlap_bound_bytes = 6512 : i64

// With prefer=memory on the DSP path: the wrapper would send the 1x1 conv to arm_convolve_1x1_s8_fast, whose matrix
// product loops over output-channel pairs outside the pixels (every input pixel is read again
// after the first outputs are written): no overlap. arm_convolve_1x1_s8 (same arguments, one
// output row per call) is called instead: steps of one 8-pixel row, D = 8 * 16 = 128.
// The depthwise takes arm_depthwise_conv_3x3_s8 (no scratch): D = 208.
// DSP: mcu.arena_bytes = 1600 : i64, mcu.arena_lower_bound_bytes = 2048 : i64, mcu.arena_overlap_bound_bytes = 1600 : i64
// DSP: "cmsisnn.depthwise_conv"
// DSP-SAME: algorithm = #cmsisnn.conv_algorithm<"wrapper">
// DSP-SAME: mcu.offset = 128 : i64
// DSP: algorithm = #cmsisnn.conv_algorithm<"1x1">
// DSP-SAME: mcu.offset = 0 : i64
// DSP-SAME: mcu.storage = "arena"
// DSP-APART: mcu.arena_bytes = 2048 : i64
// DSP-APART-NOT: conv_algorithm<"1x1">
// That variant runs the product a row at a time (the streaming wake word model's pointwise
// layers: 2x the instructions on Cortex-M4), so only prefer=memory takes it: with prefer=speed
// the 1x1 conv keeps the wrapper (and arm_convolve_1x1_s8_fast), its buffers apart.
// DSP-SPEED: mcu.arena_bytes = 2048 : i64
// DSP-SPEED-NOT: conv_algorithm<"1x1">

// The portable kernels compute one pixel at a time: depthwise D = (8 + 1 + 1) * 16 = 160,
// 1x1 D = 16; the conv 1x1 output, the depthwise output and the first conv output nest.
// PORTABLE: mcu.arena_bytes = 1200 : i64, mcu.arena_lower_bound_bytes = 2048 : i64, mcu.arena_overlap_bound_bytes = 1184 : i64
// PORTABLE: "portable.conv2d"
// PORTABLE-SAME: mcu.offset = 176 : i64
// PORTABLE: "portable.depthwise_conv2d"
// PORTABLE-SAME: mcu.offset = 16 : i64
// PORTABLE: "portable.conv2d"
// PORTABLE-SAME: mcu.offset = 0 : i64
// PORTABLE-SAME: mcu.storage = "arena"
func.func @main(%arg0: tensor<1x8x8x16xi8>) -> tensor<1x8x8x16xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<16x3x3x16xi8>} : () -> tensor<16x3x3x16xi8>
  %dw = "tosa.const"() {values = dense<1> : tensor<3x3x16x1xi8>} : () -> tensor<3x3x16x1xi8>
  %w1 = "tosa.const"() {values = dense<1> : tensor<16x1x1x16xi8>} : () -> tensor<16x1x1x16xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<16xi32>} : () -> tensor<16xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x16xi8>, tensor<16x3x3x16xi8>, tensor<16xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x16xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x16xi8>
  %2 = tosa.depthwise_conv2d %1, %dw, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x16xi8>, tensor<3x3x16x1xi8>, tensor<16xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x16xi32>
  %3 = tosa.rescale %2, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x16xi8>
  %4 = tosa.conv2d %3, %w1, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x16xi8>, tensor<16x1x1x16xi8>, tensor<16xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x16xi32>
  %5 = tosa.rescale %4, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x16xi8>
  %6 = tosa.conv2d %5, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x16xi8>, tensor<16x3x3x16xi8>, tensor<16xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x8x8x16xi32>
  %7 = tosa.rescale %6, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x8x8x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x8x8x16xi8>
  return %7 : tensor<1x8x8x16xi8>
}

// -----

// 128 channels: on MVE arm_depthwise_conv_s8_opt sweeps the whole image once per block of 124
// channels, so the first block's outputs are written while the second block's inputs are still
// to be read: overlap refused, both bounds are input + output + scratch = 2048 + 2048 + 4464.
// On the DSP path arm_depthwise_conv_3x3_s8 goes pixel by pixel: D = (4 + 1 + 4) * 128 = 1152.
// MVE: mcu.arena_bytes = 8560 : i64, mcu.arena_lower_bound_bytes = 8560 : i64, mcu.arena_overlap_bound_bytes = 8560 : i64
// DSP: mcu.arena_bytes = 3200 : i64, mcu.arena_lower_bound_bytes = 4096 : i64, mcu.arena_overlap_bound_bytes = 3200 : i64
// prefer=memory, M55: arm_depthwise_conv_s8 goes pixel by pixel over all channels, so it
// overlaps like the DSP kernel and needs no scratch: 8560 -> 3200 B.
// MEM: mcu.arena_bytes = 3200 : i64
// MEM: algorithm = #cmsisnn.conv_algorithm<"generic">
func.func @main(%arg0: tensor<1x4x4x128xi8>) -> tensor<1x4x4x128xi8> {
  %w = "tosa.const"() {values = dense<1> : tensor<128x1x1x128xi8>} : () -> tensor<128x1x1x128xi8>
  %dw = "tosa.const"() {values = dense<1> : tensor<3x3x128x1xi8>} : () -> tensor<3x3x128x1xi8>
  %b = "tosa.const"() {values = dense<0> : tensor<128xi32>} : () -> tensor<128xi32>
  %zp = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %m = "tosa.const"() {values = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {values = dense<38> : tensor<1xi8>} : () -> tensor<1xi8>
  %rzp = "tosa.const"() {values = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
  %0 = tosa.conv2d %arg0, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x128xi8>, tensor<128x1x1x128xi8>, tensor<128xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x128xi32>
  %1 = tosa.rescale %0, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x128xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x128xi8>
  %2 = tosa.depthwise_conv2d %1, %dw, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x128xi8>, tensor<3x3x128x1xi8>, tensor<128xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x128xi32>
  %3 = tosa.rescale %2, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x128xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x128xi8>
  %4 = tosa.conv2d %3, %w, %b, %zp, %zp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x128xi8>, tensor<128x1x1x128xi8>, tensor<128xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x128xi32>
  %5 = tosa.rescale %4, %m, %s, %rzp, %zp {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = DOUBLE_ROUND, scale32 = true} : (tensor<1x4x4x128xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x4x4x128xi8>
  return %5 : tensor<1x4x4x128xi8>
}
