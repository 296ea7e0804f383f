/* Fuzz target: the answers a debug link parses (src/monitor link_openocd.c,
 * link_gdb.c): the input is what the peer says — the first byte picks the
 * link (even: OpenOCD Tcl RPC, odd: GDB remote protocol), the rest is the
 * byte stream the peer sends, whatever is asked. The client must end every
 * operation with a result or an error that explains itself, never crash or
 * hang (the peer closes its end after the input). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "monitor/monitor_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1 || size > 60000)
    return 0;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
    return 0;
  /* the peer's whole answer is there at once, then it hangs up */
  size_t off = 0;
  while (off < size - 1) {
    ssize_t n = write(sv[1], data + 1 + off, size - 1 - off);
    if (n <= 0)
      break;
    off += (size_t)n;
  }
  shutdown(sv[1], SHUT_WR);
  enum sonde_mon_link_kind kind = data[0] & 1 ? SONDE_MON_LINK_GDB : SONDE_MON_LINK_OPENOCD;
  struct sonde_mon_link *l = NULL;
  struct sonde_diag d;
  d.msg[0] = 0;
  int rc = mon_link_from_fd(kind, sv[0], 20, &l, &d);
  if (rc < 0) {
    if (!d.msg[0])
      abort();
    close(sv[1]);
    return 0;
  }
  uint32_t v, w[7], pc;
  if (sonde_mon_read32(l, 0xE000EDF0u, &v) < 0 && !sonde_mon_link_error(l)[0])
    abort();
  (void)sonde_mon_read_words(l, 0xE0001004u, w, 7);
  (void)sonde_mon_read_pc(l, &pc);
  (void)sonde_mon_wait(l, 0, 5);
  struct sonde_mon_pc_opts o = {.max_polls = 8, .max_ms = 20};
  struct sonde_mon_pc_result r;
  if (sonde_mon_pc_poll(l, NULL, &o, &r) < 0 && !sonde_mon_link_error(l)[0])
    abort();
  sonde_mon_pc_result_free(&r);
  sonde_mon_link_free(l); /* closes sv[0] */
  close(sv[1]);
  return 0;
}
