"""pytest: import the package from the source tree."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

# The same float code paths on every machine (calibration, and with it the generated C).
from mcu_mlir import cpu_paths  # noqa: E402

cpu_paths.pin()
