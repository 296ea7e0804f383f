/* `sonde run` SWO outputs (--swo, --swo-timed, --swo-samples): the bytes the
 * virtual chip's SWO pin sends, with their cycles, or as logic-analyzer
 * samples (cmd_run_swo.c; formats in docs/formats.md). */
#ifndef SONDE_CLI_CMD_RUN_SWO_H
#define SONDE_CLI_CMD_RUN_SWO_H

#include <stdint.h>

#include "sonde/vm.h"

struct run_swo;
/* --swo-samples impairments (cmd_run_swo.c impair()). */
struct run_swo_impair {
  double bit_errors; /* probability that a bit time is inverted */
  double jitter_pct; /* per-byte bit-time deviation, uniform within +-pct % */
  uint64_t seed;
};

/* Open the requested outputs (any path may be NULL) and attach them to the VM.
 * `rate` is the --sample-rate text (needed with --swo-samples). Returns 0, or
 * CLI_USAGE/CLI_FAIL after printing the error. *out is NULL when no output
 * was requested. */
int run_swo_open(struct sonde_vm *vm, uint64_t clock_hz, const char *swo, const char *timed,
                 const char *samples, const char *rate, const struct run_swo_impair *imp,
                 struct run_swo **out);
/* Finish (samples up to the later of end_cycle and the pin's last byte, plus
 * one idle byte time), close the files and free. Returns 0 or CLI_FAIL. */
int run_swo_close(struct run_swo *s, uint64_t end_cycle);

#endif
