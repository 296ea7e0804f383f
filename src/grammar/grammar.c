/* The frozen r-grammar: life cycle, queries, Size(G)/Comp(G) (reference 001
 * section 5.2), expansion, the paper's properties (section 3.2, Properties
 * 1-3), printing in the paper's notation, and the binary grammar file
 * (docs/formats.md, "Grammar file"). */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "grammar_internal.h"

static const char *const algo_names[] = {"sequitur", "resequitur", "cyclitur"};

const char *sonde_grammar_algo_name(enum sonde_grammar_algo algo)
{
  return (unsigned)algo < 3 ? algo_names[algo] : "?";
}

int sonde_grammar_algo_parse(const char *name)
{
  for (int i = 0; i < 3; i++)
    if (name && !strcmp(name, algo_names[i]))
      return i;
  return -1;
}

struct sonde_grammar *sonde_grammar_new(enum sonde_grammar_algo algo)
{
  if ((unsigned)algo > SONDE_GRAMMAR_CYCLITUR)
    return NULL;
  struct sonde_grammar *g = calloc(1, sizeof *g);
  if (!g)
    return NULL;
  g->algo = algo;
  g->b = gb_new(algo);
  if (!g->b) {
    free(g);
    return NULL;
  }
  /* Debug check mode from the environment, so the CLI can run it too. */
  const char *chk = getenv("SONDE_GRAMMAR_CHECK");
  if (chk && *chk && algo != SONDE_GRAMMAR_CYCLITUR)
    gb_set_check(g->b, strtoull(chk, NULL, 10));
  return g;
}

static void free_frozen(struct sonde_grammar *g)
{
  free(g->off);
  free(g->elems);
  free(g->is_cycle);
  free(g->len);
  free(g->hash);
  g->off = NULL;
  g->elems = NULL;
  g->is_cycle = NULL;
  g->len = NULL;
  g->hash = NULL;
}

void sonde_grammar_free(struct sonde_grammar *g)
{
  if (!g)
    return;
  gb_free(g->b);
  free_frozen(g);
  free(g);
}

const char *sonde_grammar_error_detail(const struct sonde_grammar *g)
{
  return g ? g->diag.msg : "";
}

int sonde_grammar_set_loop_header(struct sonde_grammar *g, uint32_t lh)
{
  if (g->algo != SONDE_GRAMMAR_CYCLITUR)
    return sonde_diag_set(&g->diag, SONDE_E_ARG, "a loop header only applies to cyclitur");
  if (!g->b || g->input_len)
    return sonde_diag_set(&g->diag, SONDE_E_STATE, "loop header set after input");
  g->has_lh = true;
  g->lh = lh;
  gb_set_lh(g->b, lh);
  return 0;
}

int sonde_grammar_set_cycle_cache(struct sonde_grammar *g, bool on)
{
  if (!g->b || g->input_len)
    return sonde_diag_set(&g->diag, SONDE_E_STATE, "cycle cache set after input");
  gb_set_cache(g->b, on);
  return 0;
}

int sonde_grammar_set_repeat_skip(struct sonde_grammar *g, bool on)
{
  if (!g->b || g->input_len)
    return sonde_diag_set(&g->diag, SONDE_E_STATE, "repeat skip set after input");
  gb_set_repeat_skip(g->b, on);
  return 0;
}

int sonde_grammar_set_check(struct sonde_grammar *g, uint64_t every)
{
  if (!g->b)
    return sonde_diag_set(&g->diag, SONDE_E_STATE, "grammar already finished");
  if (g->algo == SONDE_GRAMMAR_CYCLITUR)
    return sonde_diag_set(&g->diag, SONDE_E_ARG, "the check mode covers sequitur and resequitur");
  gb_set_check(g->b, every);
  return 0;
}

int sonde_grammar_feed(struct sonde_grammar *g, const uint32_t *syms, size_t n)
{
  if (g->sticky)
    return g->sticky;
  if (!g->b)
    return sonde_diag_set(&g->diag, SONDE_E_STATE, "grammar already finished");
  int rc = gb_feed(g->b, syms, n);
  g->input_len += n;
  if (rc && gb_error(g->b)[0])
    g->sticky = sonde_diag_set(&g->diag, rc, "compression failed: %s", gb_error(g->b));
  else if (rc)
    g->sticky = sonde_diag_set(&g->diag, rc, "compression failed: %s", sonde_strerror(rc));
  return rc;
}

int sonde_grammar_finish(struct sonde_grammar *g)
{
  if (g->sticky)
    return g->sticky;
  if (!g->b)
    return sonde_diag_set(&g->diag, SONDE_E_STATE, "grammar already finished");
  int rc = gb_freeze(g->b, g);
  if (rc) {
    const char *why = gb_error(g->b);
    g->sticky = sonde_diag_set(&g->diag, rc, "%s", *why ? why : sonde_strerror(rc));
    return rc;
  }
  gb_free(g->b);
  g->b = NULL;
  rc = grammar_compute_lengths(g);
  if (rc)
    return g->sticky = rc;
  g->finished = true;
  return 0;
}

enum sonde_grammar_algo sonde_grammar_algo(const struct sonde_grammar *g) { return g->algo; }
bool sonde_grammar_has_loop_header(const struct sonde_grammar *g) { return g->has_lh; }
uint32_t sonde_grammar_loop_header(const struct sonde_grammar *g) { return g->lh; }
uint64_t sonde_grammar_input_length(const struct sonde_grammar *g) { return g->input_len; }
size_t sonde_grammar_rule_count(const struct sonde_grammar *g) { return g->finished ? g->nrules : 0; }

size_t sonde_grammar_rule_body(const struct sonde_grammar *g, size_t rule,
                               const struct sonde_grammar_elem **elems)
{
  if (!g->finished || rule >= g->nrules) {
    *elems = NULL;
    return 0;
  }
  *elems = g->elems + g->off[rule];
  return g->off[rule + 1] - g->off[rule];
}

bool sonde_grammar_rule_is_cycle(const struct sonde_grammar *g, size_t rule)
{
  return g->finished && rule < g->nrules && g->is_cycle[rule];
}

uint64_t sonde_grammar_rule_length(const struct sonde_grammar *g, size_t rule)
{
  return g->finished && rule < g->nrules ? g->len[rule] : 0;
}

uint64_t sonde_grammar_size(const struct sonde_grammar *g)
{
  return g->finished ? (uint64_t)g->off[g->nrules] + g->nrules : 0;
}

double sonde_grammar_comp(const struct sonde_grammar *g)
{
  return g->finished && g->input_len ? (double)sonde_grammar_size(g) / (double)g->input_len : 0.0;
}

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

size_t sonde_grammar_distinct_terminals(const struct sonde_grammar *g)
{
  if (!g->finished)
    return 0;
  size_t n = 0, ne = g->off[g->nrules];
  uint32_t *t = malloc((ne ? ne : 1) * sizeof *t);
  if (!t)
    return 0;
  for (size_t i = 0; i < ne; i++)
    if (!g->elems[i].is_rule)
      t[n++] = g->elems[i].sym;
  qsort(t, n, sizeof *t, cmp_u32);
  size_t d = 0;
  for (size_t i = 0; i < n; i++)
    if (!i || t[i] != t[i - 1])
      d++;
  free(t);
  return d;
}

/* ---- lengths and hashes (post-order over the rule DAG) ----------------- */

uint64_t grammar_hash_pow(uint64_t n)
{
  uint64_t r = 1, x = GRAMMAR_HASH_BASE;
  while (n) {
    if (n & 1)
      r *= x;
    x *= x;
    n >>= 1;
  }
  return r;
}

static uint64_t term_hash(uint32_t t)
{
  uint64_t x = (uint64_t)t + 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Visit rules in post-order (children before parents), detecting recursion.
 * visit(g, rule, ctx) is called once per rule reachable from S... and also for
 * unreachable ones (every rule is visited). Returns SONDE_E_FORMAT on a cycle. */
static int postorder(struct sonde_grammar *g, int (*visit)(struct sonde_grammar *, size_t, void *),
                     void *ctx)
{
  size_t nr = g->nrules;
  uint8_t *state = calloc(nr ? nr : 1, 1);
  size_t *stk = malloc((nr ? nr : 1) * sizeof *stk), *pos = malloc((nr ? nr : 1) * sizeof *pos);
  int rc = 0;
  if (!state || !stk || !pos) {
    rc = SONDE_E_NOMEM;
    goto out;
  }
  for (size_t root = 0; root < nr && !rc; root++) {
    if (state[root])
      continue;
    size_t sp = 0;
    stk[sp] = root;
    pos[sp++] = g->off[root];
    state[root] = 1;
    while (sp && !rc) {
      size_t r = stk[sp - 1];
      if (pos[sp - 1] == g->off[r + 1]) {
        state[r] = 2;
        sp--;
        rc = visit(g, r, ctx);
        continue;
      }
      const struct sonde_grammar_elem *e = &g->elems[pos[sp - 1]++];
      if (!e->is_rule)
        continue;
      if (state[e->sym] == 1) {
        rc = sonde_diag_set(&g->diag, SONDE_E_FORMAT, "rule %u is recursive", (unsigned)e->sym);
      } else if (!state[e->sym]) {
        state[e->sym] = 1;
        stk[sp] = e->sym;
        pos[sp++] = g->off[e->sym];
      }
    }
  }
out:
  free(state);
  free(stk);
  free(pos);
  return rc;
}

static int visit_len(struct sonde_grammar *g, size_t r, void *ctx)
{
  (void)ctx;
  uint64_t total = 0;
  for (size_t i = g->off[r]; i < g->off[r + 1]; i++) {
    const struct sonde_grammar_elem *e = &g->elems[i];
    uint64_t l = e->is_rule ? g->len[e->sym] : 1;
    if (l && e->count > UINT64_MAX / l)
      return sonde_diag_set(&g->diag, SONDE_E_FORMAT, "rule %zu expands beyond 2^64 symbols", r);
    l *= e->count;
    if (total > UINT64_MAX - l)
      return sonde_diag_set(&g->diag, SONDE_E_FORMAT, "rule %zu expands beyond 2^64 symbols", r);
    total += l;
  }
  g->len[r] = total;
  return 0;
}

int grammar_compute_lengths(struct sonde_grammar *g)
{
  free(g->len);
  g->len = calloc(g->nrules ? g->nrules : 1, sizeof *g->len);
  if (!g->len)
    return SONDE_E_NOMEM;
  return postorder(g, visit_len, NULL);
}

static int visit_hash(struct sonde_grammar *g, size_t r, void *ctx)
{
  uint64_t *pw = ctx; /* B^len per rule */
  uint64_t h = 0, p = 1;
  for (size_t i = g->off[r]; i < g->off[r + 1]; i++) {
    const struct sonde_grammar_elem *e = &g->elems[i];
    uint64_t xh = e->is_rule ? g->hash[e->sym] : term_hash(e->sym);
    uint64_t xp = e->is_rule ? pw[e->sym] : GRAMMAR_HASH_BASE;
    /* x^k by doubling; all pieces are equal so their order does not matter */
    uint64_t ah = 0, ap = 1;
    for (uint32_t k = e->count; k; k >>= 1) {
      if (k & 1) {
        ah = ah * xp + xh;
        ap *= xp;
      }
      xh = xh * xp + xh;
      xp *= xp;
    }
    h = h * ap + ah;
    p *= ap;
  }
  g->hash[r] = h;
  pw[r] = p;
  return 0;
}

int grammar_compute_hashes(struct sonde_grammar *g)
{
  if (g->hash)
    return 0;
  uint64_t *pw = calloc(g->nrules ? g->nrules : 1, sizeof *pw);
  g->hash = calloc(g->nrules ? g->nrules : 1, sizeof *g->hash);
  if (!pw || !g->hash) {
    free(pw);
    free(g->hash);
    g->hash = NULL;
    return SONDE_E_NOMEM;
  }
  int rc = postorder(g, visit_hash, pw);
  free(pw);
  return rc;
}

uint64_t grammar_elem_hash(const struct sonde_grammar *g, uint32_t sym, bool is_rule);
uint64_t grammar_elem_hash(const struct sonde_grammar *g, uint32_t sym, bool is_rule)
{
  return is_rule ? g->hash[sym] : term_hash(sym);
}

/* ---- expansion ----------------------------------------------------------- */

struct xframe {
  size_t rule, pos;
  uint32_t left; /* repetitions of elems[pos] still to emit */
};

int sonde_grammar_expand(const struct sonde_grammar *g, sonde_grammar_emit_fn emit, void *ctx)
{
  if (!g->finished)
    return SONDE_E_STATE;
  uint32_t buf[4096];
  size_t nb = 0, cap = 64, sp = 0;
  struct xframe *st = malloc(cap * sizeof *st);
  if (!st)
    return SONDE_E_NOMEM;
  int rc = 0;
  st[sp++] = (struct xframe){0, g->off[0], 0};
  while (sp && !rc) {
    struct xframe *f = &st[sp - 1];
    if (f->pos == g->off[f->rule + 1]) {
      sp--;
      continue;
    }
    const struct sonde_grammar_elem *e = &g->elems[f->pos];
    if (!f->left)
      f->left = e->count;
    if (!e->is_rule) {
      for (uint32_t k = f->left; k; k--) {
        buf[nb++] = e->sym;
        if (nb == 4096) {
          rc = emit(ctx, buf, nb);
          nb = 0;
          if (rc)
            break;
        }
      }
      f->left = 0;
      f->pos++;
      continue;
    }
    if (--f->left == 0)
      f->pos++;
    if (sp == cap) {
      struct xframe *ns = realloc(st, cap * 2 * sizeof *st);
      if (!ns) {
        rc = SONDE_E_NOMEM;
        break;
      }
      st = ns;
      cap *= 2;
    }
    st[sp++] = (struct xframe){e->sym, g->off[e->sym], 0};
  }
  if (!rc && nb)
    rc = emit(ctx, buf, nb);
  free(st);
  return rc;
}

/* ---- properties --------------------------------------------------------- */

struct dg {
  uint64_t a, b; /* (sym, count, kind) of both elements */
  size_t rule, pos;
};

static int cmp_dg(const void *x, const void *y)
{
  const struct dg *p = x, *q = y;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  if (p->b != q->b)
    return p->b < q->b ? -1 : 1;
  if (p->rule != q->rule)
    return p->rule < q->rule ? -1 : 1;
  return p->pos < q->pos ? -1 : p->pos > q->pos;
}

static uint64_t ekey(const struct sonde_grammar_elem *e)
{
  return ((uint64_t)e->sym << 32) | ((uint64_t)e->is_rule << 31) | e->count;
}

int sonde_grammar_check_properties(struct sonde_grammar *g)
{
  if (!g->finished)
    return SONDE_E_STATE;
  size_t ne = g->off[g->nrules];
  struct dg *d = malloc((ne ? ne : 1) * sizeof *d);
  uint64_t *refs = calloc(g->nrules, sizeof *refs);
  int rc = 0;
  if (!d || !refs) {
    free(d);
    free(refs);
    return SONDE_E_NOMEM;
  }
  size_t nd = 0;
  bool re = g->algo != SONDE_GRAMMAR_SEQUITUR;
  for (size_t r = 0; r < g->nrules && !rc; r++) {
    if (r && g->off[r] == g->off[r + 1])
      rc = sonde_diag_set(&g->diag, SONDE_E_FORMAT, "rule %zu has an empty body", r);
    for (size_t i = g->off[r]; i < g->off[r + 1] && !rc; i++) {
      const struct sonde_grammar_elem *e = &g->elems[i];
      if (e->is_rule)
        refs[e->sym] += e->count;
      if (!re && e->count != 1)
        rc = sonde_diag_set(&g->diag, SONDE_E_FORMAT, "sequitur rule %zu has an exponent", r);
      if (i + 1 < g->off[r + 1]) {
        const struct sonde_grammar_elem *f = e + 1;
        if (re && e->sym == f->sym && e->is_rule == f->is_rule)
          rc = sonde_diag_set(&g->diag, SONDE_E_FORMAT,
                              "rule %zu: consecutive repetition at %zu (Property 3)", r,
                              i - g->off[r]);
        d[nd++] = (struct dg){ekey(e), ekey(f), r, i - g->off[r]};
      }
    }
  }
  if (!rc) {
    qsort(d, nd, sizeof *d, cmp_dg);
    for (size_t i = 1; i < nd && !rc; i++) {
      if (d[i].a != d[i - 1].a || d[i].b != d[i - 1].b)
        continue;
      /* Sequitur tolerates the overlap in aaa (same rule, next position). */
      if (!re && d[i].rule == d[i - 1].rule && d[i].pos == d[i - 1].pos + 1)
        continue;
      rc = sonde_diag_set(&g->diag, SONDE_E_FORMAT,
                          "digram repeated in rule %zu at %zu and rule %zu at %zu (Property 1)",
                          d[i - 1].rule, d[i - 1].pos, d[i].rule, d[i].pos);
    }
  }
  for (size_t r = 1; r < g->nrules && !rc; r++) {
    bool exempt = g->algo == SONDE_GRAMMAR_CYCLITUR && g->is_cycle[r];
    if (!exempt && refs[r] < 2)
      rc = sonde_diag_set(&g->diag, SONDE_E_FORMAT, "rule %zu used %llu time(s) (Property 2)", r,
                          (unsigned long long)refs[r]);
    if (refs[r] == 0)
      rc = sonde_diag_set(&g->diag, SONDE_E_FORMAT, "rule %zu is unused", r);
  }
  if (!rc && g->nrules && refs[0])
    rc = sonde_diag_set(&g->diag, SONDE_E_FORMAT, "the start rule is referenced");
  free(d);
  free(refs);
  return rc;
}

/* ---- printing ----------------------------------------------------------- */

void sonde_grammar_rule_name(const struct sonde_grammar *g, size_t rule, char *buf, size_t len)
{
  if (rule == 0)
    snprintf(buf, len, "S");
  else if (g->nrules <= 27)
    snprintf(buf, len, "%c", (char)('A' + rule - 1));
  else
    snprintf(buf, len, "R%zu", rule);
}

int sonde_grammar_print(const struct sonde_grammar *g, FILE *out, sonde_grammar_name_fn name,
                        void *ctx)
{
  if (!g->finished)
    return SONDE_E_STATE;
  char nb[256];
  for (size_t r = 0; r < g->nrules; r++) {
    sonde_grammar_rule_name(g, r, nb, sizeof nb);
    fprintf(out, "%s ->", nb);
    for (size_t i = g->off[r]; i < g->off[r + 1]; i++) {
      const struct sonde_grammar_elem *e = &g->elems[i];
      if (e->is_rule)
        sonde_grammar_rule_name(g, e->sym, nb, sizeof nb);
      else if (!name || !name(ctx, e->sym, nb, sizeof nb))
        snprintf(nb, sizeof nb, "0x%x", e->sym);
      fprintf(out, " %s", nb);
      if (e->count != 1)
        fprintf(out, "^%u", e->count);
    }
    if (g->algo == SONDE_GRAMMAR_CYCLITUR && g->is_cycle[r])
      fputs("  # cycle", out);
    fputc('\n', out);
  }
  return ferror(out) ? SONDE_E_IO : 0;
}

/* ---- binary grammar file -------------------------------------------------- */

struct wbuf {
  uint8_t *p;
  size_t n, cap;
  int err;
};

static void wb_put(struct wbuf *w, const void *d, size_t n)
{
  if (w->err)
    return;
  if (w->n + n > w->cap) {
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->n + n)
      cap *= 2;
    uint8_t *np = realloc(w->p, cap);
    if (!np) {
      w->err = SONDE_E_NOMEM;
      return;
    }
    w->p = np;
    w->cap = cap;
  }
  memcpy(w->p + w->n, d, n);
  w->n += n;
}

static void wb_le(struct wbuf *w, uint64_t v, int bytes)
{
  uint8_t b[8];
  for (int i = 0; i < bytes; i++)
    b[i] = (uint8_t)(v >> (8 * i));
  wb_put(w, b, (size_t)bytes);
}

static void wb_var(struct wbuf *w, uint64_t v)
{
  uint8_t b[10];
  int n = 0;
  do {
    b[n] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v)
      b[n] |= 0x80;
    n++;
  } while (v);
  wb_put(w, b, (size_t)n);
}

int sonde_grammar_serialize(const struct sonde_grammar *g, uint8_t **out, size_t *len)
{
  *out = NULL;
  *len = 0;
  if (!g->finished)
    return SONDE_E_STATE;
  struct wbuf w = {0};
  wb_put(&w, SONDE_GRAMMAR_MAGIC, 8);
  wb_le(&w, 1, 2);                                   /* version */
  wb_le(&w, g->algo, 1);
  wb_le(&w, g->has_lh ? 1 : 0, 1);                   /* flags */
  wb_le(&w, g->lh, 4);
  wb_le(&w, g->input_len, 8);
  wb_le(&w, g->nrules, 4);
  wb_le(&w, 0, 4);                                   /* reserved */
  for (size_t r = 0; r < g->nrules; r++) {
    wb_var(&w, ((uint64_t)(g->off[r + 1] - g->off[r]) << 1) | g->is_cycle[r]);
    for (size_t i = g->off[r]; i < g->off[r + 1]; i++) {
      wb_var(&w, ((uint64_t)g->elems[i].sym << 1) | g->elems[i].is_rule);
      wb_var(&w, g->elems[i].count);
    }
  }
  wb_le(&w, crc32(0L, w.p, (uInt)w.n), 4);
  if (w.err) {
    free(w.p);
    return w.err;
  }
  *out = w.p;
  *len = w.n;
  return 0;
}

static uint64_t rd_le(const uint8_t *p, int bytes)
{
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

/* LEB128; returns bytes used or 0 when malformed/truncated. */
static size_t rd_var(const uint8_t *p, size_t avail, uint64_t *v)
{
  uint64_t x = 0;
  for (size_t i = 0; i < avail && i < 10; i++) {
    if (i == 9 && p[i] > 1)
      return 0;
    x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  return 0;
}

#define PFAIL(code, off, ...)                                                     \
  do {                                                                           \
    char m_[200];                                                                \
    snprintf(m_, sizeof m_, __VA_ARGS__);                                        \
    rc = sonde_diag_set(diag ? diag : &tmp, (code), "%s: offset %zu: %s", name, (size_t)(off), m_); \
    goto fail;                                                                   \
  } while (0)

int sonde_grammar_parse(const void *data, size_t len, const char *name,
                        struct sonde_grammar **out, struct sonde_diag *diag)
{
  struct sonde_diag tmp;
  const uint8_t *p = data;
  int rc = 0;
  struct sonde_grammar *g = NULL;
  *out = NULL;
  if (!name)
    name = "grammar";
  if (len < 8 || memcmp(p, SONDE_GRAMMAR_MAGIC, 8))
    PFAIL(SONDE_E_FORMAT, 0, "not a grammar file (magic %s expected)", SONDE_GRAMMAR_MAGIC);
  if (len < 36)
    PFAIL(SONDE_E_TRUNCATED, len, "file ends inside the header");
  if (rd_le(p + 8, 2) != 1)
    PFAIL(SONDE_E_UNSUPPORTED, 8, "grammar file version %u not supported", (unsigned)rd_le(p + 8, 2));
  if (p[10] > SONDE_GRAMMAR_CYCLITUR)
    PFAIL(SONDE_E_FORMAT, 10, "unknown algorithm %u", p[10]);
  if (p[11] & ~1u)
    PFAIL(SONDE_E_FORMAT, 11, "unknown flags 0x%x", p[11]);
  uint32_t crc = (uint32_t)rd_le(p + len - 4, 4);
  if (crc != (uint32_t)crc32(0L, p, (uInt)(len - 4)))
    PFAIL(SONDE_E_FORMAT, len - 4, "checksum mismatch (file corrupt)");
  uint64_t nrules = rd_le(p + 24, 4);
  if (nrules < 1 || nrules > len)
    PFAIL(SONDE_E_FORMAT, 24, "rule count %llu impossible", (unsigned long long)nrules);
  g = calloc(1, sizeof *g);
  if (!g)
    return SONDE_E_NOMEM;
  g->algo = p[10];
  g->has_lh = p[11] & 1;
  g->lh = (uint32_t)rd_le(p + 12, 4);
  g->input_len = rd_le(p + 16, 8);
  g->nrules = (size_t)nrules;
  g->off = malloc((g->nrules + 1) * sizeof *g->off);
  g->is_cycle = calloc(g->nrules, 1);
  size_t cap = 64, ne = 0;
  g->elems = malloc(cap * sizeof *g->elems);
  if (!g->off || !g->is_cycle || !g->elems) {
    rc = SONDE_E_NOMEM;
    goto fail;
  }
  size_t at = 32, end = len - 4;
  for (size_t r = 0; r < g->nrules; r++) {
    uint64_t v, bl;
    size_t k = rd_var(p + at, end - at, &v);
    if (!k)
      PFAIL(SONDE_E_TRUNCATED, at, "rule %zu: bad or missing body length", r);
    at += k;
    bl = v >> 1;
    g->is_cycle[r] = v & 1;
    if (bl > (end - at) / 2)
      PFAIL(SONDE_E_FORMAT, at, "rule %zu: body length %llu exceeds the file", r,
            (unsigned long long)bl);
    if (r && !bl)
      PFAIL(SONDE_E_FORMAT, at, "rule %zu has an empty body", r);
    g->off[r] = ne;
    for (uint64_t i = 0; i < bl; i++) {
      uint64_t s, c;
      size_t at0 = at;
      if (!(k = rd_var(p + at, end - at, &s)))
        PFAIL(SONDE_E_TRUNCATED, at, "rule %zu: bad symbol", r);
      at += k;
      if (!(k = rd_var(p + at, end - at, &c)))
        PFAIL(SONDE_E_TRUNCATED, at, "rule %zu: bad exponent", r);
      at += k;
      if ((s >> 1) > UINT32_MAX || ((s & 1) && (s >> 1) >= g->nrules))
        PFAIL(SONDE_E_FORMAT, at0, "rule %zu: symbol out of range", r);
      if (c < 1 || c > 0x7fffffffu)
        PFAIL(SONDE_E_FORMAT, at0, "rule %zu: exponent %llu out of range", r,
              (unsigned long long)c);
      if (ne == cap) {
        struct sonde_grammar_elem *ng = realloc(g->elems, cap * 2 * sizeof *ng);
        if (!ng) {
          rc = SONDE_E_NOMEM;
          goto fail;
        }
        g->elems = ng;
        cap *= 2;
      }
      g->elems[ne++] = (struct sonde_grammar_elem){(uint32_t)(s >> 1), (uint32_t)c, (s & 1) != 0};
    }
  }
  g->off[g->nrules] = ne;
  if (at != end)
    PFAIL(SONDE_E_FORMAT, at, "%zu unexpected bytes after the last rule", end - at);
  rc = grammar_compute_lengths(g);
  if (rc) {
    rc = sonde_diag_set(diag ? diag : &tmp, rc, "%s: %s", name, g->diag.msg);
    goto fail;
  }
  if (g->len[0] != g->input_len)
    PFAIL(SONDE_E_FORMAT, 16, "expands to %llu symbols, header says %llu",
          (unsigned long long)g->len[0], (unsigned long long)g->input_len);
  g->finished = true;
  *out = g;
  return 0;
fail:
  sonde_grammar_free(g);
  return rc;
}
