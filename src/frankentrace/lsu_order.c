/* LSU ordering from range pairs (FrankenTrace paper, 5.3). With only a few
 * comparators per run, each run traces two address ranges and tells the order
 * of their transfers. Every range's own sequence must be identical in every
 * run that traced it (else the runs were not deterministic). The total order
 * is the merge of the per-range sequences that agrees with every pair:
 * transfer a_i of range a precedes b_j of range b iff, in the run that traced
 * (a, b), fewer than j+1 b transfers came before a_i, i.e. before_b(a_i) <= j.
 * The next transfer of the merge is the head a_i with before_s(a_i) equal to
 * the number of s transfers already emitted, for every other range s: there
 * is at most one such head; none means the pair orders contradict each other,
 * and an untraced pair whose order matters makes it ambiguous. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/frankentrace.h"

struct run_rec {
  uint32_t id, a, b;
  struct sonde_ft_xfer *x;
  size_t n;
};

struct sonde_ft_lsu_order {
  uint32_t ranges;
  struct run_rec *runs;
  size_t nruns, cap;
  struct sonde_diag diag;
};

int sonde_ft_lsu_order_new(uint32_t ranges, struct sonde_ft_lsu_order **out)
{
  *out = NULL;
  if (ranges == 0 || ranges > 256)
    return SONDE_E_ARG;
  struct sonde_ft_lsu_order *o = calloc(1, sizeof *o);
  if (!o)
    return SONDE_E_NOMEM;
  o->ranges = ranges;
  *out = o;
  return 0;
}

void sonde_ft_lsu_order_free(struct sonde_ft_lsu_order *o)
{
  if (!o)
    return;
  for (size_t i = 0; i < o->nruns; i++)
    free(o->runs[i].x);
  free(o->runs);
  free(o);
}

const char *sonde_ft_lsu_order_error_detail(const struct sonde_ft_lsu_order *o)
{
  return o ? o->diag.msg : "";
}

int sonde_ft_lsu_order_add_run(struct sonde_ft_lsu_order *o, uint32_t run_id, uint32_t range_a,
                               uint32_t range_b, const struct sonde_ft_xfer *x, size_t n)
{
  if (!o || (n && !x))
    return SONDE_E_ARG;
  if (range_a >= o->ranges || range_b >= o->ranges)
    return sonde_diag_set(&o->diag, SONDE_E_ARG, "run %u: range out of 0..%u", run_id,
                          o->ranges - 1);
  for (size_t i = 0; i < n; i++) {
    if (x[i].gap)
      return sonde_diag_set(&o->diag, SONDE_E_ARG,
                            "run %u: transfer %zu: an overflow gap cannot be ordered", run_id, i);
    if (x[i].range != range_a && x[i].range != range_b)
      return sonde_diag_set(&o->diag, SONDE_E_ARG,
                            "run %u: transfer %zu: range %u is not one the run traced (%u, %u)",
                            run_id, i, x[i].range, range_a, range_b);
  }
  if (o->nruns == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 16;
    struct run_rec *p = realloc(o->runs, cap * sizeof *p);
    if (!p)
      return SONDE_E_NOMEM;
    o->runs = p;
    o->cap = cap;
  }
  struct sonde_ft_xfer *copy = malloc((n ? n : 1) * sizeof *copy);
  if (!copy)
    return SONDE_E_NOMEM;
  memcpy(copy, x, n * sizeof *copy);
  o->runs[o->nruns++] = (struct run_rec){run_id, range_a, range_b, copy, n};
  return 0;
}

static bool same_xfer(const struct sonde_ft_xfer *p, const struct sonde_ft_xfer *q)
{
  return p->pc == q->pc && p->addr == q->addr && p->value == q->value && p->size == q->size &&
         p->write == q->write;
}

int sonde_ft_lsu_order_finish(struct sonde_ft_lsu_order *o, struct sonde_ft_xfer **out,
                              size_t *count)
{
  *out = NULL;
  *count = 0;
  if (!o)
    return SONDE_E_ARG;
  uint32_t R = o->ranges;
  int rc = SONDE_E_NOMEM;
  /* seq[r]: the range's transfers, from the first run that traced it. */
  const struct run_rec **owner = calloc(R, sizeof *owner);
  size_t *len = calloc(R, sizeof *len), *pos = calloc(R, sizeof *pos);
  /* before[r*R+s][i]: s transfers before r_i in the run that traced (r, s). */
  uint32_t **before = calloc((size_t)R * R, sizeof *before);
  struct sonde_ft_xfer **seq = calloc(R, sizeof *seq);
  struct sonde_ft_xfer *res = NULL;
  if (!owner || !len || !pos || !before || !seq)
    goto done;
  for (size_t k = 0; k < o->nruns; k++) {
    const struct run_rec *run = &o->runs[k];
    uint32_t rs[2] = {run->a, run->b};
    for (int side = 0; side < 2; side++) {
      uint32_t r = rs[side];
      size_t m = 0;
      for (size_t i = 0; i < run->n; i++)
        m += run->x[i].range == r;
      if (!owner[r]) {
        owner[r] = run;
        len[r] = m;
        if (!(seq[r] = malloc((m ? m : 1) * sizeof **seq)))
          goto done;
        m = 0;
        for (size_t i = 0; i < run->n; i++)
          if (run->x[i].range == r)
            seq[r][m++] = run->x[i];
        continue;
      }
      /* Traced again: it must be the same sequence (nondeterminism otherwise). */
      size_t j = 0;
      for (size_t i = 0; i < run->n; i++) {
        if (run->x[i].range != r)
          continue;
        if (j >= len[r] || !same_xfer(&run->x[i], &seq[r][j])) {
          rc = sonde_diag_set(&o->diag, SONDE_E_FORMAT,
                              "range %u: run %u differs from run %u at its transfer %zu "
                              "(nondeterministic runs)",
                              r, run->id, owner[r]->id, j);
          goto done;
        }
        j++;
      }
      if (j != len[r]) {
        rc = sonde_diag_set(&o->diag, SONDE_E_FORMAT,
                            "range %u: run %u has %zu transfers, run %u has %zu "
                            "(nondeterministic runs)",
                            r, run->id, j, owner[r]->id, len[r]);
        goto done;
      }
    }
    if (run->a == run->b || before[(size_t)run->a * R + run->b])
      continue;
    for (int side = 0; side < 2; side++) {
      uint32_t r = rs[side], s = rs[1 - side];
      uint32_t *bf = malloc((len[r] ? len[r] : 1) * sizeof *bf);
      if (!bf)
        goto done;
      size_t i = 0, seen = 0;
      for (size_t q = 0; q < run->n; q++) {
        if (run->x[q].range == r)
          bf[i++] = (uint32_t)seen;
        else if (run->x[q].range == s)
          seen++;
      }
      before[(size_t)r * R + s] = bf;
    }
  }
  size_t total = 0;
  for (uint32_t r = 0; r < R; r++)
    total += len[r];
  if (!(res = malloc((total ? total : 1) * sizeof *res)))
    goto done;
  for (size_t k = 0; k < total; k++) {
    uint32_t pick = R;
    for (uint32_t r = 0; r < R && pick == R; r++) {
      if (pos[r] >= len[r])
        continue;
      bool ok = true;
      for (uint32_t s = 0; s < R && ok; s++) {
        if (s == r || pos[s] >= len[s])
          continue;
        const uint32_t *bf = before[(size_t)r * R + s];
        if (!bf) {
          rc = sonde_diag_set(&o->diag, SONDE_E_FORMAT,
                              "ranges %u and %u were never traced together: the order of their "
                              "transfers is unknown (at ordered transfer %zu)",
                              r, s, k);
          goto done;
        }
        ok = bf[pos[r]] == pos[s];
      }
      if (ok)
        pick = r;
    }
    if (pick == R) {
      rc = sonde_diag_set(&o->diag, SONDE_E_FORMAT,
                          "the pair orders contradict each other at ordered transfer %zu "
                          "(nondeterministic runs)",
                          k);
      goto done;
    }
    res[k] = seq[pick][pos[pick]++];
    res[k].cycle = UINT64_MAX;
  }
  *out = res;
  *count = total;
  res = NULL;
  rc = 0;
done:
  if (rc == SONDE_E_NOMEM)
    sonde_diag_set(&o->diag, rc, "out of memory");
  free(res);
  if (before)
    for (size_t k = 0; k < (size_t)R * R; k++)
      free(before[k]);
  if (seq)
    for (uint32_t r = 0; r < R; r++)
      free(seq[r]);
  free(before);
  free(seq);
  free(owner);
  free(len);
  free(pos);
  return rc;
}
