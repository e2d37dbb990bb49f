"""Loading what a compile needs before the model: torch's own lazily imported modules (timed
apart from the compile) and a model built by a `module:function` factory."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
import warnings


from ...diagnostics import UserError


# torch modules that torch.export and PT2E import on first use (module or function level).
_TORCH_MODULES = (
    "torch.export._trace", "torch._export.non_strict_utils", "torch._functorch.aot_autograd",
    "torch._inductor.compiler_bisector", "torch._inductor.sizevars",
    "torch._inductor.fx_passes.dedupe_symint_uses",
    "torch._export.passes.replace_set_grad_with_hop_pass",
    "torch._export.passes.replace_autocast_with_hop_pass", "torch._export.passes._node_metadata_hook",
    "torch._subclasses.schema_check_mode", "torch.fx.experimental.validator",
    "torchao.quantization.pt2e.quantize_pt2e", "torchao.quantization.pt2e.utils",
)


def preload_torch() -> float:
    """Imports what torch.export and torchao's PT2E load on first use; returns the seconds spent.

    This is torch's own start-up, paid once per process (0 s afterwards), so the driver reports it
    apart from the compile time of a model. A module this torch does not have is skipped.
    """
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _TORCH_MODULES:
            if name not in sys.modules:
                try:
                    importlib.import_module(name)
                except ImportError:
                    pass
    return time.perf_counter() - t0


def load_factory(spec: str):
    """`path/file.py:FACTORY` (or `package.module:FACTORY`) -> the nn.Module FACTORY() returns."""
    import torch

    from . import python_only_imports
    python_only_imports.install()
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UserError(f"'{spec}': expected FILE.py:FACTORY")
    try:
        if path.endswith(".py") or os.path.sep in path:
            if not os.path.exists(path):
                raise UserError(f"'{path}': no such file")
            mod_name = "mcu_user_model_" + os.path.splitext(os.path.basename(path))[0]
            module_spec = importlib.util.spec_from_file_location(mod_name, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[mod_name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(path)
    except UserError:
        raise
    except Exception as e:  # the user's file failed to import
        raise UserError(f"'{path}' failed to import: {type(e).__name__}: {e}") from None
    factory = getattr(module, name, None)
    if factory is None:
        raise UserError(f"'{path}' has no '{name}'")
    try:
        model = factory() if callable(factory) and not isinstance(factory, torch.nn.Module) else factory
    except Exception as e:
        raise UserError(f"'{spec}' raised {type(e).__name__}: {e}") from None
    if not isinstance(model, torch.nn.Module):
        raise UserError(f"'{spec}' returned {type(model).__name__}, not a torch.nn.Module")
    return model
