/* Fuzz target: the monitor's code reading (src/monitor/ftab.c, watch.c,
 * infer.c): a function table found by disassembling arbitrary bytes as a
 * Cortex-M image (vector table at 0), the marker scan, and the call-graph
 * inference over changes made from the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/monitor.h"

struct img {
  const uint8_t *p;
  size_t n;
};

static int rd(void *ctx, uint32_t addr, void *buf, size_t len)
{
  const struct img *m = ctx;
  if (addr > m->n || len > m->n - addr)
    return -1;
  memcpy(buf, m->p + addr, len);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct img m = {data, size};
  struct sonde_mon_ftab *t = NULL;
  uint32_t marks[8];
  long nm = sonde_mon_find_markers(rd, &m, NULL, 0, (uint32_t)size, marks, 8);
  if (nm < 0)
    abort();
  if (sonde_mon_ftab_from_code(rd, &m, 0, 1u << 16, &t) < 0)
    return 0;
  long nm2 = sonde_mon_find_markers(rd, &m, t, 0, UINT32_MAX, marks, 8);
  for (long i = 0; i < nm2 && i < 8; i++)
    if (marks[i] & 1)
      abort();
  size_t n = sonde_mon_ftab_count(t);
  for (size_t i = 0; i < n; i++) {
    const struct sonde_mon_func *f = sonde_mon_ftab_at(t, i);
    if (sonde_mon_ftab_lookup(t, f->start) != (long)i && f->end > f->start)
      abort();
  }
  /* changes: every 4th byte picks a function */
  size_t nc = size / 4;
  struct sonde_mon_change *ch = calloc(nc ? nc : 1, sizeof *ch);
  for (size_t i = 0; i < nc && n; i++) {
    ch[i].cycle = i * 3;
    ch[i].func = (int32_t)(data[4 * i] % (n + 1)) - 1;
  }
  struct sonde_mon_infer inf;
  if (sonde_mon_infer_run(t, ch, n ? nc : 0, nc * 3 + 1, &inf) == 0) {
    for (size_t i = 0; i < inf.nexecs; i++)
      if (inf.execs[i].end < inf.execs[i].start)
        abort();
    sonde_mon_infer_free(&inf);
  }
  free(ch);
  sonde_mon_ftab_free(t);
  return 0;
}
