/* Sanitizer settings of a host harness built with MCU_SANITIZE (mcu-run --sanitize). The harness
 * keeps its input and output buffers to the end, which is no leak worth a report; a sanitizer
 * report exits with 86, so it never reads as the model's own status. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void) { return "detect_leaks=0:exitcode=86"; }
const char *__ubsan_default_options(void) { return "print_stacktrace=1:exitcode=86"; }
