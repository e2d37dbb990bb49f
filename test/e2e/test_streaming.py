"""Streaming models (--state IN:OUT): the state is calibrated as the model hands it to itself,
each state output is quantized as its input, and model.h gets mcu_model_reset() / mcu_model_step()
keeping it in static storage. Over 20 consecutive chunks the C (host, Cortex-M55) equals
tosa_reference_model run with the state carried, and follows the float model; the Silero VAD v5
architecture (reflect-padded STFT conv, LSTMCell, 64 samples of context carried) too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools"))
import speech_signal  # noqa: E402
from streaming_models import ConvLSTMStream, silero_vad_v5, train_vad  # noqa: E402

if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)

BACKEND = "cmsis-nn" if os.environ.get("CMSIS_NN_PATH") else "portable"
STEPS = 20


EXAMPLE = (torch.randn(1, 8, 4), torch.zeros(1, 24), torch.zeros(1, 24))


def _compile(out, target="host", **kw):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mcu_mlir.compile(ConvLSTMStream().eval(), EXAMPLE, target=target, backend=BACKEND, calibration=16,
                                emit="c", output_dir=str(out), state=kw.pop("state", "1:1,2:2"), **kw)


def _chunks(seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal((1, 8, 4)).astype(np.float32)] for _ in range(STEPS)]


def test_streaming_c_api_and_steps_equal_the_reference(tmp_path):
    result = _compile(tmp_path)
    assert result.report["state"] == [[1, 1], [2, 2]]
    header = (tmp_path / "model.h").read_text()
    for decl in ("#define MCU_MODEL_NUM_STATES 2", "#define MCU_MODEL_NUM_STEP_INPUTS 1",
                 "void mcu_model_reset(void);", "int mcu_model_step(const void *const *inputs"):
        assert decl in header
    q_in, q_out = result.report["quantization"]["inputs"], result.report["quantization"]["outputs"]
    for i, j in ((1, 1), (2, 2)):       # the integers handed over mean the same
        assert (q_in[i]["scale"], q_in[i]["zero_point"]) == (q_out[j]["scale"], q_out[j]["zero_point"])
    steps = _chunks()
    got = run.run_steps(tmp_path, steps, target="host")
    want = run.run_reference_steps(tmp_path, steps)
    for s, (c, r) in enumerate(zip(got, want)):
        assert np.array_equal(c.outputs_q[0], r.outputs_q[0].reshape(c.outputs_q[0].shape)), f"step {s}"
    # and it follows the float model run with its state carried
    torch.manual_seed(0)
    model = ConvLSTMStream().eval()
    h, c, floats = torch.zeros(1, 24), torch.zeros(1, 24), []
    with torch.no_grad():
        for (x,) in steps:
            y, h, c = model(torch.from_numpy(x), h, c)
            floats.append(y.numpy())
    f = np.concatenate(floats)
    q = np.concatenate([r.outputs_float[0] for r in got]).reshape(f.shape)
    assert 10 * np.log10((f ** 2).sum() / ((f - q) ** 2).sum()) >= 30


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
                    reason="needs qemu-system-arm and arm-none-eabi-gcc")
@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_mcu_run_steps_on_cortex_m(target, tmp_path):
    # The LSTM cell is arm_lstm_unidirectional_s8 (its MVE and DSP code paths) or mcu_lstm_step_s8.
    out = tmp_path / target
    _compile(out, target=target)
    kernel = "arm_lstm_unidirectional_s8(" if BACKEND == "cmsis-nn" else "mcu_lstm_step_s8("
    assert kernel in (out / "model.c").read_text()
    inputs = tmp_path / "chunks.npz"
    np.savez(inputs, input0=np.stack([x for (x,) in _chunks(1)]))
    proc = subprocess.run([sys.executable, "-m", "mcu_mlir.tools.mcu_run", str(out), "--inputs", str(inputs),
                           "--outputs", str(tmp_path / "o.npz"), "--steps", str(STEPS), "--target", target],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "every step equals tosa_reference_model" in proc.stdout
    assert np.load(tmp_path / "o.npz")["output0_q"].shape == (STEPS, 1, 2)


def test_state_errors(tmp_path):
    with pytest.raises(UserError, match="expected INPUT:OUTPUT"):
        _compile(tmp_path / "a", state="1-1")
    with pytest.raises(UserError, match="named twice"):
        _compile(tmp_path / "b", state="1:1,1:2")
    with pytest.raises(UserError, match=r"input 1 has shape \(1, 24\), output 0 \(1, 2\)"):
        _compile(tmp_path / "c", state="1:0")
    with pytest.raises(UserError, match="has 3 input"):
        _compile(tmp_path / "d", state="5:1")
    plain = tmp_path / "plain"
    _compile(plain, state=None)
    with pytest.raises(UserError, match="no streaming model"):
        run.run_steps(plain, _chunks()[:2])


def test_tosa_file_keeps_its_state(tmp_path):
    """The TOSA the frontend wrote carries mcu.state: compiled again, the same streaming model."""
    _compile(tmp_path / "first")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = mcu_mlir.compile(str(tmp_path / "first" / "tosa-import.mlir"), None, target="host", backend=BACKEND,
                                 emit="c", output_dir=str(tmp_path / "again"))
    assert again.report["state"] == [[1, 1], [2, 2]]
    assert "mcu_model_step" in (tmp_path / "again" / "model.h").read_text()


def test_named_streaming_model(tmp_path):
    """--name renames the step API too (vad_model_step), and the harness still drives it."""
    _compile(tmp_path, name="vad")
    header = (tmp_path / "vad_model.h").read_text()
    assert "int vad_model_step(" in header and "#define VAD_MODEL_NUM_STATES 2" in header
    steps = _chunks(2)[:5]
    got = run.run_steps(tmp_path, steps, target="host")
    want = run.run_reference_steps(tmp_path, steps)
    assert all(np.array_equal(c.outputs_q[0], r.outputs_q[0].reshape(c.outputs_q[0].shape)) for c, r in zip(got, want))


def test_silero_vad_v5_streams_bit_exact(tmp_path):
    """Context, h and c carried over 20 chunks of 512 samples; speech probabilities follow float."""
    torch.manual_seed(0)
    shapes = [(1, 512), (1, 64), (1, 128), (1, 128)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(silero_vad_v5(), tuple(torch.zeros(s) for s in shapes), target="host", backend=BACKEND,
                         calibration=16, emit="c", output_dir=str(tmp_path), state="1:1,2:2,3:3")
    rng = np.random.default_rng(3)
    steps = [[(0.3 * rng.standard_normal((1, 512))).astype(np.float32)] for _ in range(STEPS)]
    got = run.run_steps(tmp_path, steps, target="host")
    want = run.run_reference_steps(tmp_path, steps)
    assert all(np.array_equal(c.outputs_q[0], r.outputs_q[0].reshape(c.outputs_q[0].shape)) for c, r in zip(got, want))
    model = silero_vad_v5()
    state, probs = [torch.zeros(s) for s in shapes[1:]], []
    with torch.no_grad():
        for (x,) in steps:
            p, *state = model(torch.from_numpy(x), *state)
            probs.append(float(p))
    q = [float(r.outputs_float[0].reshape(-1)[0]) for r in got]
    assert max(abs(a - b) for a, b in zip(probs, q)) < 0.02


@pytest.mark.skipif(not speech_signal.available(), reason="needs espeak-ng and sox (Debian packages; tools/setup.sh "
                    "installs them)")
def test_vad_decisions_on_spoken_signal_agree_with_float(tmp_path):
    """A Silero-v5-architecture VAD trained for a few seconds on espeak-ng speech in noise, run as
    firmware (int8, host) over another 13 s of speech, silence and noise in 32 ms chunks with its state
    carried: its speech / non-speech decisions agree with the float model on >= 98 % of chunks, and
    its first steps equal tosa_reference_model."""
    train, train_mask = speech_signal.mixture(seed=1)
    model = train_vad(train, train_mask)
    shapes = [(1, 512), (1, 64), (1, 128), (1, 128)]
    calibration = [(torch.from_numpy(c),) + tuple(torch.zeros(s) for s in shapes[1:])
                   for c in speech_signal.chunks(train)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, calibration[0], target="host", backend=BACKEND, calibration=calibration, emit="c",
                         output_dir=str(tmp_path), state="1:1,2:2,3:3")
    signal, _ = speech_signal.mixture(seed=0)
    steps = [[c] for c in speech_signal.chunks(signal)]
    got = run.run_steps(tmp_path, steps, target="host")
    want = run.run_reference_steps(tmp_path, steps[:8])
    assert all(np.array_equal(c.outputs_q[0], r.outputs_q[0].reshape(c.outputs_q[0].shape)) for c, r in zip(got, want))
    state, floats = [torch.zeros(s) for s in shapes[1:]], []
    with torch.no_grad():
        for (x,) in steps:
            p, *state = model(torch.from_numpy(x), *state)
            floats.append(float(p))
    firmware = np.array([float(r.outputs_float[0].reshape(-1)[0]) for r in got])
    floats = np.array(floats)
    assert 0.2 < (floats > 0.5).mean() < 0.8              # a VAD that decides, both ways
    assert ((firmware > 0.5) == (floats > 0.5)).mean() >= 0.98


@pytest.mark.parametrize("name", ["crnn_gru_stream", "lstm2_stream", "deepspeech_stream", "tcn_stream"])
def test_stream_models_bit_exact_over_20_chunks(name, tmp_path):
    """A CRNN keyword spotter (GRU state), a 2-layer LSTM (both layers' h, c), a DeepSpeech-like model
    (conv, FCs, LSTM state) and a causal TCN (each block's context frames as state), streamed."""
    import streaming_models
    make, shapes, pairs = streaming_models.MODELS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(make(), tuple(torch.zeros(s) for s in shapes), target="host", backend=BACKEND,
                         calibration=16, emit="c", output_dir=str(tmp_path), state=pairs)
    state_inputs = {i for i, _ in pairs}
    rng = np.random.default_rng(4)
    steps = [[(0.5 * rng.standard_normal(s)).astype(np.float32) for i, s in enumerate(shapes) if i not in state_inputs]
             for _ in range(STEPS)]
    got = run.run_steps(tmp_path, steps, target="host")
    want = run.run_reference_steps(tmp_path, steps)
    for s, (c, r) in enumerate(zip(got, want)):
        assert all(np.array_equal(a, b.reshape(a.shape)) for a, b in zip(c.outputs_q, r.outputs_q)), f"step {s}"
