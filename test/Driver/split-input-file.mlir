// Each chunk is parsed and transformed alone; outputs are joined by the marker.
// RUN: mcu-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @first
// CHECK: // -----
// CHECK-LABEL: func.func @second
func.func @first(%a: tensor<4xi8>) -> tensor<4xi8> {
  return %a : tensor<4xi8>
}

// -----

func.func @second(%a: tensor<4xi16>) -> tensor<4xi16> {
  return %a : tensor<4xi16>
}
