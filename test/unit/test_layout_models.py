"""Layout passes on whole models: torch-mlir's float TOSA for small versions of the zoo's networks.

Stand-ins for MobileNetV2, MobileNetV3-small (squeeze-excite), Wav2Letter, DS-CNN, a YOLO-like
net (split/concat/max pool/upsample) and a Silero-VAD-like conv1d stack, as torch-mlir lowers
them (conv in NHWC between transposes, conv1d through reshapes, grouped conv as slices + concat).
For each: no data-moving transpose inside the model, at most one per input/output with NCHW I/O,
none with NHWC I/O, and tosa_reference_model gives the same outputs before and after (1e-5).
"""

from __future__ import annotations

import functools

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from mcu_mlir._mlir import ir  # noqa: E402
from mcu_mlir import pipeline  # noqa: E402
from mcu_mlir.passes.analysis.transposes import count_data_moving_transposes  # noqa: E402

import test_layout_support as support  # noqa: E402


# -- models ------------------------------------------------------------------------------------------

def _bn_act(c, act=nn.ReLU6):
    return [nn.BatchNorm2d(c), act()]


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand, act=nn.ReLU6, se=False):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), *_bn_act(hidden, act)]
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), *_bn_act(hidden, act)]
        if se:
            layers.append(SqueezeExcite(hidden))
        layers += [nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class SqueezeExcite(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc1 = nn.Conv2d(c, max(c // 4, 4), 1)
        self.fc2 = nn.Conv2d(max(c // 4, 4), c, 1)

    def forward(self, x):
        s = x.mean(dim=(2, 3), keepdim=True)
        s = nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(s))))
        return x * s


class MobileNetV2Like(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), *_bn_act(8))
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 1, 1), InvertedResidual(8, 12, 2, 4),
                                    InvertedResidual(12, 12, 1, 4), InvertedResidual(12, 16, 2, 4))
        self.head = nn.Sequential(nn.Conv2d(16, 32, 1, bias=False), *_bn_act(32))
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class MobileNetV3SmallLike(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), *_bn_act(8, nn.Hardswish))
        self.blocks = nn.Sequential(InvertedResidual(8, 8, 2, 1, nn.ReLU, se=True),
                                    InvertedResidual(8, 12, 2, 3, nn.ReLU),
                                    InvertedResidual(12, 12, 1, 3, nn.Hardswish, se=True))
        self.head = nn.Sequential(nn.Conv2d(12, 24, 1, bias=False), *_bn_act(24, nn.Hardswish))
        self.fc = nn.Linear(24, classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class Wav2LetterLike(nn.Module):
    def __init__(self, features=8, classes=10):
        super().__init__()
        spec = [(features, 16, 11, 2, 5, 1), (16, 16, 5, 1, 2, 1), (16, 16, 5, 1, 4, 2),
                (16, 24, 7, 1, 3, 1), (24, 24, 1, 1, 0, 1), (24, classes, 1, 1, 0, 1)]
        self.convs = nn.ModuleList(nn.Conv1d(i, o, k, s, p, d) for i, o, k, s, p, d in spec)

    def forward(self, x):
        for conv in self.convs[:-1]:
            x = torch.relu(conv(x))
        return torch.log_softmax(self.convs[-1](x), dim=1)


class DsCnnLike(nn.Module):
    def __init__(self, classes=12, c=16):
        super().__init__()
        layers = [nn.Conv2d(1, c, (10, 4), (2, 2), (5, 1)), *_bn_act(c, nn.ReLU)]
        for _ in range(3):
            layers += [nn.Conv2d(c, c, 3, 1, 1, groups=c), *_bn_act(c, nn.ReLU),
                       nn.Conv2d(c, c, 1), *_bn_act(c, nn.ReLU)]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.avg_pool2d(x, x.shape[2:])
        return self.fc(torch.flatten(x, 1))


class YoloLike(nn.Module):
    """C2f-style split/concat, SPPF max pools, nearest upsample, two heads."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 2, 1)
        self.down = nn.Conv2d(8, 16, 3, 2, 1)
        self.c2f_a = nn.Conv2d(8, 8, 3, 1, 1)
        self.c2f_out = nn.Conv2d(24, 16, 1)
        self.sppf_in = nn.Conv2d(16, 8, 1)
        self.sppf_out = nn.Conv2d(32, 16, 1)
        self.lateral = nn.Conv2d(24, 8, 1)
        self.head_small = nn.Conv2d(16, 6, 1)
        self.head_large = nn.Conv2d(8, 6, 1)

    def forward(self, x):
        p1 = nn.functional.silu(self.stem(x))
        x = nn.functional.silu(self.down(p1))
        a, b = x.chunk(2, dim=1)
        x = self.c2f_out(torch.cat([a, b, nn.functional.silu(self.c2f_a(b))], dim=1))
        y = self.sppf_in(x)
        pools = [y]
        for _ in range(3):
            pools.append(nn.functional.max_pool2d(pools[-1], 5, 1, 2))
        x = self.sppf_out(torch.cat(pools, dim=1))
        up = torch.ops.aten.upsample_nearest2d(x, [p1.shape[2], p1.shape[3]])
        lat = self.lateral(torch.cat([up, p1], dim=1))
        return self.head_small(x), self.head_large(lat)


class SileroVadLike(nn.Module):
    """STFT as a conv1d with in_channels=1, magnitude, four encoder conv1d, a 1x1 decoder."""

    def __init__(self, bins=9):
        super().__init__()
        self.bins = bins
        self.stft = nn.Conv1d(1, 2 * bins, 16, 8, bias=False)
        self.encoder = nn.ModuleList([nn.Conv1d(bins, 16, 3, 1, 1), nn.Conv1d(16, 16, 3, 2, 1),
                                      nn.Conv1d(16, 16, 3, 2, 1), nn.Conv1d(16, 16, 3, 1, 1)])
        self.decoder = nn.Conv1d(16, 1, 1)

    def forward(self, x):
        spec = self.stft(nn.functional.pad(x, (8, 8)))
        re, im = spec[:, :self.bins], spec[:, self.bins:]
        x = torch.sqrt(re * re + im * im + 1e-6)
        for conv in self.encoder:
            x = torch.relu(conv(x))
        return torch.sigmoid(self.decoder(x))


class GroupedAndTransposedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.grouped = nn.Conv2d(8, 8, 3, 1, 1, groups=2)
        self.up = nn.ConvTranspose2d(8, 4, 2, 2)

    def forward(self, x):
        return self.up(torch.relu(self.grouped(x)) + x)


class CnnFlattenLinear(nn.Module):
    """Convs, then a flatten over C, H, W (not a global pool) into linear layers."""

    def __init__(self, classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(2, 4, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(4, 6, 3, 1, 1), nn.ReLU())
        self.fc = nn.Sequential(nn.Linear(6 * 4 * 3, 16), nn.ReLU(), nn.Linear(16, classes))

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


class ShuffleNetBlockLike(nn.Module):
    """Channel split, a depthwise branch, concat, then a channel shuffle read by 1x1 convs (folded
    into their weights). A shuffle read by a split or a depthwise conv still costs one copy."""

    def __init__(self, c=16):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, 2, 1)
        self.branch = nn.Sequential(nn.Conv2d(c // 2, c // 2, 1), nn.ReLU(),
                                    nn.Conv2d(c // 2, c // 2, 3, 1, 1, groups=c // 2),
                                    nn.Conv2d(c // 2, c // 2, 1), nn.ReLU())
        self.mix = nn.ModuleList(nn.Conv2d(c, c, 1) for _ in range(2))

    def forward(self, x):
        x = torch.relu(self.stem(x))
        for mix in self.mix:
            a, b = x.chunk(2, dim=1)
            x = torch.cat([a, self.branch(b)], 1)
            n, c, h, w = x.shape
            x = mix(x.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w))
        return x


MODELS = {
    "mobilenet_v2": (MobileNetV2Like, [(1, 3, 32, 32)]),
    "shufflenet_like": (ShuffleNetBlockLike, [(1, 3, 16, 16)]),
    "mobilenet_v3_small": (MobileNetV3SmallLike, [(1, 3, 32, 32)]),
    "wav2letter": (Wav2LetterLike, [(1, 8, 64)]),
    "ds_cnn": (DsCnnLike, [(1, 1, 49, 10)]),
    "yolo_like": (YoloLike, [(1, 3, 32, 32)]),
    "silero_vad_like": (SileroVadLike, [(1, 1, 256)]),
    "grouped_transposed_conv": (GroupedAndTransposedConv, [(1, 8, 8, 8)]),
    "cnn_flatten_linear": (CnnFlattenLinear, [(1, 2, 8, 6)]),
}


def build(name: str):
    cls, shapes = MODELS[name]
    torch.manual_seed(0)
    model = cls().eval()
    with torch.no_grad():  # non-trivial batch-norm statistics
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
    return model, [torch.randn(*s) for s in shapes]


@functools.lru_cache(maxsize=None)
def model_text(name: str, form: str = "raw") -> str:
    """The model as torch-mlir's TOSA: `raw` (conversion only) or `default` (its whole pipeline)."""
    model, inputs = build(name)
    return support.torch_to_tosa(model, inputs, form)


# -- tests -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("io_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("form", ["raw", "default"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_layout(name, form, io_layout):
    text = model_text(name, form)
    ctx = ir.Context()
    module = ir.Module.parse(text, ctx)
    n_io = len(support.entry(module).regions[0].blocks[0].arguments) + \
        len(ir.FunctionType(support.entry(module).attributes["function_type"].value).results)
    pipeline.run_pipeline(module, f"builtin.module(mcu-tosa-layout-pipeline{{io-layout={io_layout}}})")
    assert module.operation.verify()
    left = count_data_moving_transposes(module)
    if io_layout == "nhwc":
        assert left == 0, str(module)
    else:
        assert left <= n_io, str(module)
        assert support.interior_transposes(module) == 0, str(module)
    support.assert_same_outputs(text, module, atol=1e-5)


@pytest.mark.parametrize("name", ["wav2letter", "silero_vad_like"])
def test_conv1d_chains_have_nothing_between_convs(name):
    ctx = ir.Context()
    module = ir.Module.parse(model_text(name, "raw"), ctx)
    pipeline.run_pipeline(module, "builtin.module(mcu-tosa-layout-pipeline{io-layout=nhwc})")
    between = support.ops_between_convs(module)
    assert between == [], between


CONV1D_VARIANTS = {
    "regular": lambda: nn.Conv1d(4, 6, 3, padding=1),
    "depthwise": lambda: nn.Conv1d(4, 4, 5, padding=2, groups=4),
    "depthwise_multiplier": lambda: nn.Conv1d(4, 8, 3, padding=1, groups=4),
    "pointwise": lambda: nn.Conv1d(4, 6, 1),
    "large_kernel_padded": lambda: nn.Conv1d(4, 6, 9, padding=4),
    "strided_asymmetric": lambda: nn.Conv1d(4, 6, 4, stride=3, padding=2),
    "dilated": lambda: nn.Conv1d(4, 6, 3, dilation=3, padding=3),
    "no_bias": lambda: nn.Conv1d(4, 6, 3, bias=False),
    "in_channels_1": lambda: nn.Conv1d(1, 6, 8, stride=4),
    "grouped": lambda: nn.Conv1d(4, 6, 3, groups=2),
    "same_padding": lambda: nn.Conv1d(4, 6, 4, padding="same"),
    "transposed": lambda: nn.ConvTranspose1d(4, 3, 3, stride=2),
    "max_pool": lambda: nn.MaxPool1d(3, 2),
    "avg_pool": lambda: nn.AvgPool1d(2, 2),
}


@pytest.mark.parametrize("variant", sorted(CONV1D_VARIANTS))
def test_conv1d_variants_laid_out_as_w1(variant):
    torch.manual_seed(0)
    model = nn.Sequential(CONV1D_VARIANTS[variant](), nn.ReLU()).eval()
    channels = 1 if variant == "in_channels_1" else 4
    text = support.torch_to_tosa(model, [torch.randn(1, channels, 17)], "raw")
    module = ir.Module.parse(text, ir.Context())
    pipeline.run_pipeline(module, "builtin.module(mcu-tosa-layout-pipeline{io-layout=nhwc})")
    assert count_data_moving_transposes(module) == 0
    sliding = [op for op in support.entry(module).regions[0].blocks[0].operations
               if op.operation.name in support.CONVS + ("tosa.max_pool2d", "tosa.avg_pool2d")]
    assert sliding and all(op.operands[0].type.shape[2] == 1 for op in sliding)  # H = L, W = 1
    support.assert_same_outputs(text, module, atol=1e-5)


def test_int8_flatten_into_linear_permutes_weights_not_activations():
    from mcu_mlir.frontend import import_model
    model, inputs = build("cnn_flatten_linear")
    text = import_model(model, tuple(inputs), quantize="int8", calibration=2).module.operation.get_asm()
    module = ir.Module.parse(text, ir.Context())
    pipeline.run_pipeline(module, "builtin.module(mcu-tosa-layout-pipeline{io-layout=nhwc})")
    assert count_data_moving_transposes(module) == 0
    support.assert_same_outputs(text, module)
