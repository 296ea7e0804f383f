/* What a DWT PC sample at cycle T carries, applied to a whole ground-truth
 * trace. The rule is the VM's, in one place: sonde_pcsample_of()
 * (include/sonde/trace.h, src/trace/pcsample.c, docs/vm.md "Which PC a sample
 * carries"):
 *   - an instruction occupying T: its own PC (through every stall cycle too;
 *     silicon agrees: the real CC2650 trace shows `ldr.w r2, [r3, #788]` at
 *     0x0e80 for all of its peripheral stall);
 *   - exception entry, return, tail-chain: the last instruction that started
 *     before T;
 *   - sleep: the sleep packet;
 *   - halted, or before any instruction: no sample (UNSAMPLED here).
 * This file only translates between the cell model and pct records. */
#include <string.h>

#include "ft_internal.h"
#include "sonde/trace.h"

/* The pct record kind of a ground-truth cell (unrecoverable: "unknown"). */
static enum sonde_pctrace_kind kind_of(uint8_t s)
{
  switch (s) {
  case SONDE_FT_PC: return SONDE_PCTRACE_INSN;
  case SONDE_FT_SLEEP: return SONDE_PCTRACE_SLEEP;
  case SONDE_FT_EXC_ENTRY: return SONDE_PCTRACE_EXC_ENTRY;
  case SONDE_FT_EXC_RETURN: return SONDE_PCTRACE_EXC_RETURN;
  case SONDE_FT_TAIL_CHAIN: return SONDE_PCTRACE_TAIL_CHAIN;
  case SONDE_FT_HALTED: return SONDE_PCTRACE_HALTED;
  default: return SONDE_PCTRACE_UNKNOWN;
  }
}

int sonde_ft_project_dwt(const struct sonde_ft_trace *gt, struct sonde_ft_trace **out)
{
  *out = NULL;
  if (!gt)
    return SONDE_E_ARG;
  struct sonde_ft_trace *t;
  int rc = sonde_ft_trace_new(gt->origin, &t);
  if (!rc)
    rc = ft_trace_resize(t, gt->length);
  if (rc) {
    sonde_ft_trace_free(t);
    return rc;
  }
  t->clock_hz = gt->clock_hz;
  bool have_prev = false;
  uint32_t prev = 0;
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  while (sonde_ft_trace_next_span(gt, &pos, &sp)) {
    uint64_t i0 = sp.cycle - gt->origin, n = sp.cycles;
    uint8_t s = (uint8_t)sp.cell.state;
    if (sonde_ft_state_unrecoverable(sp.cell.state)) {
      /* Not known in the ground truth either: stays what it is. */
      for (uint64_t i = i0; i < i0 + n; i++) {
        t->states[i] = s;
        t->pcs[i] = sp.cell.pc;
      }
      continue;
    }
    struct sonde_pctrace_record rec = {sp.cycle, (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n),
                                       kind_of(s), s == SONDE_FT_PC ? sp.cell.pc : 0,
                                       s == SONDE_FT_PC ? 0 : sp.cell.pc};
    /* Within one span the rule gives one answer for every cycle. */
    struct sonde_pcsample ps = sonde_pcsample_of(&rec, sp.cycle, have_prev, prev);
    uint8_t ns = ps.kind == SONDE_PCSAMPLE_PC      ? SONDE_FT_PC
                 : ps.kind == SONDE_PCSAMPLE_SLEEP ? SONDE_FT_SLEEP
                                                   : SONDE_FT_UNSAMPLED;
    uint32_t npc = ps.kind == SONDE_PCSAMPLE_PC ? ps.pc : 0;
    memset(t->states + i0, ns, (size_t)n);
    for (uint64_t i = i0; i < i0 + n; i++)
      t->pcs[i] = npc;
    if (s == SONDE_FT_PC) {
      have_prev = true;
      prev = sp.cell.pc;
    }
  }
  *out = t;
  return 0;
}
