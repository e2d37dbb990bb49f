#!/usr/bin/env python3
"""Benchmark (not a test): the KWS depthwise 3x3 layer 1 on Cortex-M4 under QEMU, CMSIS-NN vs dw3x3_s8.c.

Compiles the MLPerf Tiny KWS model with mcu-compile, copies its model.c, swaps layer 1's
arm_depthwise_conv_wrapper_s8 call for dw3x3_run (tables computed on the host by dw3x3_prepare from the
model's own constants), runs both firmwares with mcu-run --count-instructions on random inputs, and checks
the outputs are equal. Usage: measure.py WORKDIR [N_INPUTS]
Env: PATH with /work/main/.venv/bin, CMSIS_NN_PATH.
"""
import os, re, shutil, subprocess, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.environ.get("KWS_TFLITE", "/work/shared/models/mlperf_tiny/kws_ref_model.tflite")
LAYER = 1


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r.stdout + r.stderr


def array(src, name):
    m = re.search(r"static const \w+ %s\[\d+\][^=]*=.*?;\n" % re.escape(name), src, re.S)
    return m.group(0)


def gen_tables(src, work):
    names = [f"mcu_const2_layer{LAYER}_filter", f"mcu_const3_layer{LAYER}_bias",
             f"layer{LAYER}_multiplier", f"layer{LAYER}_shift"]
    call = re.search(r"arm_depthwise_conv_wrapper_s8\(&layer%d_ctx.*?\);" % LAYER, src).group(0)
    params = re.search(r"layer%d_params = \{\.input_offset = (-?\d+), \.output_offset = (-?\d+)" % LAYER, src)
    consts = "\n".join(array(src, n) for n in names)
    prog = f"""#include <stdio.h>
#include "dw3x3_s8.h"
{consts}
static dw3x3_tables t;
int main(void) {{
  if (dw3x3_prepare(&t, {names[0]}, {names[1]}, {names[2]}, {names[3]}, {params.group(1)}, {params.group(2)})) return 1;
  const int32_t *p = (const int32_t *)&t; unsigned n = sizeof t / 4;
  printf("static const dw3x3_tables dw_layer{LAYER}_tables __attribute__((aligned(8))) = {{{{");
  for (unsigned i = 0; i < n; i++) printf("%s%ld", i ? "," : "", (long)p[i]);
  printf("}}}};\\n");
  return 0;
}}
"""
    # the tables are plain int32 arrays: emit them flat through a union-free cast of the first member
    prog = prog.replace("static const dw3x3_tables dw_layer", "static const union { int32_t w[sizeof(dw3x3_tables) / 4]; dw3x3_tables t; } dw_layer")
    gen_c = os.path.join(work, "gen_tables.c")
    with open(gen_c, "w") as f:
        f.write(prog)
    exe = os.path.join(work, "gen_tables")
    run(["gcc", "-O1", "-I", HERE, gen_c, os.path.join(HERE, "dw3x3_s8.c"), "-o", exe])
    return run([exe]), call


def main():
    work = os.path.abspath(sys.argv[1])
    n_inputs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    os.makedirs(work, exist_ok=True)
    ref_dir, new_dir = os.path.join(work, "kws"), os.path.join(work, "kws_dw3x3")
    if not os.path.exists(os.path.join(ref_dir, "model.c")):
        run(["mcu-compile", MODEL, "--target", "cortex-m4", "--backend", "cmsis-nn", "--emit", "elf", "-o", ref_dir])
    shutil.rmtree(new_dir, ignore_errors=True)
    shutil.copytree(ref_dir, new_dir, ignore=shutil.ignore_patterns("build-*"))
    src = open(os.path.join(ref_dir, "model.c")).read()
    tables, call = gen_tables(src, work)
    with open(os.path.join(new_dir, "dw_tables.h"), "w") as f:
        f.write('#include "dw3x3_s8.h"\n' + tables)
    for n in ("dw3x3_s8.h", "dw3x3_s8.c"):
        shutil.copy(os.path.join(HERE, n), new_dir)
    src = src.replace('#include "arm_nnfunctions.h"\n',
                      '#include "arm_nnfunctions.h"\n#include "dw3x3_s8.c"\n#include "dw_tables.h"\n', 1)
    src = src.replace(call, f"(dw3x3_run(&dw_layer{LAYER}_tables.t, (const int8_t *)(arena + 0), (int8_t *)(arena + 8000)), 0);")
    with open(os.path.join(new_dir, "model.c"), "w") as f:
        f.write(src)

    # a self-check firmware: layer 1 runs CMSIS-NN and dw3x3_run on the model's own activations and compares,
    # then host_test.c's random tests run on the target (DSP forms of both); a mismatch fails the run
    chk_dirs = []
    for fold in (1, 0):  # DW_OUT_OFFSET_AT_ACT_MIN on (the KWS layer's case) and off (the general requantisation)
        chk_dir = os.path.join(work, f"kws_selfcheck{fold}")
        shutil.rmtree(chk_dir, ignore_errors=True)
        shutil.copytree(new_dir, chk_dir, ignore=shutil.ignore_patterns("build-*"))
        shutil.copy(os.path.join(HERE, "host_test.c"), chk_dir)
        chk = open(os.path.join(ref_dir, "model.c")).read()
        head = ('#include "arm_nnfunctions.h"\n#define DW_OUT_OFFSET_AT_ACT_MIN %d\n#include "dw3x3_s8.c"\n'
                '#include "dw_tables.h"\n#define DW3X3_SELFTEST 1\n#define NTEST %d\n#include "host_test.c"\n'
                'static int8_t dw_check[DW_H * DW_W * DW_C];\n' % (fold, int(os.environ.get("NTEST", "60"))))
        chk = chk.replace('#include "arm_nnfunctions.h"\n', head, 1)
        chk = chk.replace(call, call + f" if (status == 0) {{ dw3x3_run(&dw_layer{LAYER}_tables.t, (const int8_t *)(arena + 0), dw_check);"
                          " if (memcmp(dw_check, arena + 8000, sizeof dw_check)) return 90; if (dw3x3_selftest()) return 91; }")
        with open(os.path.join(chk_dir, "model.c"), "w") as f:
            f.write(chk)
        chk_dirs.append(chk_dir)

    rng = np.random.default_rng(38)
    exact = 0
    counts = {}
    for i in range(n_inputs):
        x = rng.uniform(-1.0, 1.0, size=(1, 49, 10, 1)).astype(np.float32) * (10.0 if i % 2 else 60.0)
        inp = os.path.join(work, f"in{i}.npz")
        np.savez(inp, input0=x)
        outs = {}
        for tag, d in (("cmsis", ref_dir), ("dw3x3", new_dir)):
            o = os.path.join(work, f"out_{tag}{i}.npz")
            txt = run(["mcu-run", d, "--inputs", inp, "--outputs", o, "--target", "cortex-m4", "--count-instructions"])
            outs[tag] = np.load(o)["output0_q"]
            if i == 0:
                counts[tag] = txt
        exact += np.array_equal(outs["cmsis"], outs["dw3x3"])
        if i == 0:  # fails (non-zero status) on any mismatch
            for chk_dir in chk_dirs:
                run(["mcu-run", chk_dir, "--inputs", inp, "--outputs", os.path.join(work, "out_chk.npz"), "--target", "cortex-m4"])
            print("self-check firmware on cortex-m4: layer 1 equal on the model's activations, random tests passed")
    for tag, txt in counts.items():
        print(f"== {tag}\n{txt}")
    print(f"bit-exact: {exact}/{n_inputs} inputs")


if __name__ == "__main__":
    main()
