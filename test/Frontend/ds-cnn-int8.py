# The frontend's integer TOSA of the zoo's DS-CNN passes the integer contract, validates and keeps
# the layers CMSIS-NN runs: 1 conv + 4 depthwise/pointwise pairs, average pool, fully connected.
# RUN: %PYTHON %s | mcu-opt --mcu-verify-integer-tosa | FileCheck %s
# CHECK: func.func @main(%arg0: tensor<1x1x49x10xi8>) -> tensor<1x12xi8>
# CHECK-NOT: f32
# CHECK: tosa.conv2d {{.*}} -> tensor<1x25x5x64xi32>
# CHECK: rounding_mode = DOUBLE_ROUND
# CHECK-COUNT-4: tosa.depthwise_conv2d
# CHECK: tosa.avg_pool2d
# CHECK: tosa.matmul {{.*}} -> tensor<1x1x12xi32>
# CHECK: return {{.*}} : tensor<1x12xi8>
import warnings

from mcu_mlir import zoo
from mcu_mlir.frontend import import_model

warnings.simplefilter("ignore")
model, example = zoo.get("ds_cnn")
print(import_model(model, example, calibration=4).module)
