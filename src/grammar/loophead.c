/* Loop-header detection (docs/grammar.md, "Loop header"). Reference 001
 * section 2 calls the instruction that starts the main loop of a cyclic
 * program its loop header. Without control-flow analysis we read loops off
 * the trace itself: a transition w[i] -> w[i+1] with w[i+1] < w[i] is a
 * backward branch (PCs grow along straight-line code), its target the head of
 * a loop whose body reaches at least back to w[i]. The outermost loop is the
 * one whose body spans the most bytes; restricting source and target to a
 * range (main's, when the caller knows it) keeps calls to lower addresses and
 * interrupt returns out. */
#include <stdlib.h>

#include "grammar_internal.h"

struct lh_ent {
  uint32_t target, maxsrc;
  uint64_t count;
};

int sonde_grammar_find_loop_header(const uint32_t *syms, size_t n, uint32_t lo, uint32_t hi,
                                   uint32_t max_span, uint32_t *lh)
{
  size_t mask = 1023, used = 0;
  struct lh_ent *t = calloc(mask + 1, sizeof *t);
  uint8_t *occ = calloc(mask + 1, 1);
  if (!t || !occ) {
    free(t);
    free(occ);
    return SONDE_E_NOMEM;
  }
  for (size_t i = 0; i + 1 < n; i++) {
    uint32_t a = syms[i], b = syms[i + 1];
    if (b >= a || a - b > max_span || a < lo || a >= hi || b < lo || b >= hi || (a | b) & 1)
      continue;
    size_t h = (size_t)((b * 0x9E3779B1u) >> 7) & mask;
    while (occ[h] && t[h].target != b)
      h = (h + 1) & mask;
    if (!occ[h]) {
      occ[h] = 1;
      t[h] = (struct lh_ent){b, a, 0};
      if (++used * 2 > mask) {
        size_t nm = mask * 2 + 1;
        struct lh_ent *nt = calloc(nm + 1, sizeof *nt);
        uint8_t *no = calloc(nm + 1, 1);
        if (!nt || !no) {
          free(nt);
          free(no);
          free(t);
          free(occ);
          return SONDE_E_NOMEM;
        }
        for (size_t k = 0; k <= mask; k++) {
          if (!occ[k])
            continue;
          size_t j = (size_t)((t[k].target * 0x9E3779B1u) >> 7) & nm;
          while (no[j])
            j = (j + 1) & nm;
          no[j] = 1;
          nt[j] = t[k];
        }
        free(t);
        free(occ);
        t = nt;
        occ = no;
        mask = nm;
        h = (size_t)((b * 0x9E3779B1u) >> 7) & mask;
        while (t[h].target != b)
          h = (h + 1) & mask;
      }
    }
    t[h].count++;
    if (a > t[h].maxsrc)
      t[h].maxsrc = a;
  }
  int found = 0;
  struct lh_ent best = {0};
  for (size_t k = 0; k <= mask; k++) {
    if (!occ[k] || t[k].count < 2)
      continue;
    uint32_t span = t[k].maxsrc - t[k].target, bspan = best.maxsrc - best.target;
    if (!found || span > bspan || (span == bspan && t[k].count > best.count) ||
        (span == bspan && t[k].count == best.count && t[k].target < best.target)) {
      best = t[k];
      found = 1;
    }
  }
  free(t);
  free(occ);
  if (!found)
    return SONDE_E_NOTFOUND;
  *lh = best.target;
  return 0;
}
