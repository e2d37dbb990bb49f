// Parse errors are diagnostics at the right line of the original file, also in later chunks.
// RUN: mcu-opt %s --split-input-file --verify-diagnostics
// RUN: not mcu-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: parse-error-invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: custom op 'tosa.not_an_op' is unknown
func.func @unknown_op(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @below {{custom op 'tosa.not_an_op' is unknown}}
  %0 = tosa.not_an_op %a : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// CHECK: parse-error-invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: use of undeclared SSA value name
func.func @undeclared(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @below {{use of undeclared SSA value name}}
  return %b : tensor<4xi8>
}
