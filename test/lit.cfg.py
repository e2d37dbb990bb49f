# lit configuration for mcu-mlir: FileCheck tests of mcu-opt, passes and emitted C.
import os
import shutil
import sys

import lit.formats

config.name = "mcu-mlir"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs", "unit", "e2e", "conftest.py", "__pycache__"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

root = os.path.dirname(config.test_source_root)
python = sys.executable


def tool(name):
    """A tool from the same environment as this Python, else from PATH."""
    candidate = os.path.join(os.path.dirname(python), name)
    found = candidate if os.path.exists(candidate) else shutil.which(name)
    if not found:
        lit_config.fatal(f"'{name}' not found: run tools/setup.sh")
    return found


# The package is imported from the source tree, so tests see uncommitted changes without reinstalling.
config.environment["PYTHONPATH"] = os.path.join(root, "python") + os.pathsep + os.environ.get("PYTHONPATH", "")
for var in ("CMSIS_NN_PATH", "HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(("%PYTHON", python))
config.substitutions.append(("mcu-opt", f"{python} -m mcu_mlir.tools.mcu_opt"))
config.substitutions.append(("FileCheck", tool("filecheck")))
config.substitutions.append(("not ", f"{python} {os.path.join(root, 'tools', 'not.py')} "))
config.substitutions.append(("%cc", shutil.which("cc") or "cc"))
config.substitutions.append(("%include", os.path.join(root, "include")))
config.substitutions.append(("%lib", os.path.join(root, "lib")))

if shutil.which("arm-none-eabi-gcc"):
    config.available_features.add("arm-gcc")
if os.environ.get("CMSIS_NN_PATH"):
    config.available_features.add("cmsis-nn")
