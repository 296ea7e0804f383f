/* A function-level profile from PC polling (monitor.h): per function, the
 * executions the inference found (count, shortest, longest), their inclusive
 * time (callees included; a recursive execution inside one of the same
 * function is not counted twice), the self time between changes, and with a
 * current both as charge. AVEKSHA section 4.4: "how many times a function is
 * called and how long each instance executes". */
#include "monitor_internal.h"

#include <stdlib.h>
#include <string.h>

int sonde_mon_profile(const struct sonde_mon_ftab *ft, const struct sonde_mon_infer *inf,
                      const struct sonde_mon_change *ch, size_t n, uint64_t end_cycle,
                      const struct sonde_mon_current *cur, struct sonde_mon_prof_row *rows)
{
  size_t nf = sonde_mon_ftab_count(ft);
  memset(rows, 0, (nf + 1) * sizeof *rows);
  for (size_t i = 0; i <= nf; i++) {
    rows[i].func = i < nf ? (int32_t)i : -1;
    rows[i].min_cycles = UINT64_MAX;
  }
  /* self time: from each change to the next */
  for (size_t i = 0; i < n; i++) {
    uint64_t a = ch[i].cycle, b = i + 1 < n ? ch[i + 1].cycle : end_cycle;
    if (b < a)
      b = a;
    struct sonde_mon_prof_row *r = &rows[ch[i].func < 0 ? nf : (size_t)ch[i].func];
    r->self_cycles += b - a;
    if (cur)
      r->self_ua_cycles += sonde_mon_charge(cur, a, b);
  }
  /* executions come in start order; the one at depth D lies inside the
   * latest one at depth D-1: stack[d] is the function of the latest at d */
  uint32_t maxd = 0;
  for (size_t i = 0; i < inf->nexecs; i++)
    if (inf->execs[i].depth > maxd)
      maxd = inf->execs[i].depth;
  int32_t *stack = calloc((size_t)maxd + 1, sizeof *stack);
  if (!stack)
    return SONDE_E_NOMEM;
  for (size_t i = 0; i < inf->nexecs; i++) {
    const struct sonde_mon_exec *e = &inf->execs[i];
    struct sonde_mon_prof_row *r = &rows[e->func < 0 ? nf : (size_t)e->func];
    uint64_t len = e->end - e->start;
    r->calls++;
    r->inferred += e->inferred;
    if (len < r->min_cycles)
      r->min_cycles = len;
    if (len > r->max_cycles)
      r->max_cycles = len;
    bool nested_in_self = false;
    for (uint32_t k = 0; k < e->depth; k++)
      nested_in_self |= stack[k] == e->func;
    if (!nested_in_self) {
      r->incl_cycles += len;
      if (cur)
        r->incl_ua_cycles += sonde_mon_charge(cur, e->start, e->end);
    }
    stack[e->depth] = e->func;
  }
  free(stack);
  for (size_t i = 0; i <= nf; i++)
    if (rows[i].min_cycles == UINT64_MAX)
      rows[i].min_cycles = 0;
  return 0;
}
