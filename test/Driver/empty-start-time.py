# mcu-opt on an empty TOSA function starts fast and never imports torch.
# RUN: %PYTHON %s
import subprocess
import sys
import time

src = "func.func @main(%a: tensor<1xi8>) -> tensor<1xi8> {\n  return %a : tensor<1xi8>\n}\n"
code = ("import sys, runpy; sys.argv=['mcu-opt','-']; "
        "import mcu_mlir.tools.mcu_opt as m; rc=m.main(['-', '--canonicalize']); "
        "assert 'torch' not in sys.modules, 'mcu-opt imported torch'; sys.exit(rc)")


def best_of(args, runs=3, stdin=""):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *args], input=stdin, text=True, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return min(times)


best = best_of(["-c", code], stdin=src)
# Loading the MLIR bindings is the floor; on a loaded machine both grow alike, so the bound is
# well under a second or, when the machine is busy, a small multiple of that floor.
floor = best_of(["-c", "from mcu_mlir import _mlir"])
print(f"mcu-opt start-up: {best:.3f} s (MLIR bindings alone: {floor:.3f} s)")
assert best < max(1.0, 2.5 * floor), f"mcu-opt took {best:.2f} s on an empty function ({floor:.2f} s to load MLIR)"
