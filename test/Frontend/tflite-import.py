# mcu-opt reads a .tflite model as the integer TOSA the .tflite frontend builds, and runs passes on
# it as on a .mlir file; a malformed file is one error line naming what is wrong, exit 1.
# RUN: %PYTHON %s %t.tflite %t.truncated.tflite %t.bin %t.svdf.tflite
# RUN: mcu-opt %t.tflite --mcu-verify-integer-tosa | FileCheck %s
# RUN: mcu-opt %t.tflite --pass-pipeline='builtin.module(mcu-tosa-layout-pipeline)' | FileCheck %s --check-prefix=LAYOUT
# RUN: mcu-opt %t.svdf.tflite | FileCheck %s --check-prefix=STATE
# RUN: not mcu-opt %t.truncated.tflite 2>&1 | FileCheck %s --check-prefix=BAD
# RUN: not mcu-opt %t.missing.tflite 2>&1 | FileCheck %s --check-prefix=MISSING
# RUN: not mcu-opt %t.bin 2>&1 | FileCheck %s --check-prefix=BINARY
# CHECK-LABEL: func.func @main(
# CHECK-SAME: %arg0: tensor<1x5x5x2xi8> {mcu.scale = 0.05{{[0-9]*}} : f64, mcu.zero_point = 3 : i64}
# CHECK-SAME: -> (tensor<1x3x3x4xi8> {mcu.scale = 0.1{{[0-9]*}} : f64, mcu.zero_point = -2 : i64})
# CHECK: %[[W:.*]] = "tosa.const"() {{.*}} -> tensor<4x3x3x2xi8>
# CHECK: %[[ACC:.*]] = tosa.conv2d %arg0, %[[W]], {{.*}} pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>{{.*}} -> tensor<1x3x3x4xi32>
# CHECK: %[[Y:.*]] = tosa.rescale %[[ACC]], {{.*}} rounding_mode = DOUBLE_ROUND{{.*}} -> tensor<1x3x3x4xi8>
# CHECK: %[[R:.*]] = tosa.clamp %[[Y]] {max_val = 127 : i8, min_val = -2 : i8}
# CHECK: return %[[R]]
# LAYOUT: tosa.conv2d
# A variable tensor (SVDF's state) is one more input and output, paired in mcu.state:
# STATE-LABEL: func.func @main(
# STATE-SAME: %arg0: tensor<1x4xi8> {{.*}}, %arg1: tensor<1x6xi8> {mcu.scale = 0.0{{[0-9]*}} : f64, mcu.zero_point = 0 : i64})
# STATE-SAME: -> (tensor<1x2xi8> {{.*}}, tensor<1x6xi8> {{.*}}) attributes {mcu.state = array<i32: 1, 1>}
# STATE: %[[OLD:.*]] = tosa.slice %{{.*}} : (tensor<1x2x3xi8>, {{.*}}) -> tensor<1x2x2xi8>
# STATE: %[[NEW:.*]] = tosa.concat %[[OLD]], %{{.*}} {axis = 2 : i32}
# STATE: return %{{.*}}, %{{.*}} : tensor<1x2xi8>, tensor<1x6xi8>
# LAYOUT-NOT: tosa.transpose
# BAD: {{.*}}truncated.tflite: error: {{.*}}truncated{{.*}}
# BAD-NOT: Traceback
# MISSING: error: cannot read input file '{{.*}}missing.tflite'
# MISSING-NOT: Traceback
# BINARY: error: not an MLIR text file (a TFLite model is read by its .tflite suffix)
# BINARY-NOT: Traceback
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from tflite_writer import GraphsWriter, ModelWriter  # noqa: E402

m = ModelWriter()
rng = np.random.default_rng(0)
x = m.tensor("input", (1, 5, 5, 2), "i8", 0.05, 3)
w = m.tensor("conv/w", (4, 3, 3, 2), "i8", [0.01, 0.02, 0.015, 0.03], 0, rng.integers(-127, 128, (4, 3, 3, 2)))
b = m.tensor("conv/b", (4,), "i32", [0.0005, 0.001, 0.00075, 0.0015], 0, [10, -20, 30, -40])
y = m.tensor("conv", (1, 3, 3, 4), "i8", 0.1, -2)
m.op("CONV_2D", [x, w, b], [y], ("Conv2DOptions", {"Padding": 0, "StrideH": 2, "StrideW": 2,
                                                    "FusedActivationFunction": 1}))
model = m.write([x], [y])
Path(sys.argv[1]).write_bytes(model)
Path(sys.argv[2]).write_bytes(model[:len(model) // 2])
Path(sys.argv[3]).write_bytes(model)

m = GraphsWriter()
x = m.tensor("x", (1, 4), "i8", 0.05, 3)
wf = m.tensor("feature", (2, 4), "i8", 0.01, 0, rng.integers(-127, 128, (2, 4)))
wt = m.tensor("time", (2, 3), "i8", 0.01, 0, rng.integers(-127, 128, (2, 3)))
state = m.tensor("state", (1, 6), "i8", 0.02, 0, variable=True)
bias = m.tensor("bias", (2,), "i32", 0.0002, 0, [1, 2])
y = m.tensor("y", (1, 2), "i8", 0.1, 0)
m.op("SVDF", [x, wf, wt, bias, state], [y], ("SVDFOptions", {"Rank": 1}))
Path(sys.argv[4]).write_bytes(m.write([x], [y]))
