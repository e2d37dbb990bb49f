// A textual pipeline mixing an mcu pass with upstream module and function passes, in order.
// RUN: mcu-opt %s --pass-pipeline='builtin.module(mcu-verify-static-shapes, func.func(tosa-reduce-transposes), canonicalize, cse)' | FileCheck %s
// The same pipeline given as flags, with a function pass named at the top level.
// RUN: mcu-opt %s --mcu-verify-static-shapes --tosa-reduce-transposes --canonicalize --cse | FileCheck %s

// CHECK-LABEL: func.func @inverse_pair
// CHECK-NOT: tosa.transpose
// CHECK: return %arg0
func.func @inverse_pair(%a: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = tosa.transpose %a {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  %1 = tosa.transpose %0 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x3x4x2xf32>) -> tensor<1x2x3x4xf32>
  return %1 : tensor<1x2x3x4xf32>
}
