"""Memory planning, C emission, building and running on the host or a Cortex-M under QEMU.

Import-light on purpose: `mcu-opt` imports this package, so submodules load on first use
(`from mcu_mlir.target import build, run, qemu`).
"""
