/* Sonde: a GDB remote-protocol server for the virtual Cortex-M (src/vm).
 *
 * gdb-multiarch connects with `target remote HOST:PORT` and can load symbols,
 * read and write registers and memory, set software breakpoints (Z0, kept by
 * the host, invisible to the target), hardware breakpoints (Z1, programmed
 * into the FPB comparators), watchpoints (Z2 write, Z3 read, Z4 access),
 * single-step (interrupts masked, as DHCSR.C_MASKINTS), continue, interrupt
 * with Ctrl-C, kill and detach, and use `monitor` commands (`monitor help`).
 * See docs/vm.md "Debug access and GDB".
 *
 * Single-threaded: the server runs the VM in slices and polls the socket in
 * between, so a Ctrl-C is seen within one slice. The library never prints. */
#ifndef SONDE_GDB_H
#define SONDE_GDB_H

#include <stdint.h>

#include "sonde/vm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sonde_gdb; /* opaque */

/* Listen on `addr` (NULL: 127.0.0.1) and `port` (0: any free port, see
 * sonde_gdb_port). The VM must be loaded and reset; it stays halted until
 * gdb continues it. */
int sonde_gdb_new(struct sonde_vm *vm, const char *addr, unsigned port, struct sonde_gdb **out);
void sonde_gdb_free(struct sonde_gdb *g); /* NULL is a no-op */
unsigned sonde_gdb_port(const struct sonde_gdb *g);
const char *sonde_gdb_error_detail(const struct sonde_gdb *g);

/* Serve clients until the session ends: the firmware exited (and the client
 * left), gdb killed the target (`kill`), or gdb detached and the firmware then
 * ran to its end. A client that disconnects, stalls for more than `timeout_ms`
 * inside a packet (0: 10 s) or sends garbage is dropped and the server waits
 * for the next one with the target halted. `max_cycles` bounds the run (as
 * sonde_vm_run). `stop` (may be NULL) says how the target ended. */
int sonde_gdb_serve(struct sonde_gdb *g, uint64_t max_cycles, unsigned timeout_ms,
                    struct sonde_vm_stop *stop);

#ifdef __cplusplus
}
#endif
#endif
