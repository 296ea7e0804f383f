/* `sonde run --jtag [ADDR:]PORT`: the virtual chip's JTAG debug port for
 * OpenOCD's remote_bitbang adapter (cmd_run_jtag.c; docs/vm.md "JTAG and
 * OpenOCD"). */
#ifndef SONDE_CLI_CMD_RUN_JTAG_H
#define SONDE_CLI_CMD_RUN_JTAG_H

#include <stdbool.h>
#include <stdint.h>

struct sonde_vm;
struct sonde_vm_stop;

/* Split "[ADDR:]PORT" (ADDR defaults to 127.0.0.1). False when malformed. */
bool run_parse_listen(const char *spec, char *addr, size_t addr_cap, unsigned *port);

/* Serve the JTAG port until the firmware ends and the client leaves, or
 * SIGINT/SIGTERM. Returns CLI_OK or CLI_FAIL/CLI_USAGE (the error printed). */
int run_jtag(struct sonde_vm *vm, const char *spec, uint64_t max_cycles, uint64_t cycles_per_tck,
             uint64_t ap_busy_tck, bool stats, struct sonde_vm_stop *stop);

#endif
