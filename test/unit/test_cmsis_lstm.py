"""fixed_point/cmsis_lstm.py's model of CMSIS-NN's LSTM arithmetic against the C it models: the int16
sigmoid / tanh (arm_nn_activation_s16) of every int16 input, for the shifts an LSTM uses, built
from the CMSIS-NN checkout with the host compiler; the parameters of a step."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcu_mlir.fixed_point import cmsis_lstm

SHIFTS = (-3, -1, 0, 1, 2, 3, 5)

_PROGRAM = r"""
#include <stdio.h>
#include "arm_nnfunctions.h"
int main(void) {
    static int16_t in[65536], out[65536];
    const int shifts[] = {%s};
    for (int i = 0; i < 65536; i++) in[i] = (int16_t)(i - 32768);
    for (int t = 0; t < 2; t++)
        for (unsigned s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++) {
            arm_nn_activation_s16(in, out, 65536, shifts[s], t ? ARM_TANH : ARM_SIGMOID);
            fwrite(out, sizeof(out), 1, stdout);
        }
    return 0;
}
"""


@pytest.mark.skipif(not os.environ.get("CMSIS_NN_PATH"), reason="CMSIS_NN_PATH not set: no CMSIS-NN to compare with")
@pytest.mark.skipif(shutil.which("cc") is None, reason="no host C compiler")
def test_activation_tables_equal_arm_nn_activation_s16(tmp_path):
    root = Path(os.environ["CMSIS_NN_PATH"])
    src = tmp_path / "act.c"
    src.write_text(_PROGRAM % ", ".join(map(str, SHIFTS)))
    exe = tmp_path / "act"
    subprocess.run(["cc", "-O1", f"-I{root / 'Include'}", str(src),
                    str(root / "Source/ActivationFunctions/arm_nn_activation_s16.c"),
                    str(root / "Source/NNSupportFunctions/arm_nntables.c"), "-o", str(exe)], check=True)
    raw = subprocess.run([str(exe)], check=True, capture_output=True).stdout
    got = np.frombuffer(raw, np.int16).reshape(2, len(SHIFTS), 65536)
    for t, kind in enumerate(("sigmoid", "tanh")):
        for s, shift in enumerate(SHIFTS):
            assert np.array_equal(cmsis_lstm.activation_table(shift, kind), got[t, s]), (kind, shift)


def test_step_parameters():
    # A cell state at 2**-11 is read as Q3.12 with one left shift; the fixed requantizations.
    assert cmsis_lstm.tanh_left_shift(-11) == 1
    m = cmsis_lstm.cell_multipliers(-11, 2.0 ** -7)
    assert m["forget_to_cell"] == (1 << 30, 45)          # 2**-15
    assert m["input_to_cell"] == (1 << 30, 49)           # 2**-30 / 2**-11
    assert m["output"] == (1 << 30, 53)                  # 2**-30 / 2**-7
    w, scale = cmsis_lstm.quantize_gate_weights(np.array([[0.5, -1.0], [0.25, 0.0]]))
    assert scale == 1.0 / 127 and w.tolist() == [[64, -127], [32, 0]]


def test_finest_cell_state_keeps_the_rescales_in_apply_scale_32():
    """A cell state at 2**MIN_CELL_POWER: input_to_cell's rescale admits every |i * g| < 2**30 and
    the sum with f * c saturates in one identity rescale; one power finer, it does not. At 2**-34
    (issue 35: a one-step c' never observed) input_to_cell was 2**4, shift 26, and the reference
    model stopped on a value of 286364800 (2**25 admitted)."""
    from mcu_mlir.fixed_point.qmath import rescale_admits
    for power, fits in ((cmsis_lstm.MIN_CELL_POWER, True), (cmsis_lstm.MIN_CELL_POWER - 1, False)):
        m, s = cmsis_lstm.cell_multipliers(power, 2.0 ** -7)["input_to_cell"]
        total = 2 ** -power + (1 << 15)
        assert (rescale_admits(1 << 30, m, s) and rescale_admits(total, 1 << 30, 30)) == fits, power
    m, s = cmsis_lstm.cell_multipliers(-34, 2.0 ** -7)["input_to_cell"]
    assert (m, s) == (1 << 30, 26)
    assert rescale_admits((1 << 25) - 1, m, s) and not rescale_admits(286364800, m, s)


def test_cell_state_observer_floor():
    """A cell state observed only at zero gets 2**MIN_CELL_POWER, not a scale at the floor of
    float resolution; a real range keeps 2**ceil(log2(2 max|c|)) / 2**15."""
    torch = pytest.importorskip("torch")
    from mcu_mlir.frontend.quantize.quantizer import CELL_STATE_SPEC
    for values, power in ((torch.zeros(4), cmsis_lstm.MIN_CELL_POWER), (torch.tensor([-0.3, 0.4]), -15),
                          (torch.tensor([1e-9]), cmsis_lstm.MIN_CELL_POWER)):
        observer = CELL_STATE_SPEC.observer_or_fake_quant_ctr()
        observer(values)
        scale, zero_point = observer.calculate_qparams()
        assert float(scale) == 2.0 ** power and int(zero_point) == 0
