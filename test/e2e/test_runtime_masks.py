"""Attention masks given at run time (an int input of 1 = attend / 0 = padding, as tokenizers give
attention_mask, or nn.MultiheadAttention's key_padding_mask): the mask's flags reach the masked
softmax as booleans in the integer TOSA, and the C equals tosa_reference_model with any mask,
including one that leaves a query nothing to attend to (probability 0 there; float gives NaN)."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

import mcu_mlir  # noqa: E402
from mcu_mlir.frontend.lowering.lookup import FLAG, index_bounds  # noqa: E402
from mcu_mlir.firmware import run  # noqa: E402

if shutil.which("tosa_reference_model") is None:
    pytest.skip("tosa-tools (tosa_reference_model) not installed", allow_module_level=True)

TOKENS, DIM = 12, 16


class PaddedAttention(nn.Module):
    """Self-attention over token features with a padding mask per key, as HuggingFace builds it
    (the mask indexed per batch and key with aranges, broadcast over heads and queries) and as a
    masked_fill of the scores (True = ignore); sharp enough that the mask moves the outputs."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, 3 * DIM)
        with torch.no_grad():
            self.qkv.weight[:2 * DIM] *= 3
            self.proj.weight[:2 * DIM] *= 3

    def forward(self, x, mask):
        q, k, v = self.qkv(x).reshape(1, TOKENS, 3, 2, DIM // 2).permute(2, 0, 3, 1, 4)
        keep = mask.to(torch.bool)[torch.arange(1)[:, None, None, None], torch.arange(TOKENS)[None, None, None, :]]
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=keep.expand(1, 1, TOKENS, TOKENS))
        a = a.transpose(1, 2).reshape(1, TOKENS, DIM)
        q, k, v = self.proj(a).reshape(1, TOKENS, 3, DIM).unbind(2)
        scores = (q @ k.transpose(1, 2)).masked_fill((mask == 0)[:, None, :], float("-inf"))
        return a, scores.softmax(-1) @ v


def _compile(tmp_path):
    torch.manual_seed(0)
    model = PaddedAttention().eval()
    example = (torch.randn(1, TOKENS, DIM), torch.zeros(1, TOKENS, dtype=torch.int64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcu_mlir.compile(model, example, target="host", backend="portable", calibration=16, emit="c",
                         output_dir=str(tmp_path))
    return model


def _sqnr(want, got):
    return 10 * np.log10((want ** 2).sum() / ((want - got) ** 2).sum())


def test_mask_input_is_a_flag():
    gm = torch.export.export(PaddedAttention().eval(),
                             (torch.randn(1, TOKENS, DIM), torch.ones(1, TOKENS, dtype=torch.int64))).module()
    assert index_bounds(gm) == [None, FLAG]


def test_run_time_mask_bit_exact_and_applied(tmp_path):
    model = _compile(tmp_path)
    x = torch.randn(1, TOKENS, DIM, generator=torch.Generator().manual_seed(4))
    for length in (TOKENS, 7, 1):
        mask = (torch.arange(TOKENS) < length).long()[None]
        inputs = [x.numpy(), mask.numpy().astype(np.int32)]
        want = run.run_reference_outdir(tmp_path, inputs)
        got = run.run(tmp_path, inputs, target="host")
        for c, ref in zip(got.outputs_q, want.outputs_q):
            assert np.array_equal(c, ref.reshape(c.shape)), length
        with torch.no_grad():
            masked = [t.numpy() for t in model(x, mask)]
            unmasked = [t.numpy() for t in model(x, torch.ones_like(mask))]
        for m, u, c in zip(masked, unmasked, got.outputs_float):
            c = c.reshape(m.shape)
            assert _sqnr(m, c) >= 20, (length, _sqnr(m, c))    # 21.8 - 29.5 dB measured
            if length < TOKENS:      # the mask matters: the C follows the masked model, not the unmasked one
                assert _sqnr(m, u) < 20 and _sqnr(m, c) > _sqnr(m, u) + 8, (length, _sqnr(m, u), _sqnr(m, c))


def test_float_mask_from_a_run_time_input_is_refused():
    """nn.MultiheadAttention turns a key_padding_mask into a float mask (zeros, -inf where True)."""
    from mcu_mlir.diagnostics import UserError

    class Mha(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(DIM, 2, batch_first=True)

        def forward(self, x, mask):
            return self.mha(x, x, x, key_padding_mask=mask == 0, need_weights=False)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(UserError, match="in module 'mha'.* computes a float tensor from a run-time integer input"):
            mcu_mlir.compile(Mha().eval(), (torch.randn(1, TOKENS, DIM), torch.ones(1, TOKENS, dtype=torch.int64)),
                             target="host", backend="portable", calibration=4, emit="c")


def test_query_with_nothing_to_attend_to(tmp_path):
    """A mask of zeros: every probability 0 (the attention output 0), the C equal to the reference."""
    _compile(tmp_path)
    inputs = [np.random.default_rng(2).standard_normal((1, TOKENS, DIM)).astype(np.float32),
              np.zeros((1, TOKENS), np.int32)]
    want = run.run_reference_outdir(tmp_path, inputs)
    got = run.run(tmp_path, inputs, target="host")
    for c, ref in zip(got.outputs_q, want.outputs_q):
        assert np.array_equal(c, ref.reshape(c.shape))
    assert np.all(got.outputs_float[0] == 0)
