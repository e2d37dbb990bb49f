// --list-passes names our passes with their options, and upstream passes.
// RUN: mcu-opt --list-passes | FileCheck %s
// CHECK: mcu-mlir passes:
// CHECK: --mcu-verify-static-shapes
// CHECK-NEXT: --element-types
// CHECK: Upstream MLIR passes
// CHECK-DAG: --canonicalize
// CHECK-DAG: --tosa-reduce-transposes
