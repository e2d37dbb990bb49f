// Pass options as mlir-opt takes them: several options in one flag (the shell's "a=1 b=2" arrives
// as one argument with a space), in braces of --pass-pipeline, quoted values, one parser for both.
// RUN: mcu-opt %s --mcu-attach-target=target=cortex-m4 --mcu-convert-tosa-to-cmsisnn=backend=portable "--mcu-plan-memory=ram-bytes=0 overlap=false" | FileCheck %s --check-prefix=FLAGS
// FLAGS: mcu.arena_overlap_bound_bytes = 0 : i64, mcu.backend = "portable", mcu.target = "cortex-m4"
// FLAGS: "portable.unary"
// RUN: mcu-opt %s --pass-pipeline='builtin.module(mcu-attach-target{target="cortex-m4"}, mcu-convert-tosa-to-cmsisnn{backend=portable}, mcu-plan-memory{ram-bytes=0 overlap=false})' | FileCheck %s --check-prefix=FLAGS
// The same with the value in single quotes, and the flag form of a pipeline.
// RUN: mcu-opt %s "--mcu-tosa-to-cmsisnn-pipeline=target='cortex-m4' backend=portable" | FileCheck %s --check-prefix=FLAGS
// A list option in braces keeps its commas.
// RUN: not mcu-opt %s --pass-pipeline='builtin.module(mcu-attach-target, mcu-convert-tosa-to-cmsisnn{backend=portable disabled-patterns={abs,clamp}})' 2>&1 | FileCheck %s --check-prefix=LIST
// LIST: error: 'tosa.abs' has no portable kernel for these operand types

// Errors name the pass and the option; exit code 1, no traceback.
// RUN: not mcu-opt %s '--mcu-plan-memory=prefer="memory overlap=false' 2>&1 | FileCheck %s --check-prefix=QUOTE
// QUOTE: error: pass 'mcu-plan-memory': unterminated " quote in 'prefer="memory overlap=false'
// RUN: not mcu-opt %s --pass-pipeline='builtin.module(mcu-attach-target{target=cortex-m4)' 2>&1 | FileCheck %s --check-prefix=BRACE
// BRACE: error: bad pass pipeline: unbalanced brackets in 'mcu-attach-target{target=cortex-m4' (missing '}')
// RUN: not mcu-opt %s --pass-pipeline='builtin.module(mcu-attach-target{target=cortex-m4}))' 2>&1 | FileCheck %s --check-prefix=CLOSE
// CLOSE: error: bad pass pipeline: unbalanced ')'
// RUN: not mcu-opt %s --mcu-plan-memory=overlap=maybe 2>&1 | FileCheck %s --check-prefix=BOOL
// BOOL: error: pass 'mcu-plan-memory': bad value 'maybe' for option 'overlap' (expected true or false)
// RUN: not mcu-opt %s --mcu-plan-memory=ram-bytes=lots 2>&1 | FileCheck %s --check-prefix=INT
// INT: error: pass 'mcu-plan-memory': bad value 'lots' for option 'ram-bytes' (expected an integer)
// RUN: not mcu-opt %s --mcu-attach-target=target=cortex-m99 2>&1 | FileCheck %s --check-prefix=CHOICE
// CHOICE: error: pass 'mcu-attach-target': bad value 'cortex-m99' for option 'target' (expected one of
// RUN: not mcu-opt %s "--mcu-attach-target==cortex-m4" 2>&1 | FileCheck %s --check-prefix=NAMELESS
// NAMELESS: error: pass 'mcu-attach-target': option '=cortex-m4' has no name
// RUN: not mcu-opt %s --mcu-attach-target=target 2>&1 | FileCheck %s --check-prefix=NOVALUE
// NOVALUE: error: pass 'mcu-attach-target': option 'target' needs a value (target=...)
// RUN: mcu-opt %s --mcu-attach-target --mcu-plan-memory=overlap -o /dev/null
// The core is attached once: the later passes read it from the module and take no target option.
// RUN: not mcu-opt %s --mcu-plan-memory=target=cortex-m4 2>&1 | FileCheck %s --check-prefix=REPEATED
// REPEATED: error: pass 'mcu-plan-memory' has no option 'target'
// RUN: not mcu-opt %s --mcu-convert-tosa-to-cmsisnn=backend=portable 2>&1 | FileCheck %s --check-prefix=NOTARGET
// NOTARGET: error: the module has no mcu.target: run mcu-attach-target{target=...} first
// QUOTE-NOT: Traceback
// BRACE-NOT: Traceback
// NOVALUE-NOT: Traceback

func.func @f(%a: tensor<1x4xi8>) -> tensor<1x4xi8> {
  %0 = tosa.abs %a : (tensor<1x4xi8>) -> tensor<1x4xi8>
  return %0 : tensor<1x4xi8>
}
