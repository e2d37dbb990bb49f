# mcu-opt on an empty TOSA function starts fast and never imports torch.
# RUN: %PYTHON %s
import subprocess
import sys
import time

src = "func.func @main(%a: tensor<1xi8>) -> tensor<1xi8> {\n  return %a : tensor<1xi8>\n}\n"
code = ("import sys, runpy; sys.argv=['mcu-opt','-']; "
        "import mcu_mlir.tools.mcu_opt as m; rc=m.main(['-', '--canonicalize']); "
        "assert 'torch' not in sys.modules, 'mcu-opt imported torch'; sys.exit(rc)")
best = min(
    (lambda t0: (subprocess.run([sys.executable, "-c", code], input=src, text=True, check=True,
                                capture_output=True), time.perf_counter() - t0)[1])(time.perf_counter())
    for _ in range(3))
print(f"mcu-opt start-up: {best:.3f} s")
assert best < 1.0, f"mcu-opt took {best:.2f} s on an empty function"
