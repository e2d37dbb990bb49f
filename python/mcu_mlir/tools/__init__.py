"""Command-line tools: mcu-opt, mcu-compile, mcu-run."""
