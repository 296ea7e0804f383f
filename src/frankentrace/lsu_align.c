/* Aligning an ordered LSU trace to a cycle-level PC trace (paper 5.3): with
 * invasive runs the timestamps are not comparable, so each transfer is placed
 * on the next execution (run of cycles) of its PC, moving forward only; the
 * words of one multi-word instruction share its execution. */
#include <string.h>

#include "ft_internal.h"
#include "sonde/sym.h"

/* Does the instruction at pc move several words (one execution, several
 * transfers)? */
static bool multi_transfer(struct sonde_sym *sym, uint32_t pc)
{
  struct sonde_sym_insn in;
  if (sonde_sym_disasm(sym, pc, &in) != 0)
    return false;
  static const char *const p[] = {"ldm", "stm", "push", "pop", "ldrd", "strd",
                                  "vldm", "vstm", "vpush", "vpop"};
  for (unsigned i = 0; i < sizeof p / sizeof p[0]; i++)
    if (!strncmp(in.mnemonic, p[i], strlen(p[i])))
      return true;
  return false;
}

int64_t sonde_ft_lsu_align(const struct sonde_ft_trace *t, struct sonde_sym *sym,
                           struct sonde_ft_xfer *x, size_t n, bool use_ts)
{
  if (!t)
    return SONDE_E_ARG;
  int64_t unplaced = 0;
  uint64_t i = 0;       /* search position (index into the trace) */
  uint64_t run_end = 0; /* end of the run the previous transfer was placed in */
  const struct sonde_ft_xfer *prev = NULL;
  for (size_t k = 0; k < n; k++) {
    struct sonde_ft_xfer *p = &x[k];
    p->cycle = UINT64_MAX;
    if (p->gap)
      continue;
    if (use_ts) {
      struct sonde_ft_cell c = sonde_ft_trace_at(t, p->ts);
      if (c.state == SONDE_FT_PC && c.pc == p->pc)
        p->cycle = p->ts;
      else
        unplaced++;
      continue;
    }
    if (p->pc == 0xFFFFFFFFu) {
      unplaced++;
      continue;
    }
    /* LDM/STM/PUSH/POP: the next word of the same instruction stays in its run. */
    if (prev && prev->cycle != UINT64_MAX && prev->pc == p->pc &&
        (sym ? multi_transfer(sym, p->pc)
             : prev->size && p->addr == prev->addr + prev->size)) {
      p->cycle = prev->cycle;
      prev = p;
      continue;
    }
    uint64_t j = prev && prev->cycle != UINT64_MAX ? run_end : i;
    while (j < t->length && !(t->states[j] == SONDE_FT_PC && t->pcs[j] == p->pc))
      j++;
    if (j == t->length) {
      unplaced++;
      continue; /* the search position stays: later transfers may still fit */
    }
    p->cycle = t->origin + j;
    run_end = j;
    while (run_end < t->length && t->states[run_end] == SONDE_FT_PC && t->pcs[run_end] == p->pc)
      run_end++;
    i = run_end;
    prev = p;
  }
  return unplaced;
}
