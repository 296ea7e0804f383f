/* TPIU deformatter tests: hand-built frames for every formatter rule
 * (CoreSight Architecture Specification, "Trace Formatter"), a small
 * independent formatter for randomised round trips, corruption and recovery. */
#include "check.h"

#include "sonde/swo.h"

static const uint8_t SYNC[4] = {0xFF, 0xFF, 0xFF, 0x7F};

struct evlog {
  int n;
  struct sonde_swo_tpiu_event ev[64];
};
static void on_event(void *ctx, const struct sonde_swo_tpiu_event *e)
{
  struct evlog *l = ctx;
  if (l->n < 64)
    l->ev[l->n++] = *e;
}

/* Decode `in` with the given selection; returns output length. */
static size_t run(const uint8_t *in, size_t n, int id, uint8_t *out, uint8_t *ids,
                  struct sonde_swo_tpiu_stats *st, struct evlog *log, size_t chunk)
{
  struct sonde_swo_tpiu_config cfg;
  sonde_swo_tpiu_config_init(&cfg);
  cfg.id = id;
  struct sonde_swo_tpiu *t = NULL;
  if (sonde_swo_tpiu_new(&cfg, &t) != 0)
    return (size_t)-1;
  if (log)
    sonde_swo_tpiu_set_event_callback(t, on_event, log);
  size_t o = 0;
  if (!chunk)
    chunk = n ? n : 1;
  for (size_t i = 0; i < n; i += chunk) {
    size_t k = n - i < chunk ? n - i : chunk;
    o += sonde_swo_tpiu_feed(t, in + i, k, out + o, ids ? ids + o : NULL);
  }
  if (st)
    sonde_swo_tpiu_get_stats(t, st);
  sonde_swo_tpiu_free(t);
  return o;
}

/* Frame: ID 1 at byte 0 (aux 0 = immediately), then 14 data bytes. Even data
 * bytes carry bit 0 in the aux byte. */
static void test_basic_frame(void)
{
  uint8_t s[4 + 16];
  memcpy(s, SYNC, 4);
  uint8_t *f = s + 4;
  f[0] = 0x03;          /* ID 1 */
  f[1] = 0x10;          /* data under ID 1 */
  f[2] = 0x21 & 0xFE;   /* data 0x21: bit 0 -> aux bit 1 */
  f[3] = 0x22;
  f[4] = 0x32;          /* data 0x32 (bit0 = 0) */
  f[5] = 0x33;
  f[6] = 0xFE;          /* data 0xFF (bit0 in aux bit 3) */
  f[7] = 0x7E;
  f[8] = 0x00;          /* data 0x00 */
  f[9] = 0x01;
  f[10] = 0x80;         /* data 0x81 */
  f[11] = 0x55;
  f[12] = 0x44;         /* data 0x44 */
  f[13] = 0x66;
  f[14] = 0xAA;         /* data 0xAB (aux bit 7) */
  f[15] = (1u << 1) | (1u << 3) | (1u << 5) | (1u << 7);
  uint8_t out[64], ids[64];
  struct sonde_swo_tpiu_stats st;
  size_t n = run(s, sizeof s, 1, out, ids, &st, NULL, 0);
  const uint8_t want[] = {0x10, 0x21, 0x22, 0x32, 0x33, 0xFF, 0x7E, 0x00,
                          0x01, 0x81, 0x55, 0x44, 0x66, 0xAB};
  CHECK_EQ_U(n, sizeof want);
  CHECK_EQ_MEM(out, want, sizeof want);
  CHECK_EQ_U(st.frames, 1);
  CHECK_EQ_U(st.full_syncs, 1);
  CHECK_EQ_U(st.bytes_per_id[1], 14);
  CHECK_EQ_U(st.id_changes, 1);
  CHECK_EQ_U(st.lost_bytes, 0);
  CHECK_EQ_I(st.current_id, 1);
  /* Byte-by-byte feeding gives the same result. */
  uint8_t out2[64];
  CHECK_EQ_U(run(s, sizeof s, 1, out2, NULL, NULL, NULL, 1), sizeof want);
  CHECK_EQ_MEM(out2, want, sizeof want);
}

/* ID change rule: aux bit 0 -> the following byte has the new ID; aux bit 1
 * -> the following byte still has the old ID. */
static void test_id_change_before_after(void)
{
  uint8_t s[4 + 16];
  memcpy(s, SYNC, 4);
  uint8_t *f = s + 4;
  f[0] = 0x03; f[1] = 0xA1;  /* -> ID 1, A1 @1 */
  f[2] = 0x05; f[3] = 0xA2;  /* -> ID 2, aux 1: A2 still @1 */
  f[4] = 0xB2; f[5] = 0xB3;  /* @2 */
  f[6] = 0x03; f[7] = 0xA3;  /* -> ID 1, aux 0: A3 @1 */
  f[8] = 0x05; f[9] = 0xA4;  /* -> ID 2, aux 1: A4 @1 */
  f[10] = 0x03; f[11] = 0xB4; /* -> ID 1, aux 1: B4 @2 */
  f[12] = 0xA6; f[13] = 0xA7; /* @1 */
  f[14] = 0x05;               /* -> ID 2 at byte 14: applies to the next frame */
  f[15] = (1u << 1) | (1u << 4) | (1u << 5);
  uint8_t out[64], ids[64];
  struct sonde_swo_tpiu_stats st;
  size_t n = run(s, sizeof s, 1, out, NULL, &st, NULL, 0);
  const uint8_t want1[] = {0xA1, 0xA2, 0xA3, 0xA4, 0xA6, 0xA7};
  CHECK_EQ_U(n, sizeof want1);
  CHECK_EQ_MEM(out, want1, sizeof want1);
  n = run(s, sizeof s, 2, out, NULL, &st, NULL, 0);
  const uint8_t want2[] = {0xB2, 0xB3, 0xB4};
  CHECK_EQ_U(n, sizeof want2);
  CHECK_EQ_MEM(out, want2, sizeof want2);
  CHECK_EQ_U(st.id_changes, 6);
  CHECK_EQ_I(st.current_id, 2);
  CHECK_EQ_U(st.bytes_per_id[1], 6);
  CHECK_EQ_U(st.bytes_per_id[2], 3);
  /* All IDs with their tags, in stream order. */
  n = run(s, sizeof s, SONDE_SWO_TPIU_ID_ALL, out, ids, &st, NULL, 0);
  const uint8_t wall[] = {0xA1, 0xA2, 0xB2, 0xB3, 0xA3, 0xA4, 0xB4, 0xA6, 0xA7};
  const uint8_t wids[] = {1, 1, 2, 2, 1, 1, 2, 1, 1};
  CHECK_EQ_U(n, sizeof wall);
  CHECK_EQ_MEM(out, wall, sizeof wall);
  CHECK_EQ_MEM(ids, wids, sizeof wids);
}

/* Half syncs (FF 7F at an even/odd pair) are dropped and do not change the
 * ID; full syncs between frames are dropped; bytes before the first sync are
 * skipped and reported. */
static void test_syncs(void)
{
  uint8_t s[3 + 4 + 16 + 4 + 4 + 16];
  size_t p = 0;
  s[p++] = 0x11; s[p++] = 0x22; s[p++] = 0x33;          /* garbage before sync */
  memcpy(s + p, SYNC, 4); p += 4;
  uint8_t *f = s + p;
  f[0] = 0x03; f[1] = 0x01;
  f[2] = 0xFF; f[3] = 0x7F;   /* half sync */
  f[4] = 0x02; f[5] = 0x03;
  f[6] = 0xFF; f[7] = 0x7F;   /* half sync */
  f[8] = 0x04; f[9] = 0x05;
  f[10] = 0x06; f[11] = 0x07;
  f[12] = 0x08; f[13] = 0x09;
  f[14] = 0x0A;
  f[15] = 0;
  p += 16;
  memcpy(s + p, SYNC, 4); p += 4;   /* two full syncs between frames */
  memcpy(s + p, SYNC, 4); p += 4;
  f = s + p;
  for (int k = 0; k < 15; k++)
    f[k] = (uint8_t)(0x40 + 2 * k);
  f[15] = 0x01; /* byte 0 = 0x41 */
  p += 16;
  uint8_t out[64];
  struct sonde_swo_tpiu_stats st;
  struct evlog log = {0};
  size_t n = run(s, p, 1, out, NULL, &st, &log, 0);
  uint8_t want[11 + 15];
  const uint8_t w1[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A};
  memcpy(want, w1, 10);
  for (int k = 0; k < 15; k++)
    want[10 + k] = (uint8_t)(0x40 + 2 * k);
  want[10] = 0x41;
  CHECK_EQ_U(n, 25);
  CHECK_EQ_MEM(out, want, 25);
  CHECK_EQ_U(st.half_syncs, 2);
  CHECK_EQ_U(st.full_syncs, 3);
  CHECK_EQ_U(st.frames, 2);
  CHECK_EQ_U(st.lost_bytes, 3);
  CHECK_EQ_U(st.resyncs, 0);
  CHECK_EQ_U(st.id_changes, 1);
  REQUIRE(log.n == 2);
  CHECK_EQ_U(log.ev[0].kind, SONDE_SWO_TPIU_EV_UNSYNCED);
  CHECK_EQ_U(log.ev[0].offset, 0);
  CHECK_EQ_U(log.ev[0].lost, 3);
  CHECK_EQ_U(log.ev[1].kind, SONDE_SWO_TPIU_EV_SYNC);
  CHECK_EQ_U(log.ev[1].offset, 3);
  /* Same in every split. */
  for (size_t c = 1; c < 20; c++) {
    uint8_t o2[64];
    CHECK_EQ_U(run(s, p, 1, o2, NULL, NULL, NULL, c), 25);
    CHECK_EQ_MEM(o2, want, 25);
  }
}

/* A full sync in the middle of a frame (corruption: bytes were lost) drops
 * the partial frame, reports its offset and size, and realigns. */
static void test_sync_mid_frame(void)
{
  uint8_t s[64];
  size_t p = 0;
  memcpy(s, SYNC, 4); p = 4;
  s[p++] = 0x03; s[p++] = 0x10; s[p++] = 0x12; s[p++] = 0x13; /* 4 bytes of a frame */
  s[p++] = 0x14;                                             /* ...5 bytes, then cut */
  memcpy(s + p, SYNC, 4); p += 4;                            /* sync at offset 9 */
  uint8_t *f = s + p;
  f[0] = 0x03;
  for (int k = 1; k < 15; k++)
    f[k] = (uint8_t)(k * 2);
  f[15] = 0;
  p += 16;
  uint8_t out[64];
  struct sonde_swo_tpiu_stats st;
  struct evlog log = {0};
  size_t n = run(s, p, 1, out, NULL, &st, &log, 0);
  CHECK_EQ_U(n, 14);
  CHECK_EQ_U(out[0], 2);
  CHECK_EQ_U(out[13], 28);
  CHECK_EQ_U(st.resyncs, 1);
  CHECK_EQ_U(st.lost_bytes, 5);
  REQUIRE(log.n == 2);
  CHECK_EQ_U(log.ev[1].kind, SONDE_SWO_TPIU_EV_RESYNC);
  CHECK_EQ_U(log.ev[1].offset, 4);
  CHECK_EQ_U(log.ev[1].lost, 5);
}

/* Null ID data is dropped; reserved IDs are counted. */
static void test_null_reserved(void)
{
  uint8_t s[4 + 16];
  memcpy(s, SYNC, 4);
  uint8_t *f = s + 4;
  f[0] = 0x10; f[1] = 0x11;          /* initial ID 0: null */
  f[2] = 0xE1; f[3] = 0x22;          /* -> ID 0x70 (reserved) */
  f[4] = 0x03; f[5] = 0x33;          /* -> ID 1 */
  for (int k = 6; k < 15; k++)
    f[k] = 0x40;
  f[15] = 0;
  uint8_t out[64];
  struct sonde_swo_tpiu_stats st;
  struct evlog log = {0};
  size_t n = run(s, sizeof s, 1, out, NULL, &st, &log, 0);
  CHECK_EQ_U(n, 10);
  CHECK_EQ_U(out[0], 0x33);
  CHECK_EQ_U(st.null_bytes, 2);
  CHECK_EQ_U(st.reserved_bytes, 1);
  CHECK_EQ_U(st.bytes_per_id[0x70], 1);
  REQUIRE(log.n == 2);
  CHECK_EQ_U(log.ev[1].kind, SONDE_SWO_TPIU_EV_RESERVED);
  CHECK_EQ_U(log.ev[1].offset, 4);
  CHECK_EQ_U(log.ev[1].lost, 1);
}

/* ---- randomised round trip through an independent formatter ------------- */

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (uint32_t)rs;
}

/* Formats (id[i], data[i]) into frames, with a full sync every `sync_every`
 * frames and random half syncs, using both aux-bit ID-change forms ("before":
 * aux 0, "after": aux 1). Returns the stream length. */
static size_t format_stream(const uint8_t *ids, const uint8_t *data, size_t n, uint8_t *s,
                            unsigned sync_every)
{
  size_t p = 4, i = 0;
  unsigned cur = 0x100, frames = 0;
  memcpy(s, SYNC, 4);
  while (i < n) {
    uint8_t f[16];
    unsigned aux = 0;
    for (unsigned k = 0; k < 8; k++) {
      uint8_t *ev = &f[2 * k], *od = k < 7 ? &f[2 * k + 1] : NULL;
      if (i >= n || (od && rnd() % 16 == 0)) {
        if (od) { /* half sync */
          *ev = 0xFF;
          *od = 0x7F;
        } else { /* byte 14 with nothing to send: switch to the null ID */
          *ev = 0x01;
          cur = 0;
        }
        continue;
      }
      if (ids[i] != cur) { /* change, effective immediately */
        *ev = (uint8_t)(ids[i] << 1 | 1);
        cur = ids[i];
        if (od)
          *od = data[i++];
        continue;
      }
      if (od && i + 1 < n && ids[i + 1] != cur) { /* change after this byte */
        *ev = (uint8_t)(ids[i + 1] << 1 | 1);
        aux |= 1u << k;
        *od = data[i++];
        cur = ids[i];
        continue;
      }
      if (od && i + 1 >= n) { /* last byte: no-op change to the same ID */
        *ev = (uint8_t)(cur << 1 | 1);
        *od = data[i++];
        continue;
      }
      *ev = data[i] & 0xFE;
      aux |= (unsigned)(data[i] & 1) << k;
      i++;
      if (od)
        *od = data[i++];
    }
    f[15] = (uint8_t)aux;
    memcpy(s + p, f, 16);
    p += 16;
    if (sync_every && ++frames % sync_every == 0) {
      memcpy(s + p, SYNC, 4);
      p += 4;
    }
  }
  return p;
}

static void test_round_trip(void)
{
  enum { N = 20000 };
  static uint8_t ids[N], data[N], s[N * 3], out[N * 3], oid[N * 3];
  unsigned id = 1;
  for (size_t i = 0; i < N; i++) {
    if (rnd() % 8 == 0)
      id = 1 + rnd() % 3;
    ids[i] = (uint8_t)id;
    data[i] = (uint8_t)rnd();
  }
  size_t len = format_stream(ids, data, N, s, 7);
  for (int chunk = 0; chunk < 3; chunk++) {
    size_t c = chunk == 0 ? 0 : chunk == 1 ? 1 : 13;
    struct sonde_swo_tpiu_stats st;
    size_t n = run(s, len, SONDE_SWO_TPIU_ID_ALL, out, oid, &st, NULL, c);
    /* The padding at the end is under the null ID: only ids 1..3 appear. */
    CHECK_EQ_U(n, N);
    CHECK_EQ_MEM(out, data, N);
    CHECK_EQ_MEM(oid, ids, N);
    CHECK_EQ_U(st.lost_bytes, 0);
    CHECK_EQ_U(st.resyncs, 0);
  }
  static uint8_t want2[N];
  size_t cnt2 = 0;
  for (size_t i = 0; i < N; i++)
    if (ids[i] == 2)
      want2[cnt2++] = data[i];
  struct sonde_swo_tpiu_stats st;
  CHECK_EQ_U(run(s, len, 2, out, NULL, &st, NULL, 5), cnt2);
  CHECK_EQ_MEM(out, want2, cnt2);
  CHECK_EQ_U(st.bytes_per_id[2], cnt2);
}

/* Random bytes, then a sync and good frames: no crash, loss reported,
 * decoding recovers exactly at the sync. Also bit errors in a good stream. */
static void test_corrupt_recovery(void)
{
  enum { G = 5000, N = 3000 };
  static uint8_t s[G + N * 3], ids[N], data[N], out[G + N * 3];
  for (size_t i = 0; i < G; i++)
    s[i] = (uint8_t)rnd();
  for (size_t i = 0; i < N; i++) {
    ids[i] = 1;
    data[i] = (uint8_t)rnd();
  }
  size_t len = G + format_stream(ids, data, N, s + G, 0);
  struct sonde_swo_tpiu_stats st;
  size_t n = run(s, len, 1, out, NULL, &st, NULL, 0);
  /* The tail of the output is exactly the good stream. */
  REQUIRE(n >= N);
  CHECK_EQ_MEM(out + n - N, data, N);
  CHECK(st.lost_bytes > 0);
  /* Flip bits all over a formatted stream: never crashes, output bounded. */
  size_t len2 = format_stream(ids, data, N, s, 4);
  for (int r = 0; r < 200; r++) {
    uint8_t c[N * 3];
    memcpy(c, s, len2);
    for (int k = 0; k < 20; k++)
      c[rnd() % len2] ^= (uint8_t)(1u << (rnd() % 8));
    size_t m = run(c, len2, SONDE_SWO_TPIU_ID_ALL, out, NULL, &st, NULL, 1 + rnd() % 40);
    CHECK(m <= len2);
  }
}

static void test_parse_id(void)
{
  int id = 0;
  CHECK_EQ_I(sonde_swo_tpiu_parse_id(NULL, &id), 0);
  CHECK_EQ_I(id, 1);
  CHECK_EQ_I(sonde_swo_tpiu_parse_id("2", &id), 0);
  CHECK_EQ_I(id, 2);
  CHECK_EQ_I(sonde_swo_tpiu_parse_id("0x10", &id), 0);
  CHECK_EQ_I(id, 16);
  CHECK_EQ_I(sonde_swo_tpiu_parse_id("all", &id), 0);
  CHECK_EQ_I(id, SONDE_SWO_TPIU_ID_ALL);
  CHECK_EQ_I(sonde_swo_tpiu_parse_id("0", &id), SONDE_E_ARG);
  CHECK_EQ_I(sonde_swo_tpiu_parse_id("112", &id), SONDE_E_ARG);
  CHECK_EQ_I(sonde_swo_tpiu_parse_id("1x", &id), SONDE_E_ARG);
  struct sonde_swo_tpiu_config cfg;
  sonde_swo_tpiu_config_init(&cfg);
  cfg.id = 0x70;
  struct sonde_swo_tpiu *t = NULL;
  CHECK_EQ_I(sonde_swo_tpiu_new(&cfg, &t), SONDE_E_ARG);
  CHECK(t == NULL);
  sonde_swo_tpiu_free(NULL);
}

int main(void)
{
  RUN(test_basic_frame);
  RUN(test_id_change_before_after);
  RUN(test_syncs);
  RUN(test_sync_mid_frame);
  RUN(test_null_reserved);
  RUN(test_round_trip);
  RUN(test_corrupt_recovery);
  RUN(test_parse_id);
  return check_summary();
}
