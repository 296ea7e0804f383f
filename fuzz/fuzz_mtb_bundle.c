/* Fuzz target: the MTB post-mortem bundle parser (src/mtb/bundle.c) and, for
 * bundles that parse, the decoder on their buffer with a real firmware's
 * code (fuzz/mtb_m33.elf). The CRC is recomputed over the input first when
 * its last byte is odd, so mutations reach past the CRC check. */
#include <stdint.h>
#include <stdio.h>
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
    size_t hdr = bu.version == 1 ? SONDE_MTB_BUNDLE_HEADER_V1 : SONDE_MTB_BUNDLE_HEADER;
    if (bu.raw.len + bu.stack_len + hdr + 4 > size || bu.build_id_len > SONDE_MTB_BUILD_ID_MAX)
      abort();
    /* Written back as version 2, it parses to the same fields. */
    long n2 = sonde_mtb_bundle_write(&bu, NULL, 0);
    uint8_t *w2 = n2 > 0 ? malloc((size_t)n2) : NULL;
    struct sonde_mtb_bundle b2;
    if (!w2 || sonde_mtb_bundle_write(&bu, w2, (size_t)n2) != n2 ||
        sonde_mtb_bundle_parse(w2, (size_t)n2, &b2, &d) != 0 || b2.raw.len != bu.raw.len ||
        b2.stack_len != bu.stack_len || b2.raw.position != bu.raw.position ||
        memcmp(b2.frame, bu.frame, sizeof bu.frame) || b2.flags != bu.flags ||
        b2.build_id_len != bu.build_id_len || memcmp(b2.s, bu.s, sizeof bu.s) ||
        memcmp(b2.r4_r11, bu.r4_r11, sizeof bu.r4_r11))
      abort();
    free(w2);
    struct sonde_mtb_packet *p = NULL;
    size_t n = 0;
    if (sonde_mtb_packets(&bu.raw, &p, &n, &d) == 0) {
      struct sonde_mtb_history h;
      if (sonde_mtb_rebuild(p, n, sym, NULL, &h, &d) == 0) {
        /* the fault analysis and the Perfetto writer on what decoded */
        struct sonde_mtb_site site;
        sonde_mtb_entry_site(&h, sym, &site);
        sonde_mtb_branch_to(&h, bu.frame[6]);
        struct sonde_mtb_chain chain;
        if (sonde_mtb_deepest_chain(&h, sym, &chain) == 0)
          sonde_mtb_chain_free(&chain);
        static FILE *null_out;
        if (!null_out)
          null_out = fopen("/dev/null", "wb");
        struct sonde_mtb_mark mark = {"fault", bu.frame[6], "x"};
        if (null_out && sonde_mtb_write_perfetto(null_out, "null", &h, h.n / 2, sym, &mark, &d) &&
            !d.msg[0])
          abort();
        sonde_mtb_history_free(&h);
      }
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
