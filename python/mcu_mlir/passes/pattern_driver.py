"""How the project's passes apply rewrite patterns: the bindings' greedy driver, configured as an
ordered walk.

Top-down, so patterns see ops in program order (a fused unit's root before the ops after it);
no folding, constant CSE or region simplification, so the IR changes only where a pattern says.
"""

from __future__ import annotations

from torch_mlir import rewrite  # noqa: E402  (bindings' own module)
from torch_mlir.rewrite import RewritePatternSet  # noqa: E402  (bindings' own module)

__all__ = ["RewritePatternSet", "apply_patterns", "driver_config"]


def driver_config() -> rewrite.GreedyRewriteConfig:
    config = rewrite.GreedyRewriteConfig()
    config.use_top_down_traversal = True
    config.enable_folding = False
    config.enable_constant_cse = False
    config.region_simplification_level = rewrite.GreedySimplifyRegionLevel.DISABLED
    return config


def apply_patterns(module, patterns: rewrite.RewritePatternSet) -> None:
    """Applies `patterns` (functions returning a falsy value when they rewrote) to `module`."""
    rewrite.apply_patterns_and_fold_greedily(module, patterns.freeze(), driver_config())
