"""Parameter-only subgraphs become constants before quantization; ops on the input and random ops stay."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mcu_mlir.frontend.graph.constant_folding import fold_parameter_subgraphs  # noqa: E402

aten = torch.ops.aten


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = torch.nn.Parameter(torch.randn(1, 10, 4))
        self.alpha = torch.nn.Parameter(torch.randn(4))

    def forward(self, x):
        gate = torch.sigmoid(self.alpha) * 2                   # folded: parameters only
        noise = torch.randn(x.shape) * 0.0                     # random: stays an op
        return (x + self.pos[:, :x.shape[1]]) * gate + noise


def test_folds_parameter_subgraphs_and_keeps_the_rest():
    model = Model().eval()
    x = torch.randn(1, 6, 4)
    gm = torch.export.export(model, (x,), strict=False).module()
    want = gm(x)
    folded = fold_parameter_subgraphs(gm)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert folded == 2                                          # the slice, the gate product
    assert aten.sigmoid.default not in targets and aten.slice.Tensor not in targets
    assert aten.randn.default in targets and aten.add.Tensor in targets
    assert torch.allclose(gm(x), want)
