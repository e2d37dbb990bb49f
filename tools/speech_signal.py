"""A spoken test signal for the streaming models: espeak-ng speech resampled to 16 kHz by sox,
between stretches of silence, with white noise over all of it. Needs the Debian packages espeak-ng
and sox (tools/setup.sh installs them). The labels say which samples hold speech (espeak-ng's
output above a small threshold), for per-chunk speech / non-speech ground truth."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import wave

import numpy as np

RATE = 16000
TEXT = "turn on the kitchen lights. what is the weather like tomorrow morning? set a timer for ten minutes."


def available() -> bool:
    return shutil.which("espeak-ng") is not None and shutil.which("sox") is not None


def speech(text: str = TEXT) -> np.ndarray:
    """espeak-ng's voice saying `text`, 16 kHz mono float in [-1, 1]."""
    with tempfile.TemporaryDirectory(prefix="mcu-speech-") as tmp:
        raw, resampled = os.path.join(tmp, "raw.wav"), os.path.join(tmp, "16k.wav")
        subprocess.run(["espeak-ng", "-w", raw, text], check=True, capture_output=True)
        subprocess.run(["sox", raw, "-r", str(RATE), "-c", "1", "-b", "16", resampled], check=True, capture_output=True)
        with wave.open(resampled) as f:
            data = np.frombuffer(f.readframes(f.getnframes()), dtype=np.int16)
    return data.astype(np.float32) / 32768.0


def mixture(seed: int = 0, silence_s: float = 1.0, snr_db: float = 20.0) -> tuple[np.ndarray, np.ndarray]:
    """(signal, speech mask): silence, the speech, silence, the speech again quieter, silence; white
    noise at `snr_db` below the speech's power over everything."""
    rng = np.random.default_rng(seed)
    voice = speech()
    gap = np.zeros(int(silence_s * RATE), np.float32)
    clean = np.concatenate([gap, voice, gap, 0.5 * voice, gap])
    mask = np.abs(clean) > 0.01
    power = float(np.mean(voice ** 2))
    noise = rng.standard_normal(clean.shape).astype(np.float32) * np.sqrt(power / 10 ** (snr_db / 10))
    return (clean + noise).astype(np.float32), mask


def chunks(signal: np.ndarray, size: int = 512) -> list[np.ndarray]:
    n = len(signal) // size
    return [signal[i * size:(i + 1) * size].reshape(1, size) for i in range(n)]
