"""CMSIS-NN at a pinned commit without hand work, as a connected machine gets it from GitHub: here from
a git mirror made in the test from ../shared/third_party/CMSIS-NN (file:// URL, its commit pinned
through MCU_CMSIS_NN_GIT_URL / MCU_CMSIS_NN_COMMIT). The pinned commit is what gets built (a build, a
compile's report.json, an exported project's own CMakeLists.txt); a commit the mirror does not hold
fails clearly; an unreachable URL falls back to the portable kernels with one note; a second fetch
comes from the cache."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from mcu_mlir.diagnostics import UserError
from mcu_mlir.firmware import build, cmsis_nn, run
from tiny_model_source import SOURCE

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "target_fixtures"
SNAPSHOT = Path(os.environ.get("CMSIS_NN_PATH") or ROOT.parent / "shared" / "third_party" / "CMSIS-NN")
UNREACHABLE = "file:///nonexistent/CMSIS-NN.git"
TIMES = {}   # what the fetch and the cache cost, printed at the end (pytest -s)



def _git(*args, cwd=None):
    env = {**os.environ, "GIT_AUTHOR_NAME": "mcu-mlir test", "GIT_AUTHOR_EMAIL": "test@invalid",
           "GIT_COMMITTER_NAME": "mcu-mlir test", "GIT_COMMITTER_EMAIL": "test@invalid",
           "GIT_AUTHOR_DATE": "2026-07-15T00:00:00Z", "GIT_COMMITTER_DATE": "2026-07-15T00:00:00Z"}
    proc = subprocess.run(["git", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    """(file:// URL, commit) of a bare mirror of the CMSIS-NN snapshot: its own git history when it is
    a checkout, else one commit of its files."""
    missing = [tool for tool in ("cmake", "git", "cc") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: fetching and building CMSIS-NN needs them")
    if not (SNAPSHOT / "Include" / "arm_nnfunctions.h").exists():
        pytest.skip(f"no CMSIS-NN snapshot at {SNAPSHOT} (set CMSIS_NN_PATH) to make the test's git mirror from")
    home = tmp_path_factory.mktemp("mirror")
    source = SNAPSHOT
    if not (SNAPSHOT / ".git").exists():
        source = home / "CMSIS-NN"
        shutil.copytree(SNAPSHOT, source)
        _git("init", "-q", cwd=source)
        _git("add", "-A", cwd=source)
        _git("commit", "-q", "-m", "CMSIS-NN snapshot", cwd=source)
    _git("clone", "-q", "--mirror", source, home / "CMSIS-NN.git")
    return (home / "CMSIS-NN.git").as_uri(), _git("-C", home / "CMSIS-NN.git", "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cmsis-nn-cache")


def _point_at(monkeypatch, url, commit, cache):
    monkeypatch.delenv("CMSIS_NN_PATH", raising=False)
    monkeypatch.setenv(cmsis_nn.URL_ENV, url)
    monkeypatch.setenv(cmsis_nn.COMMIT_ENV, commit)
    monkeypatch.setenv("MCU_CMSIS_NN_CACHE", str(cache))


@pytest.fixture
def from_mirror(mirror, shared_cache, monkeypatch):
    """The fetch pointed at the mirror and the module's cache; returns the commit."""
    url, commit = mirror
    _point_at(monkeypatch, url, commit, shared_cache)
    return commit


def test_the_pinned_commit_is_fetched_once_then_found_in_the_cache(mirror, tmp_path, monkeypatch):
    url, commit = mirror
    _point_at(monkeypatch, url, commit, tmp_path / "cache")
    first = cmsis_nn.fetch()
    assert (first.source, first.commit, first.from_cache) == ("fetched", commit, False)
    assert first.path == tmp_path / "cache" / commit
    assert cmsis_nn.checkout_commit(first.path) == commit
    monkeypatch.setenv(cmsis_nn.URL_ENV, UNREACHABLE)   # the cache alone: nothing is fetched again
    second = cmsis_nn.fetch()
    assert (second.path, second.from_cache) == (first.path, True)
    TIMES["fetch from the mirror"], TIMES["found in the cache"] = first.seconds, second.seconds


def test_a_commit_the_url_does_not_hold_fails_clearly(mirror, tmp_path, monkeypatch):
    url, _ = mirror
    wrong = "0123456789abcdef0123456789abcdef01234567"
    _point_at(monkeypatch, url, wrong, tmp_path / "cache")
    with pytest.raises(UserError, match=f"holds no commit {wrong}") as err:
        cmsis_nn.resolve()                       # an error, not a quiet fall back to the portable kernels
    assert not isinstance(err.value, cmsis_nn.Unreachable)
    assert not (tmp_path / "cache" / wrong).exists()
    monkeypatch.setenv(cmsis_nn.COMMIT_ENV, "99f736a")
    with pytest.raises(UserError, match="not a full 40-digit commit hash"):
        cmsis_nn.fetch()


def test_a_cached_checkout_at_another_commit_is_refused(mirror, tmp_path, monkeypatch):
    url, commit = mirror
    other = "fedcba9876543210fedcba9876543210fedcba98"
    _point_at(monkeypatch, url, commit, tmp_path / "cache")
    shutil.copytree(cmsis_nn.fetch().path, tmp_path / "cache" / other)
    monkeypatch.setenv(cmsis_nn.COMMIT_ENV, other)
    with pytest.raises(UserError, match=f"is at {commit}, not {other}"):
        cmsis_nn.fetch()


def test_an_unreachable_url_falls_back_to_the_portable_kernels(tmp_path, monkeypatch, capsys):
    if shutil.which("cmake") is None or shutil.which("git") is None:
        pytest.skip("cmake or git not installed")
    _point_at(monkeypatch, UNREACHABLE, "9" * 40, tmp_path / "cache")
    used = cmsis_nn.resolve()
    assert used.source == "off" and "could not be fetched" in used.note and "portable C kernels" in used.note
    with pytest.raises(cmsis_nn.Unreachable):
        cmsis_nn.fetch()
    if shutil.which("cc") is None:
        return
    out = _compile_cli(tmp_path, capsys, "--emit", "elf")
    report = json.loads((out / "report.json").read_text())
    assert report["cmsis_nn"]["source"] == "off" and report["backend"] == "portable"
    notes = [line for line in capsys.readouterr().err.splitlines() if "CMSIS-NN could not be fetched" in line]
    assert len(notes) == 1 and "note:" in notes[0], notes
    assert not build.model_uses_cmsis_nn(out)


def test_cmsis_nn_off_compiles_for_the_portable_kernels(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(cmsis_nn.URL_ENV, UNREACHABLE)
    out = _compile_cli(tmp_path, capsys, "--emit", "c", "--cmsis-nn", "off")
    report = json.loads((out / "report.json").read_text())
    assert report["cmsis_nn"] == {"source": "off", "note": "--cmsis-nn off: the portable C kernels"}
    assert report["backend"] == "portable"
    assert "note: --cmsis-nn off: the portable C kernels" in capsys.readouterr().err


def test_a_build_links_the_pinned_commit(from_mirror, tmp_path):
    """A model calling CMSIS-NN, built with no CMSIS_NN_PATH: the cached checkout of the pinned commit."""
    from test_target_build_run import cmsis_add_oracle, random_inputs
    out = tmp_path / "model"
    shutil.copytree(FIXTURES / "cmsis_add", out)
    start = time.perf_counter()
    build.build(out, target="host")
    TIMES["fetch + CMSIS-NN host library + model"] = time.perf_counter() - start
    used = json.loads((out / "build-host" / "mcu_configure.json").read_text())["CMSIS_NN_PATH"]
    assert cmsis_nn.checkout_commit(Path(used)) == from_mirror
    inputs = random_inputs(5, (1, 100))
    np.testing.assert_array_equal(run.run(out, inputs, target="host").outputs_q[0], cmsis_add_oracle(*inputs)[0])


def test_a_compile_reports_the_commit_it_built(from_mirror, tmp_path, capsys):
    """report.json and the named model's README say which CMSIS-NN the firmware was built with; it
    runs bit for bit as tosa_reference_model."""
    out = _compile_cli(tmp_path, capsys, "--emit", "elf", "--name", "tiny")
    report = json.loads((out / "report.json").read_text())
    assert report["backend"] == "cmsis-nn"
    assert {k: report["cmsis_nn"][k] for k in ("source", "commit")} == {"source": "fetched", "commit": from_mirror}
    assert f"CMSIS-NN `{from_mirror}`" in (out / "README.md").read_text()
    assert from_mirror[:12] in capsys.readouterr().out
    inputs = [np.random.default_rng(3).standard_normal((1, 3, 6, 6)).astype(np.float32)]
    want = run.run_reference_outdir(out, inputs).outputs_q
    got = run.run(out, inputs, target="host").outputs_q
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_an_exported_project_fetches_the_pinned_commit_itself(from_mirror, tmp_path, capsys):
    """`--emit project`: the folder's own CMakeLists.txt gets CMSIS-NN the same way, outside mcu-mlir."""
    out = _compile_cli(tmp_path, capsys, "--emit", "project")
    pinned_commit, pinned_url = cmsis_nn.pins()
    readme, cmakelists = (out / "README.md").read_text(), (out / "CMakeLists.txt").read_text()
    assert pinned_commit in readme and pinned_url in readme and pinned_commit in cmakelists
    assert (out / "cmake" / "mcu-cmsis-nn.cmake").read_text() == cmsis_nn.module().read_text()
    build_dir = tmp_path / "project-build"
    configure = subprocess.run(["cmake", "-S", out, "-B", build_dir], capture_output=True, text=True)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert f"CMSIS-NN {from_mirror} (" in configure.stdout
    built = subprocess.run(["cmake", "--build", build_dir, "--target", "mcu_model", "cmsis-nn"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert next(build_dir.rglob("libcmsis-nn.a"), None) is not None


def _compile_cli(tmp_path, capsys, *args) -> Path:
    """mcu-compile on the tiny model for the host, in this process; returns the output directory."""
    if shutil.which("cmake") is None or shutil.which("cc") is None:
        pytest.skip("cmake or cc not installed")
    from mcu_mlir.tools import mcu_compile
    (tmp_path / "tiny.py").write_text(SOURCE)
    out = tmp_path / "out"
    code = mcu_compile.main([f"{tmp_path / 'tiny.py'}:tiny", "--input-shape", "1,3,6,6", "--target", "host",
                             "--calibration", "8", "-o", str(out), *args])
    assert code == 0, capsys.readouterr().err
    return out


def teardown_module(module):
    for what, seconds in TIMES.items():
        print(f"  {what}: {seconds:.2f} s")
