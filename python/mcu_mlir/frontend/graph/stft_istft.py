"""torch.stft and torch.istft as convolutions with constant filters (complex_ops' walk calls these).

stft: a strided conv1d whose 2 x bins filters are the windowed cos / -sin basis, the real and the
imaginary parts its two channel halves. istft: one transposed conv1d whose filters are the inverse
DFT's columns times the window (the frames it makes overlap-added by the stride), the samples torch
trims at the ends sliced off, then a product with the inverse of the window envelope (a constant).
"""

from __future__ import annotations

import math

import torch

from .dft import dft_weights, fft_name, stft_basis, where

aten = torch.ops.aten


def _window(rw, node, window_arg, win_length, n_fft: int) -> torch.Tensor:
    """The window as n_fft float64 samples (a shorter one centred, as torch pads it)."""
    if window_arg is None:
        w = torch.ones(win_length if win_length is not None else n_fft, dtype=torch.float64)
    else:
        w = rw.constant_value(window_arg)
        if not isinstance(w, torch.Tensor):
            rw.refuse(node, "needs a window computed from constants only (its window depends on the input)")
        w = w.detach().to(torch.float64).reshape(-1)
    if w.numel() < n_fft:
        left = (n_fft - w.numel()) // 2
        w = torch.nn.functional.pad(w, (left, n_fft - w.numel() - left))
    return w


def stft_as_conv(rw, node):
    """(re, im) of torch.stft(x): [B, bins, frames] from a conv1d over [B, 1, T]."""
    a = list(node.args) + [None] * 10
    x, n_fft, hop, win_length, window = a[0], int(a[1]), a[2], a[3], a[4]
    if node.target is aten.stft.center:
        center, normalized, onesided = a[5], a[7], a[8]
        if center:
            rw.refuse(node, "comes from stft(center=True) in a form this rewrite does not know")
    else:
        normalized, onesided = a[5], a[6]
    hop = int(hop) if hop is not None else n_fft // 4
    w = _window(rw, node, window, win_length, n_fft)
    if rw.parts.get(x) is not None or x.meta["val"].is_complex():
        rw.refuse(x, f"is the input of torch.stft at {where(node)}, which takes a real signal")
    bins = n_fft // 2 + 1 if onesided is not False else n_fft
    basis = stft_basis(w, n_fft, bins, normalized)
    one_signal = x.meta["val"].dim() == 1
    signal = rw.emit(aten.unsqueeze.default, x, -2)                        # [B, 1, T]
    if one_signal:
        signal = rw.emit(aten.unsqueeze.default, signal, 0)
    both = rw.emit(aten.conv1d.default, signal, rw.constant(basis.unsqueeze(1).float()), None, [hop])
    re = rw.emit(aten.slice.Tensor, both, 1, 0, bins)
    im = rw.emit(aten.slice.Tensor, both, 1, bins, 2 * bins)
    if one_signal:
        re, im = rw.emit(aten.squeeze.dim, re, 0), rw.emit(aten.squeeze.dim, im, 0)
    return re, im


def istft_weights(w: torch.Tensor, n_fft: int, bins: int, normalized: bool) -> torch.Tensor:
    """[2 x bins, 1, n_fft] filters: bin k's real and imaginary parts to a windowed frame of n_fft
    samples (irfft with its 1 / n_fft; bins past n_fft / 2 read nothing, as irfft truncates)."""
    inverse, _ = dft_weights("c2r", bins, n_fft, True, 1.0 / n_fft)        # [n_fft, 2 x bins]
    if normalized:
        inverse = inverse.double() * math.sqrt(n_fft)
    frames = inverse.double() * w.unsqueeze(1)
    return frames.t().unsqueeze(1).float()


def istft_as_transposed_conv(rw, node):
    """torch.istft(z) from z's parts: [B, L] (or [L])."""
    a = list(node.args) + [None] * 10
    z, n_fft, hop, win_length, window = a[0], int(a[1]), a[2], a[3], a[4]
    center, normalized, onesided, length = a[5], a[6], a[7], a[8]
    center = True if center is None else center
    hop = int(hop) if hop is not None else n_fft // 4
    if onesided is False or a[9]:
        rw.refuse(z, f"is the input of a two-sided or complex-valued {fft_name(node)} at {where(node)}")
    w = _window(rw, node, window, win_length, n_fft)
    shape = z.meta["val"].shape
    bins, frames = int(shape[-2]), int(shape[-1])
    full = n_fft + hop * (frames - 1)
    envelope = torch.zeros(full, dtype=torch.float64)
    for f in range(frames):
        envelope[f * hop:f * hop + n_fft] += w * w
    start = n_fft // 2 if center else 0
    end = start + int(length) if length is not None else (full - n_fft // 2 if center else full)
    kept = envelope[start:min(end, full)]
    if bool((kept.abs() < 1e-11).any()):
        rw.refuse(z, f"is the input of {fft_name(node)} at {where(node)}, whose window envelope is zero "
                     f"(torch refuses it too: the NOLA condition)")
    re, _ = rw.parts[z]
    im = rw.imag_of(z)
    one_signal = len(shape) == 2
    both = rw.emit(aten.cat.default, [re, im], -2)                          # [B, 2 x bins, frames]
    if one_signal:
        both = rw.emit(aten.unsqueeze.default, both, 0)
    weight = rw.constant(istft_weights(w, n_fft, bins, bool(normalized)))
    signal = rw.emit(aten.conv_transpose1d.default, both, weight, None, [hop])  # [B, 1, full]
    signal = rw.emit(aten.slice.Tensor, signal, -1, start, min(end, full))
    signal = rw.emit(aten.mul.Tensor, signal, rw.constant((1.0 / kept).float()))
    if end > full:
        signal = rw.emit(aten.constant_pad_nd.default, signal, [0, end - full])
    signal = rw.emit(aten.squeeze.dim, signal, -2)
    return rw.emit(aten.squeeze.dim, signal, 0) if one_signal else signal
