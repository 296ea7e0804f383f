/* Online construction of Sequitur, ReSequitur and Cyclitur grammars.
 *
 * Implements shared/reference/001 (Amiar et al., IESS 2013) section 3.2,
 * Fig. 2 (ReSequitur) and section 3.3, Fig. 3 (Cyclitur), on the linear-time
 * machinery of Sequitur (Nevill-Manning & Witten, JAIR 7, 1997): every rule
 * body is a doubly linked circular list closed by a guard node, a hash index
 * maps each digram to its (one) indexed occurrence, and every rule counts its
 * references, so each appended symbol costs amortised O(1).
 *
 * Invariants between two appended symbols (checked by
 * sonde_grammar_check_properties() in the tests):
 *  - digram uniqueness: every digram of every body is in the index, and no
 *    two non-overlapping occurrences of one digram exist. A digram here is two
 *    (symbol, exponent) pairs: a^2 b and a^3 b differ (Property 1).
 *  - rule utility: every rule but S (and the open cycle, and Cyclitur's cycle
 *    rules, which stand for a whole cycle) is referenced with a total exponent
 *    of at least 2 (Property 2).
 *  - ReSequitur/Cyclitur: no two neighbours carry the same symbol; a^n a^m is
 *    merged into a^(n+m) at once (Property 3). Sequitur keeps every exponent 1
 *    and instead handles overlapping digrams (aaa) like the reference code.
 *
 * Node and rule slots freed while one symbol is processed are only recycled
 * after it (pending lists), so a caller up the recursion can test whether a
 * node it holds died in a cascade (its count field reads DEAD) instead of
 * following a reused slot.
 *
 * Cyclitur (Fig. 3) with rules shared across cycles: the current cycle is an
 * open rule C that receives the symbols up to the next loop header; C then
 * becomes the cycle's symbol (a rule pinned as a cycle, or, when the body
 * compressed to a single X^1, X itself; a single X^k body reuses an earlier
 * cycle rule with the same body), which is appended to S. Appending each
 * cycle symbol to S as soon as its cycle closes instead of collecting w' first
 * keeps the construction online; S receives exactly w', so line 8 of Fig. 3
 * runs interleaved. Fig. 3's loop bound drops the last symbol of w
 * (j = |w| ends the last cycle at w_{|w|-1}); we follow the definition of
 * C(w, lh) instead, in which the last cycle ends at w_{|w|}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "grammar_internal.h"

#define CNT_NT 0x80000000u   /* node refers to a rule */
#define CNT_IDX 0x40000000u  /* the index points at this node's digram */
#define CNT_MASK 0x3fffffffu /* repetition exponent */
#define CNT_KEY (~CNT_IDX)   /* the bits that belong to the digram key */
#define CNT_GUARD 0u         /* guard node: sym = rule slot */
#define CNT_DEAD CNT_NT      /* freed node (exponent 0, never valid otherwise) */
#define NIL 0xffffffffu

enum { R_ALIVE = 1, R_PINNED = 2, R_OPEN = 4 };

struct gnode {
  uint32_t prev, next, sym, cnt;
};

struct grule {
  uint32_t guard;
  uint32_t flags;
  uint64_t refs; /* sum of the exponents of all references */
};

struct ccent {
  uint64_t hash, len;
  uint32_t sym, nt; /* nt: CNT_NT or 0; len 0 = empty slot */
};

/* Cycles longer than this are compressed as they arrive instead of being
 * buffered for the cache, so memory stays bounded without a loop header. */
#define CACHE_MAX_CYCLE 65536

struct gbuilder {
  enum sonde_grammar_algo algo;
  int re; /* merge repetitions (ReSequitur, Cyclitur) */
  struct gnode *n;
  uint32_t ncap, nused, nfree, npend, npend_last;
  struct grule *r;
  uint32_t rcap, rused, rfree, rpend, rpend_last;
  uint64_t *ht; /* digram index: node+1 | low 32 hash bits << 32, 0 = empty; linear probing */
  uint32_t htmask, htcount;
  uint32_t S, C; /* top rule; open cycle rule (NIL when none) */
  bool has_lh;
  uint32_t lh;
  /* Cyclitur: cycle rules whose body is one element X^k, keyed by (X, k). */
  uint32_t *single; /* rule slot + 1 */
  uint32_t singlemask, singlecount;
  /* Cyclitur cycle cache: the raw symbols of the current cycle, and the
   * symbol each earlier cycle (by expansion hash and length) became. */
  bool cache_on;
  uint32_t *raw;
  size_t rawn, rawcap;
  uint64_t rawhash;
  struct ccent *cc;
  size_t ccmask, cccount;
  uint32_t *vstack; /* verification walk: node, repetitions left */
  size_t vcap;
  uint64_t input_len;
  uint64_t check_every, check_left; /* debug check mode (gb_set_check) */
  bool skip_on;      /* take a repeated flat rule at once (repeat_rule), run_step */
  uint32_t run_h, run_hv; /* run_step: the empty slot of the digram left out, its hash */
  uint64_t skipped;  /* input symbols taken by repeat_rule */
  int err;
  bool limit_hit;
  char msg[160];
};

/* ---- slots ---------------------------------------------------------------- */

/* The node array and the digram index are read at random, one or two cache
 * lines a lookup; on long traces (tens of MiB) most lookups then also miss
 * the TLB. Large arrays are 2 MiB aligned and asked for as huge pages where
 * the kernel offers them (Linux THP in "madvise" mode); free() releases them. */
#define BIG_ALIGN ((size_t)2 << 20)

static void *big_alloc(size_t bytes, bool zero)
{
  if (bytes < BIG_ALIGN)
    return zero ? calloc(1, bytes) : malloc(bytes);
  void *p = NULL;
  size_t sz = (bytes + BIG_ALIGN - 1) & ~(BIG_ALIGN - 1);
  if (posix_memalign(&p, BIG_ALIGN, sz))
    return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, sz, MADV_HUGEPAGE); /* a hint: failure only costs time */
#endif
  if (zero)
    memset(p, 0, bytes);
  return p;
}

/* realloc for arrays that may become big (the old contents are copied). */
static void *big_realloc(void *old, size_t oldbytes, size_t bytes)
{
  if (bytes < BIG_ALIGN)
    return realloc(old, bytes);
  void *p = big_alloc(bytes, false);
  if (!p)
    return NULL;
  memcpy(p, old, oldbytes);
  free(old);
  return p;
}

static int grow_nodes(struct gbuilder *b)
{
  uint32_t cap = b->ncap ? b->ncap * 2 : 1024;
  if (cap >= NIL / 2) {
    b->err = SONDE_E_LIMIT;
    return -1;
  }
  struct gnode *nn = big_realloc(b->n, (size_t)b->ncap * sizeof *nn, (size_t)cap * sizeof *nn);
  if (!nn) {
    b->err = SONDE_E_NOMEM;
    return -1;
  }
  b->n = nn;
  b->ncap = cap;
  return 0;
}

static uint32_t node_new(struct gbuilder *b, uint32_t sym, uint32_t cnt)
{
  uint32_t x;
  if (b->nfree != NIL) {
    x = b->nfree;
    b->nfree = b->n[x].next;
  } else {
    if (b->nused == b->ncap && grow_nodes(b))
      return NIL;
    x = b->nused++;
  }
  b->n[x].sym = sym;
  b->n[x].cnt = cnt;
  b->n[x].prev = b->n[x].next = x;
  return x;
}

/* Deferred free: the slot is marked DEAD and recycled after the symbol. */
static void node_free(struct gbuilder *b, uint32_t x)
{
  b->n[x].cnt = CNT_DEAD;
  b->n[x].next = b->npend;
  if (b->npend == NIL)
    b->npend_last = x;
  b->npend = x;
}

static uint32_t rule_new(struct gbuilder *b)
{
  uint32_t r;
  if (b->rfree != NIL) {
    r = b->rfree;
    b->rfree = b->r[r].guard;
  } else {
    if (b->rused == b->rcap) {
      uint32_t cap = b->rcap ? b->rcap * 2 : 256;
      struct grule *nr = realloc(b->r, (size_t)cap * sizeof *nr);
      if (!nr) {
        b->err = SONDE_E_NOMEM;
        return NIL;
      }
      b->r = nr;
      b->rcap = cap;
    }
    r = b->rused++;
  }
  uint32_t g = node_new(b, r, CNT_GUARD);
  if (g == NIL)
    return NIL;
  b->r[r].guard = g;
  b->r[r].flags = R_ALIVE;
  b->r[r].refs = 0;
  return r;
}

static void rule_free(struct gbuilder *b, uint32_t r)
{
  node_free(b, b->r[r].guard);
  b->r[r].flags = 0;
  b->r[r].guard = b->rpend;
  if (b->rpend == NIL)
    b->rpend_last = r;
  b->rpend = r;
}

/* The pending lists go onto the free lists whole (they are singly linked
 * through next / guard, like the free lists). */
static inline void flush_pending(struct gbuilder *b)
{
  if (b->npend != NIL) {
    b->n[b->npend_last].next = b->nfree;
    b->nfree = b->npend;
    b->npend = NIL;
  }
  if (b->rpend != NIL) {
    b->r[b->rpend_last].guard = b->rfree;
    b->rfree = b->rpend;
    b->rpend = NIL;
  }
}

/* ---- helpers -------------------------------------------------------------- */

#define N (b->n)
static inline int is_guard(const struct gbuilder *b, uint32_t x) { return b->n[x].cnt == CNT_GUARD; }
static inline int is_dead(const struct gbuilder *b, uint32_t x) { return b->n[x].cnt == CNT_DEAD; }
static inline int is_nt(const struct gbuilder *b, uint32_t x) { return (b->n[x].cnt & CNT_NT) != 0; }
static inline uint32_t count_of(const struct gbuilder *b, uint32_t x) { return b->n[x].cnt & CNT_MASK; }
static inline void link2(struct gbuilder *b, uint32_t a, uint32_t c)
{
  N[a].next = c;
  N[c].prev = a;
}

/* A new node for rule a, linked between z and g (the repeat skip's end
 * states); NIL when out of memory. */
static inline uint32_t rule_node_between(struct gbuilder *b, uint32_t a, uint32_t z, uint32_t g)
{
  uint32_t x = node_new(b, a, CNT_NT | 1);
  if (x == NIL)
    return NIL;
  link2(b, z, x);
  link2(b, x, g);
  b->r[a].refs++;
  return x;
}
/* Same symbol (and kind), exponents ignored: the neighbours Property 3 forbids. */
static inline int same_sym(const struct gbuilder *b, uint32_t a, uint32_t c)
{
  return N[a].sym == N[c].sym && ((N[a].cnt ^ N[c].cnt) & CNT_NT) == 0 && !is_guard(b, a) &&
         !is_guard(b, c);
}

/* ---- digram index --------------------------------------------------------- */

/* The index uses the low 32 bits; two multiplications, the high half of the
 * second depending on every input bit. */
static inline uint64_t dg_hash4(uint32_t a, uint32_t ac, uint32_t c, uint32_t cc)
{
  uint64_t x = (((uint64_t)a << 32) | ac) * 0x9E3779B97F4A7C15ull + (((uint64_t)c << 32) | cc);
  return (x * 0xBF58476D1CE4E5B9ull) >> 32;
}

static inline uint64_t dg_hash(const struct gbuilder *b, uint32_t x)
{
  uint32_t y = b->n[x].next;
  return dg_hash4(b->n[x].sym, b->n[x].cnt & CNT_KEY, b->n[y].sym, b->n[y].cnt & CNT_KEY);
}

static inline int dg_equal(const struct gbuilder *b, uint32_t x, uint32_t y)
{
  uint32_t x2 = b->n[x].next, y2 = b->n[y].next;
  return b->n[x].sym == b->n[y].sym && ((b->n[x].cnt ^ b->n[y].cnt) & CNT_KEY) == 0 &&
         b->n[x2].sym == b->n[y2].sym && ((b->n[x2].cnt ^ b->n[y2].cnt) & CNT_KEY) == 0;
}

#define SLOT_NODE(v) ((uint32_t)(v) - 1u)
#define SLOT_HASH(v) ((uint32_t)((v) >> 32))

/* Slot holding x's digram, or the empty slot where it would go (hv: the
 * digram's hash). The stored hash bits reject most other digrams without
 * reading their nodes. */
static uint32_t dg_find_hv(const struct gbuilder *b, uint32_t x, uint32_t hv)
{
  uint32_t h = hv & b->htmask;
  for (;;) {
    uint64_t v = b->ht[h];
    if (!v || (SLOT_HASH(v) == hv && dg_equal(b, SLOT_NODE(v), x)))
      return h;
    h = (h + 1) & b->htmask;
  }
}

static inline uint32_t dg_find(const struct gbuilder *b, uint32_t x)
{
  return dg_find_hv(b, x, (uint32_t)dg_hash(b, x));
}

static int dg_grow(struct gbuilder *b)
{
  uint32_t oldcap = b->htmask + 1, cap = oldcap * 2;
  uint64_t *old = b->ht;
  uint64_t *nt = big_alloc((size_t)cap * sizeof *nt, true);
  if (!nt) {
    b->err = SONDE_E_NOMEM;
    return -1;
  }
  b->ht = nt;
  b->htmask = cap - 1;
  for (uint32_t i = 0; i < oldcap; i++) {
    if (old[i]) {
      uint32_t h = SLOT_HASH(old[i]) & b->htmask;
      while (nt[h])
        h = (h + 1) & b->htmask;
      nt[h] = old[i];
    }
  }
  free(old);
  return 0;
}

/* Point slot h (empty, or holding the same digram elsewhere) at x, whose
 * digram hashes to hv. */
static void dg_set_hv(struct gbuilder *b, uint32_t h, uint32_t x, uint32_t hv)
{
  uint64_t old = b->ht[h];
  b->ht[h] = (x + 1u) | ((uint64_t)hv << 32);
  b->n[x].cnt |= CNT_IDX;
  if (old) {
    b->n[SLOT_NODE(old)].cnt &= ~CNT_IDX;
  } else if (++b->htcount * 2 > b->htmask + 1) {
    dg_grow(b);
  }
}

static inline void dg_set(struct gbuilder *b, uint32_t h, uint32_t x)
{
  dg_set_hv(b, h, x, (uint32_t)dg_hash(b, x));
}

/* Remove slot h, shifting later entries of its cluster back. */
static void dg_remove_slot(struct gbuilder *b, uint32_t h)
{
  uint32_t i = h, j = h;
  b->n[SLOT_NODE(b->ht[h])].cnt &= ~CNT_IDX;
  for (;;) {
    j = (j + 1) & b->htmask;
    if (!b->ht[j])
      break;
    uint32_t k = SLOT_HASH(b->ht[j]) & b->htmask;
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
      continue;
    b->ht[i] = b->ht[j];
    i = j;
  }
  b->ht[i] = 0;
  b->htcount--;
}

/* Remove x's digram from the index if the index points at x. */
static int dg_remove_if(struct gbuilder *b, uint32_t x)
{
  if (!(b->n[x].cnt & CNT_IDX)) /* most calls: not indexed here, no lookup */
    return 0;
  /* The flag says the index points at x: find x's slot by identity. */
  uint32_t hv = (uint32_t)dg_hash(b, x), h = hv & b->htmask;
  for (uint64_t want = (x + 1u) | ((uint64_t)hv << 32); b->ht[h]; h = (h + 1) & b->htmask) {
    if (b->ht[h] == want) {
      dg_remove_slot(b, h);
      return 1;
    }
  }
  return 0;
}

static int triple(const struct gbuilder *b, uint32_t x)
{
  uint32_t y = N[x].next, z = N[y].next;
  return !is_guard(b, x) && !is_guard(b, y) && !is_guard(b, z) && N[x].sym == N[y].sym &&
         ((N[x].cnt ^ N[y].cnt) & CNT_KEY) == 0 && N[y].sym == N[z].sym &&
         ((N[y].cnt ^ N[z].cnt) & CNT_KEY) == 0;
}

/* x is about to change or go: drop the digrams (prev, x) and (x, next). In
 * Sequitur mode a run aaa holds two overlapping occurrences of aa of which
 * only one is indexed; when that one goes, the surviving one is indexed. */
static void remove_around(struct gbuilder *b, uint32_t x)
{
  uint32_t p = N[x].prev, q = N[x].next;
  if (!is_guard(b, p) && dg_remove_if(b, p) && !b->re) {
    uint32_t pp = N[p].prev;
    if (!is_guard(b, pp) && triple(b, pp)) {
      uint32_t h = dg_find(b, pp);
      if (!b->ht[h])
        dg_set(b, h, pp);
    }
  }
  if (!is_guard(b, q) && dg_remove_if(b, x) && !b->re && triple(b, x)) {
    uint32_t h = dg_find(b, q);
    if (!b->ht[h])
      dg_set(b, h, q);
  }
}

static inline void unref(struct gbuilder *b, uint32_t x)
{
  if (is_nt(b, x))
    b->r[N[x].sym].refs -= count_of(b, x);
}

/* ---- the Sequitur operations ---------------------------------------------- */

static int check(struct gbuilder *b, uint32_t x);
static void expand(struct gbuilder *b, uint32_t x);

static inline void check_alive(struct gbuilder *b, uint32_t x)
{
  if (!is_dead(b, x) && !is_guard(b, x))
    check(b, x);
}

/* a.next == c carry the same symbol: fold c into a (Property 3). */
static void merge(struct gbuilder *b, uint32_t a, uint32_t c)
{
  uint64_t sum = (uint64_t)count_of(b, a) + count_of(b, c);
  if (sum > CNT_MASK) { /* exponent would overflow: keep both (documented limit, 2^30-1) */
    b->limit_hit = true;
    return;
  }
  remove_around(b, a);
  remove_around(b, c);
  N[a].cnt = (N[a].cnt & CNT_NT) | (uint32_t)sum; /* (not indexed: removed above) */
  link2(b, a, N[c].next);
  node_free(b, c);
}

static inline int rule_reusable(const struct gbuilder *b, uint32_t g)
{
  return !(b->r[N[g].sym].flags & R_OPEN);
}

/* x and x.next are a whole rule body (and the rule is closed). */
static inline int full_body(const struct gbuilder *b, uint32_t x)
{
  uint32_t p = N[x].prev;
  return is_guard(b, p) && is_guard(b, N[N[x].next].next) && rule_reusable(b, p);
}

/* Replace the digram at x by one reference to rule r. */
static void substitute(struct gbuilder *b, uint32_t x, uint32_t r)
{
  uint32_t x2 = N[x].next, p = N[x].prev, q = N[x2].next;
  remove_around(b, x);
  remove_around(b, x2);
  unref(b, x);
  unref(b, x2);
  link2(b, p, q);
  node_free(b, x);
  node_free(b, x2);
  b->r[r].refs++;
  uint32_t y;
  if (b->re && !is_guard(b, p) && is_nt(b, p) && N[p].sym == r && count_of(b, p) < CNT_MASK) {
    remove_around(b, p);
    N[p].cnt++;
    y = p;
  } else {
    if (b->re && !is_guard(b, p) && is_nt(b, p) && N[p].sym == r)
      b->limit_hit = true; /* could not merge: exponent at its limit */
    y = node_new(b, r, CNT_NT | 1);
    if (y == NIL)
      return;
    link2(b, p, y);
    link2(b, y, q);
  }
  if (b->re && same_sym(b, y, q))
    merge(b, y, q);
  /* The digram ending at y (new, or its left neighbour's exponent grew), then
   * the one starting at y unless a cascade consumed y. */
  check(b, N[y].prev);
  check_alive(b, y);
}

static void utility(struct gbuilder *b, uint32_t r)
{
  for (int side = 0; side < 2; side++) {
    if (!(b->r[r].flags & R_ALIVE))
      return;
    uint32_t g = b->r[r].guard;
    uint32_t x = side ? N[g].prev : N[g].next;
    if (is_guard(b, x) || !is_nt(b, x) || count_of(b, x) != 1)
      continue;
    struct grule *u = &b->r[N[x].sym];
    if (u->refs == 1 && !(u->flags & (R_PINNED | R_OPEN)))
      expand(b, x);
  }
}

/* x's digram equals the indexed one at m (slot h): enforce uniqueness. */
static void match(struct gbuilder *b, uint32_t x, uint32_t m, uint32_t h)
{
  uint32_t r;
  if (full_body(b, m)) {
    r = N[N[m].prev].sym;
    substitute(b, x, r);
  } else if (full_body(b, x)) {
    r = N[N[x].prev].sym;
    dg_set(b, h, x);
    substitute(b, m, r);
  } else {
    r = rule_new(b);
    if (r == NIL)
      return;
    uint32_t g = b->r[r].guard;
    uint32_t m2 = N[m].next;
    uint32_t a = node_new(b, N[m].sym, N[m].cnt & CNT_KEY);
    uint32_t c = node_new(b, N[m2].sym, N[m2].cnt & CNT_KEY);
    if (a == NIL || c == NIL)
      return;
    link2(b, g, a);
    link2(b, a, c);
    link2(b, c, g);
    if (is_nt(b, a))
      b->r[N[a].sym].refs += count_of(b, a);
    if (is_nt(b, c))
      b->r[N[c].sym].refs += count_of(b, c);
    /* The index now points into the new rule, so cascades find it. */
    dg_set(b, h, a);
    substitute(b, m, r);
    substitute(b, x, r);
  }
  utility(b, r);
}

/* check() past the lookup: h is the slot dg_find_hv gave for x's digram (hv). */
static int check_slot(struct gbuilder *b, uint32_t x, uint32_t h, uint32_t hv)
{
  uint64_t v = b->ht[h];
  if (!v) {
    dg_set_hv(b, h, x, hv);
    return 0;
  }
  uint32_t m = SLOT_NODE(v);
  if (N[m].next == x || N[x].next == m) /* overlapping (aaa) */
    return 0;
  match(b, x, m, h);
  return 1;
}

static int check(struct gbuilder *b, uint32_t x)
{
  if (is_guard(b, x) || is_guard(b, N[x].next) || b->err || (N[x].cnt & CNT_IDX))
    return 0; /* an indexed digram is unique by construction */
  uint32_t hv = (uint32_t)dg_hash(b, x);
  return check_slot(b, x, dg_find_hv(b, x, hv), hv);
}

/* check() for a digram that expand() just formed. When it overlaps the
 * indexed occurrence (aaa), the index moves to the new one, as in the
 * reference Sequitur (Nevill-Manning's C++, which indexes the digram at the
 * end of an expanded body unconditionally). Leaving the index on the old
 * occurrence is just as valid, but on long PC traces it later substitutes a
 * different pair of the run, which builds rules equal in expansion to
 * existing ones: 12.6% larger grammars on a 10 M-symbol bench_cpu trace
 * (docs/benchmarks.md, "Grammar size against the reference Sequitur"). */
static void check_expanded(struct gbuilder *b, uint32_t x)
{
  if (is_dead(b, x) || is_guard(b, x) || is_guard(b, N[x].next) || b->err ||
      (N[x].cnt & CNT_IDX))
    return;
  uint32_t h = dg_find(b, x);
  uint64_t v = b->ht[h];
  if (v) {
    uint32_t m = SLOT_NODE(v);
    if (N[m].next == x || N[x].next == m) {
      dg_set(b, h, x);
      return;
    }
  }
  check(b, x);
}

/* x is the only reference (exponent 1) to its rule: put the body in its place. */

static void expand(struct gbuilder *b, uint32_t x)
{
  uint32_t r = N[x].sym, p = N[x].prev, q = N[x].next;
  uint32_t g = b->r[r].guard, f = N[g].next, l = N[g].prev;
  remove_around(b, x);
  link2(b, p, f);
  link2(b, l, q);
  node_free(b, x);
  rule_free(b, r);
  uint32_t left = p, right = l;
  int lm = 0, rm = 0;
  if (b->re && same_sym(b, p, f)) {
    merge(b, p, f);
    if (l == f)
      l = right = p;
    lm = 1;
  }
  if (b->re && same_sym(b, l, q)) {
    merge(b, l, q);
    rm = 1;
  }
  /* Digrams that changed: (left, f) and (l, q), plus the outer neighbours of
   * a merged node whose exponent grew. */
  uint32_t lp = N[left].prev, rp = N[right].prev;
  if (lm)
    check_alive(b, lp);
  check_expanded(b, left);
  if (rm)
    check_alive(b, rp);
  check_expanded(b, right);
}

/* Append one symbol to the body of rule t (S or the open cycle). */
static void append(struct gbuilder *b, uint32_t t, uint32_t sym, uint32_t nt)
{
  uint32_t g = b->r[t].guard, last = N[g].prev;
  if (b->re && !is_guard(b, last) && N[last].sym == sym && (N[last].cnt & CNT_NT) == nt &&
      count_of(b, last) < CNT_MASK) {
    remove_around(b, last);
    N[last].cnt++;
    if (nt)
      b->r[sym].refs++;
    check_alive(b, N[last].prev);
  } else {
    if (b->re && !is_guard(b, last) && N[last].sym == sym && (N[last].cnt & CNT_NT) == nt)
      b->limit_hit = true;
    uint32_t x = node_new(b, sym, nt | 1);
    if (x == NIL)
      return;
    link2(b, last, x);
    link2(b, x, g);
    if (nt)
      b->r[sym].refs++;
    check_alive(b, last);
  }
}

/* ---- A repeated rule at once -----------------------------------------------
 * On long PC traces nearly every symbol continues a repeat, and the
 * symbol-by-symbol algorithm spends ~1,600 host instructions per symbol
 * rebuilding the rule it repeats. Say A -> a1 .. aL (terminals, exponents 1),
 * the target rule t (S, or Cyclitur's open cycle) ends in z, and a1 .. aL
 * come next. Symbol by symbol: a1 goes in, and (z a1) is indexed; a2 makes
 * a rule P2 -> a1 a2 (A becomes P2 a3 .. aL, t ends in "z P2"); a3 makes
 * P3 -> P2 a3 and expands P2 (now used once); and so on, until aL makes t end
 * in "z A" (ReSequitur, z = A^k: in A^(k+1)), whose digram with its left
 * neighbour is checked, and A's last prefix rule is expanded back: A is as
 * before, its digrams indexed in its body again, and t has one more
 * reference to A. Every digram met on the way but the last has a fresh rule
 * Pk in it or is (z a1), so under these conditions it matches nothing:
 *  - A is closed (not S, not open or pinned), L >= 2, and no two neighbours
 *    in a1 .. aL are equal (no overlapping digrams or merges);
 *  - t is not empty, z is not the terminal a1, and (z a1) is not indexed.
 * Then repeat_rule() takes the repeat at once: when the last digram
 * ((z A), or (y A^(k+1)) for y z = y A^k) is not in the index either, by
 * appending A (the end state); else (L >= 3) by repeat_whole below: A
 * appended, then the climb of run_up, with the prefix rule P -> a1 .. a(L-1)
 * of the symbol-by-symbol state before aL built (make_prefix) only when
 * something but the climb would see it (ReSequitur merging A into z = A^k:
 * enter_prefix(), the state before aL, and aL the ordinary way). When the
 * input follows only A's first j >= 2 symbols (all terminals), the state
 * after them is the same shape (P -> a1 .. aj, A -> P a(j+1) .., t ending in
 * "z P"; a(j+1) may be anything but a terminal aj), so enter_prefix() takes
 * those and the next symbol goes in the ordinary way. The grammar is the
 * same as symbol by symbol: tests/grammar/test_compress.c and
 * fuzz/fuzz_grammar.c compare both (sonde_grammar_set_repeat_skip) rule for
 * rule on random, structured and real inputs, for all three algorithms. */

/* Slot of the digram (a ac)(c cc) given by keys, or the empty slot. */
static uint32_t dg_find_key_hv(const struct gbuilder *b, uint32_t a, uint32_t ac, uint32_t c,
                               uint32_t cc, uint32_t hv)
{
  uint32_t h = hv & b->htmask;
  for (;;) {
    uint64_t v = b->ht[h];
    if (!v)
      return h;
    if (SLOT_HASH(v) == hv) {
      uint32_t x = SLOT_NODE(v), y = N[x].next;
      if (N[x].sym == a && (N[x].cnt & CNT_KEY) == ac && N[y].sym == c &&
          (N[y].cnt & CNT_KEY) == cc)
        return h;
    }
    h = (h + 1) & b->htmask;
  }
}

static inline uint32_t dg_find_key(const struct gbuilder *b, uint32_t a, uint32_t ac, uint32_t c,
                                   uint32_t cc)
{
  return dg_find_key_hv(b, a, ac, c, cc, (uint32_t)dg_hash4(a, ac, c, cc));
}

/* The rule A whose body the input w[0 .. j) follows (a1 .. aj, terminals),
 * when those can be taken at once into rule t (conditions above): returns j
 * and sets *rule, *complete (j = L, all of A) and *whole (complete, and the
 * last digram matches nothing: append A); or 0. */
static size_t repeat_rule(const struct gbuilder *b, uint32_t t, const uint32_t *w, size_t avail,
                          uint32_t *rule, bool *complete, bool *whole)
{
  /* (the caller checked t's last symbol z: not the terminal a1, (z a1) not indexed) */
  uint64_t v = b->ht[dg_find_key(b, w[0], 1, w[1], 1)];
  if (!v)
    return 0;
  uint32_t m = SLOT_NODE(v), g = N[m].prev;
  if (!is_guard(b, g))
    return 0; /* the digram is not the start of a body */
  uint32_t a = N[g].sym;
  if (a == b->S || (b->r[a].flags & (R_PINNED | R_OPEN)))
    return 0;
  size_t len = 0;
  uint32_t x = m;
  for (; !is_guard(b, x); x = N[x].next, len++) {
    if (len >= avail || (N[x].cnt & CNT_KEY) != 1 || N[x].sym != w[len] ||
        (len && w[len] == w[len - 1]))
      break;
  }
  *complete = is_guard(b, x);
  if (len < 2 || (!*complete && !(N[x].cnt & CNT_NT) && N[x].sym == w[len - 1]))
    return 0; /* (a(j) a(j+1)) could overlap: a a */
  uint32_t z = N[b->r[t].guard].prev, zc = N[z].cnt & CNT_KEY;
  *rule = a;
  if (b->re && (zc & CNT_NT) && N[z].sym == a) {
    /* z = A^k: the last step merges into it, then checks (y A^(k+1)) */
    uint32_t y = N[z].prev, k = zc & CNT_MASK;
    *whole = k < CNT_MASK &&
             (is_guard(b, y) ||
              !b->ht[dg_find_key(b, N[y].sym, N[y].cnt & CNT_KEY, a, CNT_NT | (k + 1))]);
  } else {
    *whole = !b->ht[dg_find_key(b, N[z].sym, zc, a, CNT_NT | 1)];
  }
  return len;
}

/* A's first j nodes (2 <= j < L) become the body of a new rule P, used
 * once, in A -> P a(j+1) ..: their digrams stay indexed where they are,
 * (aj a(j+1)) leaves the index and (P a(j+1)) enters it. Returns P. */
static uint32_t make_prefix(struct gbuilder *b, uint32_t a, size_t len)
{
  uint32_t first = N[b->r[a].guard].next, last = first;
  for (size_t k = 1; k < len; k++)
    last = N[last].next; /* a(j) */
  uint32_t next = N[last].next;
  dg_remove_if(b, last); /* (a(j) a(j+1)) */
  uint32_t p = rule_new(b);
  uint32_t y = p == NIL ? NIL : node_new(b, p, CNT_NT | 1);
  if (y == NIL)
    return NIL;
  uint32_t ga = b->r[a].guard, gp = b->r[p].guard;
  link2(b, gp, first);
  link2(b, last, gp);
  link2(b, ga, y);
  link2(b, y, next);
  b->r[p].refs = 1;
  dg_set(b, dg_find(b, y), y); /* (P a(j+1)): P is new, so not there yet */
  return p;
}

/* The state symbol-by-symbol appending reaches after a1 .. aj of a rule A
 * (repeat_rule's conditions, 2 <= j < L): make_prefix's P -> a1 .. aj,
 * A -> P a(j+1) .., t ending in "z P"; the digram (aj a(j+1)) is in no body
 * then. */
static void enter_prefix(struct gbuilder *b, uint32_t t, uint32_t a, size_t len)
{
  uint32_t p = make_prefix(b, a, len);
  uint32_t x = p == NIL ? NIL : node_new(b, p, CNT_NT | 1);
  if (x == NIL)
    return;
  uint32_t gt = b->r[t].guard, z = N[gt].prev;
  link2(b, z, x);
  link2(b, x, gt);
  b->r[p].refs = 2;
  dg_set(b, dg_find(b, z), z); /* (z P) */
}

/* ---- A repeat continued across rule boundaries ----------------------------
 * What repeat_rule leaves on interrupt-heavy traces is mostly one step: t
 * ends in "y X", the next symbol is c, and (X c) is the whole body of a
 * closed rule R (1.5 M of the 1.8 M symbols of the first 2.4 M of bench_irq
 * that go symbol by symbol). Symbol by symbol, c gets a node, (X c) becomes
 * a new node R (substitute: (y X) leaves the index), (y R) is looked up and,
 * being new, indexed, R's first element is tested for rule utility, and the
 * next symbol of the same kind takes (y R) out of the index again. run_step
 * does that step in place, X's node becoming R, and leaves (y R) out of the
 * index while such steps follow each other (run_end puts the last one in):
 * two lookups a symbol instead of four, and no node churn. A run also starts
 * with the entry of a digram that append_syms itself just formed and found
 * new ((z c) for an ordinary symbol, (z A) for a repeat taken whole), which
 * the first step would take out again. The index differs from the
 * symbol-by-symbol one only by that entry while the run lasts, and no lookup
 * in between can be for it ((X c) could be (y X) only if X were the terminal
 * c, and such a symbol ends the run first; (y R) is not (y X), R's body
 * holding X).
 *
 * When (y R) is itself the whole body of a closed rule Q, the ordinary
 * cascade substitutes it the same way (y's node becomes Q, R's goes), and
 * so on up; run_step follows that in place too. Each substitution would end
 * with a rule-utility test of its rule (R, Q, ...), run after the cascade
 * above it returns, innermost first; when the cascade stops at a new digram
 * and none of those tests would expand anything, the step is done and the
 * run goes on. Otherwise (a merge with the left neighbour in ReSequitur, a
 * digram found that is not such a body, a test that would expand) run_step
 * continues the ordinary way from where it is: the same calls, in the same
 * order, on the same state. */

#define RUN_DEPTH 32 /* substitutions followed in place per step */

/* Would utility(r) expand something? */
static int utility_fires(const struct gbuilder *b, uint32_t r)
{
  if (!(b->r[r].flags & R_ALIVE))
    return 0;
  uint32_t g = b->r[r].guard;
  for (int side = 0; side < 2; side++) {
    uint32_t x = side ? N[g].prev : N[g].next;
    if (is_guard(b, x) || !is_nt(b, x) || count_of(b, x) != 1)
      continue;
    const struct grule *u = &b->r[N[x].sym];
    if (u->refs == 1 && !(u->flags & (R_PINNED | R_OPEN)))
      return 1;
  }
  return 0;
}

/* run_step after (y x) was found in the index at slot h (hash hv), x being
 * t's last node, just made a reference to r: the substitutions up the
 * hierarchy, then the ordinary way or the run goes on (run_step's result).
 * prefix > 0: x is a repeat of the flat rule r appended whole (repeat_whole);
 * make_prefix(r, prefix) runs before the ordinary way takes over. */
static int run_up(struct gbuilder *b, uint32_t x, uint32_t r, uint32_t h, uint32_t hv,
                  size_t prefix)
{
  uint32_t pend[RUN_DEPTH], np = 0, y = N[x].prev;
  pend[np++] = r;
  for (;;) { /* x: t's last node; its digram (y x) is indexed elsewhere, at slot h */
    uint32_t m2 = SLOT_NODE(b->ht[h]), g2 = N[m2].prev, w = N[y].prev;
    if (!(np < RUN_DEPTH && N[m2].next != y && is_guard(b, g2) &&
          is_guard(b, N[N[m2].next].next) && rule_reusable(b, g2) &&
          !(b->re && !is_guard(b, w) && is_nt(b, w) && N[w].sym == N[g2].sym))) {
      if (prefix) { /* (repeat_whole) */
        make_prefix(b, r, prefix);
        h = dg_find_hv(b, y, hv);
      }
      check_slot(b, y, h, hv); /* the ordinary cascade from here */
      check_alive(b, x);
      while (np)
        utility(b, pend[--np]);
      return 2;
    }
    /* substitute(y, Q) in place: y's node becomes Q, x's goes */
    uint32_t q = N[g2].sym;
    remove_around(b, y); /* (w y); (y x) is not indexed */
    unref(b, y);
    unref(b, x);
    link2(b, y, N[x].next);
    node_free(b, x);
    N[y].sym = q;
    N[y].cnt = CNT_NT | 1;
    b->r[q].refs++;
    pend[np++] = q;
    x = y;
    y = N[x].prev;
    if (is_guard(b, y) || b->err)
      break;
    hv = (uint32_t)dg_hash(b, y);
    h = dg_find_hv(b, y, hv);
    if (!b->ht[h])
      break;
  }
  int fires = 0;
  for (uint32_t k = 0; k < np && !fires; k++)
    fires = utility_fires(b, pend[k]);
  if (!fires) {
    b->run_h = h; /* nothing touches the index until the next step or run_end */
    b->run_hv = hv;
    return 1;
  }
  if (prefix) { /* (repeat_whole) */
    make_prefix(b, r, prefix);
    if (!is_guard(b, y))
      h = dg_find_hv(b, y, hv);
  }
  if (!is_guard(b, y) && !b->err) /* the check of (y x) indexed it */
    dg_set_hv(b, h, y, hv);
  while (np)
    utility(b, pend[--np]);
  return 2;
}

/* t's last node X (terminal c next; (X c) indexed, v its slot's value; the
 * caller excluded a terminal X equal to c): returns 0 when the step is not
 * of that kind (nothing changed), 1 when taken with the digram ending at t's
 * last node left out of the index, 2 when taken and finished the ordinary
 * way (the run ends). */
static inline int run_step(struct gbuilder *b, uint32_t x, uint64_t v, bool first)
{
  uint32_t m = SLOT_NODE(v), gm = N[m].prev;
  if (!is_guard(b, gm) || !is_guard(b, N[N[m].next].next) || !rule_reusable(b, gm))
    return 0;
  uint32_t r = N[gm].sym, y = N[x].prev, xc = N[x].cnt & CNT_KEY;
  bool fires = false; /* utility(R) will expand X's rule, used once after the step */
  if (xc & CNT_NT) {
    const struct grule *u = &b->r[N[x].sym];
    fires = (xc & CNT_MASK) == 1 && u->refs == 2 && !(u->flags & (R_PINNED | R_OPEN));
  }
  if (b->re && !is_guard(b, y) && is_nt(b, y) && N[y].sym == r)
    return 0; /* R would merge into y */
  if (first)
    remove_around(b, x); /* (y X) (later steps: not in the index) */
  unref(b, x);
  N[x].sym = r;
  N[x].cnt = CNT_NT | 1;
  b->r[r].refs++;
  if (is_guard(b, y) || b->err) {
    if (fires)
      utility(b, r);
    return fires ? 2 : 1;
  }
  uint32_t hv = (uint32_t)dg_hash(b, y), h = dg_find_hv(b, y, hv);
  if (b->ht[h])
    return run_up(b, x, r, h, hv, 0); /* (its utility tests include R's) */
  if (fires) { /* as substitute() and match() end: (y R) indexed, then utility(R) */
    dg_set_hv(b, h, y, hv);
    utility(b, r);
    return 2;
  }
  b->run_h = h;
  b->run_hv = hv;
  return 1;
}

/* run_step's common case, in a loop of its own while a run lasts: (X c) is
 * the whole body of a closed rule R, no utility test or merge would fire,
 * and (y R) is new. t's last node x and its left neighbour y stay the same
 * through such steps (only x's symbol changes), so their keys live in
 * registers. The lookups are software-pipelined: a step's (y R), a new
 * digram whose index slot is seldom in the cache, is prefetched and only
 * read after the next step's (R c') has been looked up (reads only; they
 * are dropped when (y R) turns out to be indexed and run_up takes over, as
 * in run_step). Anything else stops the loop before the symbol (*stuck;
 * nothing changed for it) and run_step takes it. The state after each step
 * is the one run_step leaves. Returns the next symbol's position. */
static size_t run_fast(struct gbuilder *b, uint32_t t, const uint32_t *syms, size_t i, size_t n,
                       bool *run, bool *stuck)
{
  struct gnode *nd = b->n; /* no node or index slot is allocated until run_up */
  const uint64_t *ht = b->ht;
  const uint32_t mask = b->htmask;
  uint32_t x = nd[b->r[t].guard].prev, y = nd[x].prev;
  if (nd[y].cnt == CNT_GUARD) {
    *stuck = true;
    return i;
  }
  const uint32_t ysym = nd[y].sym, ykey = nd[y].cnt & CNT_KEY;
  const bool ymerge = b->re && (ykey & CNT_NT); /* R could merge into y */
  uint32_t xsym = nd[x].sym, xkey = nd[x].cnt & CNT_KEY;
  uint32_t hv = i < n ? (uint32_t)dg_hash4(xsym, xkey, syms[i], 1) : 0, phv = 0;
  bool pending = false; /* the last step's (y R), hash phv, not looked up yet */
  for (;; i++) {
    uint32_t m = 0, m2 = 0, gm = 0;
    bool ok = false;
    if (i < n && ((xkey & CNT_NT) || xsym != syms[i])) { /* (z z: the ordinary way) */
      uint32_t c = syms[i];
      for (uint32_t h = hv & mask;; h = (h + 1) & mask) { /* (X c) */
        uint64_t v = ht[h];
        if (!v)
          break;
        if (SLOT_HASH(v) != hv)
          continue;
        m = SLOT_NODE(v);
        m2 = nd[m].next;
        if (nd[m].sym == xsym && (nd[m].cnt & CNT_KEY) == xkey && nd[m2].sym == c &&
            (nd[m2].cnt & CNT_KEY) == 1) {
          ok = true;
          break;
        }
      }
      /* the whole body of its rule: m follows the guard, and m2 precedes it
       * (a body's list is closed by its own guard) */
      if (ok) {
        gm = nd[m].prev;
        ok = nd[gm].cnt == CNT_GUARD && nd[m2].next == gm;
      }
    }
    if (pending) { /* the last step's (y R) */
      uint32_t h = phv & mask;
      for (;; h = (h + 1) & mask) {
        uint64_t v = ht[h];
        if (!v)
          break;
        if (SLOT_HASH(v) != phv)
          continue;
        uint32_t q = SLOT_NODE(v), q2 = nd[q].next;
        if (nd[q].sym == ysym && (nd[q].cnt & CNT_KEY) == ykey && nd[q2].sym == xsym &&
            (nd[q2].cnt & CNT_KEY) == (CNT_NT | 1)) {
          *run = run_up(b, x, xsym, h, phv, 0) == 1;
          flush_pending(b);
          return i;
        }
      }
      b->run_h = h;
      b->run_hv = phv;
    }
    if (i >= n)
      return i;
    if (!ok)
      goto stop;
    uint32_t r = nd[gm].sym;
    if (r == b->S || r == b->C)
      goto stop; /* open (R_OPEN is S's and the open cycle's alone): not read from
                  * r's slot, which the step then only writes (refs) */
    if (xkey & CNT_NT) { /* utility(R) would expand X's rule, now used once */
      const struct grule *u = &b->r[xsym];
      if ((xkey & CNT_MASK) == 1 && u->refs == 2 && !(u->flags & (R_PINNED | R_OPEN)))
        goto stop;
    }
    if (ymerge && ysym == r)
      goto stop;
    phv = (uint32_t)dg_hash4(ysym, ykey, r, CNT_NT | 1);
    __builtin_prefetch(&ht[phv & mask]);
    if (i + 1 < n) {
      hv = (uint32_t)dg_hash4(r, CNT_NT | 1, syms[i + 1], 1);
      __builtin_prefetch(&ht[hv & mask]);
    }
    if (xkey & CNT_NT)
      b->r[xsym].refs -= xkey & CNT_MASK;
    nd[x].sym = xsym = r;
    nd[x].cnt = xkey = CNT_NT | 1;
    b->r[r].refs++;
    pending = true;
  }
stop:
  *stuck = true;
  return i;
}

/* The run is over: index (y X) for t's last node X, as its last step
 * would have, in the slot that step found empty. */
static void run_end(struct gbuilder *b, uint32_t t)
{
  uint32_t y = N[N[b->r[t].guard].prev].prev;
  if (!is_guard(b, y))
    dg_set_hv(b, b->run_h, y, b->run_hv);
}

/* Append syms[0 .. n) to rule t (S, or Cyclitur's open cycle), taking
 * repeats of flat rules at once where repeat_rule allows (when on). */
static void append_syms(struct gbuilder *b, uint32_t t, const uint32_t *syms, size_t n)
{
  bool run = false;   /* in a run of run_step()s: (y X) not indexed */
  bool stuck = false; /* run_fast stopped before syms[i] */
  for (size_t i = 0; i < n && !b->err;) {
    if (run && !stuck && b->skip_on) {
      i = run_fast(b, t, syms, i, n, &run, &stuck);
      continue;
    }
    stuck = false;
    uint32_t a, g = b->r[t].guard, z = N[g].prev, zc = N[z].cnt & CNT_KEY;
    bool complete = false, whole = false;
    uint32_t hv = 0, h = 0;
    bool have_h = false;
    if (run && !(zc & CNT_NT) && N[z].sym == syms[i]) { /* z z: the ordinary way */
      run = false;
      run_end(b, t);
      continue;
    }
    if (run) { /* ((z c) is not the digram left out: z c differs from y z) */
      hv = (uint32_t)dg_hash4(N[z].sym, zc, syms[i], 1);
      h = dg_find_key_hv(b, N[z].sym, zc, syms[i], 1, hv);
      int k = b->ht[h] ? run_step(b, z, b->ht[h], false) : 0;
      if (k) {
        run = k == 1;
        i++;
        flush_pending(b);
        continue;
      }
      run = false;
      uint32_t mask = b->htmask;
      run_end(b, t);
      /* (z c)'s slot stays valid unless run_end filled it or grew the index */
      have_h = mask == b->htmask && h != b->run_h;
      if (!have_h)
        continue;
    }
    if (!b->skip_on || i + 1 >= n || is_guard(b, z) || (!(zc & CNT_NT) && N[z].sym == syms[i])) {
      append(b, t, syms[i], 0);
      i++;
      flush_pending(b);
      continue;
    }
    /* (z a1) first: it is what append() looks up next, and when it is
     * indexed (most symbols of a repeat) no skip applies. */
    if (!have_h) {
      hv = (uint32_t)dg_hash4(N[z].sym, zc, syms[i], 1);
      h = dg_find_key_hv(b, N[z].sym, zc, syms[i], 1, hv);
    }
    if (b->ht[h]) {
      int k = run_step(b, z, b->ht[h], true);
      if (k) {
        run = k == 1;
        i++;
        flush_pending(b);
        continue;
      }
    }
    size_t len = b->ht[h] ? 0 : repeat_rule(b, t, syms + i, n - i, &a, &complete, &whole);
    if (!len) { /* append() with the slot of (z a1) known */
      uint32_t x = node_new(b, syms[i], 1);
      if (x == NIL)
        return;
      link2(b, z, x);
      link2(b, x, g);
      if (!b->ht[h] && !b->err && !(N[z].cnt & CNT_IDX)) {
        run = true; /* (z c) is new: its index entry waits, as in a run */
        b->run_h = h;
        b->run_hv = hv;
      } else if (!b->err && !(N[z].cnt & CNT_IDX)) {
        check_slot(b, z, h, hv);
      }
      i++;
    } else if (complete && whole && !(b->re && (zc & CNT_NT) && N[z].sym == a)) {
      /* the end state: a node for A; (z A) is new, its entry waits as in a run */
      if (rule_node_between(b, a, z, g) == NIL)
        return;
      if (!b->err && !(N[z].cnt & CNT_IDX)) {
        b->run_hv = (uint32_t)dg_hash4(N[z].sym, zc, a, CNT_NT | 1);
        b->run_h = dg_find_key_hv(b, N[z].sym, zc, a, CNT_NT | 1, b->run_hv);
        run = true;
      }
      b->skipped += len;
      i += len;
    } else if (complete && whole) { /* the end state, A merged into z = A^k */
      append(b, t, a, CNT_NT);
      b->skipped += len;
      i += len;
    } else if (complete && len >= 3 && !(b->re && (zc & CNT_NT) && N[z].sym == a)) {
      /* repeat_whole: all of A follows and (z A) is in the index. Symbol by
       * symbol, aL turns "z P aL" (P -> a1 .. a(L-1), A -> P aL) into "z A",
       * (z A) is found and the cascade climbs; utility(A) comes last and
       * expands P back, leaving A and its index entries as they were. The
       * climb's lookups are of digrams ending in a rule, never (a(L-1) aL),
       * and read no body of A's; so A is appended at once and run_up climbs,
       * building P (make_prefix) just before anything else would run with
       * A's body P aL in place: the ordinary cascade or another utility test.
       * The state is then the symbol-by-symbol one, and so are the calls. */
      uint32_t x = rule_node_between(b, a, z, g);
      if (x == NIL)
        return;
      hv = (uint32_t)dg_hash4(N[z].sym, zc, a, CNT_NT | 1);
      h = dg_find_key_hv(b, N[z].sym, zc, a, CNT_NT | 1, hv);
      if (b->ht[h]) {
        run = run_up(b, x, a, h, hv, len - 1) == 1;
      } else { /* (not reached: repeat_rule found (z A)) as symbol by symbol */
        make_prefix(b, a, len - 1);
        dg_set(b, dg_find(b, z), z);
        utility(b, a);
      }
      b->skipped += len;
      i += len;
    } else if (complete && len >= 3) { /* the state before aL, then aL */
      enter_prefix(b, t, a, len - 1);
      b->skipped += len - 1;
      i += len - 1;
      /* t ends in "z P", A -> P aL: (P aL) is A's whole body, the run step's
       * case (its utility test expands P back into A) */
      uint32_t p = N[g].prev, phv = (uint32_t)dg_hash4(N[p].sym, CNT_NT | 1, syms[i], 1);
      uint32_t ph = dg_find_key_hv(b, N[p].sym, CNT_NT | 1, syms[i], 1, phv);
      int k = b->ht[ph] && !b->err ? run_step(b, p, b->ht[ph], true) : 0;
      if (k)
        run = k == 1;
      else
        append(b, t, syms[i], 0);
      i++;
    } else if (!complete) { /* the state after a1 .. aj */
      enter_prefix(b, t, a, len);
      b->skipped += len;
      i += len;
    } else {
      append(b, t, syms[i], 0);
      i++;
    }
    flush_pending(b);
  }
  if (run && !b->err)
    run_end(b, t);
}

/* ---- Cyclitur ------------------------------------------------------------- */

static uint32_t single_find(const struct gbuilder *b, uint32_t sym, uint32_t cnt)
{
  uint32_t h = (uint32_t)dg_hash4(sym, cnt, 0, 0) & b->singlemask;
  for (;;) {
    uint32_t v = b->single[h];
    if (!v)
      return h;
    uint32_t f = N[b->r[v - 1].guard].next;
    if (N[f].sym == sym && N[f].cnt == cnt)
      return h;
    h = (h + 1) & b->singlemask;
  }
}

static int single_add(struct gbuilder *b, uint32_t r, uint32_t sym, uint32_t cnt)
{
  if ((b->singlecount + 1) * 2 > b->singlemask + 1) {
    uint32_t oldcap = b->singlemask + 1, cap = oldcap * 2;
    uint32_t *old = b->single;
    b->single = calloc(cap, sizeof *b->single);
    if (!b->single) {
      b->single = old;
      return b->err = SONDE_E_NOMEM;
    }
    b->singlemask = cap - 1;
    for (uint32_t i = 0; i < oldcap; i++) {
      if (old[i]) {
        uint32_t f = N[b->r[old[i] - 1].guard].next;
        b->single[single_find(b, N[f].sym, N[f].cnt)] = old[i];
      }
    }
    free(old);
  }
  b->single[single_find(b, sym, cnt)] = r + 1;
  b->singlecount++;
  return 0;
}

/* The open cycle C is complete: turn it into the cycle's symbol and append
 * that to S. */
static void close_cycle(struct gbuilder *b, uint32_t *out_sym, uint32_t *out_nt)
{
  uint32_t c = b->C, g = b->r[c].guard, f = N[g].next;
  b->C = NIL;
  b->r[c].flags &= ~(uint32_t)R_OPEN;
  uint32_t sym, nt;
  if (N[f].next == g) {
    uint32_t cnt = N[f].cnt & CNT_KEY;
    if ((cnt & CNT_MASK) == 1) { /* a single symbol is its own cycle */
      sym = N[f].sym;
      nt = cnt & CNT_NT;
      if (nt)
        b->r[sym].flags |= R_PINNED;
      unref(b, f);
      node_free(b, f);
      rule_free(b, c);
    } else {
      uint32_t h = single_find(b, N[f].sym, cnt);
      if (b->single[h]) {
        sym = b->single[h] - 1;
        unref(b, f);
        node_free(b, f);
        rule_free(b, c);
      } else {
        b->r[c].flags |= R_PINNED;
        sym = c;
        single_add(b, c, N[f].sym, cnt);
      }
      nt = CNT_NT;
    }
  } else {
    b->r[c].flags |= R_PINNED;
    sym = c;
    nt = CNT_NT;
  }
  append(b, b->S, sym, nt);
  if (out_sym) {
    *out_sym = sym;
    *out_nt = nt;
  }
}

/* ---- Cyclitur cycle cache --------------------------------------------------
 * A cycle whose symbols equal an earlier cycle's becomes that cycle's symbol
 * at once. Running ReSequitur on it would end the same way (its body reduces
 * to the earlier cycle rule by digram uniqueness) after rebuilding and
 * undoing the shared structure symbol by symbol; the cache skips that work,
 * which is what makes Cyclitur fast on cyclic traces. Cycle symbols are pinned
 * rules or terminals and expansions never change, so a cached entry stays
 * valid; a hit is verified against the live grammar before use, so a hash
 * collision can only cost time, never correctness. */

static inline uint64_t raw_mix(uint64_t h, uint32_t s)
{
  return (h ^ s) * 0x100000001b3ull + 0x9E3779B97F4A7C15ull;
}

static size_t cc_slot(const struct gbuilder *b, uint64_t h, uint64_t len)
{
  size_t i = (size_t)(h ^ (h >> 29)) & b->ccmask;
  while (b->cc[i].len && !(b->cc[i].hash == h && b->cc[i].len == len))
    i = (i + 1) & b->ccmask;
  return i;
}

static int cc_add(struct gbuilder *b, uint64_t h, uint64_t len, uint32_t sym, uint32_t nt)
{
  if ((b->cccount + 1) * 2 > b->ccmask + 1) {
    size_t oldcap = b->ccmask + 1;
    struct ccent *old = b->cc;
    b->cc = calloc(oldcap * 2, sizeof *b->cc);
    if (!b->cc) {
      b->cc = old;
      return b->err = SONDE_E_NOMEM;
    }
    b->ccmask = oldcap * 2 - 1;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].len)
        b->cc[cc_slot(b, old[i].hash, old[i].len)] = old[i];
    free(old);
  }
  size_t i = cc_slot(b, h, len);
  if (!b->cc[i].len)
    b->cccount++;
  b->cc[i] = (struct ccent){h, len, sym, nt};
  return 0;
}

/* Does (sym, nt) expand to exactly w[0..n)? Walks the live rule bodies. */
static int expands_to(struct gbuilder *b, uint32_t sym, uint32_t nt, const uint32_t *w, size_t n)
{
  if (!nt)
    return n == 1 && w[0] == sym;
  size_t sp = 0, at = 0;
  uint32_t g = b->r[sym].guard;
  if (b->vcap < 64) {
    uint32_t *nv = realloc(b->vstack, 64 * 2 * sizeof *nv);
    if (!nv)
      return 0;
    b->vstack = nv;
    b->vcap = 64;
  }
  b->vstack[0] = N[g].next;
  b->vstack[1] = count_of(b, N[g].next);
  sp = 1;
  while (sp) {
    uint32_t x = b->vstack[2 * (sp - 1)];
    if (is_guard(b, x)) { /* end of a body: back to the element that used it */
      sp--;
      if (!sp)
        break;
      uint32_t *top = &b->vstack[2 * (sp - 1)];
      if (--top[1] == 0) {
        top[0] = N[top[0]].next;
        top[1] = is_guard(b, top[0]) ? 0 : count_of(b, top[0]);
      }
      continue;
    }
    if (!is_nt(b, x)) {
      uint32_t k = count_of(b, x);
      if (at + k > n)
        return 0;
      for (uint32_t j = 0; j < k; j++)
        if (w[at + j] != N[x].sym)
          return 0;
      at += k;
      uint32_t nx = N[x].next;
      b->vstack[2 * (sp - 1)] = nx;
      b->vstack[2 * (sp - 1) + 1] = is_guard(b, nx) ? 0 : count_of(b, nx);
      continue;
    }
    if (sp == b->vcap) {
      uint32_t *nv = realloc(b->vstack, b->vcap * 4 * sizeof *nv);
      if (!nv)
        return 0;
      b->vstack = nv;
      b->vcap *= 2;
    }
    uint32_t first = N[b->r[N[x].sym].guard].next;
    b->vstack[2 * sp] = first;
    b->vstack[2 * sp + 1] = count_of(b, first);
    sp++;
  }
  return at == n;
}

static void open_cycle(struct gbuilder *b)
{
  b->C = rule_new(b);
  if (b->C != NIL)
    b->r[b->C].flags |= R_OPEN;
}

/* The buffered cycle goes through ReSequitur after all (first sighting, or
 * too long to buffer). */
static void spill_raw(struct gbuilder *b)
{
  if (b->C == NIL)
    open_cycle(b);
  append_syms(b, b->C, b->raw, b->rawn);
  b->rawn = 0;
}

static void end_cycle(struct gbuilder *b)
{
  if (b->C != NIL) { /* a long cycle compressed as it came: not cached */
    close_cycle(b, NULL, NULL);
    flush_pending(b);
    return;
  }
  if (!b->rawn)
    return;
  uint64_t h = b->rawhash, len = b->rawn;
  size_t i = cc_slot(b, h, len);
  if (b->cc[i].len && expands_to(b, b->cc[i].sym, b->cc[i].nt, b->raw, b->rawn)) {
    append(b, b->S, b->cc[i].sym, b->cc[i].nt);
    flush_pending(b);
    b->rawn = 0;
    return;
  }
  spill_raw(b);
  uint32_t sym = 0, nt = 0;
  close_cycle(b, &sym, &nt);
  flush_pending(b);
  if (!b->err)
    cc_add(b, h, len, sym, nt);
}

/* ---- public (internal) entry points --------------------------------------- */

struct gbuilder *gb_new(enum sonde_grammar_algo algo)
{
  struct gbuilder *b = calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->algo = algo;
  b->re = algo != SONDE_GRAMMAR_SEQUITUR;
  b->nfree = b->npend = b->rfree = b->rpend = NIL;
  b->C = NIL;
  b->htmask = 1023;
  b->ht = calloc(b->htmask + 1, sizeof *b->ht);
  b->singlemask = 63;
  b->single = calloc(b->singlemask + 1, sizeof *b->single);
  b->cache_on = true;
  b->skip_on = true;
  b->ccmask = 255;
  b->cc = calloc(b->ccmask + 1, sizeof *b->cc);
  if (!b->ht || !b->single || !b->cc) {
    gb_free(b);
    return NULL;
  }
  b->S = rule_new(b);
  if (b->S == NIL) {
    gb_free(b);
    return NULL;
  }
  b->r[b->S].flags |= R_OPEN;
  return b;
}

void gb_free(struct gbuilder *b)
{
  if (!b)
    return;
  free(b->n);
  free(b->r);
  free(b->ht);
  free(b->single);
  free(b->cc);
  free(b->raw);
  free(b->vstack);
  free(b);
}

void gb_set_cache(struct gbuilder *b, bool on) { b->cache_on = on; }

void gb_set_repeat_skip(struct gbuilder *b, bool on) { b->skip_on = on; }

uint64_t gb_skipped(const struct gbuilder *b) { return b->skipped; }

void gb_set_lh(struct gbuilder *b, uint32_t lh)
{
  b->has_lh = true;
  b->lh = lh;
}

/* ---- debug check mode: the invariants on the live grammar ------------------ */

struct ldg {
  uint64_t a, c;  /* (sym << 32 | cnt key) of both nodes */
  uint32_t rule, pos;
};

static int cmp_ldg(const void *x, const void *y)
{
  const struct ldg *p = x, *q = y;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  if (p->c != q->c)
    return p->c < q->c ? -1 : 1;
  if (p->rule != q->rule)
    return p->rule < q->rule ? -1 : 1;
  return p->pos < q->pos ? -1 : p->pos > q->pos;
}

static inline uint64_t node_key(const struct gbuilder *b, uint32_t x)
{
  return (uint64_t)N[x].sym << 32 | (N[x].cnt & CNT_KEY);
}

/* Digram uniqueness (every digram once, overlapping aaa aside, and indexed),
 * rule utility (references >= 2 but for S, open and pinned rules) and the
 * reference counts, over every body. Sets b->msg and returns -1 on the first
 * violation. O(|G| log |G|): a debug aid, not for production runs. */
static int gb_check_now(struct gbuilder *b)
{
  size_t cap = 1024, nd = 0;
  struct ldg *d = malloc(cap * sizeof *d);
  uint64_t *refs = calloc(b->rused ? b->rused : 1, sizeof *refs);
  int rc = 0;
  if (!d || !refs) {
    free(d);
    free(refs);
    return 0; /* no memory for the check: skip it */
  }
  for (uint32_t r = 0; r < b->rused; r++) {
    if (!(b->r[r].flags & R_ALIVE))
      continue;
    uint32_t g = b->r[r].guard, pos = 0;
    for (uint32_t x = N[g].next; !is_guard(b, x); x = N[x].next, pos++) {
      if (is_nt(b, x))
        refs[N[x].sym] += count_of(b, x);
      if (is_guard(b, N[x].next))
        continue;
      if (nd == cap) {
        struct ldg *nn = realloc(d, 2 * cap * sizeof *d);
        if (!nn)
          goto out;
        d = nn;
        cap *= 2;
      }
      d[nd++] = (struct ldg){node_key(b, x), node_key(b, N[x].next), r, pos};
      if ((N[x].cnt & CNT_IDX) && SLOT_NODE(b->ht[dg_find(b, x)]) != x) {
        snprintf(b->msg, sizeof b->msg, "rule %u position %u: stale index flag", r, pos);
        rc = -1;
        goto out;
      }
    }
  }
  qsort(d, nd, sizeof *d, cmp_ldg);
  for (size_t i = 0; i < nd; i++) {
    bool first = i == 0 || d[i].a != d[i - 1].a || d[i].c != d[i - 1].c;
    if (!first && !(!b->re && d[i].rule == d[i - 1].rule && d[i].pos == d[i - 1].pos + 1)) {
      snprintf(b->msg, sizeof b->msg,
               "digram uniqueness: rule %u position %u repeats rule %u position %u", d[i].rule,
               d[i].pos, d[i - 1].rule, d[i - 1].pos);
      rc = -1;
      goto out;
    }
  }
  for (uint32_t r = 0; r < b->rused; r++) {
    if (!(b->r[r].flags & R_ALIVE))
      continue;
    if (refs[r] != b->r[r].refs) {
      snprintf(b->msg, sizeof b->msg, "rule %u: %llu references counted, %llu found", r,
               (unsigned long long)b->r[r].refs, (unsigned long long)refs[r]);
      rc = -1;
      goto out;
    }
    if (r != b->S && !(b->r[r].flags & (R_PINNED | R_OPEN)) && refs[r] < 2) {
      snprintf(b->msg, sizeof b->msg, "rule utility: rule %u used %llu time(s)", r,
               (unsigned long long)refs[r]);
      rc = -1;
      goto out;
    }
  }
out:
  free(d);
  free(refs);
  return rc;
}

void gb_set_check(struct gbuilder *b, uint64_t every)
{
  b->check_every = every;
  b->check_left = every;
}

/* After each appended symbol in debug check mode. */
static inline int gb_check_step(struct gbuilder *b, uint64_t done)
{
  if (!b->check_every || --b->check_left)
    return 0;
  b->check_left = b->check_every;
  if (gb_check_now(b)) {
    char why[160];
    memcpy(why, b->msg, sizeof why);
    snprintf(b->msg, sizeof b->msg, "after symbol %llu: %.120s",
             (unsigned long long)done, why);
    b->err = SONDE_E_FORMAT;
    return -1;
  }
  return 0;
}

const char *gb_error(const struct gbuilder *b) { return b->msg; }

/* The end of the cycle that syms[i] is in: the next loop header after i, or n. */
static size_t cycle_span(const struct gbuilder *b, const uint32_t *syms, size_t i, size_t n)
{
  size_t j = i + 1;
  while (j < n && !(b->has_lh && syms[j] == b->lh))
    j++;
  return j;
}

int gb_feed(struct gbuilder *b, const uint32_t *syms, size_t n)
{
  if (b->err)
    return b->err;
  if (b->algo != SONDE_GRAMMAR_CYCLITUR && !b->check_every) {
    append_syms(b, b->S, syms, n);
    if (b->err)
      return b->err;
  } else if (b->algo != SONDE_GRAMMAR_CYCLITUR) {
    for (size_t i = 0; i < n; i++) {
      append(b, b->S, syms[i], 0);
      flush_pending(b);
      if (b->err || gb_check_step(b, b->input_len + i + 1))
        return b->err;
    }
  } else if (!b->cache_on) { /* Fig. 3 literally: every cycle through ReSequitur */
    for (size_t i = 0; i < n;) {
      if (b->C != NIL && syms[i] == b->lh && b->has_lh) {
        close_cycle(b, NULL, NULL);
        flush_pending(b);
      }
      if (b->C == NIL)
        open_cycle(b);
      if (b->err)
        return b->err;
      size_t j = cycle_span(b, syms, i, n);
      append_syms(b, b->C, syms + i, j - i);
      i = j;
      if (b->err)
        return b->err;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      uint32_t s = syms[i];
      if (s == b->lh && b->has_lh && (b->rawn || b->C != NIL))
        end_cycle(b);
      if (b->C != NIL) { /* a long cycle: the rest of it at once, with the skips */
        size_t j = cycle_span(b, syms, i, n);
        append_syms(b, b->C, syms + i, j - i);
        i = j - 1;
      } else { /* buffer the cycle up to its end or the buffer's limit at once */
        size_t j = cycle_span(b, syms, i, n), k = j - i;
        if (k > CACHE_MAX_CYCLE + 1 - b->rawn)
          k = CACHE_MAX_CYCLE + 1 - b->rawn;
        if (b->rawn + k > b->rawcap) {
          size_t cap = b->rawcap ? b->rawcap : 1024;
          while (cap < b->rawn + k)
            cap *= 2;
          uint32_t *nr = realloc(b->raw, cap * sizeof *nr);
          if (!nr)
            return b->err = SONDE_E_NOMEM;
          b->raw = nr;
          b->rawcap = cap;
        }
        if (!b->rawn)
          b->rawhash = 0xcbf29ce484222325ull;
        uint64_t hash = b->rawhash;
        uint32_t *dst = b->raw + b->rawn;
        for (size_t q = 0; q < k; q++) {
          dst[q] = syms[i + q];
          hash = raw_mix(hash, syms[i + q]);
        }
        b->rawhash = hash;
        b->rawn += k;
        i += k - 1;
        if (b->rawn > CACHE_MAX_CYCLE)
          spill_raw(b);
      }
      if (b->err)
        return b->err;
    }
  }
  b->input_len += n;
  return b->err;
}

int gb_freeze(struct gbuilder *b, struct sonde_grammar *gr)
{
  if (b->algo == SONDE_GRAMMAR_CYCLITUR) {
    if (b->cache_on)
      end_cycle(b);
    else if (b->C != NIL) {
      close_cycle(b, NULL, NULL);
      flush_pending(b);
    }
  }
  if (b->err)
    return b->err;
  if (b->limit_hit) {
    snprintf(b->msg, sizeof b->msg, "a repetition exponent exceeds 2^30-1");
    return b->err = SONDE_E_LIMIT;
  }
  /* Number the rules breadth-first from S. */
  uint32_t *id = malloc((size_t)(b->rused ? b->rused : 1) * sizeof *id);
  uint32_t *order = malloc((size_t)(b->rused ? b->rused : 1) * sizeof *order);
  if (!id || !order) {
    free(id);
    free(order);
    return b->err = SONDE_E_NOMEM;
  }
  for (uint32_t i = 0; i < b->rused; i++)
    id[i] = NIL;
  size_t nr = 0, nelem = 0;
  id[b->S] = 0;
  order[nr++] = b->S;
  for (size_t k = 0; k < nr; k++) {
    uint32_t g = b->r[order[k]].guard;
    for (uint32_t x = N[g].next; x != g; x = N[x].next) {
      nelem++;
      if (is_nt(b, x) && id[N[x].sym] == NIL) {
        id[N[x].sym] = (uint32_t)nr;
        order[nr++] = N[x].sym;
      }
    }
  }
  gr->nrules = nr;
  gr->off = malloc((nr + 1) * sizeof *gr->off);
  gr->elems = malloc((nelem ? nelem : 1) * sizeof *gr->elems);
  gr->is_cycle = calloc(nr, 1);
  if (!gr->off || !gr->elems || !gr->is_cycle) {
    free(id);
    free(order);
    return b->err = SONDE_E_NOMEM;
  }
  size_t e = 0;
  for (size_t k = 0; k < nr; k++) {
    uint32_t rs = order[k], g = b->r[rs].guard;
    gr->off[k] = e;
    gr->is_cycle[k] = (b->r[rs].flags & R_PINNED) != 0;
    for (uint32_t x = N[g].next; x != g; x = N[x].next) {
      struct sonde_grammar_elem *el = &gr->elems[e++];
      el->is_rule = is_nt(b, x);
      el->sym = el->is_rule ? id[N[x].sym] : N[x].sym;
      el->count = count_of(b, x);
    }
  }
  gr->off[nr] = e;
  gr->input_len = b->input_len;
  free(id);
  free(order);
  return 0;
}
