// Malformed MLIR on stdin: the location names <stdin>, no traceback.
// RUN: echo 'func.func @f( {' | not mcu-opt 2>&1 | FileCheck %s
// CHECK: <stdin>:1:14: error: expected non-function type
// CHECK-NOT: Traceback
