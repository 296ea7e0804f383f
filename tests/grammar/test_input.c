/* Grammar inputs (docs/grammar.md, "Inputs"): CSV traces (collapse to one
 * symbol per instruction, valid=false rows, ts gaps, malformed rows with file
 * and line), text lists, Sonde PC traces through src/trace, and the real
 * FrankenTrace CC2650 trace from tests/data compressed with all three
 * algorithms (exact figures; the independent recount is in
 * tests/cli/grammar_real.sh, which re-derives them in Python). */
#include <unistd.h>

#include "check.h"
#include "sonde/grammar.h"
#include "sonde/trace.h"

static struct sonde_grammar_input *load(const char *text, const struct sonde_grammar_input_opts *o,
                                        int *rc, char *msg)
{
  struct sonde_grammar_input *in = NULL;
  struct sonde_diag d = {{0}};
  *rc = sonde_grammar_input_load_buffer(text, strlen(text), "t.csv", o, &in, &d);
  strcpy(msg, d.msg);
  return in;
}

static void syms_str(const struct sonde_grammar_input *in, char *out)
{
  size_t n;
  const uint32_t *s = sonde_grammar_input_symbols(in, &n);
  out[0] = 0;
  for (size_t i = 0; i < n; i++)
    sprintf(out + strlen(out), "%x ", s[i]);
}

static const char csv[] =
    "ts,val,valid,label,short_instr\n"
    "10,0x100,true,f+0x0,\"add r0, r0\"\n"
    "11,0x100,true,f+0x0,\"add r0, r0\"\n"   /* same instruction, 2nd cycle */
    "12,0x102,true,f+0x2,\"ldr r1, [r2, #4]\"\n"
    "13,0x200,false,g,x\n"                   /* invalid: dropped */
    "14,0x102,true,f+0x2,x\n"                /* still the ldr */
    "20,0x104,true,f+0x4,x\n"                /* gap of 5 cycles */
    "21,0x100,true,f+0x0,x\n";

static void test_csv(void)
{
  int rc;
  char msg[400], s[400];
  struct sonde_grammar_input *in = load(csv, NULL, &rc, msg);
  REQUIRE(rc == 0);
  CHECK_EQ_I(sonde_grammar_input_kind(in), SONDE_GRAMMAR_INPUT_CSV);
  syms_str(in, s);
  CHECK_EQ_STR(s, "100 102 104 100 ");
  CHECK_EQ_U(sonde_grammar_input_rows(in), 7);
  CHECK_EQ_U(sonde_grammar_input_invalid_rows(in), 1);
  CHECK_EQ_U(sonde_grammar_input_gaps(in), 1);
  sonde_grammar_input_free(in);
  struct sonde_grammar_input_opts o = {.keep_invalid = true, .mark_gaps = true};
  in = load(csv, &o, &rc, msg);
  syms_str(in, s);
  CHECK_EQ_STR(s, "100 102 200 102 ffffffff 104 100 ");
  char nb[32];
  CHECK(sonde_grammar_input_name(in, 0xffffffffu, nb, sizeof nb) && !strcmp(nb, "<gap>"));
  sonde_grammar_input_free(in);
  struct sonde_grammar_input_opts cl = {.cycle_level = true};
  in = load(csv, &cl, &rc, msg);
  syms_str(in, s);
  CHECK_EQ_STR(s, "100 100 102 102 104 100 ");
  sonde_grammar_input_free(in);
}

static void test_csv_errors(void)
{
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"ts,val\n1,0x10\n2,zz\n", "t.csv:3: PC 'zz' is not a 32-bit number"},
      {"ts,val\n1,0x10\n2,0x1ffffffff\n", "t.csv:3: PC '0x1ffffffff' is not a 32-bit number"},
      {"ts,val,valid\n1,0x10,maybe\n", "t.csv:2: 'valid' is 'maybe', not true or false"},
      {"ts,val\n1,0x10,7\n", "t.csv:2: 3 fields, the header has 2"},
      {"ts,val\n5,0x10\n5,0x12\n", "t.csv:3: time 5 does not increase (previous 5)"},
      {"ts,val\nx,0x10\n", "t.csv:2: time 'x' is not a cycle number"},
      {"a,b\n1,2\n", "t.csv:1: CSV header has no 'val' or 'pc' column"},
      {"ts,val,s\n1,0x10,\"open\n", "t.csv:2: unterminated quoted field"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc;
    char msg[400];
    struct sonde_grammar_input *in = load(bad[i].text, NULL, &rc, msg);
    CHECK(in == NULL);
    CHECK_EQ_I(rc, SONDE_E_FORMAT);
    CHECK_EQ_STR(msg, bad[i].msg);
  }
}

static int resolve(void *ctx, const char *name, uint32_t *v)
{
  (void)ctx;
  if (strcmp(name, "main"))
    return -1;
  *v = 0x400;
  return 0;
}

static void test_text(void)
{
  int rc;
  char msg[400], s[400];
  struct sonde_grammar_input_opts o = {.resolve = resolve};
  struct sonde_grammar_input *in =
      load("# comment\n1 0x10 main foo\n\tfoo bar 4294967295 # tail\n", &o, &rc, msg);
  REQUIRE(rc == 0);
  CHECK_EQ_I(sonde_grammar_input_kind(in), SONDE_GRAMMAR_INPUT_TEXT);
  syms_str(in, s);
  CHECK_EQ_STR(s, "1 10 400 f0000000 f0000000 f0000001 ffffffff ");
  uint32_t v;
  CHECK(sonde_grammar_input_lookup(in, "bar", &v) == 0 && v == 0xf0000001u);
  CHECK_EQ_I(sonde_grammar_input_lookup(in, "main", &v), SONDE_E_NOTFOUND);
  sonde_grammar_input_free(in);
  in = load("1 2\n3 4294967296\n", NULL, &rc, msg);
  CHECK(in == NULL);
  CHECK_EQ_STR(msg, "t.csv:2: '4294967296' is larger than 32 bits");
  in = load("1 2\n 0x12g\n", NULL, &rc, msg);
  CHECK_EQ_STR(msg, "t.csv:2: '0x12g' is not a number");
  /* empty input is fine for the reader (the CLI refuses it) */
  in = load("", NULL, &rc, msg);
  REQUIRE(in != NULL);
  size_t n;
  sonde_grammar_input_symbols(in, &n);
  CHECK_EQ_U(n, 0);
  sonde_grammar_input_free(in);
}

/* A Sonde PC trace written by src/trace is read back as one symbol per
 * instruction record, spans as their odd record word. */
static void test_pctrace(void)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  struct sonde_pctrace_writer *w;
  REQUIRE(sonde_pctrace_writer_new(f, "m", SONDE_PCTRACE_BINARY, 48000000, 0, &w) == 0);
  sonde_pctrace_write(w, 0x100, 1);
  sonde_pctrace_write(w, 0x102, 3);
  sonde_pctrace_write(w, 0x102, 1); /* the same instruction again: a second symbol */
  sonde_pctrace_write_span(w, SONDE_PCTRACE_EXC_ENTRY, 15, 12);
  sonde_pctrace_write(w, 0x200, 1);
  sonde_pctrace_write_span(w, SONDE_PCTRACE_SLEEP, 0, 100);
  sonde_pctrace_writer_finish(w);
  sonde_pctrace_writer_free(w);
  fclose(f);
  struct sonde_grammar_input *in = NULL;
  struct sonde_diag d = {{0}};
  REQUIRE(sonde_grammar_input_load_buffer(buf, len, "t.pct", NULL, &in, &d) == 0);
  CHECK_EQ_I(sonde_grammar_input_kind(in), SONDE_GRAMMAR_INPUT_PCTRACE);
  char s[400];
  syms_str(in, s);
  CHECK_EQ_STR(s, "100 102 102 f05 200 3 ");
  char nb[40];
  CHECK(sonde_grammar_input_name(in, 0xf05, nb, sizeof nb) && !strcmp(nb, "<exc_entry:15>"));
  CHECK(sonde_grammar_input_name(in, 0x3, nb, sizeof nb) && !strcmp(nb, "<sleep>"));
  sonde_grammar_input_free(in);
  struct sonde_grammar_input_opts cl = {.cycle_level = true};
  REQUIRE(sonde_grammar_input_load_buffer(buf, len, "t.pct", &cl, &in, &d) == 0);
  size_t n;
  sonde_grammar_input_symbols(in, &n);
  CHECK_EQ_U(n, 1 + 3 + 1 + 12 + 1 + 100);
  sonde_grammar_input_free(in);
  /* the same from a file path: streamed through the FILE reader */
  char path[] = "/tmp/sonde_test_pctXXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  FILE *pf = fdopen(fd, "wb");
  fwrite(buf, 1, len, pf);
  fclose(pf);
  REQUIRE(sonde_grammar_input_load(path, NULL, &in, &d) == 0);
  CHECK_EQ_I(sonde_grammar_input_kind(in), SONDE_GRAMMAR_INPUT_PCTRACE);
  syms_str(in, s);
  CHECK_EQ_STR(s, "100 102 102 f05 200 3 ");
  sonde_grammar_input_free(in);
  pf = fopen(path, "wb");
  fwrite(buf, 1, len - 3, pf); /* truncated inside the last record */
  fclose(pf);
  CHECK(sonde_grammar_input_load(path, NULL, &in, &d) < 0);
  CHECK(strstr(d.msg, path) != NULL);
  unlink(path);
  /* truncated: the reader's message with the byte offset comes through */
  CHECK(sonde_grammar_input_load_buffer(buf, len - 3, "t.pct", NULL, &in, &d) < 0);
  CHECK(strstr(d.msg, "t.pct") != NULL);
  free(buf);
}

struct real {
  const char *algo;
  int lh; /* -1 none */
  uint64_t rules, size, cycles;
};

static void test_real_trace(void)
{
  const char *path = check_testdata("frankentrace-cc2650/blink_if_see.pc_trace.csv.gz");
  struct sonde_grammar_input *in = NULL;
  struct sonde_diag d = {{0}};
  REQUIRE(sonde_grammar_input_load(path, NULL, &in, &d) == 0);
  size_t n;
  const uint32_t *w = sonde_grammar_input_symbols(in, &n);
  CHECK_EQ_U(n, 40901);
  CHECK_EQ_U(sonde_grammar_input_rows(in), 136063);
  CHECK_EQ_U(sonde_grammar_input_invalid_rows(in), 1235);
  CHECK_EQ_U(sonde_grammar_input_gaps(in), 1591);
  /* 0x319c: ResetISR+0x19c, the head of the widest loop in ResetISR (main
   * is inlined there); 0x2acc: SchedulerBasicPrv___TaskBasic___runTask. */
  static const struct real want[] = {
      {"sequitur", -1, 1234, 9984, 0},
      {"resequitur", -1, 1060, 9247, 0},
      {"cyclitur", 0x319c, 1064, 9256, 5},
      {"cyclitur", 0x2acc, 1091, 9320, 51},
  };
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    struct sonde_grammar *g = sonde_grammar_new(sonde_grammar_algo_parse(want[k].algo));
    if (want[k].lh >= 0)
      sonde_grammar_set_loop_header(g, (uint32_t)want[k].lh);
    sonde_grammar_feed(g, w, n);
    REQUIRE(sonde_grammar_finish(g) == 0);
    CHECK_EQ_U(sonde_grammar_rule_count(g), want[k].rules);
    CHECK_EQ_U(sonde_grammar_size(g), want[k].size);
    CHECK_EQ_U(sonde_grammar_rule_length(g, 0), 40901);
    CHECK_EQ_I(sonde_grammar_check_properties(g), 0);
    CHECK_EQ_U(sonde_grammar_distinct_terminals(g), 2493);
    if (want[k].cycles) {
      struct sonde_grammar_cycle *c;
      size_t nc;
      uint64_t tot;
      REQUIRE(sonde_grammar_cycles(g, &c, &nc, &tot) == 0);
      CHECK_EQ_U(tot, want[k].cycles);
      free(c);
    }
    sonde_grammar_free(g);
  }
  uint32_t lh;
  /* without symbols: backward branches of at most 4 KiB anywhere */
  CHECK(sonde_grammar_find_loop_header(w, n, 0, UINT32_MAX, 0x1000, &lh) == 0);
  CHECK_EQ_U(lh, 0x9ba);
  /* inside ResetISR [0x3000, 0x3734) (nm -S: 00003000 00000734 t ResetISR) */
  CHECK(sonde_grammar_find_loop_header(w, n, 0x3000, 0x3734, 0x734, &lh) == 0);
  CHECK_EQ_U(lh, 0x319c);
  CHECK_EQ_I(sonde_grammar_find_loop_header(w, n, 0x10, 0x20, 0x10, &lh), SONDE_E_NOTFOUND);
  sonde_grammar_input_free(in);
}

int main(void)
{
  RUN(test_csv);
  RUN(test_csv_errors);
  RUN(test_text);
  RUN(test_pctrace);
  RUN(test_real_trace);
  return check_summary();
}
