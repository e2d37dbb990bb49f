"""The DFT as constant matrices: the weights of a transform of a fixed length along one axis, and
the 1-D transforms a torch.fft op is made of (complex_ops rewrites the graph with them)."""

from __future__ import annotations

import math

import torch

from .nodes import node_location

aten = torch.ops.aten

# torch.fft's functions: (kind, how its arguments read); kinds "c2c", "c2c_inverse", "r2c", "c2r".
FFT_FUNCTIONS = {
    aten.fft_fft.default: ("c2c", "1d"), aten.fft_ifft.default: ("c2c_inverse", "1d"),
    aten.fft_rfft.default: ("r2c", "1d"), aten.fft_irfft.default: ("c2r", "1d"),
    aten.fft_fft2.default: ("c2c", "2d"), aten.fft_ifft2.default: ("c2c_inverse", "2d"),
    aten.fft_rfft2.default: ("r2c", "2d"), aten.fft_irfft2.default: ("c2r", "2d"),
    aten.fft_fftn.default: ("c2c", "nd"), aten.fft_ifftn.default: ("c2c_inverse", "nd"),
    aten.fft_rfftn.default: ("r2c", "nd"), aten.fft_irfftn.default: ("c2r", "nd"),
}
FFT_PRIMITIVES = {aten._fft_r2c.default, aten._fft_c2c.default, aten._fft_c2r.default}
_NAMES = {aten.stft.default: "torch.stft", aten.istft.default: "torch.istft",
          aten.view_as_complex.default: "torch.view_as_complex", aten.complex.default: "torch.complex",
          aten._fft_r2c.default: "torch.fft (r2c)", aten._fft_c2c.default: "torch.fft (c2c)",
          aten._fft_c2r.default: "torch.fft (c2r)",
          **{op: "torch.fft." + str(op).split(".")[1].removeprefix("fft_") for op in FFT_FUNCTIONS}}


def fft_name(node) -> str:
    """How the user wrote the op that made a complex value: 'torch.fft.rfft', 'torch.stft'."""
    return _NAMES.get(node.target, str(node.target))


def where(node) -> str:
    file, line, _ = node_location(node)
    return f"{file}:{line}" if file else "an unknown source line"


def norm_scale(norm, n: int, forward: bool) -> float:
    """The factor torch.fft's `norm` applies to a transform of length n (a primitive's int too)."""
    if isinstance(norm, int):
        return (1.0, 1 / math.sqrt(n), 1.0 / n)[norm]
    if norm in (None, "backward"):
        return 1.0 if forward else 1.0 / n
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1.0 / n if forward else 1.0


def stft_basis(window: torch.Tensor, n_fft: int, bins: int, normalized: bool) -> torch.Tensor:
    """[2 x bins, n_fft] float64 filters of an stft: the window (n_fft samples) times cos, then
    times -sin, of each bin; divided by sqrt(n_fft) when `normalized`."""
    t = torch.arange(n_fft, dtype=torch.float64)
    k = torch.arange(bins, dtype=torch.float64).unsqueeze(1)
    angle = 2 * math.pi * k * t / n_fft
    basis = torch.cat([torch.cos(angle) * window, -torch.sin(angle) * window])
    return basis / math.sqrt(n_fft) if normalized else basis


def dft_weights(kind: str, length: int, n: int, complex_input: bool, scale: float) -> tuple:
    """(weight of the real part, weight of the imaginary part or None) of a DFT of `n` points along an
    axis of `length` elements (columns past n read nothing: torch truncates; an axis shorter than n
    is zero-padded: no column), as linear-layer weights [out, in]; a complex input is [re, im] along
    the axis (2 x length columns). kind: c2c, c2c_inverse, r2c (bins 0..n/2) or c2r (n real samples
    from bins 0..n/2, the rest implied by symmetry)."""
    f64 = torch.float64
    if kind == "c2r":
        used = min(length, n // 2 + 1)
        k = torch.arange(used, dtype=f64)
        t = torch.arange(n, dtype=f64).unsqueeze(1)
        angle = 2 * math.pi * t * k / n                                     # [n, used]
        twice = torch.full((used,), 2.0, dtype=f64)
        twice[0] = 1.0
        if n % 2 == 0 and used > n // 2:
            twice[n // 2] = 1.0
        re, im = torch.zeros(n, length, dtype=f64), torch.zeros(n, length, dtype=f64)
        re[:, :used], im[:, :used] = torch.cos(angle) * twice, -torch.sin(angle) * twice
        return (torch.cat([re, im], 1) * scale).float(), None
    bins = n // 2 + 1 if kind == "r2c" else n
    k = torch.arange(bins, dtype=f64).unsqueeze(1)
    t = torch.arange(length, dtype=f64)
    angle = 2 * math.pi * k * t / n                                         # [bins, length]
    keep = (t < n).to(f64)
    cos, sin = torch.cos(angle) * keep * scale, torch.sin(angle) * keep * scale
    if kind == "c2c_inverse":
        sin = -sin
    if not complex_input:
        return cos.float(), (-sin).float()
    return torch.cat([cos, sin], 1).float(), torch.cat([-sin, cos], 1).float()


def fft_plan(node) -> list[tuple[str, int, int | None, object]]:
    """The 1-D transforms a torch.fft op makes, in order: (kind, dim, n or None, norm)."""
    a = list(node.args) + [None] * 4
    x = node.args[0].meta["val"]
    kind, form = FFT_FUNCTIONS[node.target]
    norm = node.kwargs.get("norm", a[3])
    if form == "1d":
        n, dim = node.kwargs.get("n", a[1]), node.kwargs.get("dim", a[2] if a[2] is not None else -1)
        return [(kind, dim % x.dim(), n, norm)]
    s, dims = node.kwargs.get("s", a[1]), node.kwargs.get("dim", a[2])
    if dims is None:
        dims = [-2, -1] if form == "2d" else (list(range(-len(s), 0)) if s is not None else list(range(x.dim())))
    dims = [d % x.dim() for d in dims]
    sizes = list(s) if s is not None else [None] * len(dims)
    return _multi_dim_plan(kind, dims, sizes, norm)


def _multi_dim_plan(kind, dims, sizes, norm):
    """An n-D transform as 1-D ones: r2c's one-sided axis (the last) first, c2r's last."""
    if kind == "r2c":
        return [("r2c", dims[-1], sizes[-1], norm)] + [("c2c", d, n, norm) for d, n in zip(dims[:-1], sizes[:-1])]
    if kind == "c2r":
        return [("c2c_inverse", d, n, norm) for d, n in zip(dims[:-1], sizes[:-1])] + \
            [("c2r", dims[-1], sizes[-1], norm)]
    return [(kind, d, n, norm) for d, n in zip(dims, sizes)]


def primitive_plan(node):
    """aten._fft_r2c / _fft_c2c / _fft_c2r (what torch.fft decomposes into) as 1-D transforms."""
    x = node.args[0].meta["val"]
    dims, normalization = [d % x.dim() for d in node.args[1]], int(node.args[2])
    if node.target is aten._fft_r2c.default:
        if not node.args[3]:
            return [("c2c", d, None, normalization) for d in dims]
        return _multi_dim_plan("r2c", dims, [None] * len(dims), normalization)
    if node.target is aten._fft_c2c.default:
        return [("c2c" if node.args[3] else "c2c_inverse", d, None, normalization) for d in dims]
    return _multi_dim_plan("c2r", dims, [None] * (len(dims) - 1) + [int(node.args[3])], normalization)
