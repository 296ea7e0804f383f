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
    if (p->gap) { /* value: the window's length in cycles */
      fprintf(f, ",0x%08x,,0x%x,gap\n", p->addr, p->value);
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

/* Is the ground-truth transfer t inside a gap window of x (same range)? */
static bool in_gap(const struct sonde_ft_xfer *x, size_t n, const struct sonde_ft_xfer *t,
                   uint64_t cycle_offset)
{
  for (size_t i = 0; i < n; i++)
    if (x[i].gap && x[i].cycle != UINT64_MAX && x[i].addr >> 16 == t->addr >> 16 &&
        t->cycle >= x[i].cycle + cycle_offset &&
        t->cycle - (x[i].cycle + cycle_offset) < (x[i].value ? x[i].value : 1))
      return true;
  return false;
}

void sonde_ft_lsu_verify(const struct sonde_ft_xfer *x, size_t n, const struct sonde_ft_xfer *truth,
                         size_t tn, const uint32_t *ranges, uint32_t nranges, uint64_t from,
                         uint64_t to, uint64_t cycle_offset, bool check_cycles,
                         struct sonde_ft_lsu_verify_result *v)
{
  memset(v, 0, sizeof *v);
  for (size_t i = 0; i < n; i++)
    v->gaps += x[i].gap;
  size_t i = 0, j = 0;
  for (;;) {
    while (i < n && x[i].gap)
      i++;
    while (j < tn && (truth[j].cycle < from || truth[j].cycle >= to ||
                      !in_ranges(truth[j].addr, ranges, nranges)))
      j++;
    if (i >= n && j >= tn)
      break;
    const struct sonde_ft_xfer *a = i < n ? &x[i] : NULL, *b = j < tn ? &truth[j] : NULL;
    bool same = a && b && a->pc == b->pc && a->addr == b->addr && a->size == b->size &&
                a->value == b->value && a->write == b->write &&
                (!check_cycles || (a->cycle != UINT64_MAX && a->cycle + cycle_offset == b->cycle));
    if (!same && b && v->gaps && in_gap(x, n, b, cycle_offset)) {
      v->in_gaps++; /* lost in an overflow the trace marks */
      v->truth_count++;
      j++;
      continue;
    }
    if (a) {
      v->trace_count++;
      v->unplaced += a->cycle == UINT64_MAX;
    }
    if (b)
      v->truth_count++;
    if (same) {
      v->equal++;
    } else if (!v->differs) {
      v->differs = true;
      v->first = v->compared;
      memset(&v->got, 0, sizeof v->got);
      memset(&v->want, 0, sizeof v->want);
      if (a)
        v->got = *a;
      else
        v->got.gap = true;
      if (b)
        v->want = *b;
      else
        v->want.gap = true;
    }
    v->compared++;
    i += a != NULL;
    j += b != NULL;
  }
}
