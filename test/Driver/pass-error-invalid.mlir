// Errors a pass emits carry the op's location and fail the run with exit code 1.
// RUN: mcu-opt %s --split-input-file --mcu-verify-static-shapes --verify-diagnostics
// RUN: not mcu-opt %s --split-input-file --mcu-verify-static-shapes 2>&1 | FileCheck %s

// CHECK: pass-error-invalid.mlir:[[# @LINE + 1]]:1: error: argument #0 has dynamic shape ?x2
func.func @dynamic(%a: tensor<?x2xf32>) -> tensor<?x2xf32> {
// expected-error @above {{argument #0 has dynamic shape ?x2}}
  // expected-error @below {{result #0 of 'tosa.abs' has dynamic shape ?x2}}
  %0 = tosa.abs %a : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

func.func @f64(%a: tensor<2xf64>) -> tensor<2xf64> {
// expected-error @above {{argument #0 has unsupported element type f64}}
  return %a : tensor<2xf64>
}

// -----

// A chunk without errors passes through.
func.func @fine(%a: tensor<2xi8>) -> tensor<2xi8> {
  return %a : tensor<2xi8>
}
