"""nn.LSTM / nn.GRU / nn.RNN unrolled before export (frontend/decompose.py, RecurrentOps): equal to
the torch modules for every layout, direction and state; quantized models with them (a CRNN with a
bidirectional GRU that calls flatten_parameters(), a 2-layer LSTM over 16 steps, a bidirectional
ReLU RNN) compile and their C equals tosa_reference_model."""

from __future__ import annotations

import os
import shutil
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import mcu_mlir  # noqa: E402
from mcu_mlir.frontend.decompose import RecurrentOps  # noqa: E402
from mcu_mlir.target import run  # noqa: E402


def _outputs(result):
    out, state = result
    return [out, *(state if isinstance(state, tuple) else (state,))]


@pytest.mark.parametrize("make", [
    lambda: nn.LSTM(5, 7, 2, batch_first=True),
    lambda: nn.LSTM(5, 7, 1, bidirectional=True),
    lambda: nn.GRU(5, 6, 2, bidirectional=True, batch_first=True),
    lambda: nn.GRU(5, 3, bias=False),
    lambda: nn.RNN(5, 4, 3, nonlinearity="relu"),
    lambda: nn.RNN(5, 4, bidirectional=True, batch_first=True),
], ids=["lstm_2layer_batch_first", "lstm_bidirectional", "gru_bidirectional_2layer", "gru_no_bias",
        "rnn_relu_3layer", "rnn_tanh_bidirectional"])
def test_unrolled_module_equals_torch(make):
    torch.manual_seed(0)
    module = make().eval()
    unrolled = RecurrentOps(module).eval()
    unrolled.flatten_parameters()
    x = torch.randn((2, 6, 5) if module.batch_first else (6, 2, 5))
    directions = 2 if module.bidirectional else 1
    h0 = torch.randn(module.num_layers * directions, 2, module.hidden_size)
    state = (h0, torch.randn_like(h0)) if isinstance(module, nn.LSTM) else h0
    single = x[0] if module.batch_first else x[:, 0]
    with torch.no_grad():
        for args in ((x,), (x, state), (single,)):
            for got, want in zip(_outputs(unrolled(*args)), _outputs(module(*args))):
                assert torch.allclose(got, want, atol=1e-5)


class CRNN(nn.Module):
    """Conv front end and a bidirectional GRU over 16 frames (a keyword spotter's shape)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d((2, 1)))
        self.gru = nn.GRU(8 * 10, 16, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(32, 6)

    def forward(self, x):
        y = self.conv(x).flatten(1, 2).transpose(1, 2)
        self.gru.flatten_parameters()
        out, _ = self.gru(y)
        return self.fc(out[:, -1])


class SequenceLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(10, 16, 2, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(self.lstm(x)[0])


class ReluRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(10, 12, nonlinearity="relu", bidirectional=True)

    def forward(self, x):
        return self.rnn(x)[0]


class BatchLSTM(nn.Module):
    """Two sequences at once, no biases (the zero bias adds fold away in the TOSA)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 9, bias=False)

    def forward(self, x):
        return self.lstm(x)[0]


MODELS = {"crnn_gru": (CRNN, (1, 1, 20, 16)), "lstm_2layer": (SequenceLSTM, (1, 16, 10)),
          "lstm_batch2_no_bias": (BatchLSTM, (4, 2, 6)),
          "rnn_relu_bidirectional": (ReluRNN, (12, 1, 10))}


@pytest.mark.skipif(shutil.which("tosa_reference_model") is None, reason="tosa-tools not installed")
@pytest.mark.parametrize("name", sorted(MODELS))
def test_recurrent_models_bit_exact_on_host(name, tmp_path):
    cls, shape = MODELS[name]
    torch.manual_seed(0)
    backend = "cmsis-nn" if os.environ.get("CMSIS_NN_PATH") else "portable"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(cls().eval(), (torch.randn(shape),), target="host", backend=backend,
                                  calibration=32, emit="c", output_dir=str(tmp_path))
    outputs = [row for row in result.report["quantization"]["layer_sqnr"] if row["kind"] == "output"]
    assert all(row["sqnr_db"] is None or row["sqnr_db"] >= 25 for row in outputs), outputs
    x = [torch.randn(shape, generator=torch.Generator().manual_seed(5)).numpy()]
    want = run.run_reference_outdir(tmp_path, x)
    got = run.run(tmp_path, x, target="host")
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
    steps = {"lstm_2layer": 2 * 16, "lstm_batch2_no_bias": 4}.get(name)
    if steps and backend == "cmsis-nn":
        # Every step of every layer is one CMSIS-NN LSTM call, nothing of it left portable.
        c = (tmp_path / "model.c").read_text()
        assert c.count("status = arm_lstm_unidirectional_s8(") == steps
        assert "mcu_gather" not in c and "mcu_matmul" not in c


@pytest.mark.skipif(shutil.which("tosa_reference_model") is None, reason="tosa-tools not installed")
def test_portable_lstm_kernel_bit_exact(tmp_path):
    """Without CMSIS-NN every LSTM step is mcu_lstm_step_s8, the kernel's integers in portable C:
    equal to the reference model (this runs whether or not CMSIS-NN is available)."""
    torch.manual_seed(0)
    shape = (1, 16, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(SequenceLSTM().eval(), (torch.randn(shape),), target="host", backend="portable",
                         calibration=16, emit="c", output_dir=str(tmp_path))
    c = (tmp_path / "model.c").read_text()
    assert c.count("status = mcu_lstm_step_s8(") == 2 * 16 and "mcu_gather" not in c
    x = [torch.randn(shape, generator=torch.Generator().manual_seed(5)).numpy()]
    want = run.run_reference_outdir(tmp_path, x)
    got = run.run(tmp_path, x, target="host")
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
