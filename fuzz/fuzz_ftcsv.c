/* Fuzz target: the FrankenTrace trace readers (src/frankentrace): the
 * ts,val,valid CSV and pct (auto-detected), and the LSU readers. A trace that
 * reads is written as CSV and read back: every cell must survive (unrecoverable
 * cells as the CSV writer keeps them). A failure must carry a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/frankentrace.h"

static void round_trip(const struct sonde_ft_trace *t)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return;
  if (sonde_ft_write(f, "fuzz", SONDE_FT_FORMAT_CSV, t, NULL, NULL) != 0)
    abort();
  fclose(f);
  struct sonde_ft_trace *b;
  struct sonde_diag d;
  if (sonde_ft_read_buffer(buf, len, "back", SONDE_FT_FORMAT_CSV, 0, &b, &d) != 0)
    abort();
  uint64_t n = sonde_ft_trace_length(t);
  if (n && (sonde_ft_trace_length(b) != n || sonde_ft_trace_origin(b) != sonde_ft_trace_origin(t)))
    abort();
  for (uint64_t c = sonde_ft_trace_origin(t); n && c < sonde_ft_trace_origin(t) + n; c++) {
    struct sonde_ft_cell x = sonde_ft_trace_at(t, c), y = sonde_ft_trace_at(b, c);
    if (x.state == SONDE_FT_LOST)
      x = (struct sonde_ft_cell){0, SONDE_FT_UNSAMPLED};
    if (x.state == SONDE_FT_CONFLICT || (x.state == SONDE_FT_PC && (x.pc & 1)))
      x.state = SONDE_FT_INVALID;
    if (x.state == SONDE_FT_SLEEP || x.state == SONDE_FT_HALTED || x.state == SONDE_FT_UNSAMPLED)
      x.pc = 0;
    if (x.state != y.state || x.pc != y.pc)
      abort();
  }
  sonde_ft_trace_free(b);
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sonde_ft_trace *t = NULL;
  struct sonde_diag d = {{0}};
  if (sonde_ft_read_buffer(data, size, "fuzz", SONDE_FT_FORMAT_AUTO, 1u << 20, &t, &d) == 0) {
    if (sonde_ft_trace_length(t) <= 100000)
      round_trip(t);
    struct sonde_ft_busy_loop *l;
    size_t n;
    if (sonde_ft_find_busy_loops(t, NULL, &l, &n) == 0)
      free(l);
    sonde_ft_trace_free(t);
  } else if (d.msg[0] == '\0') {
    abort();
  }
  struct sonde_ft_xfer *x;
  size_t n;
  d.msg[0] = '\0';
  if (sonde_ft_lsu_read_buffer(data, size, "fuzz", &x, &n, &d) == 0)
    free(x);
  else if (d.msg[0] == '\0')
    abort();
  return 0;
}
