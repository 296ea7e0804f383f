/* What a PC sample at cycle T shows, from a PC trace (include/sonde/trace.h,
 * docs/vm.md "Which PC a sample carries"): the one mapping from ground truth
 * to DWT PC samples, DWT_PCSR reads and sonde_vm_pc_at_cycle(), which the
 * VM's samples follow exactly and FrankenTrace's verification uses. */
#include "sonde/trace.h"

#include <stdlib.h>

struct sonde_pcsample sonde_pcsample_of(const struct sonde_pctrace_record *rec, uint64_t cycle,
                                        bool have_prev, uint32_t prev_pc)
{
  struct sonde_pcsample s = {cycle, SONDE_PCSAMPLE_NONE, 0};
  switch (rec->kind) {
  case SONDE_PCTRACE_INSN:
    s.kind = SONDE_PCSAMPLE_PC;
    s.pc = rec->pc;
    break;
  case SONDE_PCTRACE_SLEEP:
    s.kind = SONDE_PCSAMPLE_SLEEP;
    break;
  case SONDE_PCTRACE_EXC_ENTRY:
  case SONDE_PCTRACE_EXC_RETURN:
  case SONDE_PCTRACE_TAIL_CHAIN: /* no instruction in Execute: the last that entered it */
    if (have_prev) {
      s.kind = SONDE_PCSAMPLE_PC;
      s.pc = prev_pc;
    }
    break;
  case SONDE_PCTRACE_HALTED: /* Debug state: DWT_PCSR reads 0xFFFFFFFF */
  default:
    break;
  }
  return s;
}

struct sonde_pcsample_projector {
  struct sonde_pctrace_reader *r;
  struct sonde_pctrace_record rec; /* the record holding the last cycle asked for */
  bool have_rec, at_end;
  bool have_prev;                  /* an instruction record came before rec: */
  uint32_t prev_pc;                /* ... the last one */
  uint64_t last;                   /* the last cycle asked for */
  bool asked;
};

int sonde_pcsample_projector_new(struct sonde_pctrace_reader *r,
                                 struct sonde_pcsample_projector **out)
{
  if (!out)
    return SONDE_E_ARG;
  *out = NULL;
  if (!r)
    return SONDE_E_ARG;
  struct sonde_pcsample_projector *p = calloc(1, sizeof *p);
  if (!p)
    return SONDE_E_NOMEM;
  p->r = r;
  *out = p;
  return 0;
}

int sonde_pcsample_at(struct sonde_pcsample_projector *p, uint64_t cycle,
                      struct sonde_pcsample *out)
{
  if (!p || !out || (p->asked && cycle < p->last))
    return SONDE_E_ARG;
  p->asked = true;
  p->last = cycle;
  while (!p->have_rec || cycle - p->rec.cycle >= p->rec.cycles) {
    if (p->have_rec && cycle < p->rec.cycle)
      return SONDE_E_ARG; /* before the trace's first cycle */
    if (p->at_end)
      return 0;
    if (p->have_rec && p->rec.kind == SONDE_PCTRACE_INSN) {
      p->have_prev = true;
      p->prev_pc = p->rec.pc;
    }
    int rc = sonde_pctrace_next(p->r, &p->rec);
    if (rc < 0)
      return rc;
    if (rc == 0) {
      p->at_end = true;
      p->have_rec = false;
      return 0;
    }
    p->have_rec = true;
  }
  *out = sonde_pcsample_of(&p->rec, cycle, p->have_prev, p->prev_pc);
  return 1;
}

void sonde_pcsample_projector_free(struct sonde_pcsample_projector *p)
{
  free(p);
}
