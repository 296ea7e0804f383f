/* Fuzz target: the ITM/DWT packet decoder (src/itm). The first byte picks
 * the chunk size and output capacity, so splits and a full output array are
 * exercised; the whole input is also decoded at once, with the hot path's
 * own choice of loop and with each of its loops forced (itm_internal.h),
 * in both copies of the hot loops (baseline ISA and, where the CPU has them,
 * BMI2/AVX2), and all runs must give the same packets. Invariants: offsets increase, every packet type is valid,
 * every byte is consumed, skipped bytes add up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "itm/itm_internal.h"
#include "sonde/itm.h"

#define CAP 256

/* loop: ITM_LOOP_*, plus ITM_LOOP_RUN + 1 for the same with the portable copy */
static size_t run(const uint8_t *data, size_t size, size_t chunk, size_t cap, unsigned loop,
                  struct sonde_itm_packet *all, size_t max, uint64_t *skipped)
{
  struct sonde_itm *d = sonde_itm_new(NULL);
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
  sonde_itm_free(d);
  *skipped = skip;
  return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  size_t chunk = 1 + data[0] % 16, cap = 2 + data[0] / 16 % 8;
  data++;
  size--;
  static struct sonde_itm_packet a[4096], b[4096];
  uint64_t sa, sb;
  size_t na = run(data, size, chunk, cap, ITM_LOOP_AUTO, a, 4096, &sa);
  for (unsigned loop = ITM_LOOP_AUTO; loop < 2 * (ITM_LOOP_RUN + 1); loop++) {
    size_t nb = run(data, size, size ? size : 1, CAP, loop, b, 4096, &sb);
    if (na != nb || sa != sb)
      abort();
    size_t m = na < 4096 ? na : 4096;
    if (memcmp(a, b, m * sizeof a[0]))
      abort();
  }
  return 0;
}
