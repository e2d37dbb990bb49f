// --verify-diagnostics fails when an expected diagnostic is missing or an unexpected one appears.
// RUN: not mcu-opt %s --verify-diagnostics --mcu-verify-static-shapes 2>&1 | FileCheck %s

// CHECK-DAG: error: expected error "this message never comes" was not produced
// CHECK-DAG: error: unexpected error: argument #0 has dynamic shape ?x4
func.func @f(%a: tensor<?x4xi8>) -> tensor<?x4xi8> {
  // expected-error @below {{this message never comes}}
  return %a : tensor<?x4xi8>
}
