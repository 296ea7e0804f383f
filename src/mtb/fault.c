/* Where a fault happened according to the trace (include/sonde/mtb.h): the
 * instruction the newest exception entry interrupted, and the branch that
 * went to a given address. Used to name the culprit when the stacked frame
 * cannot be trusted (a wild PC, a frame that a stack-limit fault did not
 * push). */
#include <string.h>

#include "sonde/mtb.h"

int sonde_mtb_entry_site(const struct sonde_mtb_history *h, const struct sonde_sym *sym,
                         struct sonde_mtb_site *out)
{
  if (!h || !out)
    return SONDE_E_ARG;
  memset(out, 0, sizeof *out);
  size_t e = h->n;
  while (e-- > 0 && h->ev[e].kind != SONDE_MTB_EXC_ENTRY)
    ;
  if (e >= h->n)
    return SONDE_E_NOTFOUND;
  const struct sonde_mtb_event *en = &h->ev[e];
  out->packet = en->packet;
  out->handler = en->dst;
  out->pc = en->pc; /* the entry's source: the interrupted instruction */
  /* the newest instruction before it that the history shows ran */
  for (size_t i = e; i-- > 0;) {
    if (h->ev[i].kind == SONDE_MTB_INSN) {
      out->last = h->ev[i].pc;
      break;
    }
    if (h->ev[i].kind == SONDE_MTB_SESSION || h->ev[i].kind == SONDE_MTB_GAP)
      break;
  }
  (void)sym;
  return 0;
}

const struct sonde_mtb_event *sonde_mtb_branch_to(const struct sonde_mtb_history *h, uint32_t pc)
{
  pc &= ~1u;
  for (size_t i = h ? h->n : 0; i-- > 0;)
    if ((h->ev[i].kind == SONDE_MTB_BRANCH || h->ev[i].kind == SONDE_MTB_EXC_RETURN) &&
        h->ev[i].dst == pc)
      return &h->ev[i];
  return NULL;
}

int sonde_mtb_build_id_check(const struct sonde_mtb_bundle *b, const uint8_t *elf_id,
                             size_t elf_len)
{
  if (!b || !b->build_id_len)
    return SONDE_MTB_ID_NONE_IN_BUNDLE;
  if (!elf_len)
    return SONDE_MTB_ID_NONE_IN_ELF;
  /* The bundle keeps at most 20 bytes: an id that long must agree on them. */
  size_t n = elf_len < SONDE_MTB_BUILD_ID_MAX ? elf_len : SONDE_MTB_BUILD_ID_MAX;
  if (b->build_id_len != n || memcmp(b->build_id, elf_id, n))
    return SONDE_MTB_ID_MISMATCH;
  return SONDE_MTB_ID_MATCH;
}
