"""Name -> pass class, loaded lazily so that `mcu-opt` imports only the passes it runs.

Upstream MLIR passes are not listed here: the driver hands any name it does not know to MLIR.
"""

from __future__ import annotations

import importlib

# name -> "module:Class" (module relative to mcu_mlir.passes). One pass per file.
PASSES: dict[str, str] = {
    "mcu-verify-static-shapes": "analysis.verify_static_shapes:VerifyStaticShapes",
    "mcu-verify-integer-tosa": "analysis.verify_integer_tosa:VerifyIntegerTosa",
    "mcu-verify-tosa-spec": "analysis.verify_tosa_spec:VerifyTosaSpec",
    "mcu-verify-value-ranges": "analysis.verify_value_ranges:VerifyValueRanges",
    "mcu-heads-from-linears": "transforms.heads_from_linears:HeadsFromLinears",
    "mcu-split-sliced-convs": "transforms.split_sliced_convs:SplitSlicedConvs",
    "mcu-chunk-transposes": "transforms.chunk_transposes:ChunkTransposes",
    "mcu-patch-early-stages": "transforms.patch_early_stages:PatchEarlyStages",
    "mcu-attach-target": "transforms.attach_target:AttachTarget",
    "mcu-convert-tosa-to-cmsisnn": "conversion.convert_tosa_to_cmsisnn:ConvertTosaToCmsisNN",
    "mcu-choose-generated-kernels": "transforms.choose_generated_kernels:ChooseGeneratedKernels",
    "mcu-plan-memory": "transforms.plan_memory:PlanMemory",
    "mcu-prepare-for-emission": "transforms.prepare_for_emission:PrepareForEmission",
    "mcu-emit-c": "conversion.emit_c:EmitC",
    "mcu-fold-transposes": "transforms.fold_transposes:FoldTransposes",
    "mcu-conv1d-to-conv2d": "transforms.conv1d_to_conv2d:Conv1dToConv2d",
    "mcu-nhwc-canonicalize": "transforms.nhwc_canonicalize:NhwcCanonicalize",
}

# name -> "module:Class" of the pipeline's options (a frozen dataclass parsed like a pass's), whose
# `passes()` lists what runs: our passes as instances, upstream ones as MLIR text.
PIPELINES: dict[str, str] = {
    "mcu-tosa-to-cmsisnn-pipeline": "pipelines.backend_pipeline:TosaToCmsisnnOptions",
    "mcu-tosa-layout-pipeline": "pipelines.layout_pipeline:LayoutOptions",
}

# Upstream passes worth knowing for TOSA work; `--list-passes` shows those this MLIR build has.
UPSTREAM_PASSES: tuple[str, ...] = (
    "canonicalize", "cse", "inline", "symbol-dce", "sccp", "loop-invariant-code-motion",
    "func.func(tosa-layerwise-constant-fold)", "func.func(tosa-reduce-transposes)",
    "func.func(tosa-optional-decompositions)", "func.func(tosa-infer-shapes)",
    "func.func(tosa-make-broadcastable)", "tosa-validate", "tosa-attach-target",
    "tosa-convert-integer-type-to-signless", "tosa-narrow-i64-to-i32",
)


def _load(table: dict[str, str], name: str):
    module_name, _, attr = table[name].partition(":")
    module = importlib.import_module(f"{__package__}.{module_name}")
    return getattr(module, attr)


def is_ours(name: str) -> bool:
    return name in PASSES or name in PIPELINES


def get_pass(name: str):
    """The pass class registered as `name` (KeyError if none)."""
    return _load(PASSES, name)


def get_pipeline(name: str):
    return _load(PIPELINES, name)


def all_names() -> list[str]:
    return sorted(PASSES) + sorted(PIPELINES)
