// --mlir-print-ir-after-all dumps the module after each pass, ours included.
// RUN: mcu-opt %s --mcu-verify-static-shapes --cse --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s
// CHECK: IR Dump After {{.*}}mcu-verify-static-shapes
// CHECK: IR Dump After CSE
func.func @h(%a: tensor<4xi8>) -> tensor<4xi8> {
  return %a : tensor<4xi8>
}
