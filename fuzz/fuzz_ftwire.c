/* Fuzz target: the FrankenTrace wire side (src/ftwire) — arbitrary bytes
 * decoded as ITM, split into iterations by the runner's records, each
 * iteration's samples collected at an N taken from the first input byte. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sonde/ftwire.h"
#include "sonde/itm.h"

struct ctx {
  uint32_t n;
  uint64_t samples;
};

static int on_iter(void *vctx, const struct sonde_ftw_iteration *it)
{
  struct ctx *c = vctx;
  struct sonde_ftw_samples s = {0};
  int rc = sonde_ftw_collect(it->packets, it->count, c->n, &s);
  c->samples += s.count;
  sonde_ftw_samples_free(&s);
  return rc < 0 ? rc : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  struct ctx c = {.n = 64u * (1u + data[0] % 16u)};
  struct sonde_ftw_splitter *sp;
  struct sonde_itm *d = sonde_itm_new(NULL);
  struct sonde_itm_packet pk[64];
  if (!d || sonde_ftw_splitter_new(on_iter, &c, &sp) < 0) {
    sonde_itm_free(d);
    return 0;
  }
  struct sonde_diag diag = {{0}};
  size_t off = 1;
  int rc = 0;
  while (rc >= 0 && off < size) {
    size_t used = 0, np = sonde_itm_decode(d, data + off, size - off, &used, pk, 64);
    off += used;
    rc = sonde_ftw_splitter_feed(sp, pk, np, &diag);
  }
  if (rc >= 0)
    rc = sonde_ftw_splitter_feed(sp, pk, sonde_itm_finish(d, pk, 64), &diag);
  if (rc >= 0)
    sonde_ftw_splitter_finish(sp, &diag);
  uint32_t w[8];
  for (size_t i = 0; i < 8; i++)
    w[i] = size > 4 * i + 4 ? (uint32_t)data[4 * i + 1] | (uint32_t)data[4 * i + 2] << 8 |
                                  (uint32_t)data[4 * i + 3] << 16 | (uint32_t)data[4 * i + 4] << 24
                            : 0;
  struct sonde_ftw_record r;
  sonde_ftw_record_decode(w, &r, &diag);
  sonde_ftw_splitter_free(sp);
  sonde_itm_free(d);
  return 0;
}
