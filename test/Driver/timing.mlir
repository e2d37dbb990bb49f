// --mlir-timing reports the time of each pass.
// RUN: mcu-opt %s --mcu-verify-static-shapes --canonicalize --mlir-timing -o /dev/null 2>&1 | FileCheck %s
// CHECK: Execution time report
// CHECK-DAG: Canonicalizer
// CHECK-DAG: mcu-verify-static-shapes
func.func @t(%a: tensor<4xi8>) -> tensor<4xi8> {
  return %a : tensor<4xi8>
}
