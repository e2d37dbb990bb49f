// Bad passes and options are user errors: exit code 1 and a message naming the culprit.
// RUN: not mcu-opt %s --mcu-no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unknown pass or pipeline 'mcu-no-such-pass'
// RUN: not mcu-opt %s --no-such-upstream-pass 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM: error: unknown pass or pipeline 'no-such-upstream-pass'
// RUN: not mcu-opt %s --mcu-verify-static-shapes=colour=red 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: pass 'mcu-verify-static-shapes' has no option 'colour' (options: element-types)
// RUN: not mcu-opt %s --pass-pipeline='builtin.module(func.func(mcu-verify-static-shapes))' 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: error: mcu-mlir passes run on the module: put them at the top level
// RUN: not mcu-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: cannot read input file '{{.*}}bad-options.mlir.missing'
// RUN: not mcu-opt %s stray-argument 2>&1 | FileCheck %s --check-prefix=STRAY
// STRAY: error: unexpected argument 'stray-argument'
// RUN: not mcu-opt %s --mcu-tosa-to-cmsisnn-pipeline=colour=red 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: error: pipeline 'mcu-tosa-to-cmsisnn-pipeline' has no option 'colour'
// PIPELINE-NOT: Traceback
// UNKNOWN-NOT: Traceback
// UPSTREAM-NOT: Traceback

func.func @f(%a: tensor<4xi8>) -> tensor<4xi8> {
  return %a : tensor<4xi8>
}
