/* Runs a generated model once and prints its outputs, on the host or on a Cortex-M.
 *
 *   harness --info                     prints the model's inputs and outputs and exits
 *   harness IN0.bin [IN1.bin ...]      reads each input's raw bytes (already quantized), runs the
 *                                      model and prints every output as hex
 *   harness --steps N FILE             a streaming model (MCU_MODEL_NUM_STATES): mcu_model_reset(), then
 *                                      N mcu_model_step() calls on the step inputs FILE holds (each step's
 *                                      in turn, each input padded to 16 bytes); prints each step's status
 *                                      and step outputs
 *
 * Built with MCU_HARNESS_EMBEDDED_INPUTS, inputs compiled into the firmware (mcu_harness_inputs[])
 * are used when no file is given, for boards without semihosting file access.
 * Output (parsed by mcu_mlir.target.run):
 *   mcu-harness 1
 *   input|output INDEX NAME rank=R shape=D0,D1,.. elem_bytes=B is_float=F scale=0xBITS zero_point=Z bytes=N
 *   part OUTPUT axis=A start=S stop=E scale=0xBITS zero_point=Z   (an output's slices at their own scales)
 *   status CODE                        (mcu_model_run's return value)
 *   data INDEX N                       then N bytes as hex, 64 per line
 *   end
 * The exit code is 0 on success, 1 for a bad invocation, 2 when the model returned an error. */
#include <stdint.h>
#include <string.h>

#include "model.h" /* the generated model's header, or aliases of a named model's names */
#include "platform.h"

#ifdef MCU_HARNESS_EMBEDDED_INPUTS
extern const uint8_t *const mcu_harness_inputs[];
#endif

#ifdef MCU_ARENA_SECTION
#define MCU_ARENA_ATTRIBUTES __attribute__((aligned(16), section(MCU_ARENA_SECTION)))
#else
#define MCU_ARENA_ATTRIBUTES __attribute__((aligned(16)))
#endif

static uint8_t arena[MCU_MODEL_ARENA_BYTES > 0 ? MCU_MODEL_ARENA_BYTES : 1] MCU_ARENA_ATTRIBUTES;

static void put_unsigned(char **cursor, uint32_t value) {
  char digits[12];
  int count = 0;
  do {
    digits[count++] = (char)('0' + value % 10u);
    value /= 10u;
  } while (value);
  while (count) *(*cursor)++ = digits[--count];
}

static void put_signed(char **cursor, int32_t value) {
  if (value < 0) {
    *(*cursor)++ = '-';
    put_unsigned(cursor, 0u - (uint32_t)value);
  } else {
    put_unsigned(cursor, (uint32_t)value);
  }
}

static void put_text(char **cursor, const char *text) {
  while (*text) *(*cursor)++ = *text++;
}

static void put_hex32(char **cursor, uint32_t value) {
  static const char hex[] = "0123456789abcdef";
  put_text(cursor, "0x");
  for (int shift = 28; shift >= 0; shift -= 4) *(*cursor)++ = hex[(value >> shift) & 0xFu];
}

static void print_tensor_info(const char *kind, int index, const mcu_tensor_info_t *info) {
  char line[256];
  char *cursor = line;
  uint32_t scale_bits;
  memcpy(&scale_bits, &info->scale, sizeof(scale_bits)); /* exact, and no printf float support needed */
  put_text(&cursor, kind);
  put_text(&cursor, " ");
  put_signed(&cursor, index);
  put_text(&cursor, " ");
  const char *name = info->name ? info->name : "?";
  for (int i = 0; name[i] && i < 64; i++) *cursor++ = (name[i] == ' ' || name[i] == '\n') ? '_' : name[i];
  put_text(&cursor, " rank=");
  put_signed(&cursor, info->rank);
  put_text(&cursor, " shape=");
  for (int d = 0; d < info->rank && d < MCU_MAX_RANK; d++) {
    if (d) *cursor++ = ',';
    put_signed(&cursor, info->shape[d]);
  }
  put_text(&cursor, " elem_bytes=");
  put_signed(&cursor, info->elem_bytes);
  put_text(&cursor, " is_float=");
  put_signed(&cursor, info->is_float);
  put_text(&cursor, " scale=");
  put_hex32(&cursor, scale_bits);
  put_text(&cursor, " zero_point=");
  put_signed(&cursor, info->zero_point);
  put_text(&cursor, " bytes=");
  put_signed(&cursor, info->size_bytes);
  put_text(&cursor, "\n");
  *cursor = '\0';
  mcu_platform_puts(line);
}

#ifdef MCU_MODEL_NUM_OUTPUT_PARTS
/* "part <output> axis=<a> start=<s> stop=<e> scale=0x<bits> zero_point=<z>" per row of mcu_model_output_parts[]. */
static void print_output_parts(void) {
  for (int i = 0; i < MCU_MODEL_NUM_OUTPUT_PARTS; i++) {
    const mcu_tensor_part_t *part = &mcu_model_output_parts[i];
    char line[128];
    char *cursor = line;
    uint32_t scale_bits;
    memcpy(&scale_bits, &part->scale, sizeof(scale_bits));
    put_text(&cursor, "part ");
    put_signed(&cursor, part->output);
    put_text(&cursor, " axis=");
    put_signed(&cursor, part->axis);
    put_text(&cursor, " start=");
    put_signed(&cursor, part->start);
    put_text(&cursor, " stop=");
    put_signed(&cursor, part->stop);
    put_text(&cursor, " scale=");
    put_hex32(&cursor, scale_bits);
    put_text(&cursor, " zero_point=");
    put_signed(&cursor, part->zero_point);
    put_text(&cursor, "\n");
    *cursor = '\0';
    mcu_platform_puts(line);
  }
}
#endif

static void print_line2(const char *word, int32_t first, int32_t second, int with_second) {
  char line[64];
  char *cursor = line;
  put_text(&cursor, word);
  put_text(&cursor, " ");
  put_signed(&cursor, first);
  if (with_second) {
    put_text(&cursor, " ");
    put_signed(&cursor, second);
  }
  put_text(&cursor, "\n");
  *cursor = '\0';
  mcu_platform_puts(line);
}

static void print_hex_bytes(const uint8_t *bytes, int32_t count) {
  static const char hex[] = "0123456789abcdef";
  char line[64 * 2 + 2];
  for (int32_t start = 0; start < count; start += 64) {
    int32_t end = start + 64 < count ? start + 64 : count;
    char *cursor = line;
    for (int32_t i = start; i < end; i++) {
      *cursor++ = hex[bytes[i] >> 4];
      *cursor++ = hex[bytes[i] & 0xF];
    }
    *cursor++ = '\n';
    *cursor = '\0';
    mcu_platform_puts(line);
  }
}

static void fail(const char *message) {
  mcu_platform_puts("error: ");
  mcu_platform_puts(message);
  mcu_platform_puts("\n");
}

static void *read_input(const char *path, int index) {
  long expected = mcu_model_inputs[index].size_bytes;
  void *buffer = mcu_platform_alloc((size_t)expected);
  if (!buffer) {
    fail("out of memory for an input buffer");
    return 0;
  }
  long size = mcu_platform_read_file(path, buffer, expected);
  if (size != expected) {
    fail(size < 0 ? "cannot read an input file" : "an input file has the wrong size");
    print_line2("input_bytes", index, (int32_t)size, 1);
    return 0;
  }
  return buffer;
}

#ifdef MCU_MODEL_NUM_STATES
static int32_t padded(int32_t bytes) { return (bytes + 15) & ~15; }

/* The state stays in the model between the steps. FILE holds every step's inputs one after the
 * other, each input padded to 16 bytes (one file: semihosting passes few arguments). */
static int run_steps(int steps, const char *path) {
  int32_t step_bytes = 0;
  for (int i = 0; i < MCU_MODEL_NUM_STEP_INPUTS; i++)
    step_bytes += padded(mcu_model_inputs[mcu_model_step_input_index[i]].size_bytes);
  if (steps <= 0) {
    fail("expected --steps N FILE");
    return 1;
  }
  uint8_t *all = (uint8_t *)mcu_platform_alloc((size_t)steps * (size_t)(step_bytes > 0 ? step_bytes : 1));
  if (!all) {
    fail("out of memory for the steps' inputs");
    return 1;
  }
  long size = mcu_platform_read_file(path, all, (long)steps * step_bytes);
  if (size != (long)steps * step_bytes) {
    fail(size < 0 ? "cannot read the steps' input file" : "the steps' input file has the wrong size");
    return 1;
  }
  const void *inputs[MCU_MODEL_NUM_STEP_INPUTS > 0 ? MCU_MODEL_NUM_STEP_INPUTS : 1];
  void *outputs[MCU_MODEL_NUM_STEP_OUTPUTS > 0 ? MCU_MODEL_NUM_STEP_OUTPUTS : 1];
  for (int i = 0; i < MCU_MODEL_NUM_STEP_OUTPUTS; i++) {
    outputs[i] = mcu_platform_alloc((size_t)mcu_model_outputs[mcu_model_step_output_index[i]].size_bytes);
    if (!outputs[i]) {
      fail("out of memory for an output buffer");
      return 1;
    }
  }
  mcu_model_reset();
  for (int step = 0; step < steps; step++) {
    const uint8_t *cursor = all + (size_t)step * (size_t)step_bytes;
    for (int i = 0; i < MCU_MODEL_NUM_STEP_INPUTS; i++) {
      inputs[i] = cursor;
      cursor += padded(mcu_model_inputs[mcu_model_step_input_index[i]].size_bytes);
    }
    int status = mcu_model_step(inputs, outputs, arena);
    print_line2("status", status, 0, 0);
    if (status != 0) {
      mcu_platform_puts("end\n");
      return 2;
    }
    for (int i = 0; i < MCU_MODEL_NUM_STEP_OUTPUTS; i++) {
      int32_t bytes = mcu_model_outputs[mcu_model_step_output_index[i]].size_bytes;
      print_line2("data", mcu_model_step_output_index[i], bytes, 1);
      print_hex_bytes((const uint8_t *)outputs[i], bytes);
    }
  }
  mcu_platform_puts("end\n");
  return 0;
}
#endif

int main(int argc, char **argv) {
  mcu_platform_puts("mcu-harness 1\n");
  for (int i = 0; i < MCU_MODEL_NUM_INPUTS; i++) print_tensor_info("input", i, &mcu_model_inputs[i]);
  for (int i = 0; i < MCU_MODEL_NUM_OUTPUTS; i++) print_tensor_info("output", i, &mcu_model_outputs[i]);
#ifdef MCU_MODEL_NUM_OUTPUT_PARTS
  print_output_parts();
#endif
  if (argc >= 2 && strcmp(argv[1], "--info") == 0) {
    mcu_platform_puts("end\n");
    return 0;
  }

  if (argc >= 2 && strcmp(argv[1], "--steps") == 0) {
#ifdef MCU_MODEL_NUM_STATES
    int steps = 0;
    for (const char *d = argc >= 3 ? argv[2] : ""; *d >= '0' && *d <= '9'; d++) steps = steps * 10 + (*d - '0');
    if (argc != 4) {
      fail("expected --steps N FILE");
      return 1;
    }
    return run_steps(steps, argv[3]);
#else
    fail("--steps needs a streaming model (compiled with --state)");
    return 1;
#endif
  }

  const void *inputs[MCU_MODEL_NUM_INPUTS > 0 ? MCU_MODEL_NUM_INPUTS : 1];
  void *outputs[MCU_MODEL_NUM_OUTPUTS > 0 ? MCU_MODEL_NUM_OUTPUTS : 1];
  int given = argc - 1;
#ifdef MCU_HARNESS_EMBEDDED_INPUTS
  if (given == 0) {
    for (int i = 0; i < MCU_MODEL_NUM_INPUTS; i++) inputs[i] = mcu_harness_inputs[i];
    given = -1;
  }
#endif
  if (given >= 0) {
    if (given != MCU_MODEL_NUM_INPUTS) {
      fail("expected one input file per model input");
      return 1;
    }
    for (int i = 0; i < MCU_MODEL_NUM_INPUTS; i++) {
      inputs[i] = read_input(argv[1 + i], i);
      if (!inputs[i]) return 1;
    }
  }
  for (int i = 0; i < MCU_MODEL_NUM_OUTPUTS; i++) {
    outputs[i] = mcu_platform_alloc((size_t)mcu_model_outputs[i].size_bytes);
    if (!outputs[i]) {
      fail("out of memory for an output buffer");
      return 1;
    }
  }

  int status = mcu_model_run(inputs, outputs, arena);
  print_line2("status", status, 0, 0);
  for (int i = 0; i < MCU_MODEL_NUM_OUTPUTS; i++) {
    print_line2("data", i, mcu_model_outputs[i].size_bytes, 1);
    print_hex_bytes((const uint8_t *)outputs[i], mcu_model_outputs[i].size_bytes);
  }
  mcu_platform_puts("end\n");
  return status == 0 ? 0 : 2;
}
