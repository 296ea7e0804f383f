/* `sonde run --jtag [ADDR:]PORT`: serve the virtual chip's JTAG-DP to
 * OpenOCD's remote_bitbang adapter (include/sonde/jtag.h). The core runs
 * freely between scans unless --jtag-cycles-per-tck is given. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_run_jtag.h"
#include "sonde/jtag.h"

bool run_parse_listen(const char *spec, char *addr, size_t addr_cap, unsigned *port)
{
  const char *colon = strrchr(spec, ':'), *ps = colon ? colon + 1 : spec;
  snprintf(addr, addr_cap, "127.0.0.1");
  if (colon) {
    if ((size_t)(colon - spec) >= addr_cap || colon == spec)
      return false;
    memcpy(addr, spec, (size_t)(colon - spec));
    addr[colon - spec] = 0;
  }
  char *end;
  unsigned long p = strtoul(ps, &end, 10);
  if (!*ps || *end || p > 65535)
    return false;
  *port = (unsigned)p;
  return true;
}

static struct sonde_jtag *signalled;
static volatile sig_atomic_t signal_seen;

static void on_signal(int sig)
{
  signal_seen = sig;
  if (signalled)
    sonde_jtag_stop(signalled);
}

int run_jtag(struct sonde_vm *vm, const char *spec, uint64_t max_cycles, uint64_t cycles_per_tck,
             uint64_t ap_busy_tck, bool stats, struct sonde_vm_stop *stop)
{
  char addr[64];
  unsigned port;
  if (!run_parse_listen(spec, addr, sizeof addr, &port))
    return cli_error("run: --jtag: '%s' is not [ADDR:]PORT", spec), CLI_USAGE;
  if (cycles_per_tck > 1000000 || ap_busy_tck > 1000)
    return cli_error("run: --jtag-cycles-per-tck is at most 1000000 and --jtag-ap-wait at "
                     "most 1000"), CLI_USAGE;
  struct sonde_jtag *j = NULL;
  int rc = sonde_jtag_new(vm, addr, port, &j);
  if (rc < 0)
    return cli_error("run: --jtag: cannot listen on %s:%u: %s", addr, port,
                     rc == SONDE_E_IO ? strerror(errno) : sonde_strerror(rc));
  sonde_jtag_set_cycles_per_tck(j, (uint32_t)cycles_per_tck);
  sonde_jtag_set_ap_busy(j, (unsigned)ap_busy_tck);
  signalled = j;
  signal_seen = 0;
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns at once */
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  /* announced only once a signal stops the server cleanly: a script may
   * signal it as soon as it reads this line */
  fprintf(stderr, "sonde: jtag server (OpenOCD remote_bitbang) listening on %s:%u\n", addr,
          sonde_jtag_port(j));
  fflush(stderr);
  rc = sonde_jtag_serve(j, max_cycles, 5000, stop); /* drop a client stalled 5 s mid-scan */
  signalled = NULL;
  sigaction(SIGINT, &old_int, NULL);
  /* `timeout` and shells signal the whole process group, so the signal that
   * stopped the server often comes twice; the second must not turn the clean
   * exit under way into a kill (status 143) */
  if (!signal_seen)
    sigaction(SIGTERM, &old_term, NULL);
  if (rc < 0)
    cli_error("run: --jtag: %s", sonde_jtag_error_detail(j));
  if (stats) {
    struct sonde_jtag_stats s;
    sonde_jtag_get_stats(j, &s);
    fprintf(stderr,
            "jtag clients  %llu\njtag bytes    %llu in %llu batches\njtag TCKs     %llu\n"
            "jtag DP       %llu reads %llu writes\njtag AP       %llu reads %llu writes, %llu "
            "WAIT, %llu bus errors\njtag seconds  %.3f in the protocol (%.3f decoding)\n",
            (unsigned long long)s.clients, (unsigned long long)s.bytes_in,
            (unsigned long long)s.batches, (unsigned long long)s.tck,
            (unsigned long long)s.dp_reads, (unsigned long long)s.dp_writes,
            (unsigned long long)s.ap_reads, (unsigned long long)s.ap_writes,
            (unsigned long long)s.waits, (unsigned long long)s.bus_errors, s.protocol_s,
            s.decode_s);
  }
  sonde_jtag_free(j);
  return rc < 0 ? CLI_FAIL : CLI_OK;
}
