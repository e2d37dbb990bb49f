"""Which CMSIS-NN a build uses: the user's checkout, else the commit mcu-mlir is tested with.

    used = resolve(path)      # CmsisNN(source="path" | "fetched" | "off", path, commit, ...)

A checkout given (--cmsis-nn-path, $CMSIS_NN_PATH) wins. Without one, cmake/mcu-cmsis-nn.cmake
fetches the pinned commit with CMake's FetchContent into the cache (<cache>/cmsis-nn/<commit>), once;
MCU_CMSIS_NN_GIT_URL and MCU_CMSIS_NN_COMMIT point it at a mirror. When the URL cannot be reached
(offline), or with --cmsis-nn off, there is none: source "off" and one note, the portable kernels.
A URL that holds another commit than the one asked for is an error, never silently built.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import UserError
from . import qemu, sources

URL_ENV, COMMIT_ENV = "MCU_CMSIS_NN_GIT_URL", "MCU_CMSIS_NN_COMMIT"
_PIN_RE = re.compile(r'^set\(MCU_CMSIS_NN_PINNED_(COMMIT|URL) "([^"]+)"\)', re.M)
_PROVENANCE_RE = re.compile(r"\bcommit ([0-9a-f]{40})\b")


@dataclass(frozen=True)
class CmsisNN:
    source: str                 # "path" (a checkout given), "fetched" (the pinned commit), "off"
    path: Path | None = None
    commit: str | None = None   # None: a checkout whose commit nothing records
    url: str | None = None      # fetched: where from
    from_cache: bool = False    # fetched: found in the cache, no fetch this time
    seconds: float = 0.0        # fetched: how long finding or fetching it took
    note: str | None = None     # off: why, and what runs instead

    def as_report(self) -> dict:
        """report.json's `cmsis_nn`."""
        fields = {"source": self.source, "commit": self.commit, "path": str(self.path) if self.path else None,
                  "url": self.url, "from_cache": self.from_cache if self.source == "fetched" else None,
                  "fetch_seconds": round(self.seconds, 3) if self.source == "fetched" else None, "note": self.note}
        return {key: value for key, value in fields.items() if value is not None}


def describe(used: dict) -> str:
    """One line for a person on report.json's `cmsis_nn`: which CMSIS-NN, or why none."""
    if used["source"] == "off":
        return f"none: {used['note']}"
    commit = used.get("commit") or "(commit unknown)"
    if used["source"] == "path":
        return f"{commit} from CMSIS_NN_PATH={used['path']}"
    if used.get("from_cache"):
        return f"{commit}, the pinned commit, found in the cache"
    return f"{commit}, the pinned commit, fetched from {used['url']} in {used['fetch_seconds']:.1f} s"


class Unreachable(UserError):
    """The URL could not be reached: no CMSIS-NN this time (offline)."""


def module() -> Path:
    """cmake/mcu-cmsis-nn.cmake: the pin, and the fetch every build (and an exported project) runs."""
    return sources.root() / "cmake" / "mcu-cmsis-nn.cmake"


def pins() -> tuple[str, str]:
    """(commit, git URL) the module pins: the commit mcu-mlir is tested with."""
    found = dict(_PIN_RE.findall(module().read_text()))
    return found["COMMIT"], found["URL"]


def pinned() -> tuple[str, str]:
    """(commit, git URL) a build fetches: the module's pin unless the environment names others
    (MCU_CMSIS_NN_COMMIT, MCU_CMSIS_NN_GIT_URL)."""
    commit, url = pins()
    return os.environ.get(COMMIT_ENV) or commit, os.environ.get(URL_ENV) or url


def checkout_commit(path: Path) -> str | None:
    """The commit a CMSIS-NN checkout is at: git's HEAD, else what a PROVENANCE file records."""
    if shutil.which("git") and (path / ".git").exists():
        proc = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout.strip()
    provenance = path / "PROVENANCE"
    found = _PROVENANCE_RE.search(provenance.read_text()) if provenance.is_file() else None
    return found.group(1) if found else None


def cache_dir() -> Path:
    """Where fetched commits are kept: $MCU_CMSIS_NN_CACHE, else the mcu-mlir cache's cmsis-nn/."""
    return Path(os.environ.get("MCU_CMSIS_NN_CACHE") or qemu.cache_dir() / "cmsis-nn")


def fetch() -> CmsisNN:
    """The pinned commit, from the cache or fetched into it (cmake/mcu-cmsis-nn.cmake). Raises
    Unreachable when the URL cannot be reached, UserError when it holds another commit."""
    if shutil.which("cmake") is None:
        raise Unreachable("cmake is not installed, so CMSIS-NN cannot be fetched")
    commit, url = pinned()
    cmd = ["cmake", f"-D{URL_ENV}={url}", f"-D{COMMIT_ENV}={commit}", f"-DMCU_CMSIS_NN_CACHE={cache_dir()}",
           "-P", str(module())]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    done = re.search(r"^mcu-cmsis-nn: (fetched|cached) (.+)$", log, re.M)
    if proc.returncode == 0 and done:
        return CmsisNN("fetched", Path(done.group(2)), commit, url, from_cache=done.group(1) == "cached",
                       seconds=seconds)
    error = re.search(r"^mcu-cmsis-nn-error: (\w+): (.+)$", log, re.M)
    if error and error.group(1) == "unreachable":
        raise Unreachable(f"CMSIS-NN could not be fetched: {error.group(2)}")
    what = error.group(2) if error else log.strip()[-2000:]
    raise UserError(f"CMSIS-NN at the pinned commit {commit}: {what} (set {COMMIT_ENV} and {URL_ENV} to a commit and a "
                    f"git URL that holds it, or CMSIS_NN_PATH to a CMSIS-NN checkout)")


def given(path: str | os.PathLike | None = None) -> CmsisNN | None:
    """The checkout the user named (`path`, else $CMSIS_NN_PATH), if any."""
    path = path or os.environ.get("CMSIS_NN_PATH")
    if not path:
        return None
    path = Path(path).expanduser().resolve()
    if not (path / "Include" / "arm_nnfunctions.h").exists():
        raise UserError(f"CMSIS_NN_PATH={path} is not a CMSIS-NN checkout (no Include/arm_nnfunctions.h)")
    return CmsisNN("path", path, checkout_commit(path))


def resolve(path: str | os.PathLike | None = None, mode: str = "auto") -> CmsisNN:
    """The CMSIS-NN a build uses: a checkout given, else (mode auto) the pinned commit; none (source
    "off", with a note saying so) with mode off or when the URL cannot be reached."""
    if mode == "off":
        return CmsisNN("off", note="--cmsis-nn off: the portable C kernels")
    mine = given(path)
    if mine is not None:
        return mine
    try:
        return fetch()
    except Unreachable as err:
        return CmsisNN("off", note=f"{err}; using the portable C kernels (set CMSIS_NN_PATH to a "
                                   "CMSIS-NN checkout for CMSIS-NN)")
