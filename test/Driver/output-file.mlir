// -o writes the result to a file and nothing to stdout.
// RUN: mcu-opt %s -o %t.mlir > %t.stdout
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=EMPTY --allow-empty < %t.stdout
// CHECK-LABEL: func.func @g
// EMPTY-NOT: {{.}}
func.func @g(%a: tensor<4xi8>) -> tensor<4xi8> {
  return %a : tensor<4xi8>
}
