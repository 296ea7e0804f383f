/* `sonde run --power FILE [--power-rate HZ]`: the VM's supply current as CSV
 * samples (cmd_run_power.c; docs/formats.md "Power samples"). */
#ifndef SONDE_CLI_CMD_RUN_POWER_H
#define SONDE_CLI_CMD_RUN_POWER_H

#include <stdint.h>

struct sonde_vm;
struct run_power;

/* Nothing to do (*out = NULL) when `path` is NULL. Returns CLI_OK, CLI_USAGE
 * or CLI_FAIL (the error printed). */
int run_power_open(struct sonde_vm *vm, uint64_t clock_hz, const char *path, const char *rate,
                   struct run_power **out);
/* Write the samples up to cycle `end_cycle` (exclusive) and close; NULL ok.
 * end_cycle 0 closes without writing (an error path). */
int run_power_close(struct run_power *p, uint64_t end_cycle);

#endif
