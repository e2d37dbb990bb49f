/* Exact instruction counts for mcu-mlir firmware under qemu-system-arm (TCG plugin API v1, QEMU 7.2+).
 *
 *   qemu-system-arm ... -plugin insn_count.so,out=COUNTS.txt,marker=0xADDR
 *
 * Every translation block gets a counter that generated code increments inline each time the block
 * runs, so counts are exact and identical from run to run. Execution reaching `marker` (the address
 * of mcu_layer_marker) closes a segment: the plugin writes, per block, how often it ran since the
 * previous segment. mcu_mlir.target.run turns segments into per-layer counts and attributes blocks
 * to functions with the ELF's symbol table.
 *
 * Output:  tb INDEX VADDR INSNS INSNS16 INSNS32 INSNS_FP_VECTOR     (one per translated block)
 *          segment K                                               (then "INDEX RUNS" lines)
 * Debian's QEMU exports the plugin API but ships no qemu-plugin.h: the few declarations used are
 * repeated here, exactly as QEMU 7.2's header has them. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- QEMU plugin API, version 1 ---------------------------------------------------------------- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* --- counting ---------------------------------------------------------------------------------- */
typedef struct {
  uint64_t runs;          /* incremented inline by the translated code */
  uint64_t runs_reported; /* value at the last segment boundary */
} block_counter_t;

static block_counter_t **blocks;
static size_t block_count, block_capacity;
static uint64_t marker_address = UINT64_MAX;
static int segment_index;
static FILE *out;

/* Thumb-2: a 32-bit instruction whose first halfword is 0b111x11xx... is in coprocessor space,
 * which on M-profile means FP, MVE (Helium) or CDE. */
static bool is_fp_or_vector(const uint8_t *bytes, size_t size) {
  if (size != 4) return false;
  uint16_t first = (uint16_t)(bytes[0] | (bytes[1] << 8));
  return (first & 0xEC00u) == 0xEC00u;
}

static void close_segment(void) {
  fprintf(out, "segment %d\n", segment_index++);
  for (size_t i = 0; i < block_count; i++) {
    block_counter_t *block = blocks[i];
    if (block->runs != block->runs_reported) {
      fprintf(out, "%zu %" PRIu64 "\n", i, block->runs - block->runs_reported);
      block->runs_reported = block->runs;
    }
  }
}

static void on_marker(unsigned int vcpu_index, void *userdata) { close_segment(); }

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  size_t insns = qemu_plugin_tb_n_insns(tb);
  size_t insns16 = 0, insns32 = 0, insns_fp_vector = 0;
  for (size_t i = 0; i < insns; i++) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    size_t size = qemu_plugin_insn_size(insn);
    if (size == 2) insns16++;
    else insns32++;
    if (is_fp_or_vector((const uint8_t *)qemu_plugin_insn_data(insn), size)) insns_fp_vector++;
    if (qemu_plugin_insn_vaddr(insn) == marker_address)
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS, NULL);
  }
  if (block_count == block_capacity) {
    block_capacity = block_capacity ? 2 * block_capacity : 1024;
    blocks = realloc(blocks, block_capacity * sizeof(*blocks));
  }
  /* Each counter is its own allocation: translated code holds its address forever. */
  block_counter_t *block = calloc(1, sizeof(*block));
  blocks[block_count] = block;
  fprintf(out, "tb %zu 0x%" PRIx64 " %zu %zu %zu %zu\n", block_count, qemu_plugin_tb_vaddr(tb), insns,
          insns16, insns32, insns_fp_vector);
  block_count++;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &block->runs, 1);
}

static void on_qemu_exit(qemu_plugin_id_t id, void *userdata) {
  close_segment();
  fputs("end\n", out);
  fclose(out);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                               int argc, char **argv) {
  const char *out_path = NULL;
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "out=", 4) == 0) {
      out_path = argv[i] + 4;
    } else if (strncmp(argv[i], "marker=", 7) == 0) {
      marker_address = strtoull(argv[i] + 7, NULL, 0) & ~(uint64_t)1; /* drop the Thumb bit */
    } else {
      qemu_plugin_outs("insn_count: unknown argument (expected out=PATH, marker=ADDRESS)\n");
      return -1;
    }
  }
  if (!out_path) {
    qemu_plugin_outs("insn_count: out=PATH is required\n");
    return -1;
  }
  out = fopen(out_path, "w");
  if (!out) {
    qemu_plugin_outs("insn_count: cannot open the out= file\n");
    return -1;
  }
  /* A large buffer: segments are written while the guest runs. */
  setvbuf(out, NULL, _IOFBF, 1 << 20);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
  return 0;
}
