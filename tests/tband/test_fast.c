/* The straight-line encoders of target/tband/tband_fast.h against the
 * generic encoder of tband_encode.h: for every edge value (ids 0/1/127/128/
 * max, values 0/±1/±2^27/INT32_MIN/INT32_MAX/INT64_MIN, timestamps at every
 * varlen length boundary) the fast encoder either declines (and the tracer
 * uses the generic one) or writes exactly the generic encoder's bytes; each
 * frame is also decoded by src/tband. */
#include <stdio.h>
#include <string.h>

#include "tband_encode.h"
#include "tband_fast.h"

#include "check.h"
#include "sonde/tband.h"

#if !TBAND_FAST
#error "the fast encoders must be enabled on the test host (GCC/Clang, little-endian)"
#endif

struct capture {
  int n, errors;
  struct sonde_tband_evt e;
};

static void cap_cb(void *ctx, const struct sonde_tband_evt *e)
{
  struct capture *c = ctx;
  c->n++;
  c->e = *e;
  c->e.str = 0;
  if (e->error)
    c->errors++;
}

static void decode1(struct capture *c, const uint8_t *buf, size_t n)
{
  memset(c, 0, sizeof *c);
  struct sonde_tband_dec *d = sonde_tband_dec_new(SONDE_TBAND_BIN, 0, "t");
  sonde_tband_dec_feed(d, buf, n, cap_cb, c);
  sonde_tband_dec_finish(d, cap_cb, c);
  sonde_tband_dec_free(d);
}

static const uint64_t ts_vals[] = {
    0, 1, 127, 128, (1u << 14) - 1, 1u << 14, (1u << 21) - 1, 1u << 21, (1u << 28) - 1,
    1u << 28, (1u << 28) + 1, (1ull << 35) - 1, 1ull << 35, 123456789012ull, (1ull << 42) - 1,
    1ull << 42, (1ull << 49) - 1, 1ull << 49, (1ull << 56) - 1, 1ull << 56, (1ull << 63) - 1,
    UINT64_MAX};

/* Fast encode of one frame (scratch pre-filled with garbage), checked
 * against the generic bytes; returns 1 if the fast path took it. */
static int same(const uint8_t *want, size_t want_n, const uint8_t *got, size_t got_n)
{
  if (got_n == 0)
    return 0;
  CHECK_EQ_U(got_n, want_n);
  if (got_n == want_n && memcmp(got, want, want_n) != 0) {
    CHECK(!"fast bytes differ from the generic encoder's");
    for (size_t i = 0; i < want_n; i++)
      printf("  [%zu] generic %02x fast %02x\n", i, want[i], got[i]);
  }
  return 1;
}

static void test_ts1(void)
{
  static const uint32_t ids[] = {0, 1, 2, 3, 15, 126, 127, 128, 255, 1u << 14, UINT32_MAX};
  int fast = 0, total = 0;
  for (unsigned t = 0; t < sizeof ts_vals / sizeof ts_vals[0]; t++) {
    uint64_t ts = ts_vals[t];
    struct tband_tscache tc = {0, 0, 0};
    tband_fast_tscache_update(&tc, ts);
    for (unsigned i = 0; i < sizeof ids / sizeof ids[0]; i++) {
      uint32_t id = ids[i];
      uint8_t want[TBAND_EVT_evtmarker_end_MAXLEN], got[TBAND_FAST_SCRATCH + 8];
      /* the three [id][ts][u32] events and the marker with an empty string */
      size_t wn[4] = {tband_encode_isr_enter(want, ts, id), 0, 0, 0};
      total++;
      CHECK_EQ_I(TBAND_FAST_OK1(id), id >= 1 && id <= 127);
      if (!TBAND_FAST_OK1(id))
        continue;
      memset(got, 0xA5, sizeof got);
      size_t gn = tband_fast_ts1(got, &tc, TBAND_EVT_isr_enter_ID, ts, id);
      /* declined only for ts 0 and ts >= 2^56 */
      CHECK_EQ_I(gn != 0, ts != 0 && ts < (1ull << 56));
      if (!same(want, wn[0], got, gn))
        continue;
      fast++;
      struct capture c;
      decode1(&c, got, gn);
      CHECK_EQ_I(c.n, 1);
      CHECK_EQ_I(c.errors, 0);
      CHECK_EQ_U(c.e.id, TBAND_EVT_isr_enter_ID);
      CHECK_EQ_U(c.e.ts, ts);
      CHECK_EQ_U(c.e.val[0], id);
      /* the same shape with the other ids */
      wn[1] = tband_encode_evtmarker(want, ts, id, "");
      memset(got, 0xA5, sizeof got);
      gn = tband_fast_ts1(got, &tc, TBAND_EVT_evtmarker_ID, ts, id);
      same(want, wn[1], got, gn);
      wn[2] = tband_encode_evtmarker_end(want, ts, id);
      gn = tband_fast_ts1(got, &tc, TBAND_EVT_evtmarker_end_ID, ts, id);
      same(want, wn[2], got, gn);
      wn[3] = tband_encode_isr_exit(want, ts, id);
      gn = tband_fast_ts1(got, &tc, TBAND_EVT_isr_exit_ID, ts, id);
      same(want, wn[3], got, gn);
    }
  }
  printf("ts1: %d of %d combinations on the fast path\n", fast, total);
  CHECK_EQ_I(fast, 18 * 6); /* 18 timestamps in 1..2^56-1 x the 6 ids in 1..127 */
}

static void test_ts2(void)
{
  static const uint32_t ids[] = {0, 1, 127, 128, (1u << 14) - 1, 1u << 14, (1u << 21),
                                 (1u << 28) - 1, 1u << 28, UINT32_MAX};
  static const int64_t vals[] = {0, 1, -1, 63, -63, 64, -64, 8191, -8192, (1 << 27) - 1,
                                 -((1 << 27) - 1), 1 << 27, -(1 << 27), INT32_MAX, INT32_MIN,
                                 (int64_t)1 << 40, INT64_MAX, INT64_MIN, INT64_MIN + 1};
  int fast = 0;
  for (unsigned t = 0; t < sizeof ts_vals / sizeof ts_vals[0]; t++) {
    uint64_t ts = ts_vals[t];
    struct tband_tscache tc = {0, 0, 0};
    tband_fast_tscache_update(&tc, ts);
    for (unsigned i = 0; i < sizeof ids / sizeof ids[0]; i++)
      for (unsigned v = 0; v < sizeof vals / sizeof vals[0]; v++) {
        uint32_t id = ids[i];
        int64_t val = vals[v];
        uint8_t want[TBAND_EVT_valmarker_MAXLEN], got[TBAND_FAST_SCRATCH + 8];
        size_t wn = tband_encode_valmarker(want, ts, id, val);
        uint32_t m = tband_fast_s64(val);
        int in_range = val > -(1 << 27) && val < (1 << 27);
        CHECK_EQ_I(m != 0xFFFFFFFFu, in_range || val == -(1 << 27));
        CHECK_EQ_I(TBAND_FAST_OK2(id, m), id >= 1 && id < (1u << 28) && in_range);
        if (!TBAND_FAST_OK2(id, m))
          continue;
        memset(got, 0x5A, sizeof got);
        size_t gn = tband_fast_ts2(got, &tc, TBAND_EVT_valmarker_ID, ts, id, m);
        CHECK_EQ_I(gn != 0, ts != 0 && ts < (1ull << 56));
        if (!same(want, wn, got, gn))
          continue;
        fast++;
        struct capture c;
        decode1(&c, got, gn);
        CHECK_EQ_I(c.n, 1);
        CHECK_EQ_I(c.errors, 0);
        CHECK_EQ_U(c.e.ts, ts);
        CHECK_EQ_U(c.e.val[0], id);
        CHECK_EQ_U(c.e.val[1], (uint64_t)val);
      }
  }
  printf("ts2: %d combinations on the fast path\n", fast);
  CHECK_EQ_I(fast, 18 * 7 * 11); /* timestamps x ids 1..2^28-1 x |values| < 2^27 */
}

/* A stale cache (another 2^28 window) makes the fast path decline; the
 * update on the generic path repairs it; ts < 2^28 needs no entry. */
static void test_cache(void)
{
  struct tband_tscache tc = {0, 0, 0};
  uint8_t got[TBAND_FAST_SCRATCH + 8];
  CHECK(tband_fast_ts1(got, &tc, 4, 5, 3) != 0);             /* key 0: always valid */
  CHECK_EQ_U(tband_fast_ts1(got, &tc, 4, 1ull << 30, 3), 0); /* stale */
  tband_fast_tscache_update(&tc, 1ull << 30);
  CHECK_EQ_U(tc.key, 4);
  CHECK_EQ_U(tc.len, 5);
  CHECK_EQ_U(tband_fast_ts1(got, &tc, 4, (1ull << 30) + 7, 3), 9);
  CHECK_EQ_U(tband_fast_ts1(got, &tc, 4, 5, 3), 0); /* back in window 0: stale again */
  tband_fast_tscache_update(&tc, 5);
  CHECK_EQ_U(tc.len, 0);
  CHECK_EQ_U(tband_fast_ts1(got, &tc, 4, 5, 3), 5);
  tband_fast_tscache_update(&tc, 1ull << 56); /* beyond the fast range: unchanged */
  CHECK_EQ_U(tc.key, 0);
}

/* The spread helper on every septet boundary. */
static void test_varlen(void)
{
  static const uint32_t v[] = {0, 1, 127, 128, 16383, 16384, 2097151, 2097152, 0x0FFFFFFFu};
  for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint8_t want[8], got[4];
    uint32_t n;
    uint32_t w = tband_fast_varlen(v[i], &n);
    memcpy(got, &w, 4);
    size_t wn = tband_put_u32(want, v[i]);
    CHECK_EQ_U(n, wn);
    CHECK(memcmp(got, want, wn) == 0);
    for (size_t k = wn; k < 4; k++)
      CHECK_EQ_U(got[k], 0);
  }
}

int main(void)
{
  RUN(test_varlen);
  RUN(test_cache);
  RUN(test_ts1);
  RUN(test_ts2);
  return check_summary();
}
