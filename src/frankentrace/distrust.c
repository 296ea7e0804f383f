/* Marking what nondeterminism leaves untrusted: every cycle from the first
 * disagreement between runs (or the first impossible transition, the earlier
 * sign of runs that went apart) becomes CONFLICT, so no stitched trace claims
 * a cycle it cannot show belongs to one execution. Shared by `frankentrace
 * stitch` (runner_stitch.c) and `frankentrace run` (vm_run.c, vm_runner.c). */
#include "sonde/frankentrace_vm.h"

uint64_t sonde_ft_first_conflict(const struct sonde_ft_report *rep)
{
  uint64_t first = UINT64_MAX;
  for (size_t i = 0; i < rep->conflict_count; i++)
    if (rep->conflicts[i].first_cycle < first)
      first = rep->conflicts[i].first_cycle;
  return first;
}

uint64_t sonde_ft_untrusted_from(const struct sonde_ft_report *rep, uint64_t first_impossible,
                                 uint32_t n, uint64_t origin)
{
  uint64_t sign = sonde_ft_first_conflict(rep);
  if (first_impossible < sign)
    sign = first_impossible;
  if (sign == UINT64_MAX)
    return sign;
  return sign >= origin + n ? sign - n : origin;
}

int sonde_ft_distrust_from(struct sonde_ft_trace **t, uint64_t from)
{
  uint64_t origin = sonde_ft_trace_origin(*t), len = sonde_ft_trace_length(*t);
  if (from >= origin + len)
    return 0;
  struct sonde_ft_trace *z = NULL;
  int rc = sonde_ft_trace_new(origin, &z);
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  while (!rc && sonde_ft_trace_next_span(*t, &pos, &sp) > 0) {
    uint64_t keep = sp.cycle >= from ? 0 : sp.cycle + sp.cycles <= from ? sp.cycles : from - sp.cycle;
    if (keep)
      rc = sonde_ft_trace_append(z, sp.cell, keep);
    if (!rc && keep < sp.cycles) {
      struct sonde_ft_cell c = sp.cell;
      if (!sonde_ft_state_unrecoverable(c.state))
        c.state = SONDE_FT_CONFLICT;
      rc = sonde_ft_trace_append(z, c, sp.cycles - keep);
    }
  }
  if (rc) {
    sonde_ft_trace_free(z);
    return rc;
  }
  sonde_ft_trace_set_clock_hz(z, sonde_ft_trace_clock_hz(*t));
  sonde_ft_trace_free(*t);
  *t = z;
  return 0;
}
