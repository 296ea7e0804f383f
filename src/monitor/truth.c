/* Ground truth for the monitor (monitor.h): function changes of a cycle-level
 * PC trace (sonde run --trace-pc) under the VM link's rule, and the
 * precision/recall of polled transitions against them: a polled change into g
 * at t is right when the truth entered g in (t - window, t] (the function it
 * came from may differ: what ran in between was missed). */
#include "monitor_internal.h"

#include <stdlib.h>
#include <string.h>

#include "sonde/trace.h"

int sonde_mon_changes_from_pctrace(struct sonde_pctrace_reader *r, const struct sonde_mon_ftab *ft,
                                   struct sonde_mon_change **out, size_t *n, uint64_t *end_cycle)
{
  struct sonde_mon_change *a = NULL;
  size_t na = 0, cap = 0;
  long cur = -2;
  uint64_t end = 0;
  struct sonde_pctrace_record rec;
  int rc;
  while ((rc = sonde_pctrace_next(r, &rec)) == 1) {
    end = rec.cycle + rec.cycles;
    if (rec.kind != SONDE_PCTRACE_INSN)
      continue; /* keeps the function before it */
    long f = sonde_mon_ftab_lookup(ft, rec.pc);
    if (f == cur)
      continue;
    if (mon_grow((void **)&a, &cap, na, sizeof *a) < 0) {
      free(a);
      return SONDE_E_NOMEM;
    }
    a[na].cycle = rec.cycle;
    a[na].pc = rec.pc;
    a[na].func = (int32_t)f;
    na++;
    cur = f;
  }
  if (rc < 0) {
    free(a);
    return rc;
  }
  *out = a;
  *n = na;
  if (end_cycle)
    *end_cycle = end;
  return 0;
}

void sonde_mon_compare(const struct sonde_mon_change *truth, size_t ntruth,
                       const struct sonde_mon_change *polled, size_t npolled,
                       uint64_t window_cycles, struct sonde_mon_match *out)
{
  memset(out, 0, sizeof *out);
  /* Transitions are changes after the first (from = the change before). */
  out->truth = ntruth > 1 ? ntruth - 1 : 0;
  out->polled = npolled > 1 ? npolled - 1 : 0;
  size_t j = 1; /* first truth transition not yet passed */
  for (size_t i = 1; i < npolled; i++) {
    uint64_t t = polled[i].cycle;
    uint64_t lo = t >= window_cycles ? t - window_cycles + 1 : 0;
    while (j < ntruth && truth[j].cycle < lo)
      j++;
    for (size_t k = j; k < ntruth && truth[k].cycle <= t; k++) {
      if (truth[k].func == polled[i].func) {
        out->matched++;
        j = k + 1;
        break;
      }
    }
  }
  out->precision = out->polled ? (double)out->matched / (double)out->polled : 1.0;
  out->recall = out->truth ? (double)out->matched / (double)out->truth : 1.0;
}
