/* analyze: busy-wait loops and per-instruction durations on a cycle-level
 * trace. Both work on the trace's runs (consecutive cycles with one PC): a run
 * is one execution of an instruction, its length the instruction's duration
 * (a stitched trace cannot split back-to-back executions of one PC, such as
 * `b .`, which therefore count as one long execution). */
#include <stdlib.h>
#include <string.h>

#include "ft_internal.h"
#include "sonde/sym.h"

#define NOT_PC 0xFFFFFFFFu /* a run that is not a known instruction */

struct run {
  uint32_t pc;
  uint64_t start, cycles;
};

/* The trace's runs; non-instruction spans become NOT_PC runs. */
static int collect_runs(const struct sonde_ft_trace *t, struct run **out, size_t *count)
{
  size_t cap = 1024, n = 0;
  struct run *r = malloc(cap * sizeof *r);
  if (!r)
    return SONDE_E_NOMEM;
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  while (sonde_ft_trace_next_span(t, &pos, &sp)) {
    uint32_t pc = sp.cell.state == SONDE_FT_PC ? sp.cell.pc : NOT_PC;
    if (n && pc == NOT_PC && r[n - 1].pc == NOT_PC) {
      r[n - 1].cycles += sp.cycles;
      continue;
    }
    if (n == cap) {
      struct run *p = realloc(r, 2 * cap * sizeof *r);
      if (!p) {
        free(r);
        return SONDE_E_NOMEM;
      }
      r = p;
      cap *= 2;
    }
    r[n++] = (struct run){pc, sp.cycle, sp.cycles};
  }
  *out = r;
  *count = n;
  return 0;
}

/* Does the body r[0..L-1] store (then it does work, not waiting) or load? */
static void classify_body(struct sonde_sym *sym, const struct run *r, size_t L, bool *stores,
                          bool *loads)
{
  *stores = *loads = false;
  for (size_t a = 0; a < L; a++) {
    struct sonde_sym_insn in;
    if (sonde_sym_disasm(sym, r[a].pc, &in) != 0)
      continue;
    if (!strncmp(in.mnemonic, "st", 2) || !strncmp(in.mnemonic, "push", 4))
      *stores = true;
    if (!strncmp(in.mnemonic, "ld", 2) || !strncmp(in.mnemonic, "pop", 3))
      *loads = true;
  }
}

/* The smallest period L (2..max_body) with which the PC sequence repeats from
 * run i, its body made of distinct known PCs; *m = how many runs keep
 * repeating it. 0 if none. */
static size_t find_period(const struct run *r, size_t n, size_t i, unsigned max_body, size_t *m)
{
  if (r[i].pc == NOT_PC)
    return 0;
  for (size_t L = 2; L <= max_body && i + L < n; L++) {
    if (r[i + L].pc != r[i].pc)
      continue;
    bool distinct = true;
    for (size_t a = 0; a < L && distinct; a++) {
      if (r[i + a].pc == NOT_PC)
        distinct = false;
      for (size_t b = a + 1; b < L && distinct; b++)
        if (r[i + a].pc == r[i + b].pc)
          distinct = false;
    }
    if (!distinct)
      continue;
    size_t k = L;
    while (i + k < n && r[i + k].pc == r[i + k - L].pc)
      k++;
    *m = k;
    return L;
  }
  return 0;
}

/* Are the cycles between two pieces of a loop only unrecoverable ones or
 * instructions of its body? */
static bool gap_fits(const struct sonde_ft_trace *t, const struct sonde_ft_busy_loop *l,
                     uint64_t from, uint64_t to, uint64_t *unrec)
{
  uint64_t u = 0;
  for (uint64_t c = from; c < to; c++) {
    struct sonde_ft_cell x = sonde_ft_trace_at(t, c);
    if (sonde_ft_state_unrecoverable(x.state))
      u++;
    else if (x.state != SONDE_FT_PC || x.pc < l->head || x.pc > l->tail)
      return false;
  }
  *unrec = u;
  return true;
}

int sonde_ft_find_busy_loops(const struct sonde_ft_trace *t, const struct sonde_ft_busy_config *cfg,
                             struct sonde_ft_busy_loop **loops, size_t *count)
{
  *loops = NULL;
  *count = 0;
  if (!t)
    return SONDE_E_ARG;
  unsigned max_body = cfg && cfg->max_body ? cfg->max_body : 8;
  uint64_t min_iter = cfg && cfg->min_iterations ? cfg->min_iterations : 3;
  uint64_t min_cycles = cfg && cfg->min_cycles ? cfg->min_cycles : 64;
  uint64_t max_gap = cfg && cfg->max_gap ? cfg->max_gap : 16;
  struct sonde_sym *sym = cfg ? cfg->sym : NULL;
  struct run *r;
  size_t n;
  int rc = collect_runs(t, &r, &n);
  if (rc)
    return rc;
  size_t cap = 0, found = 0;
  struct sonde_ft_busy_loop *out = NULL;
  for (size_t i = 0; i < n;) {
    size_t m = 0, L = find_period(r, n, i, max_body, &m);
    if (!L) {
      i++;
      continue;
    }
    struct sonde_ft_busy_loop l = {r[i].start, r[i + m - 1].start + r[i + m - 1].cycles - 1,
                                   r[i].pc, r[i].pc, (uint32_t)L, (m + L - 1) / L, 0, false};
    for (size_t a = 0; a < L; a++) {
      if (r[i + a].pc < l.head)
        l.head = r[i + a].pc;
      if (r[i + a].pc > l.tail)
        l.tail = r[i + a].pc;
    }
    bool stores = false;
    if (sym)
      classify_body(sym, r + i, L, &stores, &l.loads);
    i += m;
    if (stores)
      continue;
    /* The continuation of the previous piece after an unrecoverable gap? */
    uint64_t unrec;
    if (found) {
      struct sonde_ft_busy_loop *p = &out[found - 1];
      if (p->head == l.head && p->tail == l.tail && p->body_len == l.body_len &&
          l.first_cycle - p->last_cycle - 1 <= max_gap &&
          gap_fits(t, p, p->last_cycle + 1, l.first_cycle, &unrec)) {
        p->last_cycle = l.last_cycle;
        p->iterations += l.iterations;
        p->unrecoverable += unrec;
        continue;
      }
    }
    if (found == cap) {
      cap = cap ? 2 * cap : 16;
      struct sonde_ft_busy_loop *p = realloc(out, cap * sizeof *p);
      if (!p) {
        free(out);
        free(r);
        return SONDE_E_NOMEM;
      }
      out = p;
    }
    out[found++] = l;
  }
  free(r);
  /* Pieces are merged first, then the small ones dropped. */
  size_t k = 0;
  for (size_t j = 0; j < found; j++)
    if (out[j].iterations >= min_iter && out[j].last_cycle - out[j].first_cycle + 1 >= min_cycles)
      out[k++] = out[j];
  *loops = out;
  *count = k;
  return 0;
}

unsigned sonde_ft_hist_bucket(uint64_t cycles)
{
  if (cycles <= 4)
    return cycles ? (unsigned)cycles - 1 : 0;
  if (cycles <= 8)
    return 4;
  if (cycles <= 16)
    return 5;
  return cycles <= 32 ? 6 : 7;
}

static int cmp_stat(const void *a, const void *b)
{
  uint32_t x = ((const struct sonde_ft_insn_stat *)a)->pc, y = ((const struct sonde_ft_insn_stat *)b)->pc;
  return x < y ? -1 : x > y;
}

int sonde_ft_insn_stats(const struct sonde_ft_trace *t, struct sonde_ft_insn_stat **stats,
                        size_t *count)
{
  *stats = NULL;
  *count = 0;
  if (!t)
    return SONDE_E_ARG;
  /* Open addressing on the PC, then sorted. */
  size_t cap = 4096, used = 0;
  struct sonde_ft_insn_stat *h = calloc(cap, sizeof *h);
  bool *occ = calloc(cap, 1);
  if (!h || !occ)
    goto nomem;
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  while (sonde_ft_trace_next_span(t, &pos, &sp)) {
    if (sp.cell.state != SONDE_FT_PC)
      continue;
    if (2 * (used + 1) > cap) {
      size_t nc = 2 * cap;
      struct sonde_ft_insn_stat *nh = calloc(nc, sizeof *nh);
      bool *no = calloc(nc, 1);
      if (!nh || !no) {
        free(nh);
        free(no);
        goto nomem;
      }
      for (size_t k = 0; k < cap; k++)
        if (occ[k]) {
          size_t s = (size_t)((h[k].pc >> 1) * 2654435761u) & (nc - 1);
          while (no[s])
            s = (s + 1) & (nc - 1);
          no[s] = true;
          nh[s] = h[k];
        }
      free(h);
      free(occ);
      h = nh;
      occ = no;
      cap = nc;
    }
    size_t s = (size_t)((sp.cell.pc >> 1) * 2654435761u) & (cap - 1);
    while (occ[s] && h[s].pc != sp.cell.pc)
      s = (s + 1) & (cap - 1);
    uint32_t c = sp.cycles > UINT32_MAX ? UINT32_MAX : (uint32_t)sp.cycles;
    if (!occ[s]) {
      occ[s] = true;
      used++;
      h[s] = (struct sonde_ft_insn_stat){sp.cell.pc, 0, 0, c, c, {0}};
    }
    h[s].executions++;
    h[s].hist[sonde_ft_hist_bucket(sp.cycles)]++;
    h[s].cycles += sp.cycles;
    if (c < h[s].min_cycles)
      h[s].min_cycles = c;
    if (c > h[s].max_cycles)
      h[s].max_cycles = c;
  }
  size_t k = 0;
  for (size_t j = 0; j < cap; j++)
    if (occ[j])
      h[k++] = h[j];
  free(occ);
  qsort(h, k, sizeof *h, cmp_stat);
  *stats = h;
  *count = k;
  return 0;
nomem:
  free(h);
  free(occ);
  return SONDE_E_NOMEM;
}
