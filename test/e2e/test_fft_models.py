"""Models with FFTs compiled whole (frontend/graph/complex_ops.py): HuggingFace FNet's 2-D FFT and
torchaudio HDemucs' STFT / iSTFT, and a spectrogram front end read as real and imaginary parts. Their
C equals tosa_reference_model bit for bit; each output's SQNR against float is asserted."""

from __future__ import annotations

import importlib.util
import shutil
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import mcu_mlir  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402
from mcu_mlir.frontend.graph import python_only_imports  # noqa: E402

if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)


def _need(module):
    python_only_imports.install()
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (the models extra)")


class FNetHidden(torch.nn.Module):
    """FNet (hidden 64, 2 layers): each layer's token mixing is fftn(x, dim=(1, 2)).real."""

    def __init__(self):
        super().__init__()
        from transformers import FNetConfig, FNetModel
        torch.manual_seed(0)
        self.fnet = FNetModel(FNetConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, intermediate_size=128,
                                         max_position_embeddings=32)).eval()

    def forward(self, ids):
        return self.fnet(ids).last_hidden_state


class SpectrumClassifier(torch.nn.Module):
    """An STFT read as its real and imaginary parts (view_as_real), then a linear layer."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.register_buffer("window", torch.hann_window(64))
        self.head = torch.nn.Linear(33 * 2, 16)

    def forward(self, x):
        z = torch.stft(x, 64, 32, window=self.window, center=False, return_complex=True)    # [1, 33, frames]
        parts = torch.view_as_real(z).permute(0, 2, 1, 3).flatten(2)                       # [1, frames, 66]
        return self.head(parts)


def _compile_and_check(model, example, fresh, tmp_path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mcu_mlir.compile(model, (example,), target="host", quantize="int8", emit="c",
                                  output_dir=str(tmp_path), activation_ranges="minmax", range_equalization="off",
                                  **options)
    want = run.run_reference_outdir(tmp_path, [fresh])
    got = run.run(tmp_path, [fresh], target="host")
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
    with torch.no_grad():
        f = model(torch.from_numpy(fresh)).numpy()
    q = got.outputs_float[0].reshape(f.shape)
    return result, 10 * np.log10((f ** 2).sum() / ((f - q) ** 2).sum())


def test_fnet_compiles_bit_exact(tmp_path):
    _need("transformers")
    ids = np.random.default_rng(1).integers(0, 100, (1, 16)).astype(np.int64)
    result, sqnr = _compile_and_check(FNetHidden().eval(), torch.randint(0, 100, (1, 16)), ids, tmp_path)
    kernels = [op["kernel"] for op in result.report["ops"]]
    # 4 linear layers, the embedding projection, and per layer the FFT's 3 DFT matrices (hidden: cos and -sin;
    # sequence: the real part only, its imaginary part unread)
    assert kernels.count("arm_fully_connected_per_channel_s8") == 5 + 2 * 3
    assert sqnr >= 22


def test_hdemucs_compiles_bit_exact(tmp_path):
    _need("torchaudio")
    from torchaudio.models import HDemucs
    torch.manual_seed(0)
    model = HDemucs(sources=["a", "b"], audio_channels=1, channels=4, growth=2, nfft=64, depth=2).eval()
    fresh = (0.3 * np.random.default_rng(1).standard_normal((1, 1, 512))).astype(np.float32)
    _, sqnr = _compile_and_check(model, 0.3 * torch.randn(1, 1, 512), fresh, tmp_path,
                                 calibration=[(0.3 * np.random.default_rng(s).standard_normal((1, 1, 512)))
                                              .astype(np.float32) for s in range(8)])
    assert sqnr >= 22


def test_stft_linear_matches_float_within_its_sqnr(tmp_path):
    """The SQNR measured on inputs the compile never saw reaches the compiler's own estimate (less the
    1 dB its report allows for other inputs)."""
    rng = np.random.default_rng(3)
    calibration = [rng.standard_normal((1, 1024)).astype(np.float32) for _ in range(16)]
    fresh = rng.standard_normal((1, 1024)).astype(np.float32)
    result, sqnr = _compile_and_check(SpectrumClassifier().eval(), torch.randn(1, 1024), fresh, tmp_path,
                                      calibration=calibration)
    estimate = [row for row in result.report["quantization"]["layer_sqnr"] if row["kind"] == "output"][0]["sqnr_db"]
    kernels = {op["kernel"] for op in result.report["ops"]}
    assert "arm_convolve_wrapper_s8" in kernels or "arm_convolve_s8" in kernels
    assert sqnr >= estimate - 1.0, (sqnr, estimate)


class FourierMixing(torch.nn.Module):
    """FNet's token mixing and a spectrum magnitude, in float."""

    def forward(self, x):
        return torch.fft.fftn(x, dim=(1, 2)).real + torch.fft.rfft(x, n=30).abs().mean(-1, keepdim=True)


def test_float_path_equals_torch(tmp_path):
    """--quantize none: torch-mlir lowers no complex tensor; the same rewrite (|z| as a square root)
    gives float TOSA that tosa_reference_model runs to torch's values."""
    from mcu_mlir import reference
    model, x = FourierMixing().eval(), torch.randn(1, 8, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (x,), target="host", quantize="none", emit="tosa", output_dir=str(tmp_path))
    got = reference.run_reference(str(tmp_path / "model.tosa.mlir"), [x.numpy()])[0]
    with torch.no_grad():
        want = model(x).numpy()
    assert np.allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
