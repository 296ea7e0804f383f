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
  for (int iter = 0; iter < 600; iter++) {
    size_t n = rnd() % 2000;
    uint32_t alpha = 1 + rnd() % (iter % 3 == 0 ? 2 : iter % 3 == 1 ? 4 : 40);
    int mode = iter % 4;
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
    for (int a = 0; a < 3; a++) {
      struct sonde_grammar *g = build((enum sonde_grammar_algo)a, w, n, (int)(rnd() % (alpha + 1)));
      if (!verify(g, w, n)) {
        if (bad++ < 5)
          fprintf(stderr, "iter %d algo %d n %zu alpha %u\n", iter, a, n, alpha);
      }
      sonde_grammar_free(g);
    }
  }
  CHECK_EQ_I(bad, 0);
}

int main(void)
{
  RUN(test_paper_sequitur);
  RUN(test_paper_cyclitur);
  RUN(test_random_properties);
  return check_summary();
}
