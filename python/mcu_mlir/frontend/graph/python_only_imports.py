"""Model libraries whose compiled extension does not load beside this torch, imported for their Python.

The registry's torchvision wheel is built against a CUDA torch and torchaudio has no build for
torch 2.13: their C++ operators (detection's nms / roi_align, audio decoding, alignment) do not
load, and the packages stop in `__init__` although their model definitions are plain Python that
torch.export traces. `install()` puts a finder in front of the two modules that fail: each still
runs as shipped, and only when it raises on the missing extension is it replaced by the state the
package itself has when built without that extension (no detection ops, no alignment). A model
that then calls one of those operators fails at that call, naming it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types


def _no_torchvision_meta_registrations(module: types.ModuleType) -> None:
    """torchvision/_meta_registrations.py registers fake kernels for torchvision::nms & co.: with
    no operators loaded there is nothing to register."""


def _torchaudio_without_extension(module: types.ModuleType) -> None:
    from torchaudio._internal.module_utils import fail_with_message

    module._IS_TORCHAUDIO_EXT_AVAILABLE = False
    module._IS_ALIGN_AVAILABLE = False
    module._IS_RIR_AVAILABLE = False
    module._check_cuda_version = lambda: None
    module.fail_if_no_align = fail_with_message("torchaudio's alignment extension did not load")
    module.fail_if_no_rir = fail_with_message("torchaudio's RIR extension did not load")


# Module -> what it is without its extension.
_FALLBACKS = {
    "torchvision._meta_registrations": _no_torchvision_meta_registrations,
    "torchaudio._extension": _torchaudio_without_extension,
}

# What a missing or mismatched extension raises while these modules run.
_EXTENSION_ERRORS = (OSError, RuntimeError, ImportError)


class _FallbackLoader(importlib.abc.Loader):
    def __init__(self, real: importlib.machinery.ModuleSpec):
        self.real = real

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        try:
            self.real.loader.exec_module(module)
        except _EXTENSION_ERRORS:
            for key in [k for k in vars(module) if not k.startswith("__")]:
                delattr(module, key)
            _FALLBACKS[module.__name__](module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in _FALLBACKS:
            return None
        real = importlib.machinery.PathFinder.find_spec(fullname, path)
        if real is None or real.loader is None:
            return None
        return importlib.util.spec_from_loader(fullname, _FallbackLoader(real), origin=real.origin,
                                               is_package=real.submodule_search_locations is not None)


def install() -> None:
    """Idempotent; call before the model's file imports torchvision, timm or torchaudio."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
