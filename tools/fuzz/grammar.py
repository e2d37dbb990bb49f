"""The fuzzer's model grammar: a seeded random `nn.Module` as a list of layers, rendered as Python source.

A model is a dict `{"seed": int, "input": [kind, dims...], "layers": [layer, ...]}`, plain JSON:

    input   ["image", C, H, W]   a 1 x C x H x W tensor
            ["seq", T, F]        a 1 x T x F tensor (T = 1 is one time step)
            ["tokens", T, V]     1 x T int64 ids below V, read by an nn.Embedding first

A layer is `{"op": name, ...}`; its input channels / features are not stored but read from the shape
that reaches it, so any sublist of the layers, or the same layers on a smaller input, still renders to
a valid model: a layer that cannot take the shape in front of it (a kernel larger than the padded
input, groups that do not divide the channels, ...) is left out of the rendering. That is what lets
the minimiser drop layers and shrink sizes freely. `residual` holds a body of layers (shape-keeping
for add / mul, any channels for cat).

`render(model)` gives the source of a file with `class Model`, `def model()` (the seeded module in
eval mode) and `INPUTS` (the example inputs), which the fuzzer imports by path: compile errors then
point at its lines, and the same text is the printed reproducer.
"""

from __future__ import annotations

import random

ACTIVATIONS = ("relu", "relu6", "hardtanh", "sigmoid", "tanh", "hardswish", "gelu", "silu")
ACT_EXPR = {"relu": "F.relu({})", "relu6": "F.relu6({})", "hardtanh": "F.hardtanh({}, -0.5, 1.5)",
            "sigmoid": "torch.sigmoid({})", "tanh": "torch.tanh({})", "hardswish": "F.hardswish({})",
            "gelu": "F.gelu({})", "silu": "F.silu({})"}


# The longest sequence a recurrent layer takes: each step is its own kernel call in the C, and an image
# read as 1,024 tokens in front of three LSTM layers kept the compiler busy for over 10 minutes.
MAX_STEPS = 32


class Shape:
    """What flows between layers: kind ("image" C,H,W | "seq" T,F | "vec" F) and its dims."""

    def __init__(self, kind: str, dims: tuple[int, ...]):
        self.kind, self.dims = kind, tuple(int(d) for d in dims)

    def __repr__(self):
        return f"{self.kind}{self.dims}"

    def numel(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n


class _Ctx:
    def __init__(self):
        self.init: list[str] = []
        self.fwd: list[str] = []
        self.n = 0

    def module(self, expr: str, setup: tuple[str, ...] = ()) -> str:
        name = f"l{self.n}"
        self.n += 1
        self.init.append(f"self.{name} = {expr}")
        self.init.extend(s.format(m=f"self.{name}") for s in setup)
        return f"self.{name}"

    def temp(self) -> str:
        self.n += 1
        return f"t{self.n}"


def _out(n: int) -> int:
    return max(1, int(n))


def _conv_out(size: int, k: int, s: int, p_lo: int, p_hi: int, d: int) -> int:
    eff = d * (k - 1) + 1
    if size + p_lo + p_hi < eff:
        return 0
    return (size + p_lo + p_hi - eff) // s + 1


# --- one function per op: (ctx, layer, shape) -> new shape, or None when it does not apply ---------

def _conv(ctx, L, s: Shape):
    if s.kind != "image":
        return None
    c, h, w = s.dims
    kh, kw = L["k"] if isinstance(L["k"], list) else (L["k"], L["k"])
    stride, dil = L.get("stride", 1), L.get("dilation", 1)
    groups = L.get("groups", 1)
    if groups == "dw":
        groups, out = c, c * L.get("mult", 1)
    else:
        out = c if L["out"] == "same" else _out(L["out"])
        if c % groups or out % groups:
            return None
    pad = L.get("padding", 0)
    if pad == "same":
        if stride != 1:
            return None
        ph, pw = (dil * (kh - 1)) // 2, (dil * (kw - 1)) // 2
        oh, ow = h, w
        pad_txt = "'same'"
    else:
        ph, pw = (pad, pad) if isinstance(pad, int) else pad
        oh = _conv_out(h, kh, stride, ph, ph, dil)
        ow = _conv_out(w, kw, stride, pw, pw, dil)
        pad_txt = repr(pad if isinstance(pad, int) else tuple(pad))
    if oh < 1 or ow < 1:
        return None
    k_txt = kh if kh == kw else (kh, kw)
    m = ctx.module(f"nn.Conv2d({c}, {out}, {k_txt}, stride={stride}, padding={pad_txt}, dilation={dil}, "
                   f"groups={groups}, bias={L.get('bias', True)})")
    ctx.fwd.append(f"x = {m}(x)")
    return Shape("image", (out, oh, ow))


def _padconv(ctx, L, s: Shape):
    """F.pad (left, right, top, bottom) in front of a conv it folds into: issue 35's forms."""
    if s.kind != "image":
        return None
    c, h, w = s.dims
    l, r, t, b = L["pad"]
    h2, w2 = h + t + b, w + l + r
    form, stride = L["form"], L.get("stride", 1)
    if form == "1x1":
        k, groups, out = 1, 1, _out(L["out"])
    elif form == "3x3":
        k, groups, out = 3, 1, _out(L["out"])
    else:   # dw3x3
        k, groups, out = 3, c, c
    oh, ow = _conv_out(h2, k, stride, 0, 0, 1), _conv_out(w2, k, stride, 0, 0, 1)
    if oh < 1 or ow < 1:
        return None
    m = ctx.module(f"nn.Conv2d({c}, {out}, {k}, stride={stride}, groups={groups})")
    ctx.fwd.append(f"x = {m}(F.pad(x, ({l}, {r}, {t}, {b})))")
    return Shape("image", (out, oh, ow))


def _pool(ctx, L, s: Shape):
    if s.kind != "image":
        return None
    c, h, w = s.dims
    k, stride, pad, ceil = L["k"], L.get("stride") or L["k"], L.get("padding", 0), L.get("ceil", False)
    if pad * 2 > k or h + 2 * pad < k or w + 2 * pad < k:
        return None

    def size(n):
        span = n + 2 * pad - k
        o = (-(-span // stride) if ceil else span // stride) + 1
        if ceil and (o - 1) * stride >= n + pad:
            o -= 1
        return o
    if L["kind"] == "max":
        m = ctx.module(f"nn.MaxPool2d({k}, stride={stride}, padding={pad}, ceil_mode={ceil})")
    else:
        m = ctx.module(f"nn.AvgPool2d({k}, stride={stride}, padding={pad}, ceil_mode={ceil}, "
                       f"count_include_pad={L.get('include_pad', True)})")
    ctx.fwd.append(f"x = {m}(x)")
    return Shape("image", (c, size(h), size(w)))


def _gap(ctx, L, s: Shape):
    if s.kind != "image":
        return None
    ctx.fwd.append("x = F.adaptive_avg_pool2d(x, 1)")
    return Shape("image", (s.dims[0], 1, 1))


def _act(ctx, L, s: Shape):
    ctx.fwd.append("x = " + ACT_EXPR[L["fn"]].format("x"))
    return s


def _bn(ctx, L, s: Shape):
    setup = ("{m}.running_mean.uniform_(-0.5, 0.5)", "{m}.running_var.uniform_(0.5, 2.0)",
             "{m}.weight.data.uniform_(0.5, 1.5)", "{m}.bias.data.uniform_(-0.3, 0.3)")
    if s.kind == "image":
        m = ctx.module(f"nn.BatchNorm2d({s.dims[0]})", setup)
    elif s.kind == "vec":
        m = ctx.module(f"nn.BatchNorm1d({s.dims[0]})", setup)
    else:
        return None
    ctx.fwd.append(f"x = {m}(x)")
    return s


def _layernorm(ctx, L, s: Shape):
    if s.kind == "image":   # over channels, as ConvNeXt does: channels last and back
        m = ctx.module(f"nn.LayerNorm({s.dims[0]})")
        ctx.fwd.append(f"x = {m}(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)")
    else:
        m = ctx.module(f"nn.LayerNorm({s.dims[-1]})")
        ctx.fwd.append(f"x = {m}(x)")
    return s


def _softmax(ctx, L, s: Shape):
    ctx.fwd.append(f"x = torch.softmax(x, dim={1 if s.kind == 'image' else -1})")
    return s


def _residual(ctx, L, s: Shape):
    """x (join) body(x): add / mul need the body to keep the shape, cat the spatial size."""
    if s.kind == "vec" and L["join"] == "cat":
        return None
    skip = ctx.temp()
    ctx.fwd.append(f"{skip} = x")
    t = s
    for sub in L["body"]:
        t = apply(ctx, sub, t) or t
    join = L["join"]
    if join in ("add", "mul"):
        if t.kind != s.kind or t.dims != s.dims:
            return None
        if join == "add":
            ctx.fwd.append(f"x = x + {skip}")
        else:   # a gate, as squeeze-excitation does
            ctx.fwd.append(f"x = {skip} * torch.sigmoid(x)")
        return s
    if t.kind != s.kind or t.dims[1:] != s.dims[1:] or s.kind == "vec":
        if not (s.kind == "seq" and t.kind == "seq" and t.dims[0] == s.dims[0]):
            return None
    dim = 1 if s.kind == "image" else -1
    ctx.fwd.append(f"x = torch.cat([{skip}, x], dim={dim})")
    if s.kind == "image":
        return Shape("image", (s.dims[0] + t.dims[0],) + s.dims[1:])
    return Shape("seq", (s.dims[0], s.dims[1] + t.dims[1]))


def _chunk(ctx, L, s: Shape):
    if s.kind != "image" or s.dims[0] % 2:
        return None
    a, b = ctx.temp(), ctx.temp()
    ctx.fwd.append(f"{a}, {b} = x.chunk(2, dim=1)")
    how = L["how"]
    ctx.fwd.append({"glu": f"x = {a} * torch.sigmoid({b})", "add": f"x = {a} + {b}",
                    "swap": f"x = torch.cat([{b}, {a}], dim=1)"}[how])
    c = s.dims[0] if how == "swap" else s.dims[0] // 2
    return Shape("image", (c,) + s.dims[1:])


def _slice(ctx, L, s: Shape):
    if s.kind != "image":
        return None
    c, h, w = s.dims
    c0 = min(L.get("c0", 0), c - 1)
    sh, sw = L.get("sh", 1), L.get("sw", 1)
    h0 = min(L.get("h0", 0), h - 1)
    ctx.fwd.append(f"x = x[:, {c0}:, {h0}::{sh}, ::{sw}]")
    return Shape("image", (c - c0, -(-(h - h0) // sh), -(-w // sw)))


def _interp(ctx, L, s: Shape):
    if s.kind != "image":
        return None
    c, h, w = s.dims
    mode = L["mode"]
    if "size" in L:
        oh, ow = L["size"]
        arg = f"size=({oh}, {ow})"
    else:
        f = L["scale"]
        oh, ow = int(h * f), int(w * f)     # PyTorch's floor(size x scale)
        arg = f"scale_factor={f}"
    if mode == "bilinear":
        arg += f", align_corners={L.get('align', False)}"
    ctx.fwd.append(f"x = F.interpolate(x, {arg}, mode='{mode}')")
    return Shape("image", (c, oh, ow))


def _permute(ctx, L, s: Shape):
    if s.kind == "image":
        c, h, w = s.dims
        ctx.fwd.append("x = x.permute(0, 1, 3, 2)")
        return Shape("image", (c, w, h))
    if s.kind == "seq":
        t, f = s.dims
        ctx.fwd.append("x = x.transpose(1, 2)")
        return Shape("seq", (f, t))
    return None


def _reshape(ctx, L, s: Shape):
    """Channels folded into rows (image), or an image read as a sequence of pixels / rows."""
    if s.kind == "image":
        c, h, w = s.dims
        to = L["to"]
        if to == "fold" and c % 2 == 0:
            ctx.fwd.append(f"x = x.reshape(1, {c // 2}, {h * 2}, {w})")
            return Shape("image", (c // 2, h * 2, w))
        if to == "tokens":
            ctx.fwd.append("x = x.flatten(2).transpose(1, 2)")
            return Shape("seq", (h * w, c))
        if to == "rows":
            ctx.fwd.append(f"x = x.permute(0, 2, 1, 3).reshape(1, {h}, {c * w})")
            return Shape("seq", (h, c * w))
        if to == "flatten" and c * h * w <= 512:
            ctx.fwd.append("x = x.flatten(1)")
            return Shape("vec", (c * h * w,))
        return None
    if s.kind == "seq":
        t, f = s.dims
        if L["to"] == "image":   # features as channels, time as width: a conv1d view
            ctx.fwd.append(f"x = x.transpose(1, 2).reshape(1, {f}, 1, {t})")
            return Shape("image", (f, 1, t))
        if L["to"] == "flatten" and t * f <= 512:
            ctx.fwd.append("x = x.flatten(1)")
            return Shape("vec", (t * f,))
        return None
    if s.kind == "vec" and L["to"] == "image" and s.dims[0] % 4 == 0:
        ctx.fwd.append(f"x = x.reshape(1, {s.dims[0] // 4}, 2, 2)")
        return Shape("image", (s.dims[0] // 4, 2, 2))
    return None


def _reduce(ctx, L, s: Shape):
    fn = L["fn"]
    call = {"mean": "x.mean({d}, keepdim={k})", "sum": "x.sum({d}, keepdim={k})",
            "amax": "x.amax({d}, keepdim={k})"}[fn]
    keep = L.get("keepdim", True)
    if s.kind == "image":
        dims = {"c": (1,), "hw": (2, 3), "w": (3,)}[L["over"]]
        d = dims[0] if len(dims) == 1 else dims
        ctx.fwd.append("x = " + call.format(d=d, k=keep))
        c, h, w = s.dims
        if keep:
            return Shape("image", (1 if 1 in dims else c, 1 if 2 in dims else h, 1 if 3 in dims else w))
        if dims == (2, 3):
            return Shape("vec", (c,))
        ctx.fwd[-1] = "x = " + call.format(d=d, k=True)
        return Shape("image", (1 if 1 in dims else c, h, 1 if 3 in dims else w))
    if s.kind == "seq":
        if L["over"] == "c":   # over time
            ctx.fwd.append("x = " + call.format(d=1, k=False))
            return Shape("vec", (s.dims[1],))
        ctx.fwd.append("x = " + call.format(d=-1, k=True))
        return Shape("seq", (s.dims[0], 1))
    return None


def _linear(ctx, L, s: Shape):
    if s.kind == "image":
        return None
    out = s.dims[-1] if L["out"] == "same" else _out(L["out"])
    m = ctx.module(f"nn.Linear({s.dims[-1]}, {out}, bias={L.get('bias', True)})")
    ctx.fwd.append(f"x = {m}(x)")
    return Shape(s.kind, s.dims[:-1] + (out,))


def _conv1d(ctx, L, s: Shape):
    if s.kind != "seq":
        return None
    t, f = s.dims
    k, stride, pad = L["k"], L.get("stride", 1), L.get("padding", 0)
    groups = f if L.get("dw") else 1
    out = f if L.get("dw") else _out(L["out"])
    if pad == "same":
        if stride != 1:
            return None
        o, pad_txt = t, "'same'"
    else:
        o, pad_txt = _conv_out(t, k, stride, pad, pad, 1), pad
    if o < 1:
        return None
    m = ctx.module(f"nn.Conv1d({f}, {out}, {k}, stride={stride}, padding={pad_txt}, groups={groups})")
    ctx.fwd.append(f"x = {m}(x.transpose(1, 2)).transpose(1, 2)")
    return Shape("seq", (o, out))


def _attention(ctx, L, s: Shape):
    if s.kind != "seq":
        return None
    t, f = s.dims
    heads = L.get("heads", 1)
    if f % heads:
        return None
    if L.get("impl") == "mha":
        m = ctx.module(f"nn.MultiheadAttention({f}, {heads}, batch_first=True)")
        ctx.fwd.append(f"x = {m}(x, x, x, need_weights=False)[0]")
        return s
    q, k, v = (ctx.module(f"nn.Linear({f}, {f})") for _ in range(3))
    a = ctx.temp()
    ctx.fwd.append(f"{a} = torch.softmax({q}(x) @ {k}(x).transpose(1, 2) * {1.0 / f ** 0.5:.4f}, dim=-1)")
    ctx.fwd.append(f"x = {a} @ {v}(x)")
    return s


def _rnn(ctx, L, s: Shape):
    if s.kind != "seq" or s.dims[0] > MAX_STEPS:
        return None
    cls = {"lstm": "nn.LSTM", "gru": "nn.GRU"}[L["cell"]]
    hidden = _out(L["hidden"])
    m = ctx.module(f"{cls}({s.dims[1]}, {hidden}, {L.get('layers', 1)}, batch_first=True)")
    ctx.fwd.append(f"x = {m}(x)[0]")
    return Shape("seq", (s.dims[0], hidden))


def _convt(ctx, L, s: Shape):
    """nn.ConvTranspose2d, grouped, depthwise and dilated included (lowered since issue 35's part 4)."""
    if s.kind != "image":
        return None
    c, h, w = s.dims
    k, stride, pad, dil = L["k"], L.get("stride", 1), L.get("padding", 0), L.get("dilation", 1)
    groups = L.get("groups", 1)
    if groups == "dw":
        groups, out = c, c
    else:
        out = _out(L["out"])
        if c % groups or out % groups:
            return None
    out_pad = min(L.get("output_padding", 0), max(stride, dil) - 1)
    size = [(n - 1) * stride - 2 * pad + dil * (k - 1) + out_pad + 1 for n in (h, w)]
    if min(size) < 1 or pad > dil * (k - 1):
        return None
    m = ctx.module(f"nn.ConvTranspose2d({c}, {out}, {k}, stride={stride}, padding={pad}, output_padding={out_pad}, "
                   f"groups={groups}, dilation={dil}, bias={L.get('bias', True)})")
    ctx.fwd.append(f"x = {m}(x)")
    return Shape("image", (out, size[0], size[1]))


def _adaptive(ctx, L, s: Shape):
    """Adaptive average / max pools to any size (PyTorch's uneven windows where the size does not divide)."""
    if s.kind != "image":
        return None
    oh, ow = L["size"]
    ctx.fwd.append(f"x = F.adaptive_{L['kind']}_pool2d(x, ({oh}, {ow}))")
    return Shape("image", (s.dims[0], oh, ow))


def _prelu(ctx, L, s: Shape):
    """nn.PReLU with one slope, or one per channel (dim 1: an image's channels, a vector's features)."""
    n = s.dims[0] if L.get("per_channel") and s.kind in ("image", "vec") else 1
    m = ctx.module(f"nn.PReLU({n})", ("{m}.weight.data.uniform_(-0.5, 0.5)",))
    ctx.fwd.append(f"x = {m}(x)")
    return s


_AFFINE = ("{m}.weight.data.uniform_(0.5, 1.5)", "{m}.bias.data.uniform_(-0.3, 0.3)")


def _groupnorm(ctx, L, s: Shape):
    if s.kind != "image":
        return None
    c = s.dims[0]
    groups = c if L["groups"] == "c" else L["groups"]
    if c % groups:
        return None
    m = ctx.module(f"nn.GroupNorm({groups}, {c})", _AFFINE)
    ctx.fwd.append(f"x = {m}(x)")
    return s


def _instancenorm(ctx, L, s: Shape):
    if s.kind != "image" or s.dims[1] * s.dims[2] == 1:    # torch refuses one element per channel
        return None
    affine = L.get("affine", False)
    m = ctx.module(f"nn.InstanceNorm2d({s.dims[0]}, affine={affine})", _AFFINE if affine else ())
    ctx.fwd.append(f"x = {m}(x)")
    return s


OPS = {"conv": _conv, "padconv": _padconv, "pool": _pool, "gap": _gap, "act": _act, "bn": _bn,
       "layernorm": _layernorm, "softmax": _softmax, "residual": _residual, "chunk": _chunk,
       "slice": _slice, "interp": _interp, "permute": _permute, "reshape": _reshape, "reduce": _reduce,
       "linear": _linear, "conv1d": _conv1d, "attention": _attention, "rnn": _rnn, "convt": _convt,
       "adaptive": _adaptive, "prelu": _prelu, "groupnorm": _groupnorm, "instancenorm": _instancenorm}


def apply(ctx: _Ctx, layer: dict, shape: Shape) -> Shape | None:
    """Renders one layer onto ctx, or nothing (ctx unchanged) when it does not take `shape`."""
    if shape.numel() > 4096:
        return None
    saved = (list(ctx.init), list(ctx.fwd), ctx.n)
    new = OPS[layer["op"]](ctx, layer, shape)
    if new is None or min(new.dims) < 1 or new.numel() > 4096:
        ctx.init, ctx.fwd, ctx.n = saved
        return None
    return new


def input_shape(model: dict) -> tuple[Shape, str, str]:
    """The first shape, the example-input expression and the first forward line."""
    kind, *dims = model["input"]
    if kind == "image":
        c, h, w = dims
        return Shape("image", (c, h, w)), f"(torch.randn(1, {c}, {h}, {w}),)", ""
    if kind == "seq":
        t, f = dims
        return Shape("seq", (t, f)), f"(torch.randn(1, {t}, {f}),)", ""
    t, v = dims
    return Shape("seq", (t, 8)), f"(torch.randint(0, {v}, (1, {t})),)", f"nn.Embedding({v}, 8)"


def render(model: dict) -> tuple[str, list[int]]:
    """(Python source of the model file, indices of the layers that took part)."""
    ctx = _Ctx()
    shape, inputs, embed = input_shape(model)
    if embed:
        m = ctx.module(embed)
        ctx.fwd.append(f"x = {m}(x)")
    used = []
    for i, layer in enumerate(model["layers"]):
        new = apply(ctx, layer, shape)
        if new is not None:
            shape = new
            used.append(i)
    init = "\n".join("        " + ln for ln in ctx.init) or "        pass"
    fwd = "\n".join("        " + ln for ln in ctx.fwd)
    source = f'''import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
{init}

    def forward(self, x):
{fwd}
        return x


def model():
    torch.manual_seed({model["seed"]})
    return Model().eval()


def inputs(seed=0):
    torch.manual_seed(seed)
    return {inputs}
'''
    return source, used


# --- random generation ------------------------------------------------------------------------

def _layer(rng: random.Random, kind: str, depth: int = 0) -> dict:
    ch = lambda: rng.choice([1, 2, 3, 4, 6, 8, 12, 16])  # noqa: E731
    if kind == "image":
        op = rng.choices(["conv", "padconv", "pool", "gap", "act", "bn", "layernorm", "softmax", "residual",
                          "chunk", "slice", "interp", "permute", "reshape", "reduce", "convt", "adaptive", "prelu",
                          "groupnorm", "instancenorm"],
                         [10, 4, 4, 1, 6, 2, 1, 1, 4 if depth == 0 else 0, 2, 2, 3, 1, 2, 2, 3, 2, 2, 1, 1])[0]
    elif kind == "seq":
        op = rng.choices(["linear", "act", "layernorm", "softmax", "residual", "attention", "rnn", "conv1d",
                          "permute", "reshape", "reduce", "prelu"],
                         [6, 4, 2, 1, 3 if depth == 0 else 0, 2, 3, 2, 1, 1, 2, 1])[0]
    else:
        op = rng.choices(["linear", "act", "bn", "softmax", "reshape", "prelu"], [6, 3, 1, 1, 1, 1])[0]
    if op == "conv":
        k = rng.choice([1, 1, 3, 3, 3, 5, 7, [1, 3], [3, 1], [1, 5], [5, 1], [2, 2], 2, 4, [1, 2], [4, 3]])
        groups = rng.choice([1, 1, 1, "dw", "dw", 2, 4])
        return {"op": op, "out": ch(), "k": k, "stride": rng.choice([1, 1, 1, 2, 3]),
                "dilation": rng.choice([1, 1, 1, 2]), "groups": groups, "mult": rng.choice([1, 1, 2]),
                "padding": rng.choice([0, 0, 1, 1, 2, "same", [0, 1], [1, 0], [2, 1]]), "bias": rng.random() < 0.8}
    if op == "padconv":
        pads = [rng.choice([0, 0, 1, 2]) for _ in range(4)]
        if rng.random() < 0.6:   # the forms of issue 35: more at the bottom / right
            pads[0] = pads[2] = 0
            pads[rng.choice([1, 3])] = rng.choice([1, 2])
        return {"op": op, "pad": pads, "form": rng.choice(["1x1", "1x1", "dw3x3", "dw3x3", "3x3"]),
                "out": ch(), "stride": rng.choice([1, 1, 2])}
    if op == "pool":
        k = rng.choice([2, 2, 3, 3, 5])
        return {"op": op, "kind": rng.choice(["max", "avg"]), "k": k, "stride": rng.choice([None, 1, 2, 3]),
                "padding": rng.choice([0, 0, 1]), "ceil": rng.random() < 0.4, "include_pad": rng.random() < 0.5}
    if op == "act":
        return {"op": op, "fn": rng.choice(ACTIVATIONS)}
    if op == "residual":
        join = rng.choice(["add", "add", "mul", "cat"])
        if kind == "image":
            body = [{"op": "conv", "out": ch(), "k": rng.choice([1, 3]), "padding": "same",
                     "groups": rng.choice([1, "dw"])}]
            if join != "cat":
                body[0]["out"] = "same"
        else:
            body = [{"op": "linear", "out": "same" if join != "cat" else ch()}]
        if rng.random() < 0.6:
            body.append(rng.choice([{"op": "act", "fn": rng.choice(ACTIVATIONS)}, {"op": "bn"}, {"op": "layernorm"}]))
        return {"op": op, "join": join, "body": body}
    if op == "chunk":
        return {"op": op, "how": rng.choice(["glu", "add", "swap"])}
    if op == "slice":
        return {"op": op, "c0": rng.choice([0, 0, 1]), "h0": rng.choice([0, 1]), "sh": rng.choice([1, 2, 3]),
                "sw": rng.choice([1, 2])}
    if op == "interp":
        mode = rng.choice(["nearest", "bilinear"])
        if rng.random() < 0.5:     # any size: ones the input does not divide, and smaller ones
            return {"op": op, "mode": mode, "size": [rng.choice([1, 2, 3, 5, 8, 9, 11]), rng.choice([3, 4, 6, 8, 13])],
                    "align": rng.random() < 0.5}
        scales = [2, 2, 1.5, 0.5] + ([2.5, 1.7, 0.75] if mode == "nearest" else [0.75])
        return {"op": op, "mode": mode, "scale": rng.choice(scales), "align": rng.random() < 0.5}
    if op == "convt":
        return {"op": op, "out": ch(), "k": rng.choice([1, 2, 3, 3, 4]), "stride": rng.choice([1, 2, 2, 3]),
                "padding": rng.choice([0, 0, 1]), "output_padding": rng.choice([0, 0, 1]),
                "dilation": rng.choice([1, 1, 2]), "groups": rng.choice([1, 1, 2, "dw"]), "bias": rng.random() < 0.8}
    if op == "adaptive":
        return {"op": op, "kind": rng.choice(["avg", "max"]),
                "size": [rng.choice([1, 2, 3, 5, 7]), rng.choice([1, 2, 3, 4, 6])]}
    if op == "prelu":
        return {"op": op, "per_channel": rng.random() < 0.6}
    if op == "groupnorm":
        return {"op": op, "groups": rng.choice([1, 2, 4, "c"])}
    if op == "instancenorm":
        return {"op": op, "affine": rng.random() < 0.6}
    if op == "reshape":
        if kind == "image":
            return {"op": op, "to": rng.choice(["fold", "tokens", "rows", "flatten"])}
        if kind == "seq":
            return {"op": op, "to": rng.choice(["image", "flatten"])}
        return {"op": op, "to": "image"}
    if op == "reduce":
        return {"op": op, "fn": rng.choice(["mean", "mean", "sum", "amax"]), "over": rng.choice(["c", "hw", "w"]),
                "keepdim": rng.random() < 0.6}
    if op == "linear":
        return {"op": op, "out": rng.choice([1, 4, 8, 10, 16, 24]), "bias": rng.random() < 0.85}
    if op == "conv1d":
        return {"op": op, "k": rng.choice([1, 2, 3, 4, 5]), "stride": rng.choice([1, 1, 2]),
                "padding": rng.choice([0, 1, 2, "same"]),
                "dw": rng.random() < 0.3, "out": ch()}
    if op == "attention":
        return {"op": op, "impl": rng.choice(["mha", "manual"]), "heads": rng.choice([1, 2])}
    if op == "rnn":
        return {"op": op, "cell": rng.choice(["lstm", "lstm", "gru"]), "hidden": rng.choice([4, 8, 12, 16]),
                "layers": rng.choice([1, 1, 2])}
    return {"op": op}


def generate(seed: int) -> dict:
    """A random model from `seed` (the same seed, the same model)."""
    rng = random.Random(seed)
    start = rng.choices(["image", "seq", "tokens"], [6, 3, 1])[0]
    if start == "image":
        c = rng.choice([1, 2, 3, 4, 8])
        h = rng.choice([1, 2, 5, 7, 8, 9, 12, 16])
        w = rng.choice([1, 3, 6, 8, 11, 16])
        model_input = ["image", c, h, w]
    elif start == "seq":
        model_input = ["seq", rng.choice([1, 1, 2, 5, 8, 12]), rng.choice([3, 4, 8, 10, 16])]
    else:
        model_input = ["tokens", rng.choice([1, 4, 8]), rng.choice([10, 50])]
    model = {"seed": seed, "input": model_input, "layers": []}
    shape = input_shape(model)[0]
    n = rng.choice([2, 3, 4, 5, 6, 8])
    tries = 0
    while len(model["layers"]) < n and tries < 60:
        tries += 1
        layer = _layer(rng, shape.kind)
        ctx = _Ctx()
        new = apply(ctx, layer, shape)
        if new is not None:
            model["layers"].append(layer)
            shape = new
    return model


def forms(model: dict) -> set[str]:
    """The grammar's forms a model exercises (ops, and the variants that found bugs before)."""
    used = render(model)[1]
    found = {"input-" + model["input"][0]}

    def add(layer: dict) -> None:
        op = layer["op"]
        found.add(op)
        if op == "padconv":
            found.add(f"padconv-{layer['form']}" + ("-bottom-right" if layer["pad"][1] or layer["pad"][3] else ""))
        elif op == "rnn":
            one_step = model["input"][0] == "seq" and model["input"][1] == 1
            found.add(layer["cell"] + ("-one-step" if one_step else ""))
        elif op == "pool":
            found.add(layer["kind"] + "pool" + ("-ceil" if layer.get("ceil") else ""))
        elif op == "interp":
            found.add("interp-" + layer["mode"])
            if "size" in layer or layer["scale"] != int(layer["scale"]):   # the forms once refused
                found.add(f"interp-{layer['mode']}-" + ("size" if "size" in layer else "fraction"))
        elif op == "convt":
            groups = layer.get("groups", 1)
            found.add("convt-depthwise" if groups == "dw" else "convt-grouped" if groups != 1 else "convt")
            if layer.get("dilation", 1) > 1:
                found.add("convt-dilated")
        elif op == "adaptive":
            found.add(f"adaptive-{layer['kind']}")
        elif op == "prelu":
            found.add("prelu-channel" if layer.get("per_channel") else "prelu")
        elif op == "conv1d" and layer.get("padding") == "same" and layer["k"] % 2 == 0:
            found.add("conv1d-same-even")
        elif op in ("act", "reduce"):
            found.add(layer["fn"])
        elif op == "conv":
            groups = layer.get("groups", 1)
            found.add("conv-depthwise" if groups == "dw" else "conv-grouped" if groups != 1 else "conv")
            if layer.get("dilation", 1) > 1:
                found.add("conv-dilated")
            ks = layer["k"] if isinstance(layer["k"], list) else [layer["k"]]
            if layer.get("padding") == "same" and any(layer.get("dilation", 1) * (k - 1) % 2 for k in ks):
                found.add("conv-same-even")      # PyTorch's extra row / column at the bottom / right
        elif op == "residual":
            found.add("residual-" + layer["join"])
            for sub in layer["body"]:
                add(sub)
    for i in used:
        add(model["layers"][i])
    return found


# The forms a fixed selection of models must exercise: the regressions of issue 35 and the one-step LSTM.
REGRESSION_FORMS = ("padconv-1x1-bottom-right", "padconv-dw3x3-bottom-right", "lstm-one-step")


def covering_seeds(search: int = 4000, max_layers: int = 6) -> list[int]:
    """A few small models that together exercise every form the first `search` seeds do, the
    regression forms first (greedy set cover; the same list for the same grammar)."""
    candidates = []
    for seed in range(search):
        model = generate(seed)
        n = len(render(model)[1])
        if 2 <= n <= max_layers:
            candidates.append((seed, forms(model)))
    wanted = set().union(*(f for _, f in candidates))
    chosen, covered = [], set()
    for form in REGRESSION_FORMS:
        seed, found = max(((s, f) for s, f in candidates if form in f), key=lambda c: (len(c[1] - covered), -c[0]))
        if seed not in chosen:
            chosen.append(seed)
            covered |= found
    while covered != wanted:
        seed, found = max(candidates, key=lambda c: (len(c[1] - covered), -c[0]))
        chosen.append(seed)
        covered |= found
    return chosen


def output_shape(model: dict) -> tuple[int, ...]:
    """The shape of the rendered model's output, as the grammar predicts it (batch first)."""
    ctx = _Ctx()
    shape = input_shape(model)[0]
    for layer in model["layers"]:
        shape = apply(ctx, layer, shape) or shape
    return (1,) + shape.dims
