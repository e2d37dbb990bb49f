"""Public model definitions at microcontroller sizes, each a FACTORY for `mcu-compile FILE.py:FACTORY`.

    mcu-compile tools/public_models.py:tv_mobilenet_v3_small_050 --input-shape 1,3,96,96 -o out

The model code is the libraries' own (torchvision, timm, torchaudio, HuggingFace transformers;
`pip install -e .[models]`); only sizes are chosen here (width multipliers, class counts, small
inputs). Weights are random and seeded, with non-trivial BatchNorm / norm statistics, so
quantization sees the spread of trained values rather than the identity statistics of a fresh model.
MODELS maps each factory to its library, input shape and op family ("attention" / "recurrent", or
none for a CNN), read by tools/model_coverage.py.
"""

from __future__ import annotations

import math

import os
import sys
from dataclasses import dataclass
from typing import Callable

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from mcu_mlir.frontend.graph import python_only_imports  # noqa: E402

python_only_imports.install()


IMAGE = (1, 3, 96, 96)
SMALL_IMAGE = (1, 3, 64, 64)


@dataclass(frozen=True)
class Entry:
    library: str
    build: Callable[[tuple], torch.nn.Module]    # input shape -> the evaluated model
    input_shape: tuple[int, ...]
    family: str = ""         # "attention" / "recurrent": the op family the model depends on ("" for a CNN)
    vocabulary: int = 0      # > 0: the input holds int64 token ids below it (a text model), else floats
    attention_mask: bool = False    # a second input: the tokens' attention mask (1 = token, 0 = padding)

    def model(self) -> torch.nn.Module:
        return self.build(self.input_shape)

    def input_shapes(self) -> list[str]:
        """mcu-compile's --input-shape values."""
        ids = ",".join(str(d) for d in self.input_shape) + (":int64" if self.vocabulary else "")
        return [ids, ",".join(str(d) for d in self.input_shape) + ":int64"] if self.attention_mask else [ids]

    def sample(self, seed: int) -> torch.Tensor:
        """A random input: token ids below the vocabulary for a text model, normal floats otherwise."""
        g = torch.Generator().manual_seed(seed)
        if self.vocabulary:
            return torch.randint(0, self.vocabulary, self.input_shape, generator=g)
        return torch.randn(self.input_shape, generator=g)

    def samples(self, seed: int) -> list[torch.Tensor]:
        """Every input: sample(seed), and with an attention mask one that pads the sequence from a
        random length on (at least half the tokens, all of them for some seeds)."""
        if not self.attention_mask:
            return [self.sample(seed)]
        g = torch.Generator().manual_seed(seed + 10_000)
        n = self.input_shape[-1]
        length = int(torch.randint(n // 2, n + 1, (1,), generator=g))
        return [self.sample(seed), (torch.arange(n) < length).long().expand(self.input_shape).clone()]


def seeded(build: Callable[[], torch.nn.Module], input_shape: tuple[int, ...], seed: int = 0) -> torch.nn.Module:
    """The library's own initialisation from `seed`, with norm layers that are not the identity:
    BatchNorm running statistics and affine parameters drawn at random (a fresh model has mean 0,
    variance 1, weight 1, bias 0, which hides every error of folding and quantizing them). Free
    parameters a library starts training from at (near) zero are drawn at trained-like scale too:
    class tokens (timm: std 1e-6) at std 0.5, layer scales (1e-6) in [0.1, 0.5]; left at zero a
    class token row is below one quantization step and a block scaled by 1e-6 contributes nothing.
    So are the scales of a block's last norm or conv that a library starts at zero (timm's
    zero_init_last), in [0.1, 0.5]: left at zero, the residual branch outputs zeros.
    A linear or conv whose weights start at zero (torchvision's ViT head) gets the default uniform
    initialisation: at zero, the model's output is its bias whatever the input, and equal to any
    quantized model's."""
    torch.manual_seed(seed)
    model = build()
    g = torch.Generator().manual_seed(seed)
    norms = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.GroupNorm, torch.nn.LayerNorm)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.2)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) * 1.5 + 0.5)
            if isinstance(m, norms) and getattr(m, "weight", None) is not None:
                m.weight.mul_(torch.rand(m.weight.shape, generator=g) + 0.5)
                if getattr(m, "bias", None) is not None:       # LayerNorm(bias=False): MetaFormer's
                    m.bias.add_(torch.randn(m.bias.shape, generator=g) * 0.1)
            if isinstance(m, (torch.nn.Linear, torch.nn.modules.conv._ConvNd)) and not bool(m.weight.any()):
                bound = 1.0 / math.sqrt(m.weight[0].numel())
                m.weight.copy_((torch.rand(m.weight.shape, generator=g) * 2 - 1) * bound)
            for name, p in m.named_parameters(recurse=False):
                if p.numel() == 0 or float(p.abs().max()) >= 1e-4:
                    continue
                if isinstance(m, (torch.nn.Linear, torch.nn.modules.conv._ConvNd) + norms):
                    # A zero scale of a block's last norm or conv (timm's zero_init_last: ResNet's bn2,
                    # RegNet's conv3.bn, NF-RegNet's conv3.gain) leaves the branch computing zeros.
                    if name != "bias" and (name != "weight" or isinstance(m, norms)):
                        p.copy_(torch.rand(p.shape, generator=g) * 0.4 + 0.1)
                    continue
                if p.dim() == 1:
                    p.copy_(torch.rand(p.shape, generator=g) * 0.4 + 0.1)
                else:
                    p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return model.eval()


class FirstOutput(torch.nn.Module):
    """HuggingFace models return a ModelOutput: the tensor a deployed model produces."""

    def __init__(self, model: torch.nn.Module, field: str):
        super().__init__()
        self.model = model
        self.field = field

    def forward(self, x, attention_mask=None):
        if attention_mask is None:
            return getattr(self.model(x), self.field)
        return getattr(self.model(x, attention_mask=attention_mask), self.field)


def _tv(name: str, **kwargs) -> Callable[[tuple], torch.nn.Module]:
    def build(shape):
        import torchvision
        return seeded(lambda: getattr(torchvision.models, name)(weights=None, **kwargs), shape)
    return build


def _timm(name: str, **kwargs) -> Callable[[tuple], torch.nn.Module]:
    def build(shape):
        import timm
        return seeded(lambda: timm.create_model(name, pretrained=False, **kwargs), shape)
    return build


def _hf(config: str, model: str, field: str, **kwargs) -> Callable[[tuple], torch.nn.Module]:
    def build(shape):
        import transformers
        cfg = getattr(transformers, config)(**kwargs)
        return seeded(lambda: FirstOutput(getattr(transformers, model)(cfg), field), shape)
    return build


def _audio(name: str, **kwargs) -> Callable[[tuple], torch.nn.Module]:
    def build(shape):
        import torchaudio.models
        return seeded(lambda: getattr(torchaudio.models, name)(**kwargs), shape)
    return build


def _timm_vit(**kwargs) -> Callable[[tuple], torch.nn.Module]:
    """timm's VisionTransformer class itself at an MCU size."""
    def build(shape):
        from timm.models.vision_transformer import VisionTransformer
        return seeded(lambda: VisionTransformer(**kwargs), shape)
    return build


def _tv_small_vit(shape):
    import torchvision
    return seeded(lambda: torchvision.models.VisionTransformer(image_size=64, patch_size=8, num_layers=2, num_heads=2,
                                                              hidden_dim=64, mlp_dim=128, num_classes=10), shape)


def _tv_small_convnext(shape):
    import torchvision
    from torchvision.models.convnext import CNBlockConfig
    blocks = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)]
    return seeded(lambda: torchvision.models.ConvNeXt(blocks, num_classes=10), shape)


def _tv_small_swin_v2(shape):
    from torchvision.models import swin_transformer as swin
    return seeded(lambda: swin.SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[1, 1], num_heads=[2, 2],
                                               window_size=[4, 4], num_classes=10, block=swin.SwinTransformerBlockV2,
                                               downsample_layer=swin.PatchMergingV2), shape)


def _hf_decoder(config: str, **kwargs) -> Callable[[tuple], torch.nn.Module]:
    """A HuggingFace decoder language model's base model at 2 layers of width 64 on token ids."""
    return _hf(config, config.replace("Config", "Model"), "last_hidden_state", vocab_size=1000, **kwargs)


MODELS: dict[str, Entry] = {
    # torchvision
    "tv_mobilenet_v2_035": Entry("torchvision", _tv("mobilenet_v2", width_mult=0.35, num_classes=10), IMAGE),
    "tv_mobilenet_v3_small_050": Entry("torchvision", _tv("mobilenet_v3_small", width_mult=0.5, num_classes=10), IMAGE),
    "tv_mobilenet_v3_large_035": Entry("torchvision", _tv("mobilenet_v3_large", width_mult=0.35, num_classes=10), IMAGE),
    "tv_mnasnet0_5": Entry("torchvision", _tv("mnasnet0_5", num_classes=10), IMAGE),
    "tv_shufflenet_v2_x0_5": Entry("torchvision", _tv("shufflenet_v2_x0_5", num_classes=10), IMAGE),
    "tv_squeezenet1_1": Entry("torchvision", _tv("squeezenet1_1", num_classes=10), IMAGE),
    "tv_resnet18": Entry("torchvision", _tv("resnet18", num_classes=10), SMALL_IMAGE),
    "tv_efficientnet_b0": Entry("torchvision", _tv("efficientnet_b0", num_classes=10), SMALL_IMAGE),
    "tv_regnet_x_400mf": Entry("torchvision", _tv("regnet_x_400mf", num_classes=10), SMALL_IMAGE),
    "tv_regnet_y_400mf": Entry("torchvision", _tv("regnet_y_400mf", num_classes=10), SMALL_IMAGE),
    "tv_googlenet": Entry("torchvision", _tv("googlenet", num_classes=10, aux_logits=False, init_weights=False),
                          SMALL_IMAGE),
    "tv_vit_tiny": Entry("torchvision", _tv_small_vit, SMALL_IMAGE, "attention"),
    "tv_convnext_small_config": Entry("torchvision", _tv_small_convnext, SMALL_IMAGE, "attention"),
    "tv_swin_v2_small_config": Entry("torchvision", _tv_small_swin_v2, SMALL_IMAGE, "attention"),
    # timm
    "timm_mobilenetv3_small_050": Entry("timm", _timm("mobilenetv3_small_050", num_classes=10), IMAGE),
    "timm_mobilenetv2_035": Entry("timm", _timm("mobilenetv2_035", num_classes=10), IMAGE),
    "timm_lcnet_050": Entry("timm", _timm("lcnet_050", num_classes=10), IMAGE),
    "timm_mnasnet_small": Entry("timm", _timm("mnasnet_small", num_classes=10), IMAGE),
    "timm_semnasnet_050": Entry("timm", _timm("semnasnet_050", num_classes=10), IMAGE),
    "timm_spnasnet_100": Entry("timm", _timm("spnasnet_100", num_classes=10), IMAGE),
    "timm_fbnetc_100": Entry("timm", _timm("fbnetc_100", num_classes=10), IMAGE),
    "timm_hardcorenas_a": Entry("timm", _timm("hardcorenas_a", num_classes=10), IMAGE),
    "timm_tinynet_e": Entry("timm", _timm("tinynet_e", num_classes=10), IMAGE),
    "timm_efficientnet_lite0": Entry("timm", _timm("efficientnet_lite0", num_classes=10), SMALL_IMAGE),
    "timm_mixnet_s": Entry("timm", _timm("mixnet_s", num_classes=10), SMALL_IMAGE),
    "timm_ghostnet_050": Entry("timm", _timm("ghostnet_050", num_classes=10), IMAGE),
    "timm_repghostnet_050": Entry("timm", _timm("repghostnet_050", num_classes=10), IMAGE),
    "timm_resnet10t": Entry("timm", _timm("resnet10t", num_classes=10), SMALL_IMAGE),
    "timm_resnet18d": Entry("timm", _timm("resnet18d", num_classes=10), SMALL_IMAGE),
    "timm_regnetx_002": Entry("timm", _timm("regnetx_002", num_classes=10), SMALL_IMAGE),
    "timm_regnety_002": Entry("timm", _timm("regnety_002", num_classes=10), SMALL_IMAGE),
    "timm_rexnet_100": Entry("timm", _timm("rexnet_100", num_classes=10), SMALL_IMAGE),
    "timm_dla46_c": Entry("timm", _timm("dla46_c", num_classes=10), SMALL_IMAGE),
    "timm_ese_vovnet19b_slim_dw": Entry("timm", _timm("ese_vovnet19b_slim_dw", num_classes=10), SMALL_IMAGE),
    "timm_mobileone_s0": Entry("timm", _timm("mobileone_s0", num_classes=10), SMALL_IMAGE),
    "timm_repvgg_a0": Entry("timm", _timm("repvgg_a0", num_classes=10), SMALL_IMAGE),
    "timm_cs3darknet_focus_s": Entry("timm", _timm("cs3darknet_focus_s", num_classes=10), SMALL_IMAGE),
    "timm_mobilenetv4_conv_small_050": Entry("timm", _timm("mobilenetv4_conv_small_050", num_classes=10), IMAGE),
    "timm_tf_mobilenetv3_small_minimal_100": Entry("timm", _timm("tf_mobilenetv3_small_minimal_100", num_classes=10),
                                                   IMAGE),
    "timm_ghostnetv2_100": Entry("timm", _timm("ghostnetv2_100", num_classes=10), SMALL_IMAGE),
    "timm_hgnetv2_b0": Entry("timm", _timm("hgnetv2_b0", num_classes=10), SMALL_IMAGE),
    "timm_convnext_atto": Entry("timm", _timm("convnext_atto", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_mobilevit_xxs": Entry("timm", _timm("mobilevit_xxs", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_edgenext_xx_small": Entry("timm", _timm("edgenext_xx_small", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_efficientvit_m0": Entry("timm", _timm("efficientvit_m0", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_test_vit": Entry("timm", _timm("test_vit", num_classes=10), SMALL_IMAGE, "attention"),
    # ViT-tiny-like: patch 8 on 64 x 64, 4 layers of width 96.
    "timm_vit_p8_64": Entry("timm", _timm_vit(img_size=64, patch_size=8, embed_dim=96, depth=4, num_heads=3,
                                              mlp_ratio=2.0, num_classes=10), (1, 3, 64, 64), "attention"),
    # KWT-1-like keyword transformer: one token per MFCC frame (98 x 40), 12 layers of width 64, one head.
    "timm_kwt_like": Entry("timm", _timm_vit(img_size=(98, 40), patch_size=(1, 40), in_chans=1, embed_dim=64, depth=12,
                                             num_heads=1, mlp_ratio=4.0, num_classes=12), (1, 1, 98, 40),
                           "attention"),
    # Attention, MLP and hybrid families: efficient attention with bilinear resizes, LeViT's reshape_as,
    # ResMLP's addcmul, GCViT's repeat_interleave, pooling and MLP token mixers.
    "timm_efficientformerv2_s0": Entry("timm", _timm("efficientformerv2_s0", num_classes=10, img_size=64),
                                       SMALL_IMAGE, "attention"),
    "timm_levit_128s": Entry("timm", _timm("levit_128s", num_classes=10, img_size=64), SMALL_IMAGE, "attention"),
    "timm_tiny_vit_5m": Entry("timm", _timm("tiny_vit_5m_224", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_gcvit_xxtiny": Entry("timm", _timm("gcvit_xxtiny", num_classes=10, img_size=64), SMALL_IMAGE, "attention"),
    "timm_efficientvit_b0": Entry("timm", _timm("efficientvit_b0", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_mobilevitv2_050": Entry("timm", _timm("mobilevitv2_050", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_fastvit_t8": Entry("timm", _timm("fastvit_t8", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_poolformer_s12": Entry("timm", _timm("poolformer_s12", num_classes=10), SMALL_IMAGE, "attention"),
    "timm_resmlp_12": Entry("timm", _timm("resmlp_12_224", num_classes=10, img_size=64), SMALL_IMAGE, "attention"),
    "timm_mixer_s16": Entry("timm", _timm("mixer_s16_224", num_classes=10, img_size=64), SMALL_IMAGE, "attention"),
    "timm_repvit_m0_9": Entry("timm", _timm("repvit_m0_9", num_classes=10), SMALL_IMAGE),
    "timm_nf_regnet_b0": Entry("timm", _timm("nf_regnet_b0", num_classes=10), SMALL_IMAGE),
    "timm_inception_next_atto": Entry("timm", _timm("inception_next_atto", num_classes=10), SMALL_IMAGE),
    # MobileNetV4's hybrid: multi-query attention (one key / value head for all query heads).
    "timm_mobilenetv4_hybrid_medium_075": Entry("timm", _timm("mobilenetv4_hybrid_medium_075", num_classes=10),
                                                SMALL_IMAGE, "attention"),
    # HuggingFace transformers (small configs)
    "hf_swin_small_config": Entry("transformers", _hf("SwinConfig", "SwinForImageClassification", "logits",
                                                      image_size=64, patch_size=4, embed_dim=24, depths=[1, 1],
                                                      num_heads=[2, 4], window_size=4, num_labels=10), SMALL_IMAGE,
                                  "attention"),
    "hf_levit_small_config": Entry("transformers", _hf("LevitConfig", "LevitForImageClassification", "logits",
                                                       image_size=64, hidden_sizes=[32, 48, 64],
                                                       num_attention_heads=[1, 2, 2], depths=[1, 1, 1],
                                                       key_dim=[8, 8, 8], num_labels=10), SMALL_IMAGE, "attention"),
    "hf_segformer_small_config": Entry("transformers", _hf("SegformerConfig", "SegformerForSemanticSegmentation",
                                                           "logits", hidden_sizes=[16, 32, 40, 64], depths=[1, 1, 1, 1],
                                                           num_attention_heads=[1, 1, 2, 2], decoder_hidden_size=32,
                                                           num_labels=4), SMALL_IMAGE, "attention"),
    "hf_mobilenet_v1_025": Entry("transformers", _hf("MobileNetV1Config", "MobileNetV1ForImageClassification",
                                                     "logits", depth_multiplier=0.25, num_labels=10, image_size=96),
                                 IMAGE),
    "hf_mobilenet_v2_035": Entry("transformers", _hf("MobileNetV2Config", "MobileNetV2ForImageClassification",
                                                     "logits", depth_multiplier=0.35, num_labels=10, image_size=96),
                                 IMAGE),
    "hf_resnet_small": Entry("transformers", _hf("ResNetConfig", "ResNetForImageClassification", "logits",
                                                 embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
                                                 num_labels=10), SMALL_IMAGE),
    "hf_regnet_small": Entry("transformers", _hf("RegNetConfig", "RegNetForImageClassification", "logits",
                                                 embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
                                                 groups_width=8, num_labels=10), SMALL_IMAGE),
    "hf_convnextv2_small_config": Entry("transformers", _hf("ConvNextV2Config", "ConvNextV2ForImageClassification",
                                                            "logits", hidden_sizes=[16, 32, 64, 128],
                                                            depths=[1, 1, 1, 1], num_labels=10), SMALL_IMAGE,
                                        "attention"),
    "hf_mobilevit_small_config": Entry("transformers", _hf("MobileViTConfig", "MobileViTForImageClassification",
                                                           "logits", image_size=64, hidden_sizes=[32, 48, 64],
                                                           neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
                                                           num_labels=10), SMALL_IMAGE, "attention"),
    # A BERT encoder on 32 token ids (int64 as tokenizers give them): embedding lookups at run time.
    "hf_bert_2layer": Entry("transformers", _hf("BertConfig", "BertModel", "last_hidden_state", vocab_size=1000,
                                                hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                intermediate_size=128, max_position_embeddings=64),
                            (1, 32), "attention", vocabulary=1000),
    # Decoder language models on 32 token ids (one call, no cache): Llama (hand-written RMSNorm, rotary
    # embeddings, grouped-query attention, causal mask), GPT-2 (Conv1D, finfo.min fill), GPT-Neo (local
    # attention window and an additive mask), Bloom (ALiBi through baddbmm); RoBERTa's position ids
    # computed from its token ids.
    "hf_llama_2layer": Entry("transformers", _hf_decoder("LlamaConfig", hidden_size=64, intermediate_size=128,
                                                         num_hidden_layers=2, num_attention_heads=4,
                                                         num_key_value_heads=2, max_position_embeddings=64),
                             (1, 32), "attention", vocabulary=1000),
    # The same two with the tokenizer's attention_mask as a second input (padding masked at run time).
    "hf_bert_2layer_masked": Entry("transformers", _hf("BertConfig", "BertModel", "last_hidden_state", vocab_size=1000,
                                                       hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                       intermediate_size=128, max_position_embeddings=64),
                                   (1, 32), "attention", vocabulary=1000, attention_mask=True),
    "hf_llama_2layer_masked": Entry("transformers", _hf_decoder("LlamaConfig", hidden_size=64, intermediate_size=128,
                                                                num_hidden_layers=2, num_attention_heads=4,
                                                                num_key_value_heads=2, max_position_embeddings=64),
                                    (1, 32), "attention", vocabulary=1000, attention_mask=True),
    "hf_gpt2_2layer": Entry("transformers", _hf_decoder("GPT2Config", n_embd=64, n_layer=2, n_head=4, n_positions=64,
                                                        bos_token_id=0, eos_token_id=0),
                            (1, 32), "attention", vocabulary=1000),
    "hf_gpt_neo_2layer": Entry("transformers", _hf_decoder("GPTNeoConfig", hidden_size=64, num_layers=2, num_heads=4,
                                                           max_position_embeddings=64, window_size=8,
                                                           attention_types=[[["global", "local"], 1]],
                                                           bos_token_id=0, eos_token_id=0),
                               (1, 32), "attention", vocabulary=1000),
    "hf_bloom_2layer": Entry("transformers", _hf_decoder("BloomConfig", hidden_size=64, n_layer=2, n_head=4),
                             (1, 32), "attention", vocabulary=1000),
    "hf_roberta_2layer": Entry("transformers", _hf("RobertaConfig", "RobertaModel", "last_hidden_state",
                                                   vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                                                   num_attention_heads=4, intermediate_size=128,
                                                   max_position_embeddings=80),
                               (1, 32), "attention", vocabulary=1000),
    # HuggingFace's MobileViTV2 (patches by unfold / fold), WavLM on 0.25 s of 16 kHz audio (gated
    # relative-position bias, buckets built in place).
    "hf_mobilevitv2_050": Entry("transformers", _hf("MobileViTV2Config", "MobileViTV2ForImageClassification", "logits",
                                                    image_size=64, width_multiplier=0.5, num_labels=10),
                                SMALL_IMAGE, "attention"),
    "hf_wavlm_small_config": Entry("transformers", _hf("WavLMConfig", "WavLMModel", "last_hidden_state",
                                                       hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                                       intermediate_size=128, conv_dim=(32, 32, 32),
                                                       conv_stride=(5, 4, 4), conv_kernel=(10, 8, 8),
                                                       num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                                                       num_buckets=32, max_bucket_distance=64),
                                   (1, 4000), "attention"),
    # torchaudio
    "ta_wav2letter_mfcc": Entry("torchaudio", _audio("Wav2Letter", num_classes=12, input_type="mfcc", num_features=40),
                                (1, 40, 101)),
    "ta_conv_tasnet_small": Entry("torchaudio", _audio("ConvTasNet", num_sources=2, enc_kernel_size=16,
                                                       enc_num_feats=64, msk_kernel_size=3, msk_num_feats=32,
                                                       msk_num_hidden_feats=64, msk_num_layers=3, msk_num_stacks=1),
                                  (1, 1, 1024), "attention"),
    "ta_deepspeech_small": Entry("torchaudio", _audio("DeepSpeech", n_feature=40, n_hidden=64, n_class=12),
                                 (1, 1, 50, 40), "recurrent"),
}

# `mcu-compile tools/public_models.py:NAME`: one module-level factory per entry.
globals().update({name: entry.model for name, entry in MODELS.items()})
