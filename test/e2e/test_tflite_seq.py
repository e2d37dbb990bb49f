"""TFLite models that keep state across invocations, compiled as streaming models (--state): resource
variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE, initialised by a CALL_ONCE subgraph as
TFLite's converter writes them) and the ops with variable tensors. Each is run over successive
calls in the C on the host (mcu_model_reset(), then mcu_model_step() per call, both backends) and
in TFLite Micro's interpreter (one interpreter, one invoke per call), and every call's outputs must
be equal bit for bit. What cannot be made exact is refused with an error naming it."""

from __future__ import annotations

import numpy as np
import pytest

from tflite_oracle import inputs, need_build
from tflite_writer import GraphsWriter

import mcu_mlir
from mcu_mlir.diagnostics import UserError
from mcu_mlir.firmware import run
from mcu_mlir.frontend.tflite import import_tflite

SQ, SZ = 0.05, 3


def compare_steps_with_tflm(model: bytes, outdir, backend: str, steps: int, seed: int = 1, target: str = "host"):
    """Compiles `model` for `target`, runs `steps` calls of random inputs (the extremes first) in the
    C (under QEMU for a core) and in TFLite Micro; the report and the (call, output, largest
    difference) that differ."""
    from tflite_micro.python.tflite_micro import runtime
    path = outdir / "model.tflite"
    path.write_bytes(model)
    result = mcu_mlir.compile(str(path), target=target, backend=backend, emit="c", output_dir=str(outdir / "out"))
    ip = runtime.Interpreter.from_bytes(model, arena_size=2_000_000)
    n_in = len(result.report["quantization"]["inputs"]) - len(result.report.get("state", []))
    samples = [inputs(tuple(ip.get_input_details(i)["shape"]), steps, seed=seed + i) for i in range(n_in)]
    calls = [[s[k] for s in samples] for k in range(steps)]
    got = run.run_steps(outdir / "out", calls, target=target)
    differing = []
    for k, xs in enumerate(calls):
        for i, x in enumerate(xs):
            ip.set_input(x, i)
        ip.invoke()
        for j, q in enumerate(got[k].outputs_q):
            ref = ip.get_output(j)
            if not np.array_equal(q.reshape(ref.shape), ref):
                differing.append((k, j, int(np.abs(q.reshape(ref.shape).astype(int) - ref).max())))
    return result.report, differing


def _handle(m, name: str) -> int:
    h = m.tensor(f"{name}/handle", (), "resource")
    m.op("VAR_HANDLE", [], [h], ("VarHandleOptions", {"Container": "", "SharedName": name}))
    return h


def variables_model(acc_start=SZ, bias_start=(10, -20, 30, 100), acc_assigned=True) -> bytes:
    """x [1, 4] -> y = x + acc (acc = y next call: a saturating running sum), out = y + bias (bias:
    a variable only the initialisation assigns, a constant), delta = x - prev (prev = x next call:
    no initialisation, so TFLM starts it at the zero point), out of an FC of x and prev."""
    rng = np.random.default_rng(0)
    m = GraphsWriter()
    x = m.tensor("x", (1, 4), "i8", SQ, SZ)
    m.op("CALL_ONCE", [], [], ("CallOnceOptions", {"InitSubgraphIndex": 1}))
    acc, bias, prev = (_handle(m, n) for n in ("acc", "bias", "prev"))
    s = m.tensor("acc/read", (1, 4), "i8", SQ, SZ)
    b = m.tensor("bias/read", (1, 4), "i8", SQ, SZ)
    p = m.tensor("prev/read", (1, 4), "i8", 0.04, -7)
    m.op("READ_VARIABLE", [acc], [s])
    m.op("READ_VARIABLE", [bias], [b])
    m.op("READ_VARIABLE", [prev], [p])
    y = m.tensor("y", (1, 4), "i8", SQ, SZ)
    m.op("ADD", [x, s], [y], ("AddOptions", {}))
    if acc_assigned:
        m.op("ASSIGN_VARIABLE", [acc, y], [])
    out = m.tensor("out", (1, 4), "i8", 0.1, -4)
    m.op("ADD", [y, b], [out], ("AddOptions", {}))
    w = m.tensor("fc/w", (3, 4), "i8", 0.02, 0, rng.integers(-127, 128, (3, 4)))
    bias_fc = m.tensor("fc/b", (3,), "i32", 0.04 * 0.02, 0, [100, -200, 300])
    fc = m.tensor("fc", (1, 3), "i8", 0.3, 5)
    m.op("FULLY_CONNECTED", [p, w, bias_fc], [fc], ("FullyConnectedOptions", {}))
    xp = m.tensor("x_as_prev", (1, 4), "i8", 0.04, -7)
    m.op("QUANTIZE", [x], [xp])
    m.op("ASSIGN_VARIABLE", [prev, xp], [])
    m.end_subgraph([x], [out, fc])
    acc0, bias0 = (_handle(m, n) for n in ("acc", "bias"))
    c = m.tensor("acc/start", (1, 4), "i8", SQ, SZ, [acc_start] * 4)
    cb = m.tensor("bias/start", (1, 4), "i8", SQ, SZ, list(bias_start))
    m.op("ASSIGN_VARIABLE", [acc0, c], [])
    m.op("ASSIGN_VARIABLE", [bias0, cb], [])
    return m.write([], [])


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_variables_bit_exact_over_calls(backend, tmp_path):
    need_build(backend)
    report, differing = compare_steps_with_tflm(variables_model(), tmp_path, backend, steps=10)
    assert not differing, differing
    # acc and prev are the state (input 1 <- output 2, input 2 <- output 3); bias is a constant.
    assert report["state"] == [[1, 2], [2, 3]]


def _state_of(tmp_path, model: bytes):
    from mcu_mlir import io_quant
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    module, ins, outs = import_tflite(path)
    return io_quant.read_state(module), len(ins), len(outs)


def test_variable_only_the_initialisation_assigns_is_a_constant(tmp_path):
    # acc is not assigned by the main graph: it keeps its start (now not the zero point) for good.
    state, n_in, n_out = _state_of(tmp_path, variables_model(acc_start=20, acc_assigned=False))
    assert state == [(1, 2)] and (n_in, n_out) == (2, 3)     # prev only


def _error(tmp_path, model: bytes, capsys) -> str:
    from mcu_mlir.tools import mcu_compile
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    code = mcu_compile.main([str(path), "--target", "host", "--emit", "tosa", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "Traceback" not in err and err.count("error:") == 1, err
    return err


def _never_assigned() -> bytes:
    m = GraphsWriter()
    x = m.tensor("x", (1, 4), "i8", SQ, SZ)
    h = _handle(m, "ghost")
    s = m.tensor("ghost/read", (1, 4), "i8", SQ, SZ)
    m.op("READ_VARIABLE", [h], [s])
    y = m.tensor("y", (1, 4), "i8", SQ, SZ)
    m.op("ADD", [x, s], [y], ("AddOptions", {}))
    return m.write([x], [y])


def _computed_initialisation() -> bytes:
    m = GraphsWriter()
    x = m.tensor("x", (1, 4), "i8", SQ, SZ)
    m.op("CALL_ONCE", [], [], ("CallOnceOptions", {"InitSubgraphIndex": 1}))
    h = _handle(m, "v")
    s = m.tensor("v/read", (1, 4), "i8", SQ, SZ)
    m.op("READ_VARIABLE", [h], [s])
    y = m.tensor("y", (1, 4), "i8", SQ, SZ)
    m.op("ADD", [x, s], [y], ("AddOptions", {}))
    m.op("ASSIGN_VARIABLE", [h, y], [])
    m.end_subgraph([x], [y])
    h0 = _handle(m, "v")
    c = m.tensor("c", (1, 4), "i8", SQ, SZ, [1, 2, 3, 4])
    v = m.tensor("v/start", (1, 4), "i8", SQ, SZ)
    m.op("RELU", [c], [v])
    m.op("ASSIGN_VARIABLE", [h0, v], [])
    return m.write([], [])


def _svdf_state(zero_point: int = 0, variable: bool = True, time_elem: str = "i8") -> bytes:
    rng = np.random.default_rng(0)
    m = GraphsWriter()
    x = m.tensor("x", (1, 4), "i8", SQ, SZ)
    wf = m.tensor("feature", (2, 4), "i8", 0.01, 0, rng.integers(-127, 128, (2, 4)))
    wt = m.tensor("time", (2, 3), time_elem, 0.01, 0, rng.integers(-127, 128, (2, 3)))
    state = m.tensor("state", (1, 6), "i8", 0.02, zero_point, variable=variable)
    bias = m.tensor("bias", (2,), "i32", 0.0002, 0, [1, 2])
    y = m.tensor("y", (1, 2), "i8", 0.1, 0)
    m.op("SVDF", [x, wf, wt, bias, state], [y], ("SVDFOptions", {"Rank": 1}))
    return m.write([x], [y])


def _lstm_with(peephole: bool = False, cell_scale: float = 2.0 ** -11) -> bytes:
    rng = np.random.default_rng(0)
    m = GraphsWriter()
    x = m.tensor("x", (1, 2, 3), "i8", SQ, 0)
    y = _lstm(m, rng, x, "lstm", (1, 2, 3), 2, h_zp=0)
    inputs = m.operators[-1][1]
    if peephole:
        inputs[10] = m.tensor("peephole", (2,), "i16", 0.01, 0, [1, 2])
    m.tensors[inputs[19]].scales[0] = cell_scale
    return m.write([x], [y])


ERRORS = {
    "an LSTM with peepholes": (
        lambda: _lstm_with(peephole=True), "operator #0 (UNIDIRECTIONAL_SEQUENCE_LSTM): it has peephole weights "
                                           "(input 10)"),
    "an LSTM cell state at a scale not a power of two": (
        lambda: _lstm_with(cell_scale=0.001), "its cell state's scale 0.001 is not a power of two"),
    "an SVDF state with a zero point": (
        lambda: _svdf_state(zero_point=5), "operator #0 (SVDF): its state ('state') has zero point 5"),
    "an SVDF state that is not a variable tensor": (
        lambda: _svdf_state(variable=False), "operator #0 (SVDF): its state ('state') is not a variable tensor"),
    "an SVDF of int8 state and int16 time weights": (
        lambda: _svdf_state(time_elem="i16"), "operator #0 (SVDF): its state is i8 but its time weights i16"),
    "a state that starts away from its zero point": (
        lambda: variables_model(acc_start=10), "the variable 'acc' starts at 10, not at its zero point 3"),
    "a variable never assigned": (
        _never_assigned, "operator #1 (READ_VARIABLE): the variable 'ghost' is never assigned"),
    "an initialisation computed at run time": (
        _computed_initialisation, "operator #1 (RELU) of the initialisation subgraph 1: only VAR_HANDLE and "
                                  "ASSIGN_VARIABLE of constants"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_state_that_cannot_be_exact_is_refused(case, tmp_path, capsys):
    make, expected = ERRORS[case]
    assert expected in _error(tmp_path, make(), capsys)


def _svdf(m, rng, x, name, depth, batch, units, rank, memory, elem, activation=0):
    """One SVDF of input `x` [batch, depth]; scales that spread the feature activations and the
    output over most of their types."""
    filters = units * rank
    top = 100 if elem == "i8" else 20000
    wf_scale, wt_scale = 0.01, 0.5 / top
    wf = m.tensor(f"{name}/feature", (filters, depth), "i8", wf_scale, 0, rng.integers(-127, 128, (filters, depth)))
    wt = m.tensor(f"{name}/time", (filters, memory), elem, wt_scale, 0, rng.integers(-top, top, (filters, memory)))
    state_scale = SQ * wf_scale * np.sqrt(depth) * 80 / top
    bias = m.tensor(f"{name}/bias", (units,), "i32", state_scale * wt_scale, 0, rng.integers(-top * 20, top * 20, units))
    state = m.tensor(f"{name}/state", (batch, filters * memory), elem, state_scale, 0, variable=True)
    out_scale = state_scale * wt_scale * top * top * np.sqrt(memory * rank) / 150
    y = m.tensor(name, (batch, units), "i8", out_scale, int(rng.integers(-10, 10)))
    m.op("SVDF", [x, wf, wt, bias, state], [y], ("SVDFOptions", {"Rank": rank, "FusedActivationFunction": activation}))
    return y


def svdf_model() -> bytes:
    """Two SVDFs: int8 state and time weights, rank 2, memory 5, a fused RELU (which TFLM's integer
    kernel does not apply); int16 state and time weights, rank 1, memory 3, batch 2."""
    rng = np.random.default_rng(3)
    m = GraphsWriter()
    x = m.tensor("x", (1, 8), "i8", SQ, SZ)
    x2 = m.tensor("x2", (2, 6), "i8", SQ, -9)
    y = _svdf(m, rng, x, "svdf_s8", 8, 1, 4, 2, 5, "i8", activation=1)
    y2 = _svdf(m, rng, x2, "svdf_s16", 6, 2, 3, 1, 3, "i16")
    return m.write([x, x2], [y, y2])


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_svdf_bit_exact_over_calls(backend, tmp_path):
    need_build(backend)
    report, differing = compare_steps_with_tflm(svdf_model(), tmp_path, backend, steps=12)
    assert not differing, differing
    assert report["state"] == [[2, 2], [3, 3]]      # each SVDF's state, after the two inputs / outputs


def _lstm(m, rng, x, name, shape, hidden, time_major=False, clip=0.0, cell_power=-11, h_zp=-3):
    """One int8 UNIDIRECTIONAL_SEQUENCE_LSTM of `x` (shape [B, T, I], or [T, B, I] time-major):
    per-tensor weights per gate, gate pre-activations that reach past their int16 range at the
    extremes, the hidden state at 1/128 with a zero point, the cell state at 2**cell_power."""
    batch = shape[1] if time_major else shape[0]
    depth = shape[2]
    inputs = [x] + [-1] * 23
    for k in range(4):                         # input, forget, cell, output
        sw = float(rng.uniform(0.001, 0.003))
        inputs[1 + k] = m.tensor(f"{name}/wx{k}", (hidden, depth), "i8", sw, 0,
                                 rng.integers(-127, 128, (hidden, depth)))
        inputs[5 + k] = m.tensor(f"{name}/wh{k}", (hidden, hidden), "i8", float(rng.uniform(0.002, 0.02)), 0,
                                 rng.integers(-127, 128, (hidden, hidden)))
        inputs[12 + k] = m.tensor(f"{name}/b{k}", (hidden,), "i32", SQ * sw, 0, rng.integers(-20000, 20000, hidden))
    inputs[18] = m.tensor(f"{name}/h", (batch, hidden), "i8", 1 / 128, h_zp, variable=True)
    inputs[19] = m.tensor(f"{name}/c", (batch, hidden), "i16", 2.0 ** cell_power, 0, variable=True)
    y = m.tensor(name, shape[:2] + (hidden,), "i8", 1 / 128, h_zp)
    m.op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y],
         ("UnidirectionalSequenceLSTMOptions", {"FusedActivationFunction": 4, "CellClip": clip,
                                                "TimeMajor": time_major}))
    return y


def lstm_model() -> bytes:
    """A batch-major LSTM ([2, 3, 5] -> hidden 4) and a time-major one ([2, 1, 6] -> hidden 3, cell
    clip 3.0, cell state at 2**-12)."""
    rng = np.random.default_rng(5)
    m = GraphsWriter()
    x = m.tensor("x", (2, 3, 5), "i8", SQ, SZ)
    x2 = m.tensor("x2", (2, 1, 6), "i8", SQ, -9)
    y = _lstm(m, rng, x, "lstm", (2, 3, 5), 4)
    y2 = _lstm(m, rng, x2, "lstm_time_major", (2, 1, 6), 3, time_major=True, clip=3.0, cell_power=-12, h_zp=5)
    return m.write([x, x2], [y, y2])


@pytest.mark.parametrize("backend", ["cmsis-nn", "portable"])
def test_lstm_bit_exact_over_calls(backend, tmp_path):
    need_build(backend)
    report, differing = compare_steps_with_tflm(lstm_model(), tmp_path, backend, steps=8)
    assert not differing, differing
    # each LSTM's hidden and cell states, after the two inputs / outputs
    assert report["state"] == [[2, 2], [3, 3], [4, 4], [5, 5]]


# (left shift, activation): the gates' (shift 0) and the cell state's tanh at 2**-11, 2**-12, 2**-9,
# 2**-14 (the cell state's scale power + 12).
ACTIVATIONS = [(0, "sigmoid"), (0, "tanh"), (1, "tanh"), (3, "tanh"), (-2, "tanh")]


def test_lstm_activations_equal_tflm_for_every_int16_input(tmp_path):
    """The LSTM's int16 sigmoid / tanh in TOSA ops equal TFLM's (cmsis_lstm.activation_s16) for all
    65536 inputs, in tosa_reference_model and in the C on the host."""
    need_build("portable")
    from mcu_mlir import _mlir, io_quant
    from mcu_mlir.frontend.tflite.lower import Lowering
    from mcu_mlir.frontend.tflite.lstm import _activation
    from mcu_mlir.frontend.tflite.reader import Graph
    from mcu_mlir.fixed_point.cmsis_lstm import activation_s16
    lw = Lowering(Graph("activations"), _mlir.new_context())
    x = lw.w.argument(0, (1, 65536), "i16")
    outs = [_activation(lw, x, shift, kind) for shift, kind in ACTIVATIONS]
    module = lw.w.finish([x], outs)
    one = io_quant.IOQuant(1.0, 0)
    io_quant.annotate(module, [one], [one] * len(outs))
    path = tmp_path / "activations.mlir"
    path.write_text(str(module))
    mcu_mlir.compile(str(path), target="host", backend="portable", emit="c", output_dir=str(tmp_path / "out"))
    every = np.arange(-32768, 32768, dtype=np.int16).reshape(1, -1)
    for got in (run.run(tmp_path / "out", [every]), run.run_reference_outdir(tmp_path / "out", [every])):
        for (shift, kind), q in zip(ACTIVATIONS, got.outputs_q):
            expected = activation_s16(every, shift, kind)
            assert np.array_equal(q.reshape(-1).astype(np.int64), expected.reshape(-1)), (shift, kind)


@pytest.mark.parametrize("model", ["variables_model", "svdf_model", "lstm_model"])
def test_stateful_models_bit_exact_on_cortex_m55(model, tmp_path):
    """The same models and calls as above on the CMSIS-NN build under QEMU (mps3-an547)."""
    need_build("cmsis-nn", "cortex-m55")
    _, differing = compare_steps_with_tflm(globals()[model](), tmp_path, "cmsis-nn", steps=8, target="cortex-m55")
    assert not differing, differing
