/* Sonde: the virtual chip's JTAG debug port, served to OpenOCD's
 * `remote_bitbang` adapter (src/vm/jtag_server.c).
 *
 * OpenOCD connects to a TCP socket and sends one character per pin change
 * (its documented remote_bitbang protocol): '0'..'7' set TCK, TMS and TDI
 * (4*TCK + 2*TMS + TDI), 'R' asks for TDO ('0' or '1' back), 'r' 's' 't' 'u'
 * set TRST and SRST ('r' + 2*TRST + SRST, 1 = asserted), 'B' 'b' the LED,
 * 'Q' quit. Behind the pins sit a JTAG TAP, an ARM JTAG-DP and an AHB-AP on
 * the VM's debug bus, so OpenOCD's `cortex_m` target attaches as to a board:
 * halt, step, breakpoints (FPB), watchpoints (DWT), memory access while the
 * core runs, reset through AIRCR or SRST. See docs/vm.md "JTAG and OpenOCD".
 *
 * The core runs freely between scans by default, as on a board; with
 * sonde_jtag_set_cycles_per_tck() it advances exactly N cycles per TCK
 * instead (deterministic). Single-threaded; the library never prints. */
#ifndef SONDE_JTAG_H
#define SONDE_JTAG_H

#include <stdint.h>

#include "sonde/vm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sonde_jtag; /* opaque */

/* Listen on `addr` (NULL: 127.0.0.1) and `port` (0: any free port, see
 * sonde_jtag_port). The VM must be loaded and reset. */
int sonde_jtag_new(struct sonde_vm *vm, const char *addr, unsigned port, struct sonde_jtag **out);
void sonde_jtag_free(struct sonde_jtag *j); /* NULL is a no-op */
unsigned sonde_jtag_port(const struct sonde_jtag *j);
const char *sonde_jtag_error_detail(const struct sonde_jtag *j);
/* Advance the core exactly `cycles` per TCK rising edge instead of running it
 * freely between scans (0: free-running, the default). */
void sonde_jtag_set_cycles_per_tck(struct sonde_jtag *j, uint32_t cycles);
/* After every AP access the AP stays busy for `tck` TCKs: scans meanwhile
 * are answered WAIT (0, the default: never busy). */
void sonde_jtag_set_ap_busy(struct sonde_jtag *j, unsigned tck);

/* Serve clients, one at a time (the next waits in the listen queue), until
 * the firmware has ended (semihosting exit, or `max_cycles`, absolute) and
 * the client that saw it has left; then `stop` (may be NULL) says how. A
 * client that stalls for `timeout_ms` (0: 10 s) in the middle of a scan or
 * does not read the TDO bits it asked for is dropped; unknown bytes are
 * ignored. sonde_jtag_stop() (from a signal handler) ends it early. */
int sonde_jtag_serve(struct sonde_jtag *j, uint64_t max_cycles, unsigned timeout_ms,
                     struct sonde_vm_stop *stop);
void sonde_jtag_stop(struct sonde_jtag *j);

/* For a program that embeds the server in its own loop (the tests): set the
 * limits sonde_jtag_serve takes (defaults: no cycle limit, 10 s), then call
 * sonde_jtag_poll repeatedly. One call waits up to `wait_ms` for the client
 * (not at all while the core runs freely), handles what it sent and runs the
 * core for one short slice. Returns 1 when the session is over (as
 * sonde_jtag_serve), 0 to go on, or a negative error. */
void sonde_jtag_configure(struct sonde_jtag *j, uint64_t max_cycles, unsigned timeout_ms);
int sonde_jtag_poll(struct sonde_jtag *j, int wait_ms);

struct sonde_jtag_stats {
  uint64_t clients;       /* connections accepted */
  uint64_t bytes_in;      /* protocol bytes received */
  uint64_t batches;       /* recv() calls that returned data */
  uint64_t tck;           /* TCK rising edges */
  uint64_t dp_reads, dp_writes, ap_reads, ap_writes;
  uint64_t waits;         /* scans answered WAIT */
  uint64_t bus_errors;    /* AP accesses that set STICKYERR */
  uint64_t ignored_bytes; /* bytes that are no command */
  double protocol_s;      /* seconds from a batch's arrival to its answer sent (the VM's
                             side of the socket, wall clock) */
  double decode_s;        /* ... of which decoding the bits and the DP/AP accesses (the
                             rest: the send() of the answer) */
};
void sonde_jtag_get_stats(const struct sonde_jtag *j, struct sonde_jtag_stats *out);

#ifdef __cplusplus
}
#endif
#endif
