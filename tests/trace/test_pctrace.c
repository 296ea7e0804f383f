/* PC trace (docs/formats.md "PC trace"): writer/reader round trips in binary
 * and CSV, exact bytes of the binary layout, and bad input with byte offsets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sonde/trace.h"

struct mem {
  char *buf;
  size_t len;
};

/* Write a fixed trace (first cycle 100) in `format` into memory. */
static void write_sample(enum sonde_pctrace_format format, struct mem *m)
{
  FILE *f = open_memstream(&m->buf, &m->len);
  struct sonde_pctrace_writer *w;
  CHECK_EQ_I(sonde_pctrace_writer_new(f, "t", format, 48000000, 100, &w), 0);
  CHECK_EQ_I(sonde_pctrace_write(w, 0x00000100, 1), 0);
  CHECK_EQ_I(sonde_pctrace_write(w, 0x00000102, 3), 0);
  CHECK_EQ_I(sonde_pctrace_write_span(w, SONDE_PCTRACE_EXC_ENTRY, 15, 12), 0);
  CHECK_EQ_I(sonde_pctrace_write(w, 0x0000020a, 2), 0);
  CHECK_EQ_I(sonde_pctrace_write_span(w, SONDE_PCTRACE_TAIL_CHAIN, 16, 6), 0);
  CHECK_EQ_I(sonde_pctrace_write_span(w, SONDE_PCTRACE_EXC_RETURN, 16, 10), 0);
  CHECK_EQ_I(sonde_pctrace_write_span(w, SONDE_PCTRACE_SLEEP, 0, 50), 0);
  CHECK_EQ_I(sonde_pctrace_write(w, 0xfffffffe, 1), 0);
  CHECK_EQ_U(sonde_pctrace_writer_cycle(w), 185);
  /* bad arguments are refused and do not poison the writer */
  CHECK_EQ_I(sonde_pctrace_write(w, 0x101, 1), SONDE_E_ARG);
  CHECK_EQ_I(sonde_pctrace_write(w, 0x100, 0), SONDE_E_ARG);
  CHECK_EQ_I(sonde_pctrace_write_span(w, SONDE_PCTRACE_INSN, 0, 1), SONDE_E_ARG);
  CHECK_EQ_I(sonde_pctrace_write_span(w, SONDE_PCTRACE_EXC_ENTRY, 0x1000000, 1), SONDE_E_ARG);
  CHECK_EQ_I(sonde_pctrace_writer_finish(w), 0);
  sonde_pctrace_writer_free(w);
  fclose(f);
}

static const struct sonde_pctrace_record expect[] = {
    {100, 1, SONDE_PCTRACE_INSN, 0x100, 0},        {101, 3, SONDE_PCTRACE_INSN, 0x102, 0},
    {104, 12, SONDE_PCTRACE_EXC_ENTRY, 0, 15},     {116, 2, SONDE_PCTRACE_INSN, 0x20a, 0},
    {118, 6, SONDE_PCTRACE_TAIL_CHAIN, 0, 16},     {124, 10, SONDE_PCTRACE_EXC_RETURN, 0, 16},
    {134, 50, SONDE_PCTRACE_SLEEP, 0, 0},          {184, 1, SONDE_PCTRACE_INSN, 0xfffffffe, 0},
};
#define NEXPECT (sizeof expect / sizeof expect[0])

static void check_read_all(struct sonde_pctrace_reader *r)
{
  struct sonde_pctrace_record rec;
  for (size_t i = 0; i < NEXPECT; i++) {
    REQUIRE(sonde_pctrace_next(r, &rec) == 1);
    CHECK_EQ_U(rec.cycle, expect[i].cycle);
    CHECK_EQ_U(rec.cycles, expect[i].cycles);
    CHECK_EQ_I(rec.kind, expect[i].kind);
    CHECK_EQ_U(rec.pc, expect[i].pc);
    CHECK_EQ_U(rec.exc, expect[i].exc);
  }
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 0);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 0);
}

static void test_binary_layout(void)
{
  struct mem m;
  write_sample(SONDE_PCTRACE_BINARY, &m);
  REQUIRE(m.len == 32 + 8 * NEXPECT);
  static const unsigned char hdr[32] = {'S', 'O', 'N', 'D', 'E', 'P', 'C', 'T', 1, 0, 32, 0, 0, 0,
                                        0, 0, 0x00, 0x6c, 0xdc, 0x02, 0, 0, 0, 0, 100, 0, 0, 0,
                                        0, 0, 0, 0};
  CHECK_EQ_MEM(m.buf, hdr, 32);
  /* exception entry 15: word = 1 | 2<<1 | 15<<8 = 0x0f05, 12 cycles */
  static const unsigned char rec2[8] = {0x05, 0x0f, 0, 0, 12, 0, 0, 0};
  CHECK_EQ_MEM(m.buf + 32 + 16, rec2, 8);
  /* sleep: word = 1 | 1<<1 = 3 */
  static const unsigned char rec6[8] = {0x03, 0, 0, 0, 50, 0, 0, 0};
  CHECK_EQ_MEM(m.buf + 32 + 48, rec6, 8);
  free(m.buf);
}

static void test_binary_roundtrip(void)
{
  struct mem m;
  write_sample(SONDE_PCTRACE_BINARY, &m);
  struct sonde_pctrace_reader *r;
  REQUIRE(sonde_pctrace_reader_new_buffer(m.buf, m.len, "t", &r, NULL) == 0);
  CHECK_EQ_I(sonde_pctrace_reader_format(r), SONDE_PCTRACE_BINARY);
  CHECK_EQ_U(sonde_pctrace_reader_clock_hz(r), 48000000);
  CHECK_EQ_U(sonde_pctrace_reader_first_cycle(r), 100);
  check_read_all(r);
  sonde_pctrace_reader_free(r);

  /* the same through a FILE */
  FILE *f = fmemopen(m.buf, m.len, "rb");
  REQUIRE(sonde_pctrace_reader_new(f, "t", &r, NULL) == 0);
  check_read_all(r);
  sonde_pctrace_reader_free(r);
  fclose(f);
  free(m.buf);
}

static void test_csv_roundtrip(void)
{
  struct mem m;
  write_sample(SONDE_PCTRACE_CSV, &m);
  /* header + one row per cycle */
  size_t rows = 0;
  for (size_t i = 0; i < m.len; i++)
    rows += m.buf[i] == '\n';
  CHECK_EQ_U(rows, 1 + 85);
  REQUIRE(m.len > 60);
  CHECK(strncmp(m.buf, "cycle,pc\n100,0x00000100\n101,0x00000102\n102,0x00000102\n", 54) == 0);
  CHECK(strstr(m.buf, "\n104,exc_entry:15\n") != NULL);
  CHECK(strstr(m.buf, "\n118,tail_chain:16\n") != NULL);
  CHECK(strstr(m.buf, "\n124,exc_return:16\n") != NULL);
  CHECK(strstr(m.buf, "\n183,sleep\n184,0xfffffffe\n") != NULL);
  struct sonde_pctrace_reader *r;
  REQUIRE(sonde_pctrace_reader_new_buffer(m.buf, m.len, "t", &r, NULL) == 0);
  CHECK_EQ_I(sonde_pctrace_reader_format(r), SONDE_PCTRACE_CSV);
  check_read_all(r);
  sonde_pctrace_reader_free(r);
  free(m.buf);
}

/* A large trace crosses the reader's and writer's internal buffers. */
static void test_large_file(void)
{
  struct mem m;
  FILE *f = open_memstream(&m.buf, &m.len);
  struct sonde_pctrace_writer *w;
  REQUIRE(sonde_pctrace_writer_new(f, "t", SONDE_PCTRACE_BINARY, 0, 0, &w) == 0);
  for (uint32_t i = 0; i < 100000; i++)
    CHECK_EQ_I(sonde_pctrace_write(w, i * 2, 1 + i % 5), 0);
  CHECK_EQ_I(sonde_pctrace_writer_finish(w), 0);
  sonde_pctrace_writer_free(w);
  fclose(f);
  f = fmemopen(m.buf, m.len, "rb");
  struct sonde_pctrace_reader *r;
  REQUIRE(sonde_pctrace_reader_new(f, "t", &r, NULL) == 0);
  struct sonde_pctrace_record rec;
  uint64_t cycle = 0;
  uint32_t i = 0;
  int rc;
  while ((rc = sonde_pctrace_next(r, &rec)) == 1) {
    if (rec.pc != i * 2 || rec.cycle != cycle || rec.cycles != 1 + i % 5) {
      CHECK_EQ_U(rec.pc, i * 2);
      break;
    }
    cycle += rec.cycles;
    i++;
  }
  CHECK_EQ_I(rc, 0);
  CHECK_EQ_U(i, 100000);
  sonde_pctrace_reader_free(r);
  fclose(f);
  free(m.buf);
}

static void test_truncated(void)
{
  struct mem m;
  write_sample(SONDE_PCTRACE_BINARY, &m);
  struct sonde_pctrace_reader *r;
  struct sonde_diag d;
  /* inside the header */
  CHECK_EQ_I(sonde_pctrace_reader_new_buffer(m.buf, 20, "t.pct", &r, &d), SONDE_E_TRUNCATED);
  CHECK(r == NULL);
  CHECK(strstr(d.msg, "t.pct") && strstr(d.msg, "header"));
  CHECK_EQ_I(sonde_pctrace_reader_new_buffer(m.buf, 5, "t.pct", &r, &d), SONDE_E_TRUNCATED);
  CHECK_EQ_I(sonde_pctrace_reader_new_buffer(m.buf, 0, "t.pct", &r, &d), SONDE_E_TRUNCATED);
  /* inside the third record: two records, then an error naming offset 48 */
  REQUIRE(sonde_pctrace_reader_new_buffer(m.buf, 32 + 16 + 5, "t.pct", &r, &d) == 0);
  struct sonde_pctrace_record rec;
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 1);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 1);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), SONDE_E_TRUNCATED);
  CHECK_EQ_STR(sonde_pctrace_reader_error_detail(r),
               "t.pct: offset 48: truncated record (file ends inside it)");
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), SONDE_E_TRUNCATED); /* sticky */
  sonde_pctrace_reader_free(r);
  free(m.buf);
}

static void test_bad_header(void)
{
  struct mem m;
  write_sample(SONDE_PCTRACE_BINARY, &m);
  struct sonde_pctrace_reader *r;
  struct sonde_diag d;
  m.buf[0] = 'X';
  CHECK_EQ_I(sonde_pctrace_reader_new_buffer(m.buf, m.len, "t", &r, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "offset 0") != NULL);
  m.buf[0] = 'S';
  m.buf[8] = 2; /* version 2 */
  CHECK_EQ_I(sonde_pctrace_reader_new_buffer(m.buf, m.len, "t", &r, &d), SONDE_E_UNSUPPORTED);
  CHECK_EQ_STR(d.msg, "t: offset 8: unsupported version 2 (this reader knows 1)");
  m.buf[8] = 1;
  m.buf[10] = 16; /* header size below 32 */
  CHECK_EQ_I(sonde_pctrace_reader_new_buffer(m.buf, m.len, "t", &r, &d), SONDE_E_FORMAT);
  m.buf[10] = 40; /* a longer header is skipped: the first record is lost to it */
  REQUIRE(sonde_pctrace_reader_new_buffer(m.buf, m.len, "t", &r, &d) == 0);
  struct sonde_pctrace_record rec;
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 1);
  CHECK_EQ_U(rec.pc, 0x102);
  sonde_pctrace_reader_free(r);
  free(m.buf);
}

static void test_bad_records(void)
{
  struct mem m;
  write_sample(SONDE_PCTRACE_BINARY, &m);
  struct sonde_pctrace_reader *r;
  struct sonde_pctrace_record rec;
  /* span kind 7 in the second record */
  m.buf[32 + 8] = 0x0f;
  REQUIRE(sonde_pctrace_reader_new_buffer(m.buf, m.len, "t", &r, NULL) == 0);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 1);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), SONDE_E_FORMAT);
  CHECK(strstr(sonde_pctrace_reader_error_detail(r), "offset 40") != NULL);
  sonde_pctrace_reader_free(r);
  /* zero cycles */
  m.buf[32 + 8] = 0x02;
  memset(m.buf + 32 + 12, 0, 4);
  REQUIRE(sonde_pctrace_reader_new_buffer(m.buf, m.len, "t", &r, NULL) == 0);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 1);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), SONDE_E_FORMAT);
  CHECK(strstr(sonde_pctrace_reader_error_detail(r), "offset 44: record of 0 cycles") != NULL);
  sonde_pctrace_reader_free(r);
  free(m.buf);
}

static void test_bad_csv(void)
{
  static const struct {
    const char *text;
    int rc1; /* first next() */
    const char *detail;
  } cases[] = {
      {"cycle,pc\n5,0x00000010\n7,0x00000012\n", 1, "line 3: cycle 7, expected 6"},
      {"cycle,pc\n5,0x00000011\n", SONDE_E_FORMAT, "offset 11: line 2: bad pc column"},
      {"cycle,pc\n5,exc_entry\n", SONDE_E_FORMAT, "bad pc column"},
      {"cycle,pc\n5,sleep:3\n", SONDE_E_FORMAT, "bad pc column"},
      {"cycle,pc\n5,bogus\n", SONDE_E_FORMAT, "bad pc column"},
      {"cycle,pc\nx,0x00000010\n", SONDE_E_FORMAT, "offset 9: line 2: expected"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct sonde_pctrace_reader *r;
    struct sonde_pctrace_record rec;
    REQUIRE(sonde_pctrace_reader_new_buffer(cases[i].text, strlen(cases[i].text), "c.csv", &r,
                                            NULL) == 0);
    int rc = sonde_pctrace_next(r, &rec);
    CHECK_EQ_I(rc, cases[i].rc1);
    if (rc == 1)
      rc = sonde_pctrace_next(r, &rec);
    CHECK_EQ_I(rc, SONDE_E_FORMAT);
    if (!strstr(sonde_pctrace_reader_error_detail(r), cases[i].detail))
      CHECK_EQ_STR(sonde_pctrace_reader_error_detail(r), cases[i].detail);
    sonde_pctrace_reader_free(r);
  }
  /* CRLF and a missing final newline are accepted; equal rows coalesce */
  const char *ok = "cycle,pc\r\n7,0x00000010\r\n8,0x00000010\r\n9,halted";
  struct sonde_pctrace_reader *r;
  struct sonde_pctrace_record rec;
  REQUIRE(sonde_pctrace_reader_new_buffer(ok, strlen(ok), "c.csv", &r, NULL) == 0);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 1);
  CHECK_EQ_U(rec.cycle, 7);
  CHECK_EQ_U(rec.cycles, 2);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 1);
  CHECK_EQ_I(rec.kind, SONDE_PCTRACE_HALTED);
  CHECK_EQ_I(sonde_pctrace_next(r, &rec), 0);
  sonde_pctrace_reader_free(r);
}

static void test_write_error(void)
{
  FILE *f = fopen("/dev/full", "wb");
  if (!f)
    return;
  struct sonde_pctrace_writer *w;
  REQUIRE(sonde_pctrace_writer_new(f, "full", SONDE_PCTRACE_BINARY, 0, 0, &w) == 0);
  int rc = 0;
  for (int i = 0; i < 20000 && rc == 0; i++)
    rc = sonde_pctrace_write(w, 0x100, 1);
  if (rc == 0)
    rc = sonde_pctrace_writer_finish(w);
  CHECK_EQ_I(rc, SONDE_E_IO);
  CHECK_EQ_STR(sonde_pctrace_writer_error_detail(w), "full: write failed");
  sonde_pctrace_writer_free(w);
  fclose(f);
  sonde_pctrace_writer_free(NULL);
  sonde_pctrace_reader_free(NULL);
}

int main(void)
{
  RUN(test_binary_layout);
  RUN(test_binary_roundtrip);
  RUN(test_csv_roundtrip);
  RUN(test_large_file);
  RUN(test_truncated);
  RUN(test_bad_header);
  RUN(test_bad_records);
  RUN(test_bad_csv);
  RUN(test_write_error);
  return check_summary();
}
