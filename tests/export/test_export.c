#define _GNU_SOURCE /* memmem */
/* src/export: the timeline writer. Exact bytes of a tiny Perfetto trace
 * (checked by hand against the protobuf encoding: tag = field << 3 | wire
 * type), exact Chrome JSON, and every misuse the writer must refuse. */
#include "check.h"
#include "sonde/export.h"

struct mem {
  uint8_t b[4096];
  size_t n;
  int fail_after; /* make the n-th write fail (0: never) */
  int writes;
};

static int mem_write(void *ctx, const void *buf, size_t len)
{
  struct mem *m = ctx;
  if (m->fail_after && ++m->writes >= m->fail_after)
    return SONDE_E_IO;
  if (m->n + len > sizeof m->b)
    return SONDE_E_IO;
  memcpy(m->b + m->n, buf, len);
  m->n += len;
  return 0;
}

static void test_perfetto_bytes(void)
{
  struct mem m = {{0}, 0, 0, 0};
  struct sonde_export *x = sonde_export_new(SONDE_EXPORT_PERFETTO, mem_write, &m);
  REQUIRE(x);
  CHECK_EQ_I(sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "P", 7), 0);
  CHECK_EQ_I(sonde_export_track(x, 2, 1, SONDE_EXPORT_SLICES, "S", 0), 0);
  struct sonde_export_arg a = {"k", false, -1, NULL};
  CHECK_EQ_I(sonde_export_slice_begin(x, 2, 300, "go", &a, 1), 0);
  CHECK_EQ_I(sonde_export_slice_end(x, 2, 400), 0);
  CHECK_EQ_I(sonde_export_finish(x), 0);
  CHECK_EQ_U(sonde_export_count(x), 4);
  sonde_export_free(x);
  static const uint8_t want[] = {
      /* Trace.packet (0x0A) len 16: trusted_packet_sequence_id (0x50) 1, sequence_flags
       * (0x68) 1, track_descriptor (field 60: 0xE2 0x03) len 9 {uuid (0x08) 1, process
       * (0x1A) len 5 {pid (0x08) 7, process_name (0x32) "P"}} */
      0x0A, 0x10, 0x50, 0x01, 0x68, 0x01, 0xE2, 0x03, 0x09, 0x08, 0x01, 0x1A, 0x05, 0x08, 0x07,
      0x32, 0x01, 'P',
      /* len 12: seq, track_descriptor len 7 {uuid 2, parent_uuid (0x28) 1, name (0x12) "S"} */
      0x0A, 0x0C, 0x50, 0x01, 0xE2, 0x03, 0x07, 0x08, 0x02, 0x28, 0x01, 0x12, 0x01, 'S',
      /* len 32: seq, timestamp (0x40) 300, track_event (0x5A) len 25 {type (0x48) 1,
       * track_uuid (0x58) 2, name (field 23: 0xBA 0x01) "go", debug_annotations (0x22)
       * len 14 {name (0x52) "k", int_value (0x20) -1 as a 10-byte varint}} */
      0x0A, 0x20, 0x50, 0x01, 0x40, 0xAC, 0x02, 0x5A, 0x19, 0x48, 0x01, 0x58, 0x02, 0xBA, 0x01,
      0x02, 'g', 'o', 0x22, 0x0E, 0x52, 0x01, 'k', 0x20, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
      0xFF, 0xFF, 0xFF, 0x01,
      /* len 11: seq, timestamp 400, track_event len 4 {type 2, track_uuid 2} */
      0x0A, 0x0B, 0x50, 0x01, 0x40, 0x90, 0x03, 0x5A, 0x04, 0x48, 0x02, 0x58, 0x02};
  CHECK_EQ_U(m.n, sizeof want);
  CHECK(m.n == sizeof want && memcmp(m.b, want, sizeof want) == 0);
  if (m.n != sizeof want || memcmp(m.b, want, sizeof want)) {
    for (size_t i = 0; i < m.n; i++)
      fprintf(stderr, "%02x%s", m.b[i], i + 1 < m.n ? " " : "\n");
  }
}

static void test_chrome_json(void)
{
  struct mem m = {{0}, 0, 0, 0};
  struct sonde_export *x = sonde_export_new(SONDE_EXPORT_CHROME_JSON, mem_write, &m);
  REQUIRE(x);
  CHECK_EQ_I(sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "Core \"0\"", 5), 0);
  CHECK_EQ_I(sonde_export_track(x, 2, 1, SONDE_EXPORT_THREAD, "t", 3), 0);
  CHECK_EQ_I(sonde_export_track(x, 3, 1, SONDE_EXPORT_COUNTER, "q", 0), 0);
  struct sonde_export_arg a = {"msg", true, 0, "hi"};
  CHECK_EQ_I(sonde_export_slice_begin(x, 2, 1500, "run", NULL, 0), 0);
  CHECK_EQ_I(sonde_export_instant(x, 2, 2000, "x", &a, 1), 0);
  CHECK_EQ_I(sonde_export_counter(x, 3, 2001, -4), 0);
  CHECK_EQ_I(sonde_export_slice_end(x, 2, 2500), 0);
  CHECK_EQ_I(sonde_export_finish(x), 0);
  sonde_export_free(x);
  m.b[m.n] = 0;
  CHECK_EQ_STR((char *)m.b,
               "{\"traceEvents\":[\n"
               "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":5,\"tid\":0,\"args\":{\"name\":\"Core \\\"0\\\"\"}},\n"
               "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":5,\"tid\":3,\"args\":{\"name\":\"t\"}},\n"
               "{\"ph\":\"B\",\"pid\":5,\"tid\":3,\"ts\":1.500,\"name\":\"run\"},\n"
               "{\"ph\":\"i\",\"pid\":5,\"tid\":3,\"ts\":2.000,\"name\":\"x\",\"s\":\"t\",\"args\":{\"msg\":\"hi\"}},\n"
               "{\"ph\":\"C\",\"pid\":5,\"tid\":1000002,\"ts\":2.001,\"name\":\"q\",\"args\":{\"value\":-4}},\n"
               "{\"ph\":\"E\",\"pid\":5,\"tid\":3,\"ts\":2.500}\n"
               "],\"displayTimeUnit\":\"ns\"}\n");
}

/* names of any length come out whole (the JSON buffer grows) */
static void test_json_long_name(void)
{
  static struct mem m;
  memset(&m, 0, sizeof m);
  static char name[3001];
  memset(name, 'n', 3000);
  name[0] = '"';
  struct sonde_export *x = sonde_export_new(SONDE_EXPORT_CHROME_JSON, mem_write, &m);
  REQUIRE(x);
  CHECK_EQ_I(sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "p", 0), 0);
  CHECK_EQ_I(sonde_export_track(x, 2, 1, SONDE_EXPORT_SLICES, "s", 0), 0);
  CHECK_EQ_I(sonde_export_instant(x, 2, 1, name, NULL, 0), 0);
  CHECK_EQ_I(sonde_export_finish(x), 0);
  sonde_export_free(x);
  size_t run = 0, best = 0;
  for (size_t i = 0; i < m.n; i++) {
    run = m.b[i] == 'n' ? run + 1 : 0;
    best = run > best ? run : best;
  }
  CHECK_EQ_U(best, 2999); /* the whole name */
  CHECK(m.n > 3000 && memcmp(m.b + m.n - 26, "],\"displayTimeUnit\":\"ns\"}\n", 26) == 0);
  CHECK(memmem(m.b, m.n, "\"name\":\"\\\"nnn", 12) != NULL); /* the quote escaped */
}

static void test_misuse(void)
{
  struct mem m = {{0}, 0, 0, 0};
  struct sonde_export *x = sonde_export_new(SONDE_EXPORT_PERFETTO, mem_write, &m);
  REQUIRE(x);
  CHECK_EQ_I(sonde_export_slice_begin(x, 9, 1, "a", NULL, 0), SONDE_E_STATE); /* undefined */
  CHECK(strstr(sonde_export_error(x), "not defined") != NULL);
  CHECK_EQ_I(sonde_export_track(x, 0, 0, SONDE_EXPORT_SLICES, "z", 0), SONDE_E_ARG);
  CHECK_EQ_I(sonde_export_track(x, 5, 4, SONDE_EXPORT_SLICES, "orphan", 0), SONDE_E_STATE);
  CHECK_EQ_I(sonde_export_track(x, 1, 0, SONDE_EXPORT_THREAD, "no process", 1), SONDE_E_ARG);
  CHECK_EQ_I(sonde_export_track(x, 1, 0, SONDE_EXPORT_SLICES, "s", 0), 0);
  CHECK_EQ_I(sonde_export_track(x, 1, 0, SONDE_EXPORT_SLICES, "s", 0), SONDE_E_STATE); /* twice */
  CHECK_EQ_I(sonde_export_track(x, 2, 0, SONDE_EXPORT_COUNTER, "c", 0), 0);
  CHECK_EQ_I(sonde_export_slice_end(x, 1, 5), SONDE_E_STATE); /* no begin */
  CHECK_EQ_I(sonde_export_slice_begin(x, 2, 5, "a", NULL, 0), SONDE_E_ARG); /* counter track */
  CHECK_EQ_I(sonde_export_counter(x, 1, 5, 3), SONDE_E_ARG);                /* not a counter */
  CHECK_EQ_I(sonde_export_slice_begin(x, 1, 5, "a", NULL, 0), 0);
  CHECK_EQ_I(sonde_export_finish(x), SONDE_E_STATE); /* left open */
  CHECK(strstr(sonde_export_error(x), "left open") != NULL);
  sonde_export_free(x);
  /* many tracks: the table grows and parents stay valid */
  x = sonde_export_new(SONDE_EXPORT_PERFETTO, mem_write, &m);
  m.n = 0;
  CHECK_EQ_I(sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "p", 0), 0);
  int bad = 0;
  for (uint64_t u = 2; u < 400; u++) {
    m.n = 0;
    bad += sonde_export_track(x, u, 1, u % 2 ? SONDE_EXPORT_THREAD : SONDE_EXPORT_COUNTER, "t", 0) != 0;
  }
  CHECK_EQ_I(bad, 0);
  sonde_export_free(x);
  /* a failing writer is reported */
  struct mem f = {{0}, 0, 2, 0};
  x = sonde_export_new(SONDE_EXPORT_PERFETTO, mem_write, &f);
  CHECK_EQ_I(sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "p", 0), SONDE_E_IO);
  sonde_export_free(x);
  sonde_export_free(NULL);
  CHECK(sonde_export_new(SONDE_EXPORT_PERFETTO, NULL, NULL) == NULL);
}

int main(void)
{
  RUN(test_perfetto_bytes);
  RUN(test_chrome_json);
  RUN(test_json_long_name);
  RUN(test_misuse);
  return check_summary();
}
