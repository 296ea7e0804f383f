/* Fuzz target: the TPIU deformatter (src/swo/tpiu.c). Byte 0 picks the
 * stream, byte 1 the chunk size; the rest is the formatted stream. Checks:
 * output stays within SONDE_SWO_TPIU_OUT_MAX, and chunked feeding gives exactly the bytes,
 * IDs and statistics of a single feed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/swo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 2)
    return 0;
  static const int sel[4] = {1, 2, SONDE_SWO_TPIU_ID_ALL, 0x6F};
  struct sonde_swo_tpiu_config cfg;
  sonde_swo_tpiu_config_init(&cfg);
  cfg.id = sel[data[0] & 3];
  cfg.assume_aligned = (data[0] & 4) != 0;
  size_t chunk = 1 + data[1] % 37;
  data += 2;
  size = size - 2;
  struct sonde_swo_tpiu *a = NULL, *b = NULL;
  if (sonde_swo_tpiu_new(&cfg, &a) || sonde_swo_tpiu_new(&cfg, &b))
    abort();
  uint8_t *o1 = malloc(size + 1), *i1 = malloc(size + 1), *o2 = malloc(size + 1),
          *i2 = malloc(size + 1);
  size_t n1 = sonde_swo_tpiu_feed(a, data, size, o1, i1);
  size_t n2 = 0;
  for (size_t i = 0; i < size; i += chunk) {
    size_t k = size - i < chunk ? size - i : chunk;
    size_t got = sonde_swo_tpiu_feed(b, data + i, k, o2 + n2, i2 + n2);
    if (got > SONDE_SWO_TPIU_OUT_MAX(k))
      abort();
    n2 += got;
  }
  struct sonde_swo_tpiu_stats s1, s2;
  sonde_swo_tpiu_get_stats(a, &s1);
  sonde_swo_tpiu_get_stats(b, &s2);
  if (n1 > size || n1 != n2 || memcmp(o1, o2, n1) || memcmp(i1, i2, n1) ||
      s1.out_bytes != n1 || s1.in_bytes != size || s2.out_bytes != n1 ||
      s1.frames != s2.frames || s1.full_syncs != s2.full_syncs ||
      s1.half_syncs != s2.half_syncs || s1.resyncs != s2.resyncs ||
      s1.lost_bytes != s2.lost_bytes || s1.reserved_bytes != s2.reserved_bytes ||
      s1.null_bytes != s2.null_bytes || s1.id_changes != s2.id_changes ||
      memcmp(s1.bytes_per_id, s2.bytes_per_id, sizeof s1.bytes_per_id) ||
      s1.current_id != s2.current_id || s1.synced != s2.synced)
    abort();
  free(o1);
  free(i1);
  free(o2);
  free(i2);
  sonde_swo_tpiu_free(a);
  sonde_swo_tpiu_free(b);
  return 0;
}
