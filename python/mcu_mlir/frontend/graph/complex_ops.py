"""Complex tensors and FFTs rewritten into real ops before quantization.

A complex value of the exported graph becomes a pair of real tensors (its real and imaginary parts),
and every op on it an op on the parts: a DFT of a fixed length along one axis is a product with a
constant matrix (a linear layer, CMSIS-NN's fully connected kernel, the parts of a complex input
concatenated along the transformed axis), torch.stft a strided conv1d over the windowed cos / -sin
basis, torch.istft a transposed conv1d (the inverse DFT, the window and the overlap-add in one set of
filters) and a constant multiply by the inverse window envelope; views, pads and concatenations apply
to both parts, a complex product is four real ones, |z| the integer hypot. view_as_real stacks the
parts, view_as_complex selects them. The complex tensor never exists after this, and the parts a
model never reads (FNet keeps only the real part of its 2-D FFT) are dead code. An op on a complex
value that has no such form is refused, naming the FFT that made the value and the user's line.
"""

from __future__ import annotations

import contextlib

import torch

from ...diagnostics import UserError
from .composite_ops import _set_fake_value
from .dft import FFT_FUNCTIONS, FFT_PRIMITIVES, dft_weights, fft_name, fft_plan, norm_scale, primitive_plan, where
from .nodes import describe, fetch_attr
from .stft_istft import istft_as_transposed_conv, stft_as_conv

aten = torch.ops.aten

# Ops that move or select elements: on a complex tensor, the same op on each part.
_STRUCTURAL = {aten.view.default, aten.reshape.default, aten._unsafe_view.default, aten.permute.default,
               aten.transpose.int, aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims,
               aten.squeeze.default, aten.slice.Tensor, aten.select.int, aten.clone.default,
               aten.contiguous.default, aten.alias.default, aten.expand.default, aten.flatten.using_ints,
               aten.narrow.default, aten.movedim.int, aten.flip.default, aten.roll.default, aten.t.default,
               aten.unflatten.int, aten.repeat.default, aten.detach.default, aten.lift_fresh_copy.default}
_PADS = {aten.pad.default, aten.constant_pad_nd.default}
# Ops that make a complex value from real ones.
_MAKERS = {*FFT_FUNCTIONS, *FFT_PRIMITIVES, aten.stft.default, aten.stft.center, aten.istft.default,
           aten.view_as_complex.default, aten.complex.default}
_CONJUGATES = {aten.conj.default, aten._conj.default, aten.conj_physical.default, aten.resolve_conj.default,
               aten.resolve_neg.default}

def _is_complex(arg) -> bool:
    val = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.is_complex()


class _Rewrite:
    """One walk over the graph: each complex node mapped to its (real, imaginary) part nodes (the
    imaginary part None where it is zero), each real result of a complex op put in its place."""

    def __init__(self, gm, hypot: bool):
        self.gm, self.graph, self.hypot = gm, gm.graph, hypot
        self.parts: dict = {}
        self.origin: dict = {}          # complex node -> the op that made its value complex
        self.replaced: list = []
        vals = [n.meta.get("val") for n in gm.graph.nodes]
        self.fake_mode = next((v.fake_mode for v in vals if hasattr(v, "fake_mode")), None)
        self.at = None

    # building
    def emit(self, target, *args, **kwargs):
        with self.graph.inserting_before(self.at):
            new = self.graph.call_function(target, args, kwargs)
        new.meta.update({k: self.at.meta[k] for k in ("stack_trace", "nn_module_stack") if k in self.at.meta})
        _set_fake_value(new, self.fake_mode)
        return new

    def constant(self, value: torch.Tensor):
        name = f"_mcu_dft_{len([b for b in self.gm._buffers if b.startswith('_mcu_dft_')])}"
        self.gm.register_buffer(name, value.detach().contiguous())
        with self.graph.inserting_before(self.at):
            attr = self.graph.get_attr(name)
        fake = self.fake_mode
        attr.meta["val"] = fake.from_tensor(getattr(self.gm, name), static_shapes=True) if fake else value
        return attr

    def refuse(self, node, what: str):
        source = self.origin.get(node, node)
        raise UserError(f"{fft_name(source)} at {where(source)}: its complex result {what}")

    # the walk
    def run(self) -> bool:
        for node in list(self.graph.nodes):
            if node.op == "output":
                self._check_outputs(node)
                continue
            if node.op != "call_function":
                continue
            reads_complex = any(a in self.parts for a in node.all_input_nodes)
            # an FFT, or real values with a complex Python number (x * 1j, torch.complex(re, im))
            makes = node.target in _MAKERS or _is_complex(node) and node.target in _COMPLEX_HANDLERS
            if not (reads_complex or makes):
                if any(_is_complex(a) for a in node.all_input_nodes) or (_is_complex(node) and node.all_input_nodes):
                    raise UserError(f"{describe(node)}: complex values are computed in real and imaginary parts "
                                    f"only from torch.fft, torch.stft, view_as_complex and torch.complex")
                continue
            self.at = node
            result = self._rewrite(node)
            if isinstance(result, tuple):
                self.parts[node] = result
                self.origin[node] = self._origin_of(node)
            else:
                node.replace_all_uses_with(result)
            self.replaced.append(node)
        if not self.replaced:
            return False
        for node in reversed(self.replaced):
            self.graph.erase_node(node)
        self.graph.eliminate_dead_code()
        self.gm.recompile()
        return True

    def _origin_of(self, node):
        for a in node.all_input_nodes:
            if a in self.origin:
                return self.origin[a]
        return node

    def _check_outputs(self, output):
        for a in output.all_input_nodes:
            if a in self.parts:
                self.refuse(a, "is a model output: return torch.view_as_real(z), z.real, z.imag or z.abs() "
                               "(a complex tensor has no int8 form)")

    def _rewrite(self, node):
        t = node.target
        if t in FFT_FUNCTIONS or t in FFT_PRIMITIVES:
            return self._fft(node)
        if t in (aten.stft.default, aten.stft.center):
            return self._stft(node)
        if t is aten.istft.default:
            return self._istft(node)
        if t is aten.view_as_complex.default:
            x = node.args[0]
            return self.emit(aten.select.int, x, -1, 0), self.emit(aten.select.int, x, -1, 1)
        if t is aten.complex.default:
            return node.args[0], node.args[1]
        handler = _COMPLEX_HANDLERS.get(t)
        if handler is not None:
            return handler(self, node)
        if t in _STRUCTURAL and node.args[0] in self.parts and not any(
                a in self.parts for a in node.all_input_nodes[1:]):
            return self._each_part(node)
        self.refuse(self._complex_arg(node), f"is read by {describe(node)}, which has no form on real and imaginary "
                                             f"parts here (supported: views, pads, cat / stack, fftshift, +, -, *, "
                                             f"/ by a real, conj, real / imag, abs, view_as_real, torch.fft, istft)")

    def _complex_arg(self, node):
        return next(a for a in node.all_input_nodes if a in self.parts)

    def _each_part(self, node):
        re, im = self.parts[node.args[0]]
        rest, kwargs = node.args[1:], dict(node.kwargs)
        return (self.emit(node.target, re, *rest, **kwargs),
                None if im is None else self.emit(node.target, im, *rest, **kwargs))

    def imag_of(self, value):
        """The imaginary part node of a complex value (zeros where it is known to be zero)."""
        re, im = self.parts[value]
        return im if im is not None else self.emit(aten.zeros_like.default, re)

    # transforms
    def _fft(self, node):
        x = node.args[0]
        plan = fft_plan(node) if node.target in FFT_FUNCTIONS else primitive_plan(node)
        value = self.parts.get(x, (x, None))
        if plan[0][0] == "r2c" and value[1] is not None:
            self.refuse(x, f"is the input of {fft_name(node)} at {where(node)}, which takes a real tensor")
        for kind, dim, n, norm in plan:
            value = self._dft(value, kind, dim, n, norm)
        return value[0] if plan[-1][0] == "c2r" else value      # irfft's result is real

    def _dft(self, value, kind, dim, n, norm):
        """One 1-D transform along `dim` of (re, im or None): a linear layer over the axis (moved
        last), the parts concatenated along it when the input is complex."""
        re, im = value
        rank = re.meta["val"].dim()
        length = int(re.meta["val"].shape[dim])
        if n is None:
            n = 2 * (length - 1) if kind == "c2r" else length
        if kind == "c2r" and im is None:
            im = self.emit(aten.zeros_like.default, re)
        forward = kind in ("c2c", "r2c")
        w_re, w_im = dft_weights(kind, length, int(n), im is not None, norm_scale(norm, int(n), forward))

        def last(v):
            return v if dim == rank - 1 else self.emit(aten.transpose.int, v, dim, rank - 1)
        x = last(re) if im is None else self.emit(aten.cat.default, [last(re), last(im)], -1)

        def back(v):
            return v if dim == rank - 1 else self.emit(aten.transpose.int, v, dim, rank - 1)
        out_re = back(self.emit(aten.linear.default, x, self.constant(w_re)))
        if kind == "c2r":
            return out_re, None
        return out_re, back(self.emit(aten.linear.default, x, self.constant(w_im)))

    def _stft(self, node):
        return stft_as_conv(self, node)

    def _istft(self, node):
        return istft_as_transposed_conv(self, node)

    def constant_value(self, node):
        """The value of an argument computed from constants only (a window made with torch.hann_window
        in the forward), else None."""
        if node is None or isinstance(node, torch.Tensor):
            return node
        if not isinstance(node, torch.fx.Node):
            return None
        if node.op == "get_attr":
            return fetch_attr(self.gm, node.target).detach()
        if node.op != "call_function" or any(a.op == "placeholder" for a in node.all_input_nodes):
            return None
        args = [self.constant_value(a) if isinstance(a, torch.fx.Node) else a for a in node.args]
        if any(v is None for v, a in zip(args, node.args) if isinstance(a, torch.fx.Node)):
            return None
        with contextlib.suppress(Exception):
            return node.target(*args, **node.kwargs)
        return None


def _real(rw, node):
    return rw.parts[node.args[0]][0]


def _imag(rw, node):
    return rw.imag_of(node.args[0])


def _view_as_real(rw, node):
    re, _ = rw.parts[node.args[0]]
    return rw.emit(aten.stack.default, [re, rw.imag_of(node.args[0])], -1)


def _abs(rw, node):
    re, im = rw.parts[node.args[0]]
    if im is None:
        return rw.emit(aten.abs.default, re)
    if rw.hypot:
        return rw.emit(aten.hypot.default, re, im)
    squares = rw.emit(aten.add.Tensor, rw.emit(aten.mul.Tensor, re, re), rw.emit(aten.mul.Tensor, im, im))
    return rw.emit(aten.sqrt.default, squares)


def _conjugate(rw, node):
    re, im = rw.parts[node.args[0]]
    return re, None if im is None else rw.emit(aten.neg.default, im)


def _neg(rw, node):
    re, im = rw.parts[node.args[0]]
    return rw.emit(aten.neg.default, re), None if im is None else rw.emit(aten.neg.default, im)


def _parts_of(rw, value):
    """(re, im) of a complex node, a real node or a Python number; a zero part is None or 0."""
    if value in rw.parts:
        return rw.parts[value]
    if isinstance(value, complex):
        return value.real, value.imag
    return value, None


def _zero(v) -> bool:
    return v is None or (isinstance(v, (int, float)) and v == 0)


def _mul(rw, node):
    a, b = node.args[:2]
    for v in (a, b):
        if isinstance(v, torch.fx.Node) and v not in rw.parts and _is_complex(v):
            rw.refuse(rw._complex_arg(node), f"is multiplied at {where(node)} by a complex value not computed in parts")
    (ar, ai), (br, bi) = _parts_of(rw, a), _parts_of(rw, b)
    re = _combine(rw, _times(rw, ar, br), _times(rw, ai, bi), -1)
    im = _combine(rw, _times(rw, ar, bi), _times(rw, ai, br), +1)
    if re is None:
        re = rw.emit(aten.zeros_like.default, next(v for v in (a, b) if isinstance(v, torch.fx.Node)))
    return re, im


def _times(rw, x, y):
    """x * y of parts (nodes or numbers), None when it is zero."""
    if _zero(x) or _zero(y):
        return None
    if not isinstance(x, torch.fx.Node):
        x, y = y, x
    return x if isinstance(y, (int, float)) and y == 1 else rw.emit(aten.mul.Tensor, x, y)


def _combine(rw, x, y, sign):
    """x + sign * y of part nodes, None when both are zero."""
    if x is None:
        return y if y is None or sign > 0 else rw.emit(aten.neg.default, y)
    if y is None:
        return x
    return rw.emit(aten.add.Tensor if sign > 0 else aten.sub.Tensor, x, y)


def _div(rw, node):
    a, b = node.args[:2]
    by_complex = b in rw.parts or isinstance(b, complex) or (isinstance(b, torch.fx.Node) and _is_complex(b))
    if a not in rw.parts or by_complex:
        rw.refuse(rw._complex_arg(node), f"is divided at {where(node)}: only a division by a real value is rewritten")
    re, im = rw.parts[a]
    return rw.emit(node.target, re, b), None if im is None else rw.emit(node.target, im, b)


def _add_sub(rw, node):
    a, b = node.args[:2]
    if node.kwargs.get("alpha", 1) != 1:
        rw.refuse(rw._complex_arg(node), f"is added with alpha at {where(node)}")
    sign = 1 if node.target is aten.add.Tensor else -1
    (ar, ai), (br, bi) = _parts_of(rw, a), _parts_of(rw, b)

    def part(x, y):
        if _zero(x):
            return None if _zero(y) else (y if sign > 0 else (rw.emit(aten.neg.default, y)
                                                             if isinstance(y, torch.fx.Node) else -y))
        return x if _zero(y) else rw.emit(node.target, x, y)
    re, im = part(ar, br), part(ai, bi)
    if not isinstance(re, torch.fx.Node) or (im is not None and not isinstance(im, torch.fx.Node)):
        rw.refuse(rw._complex_arg(node), f"is added to a constant at {where(node)}")
    return re, im


def _pad(rw, node):
    """A pad: both parts padded, the imaginary one with 0 (a complex pad value has no such form)."""
    re, im = rw.parts[node.args[0]]
    args, kwargs = list(node.args[1:]), dict(node.kwargs)
    new_re = rw.emit(node.target, re, *args, **kwargs)
    if im is None:
        return new_re, None
    value_at = 2 if node.target is aten.pad.default else 1
    if len(args) > value_at:
        args[value_at] = 0.0
    if "value" in kwargs:
        kwargs["value"] = 0.0
    return new_re, rw.emit(node.target, im, *args, **kwargs)


def _concatenate(rw, node):
    """cat / stack of complex tensors (a real one among them has a zero imaginary part)."""
    tensors = node.args[0]
    res = [rw.parts[t][0] if t in rw.parts else t for t in tensors]
    ims = [rw.imag_of(t) if t in rw.parts else rw.emit(aten.zeros_like.default, t) for t in tensors]
    rest = node.args[1:]
    return rw.emit(node.target, res, *rest), rw.emit(node.target, ims, *rest)


def _rolled(rw, x, shift: int, dim: int):
    """torch.roll(x, shift, dim) as two slices and a concat: out[i] = x[(i - shift) mod n]."""
    n = int(x.meta["val"].shape[dim])
    cut = (n - shift) % n
    if cut == 0:
        return x
    return rw.emit(aten.cat.default, [rw.emit(aten.slice.Tensor, x, dim, cut, n),
                                      rw.emit(aten.slice.Tensor, x, dim, 0, cut)], dim)


def _shift(rw, node):
    """fftshift / ifftshift (zero frequency to the middle and back): each part rolled along each dim."""
    x = node.args[0]
    rank = rw.parts[x][0].meta["val"].dim()
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    dims = list(range(rank)) if dims is None else ([dims] if isinstance(dims, int) else list(dims))
    out = []
    for part in rw.parts[x]:
        for d in dims:
            if part is not None:
                n = int(part.meta["val"].shape[d])
                shift = n // 2 if node.target is aten.fft_fftshift.default else -(n // 2)
                part = _rolled(rw, part, shift, d % rank)
        out.append(part)
    return tuple(out)


_COMPLEX_HANDLERS = {
    aten.fft_fftshift.default: _shift, aten.fft_ifftshift.default: _shift,
    aten.real.default: _real, aten.imag.default: _imag, aten.view_as_real.default: _view_as_real,
    aten.abs.default: _abs, aten.neg.default: _neg, aten.mul.Tensor: _mul, aten.mul.Scalar: _mul,
    aten.div.Tensor: _div, aten.div.Scalar: _div, aten.add.Tensor: _add_sub, aten.sub.Tensor: _add_sub,
    aten.cat.default: _concatenate, aten.stack.default: _concatenate,
    **{op: _conjugate for op in _CONJUGATES}, **{op: _pad for op in _PADS},
}


def complex_as_real_parts(gm: torch.fx.GraphModule, hypot: bool = True) -> bool:
    """Every complex value of `gm` as its real and imaginary parts (module docstring); whether the
    graph changed. Raises UserError for a complex op with no such form, naming the FFT. hypot: |z|
    as aten.hypot (the integer kernel), else as sqrt(re * re + im * im) (the float path's)."""
    return _Rewrite(gm, hypot).run()
