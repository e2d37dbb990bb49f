"""The wheel carries the C side of mcu-mlir (CMakeLists.txt, cmake/, include/, lib/ and the QEMU
plugin's source) inside the package, as mcu_mlir/csrc, where mcu_mlir.firmware.sources finds it: an
installed mcu-compile builds C from any folder. A checkout or an editable install uses its own tree."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
C_SIDE = ("CMakeLists.txt", "cmake", "include", "lib", "tools/qemu-plugin")


class BuildPyWithCSources(build_py):
    def run(self):
        if getattr(self, "editable_mode", False):
            super().run()
            return   # the package finds the checkout it is installed from
        # An in-tree build/ keeps what earlier builds put there: a module moved or deleted since
        # would ship again.
        shutil.rmtree(Path(self.build_lib) / "mcu_mlir", ignore_errors=True)
        super().run()
        into = Path(self.build_lib) / "mcu_mlir" / "csrc"
        for rel in C_SIDE:
            source, target = HERE / rel, into / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source, target)


setup(cmdclass={"build_py": BuildPyWithCSources})
