"""Audio front ends as layers: |torch.stft| (torchaudio's Spectrogram, MelSpectrogram, MFCC) becomes a
strided conv1d over the windowed cos / -sin basis and an integer hypot (frontend/graph/composite_ops.py);
the rewritten float graph equals torch's, and the quantized models' C equals tosa_reference_model."""

from __future__ import annotations

import importlib.util
import shutil
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.frontend.graph import python_only_imports  # noqa: E402
from mcu_mlir.frontend.graph.composite_ops import stft_magnitude_as_conv  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)


class Magnitude(torch.nn.Module):
    """torch.stft itself: a Hann window shorter than n_fft (centred), normalized."""

    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(200))

    def forward(self, x):
        return torch.stft(x, 256, 128, 200, self.window, normalized=True, return_complex=True).abs()


def _torchaudio(name, **kwargs):
    python_only_imports.install()
    if importlib.util.find_spec("torchaudio") is None:
        pytest.skip("torchaudio is not installed (the models extra)")
    import torchaudio
    return getattr(torchaudio.transforms, name)(**kwargs).eval()


FRONT_ENDS = {
    "stft": lambda: Magnitude().eval(),
    "spectrogram": lambda: _torchaudio("Spectrogram", n_fft=256, hop_length=128, power=1.0),
    "mel_normalized": lambda: _torchaudio("MelSpectrogram", sample_rate=16000, n_fft=400, win_length=320,
                                          hop_length=160, n_mels=32, normalized=True),
    "mfcc": lambda: _torchaudio("MFCC", sample_rate=16000, n_mfcc=13,
                                melkwargs=dict(n_fft=400, hop_length=160, n_mels=40)),
}


@pytest.mark.parametrize("name", sorted(FRONT_ENDS))
def test_rewritten_graph_equals_torch(name):
    model = FRONT_ENDS[name]()
    x = torch.randn(1, 4000)
    gm = torch.export.export(model, (x,)).module()
    stft_magnitude_as_conv(gm)
    targets = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    assert "aten.stft.default" not in targets and "aten.hypot.default" in targets
    with torch.no_grad():
        want, got = model(x), gm(x)
    assert torch.allclose(got, want, rtol=1e-3, atol=1e-4 * float(want.abs().max()))


@pytest.mark.parametrize("name,quantize,min_db", [("stft", "int16", 40), ("spectrogram", "int8", 25),
                                                  ("spectrogram", "int16", 40), ("mfcc", "int16", 25)])
def test_front_end_c_matches_reference(name, quantize, min_db, tmp_path):
    model = FRONT_ENDS[name]()
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (0.3 * torch.randn(1, 4000),), target="host", backend="portable", quantize=quantize,
                         calibration=8, emit="c", output_dir=str(tmp_path))
    assert "mcu_hypot(" in (tmp_path / "model.c").read_text()
    x = [(0.3 * np.random.default_rng(1).standard_normal((1, 4000))).astype(np.float32)]
    want = run.run_reference_outdir(tmp_path, x)
    got = run.run(tmp_path, x, target="host")
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
    with torch.no_grad():
        f = model(torch.from_numpy(x[0])).numpy()
    q = got.outputs_float[0].reshape(f.shape)
    assert 10 * np.log10((f ** 2).sum() / ((f - q) ** 2).sum()) >= min_db
