/* LSU trace (docs/formats.md "LSU trace"): exact CSV text, round trip, bad rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sonde/trace.h"

static void test_roundtrip(void)
{
  char *buf;
  size_t len;
  FILE *f = open_memstream(&buf, &len);
  struct sonde_lsutrace_writer *w;
  REQUIRE(sonde_lsutrace_writer_new(f, "l", &w) == 0);
  struct sonde_lsutrace_record a = {.cycle = 12, .pc = 0x100, .addr = 0x20000000, .size = 4, .value = 0xdeadbeef, .write = true};
  struct sonde_lsutrace_record b = {.cycle = 15, .pc = 0x104, .addr = 0x20000003, .size = 1, .value = 0x7f};
  struct sonde_lsutrace_record c = {.cycle = 18446744073709551615ull, .pc = 0x2, .addr = 0x4000c000, .size = 2,
                                     .value = 0x12345};
  struct sonde_lsutrace_record d = {.cycle = 20, .pc = 0x106, .addr = 0x2000fff0, .size = 4,
                                     .value = 0x1, .write = true, .stacking = true};
  struct sonde_lsutrace_record e = {.cycle = 40, .pc = 0x106, .addr = 0x2000fff0, .size = 4,
                                     .value = 0x1, .stacking = true};
  struct sonde_lsutrace_record bad = {.cycle = 1, .size = 3};
  CHECK_EQ_I(sonde_lsutrace_write(w, &a), 0);
  CHECK_EQ_I(sonde_lsutrace_write(w, &b), 0);
  CHECK_EQ_I(sonde_lsutrace_write(w, &d), 0); /* exception stacking: W */
  CHECK_EQ_I(sonde_lsutrace_write(w, &e), 0); /* unstacking: R */
  CHECK_EQ_I(sonde_lsutrace_write(w, &c), 0); /* value truncated to the size */
  CHECK_EQ_I(sonde_lsutrace_write(w, &bad), SONDE_E_ARG);
  CHECK_EQ_I(sonde_lsutrace_writer_finish(w), 0);
  sonde_lsutrace_writer_free(w);
  fclose(f);
  CHECK_EQ_STR(buf, "cycle,pc,addr,size,value,rw\n"
                    "12,0x00000100,0x20000000,4,0xdeadbeef,w\n"
                    "15,0x00000104,0x20000003,1,0x7f,r\n"
                    "20,0x00000106,0x2000fff0,4,0x1,W\n"
                    "40,0x00000106,0x2000fff0,4,0x1,R\n"
                    "18446744073709551615,0x00000002,0x4000c000,2,0x2345,r\n");
  struct sonde_lsutrace_reader *r;
  REQUIRE(sonde_lsutrace_reader_new_buffer(buf, len, "l", &r, NULL) == 0);
  struct sonde_lsutrace_record x;
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK(x.cycle == 12 && x.pc == 0x100 && x.addr == 0x20000000 && x.size == 4 &&
        x.value == 0xdeadbeef && x.write);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK_EQ_U(x.addr, 0x20000003);
  CHECK_EQ_U(x.size, 1);
  CHECK(!x.write && !x.stacking);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK(x.cycle == 20 && x.write && x.stacking);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK(x.cycle == 40 && !x.write && x.stacking);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK_EQ_U(x.cycle, 18446744073709551615ull);
  CHECK_EQ_U(x.value, 0x2345);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 0);
  sonde_lsutrace_reader_free(r);
  free(buf);
}

static void test_bad(void)
{
  static const struct {
    const char *text;
    const char *detail;
  } cases[] = {
      {"cycle,pc,addr,size,value,rw\n1,0x0,0x0,3,0x0,r\n", "l.csv: offset 38: line 2: bad size"},
      {"cycle,pc,addr,size,value,rw\n1,0x0,0x0,1,0x100,r\n", "bad value"},
      {"cycle,pc,addr,size,value,rw\n1,0x0,0x0,1,0x1,x\n", "rw must be r, w, R, W or gap"},
      {"cycle,pc,addr,size,value,rw\n1,0x0,0x0,1\n", "expected 6 fields"},
      {"cycle,pc,addr,size,value,rw\n1,0x0,0x100000000,1,0,r\n", "bad addr"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct sonde_lsutrace_reader *r;
    struct sonde_lsutrace_record x;
    REQUIRE(sonde_lsutrace_reader_new_buffer(cases[i].text, strlen(cases[i].text), "l.csv", &r,
                                             NULL) == 0);
    CHECK_EQ_I(sonde_lsutrace_next(r, &x), SONDE_E_FORMAT);
    if (!strstr(sonde_lsutrace_reader_error_detail(r), cases[i].detail))
      CHECK_EQ_STR(sonde_lsutrace_reader_error_detail(r), cases[i].detail);
    sonde_lsutrace_reader_free(r);
  }
  struct sonde_lsutrace_reader *r;
  struct sonde_diag d;
  CHECK_EQ_I(sonde_lsutrace_reader_new_buffer("cycle,pc\n", 9, "l.csv", &r, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "not an LSU trace") != NULL);
  CHECK_EQ_I(sonde_lsutrace_reader_new_buffer("", 0, "l.csv", &r, &d), SONDE_E_TRUNCATED);
}

/* FrankenTrace's LSU output: an empty cycle (not placed), an empty pc, gap rows. */
static void test_frankentrace_rows(void)
{
  static const char text[] = "cycle,pc,addr,size,value,rw\n"
                             ",0x00000100,0x20000004,4,0x7,w\n"
                             "12,,0x400f0000,2,0x1,r\n"
                             "40,,0x20000000,,0x1c9,gap\n"
                             "50,,0x20000000,,,gap\n"
                             "60,,0x20000000,4,,gap\n";
  struct sonde_lsutrace_reader *r;
  struct sonde_lsutrace_record x;
  REQUIRE(sonde_lsutrace_reader_new_buffer(text, strlen(text), "f.csv", &r, NULL) == 0);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK_EQ_U(x.cycle, UINT64_MAX);
  CHECK_EQ_U(x.pc, 0x100);
  CHECK(x.write && !x.gap);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK_EQ_U(x.cycle, 12);
  CHECK_EQ_U(x.pc, 0xFFFFFFFFu);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK(x.gap);
  CHECK_EQ_U(x.cycle, 40);
  CHECK_EQ_U(x.addr, 0x20000000);
  CHECK_EQ_U(x.value, 0x1c9);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), 1);
  CHECK(x.gap && x.value == 0);
  CHECK_EQ_I(sonde_lsutrace_next(r, &x), SONDE_E_FORMAT);
  CHECK(strstr(sonde_lsutrace_reader_error_detail(r), "a gap row has no size") != NULL);
  sonde_lsutrace_reader_free(r);
}

int main(void)
{
  RUN(test_roundtrip);
  RUN(test_bad);
  RUN(test_frankentrace_rows);
  return check_summary();
}
