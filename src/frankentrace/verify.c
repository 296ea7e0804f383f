/* verify: a reconstructed trace against ground truth, cycle by cycle, over the
 * union of both cycle ranges. */
#include <string.h>

#include "ft_internal.h"

int sonde_ft_verify(const struct sonde_ft_trace *trace, const struct sonde_ft_trace *gt,
                    struct sonde_ft_verify_result *out)
{
  memset(out, 0, sizeof *out);
  if (!trace || !gt)
    return SONDE_E_ARG;
  uint64_t lo = trace->origin < gt->origin ? trace->origin : gt->origin;
  uint64_t te = trace->origin + trace->length, ge = gt->origin + gt->length;
  uint64_t hi = te > ge ? te : ge;
  for (uint64_t c = lo; c < hi; c++) {
    bool in_t = c >= trace->origin && c < te, in_g = c >= gt->origin && c < ge;
    if (!in_t) {
      out->missing++;
      continue;
    }
    if (!in_g) {
      out->extra++;
      continue;
    }
    uint64_t i = c - trace->origin, j = c - gt->origin;
    uint8_t s = trace->states[i], w = gt->states[j];
    if (sonde_ft_state_unrecoverable((enum sonde_ft_state)s)) {
      out->unrecoverable++;
      continue;
    }
    out->compared++;
    bool same = s == w && (s == SONDE_FT_SLEEP || s == SONDE_FT_HALTED ||
                           trace->pcs[i] == gt->pcs[j]);
    if (same) {
      out->equal++;
      continue;
    }
    if (!out->different++) {
      out->has_difference = true;
      out->first_cycle = c;
      out->got = (struct sonde_ft_cell){trace->pcs[i], (enum sonde_ft_state)s};
      out->want = (struct sonde_ft_cell){gt->pcs[j], (enum sonde_ft_state)w};
    }
  }
  return 0;
}
