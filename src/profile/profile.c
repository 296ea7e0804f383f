/* Sonde profile: exact PC-sample counts and exception statistics from
 * ITM/DWT packets (include/sonde/profile.h). Packets: ARMv7-M ARM D4.3.2
 * (exception trace: FN 1 entered, 2 exited, 3 returned to) and D4.3.3
 * (periodic PC sample, sleeping form 0x15 0x00).
 *
 * Exception events are applied twice: at once to the context stack (which
 * gives PC samples their context, counts and nesting), and again, in order,
 * to a timing stack once the local timestamp that follows them arrives
 * (delayed-timestamp rule, see the header); that second pass gives the
 * durations. */
#include "sonde/profile.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_PENDING 64
#define NEXC 512
#define TS_NONE UINT64_MAX

struct frame {
  uint16_t number;
  uint64_t ts;
};

struct stack {
  struct frame f[MAX_DEPTH];
  unsigned depth;
};

struct pending {
  uint16_t number;
  uint8_t fn;
};

struct row_tmp {
  uint64_t k1, k2;
  unsigned ctx;
  uint32_t pc;
  uint64_t samples;
  const char *function, *file;
  unsigned line;
  uint32_t addr;
};

struct sonde_profile {
  uint64_t *keys;     /* (ctx << 32 | pc) | 1 << 63; 0 = empty slot */
  uint64_t *counts;
  size_t cap, used;
  struct stack ctx, timing;
  struct pending pend[MAX_PENDING];
  unsigned npend;
  struct sonde_profile_exc exc[NEXC];
  struct sonde_profile_exc *exc_out;
  struct sonde_profile_row *rows;
  struct sonde_profile_totals t;
};

struct sonde_profile *sonde_profile_new(void)
{
  struct sonde_profile *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->cap = 1024;
  p->keys = calloc(p->cap, sizeof *p->keys);
  p->counts = calloc(p->cap, sizeof *p->counts);
  if (!p->keys || !p->counts) {
    sonde_profile_free(p);
    return NULL;
  }
  for (unsigned i = 0; i < NEXC; i++)
    p->exc[i].number = i;
  return p;
}

void sonde_profile_free(struct sonde_profile *p)
{
  if (!p)
    return;
  free(p->keys);
  free(p->counts);
  free(p->rows);
  free(p->exc_out);
  free(p);
}

static inline size_t hash64(uint64_t k, size_t mask)
{
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return (size_t)k & mask;
}

static int grow(struct sonde_profile *p)
{
  size_t ncap = p->cap * 2;
  uint64_t *nk = calloc(ncap, sizeof *nk), *nc = calloc(ncap, sizeof *nc);
  if (!nk || !nc) {
    free(nk);
    free(nc);
    return SONDE_E_NOMEM;
  }
  for (size_t i = 0; i < p->cap; i++) {
    if (!p->keys[i])
      continue;
    size_t j = hash64(p->keys[i], ncap - 1);
    while (nk[j])
      j = (j + 1) & (ncap - 1);
    nk[j] = p->keys[i];
    nc[j] = p->counts[i];
  }
  free(p->keys);
  free(p->counts);
  p->keys = nk;
  p->counts = nc;
  p->cap = ncap;
  return 0;
}

static int count_pc(struct sonde_profile *p, uint32_t pc, unsigned ctx)
{
  uint64_t key = ((uint64_t)ctx << 32 | pc) | 1ull << 63;
  size_t j = hash64(key, p->cap - 1);
  while (p->keys[j] && p->keys[j] != key)
    j = (j + 1) & (p->cap - 1);
  if (!p->keys[j]) {
    if (p->used >= SONDE_PROFILE_MAX_PCS) {
      p->t.untracked++; /* bounded memory: random PCs are not a program */
      return 0;
    }
    if ((p->used + 1) * 2 > p->cap) {
      int err = grow(p);
      if (err)
        return err;
      return count_pc(p, pc, ctx);
    }
    p->keys[j] = key;
    p->used++;
  }
  p->counts[j]++;
  return 0;
}

/* Apply one exception event to a stack. `timed`: this is the timing pass
 * (record durations, ts may be TS_NONE); otherwise the counting pass. */
static void apply(struct sonde_profile *p, struct stack *s, unsigned number, unsigned fn,
                  uint64_t ts, bool timed)
{
  number &= NEXC - 1;
  switch (fn) {
  case SONDE_ITM_EXC_ENTER:
    if (!timed) {
      struct sonde_profile_exc *e = &p->exc[number];
      e->count++;
      if (s->depth)
        e->nested++;
      if (s->depth + 1 > e->max_depth)
        e->max_depth = s->depth + 1;
    }
    if (s->depth == MAX_DEPTH) { /* runaway nesting (lost exits): drop the oldest */
      memmove(s->f, s->f + 1, (MAX_DEPTH - 1) * sizeof s->f[0]);
      s->depth--;
    }
    s->f[s->depth++] = (struct frame){(uint16_t)number, ts};
    break;
  case SONDE_ITM_EXC_EXIT: {
    unsigned k = s->depth;
    while (k && s->f[k - 1].number != number)
      k--;
    if (!k) {
      if (!timed)
        p->t.unmatched++;
      break;
    }
    if (k != s->depth && !timed)
      p->t.unmatched++;
    struct frame f = s->f[k - 1];
    s->depth = k - 1;
    if (timed && f.ts != TS_NONE && ts != TS_NONE && ts >= f.ts) {
      struct sonde_profile_exc *e = &p->exc[number];
      uint64_t d = ts - f.ts;
      e->total_cycles += d;
      if (d > e->max_cycles)
        e->max_cycles = d;
      e->timed++;
    }
    break;
  }
  case SONDE_ITM_EXC_RETURN:
    /* returned to `number` (0 = thread): it must now be on top */
    if (number == 0) {
      if (s->depth && !timed)
        p->t.unmatched++;
      s->depth = 0;
    } else {
      unsigned k = s->depth;
      while (k && s->f[k - 1].number != number)
        k--;
      if (k != s->depth && !timed)
        p->t.unmatched++;
      if (k)
        s->depth = k;
    }
    break;
  default:
    break;
  }
}

static void flush_pending(struct sonde_profile *p, uint64_t ts)
{
  for (unsigned i = 0; i < p->npend; i++)
    apply(p, &p->timing, p->pend[i].number, p->pend[i].fn, ts, true);
  p->npend = 0;
}

int sonde_profile_add(struct sonde_profile *p, const struct sonde_itm_packet *pk, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    const struct sonde_itm_packet *q = &pk[i];
    switch (q->type) {
    case SONDE_ITM_PC: {
      unsigned ctx = p->ctx.depth ? p->ctx.f[p->ctx.depth - 1].number : 0;
      int err = count_pc(p, (uint32_t)q->value, ctx);
      if (err)
        return err;
      p->t.samples++;
      break;
    }
    case SONDE_ITM_PC_SLEEP:
      p->t.samples++;
      p->t.sleep++;
      break;
    case SONDE_ITM_EXC:
      p->t.exc_packets++;
      apply(p, &p->ctx, (unsigned)q->value, q->flags, 0, false);
      if (p->npend == MAX_PENDING) { /* no timestamps: time the oldest as unknown */
        apply(p, &p->timing, p->pend[0].number, p->pend[0].fn, TS_NONE, true);
        memmove(p->pend, p->pend + 1, (MAX_PENDING - 1) * sizeof p->pend[0]);
        p->npend--;
      }
      p->pend[p->npend++] = (struct pending){(uint16_t)q->value, q->flags};
      break;
    case SONDE_ITM_LTS:
      if (!p->t.have_ts) {
        p->t.have_ts = true;
        p->t.first_ts = q->ts;
      }
      p->t.last_ts = q->ts;
      flush_pending(p, q->ts);
      break;
    case SONDE_ITM_OVERFLOW:
      p->t.overflows++;
      break;
    default:
      break;
    }
  }
  return 0;
}

void sonde_profile_get_totals(const struct sonde_profile *p, struct sonde_profile_totals *t)
{
  *t = p->t;
  t->distinct_pcs = p->used;
}

static int cmp_group(const void *a, const void *b)
{
  const struct row_tmp *x = a, *y = b;
  if (x->k1 != y->k1)
    return x->k1 < y->k1 ? -1 : 1;
  if (x->k2 != y->k2)
    return x->k2 < y->k2 ? -1 : 1;
  if (x->ctx != y->ctx)
    return x->ctx < y->ctx ? -1 : 1;
  return x->pc < y->pc ? -1 : (x->pc > y->pc);
}

static int cmp_rows(const void *a, const void *b)
{
  const struct sonde_profile_row *x = a, *y = b;
  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  if (x->line != y->line)
    return x->line < y->line ? -1 : 1;
  return x->context < y->context ? -1 : (x->context > y->context);
}

long sonde_profile_report(struct sonde_profile *p, struct sonde_sym *sym,
                          enum sonde_profile_by by, bool split_context,
                          const struct sonde_profile_row **rows)
{
  struct row_tmp *tmp = calloc(p->used ? p->used : 1, sizeof *tmp);
  if (!tmp)
    return SONDE_E_NOMEM;
  size_t n = 0;
  for (size_t i = 0; i < p->cap; i++) {
    if (!p->keys[i])
      continue;
    uint64_t key = p->keys[i] & ~(1ull << 63);
    struct row_tmp *r = &tmp[n++];
    r->pc = (uint32_t)key;
    r->ctx = split_context ? (unsigned)(key >> 32) : SONDE_PROFILE_CTX_NONE;
    r->samples = p->counts[i];
    struct sonde_sym_func f;
    bool known = sym && sonde_sym_lookup(sym, r->pc, &f, NULL) >= 0;
    r->function = known ? f.name : NULL;
    if (by == SONDE_PROFILE_BY_LINE) {
      struct sonde_sym_line l;
      if (sym && sonde_sym_line(sym, r->pc, &l) == 0) {
        r->file = l.file;
        r->line = l.line;
        r->k1 = (uint64_t)(uintptr_t)l.file;
        r->k2 = l.line;
      } else {
        r->k1 = UINT64_MAX;
        r->k2 = r->pc;
      }
      r->addr = r->pc;
    } else if (known) {
      r->k1 = 0;
      r->k2 = f.start;
      r->addr = f.start;
    } else {
      r->k1 = 1;
      r->k2 = r->pc;
      r->addr = r->pc;
    }
  }
  qsort(tmp, n, sizeof *tmp, cmp_group);
  free(p->rows);
  p->rows = calloc(n ? n : 1, sizeof *p->rows);
  if (!p->rows) {
    free(tmp);
    return SONDE_E_NOMEM;
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (m && tmp[i].k1 == tmp[i - 1].k1 && tmp[i].k2 == tmp[i - 1].k2 &&
        tmp[i].ctx == tmp[i - 1].ctx) {
      p->rows[m - 1].samples += tmp[i].samples;
      continue; /* sorted by pc within the group: addr keeps the first */
    }
    p->rows[m++] = (struct sonde_profile_row){tmp[i].function, tmp[i].file, tmp[i].line,
                                              tmp[i].addr, tmp[i].ctx, tmp[i].samples};
  }
  free(tmp);
  qsort(p->rows, m, sizeof *p->rows, cmp_rows);
  *rows = p->rows;
  return (long)m;
}

size_t sonde_profile_exceptions(struct sonde_profile *p, const struct sonde_profile_exc **out)
{
  size_t n = 0;
  for (unsigned i = 0; i < NEXC; i++)
    n += p->exc[i].count ? 1 : 0;
  free(p->exc_out);
  p->exc_out = calloc(n ? n : 1, sizeof *p->exc_out);
  if (!p->exc_out) {
    *out = NULL;
    return 0;
  }
  n = 0;
  for (unsigned i = 0; i < NEXC; i++)
    if (p->exc[i].count)
      p->exc_out[n++] = p->exc[i];
  *out = p->exc_out;
  return n;
}
