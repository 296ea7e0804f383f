/* Grammar compression: the worked example of reference 001 (section 3), the
 * paper's properties (section 3.2) and losslessness on random and structured
 * inputs, for Sequitur, ReSequitur and Cyclitur. */
#include "check.h"
#include "sonde/grammar.h"

struct collect {
  uint32_t *v;
  size_t n, cap;
};

static int collect_emit(void *ctx, const uint32_t *s, size_t n)
{
  struct collect *c = ctx;
  if (c->n + n > c->cap) {
    c->cap = (c->n + n) * 2;
    c->v = realloc(c->v, c->cap * sizeof *c->v);
  }
  memcpy(c->v + c->n, s, n * sizeof *s);
  c->n += n;
  return 0;
}

static int name_letters(void *ctx, uint32_t sym, char *buf, size_t len)
{
  (void)ctx;
  snprintf(buf, len, "%c", (char)sym);
  return 1;
}

static struct sonde_grammar *build(enum sonde_grammar_algo a, const uint32_t *w, size_t n,
                                   int lh)
{
  struct sonde_grammar *g = sonde_grammar_new(a);
  if (lh >= 0)
    sonde_grammar_set_loop_header(g, (uint32_t)lh);
  sonde_grammar_feed(g, w, n);
  if (sonde_grammar_finish(g)) {
    fprintf(stderr, "finish: %s\n", sonde_grammar_error_detail(g));
  }
  return g;
}

static char *print_str(struct sonde_grammar *g)
{
  static char buf[4096];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  sonde_grammar_print(g, f, name_letters, NULL);
  fclose(f);
  return buf;
}

/* Expansion equals input, and the properties hold. */
static int verify(struct sonde_grammar *g, const uint32_t *w, size_t n)
{
  struct collect c = {0};
  int ok = 1;
  if (sonde_grammar_expand(g, collect_emit, &c) || c.n != n ||
      (n && memcmp(c.v, w, n * sizeof *w))) {
    fprintf(stderr, "expansion differs (%zu vs %zu)\n", c.n, n);
    ok = 0;
  }
  if (sonde_grammar_check_properties(g)) {
    fprintf(stderr, "property: %s\n", sonde_grammar_error_detail(g));
    ok = 0;
  }
  if (sonde_grammar_rule_length(g, 0) != n)
    ok = 0;
  free(c.v);
  return ok;
}

static void str2w(const char *s, uint32_t *w, size_t *n)
{
  *n = strlen(s);
  for (size_t i = 0; i < *n; i++)
    w[i] = (uint8_t)s[i];
}

static void test_paper_sequitur(void)
{
  uint32_t w[64];
  size_t n;
  str2w("cabcabcabcabcad", w, &n);
  CHECK_EQ_U(n, 15);
  struct sonde_grammar *g = build(SONDE_GRAMMAR_SEQUITUR, w, n, -1);
  CHECK_EQ_STR(print_str(g), "S -> A A B d\nA -> C C\nB -> c a\nC -> B b\n");
  CHECK_EQ_U(sonde_grammar_size(g), 14);
  CHECK(verify(g, w, n));
  sonde_grammar_free(g);
}

static void test_paper_cyclitur(void)
{
  uint32_t w[64];
  size_t n;
  str2w("cabcabcabcabcad", w, &n);
  struct sonde_grammar *g = build(SONDE_GRAMMAR_CYCLITUR, w, n, 'a');
  CHECK_EQ_STR(print_str(g), "S -> c A^4 B\nA -> a b c  # cycle\nB -> a d  # cycle\n");
  CHECK_EQ_U(sonde_grammar_size(g), 11);
  CHECK(sonde_grammar_comp(g) > 0.7333 && sonde_grammar_comp(g) < 0.7334);
  CHECK(verify(g, w, n));
  sonde_grammar_free(g);
  /* the same without the cycle cache (every cycle through ReSequitur) */
  g = sonde_grammar_new(SONDE_GRAMMAR_CYCLITUR);
  CHECK_EQ_I(sonde_grammar_set_cycle_cache(g, false), 0);
  sonde_grammar_set_loop_header(g, 'a');
  sonde_grammar_feed(g, w, n);
  REQUIRE(sonde_grammar_finish(g) == 0);
  CHECK_EQ_STR(print_str(g), "S -> c A^4 B\nA -> a b c  # cycle\nB -> a d  # cycle\n");
  CHECK(verify(g, w, n));
  sonde_grammar_free(g);
}

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (uint32_t)(rs >> 11);
}

static void test_random_properties(void)
{
  static uint32_t w[5000];
  int bad = 0;
  for (int iter = 0; iter < 300; iter++) {
    size_t n = rnd() % 2000;
    uint32_t alpha = 1 + rnd() % (iter % 3 == 0 ? 2 : iter % 3 == 1 ? 4 : 40);
    int mode = iter % 5;
    for (size_t i = 0; i < n; i++) {
      if (mode == 0 || i < 8)
        w[i] = rnd() % alpha;
      else if (mode == 1) /* copy from earlier: structured repeats */
        w[i] = (rnd() % 8) ? w[i - 1 - rnd() % 7] : rnd() % alpha;
      else if (mode == 2) /* cyclic with variation */
        w[i] = (rnd() % 50) ? (uint32_t)(i % 13 < 5 ? i % 13 : 20 + i % 3) : rnd() % alpha;
      else
        w[i] = (rnd() % 3) ? w[i - 1] : rnd() % alpha; /* runs */
    }
    for (int a = 0; a < 4; a++) {
      struct sonde_grammar *g;
      uint32_t lh = rnd() % (alpha + 1);
      if (a < 3) {
        g = build((enum sonde_grammar_algo)a, w, n, (int)lh);
      } else { /* Cyclitur without the cycle cache: Fig. 3 literally */
        g = sonde_grammar_new(SONDE_GRAMMAR_CYCLITUR);
        sonde_grammar_set_cycle_cache(g, false);
        sonde_grammar_set_loop_header(g, lh);
        sonde_grammar_feed(g, w, n);
        sonde_grammar_finish(g);
      }
      if (!verify(g, w, n)) {
        if (bad++ < 5)
          fprintf(stderr, "iter %d algo %d n %zu alpha %u\n", iter, a, n, alpha);
      }
      sonde_grammar_free(g);
    }
  }
  CHECK_EQ_I(bad, 0);
}

/* Binary file: round trip, and every corruption is rejected with an offset. */
static void test_binary_roundtrip(void)
{
  uint32_t w[64];
  size_t n;
  str2w("cabcabcabcabcad", w, &n);
  struct sonde_grammar *g = build(SONDE_GRAMMAR_CYCLITUR, w, n, 'a');
  uint8_t *b;
  size_t len;
  REQUIRE(sonde_grammar_serialize(g, &b, &len) == 0);
  CHECK_EQ_MEM(b, "SONDEGRM", 8);
  /* header 32; S: length 1 + c (2-byte varint 198, count 1) + A^4 (2) + B (2) = 8;
   * A: 1 + 3 terminals of 3 bytes = 10; B: 1 + 2 * 3 = 7; CRC-32 4 */
  CHECK_EQ_U(len, 32 + 8 + 10 + 7 + 4);
  struct sonde_grammar *h = NULL;
  struct sonde_diag d;
  REQUIRE(sonde_grammar_parse(b, len, "t.sgr", &h, &d) == 0);
  CHECK_EQ_U(sonde_grammar_size(h), 11);
  CHECK_EQ_U(sonde_grammar_input_length(h), 15);
  CHECK(sonde_grammar_rule_is_cycle(h, 1));
  CHECK_EQ_U(sonde_grammar_loop_header(h), 'a');
  CHECK_EQ_STR(print_str(h), print_str(g));
  CHECK(verify(h, w, n));
  sonde_grammar_free(h);
  /* truncations */
  for (size_t cut = 0; cut < len; cut++) {
    h = NULL;
    CHECK(sonde_grammar_parse(b, cut, "t.sgr", &h, &d) < 0);
    CHECK(h == NULL);
  }
  /* every single-bit flip is caught (CRC-32 or validation) */
  int caught = 0;
  for (size_t i = 0; i < len * 8; i++) {
    b[i / 8] ^= (uint8_t)(1u << (i % 8));
    h = NULL;
    if (sonde_grammar_parse(b, len, "t.sgr", &h, &d) < 0)
      caught++;
    sonde_grammar_free(h);
    b[i / 8] ^= (uint8_t)(1u << (i % 8));
  }
  CHECK_EQ_U(caught, len * 8);
  b[40] ^= 1;
  sonde_grammar_parse(b, len, "t.sgr", &h, &d);
  CHECK_EQ_STR(d.msg, "t.sgr: offset 57: checksum mismatch (file corrupt)");
  free(b);
  sonde_grammar_free(g);
}

static void test_edge_inputs(void)
{
  /* empty: S -> (nothing), Size 1 */
  struct sonde_grammar *g = build(SONDE_GRAMMAR_CYCLITUR, NULL, 0, 'a');
  CHECK_EQ_U(sonde_grammar_size(g), 1);
  CHECK_EQ_U(sonde_grammar_rule_count(g), 1);
  CHECK(sonde_grammar_comp(g) == 0.0);
  CHECK(verify(g, NULL, 0));
  sonde_grammar_free(g);
  /* one symbol */
  uint32_t one = 7;
  for (int a = 0; a < 3; a++) {
    g = build((enum sonde_grammar_algo)a, &one, 1, 7);
    CHECK_EQ_U(sonde_grammar_size(g), 2);
    CHECK(verify(g, &one, 1));
    sonde_grammar_free(g);
  }
  /* a long run: ReSequitur keeps it as one element a^n */
  static uint32_t run[100000];
  for (size_t i = 0; i < 100000; i++)
    run[i] = 0xdeadbeef;
  g = build(SONDE_GRAMMAR_RESEQUITUR, run, 100000, -1);
  CHECK_EQ_STR(print_str(g), "S -> \xef^100000\n");
  CHECK_EQ_U(sonde_grammar_size(g), 2);
  CHECK(verify(g, run, 100000));
  sonde_grammar_free(g);
  g = build(SONDE_GRAMMAR_SEQUITUR, run, 100000, -1);
  CHECK(verify(g, run, 100000));
  CHECK(sonde_grammar_size(g) < 60); /* log-depth doubling rules */
  sonde_grammar_free(g);
  /* loop header absent: one cycle, the whole input */
  uint32_t w[] = {1, 2, 3, 1, 2, 3};
  g = build(SONDE_GRAMMAR_CYCLITUR, w, 6, 99);
  struct sonde_grammar_cycle *c;
  size_t nc;
  uint64_t tot;
  REQUIRE(sonde_grammar_cycles(g, &c, &nc, &tot) == 0);
  CHECK_EQ_U(tot, 1);
  CHECK_EQ_U(nc, 1);
  CHECK_EQ_U(c[0].length, 6);
  free(c);
  CHECK(verify(g, w, 6));
  sonde_grammar_free(g);
}

/* Cycles longer than the cache's buffer are compressed as they come. */
static void test_long_cycles(void)
{
  size_t len = 70001, n = 3 * len + 5;
  uint32_t *w = malloc(n * sizeof *w);
  for (size_t c = 0; c < 3; c++) {
    w[c * len] = 1;
    for (size_t i = 1; i < len; i++)
      w[c * len + i] = 2 + (uint32_t)((i * 7) % 1000) + (c == 2 && i == 500);
  }
  for (size_t i = 3 * len; i < n; i++)
    w[i] = 1;
  struct sonde_grammar *g = build(SONDE_GRAMMAR_CYCLITUR, w, n, 1);
  CHECK(verify(g, w, n));
  struct sonde_grammar_cycle *c;
  size_t nc;
  uint64_t tot;
  REQUIRE(sonde_grammar_cycles(g, &c, &nc, &tot) == 0);
  CHECK_EQ_U(tot, 8);  /* three long cycles, then five cycles "1" */
  CHECK_EQ_U(nc, 3);   /* cycles 0 and 1 are equal, cycle 2 differs at one symbol */
  CHECK_EQ_U(c[0].count, 5);
  CHECK_EQ_U(c[1].count, 2);
  CHECK_EQ_U(c[1].length, 70001);
  free(c);
  sonde_grammar_free(g);
  free(w);
}

/* Huge alphabet: 100 000 distinct 32-bit symbols, then a repeat of them. */
static void test_huge_alphabet(void)
{
  size_t n = 200000;
  uint32_t *w = malloc(n * sizeof *w);
  for (size_t i = 0; i < n / 2; i++)
    w[i] = w[i + n / 2] = (uint32_t)(i * 2654435761u) ^ 0x80000001u;
  for (int a = 0; a < 3; a++) {
    struct sonde_grammar *g = build((enum sonde_grammar_algo)a, w, n, (int)(w[1000] & 0x7fffffff));
    if (a == SONDE_GRAMMAR_CYCLITUR) {
      sonde_grammar_free(g);
      g = sonde_grammar_new(SONDE_GRAMMAR_CYCLITUR);
      sonde_grammar_set_loop_header(g, w[1000]);
      sonde_grammar_feed(g, w, n);
      REQUIRE(sonde_grammar_finish(g) == 0);
    }
    CHECK(verify(g, w, n));
    CHECK_EQ_U(sonde_grammar_distinct_terminals(g), n / 2);
    sonde_grammar_free(g);
  }
  free(w);
}

/* Cycle analysis of the paper's example: cycles c, abc x4, ad. */
static int pos_collect(void *ctx, uint64_t index, uint64_t pos, uint32_t sym, bool is_rule)
{
  char *s = ctx;
  char b[64];
  snprintf(b, sizeof b, "%llu@%llu:%s%u ", (unsigned long long)index, (unsigned long long)pos,
           is_rule ? "R" : "t", sym);
  strcat(s, b);
  return 0;
}

static void test_cycles_paper(void)
{
  uint32_t w[64];
  size_t n;
  str2w("cabcabcabcabcad", w, &n);
  struct sonde_grammar *g = build(SONDE_GRAMMAR_CYCLITUR, w, n, 'a');
  struct sonde_grammar_cycle *c;
  size_t nc;
  uint64_t tot;
  REQUIRE(sonde_grammar_cycles(g, &c, &nc, &tot) == 0);
  CHECK_EQ_U(tot, 6);
  REQUIRE(nc == 3);
  CHECK_EQ_U(c[0].count, 4); /* abc */
  CHECK_EQ_U(c[0].length, 3);
  CHECK_EQ_U(c[0].first, 1);
  CHECK_EQ_U(c[0].first_pos, 1);
  CHECK_EQ_U(c[0].first_sym, 'a');
  CHECK_EQ_U(c[1].count, 1); /* c */
  CHECK(!c[1].is_rule);
  CHECK_EQ_U(c[2].length, 2); /* ad */
  CHECK_EQ_U(c[2].first_pos, 13);
  char s[512] = "";
  sonde_grammar_walk_cycles(g, pos_collect, s);
  CHECK_EQ_STR(s, "0@0:t99 1@1:R1 2@4:R1 3@7:R1 4@10:R1 5@13:R2 ");
  uint32_t *cls;
  uint64_t t2;
  REQUIRE(sonde_grammar_cycle_classes(g, c, nc, &cls, &t2) == 0);
  CHECK_EQ_U(t2, 6);
  CHECK(cls[0] == 1 && cls[1] == 0 && cls[4] == 0 && cls[5] == 2);
  /* the same cycles found in another trace hash the same */
  uint32_t w2[64];
  size_t n2;
  str2w("abcadabcx", w2, &n2);
  struct sonde_grammar *g2 = build(SONDE_GRAMMAR_CYCLITUR, w2, n2, 'a');
  struct sonde_grammar_cycle *c2;
  size_t nc2;
  REQUIRE(sonde_grammar_cycles(g2, &c2, &nc2, &t2) == 0);
  CHECK_EQ_U(nc2, 3);
  int common = 0;
  for (size_t i = 0; i < nc; i++)
    for (size_t j = 0; j < nc2; j++)
      common += c[i].hash == c2[j].hash && c[i].length == c2[j].length;
  CHECK_EQ_I(common, 2); /* abc and ad; c and abcx are not shared */
  /* SVG output is well-formed enough to start and end right */
  char *buf = NULL;
  size_t blen = 0;
  FILE *f = open_memstream(&buf, &blen);
  const char *lab[] = {"abc", "c", "ad"};
  sonde_grammar_svg_pie(f, c, nc, tot, lab, 12, "t<&>");
  fclose(f);
  CHECK(strstr(buf, "<svg ") && strstr(buf, "</svg>") && strstr(buf, "t&lt;&amp;&gt;"));
  CHECK(strstr(buf, "abc — 4 (66.67%)") != NULL);
  free(buf);
  f = open_memstream(&buf, &blen);
  sonde_grammar_svg_timeline(f, c, nc, cls, t2, lab, 20, 2, "x");
  fclose(f);
  CHECK(strstr(buf, "#d62728") && strstr(buf, "</svg>"));
  free(buf);
  free(cls);
  free(c);
  free(c2);
  sonde_grammar_free(g);
  sonde_grammar_free(g2);
}

/* A long cyclic trace: ReSequitur-style exponents make Cyclitur smaller. */
static void test_cyclic_improvement(void)
{
  size_t n = 0, cap = 400000;
  uint32_t *w = malloc(cap * sizeof *w);
  for (int it = 0; n < cap - 200; it++) {
    w[n++] = 0x1000; /* loop header */
    for (uint32_t k = 0; k < 20; k++)
      w[n++] = 0x1002 + 2 * k;
    int reps = 3 + (it % 7 == 0) * 5; /* a busy-wait loop with a varying count */
    for (int r = 0; r < reps; r++) {
      w[n++] = 0x2000;
      w[n++] = 0x2002;
    }
    if (it % 5 == 0)
      for (uint32_t k = 0; k < 30; k++)
        w[n++] = 0x3000 + 2 * k;
  }
  struct sonde_grammar *s = build(SONDE_GRAMMAR_SEQUITUR, w, n, -1);
  struct sonde_grammar *c = build(SONDE_GRAMMAR_CYCLITUR, w, n, 0x1000);
  CHECK(verify(s, w, n));
  CHECK(verify(c, w, n));
  CHECK(sonde_grammar_size(c) * 100 < sonde_grammar_size(s) * 88);
  sonde_grammar_free(s);
  sonde_grammar_free(c);
  free(w);
}

/* The debug check mode (sonde_grammar_set_check(g, 1)): digram uniqueness,
 * rule utility and the reference counts hold after every single symbol, on
 * random, run-heavy and loop-nest inputs (the runs of a repeated loop body are
 * where the overlapping digrams aaa occur), and the mode changes nothing. */
static void test_check_every_step(void)
{
  static uint32_t w[3000];
  int bad = 0;
  for (int iter = 0; iter < 120; iter++) {
    size_t n = 200 + rnd() % 2800;
    uint32_t alpha = 2 + rnd() % 12;
    int mode = iter % 3;
    for (size_t i = 0; i < n; i++) {
      if (mode == 0 || i < 4)
        w[i] = rnd() % alpha;
      else if (mode == 1)
        w[i] = (rnd() % 3) ? w[i - 1] : rnd() % alpha; /* runs */
      else /* a loop nest: inner body repeated 1-5 times per outer pass */
        w[i] = (uint32_t)(i % 17 < 3 ? i % 17 : 10 + (i % 17) % (2 + (i / 17) % 5));
    }
    for (int a = 0; a < 2; a++) {
      struct sonde_grammar *g = sonde_grammar_new((enum sonde_grammar_algo)a);
      struct sonde_grammar *plain = build((enum sonde_grammar_algo)a, w, n, -1);
      CHECK_EQ_I(sonde_grammar_set_check(g, 1), 0);
      int rc = sonde_grammar_feed(g, w, n);
      if (rc || sonde_grammar_finish(g) || !verify(g, w, n) ||
          sonde_grammar_size(g) != sonde_grammar_size(plain)) {
        if (bad++ < 5)
          fprintf(stderr, "iter %d algo %d n %zu: %s\n", iter, a, n,
                  sonde_grammar_error_detail(g));
      }
      sonde_grammar_free(g);
      sonde_grammar_free(plain);
    }
  }
  CHECK_EQ_I(bad, 0);
  /* not for Cyclitur (its open cycle and cache keep other invariants) */
  struct sonde_grammar *c = sonde_grammar_new(SONDE_GRAMMAR_CYCLITUR);
  CHECK_EQ_I(sonde_grammar_set_check(c, 1), SONDE_E_ARG);
  sonde_grammar_free(c);
}

/* Two grammars with the same rules, bodies and numbering. */
static int same_grammar(const struct sonde_grammar *a, const struct sonde_grammar *b)
{
  size_t n = sonde_grammar_rule_count(a);
  if (n != sonde_grammar_rule_count(b))
    return 0;
  for (size_t r = 0; r < n; r++) {
    const struct sonde_grammar_elem *x, *y;
    size_t k = sonde_grammar_rule_body(a, r, &x);
    if (k != sonde_grammar_rule_body(b, r, &y))
      return 0;
    for (size_t i = 0; i < k; i++)
      if (x[i].sym != y[i].sym || x[i].count != y[i].count || x[i].is_rule != y[i].is_rule)
        return 0;
  }
  return 1;
}

/* The repeat skip (a repeated flat rule appended at once) gives the grammar
 * of the symbol-by-symbol algorithm, rule for rule, for all three
 * algorithms (Cyclitur: in the cycles its cache has not seen): on random
 * strings, runs, loop nests, phrases drawn from a small dictionary (flat
 * rules repeated in changing contexts, the case the skip is for), fed whole
 * and in small pieces (a repeat cut by the end of a feed goes symbol by
 * symbol), and on the real traces below. */
static int repeat_skip_same_algo(enum sonde_grammar_algo algo, const uint32_t *w, size_t n,
                                 size_t piece, uint32_t lh)
{
  struct sonde_grammar *g[2];
  for (int on = 0; on < 2; on++) {
    g[on] = sonde_grammar_new(algo);
    CHECK_EQ_I(sonde_grammar_set_repeat_skip(g[on], on), 0);
    if (algo == SONDE_GRAMMAR_CYCLITUR)
      sonde_grammar_set_loop_header(g[on], lh);
    for (size_t i = 0; i < n; i += piece)
      sonde_grammar_feed(g[on], w + i, n - i < piece ? n - i : piece);
    sonde_grammar_finish(g[on]);
  }
  int ok = same_grammar(g[0], g[1]) && verify(g[1], w, n);
  if (!ok)
    fprintf(stderr, "%s: grammars differ\n", algo == SONDE_GRAMMAR_SEQUITUR     ? "sequitur"
                                             : algo == SONDE_GRAMMAR_RESEQUITUR ? "resequitur"
                                                                                : "cyclitur");
  sonde_grammar_free(g[0]);
  sonde_grammar_free(g[1]);
  return ok;
}

/* All three algorithms; Cyclitur with loop header `lh`. */
static int repeat_skip_same_lh(const uint32_t *w, size_t n, size_t piece, uint32_t lh)
{
  int ok = 1;
  for (int a = 0; a < 3; a++)
    ok &= repeat_skip_same_algo((enum sonde_grammar_algo)a, w, n, piece, lh);
  return ok;
}

static int repeat_skip_same(const uint32_t *w, size_t n, size_t piece)
{
  return repeat_skip_same_lh(w, n, piece, n ? w[n / 3] : 0);
}

static void test_repeat_skip(void)
{
  static uint32_t w[20000];
  int bad = 0;
  for (int iter = 0; iter < 400; iter++) {
    size_t n = 100 + rnd() % 19900;
    uint32_t alpha = 2 + rnd() % 40;
    int mode = iter % 5;
    if (mode == 0) {
      for (size_t i = 0; i < n; i++)
        w[i] = rnd() % alpha;
    } else if (mode == 1) {
      for (size_t i = 0; i < n; i++)
        w[i] = i && rnd() % 3 ? w[i - 1] : rnd() % alpha;
    } else if (mode == 2) { /* loop nest with changing trip counts */
      size_t body = 3 + rnd() % 12;
      for (size_t i = 0; i < n; i++)
        w[i] = (uint32_t)(i % (body + 5) < 3 ? i % (body + 5)
                                               : 10 + (i % (body + 5)) % (2 + (i / 50) % 5));
    } else if (mode == 4) { /* a loop cut by "interrupts" at random points (run_step) */
      size_t body = 4 + rnd() % 40, isr = 3 + rnd() % 8, k = 0;
      size_t i = 0;
      while (i < n) {
        if (rnd() % (body + rnd() % (4 * body)) == 0) { /* an ISR of one of two paths */
          uint32_t path = rnd() % 2;
          for (size_t j = 0; j < isr && i < n; j++)
            w[i++] = 1000 + (uint32_t)j + (path && j == isr / 2 ? 500 : 0);
        } else {
          w[i++] = 100 + (uint32_t)(k++ % body);
        }
      }
    } else { /* phrases of 1-12 symbols from a dictionary of 2-30 */
      uint32_t dict[30][12];
      size_t dlen[30], nd = 2 + rnd() % 29;
      for (size_t d = 0; d < nd; d++) {
        dlen[d] = 1 + rnd() % 12;
        for (size_t k = 0; k < dlen[d]; k++)
          dict[d][k] = rnd() % alpha;
      }
      size_t i = 0;
      while (i < n) {
        size_t d = rnd() % nd;
        for (size_t k = 0; k < dlen[d] && i < n; k++)
          w[i++] = dict[d][k];
      }
    }
    size_t piece = iter % 5 == 4 ? 1 + rnd() % 7 : n;
    if (!repeat_skip_same(w, n, piece) && bad++ < 5)
      fprintf(stderr, "iter %d mode %d n %zu alpha %u piece %zu: grammars differ\n", iter, mode,
              n, alpha, piece);
  }
  CHECK_EQ_I(bad, 0);
  /* not after input */
  struct sonde_grammar *g = sonde_grammar_new(SONDE_GRAMMAR_SEQUITUR);
  uint32_t one = 1;
  sonde_grammar_feed(g, &one, 1);
  CHECK_EQ_I(sonde_grammar_set_repeat_skip(g, false), SONDE_E_STATE);
  sonde_grammar_free(g);
}

/* The same on real traces: the CC2650 FrankenTrace trace, the first
 * 1 M instructions of bench_cpu (tests/grammar/data, the input of
 * tests/cli/grammar_reference.sh) and the first 295,059 of the
 * interrupt-heavy bench_irq (`sonde run --max-cycles 500000 --trace-pc`,
 * stored as its ReSequitur grammar; most of its symbols go through
 * run_step), whole and in pieces (a feed's end cuts repeats and runs). */
static void test_repeat_skip_real(void)
{
  char path[1024];
  struct sonde_grammar_input *in;
  struct sonde_diag d;
  const char *cc = check_testdata("frankentrace-cc2650/blink_if_see.pc_trace.csv.gz");
  REQUIRE(sonde_grammar_input_load(cc, NULL, &in, &d) == 0);
  size_t n;
  const uint32_t *w = sonde_grammar_input_symbols(in, &n);
  CHECK(n == 40901);
  CHECK(repeat_skip_same_lh(w, n, n, 0x319c));
  sonde_grammar_input_free(in);
  /* bench_cpu: the stored grammar's expansion is the input */
  snprintf(path, sizeof path, "%s/tests/grammar/data/bench_cpu_1m.grammar", SONDE_SOURCE_DIR);
  FILE *f = fopen(path, "rb");
  REQUIRE(f != NULL);
  static uint8_t buf[1 << 20];
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  struct sonde_grammar *stored;
  REQUIRE(sonde_grammar_parse(buf, len, path, &stored, NULL) == 0);
  struct collect c = {0};
  REQUIRE(sonde_grammar_expand(stored, collect_emit, &c) == 0);
  CHECK(c.n >= 1000000);
  CHECK(repeat_skip_same_lh(c.v, c.n, c.n, 0x364));
  CHECK(repeat_skip_same_lh(c.v, c.n, 4093, 0x364)); /* and in pieces */
  free(c.v);
  sonde_grammar_free(stored);
  snprintf(path, sizeof path, "%s/tests/grammar/data/bench_irq_295k.grammar", SONDE_SOURCE_DIR);
  f = fopen(path, "rb");
  REQUIRE(f != NULL);
  len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  REQUIRE(sonde_grammar_parse(buf, len, path, &stored, NULL) == 0);
  struct collect ci = {0};
  REQUIRE(sonde_grammar_expand(stored, collect_emit, &ci) == 0);
  CHECK(ci.n == 295059);
  CHECK(repeat_skip_same_lh(ci.v, ci.n, ci.n, 0x364));
  CHECK(repeat_skip_same_lh(ci.v, ci.n, 1021, 0x364));
  /* a loop header that never comes: one cycle longer than the cycle cache
   * buffers, compressed as it arrives (gb_feed's long-cycle path) */
  CHECK(repeat_skip_same_algo(SONDE_GRAMMAR_CYCLITUR, ci.v, ci.n, 7919, 0xfffffffeu));
  free(ci.v);
  sonde_grammar_free(stored);
}

int main(void)
{
  RUN(test_paper_sequitur);
  RUN(test_paper_cyclitur);
  RUN(test_random_properties);
  RUN(test_binary_roundtrip);
  RUN(test_edge_inputs);
  RUN(test_huge_alphabet);
  RUN(test_long_cycles);
  RUN(test_cycles_paper);
  RUN(test_cyclic_improvement);
  RUN(test_check_every_step);
  RUN(test_repeat_skip);
  RUN(test_repeat_skip_real);
  return check_summary();
}
