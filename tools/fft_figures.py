"""docs/Frontend.md's FFT figures: HuggingFace FNet (hidden 64, 2 layers, 16 tokens), torchaudio HDemucs
(channels 4 and 8, nfft 64, depth 2) and an STFT + linear model, compiled int8 for a core: the C's
outputs against tosa_reference_model (bit-exact yes / no), the SQNR against float on a fresh input
and the compiler's own estimate, fully connected calls, instructions under QEMU.

    python tools/fft_figures.py [--target cortex-m55] [--models fnet,hdemucs8,stft_linear]
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
import warnings

from mcu_mlir import cpu_paths

cpu_paths.pin()


def _fnet():
    import torch
    from transformers import FNetConfig, FNetModel

    class FNetHidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.fnet = FNetModel(FNetConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2,
                                             intermediate_size=128, max_position_embeddings=32)).eval()

        def forward(self, ids):
            return self.fnet(ids).last_hidden_state
    import numpy as np
    ids = [np.random.default_rng(s).integers(0, 100, (1, 16)).astype(np.int64) for s in range(33)]
    return FNetHidden().eval(), torch.from_numpy(ids[0]), 32, ids[32]


def _hdemucs(channels):
    def make():
        import numpy as np
        import torch
        from torchaudio.models import HDemucs
        torch.manual_seed(0)
        model = HDemucs(sources=["a", "b"], audio_channels=1, channels=channels, growth=2, nfft=64, depth=2).eval()
        signals = [(0.3 * np.random.default_rng(s).standard_normal((1, 1, 1024))).astype(np.float32)
                   for s in range(17)]
        return model, torch.from_numpy(signals[0]), signals[:16], signals[16]
    return make


def _stft_linear():
    import numpy as np
    import torch

    class SpectrumLinear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.register_buffer("window", torch.hann_window(64))
            self.head = torch.nn.Linear(66, 16)

        def forward(self, x):
            z = torch.stft(x, 64, 32, window=self.window, center=False, return_complex=True)
            return self.head(torch.view_as_real(z).permute(0, 2, 1, 3).flatten(2))
    rng = np.random.default_rng(3)
    signals = [rng.standard_normal((1, 1024)).astype(np.float32) for _ in range(17)]
    return SpectrumLinear().eval(), torch.from_numpy(signals[0]), signals[:16], signals[16]


# Layers (by name) that are the model's FFTs, whose instructions are counted apart.
FFT_LAYERS = {"fnet": "fourier.self"}
MODELS = {"fnet": _fnet, "hdemucs4": _hdemucs(4), "hdemucs8": _hdemucs(8), "stft_linear": _stft_linear}


def measure(name: str, target: str) -> dict:
    import numpy as np
    import torch

    import mcu_mlir
    from mcu_mlir.firmware import run
    model, example, calibration, fresh = MODELS[name]()
    with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        result = mcu_mlir.compile(model, (example,), target=target, quantize="int8", emit="c", output_dir=out,
                                  calibration=calibration)
        seconds = time.perf_counter() - t0
        want = run.run_reference_outdir(out, [fresh])
        counting = target != "host"
        got = run.run(out, [fresh], target=target, count_instructions=counting)
        exact = bool(np.array_equal(got.outputs_q[0], want.outputs_q[0].reshape(got.outputs_q[0].shape)))
        with torch.no_grad():
            f = model(torch.from_numpy(fresh)).numpy()
        q = got.outputs_float[0].reshape(f.shape)
        rows = result.report["quantization"]["layer_sqnr"]
        layers = (got.instructions or {}).get("layers", [])
        fft = sum(layer["instructions"] for layer in layers if name in FFT_LAYERS and FFT_LAYERS[name] in layer["name"])
        kernels = collections.Counter(op["kernel"] for op in result.report["ops"])
        return {"model": name, "bit_exact": exact, "compile_s": round(seconds, 1),
                "sqnr_db": round(float(10 * np.log10((f ** 2).sum() / ((f - q) ** 2).sum())), 1),
                "estimate_db": min(r["sqnr_db"] for r in rows if r["kind"] == "output"),
                "fully_connected": sum(v for k, v in kernels.items() if "fully_connected" in k),
                "calls": sum(v for k, v in kernels.items() if k != "view"),
                "instructions": (got.instructions or {}).get("total") if counting else None,
                "fft_instructions": fft or None,
                "arena": result.report["arena_bytes"], "weights": result.report["weights_bytes"]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cortex-m55")
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args(argv)
    from mcu_mlir.frontend.graph import python_only_imports
    python_only_imports.install()
    print("| model | bit-exact | SQNR (fresh input) | estimate | FC calls | calls | instructions | of them FFT | "
          "arena | weights |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        r = measure(name, args.target)
        print(f"| {r['model']} | {'yes' if r['bit_exact'] else 'NO'} | {r['sqnr_db']} dB | {r['estimate_db']} dB | "
              f"{r['fully_connected']} | {r['calls']} | {r['instructions'] or '-'} | {r['fft_instructions'] or '-'} | "
              f"{r['arena']:,} B | "
              f"{r['weights']:,} B |", flush=True)


if __name__ == "__main__":
    main()
