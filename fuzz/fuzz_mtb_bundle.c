/* Fuzz target: the MTB post-mortem bundle parser (src/mtb/bundle.c) and, for
 * bundles that parse, the decoder on their buffer with a real firmware's
 * code (fuzz/mtb_m33.elf). The CRC is recomputed over the input first when
 * its last byte is odd, so mutations reach past the CRC check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/mtb.h"
#include "sonde/sym.h"

#ifndef SONDE_FUZZ_MTB_ELF
#define SONDE_FUZZ_MTB_ELF "fuzz/mtb_m33.elf"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static struct sonde_sym *sym;
  if (!sym && sonde_sym_open(SONDE_FUZZ_MTB_ELF, &sym, NULL) != 0)
    abort();
  uint8_t *b = malloc(size ? size : 1);
  if (!b)
    return 0;
  if (size)
    memcpy(b, data, size);
  if (size >= 136 && (b[size - 1] & 1)) { /* fix the CRC where the header says it is */
    uint32_t total = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 |
                     (uint32_t)b[11] << 24;
    if (total >= 132 && total <= size) {
      uint32_t crc = sonde_mtb_crc32(0, b, total - 4);
      memcpy(b + total - 4, &crc, 4);
    }
  }
  struct sonde_mtb_bundle bu;
  struct sonde_diag d = {{0}};
  if (sonde_mtb_bundle_parse(b, size, &bu, &d) < 0) {
    if (!d.msg[0])
      abort();
  } else {
    if (bu.raw.len + bu.stack_len + 132 > size)
      abort();
    struct sonde_mtb_packet *p = NULL;
    size_t n = 0;
    if (sonde_mtb_packets(&bu.raw, &p, &n, &d) == 0) {
      struct sonde_mtb_history h;
      if (sonde_mtb_rebuild(p, n, sym, NULL, &h, &d) == 0)
        sonde_mtb_history_free(&h);
      free(p);
    } else if (!d.msg[0]) {
      abort();
    }
    char w[256];
    sonde_mtb_fault_words(bu.cfsr, bu.hfsr, w, sizeof w);
    if (!memchr(w, 0, sizeof w))
      abort();
  }
  free(b);
  return 0;
}
