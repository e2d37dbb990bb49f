"""BatchNorm folding keeps the float function: a BN folds into the conv before it only when nothing
else reads that conv's output (RepGhostNet's identity BN beside a conv on the same tensor)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mcu_mlir.frontend.graph.torch_export import export, fold_batch_norm  # noqa: E402

aten = torch.ops.aten


class SharedConvOutput(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.cheap = torch.nn.Conv2d(6, 6, 3, padding=1, groups=6)
        self.bn = torch.nn.BatchNorm2d(6)
        self.conv2 = torch.nn.Conv2d(6, 6, 1)
        self.bn2 = torch.nn.BatchNorm2d(6)
        for bn in (self.bn, self.bn2):
            with torch.no_grad():
                bn.running_mean.uniform_(-1, 1)
                bn.running_var.uniform_(0.5, 2)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        y = self.conv(x)
        return self.cheap(y) + self.bn(y) + self.bn2(self.conv2(y))


def test_shared_conv_output_keeps_the_float_function():
    model = SharedConvOutput().eval()
    x = torch.randn(1, 3, 8, 8)
    gm = fold_batch_norm(export(model, (x,)).module())
    assert torch.allclose(gm(x), model(x), atol=1e-5)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert aten.batch_norm.default not in targets
    # bn2 (its conv read by nothing else) folded into conv2; bn became a 1x1 depthwise conv of y.
    assert targets.count(aten.conv2d.default) == 4
