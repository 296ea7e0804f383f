/* Trace files of src/frankentrace: the FrankenTrace CSV reader (good and
 * corrupt input, exact messages with offsets), pct and CSV round trips,
 * gzip (whole and cut), and the real CC2650 trace. */
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "sonde/frankentrace.h"

static struct sonde_ft_trace *read_csv(const char *text, int want_rc, const char *want_msg)
{
  struct sonde_ft_trace *t = NULL;
  struct sonde_diag d = {{0}};
  int rc = sonde_ft_read_buffer(text, strlen(text), "t.csv", SONDE_FT_FORMAT_AUTO, 0, &t, &d);
  CHECK_EQ_I(rc, want_rc);
  if (want_msg)
    CHECK_EQ_STR(d.msg, want_msg);
  if (rc)
    CHECK(t == NULL);
  return t;
}

static void expect_cell(const struct sonde_ft_trace *t, uint64_t c, enum sonde_ft_state s, uint32_t pc)
{
  struct sonde_ft_cell x = sonde_ft_trace_at(t, c);
  if (x.state != s || x.pc != pc)
    CHECK_FAIL_("cycle %llu: got %s 0x%x, want %s 0x%x", (unsigned long long)c,
                sonde_ft_state_name(x.state), x.pc, sonde_ft_state_name(s), pc);
}

static void test_csv_good(void)
{
  struct sonde_ft_trace *t = read_csv(
      "ts,val,valid,label,short_instr\r\n"
      "10,0x00002680,true,start_trace+0x48,\"add r0, r0\"\r\n"
      "11,0x00002680,True,start_trace+0x48,\"add r0, r0\"\n"
      "14,0x00002682,false,x,\"say \"\"hi\"\", ok\"\n"
      "15,sleep,true,,\n"
      "16,,false,,\n"
      "17,exc_entry:15,true,,\n"
      "18,0x00195e17,true,,\n"
      "\n"
      "19,0x2,1",
      0, NULL);
  CHECK_EQ_U(sonde_ft_trace_origin(t), 10);
  CHECK_EQ_U(sonde_ft_trace_length(t), 10);
  expect_cell(t, 10, SONDE_FT_PC, 0x2680);
  expect_cell(t, 11, SONDE_FT_PC, 0x2680);
  expect_cell(t, 12, SONDE_FT_UNSAMPLED, 0);
  expect_cell(t, 13, SONDE_FT_UNSAMPLED, 0);
  expect_cell(t, 14, SONDE_FT_INVALID, 0x2682);
  expect_cell(t, 15, SONDE_FT_SLEEP, 0);
  expect_cell(t, 16, SONDE_FT_UNSAMPLED, 0);
  expect_cell(t, 17, SONDE_FT_EXC_ENTRY, 15);
  expect_cell(t, 18, SONDE_FT_INVALID, 0x195e17); /* odd: a corrupt sample */
  expect_cell(t, 19, SONDE_FT_PC, 2);
  struct sonde_ft_counts c;
  sonde_ft_trace_count(t, &c);
  CHECK_EQ_U(c.pc, 3);
  CHECK_EQ_U(c.unsampled, 3);
  CHECK_EQ_U(c.invalid, 2);
  CHECK_EQ_U(c.exception, 1);
  sonde_ft_trace_free(t);
  t = read_csv("ts,val,valid\n", 0, NULL); /* header only: an empty trace */
  CHECK_EQ_U(sonde_ft_trace_length(t), 0);
  sonde_ft_trace_free(t);
}

static void test_csv_corrupt(void)
{
  read_csv("ts,value,valid\n1,0x2,true\n", SONDE_E_FORMAT,
           "t.csv: offset 0: not a FrankenTrace CSV (header must start with ts,val,valid)");
  read_csv("ts,val,valid\n1,0x2,true\nx2,0x4,true\n", SONDE_E_FORMAT,
           "t.csv: line 3, offset 24: bad ts (a decimal cycle number)");
  read_csv("ts,val,valid\n5,0x2,true\n5,0x4,true\n", SONDE_E_FORMAT,
           "t.csv: line 3, offset 24: ts goes backwards or repeats (rows must be in increasing ts)");
  read_csv("ts,val,valid\n5,0x2,yes\n", SONDE_E_FORMAT,
           "t.csv: line 2, offset 13: bad valid (true or false)");
  read_csv("ts,val,valid\n5,0xzz,true\n", SONDE_E_FORMAT,
           "t.csv: line 2, offset 13: bad val (0x<hex address>, empty, or a span name)");
  read_csv("ts,val,valid\n5,0x100000000,true\n", SONDE_E_FORMAT,
           "t.csv: line 2, offset 13: bad val (0x<hex address>, empty, or a span name)");
  read_csv("ts,val,valid\n5,exc_entry,true\n", SONDE_E_FORMAT,
           "t.csv: line 2, offset 13: bad val (0x<hex address>, empty, or a span name)");
  read_csv("ts,val,valid\n5,0x2\n", SONDE_E_FORMAT,
           "t.csv: line 2, offset 13: expected at least ts,val,valid");
  read_csv("ts,val,valid,label\n5,0x2,true,\"open\n6,0x4,true,x\n", SONDE_E_FORMAT,
           "t.csv: line 2, offset 19: unterminated quote, text after a quote, or too many fields");
  read_csv("ts,val,valid,label\n5,0x2,true,\"a\"b\n", SONDE_E_FORMAT,
           "t.csv: line 2, offset 19: unterminated quote, text after a quote, or too many fields");
  read_csv("ts,val,valid\n0,0x2,true\n268435456,0x2,true\n", SONDE_E_LIMIT,
           "t.csv: line 3, offset 24: more than 268435456 cycles after the first row");
  /* A pct record may claim 2^32 - 1 cycles in 8 bytes: the limit says no. */
  uint8_t pct[40] = "SONDEPCT\x01\x00\x20\x00";
  memset(pct + 12, 0, 28);
  pct[32] = 0x70; pct[33] = 0x01;             /* pc 0x170 */
  pct[36] = pct[37] = pct[38] = pct[39] = 0xff; /* 4294967295 cycles */
  struct sonde_ft_trace *t = NULL;
  struct sonde_diag d;
  CHECK_EQ_I(sonde_ft_read_buffer(pct, sizeof pct, "big.pct", SONDE_FT_FORMAT_AUTO, 1000, &t, &d),
             SONDE_E_LIMIT);
  CHECK_EQ_STR(d.msg, "big.pct: record at cycle 0: more than 1000 cycles");
  CHECK(t == NULL);
  pct[36] = 100;
  pct[37] = pct[38] = pct[39] = 0;
  CHECK_EQ_I(sonde_ft_read_buffer(pct, sizeof pct, "big.pct", SONDE_FT_FORMAT_AUTO, 1000, &t, &d), 0);
  CHECK_EQ_U(sonde_ft_trace_length(t), 100);
  sonde_ft_trace_free(t);
  /* Not CSV and not pct: the pct reader says why. */
  read_csv("hello", SONDE_E_FORMAT, NULL);
}

static struct sonde_ft_trace *sample_trace(void)
{
  struct sonde_ft_trace *t;
  CHECK_EQ_I(sonde_ft_trace_new(100, &t), 0);
  struct {
    struct sonde_ft_cell c;
    uint64_t n;
  } spans[] = {{{0x1000, SONDE_FT_PC}, 3},    {{0, SONDE_FT_SLEEP}, 2},
               {{0, SONDE_FT_UNSAMPLED}, 4},  {{0x1004, SONDE_FT_PC}, 1},
               {{0, SONDE_FT_LOST}, 1},       {{0x1008, SONDE_FT_CONFLICT}, 1},
               {{15, SONDE_FT_EXC_ENTRY}, 12}, {{0x2000, SONDE_FT_PC}, 2},
               {{15, SONDE_FT_EXC_RETURN}, 10}, {{0x100a, SONDE_FT_INVALID}, 1},
               {{0, SONDE_FT_HALTED}, 2}};
  for (unsigned i = 0; i < sizeof spans / sizeof spans[0]; i++)
    CHECK_EQ_I(sonde_ft_trace_append(t, spans[i].c, spans[i].n), 0);
  return t;
}

/* Write with `fmt`, read back. */
static struct sonde_ft_trace *round_trip(const struct sonde_ft_trace *t, enum sonde_ft_format fmt)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  struct sonde_diag d = {{0}};
  CHECK_EQ_I(sonde_ft_write(f, "mem", fmt, t, NULL, &d), 0);
  fclose(f);
  struct sonde_ft_trace *back = NULL;
  CHECK_EQ_I(sonde_ft_read_buffer(buf, len, "mem", SONDE_FT_FORMAT_AUTO, 0, &back, &d), 0);
  free(buf);
  return back;
}

static void test_round_trips(void)
{
  struct sonde_ft_trace *t = sample_trace();
  for (int f = SONDE_FT_FORMAT_PCT; f <= SONDE_FT_FORMAT_CSV; f++) {
    struct sonde_ft_trace *b = round_trip(t, (enum sonde_ft_format)f);
    CHECK_EQ_U(sonde_ft_trace_origin(b), 100);
    CHECK_EQ_U(sonde_ft_trace_length(b), sonde_ft_trace_length(t));
    for (uint64_t c = 100; c < 100 + sonde_ft_trace_length(t); c++) {
      struct sonde_ft_cell x = sonde_ft_trace_at(t, c), y = sonde_ft_trace_at(b, c);
      /* pct has one "unknown" kind for every unrecoverable state; CSV keeps
       * the value of untrusted cells (valid=false) and drops the rest. */
      if (sonde_ft_state_unrecoverable(x.state)) {
        if (f == SONDE_FT_FORMAT_PCT || x.state == SONDE_FT_LOST || x.state == SONDE_FT_UNSAMPLED)
          x = (struct sonde_ft_cell){0, SONDE_FT_UNSAMPLED};
        else
          x.state = SONDE_FT_INVALID;
      }
      if (x.state != y.state || x.pc != y.pc)
        CHECK_FAIL_("format %d cycle %llu: %s 0x%x != %s 0x%x", f, (unsigned long long)c,
                    sonde_ft_state_name(y.state), y.pc, sonde_ft_state_name(x.state), x.pc);
    }
    sonde_ft_trace_free(b);
  }
  /* The CSV text itself. */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  struct sonde_ft_trace *s;
  sonde_ft_trace_new(7, &s);
  sonde_ft_trace_append(s, (struct sonde_ft_cell){0x1a32, SONDE_FT_PC}, 2);
  sonde_ft_trace_append(s, (struct sonde_ft_cell){0, SONDE_FT_LOST}, 1);
  sonde_ft_trace_append(s, (struct sonde_ft_cell){0, SONDE_FT_SLEEP}, 1);
  sonde_ft_trace_append(s, (struct sonde_ft_cell){3, SONDE_FT_TAIL_CHAIN}, 1);
  sonde_ft_trace_append(s, (struct sonde_ft_cell){0x1a34, SONDE_FT_CONFLICT}, 1);
  CHECK_EQ_I(sonde_ft_write(f, "mem", SONDE_FT_FORMAT_CSV, s, NULL, NULL), 0);
  fclose(f);
  CHECK_EQ_STR(buf, "ts,val,valid,label,short_instr\n"
                    "7,0x00001a32,true,,\n"
                    "8,0x00001a32,true,,\n"
                    "9,,false,,\n"
                    "10,sleep,true,,\n"
                    "11,tail_chain:3,true,,\n"
                    "12,0x00001a34,false,,\n");
  free(buf);
  sonde_ft_trace_free(s);
  sonde_ft_trace_free(t);
}

static void test_gzip(void)
{
  char path[] = "/tmp/sonde_ft_gzXXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  const char *csv = "ts,val,valid\n3,0x10,true\n4,0x12,true\n";
  gzFile g = gzopen(path, "wb");
  gzwrite(g, csv, (unsigned)strlen(csv));
  gzclose(g);
  struct sonde_ft_trace *t = NULL;
  struct sonde_diag d = {{0}};
  CHECK_EQ_I(sonde_ft_read(path, SONDE_FT_FORMAT_AUTO, 0, &t, &d), 0);
  CHECK_EQ_U(sonde_ft_trace_length(t), 2);
  expect_cell(t, 4, SONDE_FT_PC, 0x12);
  sonde_ft_trace_free(t);
  /* Cut the compressed file: an error, never a partial trace. */
  FILE *f = fopen(path, "rb");
  char buf[256];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  f = fopen(path, "wb");
  fwrite(buf, 1, n - 6, f);
  fclose(f);
  t = NULL;
  int rc = sonde_ft_read(path, SONDE_FT_FORMAT_AUTO, 0, &t, &d);
  CHECK(rc == SONDE_E_TRUNCATED || rc == SONDE_E_FORMAT);
  CHECK(t == NULL);
  CHECK(strstr(d.msg, path) == d.msg);
  unlink(path);
  CHECK_EQ_I(sonde_ft_read("/nonexistent/x.csv", SONDE_FT_FORMAT_AUTO, 0, &t, &d), SONDE_E_IO);
  CHECK_EQ_STR(d.msg, "/nonexistent/x.csv: No such file or directory");
}

static void test_real_trace(void)
{
  const char *path = SONDE_TESTDATA "/frankentrace-cc2650/blink_if_see.pc_trace.csv.gz";
  struct sonde_ft_trace *t = NULL;
  struct sonde_diag d = {{0}};
  CHECK_EQ_I(sonde_ft_read(path, SONDE_FT_FORMAT_AUTO, 0, &t, &d), 0);
  if (!t)
    return;
  CHECK_EQ_U(sonde_ft_trace_origin(t), 743);
  CHECK_EQ_U(sonde_ft_trace_length(t), 519359 - 743 + 1);
  struct sonde_ft_counts c;
  sonde_ft_trace_count(t, &c);
  /* 136,063 rows: 134,828 valid (4 of them odd values: corrupt samples) and
   * 1,235 valid=false; the rest of the range are gaps in ts. */
  CHECK_EQ_U(c.pc, 134824);
  CHECK_EQ_U(c.invalid, 1235 + 4);
  CHECK_EQ_U(c.unsampled, 518617 - 136063);
  /* The peripheral load of issue 15 item 0 (ldr.w r2, [r3, #788]) shows its
   * own PC for all of its stall: cycles 2746-2813 in the file (68 cycles; the
   * issue text says 56, 2746-2801). */
  for (uint64_t cy = 2746; cy <= 2813; cy++)
    expect_cell(t, cy, SONDE_FT_PC, 0x0e80);
  expect_cell(t, 2745, SONDE_FT_PC, 0x0e7e);
  expect_cell(t, 2814, SONDE_FT_PC, 0x0e84);
  /* The RF core acknowledge poll (paper section 7). */
  struct sonde_ft_busy_loop *loops;
  size_t n;
  CHECK_EQ_I(sonde_ft_find_busy_loops(t, NULL, &loops, &n), 0);
  size_t k;
  for (k = 0; k < n && loops[k].head != 0x1a32; k++)
    ;
  CHECK(k < n);
  if (k < n) {
    CHECK_EQ_U(loops[k].first_cycle, 82423);
    CHECK_EQ_U(loops[k].last_cycle, 85590); /* the not-taken beq; 3,168 cycles as in the paper */
    CHECK_EQ_U(loops[k].last_cycle - loops[k].first_cycle + 1, 3168);
    CHECK_EQ_U(loops[k].tail, 0x1a36);
    CHECK_EQ_U(loops[k].body_len, 3);
    CHECK_EQ_U(loops[k].unrecoverable, 4);
  }
  free(loops);
  /* CSV -> pct -> CSV keeps every known cell. */
  struct sonde_ft_trace *b = round_trip(t, SONDE_FT_FORMAT_PCT);
  struct sonde_ft_verify_result v;
  CHECK_EQ_I(sonde_ft_verify(b, t, &v), 0);
  CHECK_EQ_U(v.different, 0);
  CHECK_EQ_U(v.compared, 134824);
  sonde_ft_trace_free(b);
  sonde_ft_trace_free(t);
}

int main(void)
{
  RUN(test_csv_good);
  RUN(test_csv_corrupt);
  RUN(test_round_trips);
  RUN(test_gzip);
  RUN(test_real_trace);
  return check_summary();
}
