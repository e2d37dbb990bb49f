# An LSTM cell stepped three times from a zero state: the frontend writes each step in
# arm_lstm_unidirectional_s8's arithmetic, and each becomes one cmsisnn.lstm call (the first
# without a cell state to forget: the zero cell is a constant). With one activation table off by
# one entry, nothing matches: the steps stay the TOSA ops they are (portable kernels).
# RUN: %PYTHON %s | mcu-opt --split-input-file --mcu-attach-target=target=cortex-m55 --mcu-convert-tosa-to-cmsisnn | FileCheck %s
# RUN: %PYTHON %s | mcu-opt --split-input-file --mcu-attach-target --mcu-convert-tosa-to-cmsisnn=backend=portable | FileCheck %s --check-prefix=PORTABLE
# CHECK-LABEL: func.func @main
# CHECK-NOT: tosa.gather
# CHECK: %[[ZERO:[0-9]+]] = "tosa.const"() <{values = dense<0> : tensor<1x5xi16>}>
# CHECK: %[[S0:[0-9]+]]:2 = "cmsisnn.lstm"(%{{.*}}, %{{.*}}, %[[ZERO]],
# CHECK-SAME: cell_clip = 32767 : i32
# CHECK-SAME: forget_to_cell = array<i32: 1073741824, -14>
# CHECK-SAME: (tensor<1x6xi8>, tensor<1x5xi8>, tensor<1x5xi16>, tensor<4x5x6xi8>, tensor<4x5x5xi8>,
# CHECK-SAME: tensor<4x5xi32>, tensor<4x5xi32>) -> (tensor<1x5xi8>, tensor<1x5xi16>)
# CHECK: %[[S1:[0-9]+]]:2 = "cmsisnn.lstm"(%{{.*}}, %[[S0]]#0, %[[S0]]#1,
# CHECK: "cmsisnn.lstm"(%{{.*}}, %[[S1]]#0, %[[S1]]#1,
# CHECK-NOT: cmsisnn.lstm
# CHECK: // -----
# CHECK-NOT: cmsisnn.lstm
# CHECK: portable.gather
# PORTABLE-COUNT-3: "portable.lstm"
# PORTABLE-NOT: portable.lstm
# PORTABLE: // -----
import warnings

import numpy as np
import torch
from torch import nn

from mcu_mlir.fixed_point import cmsis_lstm
from mcu_mlir.frontend import import_model


class Steps(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(6, 5)

    def forward(self, x):
        state, outs = None, []
        for t in range(3):
            state = self.cell(x[t], state)
            outs.append(state[0])
        return torch.stack(outs)


warnings.simplefilter("ignore")
torch.manual_seed(0)
example = (torch.randn(3, 1, 6),)
print(import_model(Steps().eval(), example, calibration=4).module)
print("// -----")
exact = cmsis_lstm.activation_table


def off_by_one(left_shift, kind):
    table = np.array(exact(left_shift, kind))
    if kind == "tanh" and left_shift != 0:
        table[40000] += 1
    return table


cmsis_lstm.activation_table = off_by_one
print(import_model(Steps().eval(), example, calibration=4).module)
