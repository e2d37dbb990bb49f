"""mcu-mlir passes: one per file, registered by name in `registry`."""
