"""Generated kernel: depthwise 3x3 int8 (ch_mult 1) for DSP cores, specialised per layer.

From tools/kernel_prototypes/dw3x3_s8_kws_m4 (KWS layer 1 on Cortex-M4: 599,644 -> 189,580
instructions, bit-exact), generalised to any H / W, stride and padding: the output rows and columns
fall into classes by which of the 3 taps lie inside the image (a 1-pixel image has one class, SAME
padding three), each class its own pixel function with exactly its taps written out.

Computed at compile time (`plan`), emitted as constants:
- weights doubled (the doubling of SaturatingRoundingDoublingHighMul) and widened to int16 pairs
  per group of 4 channels and tap: (2w[c0], 2w[c2]), (2w[c1], 2w[c3]);
- per class 2 * (bias + input_offset * the sum of the weights of the taps inside the image): the
  input offset folded away, the raw int8 input multiplied;
- per channel the multiplier, K = 2^(e-1) + output_offset * 2^e and the right shift e.
Requantisation: SMMULR(2 acc, M) equals arm_nn_doubling_high_mult_no_sat(acc, M) while |2 acc| < 2^31
(checked per channel and class from the weights, bias and offsets); then TFLite's rounding divide by
2^e (midpoint away from zero) as (x + (x >> 31) + 2^(e-1)) >> e with the output offset in the same
constant. When output_offset <= the activation minimum every negative x clamps there whatever its
rounding, so the fix-up goes and SMMLAR adds K in the multiply. These are arm_nn_requantize's integers
(double rounding, CMSIS-NN's default build), so tosa_reference_model stays the oracle.

A left shift (shift > 0) is folded into the weights' and biases' doubling (as long as they stay int16
/ the sum below 2^30); no right shift only in the folded form (no rounding divide to fix up).
Refused (the CMSIS-NN call stays) where the checks fail: no right shift without the folded form,
an accumulator that could reach 2^30, C not a multiple of 4, a batch, dilation, rows too long for the LDR immediates.
Off-ARM (the host) the same C compiles to portable code computing the same integers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import costs
from ..dialects import cmsisnn

NAME = "dw3x3_s8"
OP = cmsisnn.DepthwiseConvOp
TWO31 = 1 << 31
LDR_IMMEDIATE = 4095


@dataclasses.dataclass
class Plan:
    """One layer's shape, classes and tables, all known at compile time."""
    h: int
    w: int
    c: int
    stride: tuple[int, int]
    pad_top: int
    pad_left: int
    row_runs: list          # (first output row, rows, row class)
    col_runs: list          # (first output column, columns, column class)
    row_classes: list       # tuple of the tap rows inside the image
    col_classes: list
    weights: np.ndarray     # int32 [C/4 * 9 * 2]
    bias2: np.ndarray       # int32 [row classes * column classes * C]
    requant: np.ndarray     # int32 [C * 3]
    fold: bool              # output_offset <= activation minimum: K inside SMMLAR
    act: tuple[int, int]

    def pixels_by_taps(self):
        """(pixels, taps) per class: what the cost entry counts."""
        for _, rows, rc in self.row_runs:
            for _, cols, cc in self.col_runs:
                yield rows * cols, len(self.row_classes[rc]) * len(self.col_classes[cc])


def _runs(out_size: int, in_size: int, stride: int, pad: int):
    """Runs of consecutive outputs whose taps inside the image are the same: ([(first, count,
    class)], [taps of each class])."""
    classes, runs = [], []
    for o in range(out_size):
        taps = tuple(k for k in range(3) if 0 <= o * stride - pad + k < in_size)
        if taps not in classes:
            classes.append(taps)
        cls = classes.index(taps)
        if runs and runs[-1][2] == cls and runs[-1][0] + runs[-1][1] == o:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1, cls)
        else:
            runs.append((o, 1, cls))
    return runs, classes


def _shape_problem(op) -> str | None:
    in_s, f_s, out_s = op.shape(0), op.shape(1), op.shape(0, result=True)
    if op.type_suffix() != "s8":
        return "int8 only"
    if op.int("ch_mult") != 1:
        return f"ch_mult {op.int('ch_mult')}"
    if (f_s[1], f_s[2]) != (3, 3):
        return f"a {f_s[1]}x{f_s[2]} filter"
    if in_s[0] != 1:
        return f"a batch of {in_s[0]}"
    if op.ints("dilation") != [1, 1]:
        return "dilation"
    if in_s[3] % 4:
        return f"{in_s[3]} channels, not a multiple of 4"
    if (2 * in_s[2] + 2) * in_s[3] > LDR_IMMEDIATE:
        return f"rows of {in_s[2]} x {in_s[3]} bytes: tap offsets past an LDR immediate"
    if 0 in out_s:
        return "an empty output"
    return None


def plan(op, filt: np.ndarray, bias: np.ndarray):
    """The layer's Plan, or a string saying why the kernel does not apply."""
    problem = _shape_problem(op)
    if problem:
        return problem
    _, h, w, c = op.shape(0)
    _, oh, ow, _ = op.shape(0, result=True)
    stride, pad = op.ints("stride"), op.ints("padding")     # pad: top, left, bottom, right
    in_off, out_off = op.int("input_offset"), op.int("output_offset")
    act_min, act_max = op.ints("activation")
    mult, shift = op.ints("multiplier"), op.ints("shift")
    if len(mult) == 1:
        mult, shift = mult * c, shift * c
    row_runs, row_classes = _runs(oh, h, stride[0], pad[0])
    col_runs, col_classes = _runs(ow, w, stride[1], pad[1])
    f = np.asarray(filt, np.int64).reshape(3, 3, c)
    b = np.asarray(bias, np.int64).reshape(c)
    wabs = np.abs(f).sum(axis=(0, 1))
    fold = out_off <= act_min
    shift = np.asarray(shift, np.int64)
    # arm_nn_requantize's left shift (shift > 0) multiplies the accumulator: folded into the doubling
    # of the weights and biases. Without a right shift there is no rounding divide, which only the
    # folded form (no negative fix-up) computes: K is then the output offset alone.
    left, e = np.maximum(shift, 0), np.maximum(-shift, 0)
    if (e == 0).any() and not fold:
        return "no right shift, with an output offset above the activation minimum"
    if (e > 31).any() or (np.abs(f).max(axis=(0, 1)) << (left + 1) > 32767).any():
        return "a shift outside the widened weights' range"
    scale = np.int64(1) << (left + 1)
    bias2 = []
    for rows in row_classes:
        for cols in col_classes:
            s = b + in_off * sum(f[ky, kx] for ky in rows for kx in cols) if rows and cols else b
            # partial and final sums stay within |s| + 128 * sum|w|; SMMULR needs twice that < 2^31
            if (scale * (np.abs(s) + 128 * wabs) >= TWO31).any():
                return "an accumulator that could reach 2^30 (SMMULR on the doubled sum would overflow)"
            bias2.append(scale * s)
    k = np.where(e > 0, (np.int64(1) << np.maximum(e - 1, 0)) + out_off * (np.int64(1) << e), out_off)
    if (k > (TWO31 - 1) // 2).any() or (k < -TWO31 // 2).any():
        return "an output offset too large for the rounding constant"
    w2 = (f * scale).astype(np.int64) & 0xFFFF             # int16 bit patterns
    groups = []
    for g in range(c // 4):
        for ky in range(3):
            for kx in range(3):
                q = w2[ky, kx, 4 * g:4 * g + 4]
                groups += [int(q[0] | (q[2] << 16)), int(q[1] | (q[3] << 16))]
    weights = np.array(groups, np.uint32).view(np.int32)
    requant = np.stack([np.asarray(mult, np.int64), k, e], axis=1).astype(np.int32).reshape(-1)
    return Plan(h, w, c, (stride[0], stride[1]), pad[0], pad[1], row_runs, col_runs, row_classes, col_classes,
                weights, np.concatenate(bias2).astype(np.int32), requant, bool(fold), (act_min, act_max))


# -- C ----------------------------------------------------------------------------------------------

PREAMBLE = r"""/* Generated depthwise 3x3 int8 kernels (kernel_generation/dw3x3_s8.py): DSP instructions on
 * Cortex-M with the DSP extension, the same integers in portable C elsewhere. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
/* One tap for 4 channels as one asm block, so that GCC keeps the 4 accumulators in registers. */
#define MCU_DW3X3_TAP(in, off, wt, wof)                                                                   \
  do {                                                                                                    \
    int32_t x_, t_, we_, wo_;                                                                             \
    __asm("ldr %[x], [%[p], #%c[io]]\n\t"                                                                 \
          "ldrd %[we], %[wo], [%[w], #%c[wo_]]\n\t"                                                       \
          "sxtb16 %[t], %[x]\n\t"                                                                         \
          "sxtb16 %[x], %[x], ror #8\n\t"                                                                 \
          "smlabb %[a0], %[t], %[we], %[a0]\n\t"                                                          \
          "smlatt %[a2], %[t], %[we], %[a2]\n\t"                                                          \
          "smlabb %[a1], %[x], %[wo], %[a1]\n\t"                                                          \
          "smlatt %[a3], %[x], %[wo], %[a3]"                                                              \
          : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "=&r"(x_), [t] "=&r"(t_),     \
            [we] "=&r"(we_), [wo] "=&r"(wo_)                                                              \
          : [p] "r"(in), [io] "n"(off), [w] "r"(wt), [wo_] "n"(wof));                                     \
  } while (0)
#define MCU_DW3X3_BIAS4(b) \
  __asm("ldrd %0, %1, [%4]\n\tldrd %2, %3, [%4, #8]" : "=&r"(a0), "=&r"(a1), "=&r"(a2), "=r"(a3) : "r"(b) : "memory")
static inline __attribute__((always_inline)) int32_t mcu_dw3x3_smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
static inline __attribute__((always_inline)) int32_t mcu_dw3x3_smmlar(int32_t a, int32_t b, int32_t c) {
  int32_t r;
  __asm("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
#define MCU_DW3X3_SSAT8(x) __ssat((x), 8)
#else
#include <string.h>
static inline int32_t mcu_dw3x3_lo(int32_t x) { return (int16_t)(x & 0xFFFF); }
static inline int32_t mcu_dw3x3_hi(int32_t x) { return (int16_t)((uint32_t)x >> 16); }
#define MCU_DW3X3_TAP(in, off, wt, wof)                                                                   \
  do {                                                                                                    \
    int8_t x_[4];                                                                                         \
    memcpy(x_, (in) + (off), 4);                                                                          \
    const int32_t we_ = (wt)[(wof) / 4], wo_ = (wt)[(wof) / 4 + 1];                                       \
    a0 += x_[0] * mcu_dw3x3_lo(we_);                                                                      \
    a2 += x_[2] * mcu_dw3x3_hi(we_);                                                                      \
    a1 += x_[1] * mcu_dw3x3_lo(wo_);                                                                      \
    a3 += x_[3] * mcu_dw3x3_hi(wo_);                                                                      \
  } while (0)
#define MCU_DW3X3_BIAS4(b) ((a0) = (b)[0], (a1) = (b)[1], (a2) = (b)[2], (a3) = (b)[3])
static inline int32_t mcu_dw3x3_smmulr(int32_t a, int32_t b) {
  return (int32_t)(((int64_t)a * b + 0x80000000LL) >> 32);
}
static inline int32_t mcu_dw3x3_smmlar(int32_t a, int32_t b, int32_t c) {
  return (int32_t)(((int64_t)a * b + (int64_t)c * 4294967296LL + 0x80000000LL) >> 32);
}
static inline int32_t mcu_dw3x3_ssat8(int32_t x) { return x < -128 ? -128 : x > 127 ? 127 : x; }
#define MCU_DW3X3_SSAT8(x) mcu_dw3x3_ssat8(x)
#endif"""


def _requant_c(p: Plan, fn: str) -> list[str]:
    if p.fold:   # every negative x clamps to the minimum: no fix-up, K added by SMMLAR
        body = ["  int32_t x = mcu_dw3x3_smmlar(acc2, rq[0], rq[1]);"]
    else:
        body = ["  int32_t x = mcu_dw3x3_smmulr(acc2, rq[0]);  /* arm_nn_doubling_high_mult_no_sat(acc, M) */",
                "  x += x >> 31;  /* rounding divide by 2^e, midpoint away from zero, + output offset */",
                "  x += rq[1];"]
    body += ["  x = MCU_DW3X3_SSAT8(x >> rq[2]);"]
    if p.act[0] > -128:
        body.append(f"  if (x < {p.act[0]}) x = {p.act[0]};")
    if p.act[1] < 127:
        body.append(f"  if (x > {p.act[1]}) x = {p.act[1]};")
    return [f"static inline __attribute__((always_inline)) int8_t {fn}(int32_t acc2, const int32_t *rq) {{",
            *body, "  return (int8_t)x;", "}"]


def _pixel_c(p: Plan, name: str, fn: str, rows, cols) -> list[str]:
    """The pixel function of one class: `in` points at its first tap inside the image."""
    taps = [f"    MCU_DW3X3_TAP(in, {((ky - rows[0]) * p.w + kx - cols[0]) * p.c}, wt, {(ky * 3 + kx) * 8});"
            for ky in rows for kx in cols]
    return [f"static inline __attribute__((always_inline)) void {fn}(const int8_t *in, int8_t *out, "
            "const int32_t *bias2) {",
            f"  const int32_t *wt = {name}_wt, *rq = {name}_rq;",
            f"  for (int32_t g = 0; g < {p.c // 4}; ++g, in += 4, out += 4, bias2 += 4, wt += 18, rq += 12) {{",
            "    int32_t a0, a1, a2, a3;",
            "    MCU_DW3X3_BIAS4(bias2);",
            *taps,
            f"    out[0] = {name}_requant(a0, rq);",
            f"    out[1] = {name}_requant(a1, rq + 3);",
            f"    out[2] = {name}_requant(a2, rq + 6);",
            f"    out[3] = {name}_requant(a3, rq + 9);",
            "  }", "}"]


def _run_c(p: Plan, name: str) -> list[str]:
    sh, sw = p.stride
    n_cols = len(p.col_classes)
    lines = [f"static void {name}(const int8_t *input, int8_t *out) {{"]
    for oh0, n_rows, rc in p.row_runs:
        rows = p.row_classes[rc]
        lines += [f"  for (int32_t oh = {oh0}; oh < {oh0 + n_rows}; ++oh) {{",
                  f"    const int8_t *row = input + (oh * {sh} + {rows[0] - p.pad_top}) * {p.w * p.c};"
                  if rows else "    const int8_t *row = input;"]
        for ow0, n, cc in p.col_runs:
            cols = p.col_classes[cc]
            cls = rc * n_cols + cc
            first = (ow0 * sw - p.pad_left + cols[0]) * p.c if cols else 0
            step = sw * p.c if cols and rows else 0
            lines += [f"    {{ const int8_t *in = row + {first};" if rows and cols else "    { const int8_t *in = row;",
                      f"      for (int32_t ow = 0; ow < {n}; ++ow, in += {step}, out += {p.c})",
                      f"        {name}_px{cls}(in, out, {name}_bias2 + {cls * p.c}); }}"]
        lines.append("  }")
    return lines + ["}"]


def source(p: Plan, name: str) -> str:
    """The layer's tables and functions (file scope in model.c); `name` prefixes every symbol."""
    def table(suffix, values):
        body = ",\n  ".join(", ".join(str(int(v)) for v in values[j:j + 12]) for j in range(0, len(values), 12))
        return f"static const int32_t {name}_{suffix}[{len(values)}] __attribute__((aligned(8))) = {{\n  {body}\n}};"
    lines = [f"/* {name}: depthwise 3x3 int8, {p.h}x{p.w}x{p.c}, stride {p.stride[0]}x{p.stride[1]}, "
             f"pad top {p.pad_top} left {p.pad_left}: weights doubled and widened, bias per border class with the "
             "input offset folded, multiplier / rounding constant / shift per channel */",
             table("wt", p.weights), table("bias2", p.bias2), table("rq", p.requant),
             *_requant_c(p, f"{name}_requant")]
    n_cols = len(p.col_classes)
    for rc, rows in enumerate(p.row_classes):
        for cc, cols in enumerate(p.col_classes):
            lines += _pixel_c(p, name, f"{name}_px{rc * n_cols + cc}", rows, cols)
    return "\n".join(lines + _run_c(p, name))


def estimates(p: Plan, core):
    """(generated, CMSIS-NN) instruction estimates on `core` (costs.py), None off the DSP path."""
    if not core.has_dsp or core.has_mve:
        return None
    by_taps = list(p.pixels_by_taps())
    return costs.dw3x3_s8_dsp(by_taps, p.c, p.fold), costs.cmsis_depthwise_dsp(by_taps, p.c)
