/* Fuzz target: the ITM/DWT packet decoder (src/itm). The first byte picks
 * the chunk size and output capacity, so splits and a full output array are
 * exercised; the whole input is also decoded at once, with the hot path's
 * own choice of loop and with each of its loops forced (itm_internal.h),
 * in both copies of the hot loops (baseline ISA and, where the CPU has them,
 * BMI2/AVX2), and all runs must give the same packets. Invariants: offsets increase, every packet type is valid,
 * every byte is consumed, skipped bytes add up. Differential: the parallel
 * decoder (sonde_itm_decode_parallel, every chunk after the first
 * speculative) with chunks of 1-24 bytes and 2-4 threads, waiting for a
 * sync or not, must give the sequential packets and statistics. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "itm/itm_internal.h"
#include "sonde/itm.h"

#define CAP 256

/* loop: ITM_LOOP_*, plus ITM_LOOP_RUN + 1 for the same with the portable copy */
static size_t run(const uint8_t *data, size_t size, size_t chunk, size_t cap, unsigned loop,
                  struct sonde_itm_packet *all, size_t max, uint64_t *skipped,
                  const struct sonde_itm_config *cfg, struct sonde_itm_stats *stats)
{
  struct sonde_itm *d = sonde_itm_new(cfg);
  itm_force_loop(d, loop % (ITM_LOOP_RUN + 1));
  if (loop > ITM_LOOP_RUN)
    itm_force_portable(d);
  struct sonde_itm_packet out[CAP];
  size_t pos = 0, total = 0;
  uint64_t last = 0, skip = 0;
  while (pos < size) {
    size_t k = size - pos < chunk ? size - pos : chunk;
    size_t used = 0;
    size_t n = sonde_itm_decode(d, data + pos, k, &used, out, cap);
    if (used > k || n > cap || (!used && !n))
      abort();
    for (size_t i = 0; i < n; i++) {
      if (!out[i].type || out[i].type >= SONDE_ITM_TYPE_COUNT || out[i].offset >= size)
        abort();
      if (out[i].offset < last && out[i].type != SONDE_ITM_SKIP)
        abort();
      last = out[i].offset;
      if (out[i].type == SONDE_ITM_SKIP)
        skip += out[i].value;
      if (total < max)
        all[total] = out[i];
      total++;
    }
    pos += used;
  }
  size_t n = sonde_itm_finish(d, out, cap);
  for (size_t i = 0; i < n; i++) {
    if (out[i].type == SONDE_ITM_SKIP)
      skip += out[i].value;
    if (total < max)
      all[total] = out[i];
    total++;
  }
  const struct sonde_itm_stats *st = sonde_itm_stats(d);
  if (st->bytes != size || st->skipped_bytes != skip)
    abort();
  if (stats)
    *stats = *st;
  sonde_itm_free(d);
  *skipped = skip;
  return total;
}

struct par_out {
  struct sonde_itm_packet *p;
  size_t n, max;
};

static int par_sink(void *user, const struct sonde_itm_packet *p, size_t n)
{
  struct par_out *o = user;
  if (!n)
    abort();
  for (size_t i = 0; i < n; i++, o->n++)
    if (o->n < o->max)
      o->p[o->n] = p[i];
  return 0;
}

/* The parallel decoder against the sequential one (packets a[0..na),
 * statistics st), with cfg. */
static void par_check(const uint8_t *data, size_t size, unsigned key,
                      const struct sonde_itm_config *cfg, const struct sonde_itm_packet *a,
                      size_t na, const struct sonde_itm_stats *st)
{
  static struct sonde_itm_packet c[4096];
  struct par_out o = {c, 0, 4096};
  struct sonde_itm *d = sonde_itm_new(cfg);
  struct sonde_itm_par_config pc = {2 + key % 3, 1 + key % 24};
  itm_par_force_speculation(true);
  if (sonde_itm_decode_parallel(d, data, size, &pc, par_sink, &o, NULL))
    abort();
  itm_par_force_speculation(false);
  struct sonde_itm_packet f[4];
  size_t nf = sonde_itm_finish(d, f, 4);
  for (size_t i = 0; i < nf; i++, o.n++)
    if (o.n < o.max)
      c[o.n] = f[i];
  size_t m = na < 4096 ? na : 4096;
  if (o.n != na || memcmp(a, c, m * sizeof *a) || memcmp(st, sonde_itm_stats(d), sizeof *st))
    abort();
  sonde_itm_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  size_t chunk = 1 + data[0] % 16, cap = 2 + data[0] / 16 % 8;
  unsigned key = data[0];
  data++;
  size--;
  static struct sonde_itm_packet a[4096], b[4096];
  uint64_t sa, sb;
  struct sonde_itm_stats st;
  size_t na = run(data, size, chunk, cap, ITM_LOOP_AUTO, a, 4096, &sa, NULL, &st);
  par_check(data, size, key, NULL, a, na, &st);
  for (unsigned loop = ITM_LOOP_AUTO; loop < 2 * (ITM_LOOP_RUN + 1); loop++) {
    size_t nb = run(data, size, size ? size : 1, CAP, loop, b, 4096, &sb, NULL, NULL);
    if (na != nb || sa != sb)
      abort();
    size_t m = na < 4096 ? na : 4096;
    if (memcmp(a, b, m * sizeof a[0]))
      abort();
  }
  /* waiting for the first sync, prescale 4 */
  struct sonde_itm_config cfg;
  sonde_itm_config_init(&cfg);
  cfg.start_unsynced = true;
  cfg.ts_prescale = 4;
  na = run(data, size, chunk, cap, ITM_LOOP_AUTO, a, 4096, &sa, &cfg, &st);
  par_check(data, size, key / 3, &cfg, a, na, &st);
  return 0;
}
