"""Complex tensors and FFTs as real ops (frontend/graph/complex_ops.py, dft.py, stft_istft.py): the
rewritten float graph equals torch's, no complex op is left, and what has no real form is refused
naming the FFT and the user's line."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.frontend.graph.complex_ops import complex_as_real_parts  # noqa: E402


class Transforms(torch.nn.Module):
    """torch.fft's forms: lengths padded and truncated, every norm, n-D, inverse, complex products."""

    def forward(self, x):
        a = torch.fft.rfft(x, dim=-1)
        z = torch.view_as_complex(torch.view_as_real(torch.fft.fft(x, n=12, norm="ortho")).contiguous())
        return (a.abs(), torch.fft.fftn(x, dim=(1, 2)).real, torch.fft.irfft(a * 2, n=16),
                torch.fft.ifft(z * torch.fft.fft(x, n=12).conj()).imag,
                torch.fft.irfft2(torch.fft.rfft2(x), s=(8, 16)), torch.fft.rfft(x, dim=1, n=10, norm="forward").abs(),
                torch.fft.irfft(a, n=15, norm="ortho"), torch.view_as_real(torch.fft.ifft2(x + 0j - a.real[..., :1])),
                torch.fft.ifft(torch.complex(x, -2 * x) * 1j).real,
                torch.view_as_real(torch.fft.ifftshift(torch.fft.fftshift(torch.fft.fft2(x[:, :7]), dim=(1, 2)) * 2,
                                                       dim=-1)))


class RoundTrip(torch.nn.Module):
    """stft -> a complex mask -> istft (HDemucs' spectral branch), the windows made in the forward."""

    def __init__(self, n_fft, hop, win, normalized, length, batched):
        super().__init__()
        self.args, self.batched = (n_fft, hop, win, normalized, length), batched

    def forward(self, x):
        n_fft, hop, win, normalized, length = self.args
        x = x if self.batched else x[0]
        z = torch.stft(x, n_fft, hop, win, torch.hann_window(win), normalized=normalized, return_complex=True)
        z = torch.nn.functional.pad(z[..., :-1, :] * 1.5, (0, 0, 0, 1))
        y = torch.istft(z, n_fft, hop, win, torch.hann_window(win), normalized=normalized, length=length)
        return y, torch.view_as_real(z)


def _rewritten_equals_torch(model, x, rtol=1e-5):
    gm = torch.export.export(model, (x,)).module()
    assert complex_as_real_parts(gm)
    for n in gm.graph.nodes:
        val = n.meta.get("val")
        assert not (isinstance(val, torch.Tensor) and val.is_complex()), n.format_node()
        assert "fft" not in str(n.target) and "stft" not in str(n.target), n.format_node()
    with torch.no_grad():
        for want, got in zip(model(x), gm(x)):
            assert want.shape == got.shape
            assert torch.allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(want.abs().max())))


def test_transforms_equal_torch():
    _rewritten_equals_torch(Transforms(), torch.randn(2, 8, 16))


@pytest.mark.parametrize("args", [(64, 16, 64, True, 1000, True), (32, 8, 24, False, None, True),
                                  (64, 16, 64, False, 1100, False)])
def test_stft_istft_equal_torch(args):
    # istft divides by the windows' overlap, small near the ends (length 1100 reads past 1024 samples):
    # float32 rounding grows there, to 1.3e-4 of 5.6 on one of 40 random inputs.
    torch.manual_seed(0)
    _rewritten_equals_torch(RoundTrip(*args), torch.randn(2, 1024), rtol=1e-4)


def test_dft_is_one_linear_per_part():
    """A real signal's rfft: two linear layers (cos, -sin) on the signal itself, no transposes."""
    class Rfft(torch.nn.Module):
        def forward(self, x):
            return torch.view_as_real(torch.fft.rfft(x))
    gm = torch.export.export(Rfft(), (torch.randn(1, 4, 32),)).module()
    complex_as_real_parts(gm)
    ops = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert sorted(ops) == ["aten.linear.default", "aten.linear.default", "aten.stack.default"]


class Angle(torch.nn.Module):
    def forward(self, x):
        z = torch.fft.rfft(x)
        return torch.angle(z)


class ComplexOutput(torch.nn.Module):
    def forward(self, x):
        return torch.fft.fft(x) * 2


@pytest.mark.parametrize("model,says", [(Angle, "read by op 'aten.angle'"), (ComplexOutput, "is a model output")])
def test_refusal_names_the_fft_and_the_line(model, says):
    gm = torch.export.export(model(), (torch.randn(1, 16),)).module()
    with pytest.raises(UserError) as e:
        complex_as_real_parts(gm)
    text = str(e.value)
    assert text.startswith("torch.fft.") and "test_complex_ops.py:" in text and says in text


@pytest.mark.parametrize("length,n", [(8, 8), (7, 7), (9, 12), (12, 9), (1, 1), (16, 5)])
def test_dft_weights_against_torch_fft(length, n):
    """Each kind's matrices against torch.fft on a random signal, odd and even lengths, padded and truncated."""
    from mcu_mlir.frontend.graph.dft import dft_weights
    g = torch.Generator().manual_seed(length * 100 + n)
    re, im = torch.randn(3, length, generator=g, dtype=torch.float64), torch.randn(3, length, generator=g,
                                                                                  dtype=torch.float64)
    both = torch.cat([re, im], -1)

    def apply(w, x):
        return x @ w.double().t()
    w_re, w_im = dft_weights("r2c", length, n, False, 1.0)
    want = torch.fft.rfft(re, n=n)
    assert torch.allclose(apply(w_re, re), want.real, atol=1e-5)
    assert torch.allclose(apply(w_im, re), want.imag, atol=1e-5)
    for kind, fn, scale in (("c2c", torch.fft.fft, 1.0), ("c2c_inverse", torch.fft.ifft, 1.0 / n)):
        w_re, w_im = dft_weights(kind, length, n, True, scale)
        want = fn(torch.complex(re, im), n=n)
        assert torch.allclose(apply(w_re, both), want.real, atol=1e-5)
        assert torch.allclose(apply(w_im, both), want.imag, atol=1e-5)
    w_re, _ = dft_weights("c2r", length, n, True, 1.0 / n)
    assert torch.allclose(apply(w_re, both), torch.fft.irfft(torch.complex(re, im), n=n), atol=1e-5)
