"""QDQ legalisation: a PT2E-converted FX graph -> integer TOSA (MLIR text).

The converted graph says what every integer means: `quantize_per_tensor(x, scale, zp)` nodes fix
the parameters of each activation, `dequantize_per_channel` of int8 constants gives the weights.
This walks it once, in order, tracking for every node one of:

  Q       an integer tensor already in the TOSA being written (with its scale / zero point);
  DQ      the float view of a Q (the output of a dequantize);
  Const   a constant (integer with scales, or float);
  Pending a float op not yet lowered: it becomes integer ops when a quantize of it is reached,
          because only then the output parameters are known (conv -> rescale -> clamp as a unit).

Ops that commute with dequantisation (reshape, permute, slicing, max pool, nearest upsample, ...)
run directly on the integers. Any elementwise function of one int8 tensor becomes a 256-entry
TABLE computed with the PyTorch op itself, so it equals the PT2E model exactly.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field

import numpy as np
import torch

from ..diagnostics import UserError
from .qmath import quantize_multiplier, quantize_multiplier_16
from .tosa_text import TosaWriter, Value, escape

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed

_ELEM = {torch.int8: "i8", torch.int16: "i16", torch.int32: "i32"}
_RANGE = {"i8": (-128, 127), "i16": (-32768, 32767)}


@dataclass
class Q:
    v: Value
    scale: float
    zp: int

    @property
    def shape(self):
        return self.v.shape

    @property
    def elem(self):
        return self.v.elem


@dataclass
class DQ:
    q: Q


@dataclass
class Const:
    data: np.ndarray                  # integers when quantized, floats otherwise
    scales: np.ndarray | None = None  # per channel (or one) when quantized
    zps: np.ndarray | None = None
    axis: int = 0
    elem: str | None = None


@dataclass
class FloatInput:
    index: int
    shape: tuple
    q: Q | None = None


@dataclass
class Pending:
    node: torch.fx.Node


@dataclass
class Tup:
    items: list


@dataclass
class Clamp:
    lo: float | None
    hi: float | None


@dataclass
class LoweringResult:
    text: str
    inputs: list            # (shape, elem, scale, zp) per graph input
    outputs: list
    layers: list = field(default_factory=list)


PASS_RESHAPES = {aten.view.default, aten.reshape.default, aten._unsafe_view.default,
                 aten.flatten.using_ints, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
                 aten.unsqueeze.default, aten.clone.default, aten.contiguous.default,
                 aten.alias.default, aten.detach.default, aten.dropout.default,
                 aten.view_copy.default, aten.lift_fresh_copy.default}


def _source_node(node):
    """The op whose value a PT2E (de)quantize node carries (itself for any other node): its source
    line and module, and for a layer outside any module its op ('sigmoid', 'add')."""
    while not node.meta.get("nn_module_stack") and "quantize" in str(getattr(node, "target", "")) \
            and node.args and isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "call_function":
        node = node.args[0]
    return node


def node_location(node) -> tuple[str | None, int | None, str]:
    """(file, line, module path) of the PyTorch source of an FX node."""
    # (De)quantize nodes that PT2E inserted have no source of their own: they belong to the layer
    # whose value they carry, so the layer is named after the module (e.g. 'features.3.conv').
    node = _source_node(node)
    trace = node.meta.get("stack_trace") or ""
    found = re.findall(r'File "([^"]+)", line (\d+)', trace)
    user = [f for f in found if "/torch/" not in f[0] and "/torchao/" not in f[0]]
    pick = (user or found)[-1] if found else None
    file, line = (pick[0], int(pick[1])) if pick else (None, None)
    stack = node.meta.get("nn_module_stack") or {}
    path = ""
    if stack:
        path = list(stack.values())[-1][0]
        path = re.sub(r"^L\['self'\]\.?", "", path)
        path = re.sub(r"\._modules\['([^']+)'\]", r".\1", path)
        path = path.replace("L['self']", "")
    return file, line, path


def describe(node) -> str:
    file, line, path = node_location(node)
    where = f"{file}:{line}" if file else "unknown source line"
    layer = f"module '{path}'" if path else "the top-level module"
    return f"op '{_op_name(node)}' at {where} in {layer}"


def _op_name(node) -> str:
    t = node.target
    return getattr(t, "__name__", str(t)) if not hasattr(t, "_schema") else str(t).replace(".default", "")


def _shape(node) -> tuple:
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        for d in val.shape:
            if not isinstance(d, int):
                raise UserError(f"dynamic dimension {d} in {describe(node)}: mcu-mlir needs static shapes")
        return tuple(int(d) for d in val.shape)
    raise UserError(f"{describe(node)} does not produce one tensor")


class Lowering:
    def __init__(self, gm: torch.fx.GraphModule, activations: str):
        self.gm = gm
        self.w = TosaWriter()
        self.values: dict = {}
        self.inputs: list[FloatInput] = []
        self.layers: list[dict] = []
        self.act = "i16" if activations == "int16" else "i8"

    # -- driver ------------------------------------------------------------------------------
    def run(self) -> LoweringResult:
        outputs = None
        for node in self.gm.graph.nodes:
            self.node = node
            file, line, path = node_location(node)
            name = path or _source_node(node).name
            self.w.loc = (f'loc("{escape(name)}"("{escape(file)}":{line}:0))' if file
                          else f'loc("{escape(name)}")')
            if node.op == "placeholder":
                val = node.meta.get("val")
                if not isinstance(val, torch.Tensor):
                    raise UserError(f"graph input '{node.name}' is not a tensor")
                if not val.dtype.is_floating_point:
                    raise UserError(f"graph input '{node.name}' has dtype {val.dtype}: quantized models "
                                    "take float inputs (quantized at the boundary)")
                fi = FloatInput(len(self.inputs), _shape(node))
                self.inputs.append(fi)
                self.values[node] = fi
            elif node.op == "get_attr":
                self.values[node] = Const(_to_numpy(_fetch_attr(self.gm, node.target)))
            elif node.op == "call_module":
                if node.target.startswith("_guards"):
                    continue
                raise UserError(f"unexpected module call '{node.target}' in the exported graph")
            elif node.op == "call_function":
                self.values[node] = self.visit(node)
            elif node.op == "output":
                outputs = node.args[0]
        results, out_info = [], []
        import torch.utils._pytree as pytree
        for out in pytree.tree_leaves(outputs):
            v = self.values.get(out)
            if isinstance(v, DQ):
                q = v.q
            elif isinstance(v, Q):
                q = v
            else:
                raise UserError(f"model output '{getattr(out, 'name', out)}' is not quantized "
                                f"({describe(out) if isinstance(out, torch.fx.Node) else ''}): "
                                "the quantizer left a float op at the output")
            results.append(q.v)
            out_info.append((q.shape, q.elem, q.scale, q.zp))
        args, in_info = [], []
        for fi in self.inputs:
            if fi.q is None:   # unused input: still part of the signature
                fi.q = Q(Value(f"%arg{fi.index}", fi.shape, self.act), 1.0, 0)
            args.append(fi.q.v)
            in_info.append((fi.shape, fi.q.elem, fi.q.scale, fi.q.zp))
        return LoweringResult(self.w.text(args, results), in_info, out_info, self.layers)

    # -- one node ----------------------------------------------------------------------------
    def visit(self, node):
        t = node.target
        args = node.args
        if t == qd.quantize_per_tensor.default:
            x, scale, zp, _, _, dtype = args[:6]
            return self.quantize(self.values[x], float(scale), int(zp), _ELEM[dtype])
        if t == qd.dequantize_per_tensor.default:
            x, scale, zp, _, _, dtype = args[:6]
            v = self.values[x]
            if isinstance(v, Q):
                if (v.scale, v.zp) != (float(scale), int(zp)):
                    v = self.requantize(v, float(scale), int(zp))
                return DQ(v)
            if isinstance(v, Const):
                return Const(v.data, np.array([float(scale)]), np.array([int(zp)]), 0, _ELEM[dtype])
            raise UserError(f"unexpected dequantize input in {describe(node)}")
        if t == qd.dequantize_per_channel.default:
            x, scales, zps, axis, _, _, dtype = args[:7]
            v = self.values[x]
            return Const(v.data, self.values[scales].data.astype(np.float64).reshape(-1),
                         self.values[zps].data.astype(np.int64).reshape(-1), int(axis), _ELEM[dtype])
        if t == qd.quantize_per_channel.default:
            x, scales, zps, axis, qmin, qmax, dtype = args[:7]
            v = self.values[x]
            s = self.values[scales].data.reshape(-1)
            z = self.values[zps].data.reshape(-1)
            shape = [1] * v.data.ndim
            shape[int(axis)] = -1
            q = np.clip(np.round(v.data / s.reshape(shape)) + z.reshape(shape), qmin, qmax)
            return Const(q.astype(np.int64))
        if t is operator.getitem:
            v = self.values[args[0]]
            if isinstance(v, Tup):
                return v.items[args[1]]
            return Pending(node)
        ins = [self.values.get(a) if isinstance(a, torch.fx.Node) else a for a in args]
        folded = self._fold_constant(node)
        if folded is not None:
            return folded
        if t in PASS_RESHAPES and isinstance(ins[0], DQ):
            return DQ(self.pass_reshape(ins[0].q, _shape(node)))
        handler = _EAGER.get(t)
        # cat's first argument is the list of inputs; _eager_cat checks them itself.
        if handler is not None and (isinstance(ins[0], DQ) or t in (aten.cat.default, aten.concat.default)):
            out = handler(self, node, ins)
            if out is not None:
                return out
        return Pending(node)

    def _fold_constant(self, node):
        """Ops whose inputs are all float constants (zeros, arange, ...) are evaluated now."""
        consts = []
        for a in _nodes_of(node):
            v = self.values.get(a)
            if not (isinstance(v, Const) and v.scales is None):
                return None
            consts.append(a)
        def value(n):
            return torch.from_numpy(np.asarray(self.values[n].data))
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), value)
        with torch.no_grad():
            out = node.target(*args, **kwargs)
        if isinstance(out, torch.Tensor):
            return Const(out.detach().numpy())
        return None

    # -- quantize: where pending float ops become integer ops ---------------------------------
    def quantize(self, v, scale: float, zp: int, elem: str) -> Q:
        if isinstance(v, DQ):
            return self.requantize(v.q, scale, zp, elem)
        if isinstance(v, Q):
            return self.requantize(v, scale, zp, elem)
        if isinstance(v, FloatInput):
            if v.q is None:
                v.q = Q(Value(f"%arg{v.index}", v.shape, elem), scale, zp)
                return v.q
            return self.requantize(v.q, scale, zp, elem)
        if isinstance(v, Const):
            data = v.data if v.scales is None else _dequantize_const(v)
            qv = np.clip(np.round(np.asarray(data, np.float64) / scale) + zp, *_RANGE[elem])
            return Q(self.w.const(qv.astype(np.int64), elem), scale, zp)
        if isinstance(v, Pending):
            return self.lower(v.node, scale, zp, elem, None)
        raise UserError(f"cannot quantize the value of {describe(self.node)}")

    def lower(self, node, scale, zp, elem, clamp: Clamp | None) -> Q:
        t = node.target
        ins = [self.values.get(a) if isinstance(a, torch.fx.Node) else a for a in node.args]
        saved = self.node
        self.node = node
        try:
            # A clamp-like tail with a pending producer fuses into it.
            if t in _CLAMPS and isinstance(ins[0], Pending):
                c = _CLAMPS[t](node)
                return self.lower(ins[0].node, scale, zp, elem, c)
            handler = _LOWER.get(t)
            if handler is not None:
                out = handler(self, node, ins, scale, zp, elem, clamp)
                if out is not None:
                    return out
            if _is_pointwise(node) and sum(isinstance(i, (DQ, Pending)) for i in ins) == 1:
                src = next(i for i in ins if isinstance(i, (DQ, Pending)))
                if isinstance(src, Pending):
                    src = DQ(self.quantize(src, *self._guess(src.node)))
                if isinstance(src, DQ):
                    out = self.table(node, src.q, scale, zp, elem)
                    self.record_layer(node, "table:" + _op_name(node).replace("aten.", "").rstrip("_"), src.q, None,
                                      scale, zp)
                    return self.apply_clamp(out, clamp)
            culprit = node
            if t is operator.getitem and isinstance(ins[0], Pending):
                culprit = ins[0].node
            raise UserError(f"{describe(culprit)} is not supported in a quantized model yet "
                            "(no integer lowering for it)")
        finally:
            self.node = saved

    def _guess(self, node):
        raise UserError(f"{describe(node)} has no quantization parameters (unannotated float op)")

    # -- building blocks ---------------------------------------------------------------------
    def requantize(self, q: Q, scale: float, zp: int, elem: str | None = None) -> Q:
        elem = elem or q.elem
        if (q.scale, q.zp, q.elem) == (scale, zp, elem):
            return q
        m, s = quantize_multiplier(q.scale / scale)
        return Q(self.w.rescale(q.v, [m], [s], q.zp, zp, elem), scale, zp)

    def acc_rescale(self, acc: Value, real_scales, zp: int, elem: str) -> Value:
        """i32 (or i48) accumulator -> output integers, per channel on the last axis when many."""
        if acc.elem == "i48":
            pairs = [quantize_multiplier_16(float(r)) for r in real_scales]
            return self.w.rescale(acc, [p[0] for p in pairs], [p[1] for p in pairs], 0, zp, elem,
                                  scale32=False)
        pairs = [quantize_multiplier(float(r)) for r in real_scales]
        return self.w.rescale(acc, [p[0] for p in pairs], [p[1] for p in pairs], 0, zp, elem)

    def apply_clamp(self, q: Q, clamp: Clamp | None) -> Q:
        lo, hi = _RANGE[q.elem]
        if clamp is not None:
            if clamp.lo is not None:
                lo = max(lo, int(np.clip(np.round(clamp.lo / q.scale) + q.zp, *_RANGE[q.elem])))
            if clamp.hi is not None:
                hi = min(hi, int(np.clip(np.round(clamp.hi / q.scale) + q.zp, *_RANGE[q.elem])))
        if (lo, hi) == _RANGE[q.elem]:
            return q
        return Q(self.w.clamp(q.v, lo, hi), q.scale, q.zp)

    def pass_reshape(self, q: Q, shape) -> Q:
        return Q(self.w.reshape(q.v, shape), q.scale, q.zp)

    def const_q(self, c: Const) -> Q:
        """A per-tensor quantized constant as a Q."""
        if c.scales is None or len(c.scales) != 1:
            raise UserError(f"{describe(self.node)}: a per-channel or float constant operand is not supported")
        return Q(self.w.const(c.data, c.elem or self.act), float(c.scales[0]), int(c.zps[0]))

    def operand(self, v) -> Q:
        if isinstance(v, DQ):
            return v.q
        if isinstance(v, Const):
            return self.const_q(v)
        if isinstance(v, Pending):
            raise UserError(f"{describe(v.node)} is not quantized (its output feeds "
                            f"{describe(self.node)} in float)")
        raise UserError(f"{describe(self.node)}: unsupported operand {type(v).__name__}")

    def table(self, node, q: Q, scale, zp, elem) -> Q:
        if q.elem != "i8" or elem != "i8":
            return self.table16(node, q, scale, zp, elem)
        xs = torch.arange(-128, 128, dtype=torch.int8)
        f = qd.dequantize_per_tensor.default(xs, q.scale, q.zp, -128, 127, torch.int8)
        y = self._call_pointwise(node, f)
        tab = qd.quantize_per_tensor.default(y.float(), scale, zp, -128, 127, torch.int8)
        t = self.w.const(tab.numpy().astype(np.int64), "i8", (256,))
        return Q(self.w.op("tosa.table", [q.v, t], q.shape, "i8"), scale, zp)

    def table16(self, node, q: Q, scale, zp, elem) -> Q:
        if q.elem != "i16" or elem != "i16" or q.zp != 0 or zp != 0:
            raise UserError(f"{describe(node)}: a table needs int8 -> int8 or int16 -> int16")
        # TOSA int16 TABLE: 513 points every 128 LSB, linear interpolation, 7 fraction bits out.
        # The points are fitted (least squares) to the function at all 65536 inputs, which halves
        # the interpolation error of curved functions compared with sampling at the points.
        xs = torch.arange(-32768, 32768, dtype=torch.float64)
        y = self._call_pointwise(node, (xs * q.scale).float()).double()
        # Inputs outside the function's domain (sqrt of a negative) give NaN: no value is right there.
        target = np.nan_to_num(torch.clamp(torch.round(y / scale), -32768, 32767).numpy(), nan=0.0)
        tab = np.clip(np.round(_fit_interpolation_table(target)), -32768, 32767).astype(np.int64)
        t = self.w.const(tab, "i16", (513,))
        wide = self.w.op("tosa.table", [q.v, t], q.shape, "i32")
        out = self.w.rescale(wide, [1 << 30], [37], 0, 0, "i16", double_round=False)
        return Q(out, scale, zp)

    def _call_pointwise(self, node, x: torch.Tensor) -> torch.Tensor:
        args = []
        for a in node.args:
            if isinstance(a, torch.fx.Node):
                v = self.values.get(a)
                if isinstance(v, (DQ, Pending)):
                    args.append(x)
                elif isinstance(v, Const) and v.data.size == 1:
                    args.append(torch.tensor(_dequantize_const(v) if v.scales is not None else v.data,
                                             dtype=torch.float32).reshape(()))
                else:
                    raise UserError(f"{describe(node)}: a tensor operand is not supported here")
            else:
                args.append(a)
        with torch.no_grad():
            return node.target(*args, **node.kwargs)

    def record_layer(self, node, kind, x: Q, w: Const | None, out_scale, out_zp, others=()):
        """One entry of the per-layer quantization report (report.json's "layers")."""
        _, _, path = node_location(node)
        entry = {
            "name": path or node.name, "op": kind, "node": node.name,
            "input_scale": x.scale, "input_zero_point": x.zp,
            "output_scale": out_scale, "output_zero_point": out_zp,
            "weight_scales": [float(s) for s in w.scales] if w is not None else [],
            "weight_zero_points": [int(z) for z in w.zps] if w is not None else [],
            "dtype": x.elem,
        }
        if others:
            entry["other_input_scales"] = [o.scale for o in others]
            entry["other_input_zero_points"] = [o.zp for o in others]
        self.layers.append(entry)


# ------------------------------------------------------------------------------------------------
# Lowerings driven by a quantize (output parameters known)

def _lower_conv(self: Lowering, node, ins, scale, zp, elem, clamp):
    t = node.target
    x, w = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else node.kwargs.get("bias")
    if isinstance(bias, torch.fx.Node):
        bias = self.values[bias]
    if not isinstance(w, Const) or w.scales is None:
        raise UserError(f"{describe(node)}: the weight is not a quantized constant")
    xq = self.operand(x)
    linear = t == aten.linear.default
    rank = len(xq.shape)
    if linear:
        stride, padding, dilation, groups = (1, 1), (0, 0), (1, 1), 1
    else:
        def arg(i, default):
            return ins[i] if len(ins) > i else node.kwargs.get(("stride", "padding", "dilation", "groups")[i - 3], default)
        stride, padding, dilation, groups = arg(3, 1), arg(4, 0), arg(5, 1), arg(6, 1)
        n_sp = w.data.ndim - 2
        if rank == n_sp + 1:    # unbatched input: add the batch dimension
            xq = Q(self.w.reshape(xq.v, (1,) + tuple(xq.shape)), xq.scale, xq.zp)
            rank += 1
        stride, dilation = _tuple(stride, n_sp), _tuple(dilation, n_sp)
        if isinstance(padding, str):
            if padding == "valid":
                padding = (0,) * n_sp
            else:   # "same"
                k = w.data.shape[2:]
                padding = tuple(d * (kk - 1) // 2 for d, kk in zip(dilation, k))
                if any((d * (kk - 1)) % 2 for d, kk in zip(dilation, k)):
                    raise UserError(f"{describe(node)}: padding='same' with an even kernel is not supported")
        padding = _tuple(padding, n_sp)
        if n_sp == 1:
            stride, padding, dilation = (stride[0], 1), (padding[0], 0), (dilation[0], 1)
        elif n_sp != 2:
            raise UserError(f"{describe(node)}: only 1-D and 2-D convolutions are supported")
    wq = np.asarray(w.data)
    if np.any(w.zps != 0):
        raise UserError(f"{describe(node)}: weights must be quantized symmetrically (CMSIS-NN has no weight zero point)")
    out_shape = _shape(node)
    # View everything as NCHW 2-D convolution.
    if linear:
        k_in = xq.shape[-1]
        rows = int(np.prod(xq.shape[:-1], dtype=np.int64))
        x4 = self.w.reshape(xq.v, (rows, 1, 1, k_in))    # NHWC already
        w4 = wq.reshape(wq.shape[0], 1, 1, k_in)        # OHWI
        nhwc = x4
    else:
        if rank == 3:
            x4 = self.w.reshape(xq.v, (xq.shape[0], xq.shape[1], xq.shape[2], 1))
            wq = wq.reshape(*wq.shape, 1)
        else:
            x4 = xq.v
        nhwc = self.w.transpose(x4, [0, 2, 3, 1])
        w4 = None
    acc_elem = "i48" if xq.elem == "i16" else "i32"
    c_out = wq.shape[0]
    w_scales = np.broadcast_to(np.asarray(w.scales, np.float64), (c_out,))
    if bias is None:
        bias_q = np.zeros(c_out, np.int64)
    elif isinstance(bias, Const) and bias.scales is not None:
        bias_q = np.asarray(bias.data, np.int64).reshape(-1)
        expect = xq.scale * w_scales
        if not np.allclose(np.broadcast_to(bias.scales, (c_out,)), expect, rtol=1e-5):
            raise UserError(f"{describe(node)}: bias scale is not input scale x weight scale")
    elif isinstance(bias, Const):
        bias_q = np.round(np.asarray(bias.data, np.float64) / (xq.scale * w_scales)).astype(np.int64)
    else:
        raise UserError(f"{describe(node)}: the bias is not a constant")
    izp = self.w.zp(xq.zp, xq.elem)
    wzp = self.w.zp(0, "i8")
    n, h, wd, c_in = nhwc.shape
    attrs_common = f"acc_type = {acc_elem}, dilation = array<i64: {dilation[0]}, {dilation[1]}>"
    if linear and xq.elem == "i8":
        # Fully connected as TOSA 1.0 writes it: matmul with a constant [1, K, M] right-hand side,
        # then the int32 bias add (the backend matches matmul + add + rescale as one kernel).
        a = self.w.reshape(xq.v, (1, rows, k_in))
        wv = self.w.const(wq.T.reshape(1, k_in, c_out), "i8")
        mm = self.w.op("tosa.matmul", [a, wv, izp, wzp], (1, rows, c_out), "i32")
        b = self.w.const(bias_q.reshape(1, 1, c_out), "i32", (1, 1, c_out))
        acc = self.w.op("tosa.add", [mm, b], (1, rows, c_out), "i32")
        kind = "linear"
    elif linear:
        # int16 x int8 has no TOSA matmul: a 1x1 convolution over [rows, 1, 1, K].
        wv = self.w.const(w4, "i8")
        b = self.w.const(bias_q, acc_elem, (c_out,))
        acc = self.w.op("tosa.conv2d", [nhwc, wv, b, izp, wzp], (rows, 1, 1, c_out), acc_elem,
                        f"{attrs_common}, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>")
        kind = "linear"
    else:
        kh, kw = wq.shape[2], wq.shape[3]
        pads, nhwc = _exact_pads(self, nhwc, (kh, kw), stride, padding, dilation)
        n, h, wd, c_in = nhwc.shape
        oh = (h + pads[0] + pads[1] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
        ow = (wd + pads[2] + pads[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
        attrs = (f"{attrs_common}, pad = array<i64: {', '.join(map(str, pads))}>, "
                 f"stride = array<i64: {stride[0]}, {stride[1]}>")
        cin_g = wq.shape[1]
        if groups == 1:
            wv = self.w.const(wq.transpose(0, 2, 3, 1), "i8")
            b = self.w.const(bias_q, acc_elem, (c_out,))
            acc = self.w.op("tosa.conv2d", [nhwc, wv, b, izp, wzp], (n, oh, ow, c_out), acc_elem, attrs)
            kind = "conv2d" if rank == 4 else "conv1d"
        elif cin_g == 1 and groups == c_in:
            mult = c_out // c_in
            wv = self.w.const(wq.reshape(c_in, mult, kh, kw).transpose(2, 3, 0, 1), "i8")
            b = self.w.const(bias_q, acc_elem, (c_out,))
            acc = self.w.op("tosa.depthwise_conv2d", [nhwc, wv, b, izp, wzp], (n, oh, ow, c_out),
                            acc_elem, attrs)
            kind = "depthwise_conv2d" if rank == 4 else "depthwise_conv1d"
        else:
            # Grouped: one convolution per group, accumulators concatenated, one rescale.
            cout_g = c_out // groups
            parts = []
            for g in range(groups):
                xs = self.w.slice(nhwc, (0, 0, 0, g * cin_g), (n, h, wd, cin_g))
                wv = self.w.const(wq[g * cout_g:(g + 1) * cout_g].transpose(0, 2, 3, 1), "i8")
                b = self.w.const(bias_q[g * cout_g:(g + 1) * cout_g], acc_elem, (cout_g,))
                parts.append(self.w.op("tosa.conv2d", [xs, wv, b, izp, wzp], (n, oh, ow, cout_g),
                                       acc_elem, attrs))
            kind = "grouped_conv2d" if rank == 4 else "grouped_conv1d"
    real = xq.scale * w_scales / scale
    if kind.startswith("grouped"):
        # Each group's accumulator is rescaled on its own (int48 cannot be concatenated).
        outs = [self.acc_rescale(p, real[g * cout_g:(g + 1) * cout_g], zp, elem) for g, p in enumerate(parts)]
        out = Q(self.w.concat(outs, 3), scale, zp)
    else:
        out = Q(self.acc_rescale(acc, real, zp, elem), scale, zp)
    out = self.apply_clamp(out, clamp)
    if linear:
        res = self.w.reshape(out.v, out_shape)
    else:
        res = self.w.transpose(out.v, [0, 3, 1, 2])
        res = self.w.reshape(res, out_shape)
    self.record_layer(node, kind, xq, w, scale, zp)
    return Q(res, scale, zp)


def _lower_conv_transpose(self: Lowering, node, ins, scale, zp, elem, clamp):
    x, w = ins[0], ins[1]
    a = list(node.args) + [None] * 8
    bias = self.values.get(a[2]) if isinstance(a[2], torch.fx.Node) else None
    if not isinstance(w, Const) or w.scales is None:
        raise UserError(f"{describe(node)}: the weight is not a quantized constant")
    xq = self.operand(x)
    acc_elem = "i48" if xq.elem == "i16" else "i32"
    wq = np.asarray(w.data)
    n_sp = wq.ndim - 2
    stride, padding = _tuple(a[3] or 1, n_sp), _tuple(a[4] or 0, n_sp)
    out_padding, groups, dilation = _tuple(a[5] or 0, n_sp), a[6] or 1, _tuple(a[7] or 1, n_sp)
    if groups != 1 or any(d != 1 for d in dilation):
        raise UserError(f"{describe(node)}: grouped or dilated transposed convolution is not supported")
    if np.any(w.zps != 0):
        raise UserError(f"{describe(node)}: weights must be quantized symmetrically")
    if n_sp == 1:
        wq = wq.reshape(*wq.shape, 1)
        stride, padding, out_padding = (stride[0], 1), (padding[0], 0), (out_padding[0], 0)
        x4 = self.w.reshape(xq.v, (xq.shape[0], xq.shape[1], xq.shape[2], 1))
    else:
        x4 = xq.v
    c_out = wq.shape[1]
    w_scales = np.broadcast_to(np.asarray(w.scales, np.float64), (c_out,))
    if isinstance(bias, Const) and bias.scales is not None:
        bias_q = np.asarray(bias.data, np.int64).reshape(-1)
    elif isinstance(bias, Const):
        bias_q = np.round(np.asarray(bias.data, np.float64) / (xq.scale * w_scales)).astype(np.int64)
    else:
        bias_q = np.zeros(c_out, np.int64)
    nhwc = self.w.transpose(x4, [0, 2, 3, 1])
    n, h, wd, _ = nhwc.shape
    kh, kw = wq.shape[2], wq.shape[3]
    # PyTorch's padding crops the full output; output_padding adds rows at the bottom / right.
    out_pad = [-padding[0], -padding[0] + out_padding[0], -padding[1], -padding[1] + out_padding[1]]
    oh = (h - 1) * stride[0] + kh + out_pad[0] + out_pad[1]
    ow = (wd - 1) * stride[1] + kw + out_pad[2] + out_pad[3]
    wv = self.w.const(wq.transpose(1, 2, 3, 0), "i8")           # [IC, OC, KH, KW] -> [OC, KH, KW, IC]
    b = self.w.const(bias_q, acc_elem, (c_out,))
    acc = self.w.op("tosa.transpose_conv2d", [nhwc, wv, b, self.w.zp(xq.zp, xq.elem), self.w.zp(0, "i8")],
                    (n, oh, ow, c_out), acc_elem,
                    f"acc_type = {acc_elem}, out_pad = array<i64: {', '.join(map(str, out_pad))}>, "
                    f"stride = array<i64: {stride[0]}, {stride[1]}>")
    out = Q(self.acc_rescale(acc, xq.scale * w_scales / scale, zp, elem), scale, zp)
    out = self.apply_clamp(out, clamp)
    res = self.w.reshape(self.w.transpose(out.v, [0, 3, 1, 2]), _shape(node))
    self.record_layer(node, "transpose_conv2d" if n_sp == 2 else "transpose_conv1d", xq, w, scale, zp)
    return Q(res, scale, zp)


def _exact_pads(self, nhwc: Value, k, stride, padding, dilation):
    """TOSA wants (in + pads - dilated kernel) divisible by the stride: trim the bottom/right
    padding (and input rows PyTorch would never read) like PyTorch's floor division does."""
    pads = [padding[0], padding[0], padding[1], padding[1]]
    n, h, w, c = nhwc.shape
    for axis, (size, kk, s, d) in enumerate(zip((h, w), k, stride, dilation)):
        lo, hi = pads[2 * axis], pads[2 * axis + 1]
        rem = (size + lo + hi - d * (kk - 1) - 1) % s
        cut = min(rem, hi)
        hi -= cut
        rem -= cut
        pads[2 * axis + 1] = hi
        if rem:
            shape = list(nhwc.shape)
            shape[1 + axis] -= rem
            nhwc = self.w.slice(nhwc, (0, 0, 0, 0), shape)
    return pads, nhwc


def _lower_add_sub(self: Lowering, node, ins, scale, zp, elem, clamp):
    a, b = ins[0], ins[1]
    if not all(isinstance(v, (DQ, Const)) for v in (a, b)) or any(
            isinstance(v, Const) and v.scales is None for v in (a, b)):
        return None   # scalar operand: a table
    if len(ins) > 2 and ins[2] not in (1, 1.0) or node.kwargs.get("alpha", 1) != 1:
        return None
    qa, qb = self.operand(a), self.operand(b)
    out_shape = _shape(node)
    left_shift = 20 if elem == "i8" else 15
    twice_max = 2 * max(qa.scale, qb.scale)
    parts = []
    for q in (qa, qb):
        # (x - zp) << left_shift, exactly, then scaled to the common scale (CMSIS-NN's add).
        if q.elem == "i8":
            shifted = self.w.rescale(q.v, [1 << 30], [30 - left_shift], q.zp, 0, "i32")
        else:   # int16 (zero point 0): a rescale cannot shift 16-bit values left by 15 exactly
            wide = self.w.op("tosa.cast", [q.v], q.shape, "i32")
            amount = self.w.const(np.array([left_shift]), "i32", (1,) * len(q.shape))
            shifted = self.w.op("tosa.logical_left_shift", [wide, amount], q.shape, "i32")
        m, s = quantize_multiplier(q.scale / twice_max)
        parts.append(self.w.rescale(shifted, [m], [s], 0, 0, "i32"))
    pa, pb = (self.w.reshape(p, (1,) * (len(out_shape) - len(p.shape)) + tuple(p.shape)) for p in parts)
    op = "tosa.add" if node.target in (aten.add.Tensor, aten.add_.Tensor) else "tosa.sub"
    acc = self.w.op(op, [pa, pb], out_shape, "i32")
    m, s = quantize_multiplier(twice_max / ((1 << left_shift) * scale))
    out = Q(self.w.rescale(acc, [m], [s], 0, zp, elem), scale, zp)
    self.record_layer(node, "add" if op == "tosa.add" else "sub", qa, None, scale, zp, [qb])
    return self.apply_clamp(out, clamp)


def _lower_mul(self: Lowering, node, ins, scale, zp, elem, clamp):
    a, b = ins[0], ins[1]
    if not all(isinstance(v, (DQ, Const)) for v in (a, b)) or any(
            isinstance(v, Const) and v.scales is None for v in (a, b)):
        return None
    qa, qb = self.operand(a), self.operand(b)
    out_shape = _shape(node)
    ops = []
    for q in (qa, qb):
        wide = self.w.rescale(q.v, [1 << 30], [30], q.zp, 0, "i32")   # x - zp, exactly
        ops.append(self.w.reshape(wide, (1,) * (len(out_shape) - len(q.shape)) + tuple(q.shape)))
    shift = self.w.zp(0, "i8")
    acc = self.w.op("tosa.mul", [ops[0], ops[1], shift], out_shape, "i32")
    m, s = quantize_multiplier(qa.scale * qb.scale / scale)
    out = Q(self.w.rescale(acc, [m], [s], 0, zp, elem), scale, zp)
    self.record_layer(node, "mul", qa, None, scale, zp, [qb])
    return self.apply_clamp(out, clamp)


def _lower_min_max(self: Lowering, node, ins, scale, zp, elem, clamp):
    """Elementwise maximum / minimum: both operands in the output's parameters, then compare
    (rounding is monotonic, so this equals quantizing the float result)."""
    if not all(isinstance(v, (DQ, Const)) for v in ins[:2]) or any(
            isinstance(v, Const) and v.scales is None for v in ins[:2]):
        return None
    out_shape = _shape(node)
    qs = [self.requantize(self.operand(v), scale, zp, elem) for v in ins[:2]]
    # TOSA compares int32 only: widen (exactly), compare, narrow (the values fit).
    vs = [self.w.op("tosa.cast", [q.v], q.shape, "i32") for q in qs]
    vs = [self.w.reshape(v, (1,) * (len(out_shape) - len(v.shape)) + tuple(v.shape)) for v in vs]
    name = "tosa.maximum" if node.target == aten.maximum.default else "tosa.minimum"
    wide = self.w.op(name, vs, out_shape, "i32")
    out = Q(self.w.op("tosa.cast", [wide], out_shape, elem), scale, zp)
    return self.apply_clamp(out, clamp)


def _lower_cat(self: Lowering, node, ins, scale, zp, elem, clamp):
    tensors = [self.values[t] for t in node.args[0]]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    qs = [self.requantize(self.operand(v), scale, zp, elem) for v in tensors]
    rank = len(qs[0].shape)
    if node.target == aten.stack.default:
        dim = dim % (rank + 1)
        qs = [self.pass_reshape(q, q.shape[:dim] + (1,) + q.shape[dim:]) for q in qs]
    else:
        dim = dim % rank
    out = Q(self.w.concat([q.v for q in qs], dim), scale, zp)
    return self.apply_clamp(out, clamp)


def _lower_clamp_tail(self: Lowering, node, ins, scale, zp, elem, clamp):
    """relu/hardtanh/clamp on an already-integer tensor: rescale then clamp."""
    if not isinstance(ins[0], DQ):
        return None
    c = _CLAMPS[node.target](node)
    out = self.requantize(ins[0].q, scale, zp, elem)
    return self.apply_clamp(self.apply_clamp(out, c), clamp)


def _lower_mean_like(self: Lowering, node, ins, scale, zp, elem, clamp):
    if not isinstance(ins[0], DQ):
        return None
    q = ins[0].q
    out = _avg_pool(self, node, q)
    if out is None:
        return self.apply_clamp(_reduce_mean(self, node, q, scale, zp, elem), clamp)
    return self.apply_clamp(self.requantize(out, scale, zp, elem), clamp)


def _lower_softmax(self: Lowering, node, ins, scale, zp, elem, clamp):
    if not isinstance(ins[0], DQ):
        return None
    from .softmax import lower_softmax
    log = node.target in (aten.log_softmax.int, aten._log_softmax.default)
    self.record_layer(node, "log_softmax" if log else "softmax", ins[0].q, None, scale, zp)
    return self.apply_clamp(lower_softmax(self, node, ins[0].q, int(node.args[1]), log, scale, zp, elem), clamp)


# ------------------------------------------------------------------------------------------------
# Eager lowerings on integers (ops that commute with dequantize)

def _eager_permute(self, node, ins):
    q = ins[0].q
    rank = len(q.shape)
    if node.target == aten.permute.default:
        perms = [p % rank for p in node.args[1]]
    else:
        d0, d1 = (node.args[1] % rank, node.args[2] % rank) if node.target == aten.transpose.int else (0, 1)
        perms = list(range(rank))
        perms[d0], perms[d1] = perms[d1], perms[d0]
    return DQ(Q(self.w.transpose(q.v, perms), q.scale, q.zp))


def _eager_slice(self, node, ins):
    q = ins[0].q
    rank = len(q.shape)
    t = node.target
    start = [0] * rank
    size = list(q.shape)
    if t == aten.slice.Tensor:
        dim = (node.args[1] if len(node.args) > 1 else 0) % rank
        lo = node.args[2] if len(node.args) > 2 and node.args[2] is not None else 0
        hi = node.args[3] if len(node.args) > 3 and node.args[3] is not None else q.shape[dim]
        step = node.args[4] if len(node.args) > 4 else 1
        if step != 1:
            return None
        lo, hi = _clip_index(lo, q.shape[dim]), _clip_index(hi, q.shape[dim])
        start[dim], size[dim] = lo, max(0, hi - lo)
    elif t == aten.narrow.default:
        dim = node.args[1] % rank
        start[dim], size[dim] = node.args[2] % q.shape[dim], node.args[3]
    else:   # select
        dim = node.args[1] % rank
        start[dim], size[dim] = node.args[2] % q.shape[dim], 1
    v = self.w.slice(q.v, start, size)
    return DQ(Q(self.w.reshape(v, _shape(node)), q.scale, q.zp))


def _eager_split(self, node, ins):
    q = ins[0].q
    val = node.meta.get("val")
    rank = len(q.shape)
    t = node.target
    dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
    if t == aten.unbind.int:
        dim = node.args[1] if len(node.args) > 1 else 0
    dim %= rank
    items, offset = [], 0
    for part in val:
        shape = tuple(int(d) for d in part.shape)
        size = list(q.shape)
        n = 1 if t == aten.unbind.int else shape[dim]
        size[dim] = n
        start = [0] * rank
        start[dim] = offset
        offset += n
        v = self.w.slice(q.v, start, size)
        items.append(DQ(Q(self.w.reshape(v, shape), q.scale, q.zp)))
    return Tup(items)


def _eager_relu(self, node, ins):
    # relu keeps the parameters only when the quantizer shared them; else it is lowered at its quantize.
    users = [u for u in node.users if u.target == qd.quantize_per_tensor.default]
    q = ins[0].q
    if len(users) != len(node.users) or any((float(u.args[1]), int(u.args[2])) != (q.scale, q.zp) for u in users):
        return None
    c = _CLAMPS[node.target](node)
    return DQ(self.apply_clamp(q, c))


def _eager_max_pool(self, node, ins):
    q = ins[0].q
    one_d = node.target == aten.max_pool1d.default
    a = list(node.args) + [None] * 6
    k = _tuple(a[1], 1 if one_d else 2)
    stride = _tuple(a[2] if a[2] not in (None, []) else k, len(k))
    pad = _tuple(a[3] if a[3] is not None else 0, len(k))
    dil = _tuple(a[4] if a[4] is not None else 1, len(k))
    ceil = bool(a[5]) if a[5] is not None else node.kwargs.get("ceil_mode", False)
    if any(d != 1 for d in dil):
        raise UserError(f"{describe(node)}: dilated max pooling is not supported")
    if one_d:
        k, stride, pad = (k[0], 1), (stride[0], 1), (pad[0], 0)
    x = q.v if not one_d else self.w.reshape(q.v, q.shape + (1,))
    nhwc = self.w.transpose(x, [0, 2, 3, 1])
    n, h, w, c = nhwc.shape
    pads = [pad[0], pad[0], pad[1], pad[1]]
    out_hw = []
    for i, size in enumerate((h, w)):
        span = size + 2 * pad[i] - k[i]
        o = (-(-span // stride[i]) if ceil else span // stride[i]) + 1
        if ceil and (o - 1) * stride[i] >= size + pad[i]:
            o -= 1
        need = (o - 1) * stride[i] + k[i] - size - pad[i]   # bottom/right pad giving exactly o outputs
        if need < 0:
            shape = list(nhwc.shape)
            shape[1 + i] += need
            nhwc = self.w.slice(nhwc, (0, 0, 0, 0), shape)
            need = 0
        pads[2 * i + 1] = need
        out_hw.append(o)
    y = self.w.op("tosa.max_pool2d", [nhwc], (n, out_hw[0], out_hw[1], c), q.elem,
                  f"kernel = array<i64: {k[0]}, {k[1]}>, pad = array<i64: {', '.join(map(str, pads))}>, "
                  f"stride = array<i64: {stride[0]}, {stride[1]}>")
    y = self.w.transpose(y, [0, 3, 1, 2])
    return DQ(Q(self.w.reshape(y, _shape(node)), q.scale, q.zp))


def _eager_upsample(self, node, ins):
    q = ins[0].q
    out = _shape(node)
    if any(o % i for o, i in zip(out[2:], q.shape[2:])):
        raise UserError(f"{describe(node)}: nearest upsampling by a non-integer factor is not supported")
    # TOSA RESIZE (NHWC, nearest) between explicit transposes, like every NHWC op here.
    one_d = len(q.shape) == 3
    x = self.w.reshape(q.v, q.shape + (1,)) if one_d else q.v
    out4 = tuple(out) + (1,) if one_d else tuple(out)
    nhwc = self.w.transpose(x, [0, 2, 3, 1])
    hp, wp = _resize_params(out4[2], x.shape[2]), _resize_params(out4[3], x.shape[3])
    shape4 = "!tosa.shape<4>"
    shape2 = "!tosa.shape<2>"
    scale = self.w.shape_const([hp[0], hp[1], wp[0], wp[1]])
    offset = self.w.shape_const([hp[2], wp[2]])
    border = self.w.shape_const([hp[3], wp[3]])
    y = self.w.op("tosa.resize", [nhwc, (scale, shape4), (offset, shape2), (border, shape2)],
                  (out4[0], out4[2], out4[3], out4[1]), q.elem, "mode = NEAREST_NEIGHBOR")
    y = self.w.transpose(y, [0, 3, 1, 2])
    return DQ(Q(self.w.reshape(y, out), q.scale, q.zp))


def _resize_params(out_size: int, in_size: int):
    """TOSA RESIZE (scale_n, scale_d, offset, border) giving PyTorch's nearest rule
    src = floor(dst * in / out)."""
    g = math.gcd(out_size, in_size)
    n, d, offset = 2 * out_size // g, 2 * in_size // g, -(out_size // g)
    border = (out_size - 1) * d - (in_size - 1) * n + offset
    return n, d, offset, border


def _eager_pad(self, node, ins):
    q = ins[0].q
    pads = list(node.args[1])
    if node.target == aten.pad.default:   # pad(input, pad, mode="constant", value=None)
        mode = node.args[2] if len(node.args) > 2 else node.kwargs.get("mode", "constant")
        value = node.args[3] if len(node.args) > 3 else node.kwargs.get("value", 0.0)
    else:                                 # constant_pad_nd(input, pad, value=0)
        mode = "constant"
        value = node.args[2] if len(node.args) > 2 else node.kwargs.get("value", 0.0)
    if mode != "constant" or any(p < 0 for p in pads):
        return None
    rank = len(q.shape)
    padding = [0] * (2 * rank)
    for i in range(len(pads) // 2):     # PyTorch lists the last dimension first
        d = rank - 1 - i
        padding[2 * d], padding[2 * d + 1] = pads[2 * i], pads[2 * i + 1]
    lo, hi = _RANGE[q.elem]
    fill = int(np.clip(np.round(float(value or 0.0) / q.scale) + q.zp, lo, hi))
    if abs((fill - q.zp) * q.scale - float(value or 0.0)) > 1e-6 * max(1.0, abs(float(value or 0.0))):
        return None     # the fill value is not representable: not a pass-through
    shape = [d + padding[2 * i] + padding[2 * i + 1] for i, d in enumerate(q.shape)]
    amounts = self.w.shape_const(padding)
    v = self.w.op("tosa.pad", [q.v, (amounts, f"!tosa.shape<{2 * rank}>"), self.w.zp(fill, q.elem)],
                  shape, q.elem)
    return DQ(Q(v, q.scale, q.zp))


def _lower_matmul(self: Lowering, node, ins, scale, zp, elem, clamp):
    """Activation x activation matmul (attention-style): int8 x int8 -> int32 -> rescale."""
    a, b = ins[0], ins[1]
    if not all(isinstance(v, (DQ, Const)) for v in (a, b)):
        return None
    qa, qb = self.operand(a), self.operand(b)
    if qa.elem != "i8" or qb.elem != "i8":
        raise UserError(f"{describe(node)}: int16 activation x activation matmul is not supported")
    ra, rb = len(qa.shape), len(qb.shape)
    if ra < 2 or rb < 2 or qa.shape[:-2] != qb.shape[:-2] and rb != 2:
        raise UserError(f"{describe(node)}: broadcasting matmul is not supported")
    m, k, n = qa.shape[-2], qa.shape[-1], qb.shape[-1]
    batch = int(np.prod(qa.shape[:-2], dtype=np.int64))
    a3 = self.w.reshape(qa.v, (batch, m, k))
    if rb == 2 and batch > 1:
        b3 = self.w.tile(self.w.reshape(qb.v, (1, k, n)), (batch, 1, 1))
    else:
        b3 = self.w.reshape(qb.v, (batch, k, n))
    acc = self.w.op("tosa.matmul", [a3, b3, self.w.zp(qa.zp, "i8"), self.w.zp(qb.zp, "i8")],
                    (batch, m, n), "i32")
    mult, shift = quantize_multiplier(qa.scale * qb.scale / scale)
    out = Q(self.w.rescale(acc, [mult], [shift], 0, zp, elem), scale, zp)
    self.record_layer(node, "matmul", qa, None, scale, zp, [qb])
    out = self.apply_clamp(out, clamp)
    return Q(self.w.reshape(out.v, _shape(node)), scale, zp)


def _eager_expand(self, node, ins):
    q = ins[0].q
    out = _shape(node)
    v = self.w.reshape(q.v, (1,) * (len(out) - len(q.shape)) + tuple(q.shape))
    mult = [o // i for o, i in zip(out, v.shape)]
    if any(m != 1 for m in mult):
        v = self.w.tile(v, mult)
    return DQ(Q(v, q.scale, q.zp))


def _eager_mean_like(self, node, ins):
    users = list(node.users)
    q = ins[0].q
    if not users or any(u.target != qd.quantize_per_tensor.default or
                        (float(u.args[1]), int(u.args[2])) != (q.scale, q.zp) for u in users):
        return None
    out = _avg_pool(self, node, q)
    return DQ(out) if out is not None else None


def _eager_cat(self, node, ins):
    tensors = [self.values[t] for t in node.args[0]]
    if not all(isinstance(v, DQ) for v in tensors):
        return None
    if len({(v.q.scale, v.q.zp, v.q.elem) for v in tensors}) != 1:
        return None
    q0 = tensors[0].q
    return DQ(_lower_cat(self, node, ins, q0.scale, q0.zp, q0.elem, None))


def _avg_pool(self, node, q: Q) -> Q | None:
    """Average pooling over the spatial dims of NC[H]W as TOSA AVG_POOL2D; None if not that."""
    t = node.target
    rank = len(q.shape)
    out_shape = _shape(node)
    explicit_pad = False
    if t in (aten.adaptive_avg_pool2d.default, aten.adaptive_avg_pool1d.default):
        n_sp = 2 if t == aten.adaptive_avg_pool2d.default else 1
        outs = _tuple(node.args[1], n_sp)
        ins_sp = q.shape[-n_sp:]
        if any(i % o for i, o in zip(ins_sp, outs)):
            raise UserError(f"{describe(node)}: adaptive pooling needs the input size divisible by the output size")
        k = tuple(i // o for i, o in zip(ins_sp, outs))
        stride, pad = k, (0,) * n_sp
    elif t in (aten.avg_pool2d.default, aten.avg_pool1d.default):
        n_sp = 2 if t == aten.avg_pool2d.default else 1
        a = list(node.args) + [None] * 7
        k = _tuple(a[1], n_sp)
        stride = _tuple(a[2] if a[2] not in (None, []) else k, n_sp)
        pad = _tuple(a[3] if a[3] is not None else 0, n_sp)
        ceil = bool(a[4]) if a[4] is not None else False
        include_pad = a[5] if a[5] is not None else True
        if ceil or a[6] is not None:
            raise UserError(f"{describe(node)}: average pooling with ceil_mode or divisor_override "
                            "is not supported")
        explicit_pad = bool(include_pad and any(pad))
    elif t == aten.mean.dim:
        dims = sorted(d % rank for d in node.args[1])
        if rank not in (3, 4) or dims != list(range(2, rank)):
            return None
        n_sp = rank - 2
        k = q.shape[2:]
        stride, pad = k, (0,) * n_sp
    else:
        return None
    if n_sp == 1:
        k, stride, pad = (k[0], 1), (stride[0], 1), (pad[0], 0)
        x = self.w.reshape(q.v, q.shape + (1,))
    else:
        x = q.v
    nhwc = self.w.transpose(x, [0, 2, 3, 1])
    if explicit_pad:
        # PyTorch counts the zero padding in the average (TOSA does not): pad with the zero point.
        n, h, w, c = nhwc.shape
        amounts = self.w.shape_const([0, 0, pad[0], pad[0], pad[1], pad[1], 0, 0])
        nhwc = self.w.op("tosa.pad", [nhwc, (amounts, "!tosa.shape<8>"), self.w.zp(q.zp, q.elem)],
                         (n, h + 2 * pad[0], w + 2 * pad[1], c), q.elem)
        pad = (0, 0)
    n, h, w, c = nhwc.shape
    pads = [pad[0], pad[0], pad[1], pad[1]]
    oh = (h + 2 * pad[0] - k[0]) // stride[0] + 1
    ow = (w + 2 * pad[1] - k[1]) // stride[1] + 1
    pads, nhwc = _exact_pads(self, nhwc, k, stride, pad, (1, 1))
    # The mean of the raw integers, zero points 0: with one zero point on both sides,
    # mean(x - zp) + zp == mean(x), and this form rounds ties away from zero as TFLite and
    # CMSIS-NN's arm_avgpool_* do, so the kernel computes these integers bit for bit.
    zp = self.w.zp(0, q.elem)
    acc = "i32"     # TOSA accumulates int8 and int16 average pools in int32
    y = self.w.op("tosa.avg_pool2d", [nhwc, zp, zp], (n, oh, ow, c), q.elem,
                  f"acc_type = {acc}, kernel = array<i64: {k[0]}, {k[1]}>, "
                  f"pad = array<i64: {', '.join(map(str, pads))}>, stride = array<i64: {stride[0]}, {stride[1]}>")
    y = self.w.transpose(y, [0, 3, 1, 2])
    return Q(self.w.reshape(y, out_shape), q.scale, q.zp)


def _lower_sum(self: Lowering, node, ins, scale, zp, elem, clamp):
    if not isinstance(ins[0], DQ):
        return None
    return self.apply_clamp(_reduce_mean(self, node, ins[0].q, scale, zp, elem), clamp)


def _reduce_mean(self, node, q: Q, scale, zp, elem) -> Q:
    if node.target not in (aten.mean.dim, aten.sum.dim_IntList):
        raise UserError(f"{describe(node)} is not supported")
    rank = len(q.shape)
    dims = sorted(d % rank for d in node.args[1])
    v = self.w.rescale(q.v, [1 << 30], [30], q.zp, 0, "i32")
    count = 1
    for d in dims:
        shape = list(v.shape)
        shape[d] = 1
        count *= q.shape[d]
        v = self.w.op("tosa.reduce_sum", [v], shape, "i32", f"axis = {d} : i32")
    if node.target == aten.sum.dim_IntList:
        count = 1
    m, s = quantize_multiplier(q.scale / (count * scale))
    out = self.w.rescale(v, [m], [s], 0, zp, elem)
    return Q(self.w.reshape(out, _shape(node)), scale, zp)


# ------------------------------------------------------------------------------------------------

def _clamp_of(node) -> Clamp:
    t = node.target
    if t in (aten.relu.default, aten.relu_.default):
        return Clamp(0.0, None)
    if t == aten.relu6.default:
        return Clamp(0.0, 6.0)
    if t in (aten.hardtanh.default, aten.hardtanh_.default):
        a = list(node.args) + [None, None]
        lo = a[1] if a[1] is not None else node.kwargs.get("min_val", -1.0)
        hi = a[2] if a[2] is not None else node.kwargs.get("max_val", 1.0)
        return Clamp(float(lo), float(hi))
    a = list(node.args) + [None, None]
    lo = a[1] if a[1] is not None else node.kwargs.get("min")
    hi = a[2] if a[2] is not None else node.kwargs.get("max")
    return Clamp(None if lo is None else float(lo), None if hi is None else float(hi))


_CLAMPS = {t: _clamp_of for t in (aten.relu.default, aten.relu_.default, aten.relu6.default,
                                  aten.hardtanh.default, aten.hardtanh_.default,
                                  aten.clamp.default, aten.clamp_.default)}

_LOWER = {
    aten.conv1d.default: _lower_conv, aten.conv2d.default: _lower_conv,
    aten.conv1d.padding: _lower_conv, aten.conv2d.padding: _lower_conv,
    aten.linear.default: _lower_conv,
    aten.conv_transpose2d.input: _lower_conv_transpose, aten.conv_transpose1d.default: _lower_conv_transpose,
    aten.add.Tensor: _lower_add_sub, aten.add_.Tensor: _lower_add_sub, aten.sub.Tensor: _lower_add_sub,
    aten.mul.Tensor: _lower_mul, aten.mul_.Tensor: _lower_mul,
    aten.maximum.default: _lower_min_max, aten.minimum.default: _lower_min_max,
    aten.cat.default: _lower_cat, aten.concat.default: _lower_cat, aten.stack.default: _lower_cat,
    aten.adaptive_avg_pool2d.default: _lower_mean_like, aten.adaptive_avg_pool1d.default: _lower_mean_like,
    aten.avg_pool2d.default: _lower_mean_like, aten.avg_pool1d.default: _lower_mean_like,
    aten.mean.dim: _lower_mean_like, aten.sum.dim_IntList: _lower_sum,
    aten.matmul.default: _lower_matmul, aten.bmm.default: _lower_matmul,
    aten.softmax.int: _lower_softmax, aten._softmax.default: _lower_softmax,
    aten.log_softmax.int: _lower_softmax, aten._log_softmax.default: _lower_softmax,
}
for _t in _CLAMPS:
    _LOWER[_t] = _lower_clamp_tail

_EAGER = {
    aten.permute.default: _eager_permute, aten.transpose.int: _eager_permute, aten.t.default: _eager_permute,
    aten.slice.Tensor: _eager_slice, aten.narrow.default: _eager_slice, aten.select.int: _eager_slice,
    aten.split.Tensor: _eager_split, aten.split_with_sizes.default: _eager_split,
    aten.chunk.default: _eager_split, aten.unbind.int: _eager_split,
    aten.max_pool2d.default: _eager_max_pool, aten.max_pool1d.default: _eager_max_pool,
    aten.upsample_nearest2d.vec: _eager_upsample, aten.upsample_nearest2d.default: _eager_upsample,
    aten.upsample_nearest1d.vec: _eager_upsample,
    aten.expand.default: _eager_expand,
    aten.constant_pad_nd.default: _eager_pad, aten.pad.default: _eager_pad,
    aten.relu.default: _eager_relu, aten.relu_.default: _eager_relu,
    aten.adaptive_avg_pool2d.default: _eager_mean_like, aten.adaptive_avg_pool1d.default: _eager_mean_like,
    aten.avg_pool2d.default: _eager_mean_like, aten.avg_pool1d.default: _eager_mean_like,
    aten.mean.dim: _eager_mean_like,
    aten.cat.default: _eager_cat, aten.concat.default: _eager_cat,
}


def _fit_interpolation_table(target: np.ndarray) -> np.ndarray:
    """513 points whose linear interpolation (TOSA int16 TABLE) best fits `target` (65536 values,
    input -32768 first) in least squares: a tridiagonal normal system."""
    j = np.arange(65536)
    seg, frac = j >> 7, (j & 127) / 128.0
    w0, w1 = 1.0 - frac, frac
    diag = np.bincount(seg, w0 * w0, 513) + np.bincount(seg + 1, w1 * w1, 513)
    off = np.bincount(seg, w0 * w1, 512)
    rhs = np.bincount(seg, w0 * target, 513) + np.bincount(seg + 1, w1 * target, 513)
    diag[512] = max(diag[512], 1e-9)
    normal = np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)
    return np.linalg.solve(normal, rhs)


def _nodes_of(node) -> list:
    found = []
    torch.fx.node.map_arg((node.args, node.kwargs), found.append)
    return found


_ELEMENTWISE = {aten.hardswish.default, aten.hardsigmoid.default, aten.silu.default, aten.gelu.default,
                aten.elu.default, aten.leaky_relu.default, aten.mish.default, aten.softplus.default,
                aten.sigmoid.default, aten.tanh.default, aten.hardtanh.default, aten.relu6.default,
                aten.clamp.default, aten.relu.default, aten.hardswish_.default, aten.silu_.default,
                aten.log_sigmoid.default, aten.selu.default, aten.celu.default}


def _is_pointwise(node) -> bool:
    tags = getattr(node.target, "tags", ())
    return torch.Tag.pointwise in tags or node.target in _ELEMENTWISE


def _tuple(v, n):
    if isinstance(v, (list, tuple)):
        v = list(v)
        return tuple(v * n if len(v) == 1 else v)
    return (v,) * n


def _clip_index(i, size):
    if i < 0:
        i += size
    return max(0, min(size, i))


def _to_numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def _fetch_attr(gm, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _dequantize_const(c: Const) -> np.ndarray:
    data = np.asarray(c.data, np.float64)
    shape = [1] * data.ndim
    if data.ndim:
        shape[c.axis] = -1
    s = np.asarray(c.scales, np.float64)
    z = np.asarray(c.zps, np.float64)
    if s.size > 1:
        s, z = s.reshape(shape), z.reshape(shape)
    return (data - z) * s


def lower_quantized_graph(gm: torch.fx.GraphModule, activations: str = "int8") -> LoweringResult:
    """The integer TOSA of a PT2E-converted graph, as MLIR text plus I/O quantization."""
    return Lowering(gm, activations).run()
