/* Function table and static call graph for the monitor (monitor.h).
 *
 * With symbols: the ELF's functions (sonde_sym). Without: AVEKSHA's rule
 * (section 2.4): a function starts at the target of every call, found by a
 * linear sweep of the code after the vector table; reset and exception
 * handlers are starts too. Either way the call graph is the set of
 * (caller, callee) pairs of BL instructions (Thumb-2 T1 encoding, ARMv7-M ARM
 * A7.7.18) whose target is a function start.
 *
 * Lookup is a binary search on the sorted starts; a function covers
 * [start, end), end being its symbol's end (sized symbols) or the next start. */
#include "monitor_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWEEP_PIECE 1024u
#define MAX_VECTORS 256u

static bool is32(uint16_t hw)
{
  return (hw >> 11) == 0x1D || (hw >> 11) == 0x1E || (hw >> 11) == 0x1F;
}

/* BL (T1): the target, or false if (hw1, hw2) is not a BL. */
static bool bl_target(uint32_t addr, uint16_t hw1, uint16_t hw2, uint32_t *target)
{
  if ((hw1 & 0xF800) != 0xF000 || (hw2 & 0xD000) != 0xD000)
    return false;
  uint32_t s = (hw1 >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;
  uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
  uint32_t imm = (s << 24) | (i1 << 23) | (i2 << 22) | ((uint32_t)(hw1 & 0x3FF) << 12) |
                 ((uint32_t)(hw2 & 0x7FF) << 1);
  if (s)
    imm |= 0xFE000000u;
  *target = addr + 4 + imm;
  return true;
}

/* Walk the halfwords of code [base, base+len) as Thumb instructions, calling
 * fn for every BL. */
typedef void (*bl_fn)(void *ctx, uint32_t at, uint32_t target);
static void sweep(const uint8_t *code, size_t len, uint32_t base, bl_fn fn, void *ctx)
{
  size_t i = 0;
  while (i + 2 <= len) {
    uint16_t hw1 = (uint16_t)(code[i] | code[i + 1] << 8);
    if (is32(hw1) && i + 4 <= len) {
      uint16_t hw2 = (uint16_t)(code[i + 2] | code[i + 3] << 8);
      uint32_t t;
      if (bl_target(base + (uint32_t)i, hw1, hw2, &t))
        fn(ctx, base + (uint32_t)i, t);
      i += 4;
    } else {
      i += 2;
    }
  }
}

static int cmp_func(const void *a, const void *b)
{
  const struct sonde_mon_func *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

long sonde_mon_ftab_lookup(const struct sonde_mon_ftab *t, uint32_t pc)
{
  if (!t || !t->n)
    return -1;
  pc &= ~1u;
  size_t lo = 0, hi = t->n;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (t->f[mid].start <= pc)
      lo = mid;
    else
      hi = mid;
  }
  const struct sonde_mon_func *f = &t->f[lo];
  return pc >= f->start && pc < f->end ? (long)lo : -1;
}

long sonde_mon_ftab_find(const struct sonde_mon_ftab *t, const char *name)
{
  for (size_t i = 0; t && i < t->n; i++)
    if (!strcmp(t->f[i].name, name))
      return (long)i;
  return -1;
}

size_t sonde_mon_ftab_count(const struct sonde_mon_ftab *t)
{
  return t ? t->n : 0;
}

const struct sonde_mon_func *sonde_mon_ftab_at(const struct sonde_mon_ftab *t, size_t i)
{
  return t && i < t->n ? &t->f[i] : NULL;
}

bool sonde_mon_ftab_calls(const struct sonde_mon_ftab *t, size_t caller, size_t callee)
{
  if (!t || !t->nedges)
    return false;
  uint64_t key = (uint64_t)caller << 32 | callee;
  return bsearch(&key, t->edges, t->nedges, sizeof key, cmp_u64) != NULL;
}

size_t sonde_mon_ftab_edges(const struct sonde_mon_ftab *t)
{
  return t ? t->nedges : 0;
}

int sonde_mon_ftab_edge_at(const struct sonde_mon_ftab *t, size_t i, size_t *caller, size_t *callee)
{
  if (!t || i >= t->nedges)
    return SONDE_E_RANGE;
  *caller = (size_t)(t->edges[i] >> 32);
  *callee = (size_t)(uint32_t)t->edges[i];
  return 0;
}

void sonde_mon_ftab_free(struct sonde_mon_ftab *t)
{
  if (!t)
    return;
  free(t->f);
  free(t->edges);
  free(t->names);
  free(t);
}

/* ---- call edges ---------------------------------------------------------- */

struct edge_ctx {
  struct sonde_mon_ftab *t;
  int err;
};

static void add_edge(void *ctx, uint32_t at, uint32_t target)
{
  struct edge_ctx *e = ctx;
  struct sonde_mon_ftab *t = e->t;
  long from = sonde_mon_ftab_lookup(t, at), to = sonde_mon_ftab_lookup(t, target);
  if (from < 0 || to < 0 || t->f[to].start != (target & ~1u))
    return;
  if (mon_grow((void **)&t->edges, &t->capedges, t->nedges, sizeof *t->edges) < 0) {
    e->err = SONDE_E_NOMEM;
    return;
  }
  t->edges[t->nedges++] = (uint64_t)from << 32 | (uint64_t)to;
}

static void sort_edges(struct sonde_mon_ftab *t)
{
  if (t->nedges)
    qsort(t->edges, t->nedges, sizeof *t->edges, cmp_u64);
  size_t k = 0;
  for (size_t i = 0; i < t->nedges; i++)
    if (!k || t->edges[k - 1] != t->edges[i])
      t->edges[k++] = t->edges[i];
  t->nedges = k;
}

/* Mark handlers: the vector table's entries 2.. (NMI onwards). */
static void mark_handlers(struct sonde_mon_ftab *t, const uint32_t *vec, size_t nvec)
{
  for (size_t i = 2; i < nvec; i++) {
    long k = sonde_mon_ftab_lookup(t, vec[i]);
    if (k >= 0 && t->f[k].start == (vec[i] & ~1u))
      t->f[k].handler = true;
  }
}

static size_t read_vectors(sonde_mon_read_fn read, void *ctx, uint32_t vtor, uint32_t *vec)
{
  size_t n = 0;
  while (n < MAX_VECTORS && read(ctx, vtor + 4 * (uint32_t)n, &vec[n], 4) == 0) {
    if (n >= 1 && vec[n] && !(vec[n] & 1))
      break; /* not a Thumb code address: past the table */
    n++;
  }
  return n;
}

static int sym_read(void *ctx, uint32_t addr, void *buf, size_t len)
{
  return sonde_sym_read(ctx, addr, buf, len);
}

/* ---- from symbols ---------------------------------------------------------- */

int sonde_mon_ftab_from_sym(struct sonde_sym *sym, struct sonde_mon_ftab **out)
{
  *out = NULL;
  size_t n = sonde_sym_func_count(sym);
  if (!n)
    return SONDE_E_NOTFOUND;
  struct sonde_mon_ftab *t = calloc(1, sizeof *t);
  if (!t || !(t->f = calloc(n, sizeof *t->f))) {
    free(t);
    return SONDE_E_NOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    struct sonde_sym_func sf;
    if (sonde_sym_func_at(sym, i, &sf) < 0)
      continue;
    t->f[t->n].start = sf.start;
    t->f[t->n].end = sf.size ? sf.start + sf.size : 0;
    t->f[t->n].name = sf.name; /* lives as long as sym */
    t->n++;
  }
  if (t->n)
    qsort(t->f, t->n, sizeof *t->f, cmp_func);
  for (size_t i = 0; i < t->n; i++)
    if (!t->f[i].end)
      t->f[i].end = i + 1 < t->n ? t->f[i + 1].start : t->f[i].start + 2;
  uint32_t vec[MAX_VECTORS];
  mark_handlers(t, vec, read_vectors(sym_read, sym, 0, vec));
  struct edge_ctx e = {t, 0};
  for (size_t i = 0; i < t->n && !e.err; i++) {
    size_t len = t->f[i].end - t->f[i].start;
    uint8_t *code = malloc(len ? len : 1);
    if (!code) {
      e.err = SONDE_E_NOMEM;
      break;
    }
    if (sonde_sym_read(sym, t->f[i].start, code, len) == 0)
      sweep(code, len, t->f[i].start, add_edge, &e);
    free(code);
  }
  if (e.err) {
    sonde_mon_ftab_free(t);
    return e.err;
  }
  sort_edges(t);
  *out = t;
  return 0;
}

/* ---- from code (no symbols) ------------------------------------------------- */

struct starts {
  uint32_t *a;
  size_t n, cap;
  uint32_t lo, hi;
  int err;
};

static void add_start(struct starts *s, uint32_t addr)
{
  addr &= ~1u;
  if (addr < s->lo || addr >= s->hi)
    return;
  if (mon_grow((void **)&s->a, &s->cap, s->n, sizeof *s->a) < 0) {
    s->err = SONDE_E_NOMEM;
    return;
  }
  s->a[s->n++] = addr;
}

static void on_bl_start(void *ctx, uint32_t at, uint32_t target)
{
  (void)at;
  add_start(ctx, target);
}

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

int sonde_mon_ftab_from_code(sonde_mon_read_fn read, void *ctx, uint32_t vtor, size_t max_bytes,
                             struct sonde_mon_ftab **out)
{
  *out = NULL;
  uint32_t vec[MAX_VECTORS];
  size_t nvec = read_vectors(read, ctx, vtor, vec);
  if (nvec < 2)
    return SONDE_E_FORMAT; /* no reset vector */
  /* The code: from the end of the vector table, as far as it reads. */
  uint32_t base = vtor + 4 * (uint32_t)nvec;
  size_t cap = 0, len = 0;
  uint8_t *code = NULL;
  while (len < max_bytes) {
    if (len + SWEEP_PIECE > cap) {
      cap = cap ? 2 * cap : 64 * SWEEP_PIECE;
      uint8_t *p = realloc(code, cap);
      if (!p) {
        free(code);
        return SONDE_E_NOMEM;
      }
      code = p;
    }
    size_t piece = SWEEP_PIECE;
    if (read(ctx, base + (uint32_t)len, code + len, piece) != 0) {
      /* the last piece may be partial: halve it down to a halfword */
      while (piece > 2 && read(ctx, base + (uint32_t)len, code + len, piece) != 0)
        piece /= 2;
      if (piece <= 2 && read(ctx, base + (uint32_t)len, code + len, 2) != 0)
        break;
      len += piece;
      continue;
    }
    len += piece;
  }
  struct starts s = {NULL, 0, 0, base, base + (uint32_t)len, 0};
  for (size_t i = 1; i < nvec; i++)
    if (vec[i])
      add_start(&s, vec[i]);
  sweep(code, len, base, on_bl_start, &s);
  struct sonde_mon_ftab *t = calloc(1, sizeof *t);
  if (s.err || !t) {
    free(code);
    free(s.a);
    free(t);
    return SONDE_E_NOMEM;
  }
  if (s.n)
    qsort(s.a, s.n, sizeof *s.a, cmp_u32);
  size_t k = 0;
  for (size_t i = 0; i < s.n; i++)
    if (!k || s.a[k - 1] != s.a[i])
      s.a[k++] = s.a[i];
  t->f = calloc(k ? k : 1, sizeof *t->f);
  t->names = calloc(k ? k : 1, 16);
  if (!t->f || !t->names) {
    free(code);
    free(s.a);
    sonde_mon_ftab_free(t);
    return SONDE_E_NOMEM;
  }
  for (size_t i = 0; i < k; i++) {
    char *nm = t->names + 16 * i;
    snprintf(nm, 16, "sub_%08x", (unsigned)s.a[i]);
    t->f[i].start = s.a[i];
    t->f[i].end = i + 1 < k ? s.a[i + 1] : base + (uint32_t)len;
    t->f[i].name = nm;
  }
  t->n = k;
  free(s.a);
  mark_handlers(t, vec, nvec);
  struct edge_ctx e = {t, 0};
  sweep(code, len, base, add_edge, &e);
  free(code);
  if (e.err) {
    sonde_mon_ftab_free(t);
    return e.err;
  }
  sort_edges(t);
  *out = t;
  return 0;
}
