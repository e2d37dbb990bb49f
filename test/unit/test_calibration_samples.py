"""Calibration inputs as users hold them: counts, .npz / .npy files with samples stacked along the
batch dimension or on a new leading one, and directories of such files."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mcu_mlir.diagnostics import UserError  # noqa: E402
from mcu_mlir.frontend import DEFAULT_CALIBRATION_SAMPLES, calibration_samples  # noqa: E402

EXAMPLE = (torch.zeros(1, 3, 4, 4),)


def test_default_is_32_random_samples_with_a_warning(monkeypatch):
    from mcu_mlir import diagnostics
    monkeypatch.setattr(diagnostics, "tool", "")   # from Python (a command-line run in this process sets it)
    with pytest.warns(UserWarning, match="no calibration data") as caught:
        samples = calibration_samples(None, EXAMPLE)
    assert DEFAULT_CALIBRATION_SAMPLES == 32 and len(samples) == 32
    assert all(s[0].shape == (1, 3, 4, 4) for s in samples)
    # From Python the advice names the keyword, not the command line's option.
    message = str(caught[0].message)
    assert "calibration= an .npz file" in message and "--calibration" not in message


def test_the_warning_names_the_command_lines_option(monkeypatch):
    from mcu_mlir import diagnostics
    monkeypatch.setattr(diagnostics, "tool", "mcu-compile")
    with pytest.warns(UserWarning) as caught:
        calibration_samples(None, EXAMPLE)
    message = str(caught[0].message)
    assert "(mcu-compile --calibration FILE.npz|DIR)" in message and "calibration=" not in message


def test_samples_stacked_along_the_batch_dimension(tmp_path):
    data = np.random.default_rng(0).standard_normal((5, 3, 4, 4)).astype(np.float32)
    np.savez(tmp_path / "cal.npz", input0=data)
    samples = calibration_samples(str(tmp_path / "cal.npz"), EXAMPLE)
    assert len(samples) == 5
    for i, (x,) in enumerate(samples):
        assert x.shape == (1, 3, 4, 4) and np.array_equal(x.numpy()[0], data[i])


def test_batch_of_two_takes_pairs_and_new_leading_dimension_still_works(tmp_path):
    data = np.arange(6 * 3 * 4 * 4, dtype=np.float32).reshape(6, 3, 4, 4)
    np.save(tmp_path / "pairs.npy", data)
    pairs = calibration_samples(str(tmp_path / "pairs.npy"), (torch.zeros(2, 3, 4, 4),))
    assert len(pairs) == 3 and np.array_equal(pairs[1][0].numpy(), data[2:4])
    np.savez(tmp_path / "lead.npz", input0=data[:, None])
    assert len(calibration_samples(str(tmp_path / "lead.npz"), EXAMPLE)) == 6


def test_directory_of_files(tmp_path):
    rng = np.random.default_rng(1)
    for i in range(3):
        np.save(tmp_path / f"sample{i}.npy", rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
    (tmp_path / "README.txt").write_text("not a sample")
    assert len(calibration_samples(str(tmp_path), EXAMPLE)) == 6


def test_wrong_shape_names_the_array(tmp_path):
    np.savez(tmp_path / "bad.npz", input0=np.zeros((4, 3, 5, 5), np.float32))
    with pytest.raises(UserError, match=r"calibration array 'input0' .* \(4, 3, 5, 5\)"):
        calibration_samples(str(tmp_path / "bad.npz"), EXAMPLE)
