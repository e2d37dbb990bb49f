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

import operator

import numpy as np
import torch

from ...diagnostics import UserError
from .tables import CLAMPS, EAGER, LOWER
from .lookup import lower_index_use, reads_indices
from .output_parts import is_parted_output, lower_parted_output
from .values import (DQ, ELEM, PASS_RESHAPES, RANGE, Clamp, Const, FloatInput, Indices, LoweringResult, Pending, Q,
                     Tup, dequantize_const, weight_elem)
from ..graph.nodes import (aten, describe, fetch_attr, node_location, nodes_of, op_name, qd, shape_of, source_node,
                           to_numpy, is_float_cast)
from ...fixed_point.qmath import quantize_multiplier, quantize_multiplier_16
from .tosa_builder import TosaBuilder, Value


class Lowering:
    def __init__(self, gm: torch.fx.GraphModule, activations: str, ctx, state=()):
        self.gm = gm
        self.state = list(state)
        self.w = TosaBuilder(ctx)
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
            name = path or source_node(node).name
            self.w.set_location(name, file, line)
            if node.op == "placeholder":
                val = node.meta.get("val")
                if not isinstance(val, torch.Tensor):
                    raise UserError(f"graph input '{node.name}' is not a tensor")
                fi = FloatInput(len(self.inputs), shape_of(node))
                self.inputs.append(fi)
                self.values[node] = fi
                if not val.dtype.is_floating_point:
                    if val.dtype not in (torch.int32, torch.int64):
                        raise UserError(f"graph input '{node.name}' has dtype {val.dtype}: quantized models take "
                                        "float inputs (quantized at the boundary) or int32 / int64 indices")
                    # Indices (token ids) enter as int32, whatever integer type the model used.
                    fi.q = Q(self.w.argument(fi.index, fi.shape, "i32"), 1.0, 0)
                    self.values[node] = Indices(fi.q.v)
            elif node.op == "get_attr":
                self.values[node] = Const(to_numpy(fetch_attr(self.gm, node.target)))
            elif node.op == "call_module":
                if node.target.startswith("_guards"):
                    continue
                raise UserError(f"unexpected module call '{node.target}' in the exported graph")
            elif node.op == "call_function":
                try:
                    self.values[node] = self.visit(node)
                except UserError as e:     # which op, for a caller that can choose otherwise (mixed precision)
                    if getattr(e, "node", None) is None:
                        e.node = source_node(node).name
                    raise
            elif node.op == "output":
                outputs = node.args[0]
        results, out_info = [], []
        import torch.utils._pytree as pytree
        for out in pytree.tree_leaves(outputs):
            v = self.values.get(out)
            if is_parted_output(v):     # a concat whose parts keep their own scales
                q, parted = lower_parted_output(self, v.node)
                results.append(q.v)
                out_info.append((q.shape, q.elem, q.scale, q.zp, parted))
                continue
            if isinstance(v, DQ):
                q = v.q
            elif isinstance(v, Q):
                q = v
            elif isinstance(v, Indices) and not v.flag:     # argmax: class indices as int32
                q = Q(v.v, 1.0, 0)
            else:
                raise UserError(f"model output '{getattr(out, 'name', out)}' is not quantized "
                                f"({describe(out) if isinstance(out, torch.fx.Node) else ''}): "
                                "the quantizer left a float op at the output")
            results.append(q.v)
            out_info.append((q.shape, q.elem, q.scale, q.zp))
        for i, j in self.state:
            fi = self.inputs[i] if i < len(self.inputs) else None
            if fi is None or j >= len(results):
                raise UserError(f"--state {i}:{j}: the model has {len(self.inputs)} input(s) and {len(results)} "
                                "output(s)")
            if fi.q is None:
                fi.q = Q(self.w.argument(fi.index, fi.shape, self.act), 1.0, 0)
            shape, elem, scale, zp = out_info[j][:4]
            if len(out_info[j]) > 4:
                raise UserError(f"--state {i}:{j}: output {j} is a concat of parts at their own scales; a state "
                                "is one tensor at one scale")
            if tuple(shape) != tuple(fi.q.shape) or elem != fi.q.elem:
                raise UserError(f"--state {i}:{j}: output {j} ({elem} {tuple(shape)}) cannot be the next call's "
                                f"input {i} ({fi.q.elem} {tuple(fi.q.shape)})")
            # The integers handed to the next call mean what that call's input means.
            q = self.requantize(Q(results[j], scale, zp), fi.q.scale, fi.q.zp)
            results[j] = q.v
            out_info[j] = (q.shape, q.elem, q.scale, q.zp)
        args, in_info = [], []
        for fi in self.inputs:
            if fi.q is None:   # unused input: still part of the signature
                fi.q = Q(self.w.argument(fi.index, fi.shape, self.act), 1.0, 0)
            args.append(fi.q.v)
            in_info.append((fi.shape, fi.q.elem, fi.q.scale, fi.q.zp))
        return LoweringResult(self.w.finish(args, results), in_info, out_info, self.layers)

    # -- one node ----------------------------------------------------------------------------
    def visit(self, node):
        t = node.target
        args = node.args
        if t == qd.quantize_per_tensor.default:
            x, scale, zp, _, _, dtype = args[:6]
            return self.quantize(self.values[x], float(scale), int(zp), ELEM[dtype])
        if t == qd.dequantize_per_tensor.default:
            x, scale, zp, qmin, qmax, dtype = args[:6]
            v = self.values[x]
            if isinstance(v, Q):
                if (v.scale, v.zp) != (float(scale), int(zp)):
                    v = self.requantize(v, float(scale), int(zp))
                return DQ(v)
            if isinstance(v, Const):
                return Const(v.data, np.array([float(scale)]), np.array([int(zp)]), 0,
                             weight_elem(qmin, qmax, dtype))
            raise UserError(f"unexpected dequantize input in {describe(node)}")
        if t == qd.dequantize_per_channel.default:
            x, scales, zps, axis, qmin, qmax, dtype = args[:7]
            v = self.values[x]
            return Const(v.data, self.values[scales].data.astype(np.float64).reshape(-1),
                         self.values[zps].data.astype(np.int64).reshape(-1), int(axis),
                         weight_elem(qmin, qmax, dtype))
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
        if reads_indices(self, node):
            return lower_index_use(self, node, ins)
        if isinstance(ins[0], DQ) and (t in PASS_RESHAPES or is_float_cast(node, input_is_float=True)):
            return DQ(self.pass_reshape(ins[0].q, shape_of(node)))
        handler = EAGER.get(t)
        # cat's first argument is the list of inputs; _eager_cat checks them itself.
        if handler is not None and (isinstance(ins[0], DQ) or t in (aten.cat.default, aten.concat.default)):
            out = handler(self, node, ins)
            if out is not None:
                return out
        return Pending(node)

    def _fold_constant(self, node):
        """Ops whose inputs are all float constants (zeros, arange, ...) are evaluated now."""
        consts = []
        for a in nodes_of(node):
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
                v.q = Q(self.w.argument(v.index, v.shape, elem), scale, zp)
                return v.q
            return self.requantize(v.q, scale, zp, elem)
        if isinstance(v, Const):
            data = v.data if v.scales is None else dequantize_const(v)
            qv = np.clip(np.round(np.asarray(data, np.float64) / scale) + zp, *RANGE[elem])
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
            if t in CLAMPS and isinstance(ins[0], Pending):
                c = CLAMPS[t](node)
                return self.lower(ins[0].node, scale, zp, elem, c)
            handler = LOWER.get(t)
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
                    self.record_layer(node, "table:" + op_name(node).replace("aten.", "").rstrip("_"), src.q, None,
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
        lo, hi = RANGE[q.elem]
        if clamp is not None:
            if clamp.lo is not None:
                lo = max(lo, int(np.clip(np.round(clamp.lo / q.scale) + q.zp, *RANGE[q.elem])))
            if clamp.hi is not None:
                hi = min(hi, int(np.clip(np.round(clamp.hi / q.scale) + q.zp, *RANGE[q.elem])))
        if (lo, hi) == RANGE[q.elem]:
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
        return Q(self.w.table(q.v, t), scale, zp)

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
        wide = self.w.table(q.v, t)
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
                    args.append(torch.tensor(dequantize_const(v) if v.scales is not None else v.data,
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


_ELEMENTWISE = {aten.hardswish.default, aten.hardsigmoid.default, aten.silu.default, aten.gelu.default,
                aten.elu.default, aten.leaky_relu.default, aten.mish.default, aten.softplus.default,
                aten.sigmoid.default, aten.tanh.default, aten.hardtanh.default, aten.relu6.default,
                aten.clamp.default, aten.relu.default, aten.hardswish_.default, aten.silu_.default,
                aten.log_sigmoid.default, aten.selu.default, aten.celu.default}


def _is_pointwise(node) -> bool:
    tags = getattr(node.target, "tags", ())
    return torch.Tag.pointwise in tags or node.target in _ELEMENTWISE


def lower_quantized_graph(gm: torch.fx.GraphModule, activations: str, ctx, state=()) -> LoweringResult:
    """The integer TOSA of a PT2E-converted graph (a module in `ctx`) plus I/O quantization. `state`:
    (input, output) pairs whose output is requantized to its input's parameters (streaming)."""
    return Lowering(gm, activations, ctx, state).run()
