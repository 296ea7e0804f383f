/* LSU iterations of the target runner into one ordered LSU trace (paper 5.2,
 * 5.3; sonde/frankentrace_runner.h). Each iteration traced a pair of 64 KiB
 * ranges with one packet kind: data address offsets, data values with their
 * direction, or PCs, comparator 0 for range a and 1 for range b. The three
 * kinds of a pair are three runs of the same deterministic program, so their
 * packet sequences line up one to one: transfer i is the i-th packet of each.
 * The pairs then go to the order library (lsu_order.c). Nothing is guessed:
 * a run whose packets were lost (ITM overflow), that the wire corrupted, or
 * whose comparator sequence differs from another kind's is refused with the
 * reason. */
#include <stdlib.h>
#include <string.h>

#include "sonde/frankentrace_runner.h"

struct pkt {
  uint8_t cmp, size;
  bool write;
  uint32_t v;
};

struct kind_run {
  bool have;
  uint32_t iteration;
  struct pkt *p;
  size_t n;
};

struct pair {
  uint32_t a, b; /* address >> 16 */
  struct kind_run k[SONDE_FT_LSU_KINDS];
};

struct sonde_ft_lsu_runs {
  struct pair *pairs;
  size_t npairs, cap;
};

static const char *const kind_names[SONDE_FT_LSU_KINDS] = {"address", "data", "pc"};

const char *sonde_ft_lsu_kind_name(unsigned kind)
{
  return kind < SONDE_FT_LSU_KINDS ? kind_names[kind] : "?";
}

int sonde_ft_lsu_runs_new(struct sonde_ft_lsu_runs **out)
{
  *out = calloc(1, sizeof **out);
  return *out ? 0 : SONDE_E_NOMEM;
}

void sonde_ft_lsu_runs_free(struct sonde_ft_lsu_runs *r)
{
  if (!r)
    return;
  for (size_t i = 0; i < r->npairs; i++)
    for (unsigned k = 0; k < SONDE_FT_LSU_KINDS; k++)
      free(r->pairs[i].k[k].p);
  free(r->pairs);
  free(r);
}

static struct pair *find_pair(struct sonde_ft_lsu_runs *r, uint32_t a, uint32_t b)
{
  for (size_t i = 0; i < r->npairs; i++)
    if (r->pairs[i].a == a && r->pairs[i].b == b)
      return &r->pairs[i];
  if (r->npairs == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 8;
    struct pair *p = realloc(r->pairs, cap * sizeof *p);
    if (!p)
      return NULL;
    r->pairs = p;
    r->cap = cap;
  }
  struct pair *p = &r->pairs[r->npairs++];
  memset(p, 0, sizeof *p);
  p->a = a;
  p->b = b;
  return p;
}

int sonde_ft_lsu_runs_add(struct sonde_ft_lsu_runs *r, const struct sonde_ftw_iteration *it,
                          struct sonde_diag *diag)
{
  const struct sonde_ftw_record *b = &it->begin;
  unsigned kind = b->lsu_kind;
  if (b->kind != 1 || kind >= SONDE_FT_LSU_KINDS)
    return sonde_diag_set(diag, SONDE_E_ARG, "iteration %u is not an LSU iteration",
                          b->iteration);
  char what[96];
  snprintf(what, sizeof what, "iteration %u (ranges 0x%04x+0x%04x, %s packets)", b->iteration,
           b->range_a, b->range_b, kind_names[kind]);
  if (!it->has_end || it->wire_errors)
    return sonde_diag_set(diag, SONDE_E_AGAIN,
                          "%s: %s: corrupt on the wire or cut (re-run it)", what,
                          !it->has_end ? "no end record" : "a corrupt record inside it");
  struct pair *pr = find_pair(r, b->range_a, b->range_b);
  if (!pr)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  struct kind_run *kr = &pr->k[kind];
  if (kr->have)
    return 0; /* a second capture of the same plan entry: the first one counts */
  static const uint8_t want[SONDE_FT_LSU_KINDS] = {SONDE_ITM_DT_ADDR, SONDE_ITM_DT_DATA,
                                                    SONDE_ITM_DT_PC};
  size_t m = 0, overflows = 0;
  for (size_t i = 0; i < it->count; i++) {
    const struct sonde_itm_packet *p = &it->packets[i];
    if (p->type == SONDE_ITM_OVERFLOW)
      overflows++;
    else if (p->type == SONDE_ITM_SKIP && p->flags != SONDE_ITM_SKIP_TRUNCATED)
      return sonde_diag_set(diag, SONDE_E_AGAIN,
                            "%s: the ITM decoder lost bytes at offset %llu: corrupt on the wire "
                            "(re-run it)", what, (unsigned long long)p->offset);
    else if (p->type >= SONDE_ITM_DT_PC && p->type <= SONDE_ITM_DT_DATA) {
      if (p->type != want[kind] || p->port > (b->range_a == b->range_b ? 0u : 1u))
        return sonde_diag_set(diag, SONDE_E_FORMAT,
                              "%s: a data-trace packet of another kind or comparator %u at "
                              "offset %llu (not the runner's LSU set-up?)",
                              what, p->port, (unsigned long long)p->offset);
      m++;
    }
  }
  if (overflows)
    return sonde_diag_set(
        diag, SONDE_E_FORMAT,
        "%s: ITM overflow (%zu overflow packet(s)): transfers were lost. DebugMonitor did not "
        "delay the core in time: it cannot preempt code under PRIMASK/FAULTMASK or at its own "
        "priority (use ft_critical_enter and ft_lower_priorities), nor split one LDM/STM/PUSH/POP "
        "whose words need more than the ITM FIFO; trace that range with --probe (gaps marked)",
        what, overflows);
  kr->p = malloc((m ? m : 1) * sizeof *kr->p);
  if (!kr->p)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  for (size_t i = 0; i < it->count; i++) {
    const struct sonde_itm_packet *p = &it->packets[i];
    if (p->type == want[kind])
      kr->p[kr->n++] = (struct pkt){(uint8_t)p->port, p->size,
                                    (p->flags & SONDE_ITM_DT_WRITE) != 0, (uint32_t)p->value};
  }
  kr->have = true;
  kr->iteration = b->iteration;
  return 0;
}

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static uint32_t range_index(const struct sonde_ft_lsu_summary *s, uint32_t r)
{
  for (uint32_t i = 0; i < s->nranges; i++)
    if (s->ranges[i] == r)
      return i;
  return 0;
}

/* The three kinds of one pair, one transfer per packet. */
static int zip(const struct pair *pr, const struct sonde_ft_lsu_summary *s,
               struct sonde_ft_xfer **out, size_t *count, struct sonde_diag *diag)
{
  const struct kind_run *ka = &pr->k[SONDE_FT_LSU_ADDR], *kd = &pr->k[SONDE_FT_LSU_DATA],
                        *kp = &pr->k[SONDE_FT_LSU_PC];
  for (unsigned k = 0; k < SONDE_FT_LSU_KINDS; k++)
    if (!pr->k[k].have)
      return sonde_diag_set(diag, SONDE_E_FORMAT,
                            "ranges 0x%04x+0x%04x: no sound iteration with %s packets (lost or "
                            "corrupt): the pair cannot be put together",
                            pr->a, pr->b, kind_names[k]);
  for (unsigned k = 1; k < SONDE_FT_LSU_KINDS; k++) {
    const struct kind_run *o = &pr->k[k];
    size_t n = ka->n < o->n ? ka->n : o->n, i = 0;
    while (i < n && ka->p[i].cmp == o->p[i].cmp)
      i++;
    if (i < n || ka->n != o->n)
      return sonde_diag_set(
          diag, SONDE_E_FORMAT,
          "ranges 0x%04x+0x%04x: iterations %u (address) and %u (%s) disagree %s %zu "
          "(%zu and %zu transfers): nondeterministic runs (timing-dependent code under the "
          "DebugMonitor delays?)",
          pr->a, pr->b, ka->iteration, o->iteration, kind_names[k],
          i < n ? "at transfer" : "after transfer", i, ka->n, o->n);
  }
  struct sonde_ft_xfer *x = malloc((ka->n ? ka->n : 1) * sizeof *x);
  if (!x)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  for (size_t i = 0; i < ka->n; i++) {
    uint32_t r16 = ka->p[i].cmp ? pr->b : pr->a;
    x[i] = (struct sonde_ft_xfer){.range = range_index(s, r16),
                                  .run = ka->iteration,
                                  .pc = kp->p[i].v & ~1u,
                                  .addr = (r16 << 16) | (ka->p[i].v & 0xFFFFu),
                                  .value = kd->p[i].v,
                                  .size = kd->p[i].size,
                                  .write = kd->p[i].write,
                                  .ts = i,
                                  .cycle = UINT64_MAX};
  }
  *out = x;
  *count = ka->n;
  return 0;
}

int sonde_ft_lsu_runs_finish(struct sonde_ft_lsu_runs *r, struct sonde_ft_xfer **out,
                             size_t *count, struct sonde_ft_lsu_summary *s,
                             struct sonde_diag *diag)
{
  *out = NULL;
  *count = 0;
  memset(s, 0, sizeof *s);
  if (!r->npairs)
    return sonde_diag_set(diag, SONDE_E_NOTFOUND, "no LSU iterations");
  for (size_t i = 0; i < r->npairs; i++) {
    uint32_t v[2] = {r->pairs[i].a, r->pairs[i].b};
    for (int k = 0; k < 2; k++) {
      if (range_index(s, v[k]) || (s->nranges && s->ranges[0] == v[k]))
        continue;
      if (s->nranges == SONDE_FT_LSU_MAX_RANGES)
        return sonde_diag_set(diag, SONDE_E_FORMAT, "more than %u ranges",
                              SONDE_FT_LSU_MAX_RANGES);
      s->ranges[s->nranges++] = v[k];
    }
  }
  qsort(s->ranges, s->nranges, sizeof s->ranges[0], cmp_u32);
  s->pairs = (uint32_t)r->npairs;
  struct sonde_ft_lsu_order *o = NULL;
  int rc = sonde_ft_lsu_order_new(s->nranges, &o);
  if (rc < 0)
    return sonde_diag_set(diag, rc, "%u ranges: %s", s->nranges, sonde_strerror(rc));
  for (size_t i = 0; i < r->npairs && !rc; i++) {
    struct sonde_ft_xfer *x = NULL;
    size_t n = 0;
    const struct pair *pr = &r->pairs[i];
    if ((rc = zip(pr, s, &x, &n, diag)) < 0)
      break;
    s->runs += SONDE_FT_LSU_KINDS;
    s->packets += 3 * n;
    rc = sonde_ft_lsu_order_add_run(o, pr->k[0].iteration, range_index(s, pr->a),
                                    range_index(s, pr->b), x, n);
    free(x);
    if (rc < 0)
      sonde_diag_set(diag, rc, "%s", sonde_ft_lsu_order_error_detail(o));
  }
  if (!rc && (rc = sonde_ft_lsu_order_finish(o, out, count)) < 0) {
    /* the order library numbers ranges; name them */
    sonde_diag_set(diag, rc, "%s (ranges 0 .. %u are 0x%04x ..)", sonde_ft_lsu_order_error_detail(o),
                   s->nranges - 1, s->ranges[0]);
  }
  sonde_ft_lsu_order_free(o);
  if (!rc)
    s->transfers = *count;
  return rc;
}
