/* Fuzz target: the MTB decoder (src/mtb) on arbitrary buffers and register
 * values, with the code of a real firmware (fuzz/mtb_m33.elf, the
 * firmware/mtb image for cm33) so packets that hit its code walk it.
 *
 * Input: POSITION (4 bytes LE), MASTER (4), flags (1: bit 0 = MASTER given,
 * bit 1 = fold every address into the image's code), then the buffer. Any
 * input must decode or be rejected with a message; a decoded history must be
 * well formed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/mtb.h"
#include "sonde/sym.h"

#ifndef SONDE_FUZZ_MTB_ELF
#define SONDE_FUZZ_MTB_ELF "fuzz/mtb_m33.elf"
#endif

static uint32_t rd32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static struct sonde_sym *sym;
  if (!sym && sonde_sym_open(SONDE_FUZZ_MTB_ELF, &sym, NULL) != 0)
    abort();
  if (size < 9)
    return 0;
  struct sonde_mtb_raw raw = {data + 9, size - 9, 0x20040000u, rd32(data), rd32(data + 4),
                              data[8] & 1};
  struct sonde_diag d = {{0}};
  struct sonde_mtb_packet *p = NULL;
  size_t n = 0;
  if (sonde_mtb_packets(&raw, &p, &n, &d) < 0) {
    if (!d.msg[0] || p || n)
      abort(); /* every error explains itself and leaves nothing */
    return 0;
  }
  if (data[8] & 2)
    for (size_t i = 0; i < n; i++) { /* into 0x100..0x4ff, where the code is */
      if (!sonde_mtb_is_exc_return(p[i].src))
        p[i].src = 0x100 + (p[i].src & 0x3FE);
      if (!sonde_mtb_is_exc_return(p[i].dst))
        p[i].dst = 0x100 + (p[i].dst & 0x3FE);
    }
  struct sonde_mtb_options opt = {.end_pc = n ? p[n - 1].dst + 8 : 0};
  struct sonde_mtb_history h;
  if (sonde_mtb_rebuild(p, n, sym, &opt, &h, &d) == 0) {
    if (h.packets != n || h.in_image > h.addresses)
      abort();
    size_t insns = 0;
    for (size_t i = 0; i < h.n; i++) {
      if (h.ev[i].packet >= n || h.ev[i].kind > SONDE_MTB_GAP)
        abort();
      insns += h.ev[i].kind == SONDE_MTB_INSN;
    }
    for (size_t i = 0; i < h.nissues; i++)
      if (h.issues[i].packet >= n || !memchr(h.issues[i].why, 0, sizeof h.issues[i].why))
        abort();
    if (insns != h.instructions)
      abort();
    struct sonde_sym_line ln;
    if (h.n)
      sonde_sym_line(sym, h.ev[h.n - 1].pc, &ln);
    sonde_mtb_history_free(&h);
  }
  free(p);
  return 0;
}
