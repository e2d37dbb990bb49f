"""Lookups with run-time indices (token ids as an integer model input): embedding, index_select
and x[:, ids] as one tosa.gather each, checked in tosa_reference_model against the PT2E model, on
the host in C, and a BERT-like token encoder on CMSIS-NN (host, Cortex-M55) bit-exact."""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import mcu_mlir  # noqa: E402
from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.frontend import import_model  # noqa: E402
from mcu_mlir.reference import run_reference  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)

VOCAB = 50


class Lookups(nn.Module):
    """An embedding (int64 ids, as tokenizers give them), index_select of an activation along its
    last dim and x[:, ids] of a parameter, all with run-time indices; BERT's token types of zeros_like(ids)
    (only the ids' shape is read: a constant)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 8)
        self.kind = nn.Embedding(2, 8)
        self.table = nn.Parameter(torch.randn(3, VOCAB, 4))
        self.fc = nn.Linear(8, 8)

    def forward(self, x, ids):
        tokens = self.embed(ids) + self.kind(torch.zeros_like(ids))  # (1, 6, 8)
        picked = torch.index_select(self.fc(x), 2, ids.reshape(-1).int())
        return tokens, picked, self.table[:, ids.reshape(-1)]


class TokenEncoder(nn.Module):
    """A 2-layer BERT-like encoder on 32 tokens: token and learned position embeddings,
    nn.TransformerEncoder (nn.MultiheadAttention inside), the first token classified."""

    def __init__(self, vocab=300, dim=32, heads=4, layers=2, tokens=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(tokens, dim)
        self.register_buffer("positions", torch.arange(tokens), persistent=False)
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 3)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(self.positions)
        return self.head(self.norm(self.encoder(x))[:, 0])


class PositionIds(nn.Module):
    """RoBERTa's embeddings: position ids computed from the token ids (padding id 1 keeps position 1,
    the others count up from 2: ne, cumsum, *, +), token types gathered from a buffer of zeros at
    those positions, three lookups summed."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, 8, padding_idx=1)
        self.pos = nn.Embedding(16, 8, padding_idx=1)
        self.types = nn.Embedding(2, 8)
        self.register_buffer("type_ids", torch.zeros(1, 16, dtype=torch.long))

    def forward(self, ids):
        mask = ids.ne(1).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) + 0) * mask
        positions = positions.long() + 1
        types = torch.gather(self.type_ids.expand(ids.shape[0], -1), 1, positions)
        first = (ids == 5).int() * 3 - 1 + ids.eq(7).int()
        return self.tok(ids) + self.pos(positions) + self.types(types), self.pos(first + 1)


def _ids(shape, high, seed):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))


def _import(model, example, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return import_model(model, example, calibration=8, **kw)


@pytest.mark.parametrize("activations", ["int8", "int16"])
def test_lookups_match_pt2e_exactly(activations):
    torch.manual_seed(0)
    model = Lookups().eval()
    result = _import(model, (torch.randn(1, 6, 8), _ids((1, 6), 8, 0)), quantize=activations)
    text = result.module.operation.get_asm()
    assert text.count("tosa.gather") == 3 and result.inputs[1].dtype == "int32"
    x, ids = torch.randn(1, 6, 8, generator=torch.Generator().manual_seed(3)).numpy(), _ids((1, 6), 8, 4).numpy()
    q_in = [result.inputs[0].quantize(x), result.inputs[1].quantize(ids)]
    assert q_in[1].dtype == np.int32
    outs = run_reference(text, q_in)
    want = result.reference([result.inputs[0].dequantize(q_in[0]), ids])
    # The lookups move integers: exact. The linear before index_select rounds as in every int16
    # model (PT2E's float linear vs the integer one): within 1 LSB.
    for out, w, tq, bound in zip(outs, want, result.outputs, (0, 0 if activations == "int8" else 1, 0)):
        assert np.abs(out.reshape(w.shape).astype(np.int64) - tq.quantize(w)).max() <= bound


def test_negative_ids_count_from_the_end_in_indexing(tmp_path):
    """x[:, ids] with ids in [-K, K): the C gathers what torch does (negative from the end)."""
    class Pick(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x, ids):
            return self.fc(x)[:, :, ids.reshape(-1)]
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(Pick().eval(), (torch.randn(1, 3, 8), torch.tensor([[0, 1, 2, 3]])), target="host",
                         backend="portable", calibration=4, emit="c", output_dir=str(tmp_path))
    ids = np.array([[-1, -8, 7, 0]], np.int32)
    x = torch.randn(1, 3, 8, generator=torch.Generator().manual_seed(2)).numpy()
    got = run.run(tmp_path, [x, ids], target="host")
    want = run.run_reference_outdir(tmp_path, [x, ids])
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
    y = got.outputs_q[0]
    assert np.array_equal(y[..., 0], y[..., 2]) and np.array_equal(y[..., 1], y[..., 3])   # -1 is 7, -8 is 0
    assert not np.array_equal(y[..., 0], y[..., 1])


def test_integer_input_in_arithmetic_is_refused():
    class Arith(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, 4)

        def forward(self, ids):
            return self.embed(ids) * ids.unsqueeze(-1).float()
    with pytest.raises(UserError, match=r"test_lookups.py:\d+ .*reads a run-time integer input"):
        _import(Arith().eval(), (_ids((1, 5), VOCAB, 0),))


def test_position_ids_from_token_ids(tmp_path):
    """Integer arithmetic on the ids (RoBERTa): in tosa_reference_model as in the PT2E model, padding
    ids at position 1 and the rest counting from 2, and the C the same on the host."""
    torch.manual_seed(0)
    model = PositionIds().eval()
    ids = torch.tensor([[5, 1, 7, 1, 9, 2], [1, 3, 5, 7, 1, 4]])
    result = _import(model, (_ids((2, 6), VOCAB, 0),))
    outs = run_reference(result.module, [ids.numpy().astype(np.int32)])
    want = result.reference([ids.numpy()])
    for out, w, tq in zip(outs, want, result.outputs):
        assert np.abs(out.reshape(w.shape).astype(np.int64) - tq.quantize(w)).max() <= 1
    with torch.no_grad():         # the lookups read what torch computes from these ids
        float_out = model(ids)[0].numpy()
    got = result.outputs[0].dequantize(outs[0]).reshape(float_out.shape)
    assert 10 * np.log10((float_out ** 2).sum() / ((float_out - got) ** 2).sum()) > 30
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (_ids((2, 6), VOCAB, 0),), target="host", backend="portable", calibration=8,
                         emit="c", output_dir=str(tmp_path))
    c = run.run(tmp_path, [ids.numpy()], target="host")
    ref = run.run_reference_outdir(tmp_path, [ids.numpy()])
    for a, b in zip(c.outputs_q, ref.outputs_q):
        assert np.array_equal(a, b.reshape(a.shape))


class ReplacedIds(nn.Module):
    """A reserved id read as another before the lookup: ids.masked_fill(ids == 7, 0) and
    where(ids == 3, 9, ids) (BART sets the labels' -100 to the pad id so)."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, 8)

    def forward(self, ids):
        return self.tok(ids.masked_fill(ids == 7, 0)), self.tok(torch.where(ids == 3, 9, ids))


def _run_on_ids(model, ids, tmp_path):
    """`model` compiled for the host and run on `ids`: the C's outputs (raw, then dequantized) after
    checking them against tosa_reference_model's, and each within quantization (30 dB) of float."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (_ids(ids.shape, VOCAB, 0),), target="host", backend="portable", calibration=8,
                         emit="c", output_dir=str(tmp_path))
    c = run.run(tmp_path, [ids], target="host")
    ref = run.run_reference_outdir(tmp_path, [ids])
    with torch.no_grad():
        want = model(torch.from_numpy(ids))
    for a, b, w, got in zip(c.outputs_q, ref.outputs_q, want if isinstance(want, tuple) else (want,),
                            c.outputs_float):
        assert np.array_equal(a, b.reshape(a.shape))
        w = w.numpy().reshape(got.shape)
        assert 10 * np.log10((w ** 2).sum() / ((w - got) ** 2).sum()) > 30
    return [q.reshape(ids.shape[-1], -1) for q in c.outputs_q]


def test_replaced_ids(tmp_path):
    """The C looks up the rows torch does: 7 reads row 0 and 3 row 9, the other ids their own."""
    torch.manual_seed(0)
    filled, picked = _run_on_ids(ReplacedIds().eval(), np.array([[7, 0, 3, 9, 5, 7]], np.int64), tmp_path)
    assert np.array_equal(filled[0], filled[1]) and np.array_equal(filled[5], filled[1])
    assert np.array_equal(picked[2], picked[3]) and not np.array_equal(picked[0], picked[3])


class ShiftedIds(nn.Module):
    """BART's decoder ids: the input ids shifted right by one, the start id (2) first, the labels'
    -100 set to the pad id (1); functionalized, a slice, a cat, a select filled and a masked_fill."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, 8)

    def forward(self, ids):
        shifted = ids.new_zeros(ids.shape)
        shifted[:, 1:] = ids[:, :-1].clone()
        shifted[:, 0] = 2
        shifted.masked_fill_(shifted == -100, 1)
        return self.tok(shifted)


def test_shifted_ids(tmp_path):
    """Each position looks up the id before it, the first the start id."""
    torch.manual_seed(0)
    rows, = _run_on_ids(ShiftedIds().eval(), np.array([[2, 11, 12, 13, 14, 15]], np.int64), tmp_path)
    assert np.array_equal(rows[0], rows[1])         # the start id 2, then the first id (2)
    assert all(not np.array_equal(rows[k], rows[k + 1]) for k in range(1, 5))


def test_float_and_other_integer_dtypes():
    class Bytes(nn.Module):
        def forward(self, x):
            return x.float() * 2
    with pytest.raises(UserError, match="torch.uint8"):
        _import(Bytes().eval(), (torch.zeros(1, 4, dtype=torch.uint8),))


def test_lookups_c_matches_reference(tmp_path):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(Lookups().eval(), (torch.randn(1, 6, 8), _ids((1, 6), 8, 0)), target="host",
                         backend="portable", calibration=8, emit="c", output_dir=str(tmp_path))
    inputs = [torch.randn(1, 6, 8, generator=torch.Generator().manual_seed(5)).numpy(), _ids((1, 6), 8, 6).numpy()]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host")
    for c, ref in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(c, ref.reshape(c.shape))
    # An id outside a table reads its nearest row (the frontend clamps run-time ids, TOSA's GATHER
    # REQUIREs them in range; mcu_gather clamps alike), for any int32: C and reference agree, and the
    # embedding (50 rows) and index_select (8) read what the ids clamped to their tables read.
    wild = np.array([[-5, 8, 2**31 - 1, -2**31, 3, 60]], np.int32)
    got = run.run(tmp_path, [inputs[0], wild], target="host")
    want = run.run_reference_outdir(tmp_path, [inputs[0], wild])
    for c, ref in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(c, ref.reshape(c.shape))
    for k, out in ((VOCAB, 0), (8, 1)):
        clamped = run.run(tmp_path, [inputs[0], np.clip(wild, 0, k - 1)], target="host")
        assert np.array_equal(got.outputs_q[out], clamped.outputs_q[out])
    assert "an id outside a table" in (tmp_path / "model.h").read_text().lower()


needs_cmsis = pytest.mark.skipif(not os.environ.get("CMSIS_NN_PATH"),
                                 reason="CMSIS_NN_PATH not set: the CMSIS-NN tier needs a CMSIS-NN checkout")


@needs_cmsis
@pytest.mark.parametrize("target", ["host", "cortex-m55"])
def test_token_encoder_on_cmsis_nn_bit_exact(target, tmp_path):
    if target != "host" and (shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None):
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    torch.manual_seed(0)
    model = TokenEncoder().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, (_ids((1, 32), 300, 0),), target=target, backend="cmsis-nn", calibration=16,
                         emit="c", output_dir=str(tmp_path))
    calls = collections.Counter(re.findall(r"^\s+(?:status = )?((?:arm|mcu)_\w+)\(",
                                           (tmp_path / "model.c").read_text(), re.M))
    assert calls["mcu_gather"] == 1, calls                 # the token lookup; positions folded to a constant
    assert calls["arm_batch_matmul_s8"] == 4 and calls["mcu_softmax_s8"] == 2, calls
    assert "mcu_matmul" not in calls and "mcu_binary" not in calls, calls
    ids = _ids((1, 32), 300, 7).numpy().astype(np.int32)
    want = run.run_reference_outdir(tmp_path, [ids])
    got = run.run(tmp_path, [ids], target=target)
    assert np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape))
    with torch.no_grad():
        fl = model(torch.from_numpy(ids).long()).numpy()
    q = got.outputs_float[0].reshape(fl.shape)
    assert 10 * np.log10((fl ** 2).sum() / ((fl - q) ** 2).sum()) >= 20


def test_cli_integer_input_shape(tmp_path):
    src = tmp_path / "enc.py"
    src.write_text("import torch\nfrom torch import nn\n\n"
                   "def make():\n    torch.manual_seed(0)\n"
                   "    return nn.Sequential(nn.Embedding(40, 8), nn.Linear(8, 4)).eval()\n")
    cli = [sys.executable, "-m", "mcu_mlir.tools.mcu_compile", f"{src}:make", "--backend", "portable",
           "--target", "host", "--calibration", "4"]
    ok = subprocess.run(cli + ["--input-shape", "1,6:int64", "-o", str(tmp_path / "out")], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr
    assert '{"input0", 2, {1, 6}, 4, 0, 1.0f, 0, 24}' in (tmp_path / "out" / "model.c").read_text()
    bad = subprocess.run(cli + ["--input-shape", "1,6:int8", "-o", str(tmp_path / "bad")], capture_output=True,
                         text=True)
    assert bad.returncode == 1 and "float32, int32, int64" in bad.stderr and "Traceback" not in bad.stderr
