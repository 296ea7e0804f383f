/* Decoder tests: the real trace from tests/data, and corrupt input. */
#include "check.h"
#include <stdio.h>
#include <stdlib.h>
#include "sonde/tband.h"

struct tally {
  uint64_t frames, errors, switches, ts_back, last_ts, with_ts, meta;
  uint64_t per_id[256];
  uint64_t first_err_off;
};

static void count(void *ctx, const struct sonde_tband_evt *e)
{
  struct tally *t = ctx;
  t->frames++;
  if (e->error) {
    if (!t->errors)
      t->first_err_off = e->offset;
    t->errors++;
    return;
  }
  t->per_id[e->id]++;
  if (e->id == 0x54)
    t->switches++;
  if (e->has_ts) {
    if (e->ts < t->last_ts)
      t->ts_back++;
    t->last_ts = e->ts;
    t->with_ts++;
  } else {
    t->meta++;
  }
}

static void test_real_trace(void)
{
  const char *path = check_testdata("tonbandgeraet/posix_freertos.log.hex");
  struct tally t = {0};
  struct sonde_tband_stats st;
  struct sonde_diag diag = {{0}};
  int rc = sonde_tband_decode_file(path, SONDE_TBAND_AUTO, -1, count, &t, &st, &diag);
  CHECK_EQ_I(rc, 0);
  CHECK_EQ_U(t.frames, 3231);
  CHECK_EQ_U(t.errors, 0);
  CHECK_EQ_U(st.errors, 0);
  CHECK_EQ_U(st.bad_chars, 0);
  CHECK_EQ_U(t.switches, 855);
  CHECK_EQ_U(t.ts_back, 0);
  printf("frames %llu meta %llu ts %llu\n", (unsigned long long)t.frames,
         (unsigned long long)t.meta, (unsigned long long)t.with_ts);
  for (int i = 0; i < 256; i++)
    if (t.per_id[i])
      printf("  0x%02x %-32s %llu\n", i, sonde_tband_evt_desc((uint8_t)i)->name,
             (unsigned long long)t.per_id[i]);
}

/* The real trace as bytes (its hex text decoded), for the corruption tests. */
static uint8_t *real_bytes(size_t *n)
{
  FILE *f = fopen(check_testdata("tonbandgeraet/posix_freertos.log.hex"), "r");
  if (!f)
    return NULL;
  uint8_t *b = malloc(1 << 20);
  unsigned v;
  *n = 0;
  while (b && *n < (1u << 20) && fscanf(f, "%2x", &v) == 1)
    b[(*n)++] = (uint8_t)v;
  fclose(f);
  return b;
}

static void decode_bin(const uint8_t *b, size_t n, size_t chunk, struct tally *t,
                       struct sonde_tband_stats *st)
{
  struct sonde_tband_dec *d = sonde_tband_dec_new(SONDE_TBAND_BIN, -1, "test");
  CHECK(d != NULL);
  if (!d)
    return;
  for (size_t i = 0; i < n; i += chunk)
    sonde_tband_dec_feed(d, b + i, n - i < chunk ? n - i : chunk, count, t);
  sonde_tband_dec_finish(d, count, t);
  sonde_tband_dec_stats(d, st);
  sonde_tband_dec_free(d);
}

/* Index of the byte after the k-th frame delimiter (the start of frame k). */
static size_t frame_start(const uint8_t *b, size_t n, unsigned k)
{
  size_t i = 0;
  for (unsigned z = 0; z < k && i < n; i++)
    if (!b[i])
      z++;
  return i;
}

/* The binary form decodes exactly like the hex text, in any chunking. */
static void test_binary_same_as_hex(void)
{
  size_t n;
  uint8_t *b = real_bytes(&n);
  CHECK(b != NULL);
  if (!b)
    return;
  struct tally whole = {0}, bytewise = {0};
  struct sonde_tband_stats st;
  decode_bin(b, n, n, &whole, &st);
  CHECK_EQ_U(whole.frames, 3231);
  CHECK_EQ_U(whole.errors, 0);
  CHECK_EQ_U(whole.switches, 855);
  decode_bin(b, n, 1, &bytewise, &st);
  CHECK_EQ_U(bytewise.frames, whole.frames);
  CHECK_EQ_U(bytewise.switches, whole.switches);
  CHECK_EQ_MEM(bytewise.per_id, whole.per_id, sizeof whole.per_id);
  free(b);
}

/* A corrupted COBS code byte spoils its frame only: the frame is reported
 * (at its offset) and decoding resumes at the next delimiter. */
static void test_corrupt_cobs(void)
{
  size_t n;
  uint8_t *b = real_bytes(&n);
  if (!b)
    return;
  size_t at = frame_start(b, n, 1000);
  b[at] = 0xFF; /* a COBS block that runs past the frame's end */
  struct tally t = {0};
  struct sonde_tband_stats st;
  decode_bin(b, n, 4096, &t, &st);
  CHECK_EQ_U(t.frames, 3231);
  CHECK_EQ_U(t.errors, 1);
  CHECK_EQ_U(st.errors, 1);
  CHECK_EQ_U(t.first_err_off, at);
  free(b);
}

/* A flipped payload byte gives a frame that is either rejected or decodes to
 * another event; either way every frame is still delivered, the damage stays
 * inside the frame, and the task-switch count drops by at most one. */
static void test_corrupt_payload(void)
{
  size_t n;
  uint8_t *b = real_bytes(&n);
  if (!b)
    return;
  for (unsigned k = 100; k < 3200; k += 517) {
    size_t at = frame_start(b, n, k);
    uint8_t keep = b[at + 1];
    b[at + 1] = keep == 0x7F ? 0x7E : 0x7F; /* never 0: the framing stays */
    struct tally t = {0};
    struct sonde_tband_stats st;
    decode_bin(b, n, 777, &t, &st);
    CHECK_EQ_U(t.frames, 3231);
    CHECK(t.errors <= 1);
    CHECK(t.switches >= 854 && t.switches <= 856);
    b[at + 1] = keep;
  }
  free(b);
}

/* Input cut inside a frame: that last frame is delivered as truncated. */
static void test_truncated(void)
{
  size_t n;
  uint8_t *b = real_bytes(&n);
  if (!b)
    return;
  size_t cut = frame_start(b, n, 2000) + 2;
  struct tally t = {0};
  struct sonde_tband_stats st;
  decode_bin(b, cut, cut, &t, &st);
  CHECK_EQ_U(t.frames, 2001);
  CHECK_EQ_U(t.errors, 1);
  CHECK_EQ_U(t.first_err_off, cut - 2);
  free(b);
}

/* Hex text with stray characters: they are counted and reported as an error
 * event at their offset, not silently skipped. */
static void test_bad_hex_chars(void)
{
  static const char txt[] = "0a 5f 01 6d 79 zz 74 61 73 6b 31 00\n";
  struct sonde_tband_dec *d = sonde_tband_dec_new(SONDE_TBAND_HEX, -1, "test");
  struct tally t = {0};
  struct sonde_tband_stats st;
  sonde_tband_dec_feed(d, txt, sizeof txt - 1, count, &t);
  sonde_tband_dec_finish(d, count, &t);
  sonde_tband_dec_stats(d, &st);
  sonde_tband_dec_free(d);
  CHECK_EQ_U(st.bad_chars, 2);
  CHECK_EQ_U(t.errors, 1);
  CHECK_EQ_U(t.first_err_off, 15);
  CHECK_EQ_U(t.frames, 2);
}

/* Random bytes: no crash, every zero ends a frame, every frame is accounted. */
static void test_random_garbage(void)
{
  uint8_t buf[65536];
  uint32_t x = 12345;
  size_t zeros = 0;
  for (size_t i = 0; i < sizeof buf; i++) {
    x = x * 1103515245u + 12345u;
    buf[i] = (uint8_t)(x >> 24);
    zeros += !buf[i];
  }
  struct tally t = {0};
  struct sonde_tband_stats st;
  decode_bin(buf, sizeof buf, 1000, &t, &st);
  CHECK(t.frames <= zeros + 1);
  CHECK(t.frames >= 1);
  CHECK_EQ_U(st.frames, t.frames);
  CHECK(t.errors > 0);
}

int main(void)
{
  RUN(test_real_trace);
  RUN(test_binary_same_as_hex);
  RUN(test_corrupt_cobs);
  RUN(test_corrupt_payload);
  RUN(test_truncated);
  RUN(test_bad_hex_chars);
  RUN(test_random_garbage);
  return check_summary();
}
