/* LSU traces out: the data phase of placed transfers, the CSV writer, and the
 * comparison with the VM's ground truth (sonde/frankentrace.h). */
#include <inttypes.h>
#include <string.h>

#include "ft_internal.h"

void sonde_ft_lsu_data_phase(const struct sonde_ft_trace *t, struct sonde_ft_xfer *x, size_t n)
{
  for (size_t k = 0; k < n;) {
    uint64_t c = x[k].cycle;
    size_t e = k + 1;
    while (e < n && !x[e].gap && x[e].cycle == c && c != UINT64_MAX)
      e++;
    if (c != UINT64_MAX && !x[k].gap && c >= t->origin && c - t->origin < t->length) {
      uint64_t j = c - t->origin, end = j;
      while (end < t->length && t->states[end] == t->states[j] && t->pcs[end] == t->pcs[j])
        end++;
      uint64_t len = end - j;
      for (size_t i = k; i < e; i++) {
        uint64_t d = i - k + 1;
        x[i].cycle = c + (d < len ? d : len - 1);
      }
    }
    k = e;
  }
}

int sonde_ft_lsu_write(FILE *f, const char *name, const struct sonde_ft_xfer *x, size_t n,
                       uint64_t cycle_offset, struct sonde_diag *diag)
{
  fputs("cycle,pc,addr,size,value,rw\n", f);
  for (size_t i = 0; i < n; i++) {
    const struct sonde_ft_xfer *p = &x[i];
    if (p->cycle != UINT64_MAX)
      fprintf(f, "%" PRIu64, p->cycle + cycle_offset);
    fputc(',', f);
    if (p->pc != 0xFFFFFFFFu)
      fprintf(f, "0x%08x", p->pc);
    if (p->gap) {
      fprintf(f, ",0x%08x,,,gap\n", p->addr);
      continue;
    }
    uint32_t v = p->size >= 4 ? p->value : p->value & ((1u << (8 * p->size)) - 1);
    fprintf(f, ",0x%08x,%u,0x%x,%c\n", p->addr, p->size ? p->size : 4, v, p->write ? 'w' : 'r');
  }
  if (fflush(f) != 0 || ferror(f))
    return sonde_diag_set(diag, SONDE_E_IO, "%s: write failed", name);
  return 0;
}

static bool in_ranges(uint32_t addr, const uint32_t *ranges, uint32_t nranges)
{
  for (uint32_t i = 0; i < nranges; i++)
    if (addr >> 16 == ranges[i])
      return true;
  return false;
}

void sonde_ft_lsu_verify(const struct sonde_ft_xfer *x, size_t n, const struct sonde_ft_xfer *truth,
                         size_t tn, const uint32_t *ranges, uint32_t nranges, uint64_t from,
                         uint64_t to, uint64_t cycle_offset, bool check_cycles,
                         struct sonde_ft_lsu_verify_result *v)
{
  memset(v, 0, sizeof *v);
  size_t i = 0, j = 0;
  for (;;) {
    while (i < n && x[i].gap) {
      v->gaps++;
      i++;
    }
    /* ground truth: in the window and the ranges; stacking is read as run 0
     * rows with rw R/W, which lsu_read does not keep apart: the caller
     * passes the rows without them */
    while (j < tn && (truth[j].cycle < from || truth[j].cycle >= to ||
                      !in_ranges(truth[j].addr, ranges, nranges)))
      j++;
    if (i >= n && j >= tn)
      break;
    if (i < n)
      v->trace_count++;
    if (j < tn)
      v->truth_count++;
    if (i >= n || j >= tn) {
      if (!v->differs) {
        v->differs = true;
        v->first = v->compared;
        memset(&v->got, 0, sizeof v->got);
        memset(&v->want, 0, sizeof v->want);
        if (i < n)
          v->got = x[i];
        else
          v->got.gap = true;
        if (j < tn)
          v->want = truth[j];
        else
          v->want.gap = true;
      }
      i += i < n;
      j += j < tn;
      continue;
    }
    const struct sonde_ft_xfer *a = &x[i], *b = &truth[j];
    if (a->cycle == UINT64_MAX)
      v->unplaced++;
    bool same = a->pc == b->pc && a->addr == b->addr && a->size == b->size &&
                a->value == b->value && a->write == b->write &&
                (!check_cycles || (a->cycle != UINT64_MAX && a->cycle + cycle_offset == b->cycle));
    if (same)
      v->equal++;
    else if (!v->differs) {
      v->differs = true;
      v->first = v->compared;
      v->got = *a;
      v->want = *b;
    }
    v->compared++;
    i++;
    j++;
  }
}
