/* Round trips: every event of tband_events.def encoded by the on-target
 * encoder (target/tband/tband_encode.h, compiled for the host) and decoded
 * by src/tband, at minimum and maximum field values; COBS at the 254/255-byte
 * block edges; varlen and s64 sign-magnitude including INT64_MIN. */
#define TBAND_ENCODE_MAX_STR_LEN 600
#include "tband_encode.h"

#include "check.h"
#include "sonde/tband.h"

struct capture {
  int n;
  struct sonde_tband_evt e;
  char str[700];
  int errors;
  const char *msg;
};

static void cap_cb(void *ctx, const struct sonde_tband_evt *e)
{
  struct capture *c = ctx;
  c->n++;
  c->e = *e;
  if (e->error)
    c->errors++, c->msg = e->error_msg;
  if (e->str) {
    memcpy(c->str, e->str, e->str_len + 1);
    c->e.str = c->str;
  }
}

/* Decode into *c (the string points into c itself, so no copies by value). */
static void decode1(struct capture *c, const uint8_t *buf, size_t n)
{
  memset(c, 0, sizeof *c);
  struct sonde_tband_dec *d = sonde_tband_dec_new(SONDE_TBAND_BIN, 0, "t");
  sonde_tband_dec_feed(d, buf, n, cap_cb, c);
  sonde_tband_dec_finish(d, cap_cb, c);
  sonde_tband_dec_free(d);
}

/* Values per field type at the two ends of the range. */
#define MINV_U8 0
#define MINV_QKIND 0
#define MINV_SBKIND 0
#define MINV_U32 0
#define MINV_U64 0
#define MINV_S64 INT64_MIN
#define MINV_STR ""
#define MAXV_U8 0xFF
#define MAXV_QKIND 5
#define MAXV_SBKIND 1
#define MAXV_U32 UINT32_MAX
#define MAXV_U64 UINT64_MAX
#define MAXV_S64 INT64_MAX
#define MAXV_STR long_str
#define ISSTR_U8 0
#define ISSTR_QKIND 0
#define ISSTR_SBKIND 0
#define ISSTR_U32 0
#define ISSTR_U64 0
#define ISSTR_S64 0
#define ISSTR_STR 1
#define ISSTR_NONE 0
#define ASU64_STR(v) 0
#define ASU64_U8(v) (uint64_t)(v)
#define ASU64_QKIND(v) (uint64_t)(v)
#define ASU64_SBKIND(v) (uint64_t)(v)
#define ASU64_U32(v) (uint64_t)(v)
#define ASU64_U64(v) (uint64_t)(v)
#define ASU64_S64(v) (uint64_t)(int64_t)(v)

#define TSARG_TS(x) , (x)
#define TSARG_META(x)
#define HASTS_TS 1
#define HASTS_META 0
#define ARGS_0(W, t1, t2, t3)
#define ARGS_1(W, t1, t2, t3) , W##_##t1
#define ARGS_2(W, t1, t2, t3) , W##_##t1, W##_##t2
#define ARGS_3(W, t1, t2, t3) , W##_##t1, W##_##t2, W##_##t3

static char long_str[601];

static void check_event(int which, uint8_t id, int has_ts, unsigned nf, const uint8_t *buf,
                        size_t n, size_t maxlen, const uint64_t *want, int str_at,
                        const char *want_str)
{
  CHECK(n <= maxlen);
  CHECK_EQ_U(buf[n - 1], 0);
  for (size_t i = 0; i + 1 < n; i++)
    CHECK(buf[i] != 0);
  struct capture c;
  decode1(&c, buf, n);
  CHECK_EQ_I(c.n, 1);
  CHECK_EQ_I(c.errors, 0);
  if (c.errors)
    fprintf(stderr, "  id 0x%02x (%s): %s\n", id, which ? "max" : "min", c.msg);
  CHECK_EQ_U(c.e.id, id);
  REQUIRE(c.e.desc != NULL);
  CHECK_EQ_U(c.e.has_ts, has_ts);
  if (has_ts)
    CHECK_EQ_U(c.e.ts, which ? UINT64_MAX : 0);
  CHECK_EQ_U(c.e.nfields, nf);
  for (unsigned f = 0; f < nf; f++) {
    if ((int)f == str_at) {
      CHECK_EQ_STR(c.e.str, want_str);
      if (!c.e.str || strcmp(c.e.str, want_str))
        fprintf(stderr, "  id 0x%02x (%s)\n", id, which ? "max" : "min");
    }
    else
      CHECK_EQ_U(c.e.val[f], want[f]);
  }
}

static void test_every_event_min_max(void)
{
  memset(long_str, 'x', 600);
  for (int i = 0; i < 600; i++)
    long_str[i] = (char)(0x20 + i % 95);
  long_str[600] = 0;
  uint8_t buf[1024];
  int events = 0;
#define TBAND_EVENT(id, group, name, kind, origin, nf, t1, n1, t2, n2, t3, n3)              \
  {                                                                                       \
    size_t n;                                                                             \
    int str_at = ISSTR_##t1 ? 0 : ISSTR_##t2 ? 1 : ISSTR_##t3 ? 2 : -1;                   \
    n = tband_encode_##name(buf TSARG_##kind((uint64_t)0) ARGS_##nf(MINV, t1, t2, t3));   \
    {                                                                                     \
      uint64_t want[3] = {ASU64_##t1(MINV_##t1), ASU64_##t2(MINV_##t2), ASU64_##t3(MINV_##t3)}; \
      check_event(0, id, HASTS_##kind, nf, buf, n, TBAND_EVT_##name##_MAXLEN, want, str_at, ""); \
    }                                                                                     \
    n = tband_encode_##name(buf TSARG_##kind(UINT64_MAX) ARGS_##nf(MAXV, t1, t2, t3));    \
    {                                                                                     \
      uint64_t want[3] = {ASU64_##t1(MAXV_##t1), ASU64_##t2(MAXV_##t2), ASU64_##t3(MAXV_##t3)}; \
      check_event(1, id, HASTS_##kind, nf, buf, n, TBAND_EVT_##name##_MAXLEN, want, str_at, long_str); \
    }                                                                                     \
    events++;                                                                             \
  }
#define MINV_NONE 0
#define MAXV_NONE 0
#define ASU64_NONE(v) 0
#include "tband_events.def"
#undef TBAND_EVENT
  CHECK_EQ_I(events, 84);
}

/* Maximum lengths printed in the reference index ("Max length (unframed)"). */
static void test_documented_max_lengths(void)
{
  CHECK_EQ_U(TBAND_EVT_core_id_RAWMAX, 16);
  CHECK_EQ_U(TBAND_EVT_ts_resolution_ns_RAWMAX, 11);
  CHECK_EQ_U(TBAND_EVT_isr_name_RAWMAX, 6 + 600);
  CHECK_EQ_U(TBAND_EVT_evtmarker_RAWMAX, 16 + 600);
  CHECK_EQ_U(TBAND_EVT_valmarker_RAWMAX, 26);
  CHECK_EQ_U(TBAND_EVT_task_priority_set_RAWMAX, 21);
  CHECK_EQ_U(TBAND_EVT_task_is_idle_task_RAWMAX, 11);
  CHECK_EQ_U(TBAND_EVT_task_is_timer_task_RAWMAX, 6);
  CHECK_EQ_U(TBAND_EVT_queue_kind_RAWMAX, 7);
  CHECK_EQ_U(TBAND_EVT_task_evtmarker_name_RAWMAX, 11 + 600);
  CHECK_EQ_U(TBAND_EVT_task_valmarker_RAWMAX, 26);
}

static void test_cobs_vectors(void)
{
  /* the two examples of the reference's COBS section */
  const uint8_t in1[] = {0x01, 0x02, 0x00, 0x04, 0x00, 0x05};
  const uint8_t out1[] = {0x03, 0x01, 0x02, 0x02, 0x04, 0x02, 0x05, 0x00};
  uint8_t buf[600], back[600];
  size_t n = tband_cobs_encode(in1, sizeof in1, buf);
  CHECK_EQ_U(n, sizeof out1);
  CHECK_EQ_MEM(buf, out1, sizeof out1);
  CHECK_EQ_I(sonde_tband_cobs_decode(buf, n - 1, back), (long)sizeof in1);
  CHECK_EQ_MEM(back, in1, sizeof in1);

  uint8_t in2[256];
  in2[0] = 0;
  for (int i = 1; i <= 254; i++)
    in2[i] = (uint8_t)i;
  in2[255] = 0xFF;
  n = tband_cobs_encode(in2, sizeof in2, buf);
  CHECK_EQ_U(n, 259);
  CHECK_EQ_U(buf[0], 0x01);
  CHECK_EQ_U(buf[1], 0xFF);
  CHECK_EQ_U(buf[2], 0x01);
  CHECK_EQ_U(buf[255], 0xFE);
  CHECK_EQ_U(buf[256], 0x02);
  CHECK_EQ_U(buf[257], 0xFF);
  CHECK_EQ_U(buf[258], 0x00);
  CHECK_EQ_I(sonde_tband_cobs_decode(buf, n - 1, back), 256);
  CHECK_EQ_MEM(back, in2, 256);
}

/* Runs of non-zero bytes of every length around the 254-byte block size,
 * with and without zeros next to them: length bound and exact inverse. */
static void test_cobs_block_edges(void)
{
  static const size_t lens[] = {1, 252, 253, 254, 255, 256, 507, 508, 509, 510, 600};
  uint8_t in[600], buf[700], back[700];
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    size_t L = lens[li];
    for (int zero_pos = -1; zero_pos < 3; zero_pos++) {
      for (size_t i = 0; i < L; i++)
        in[i] = (uint8_t)(1 + i % 255);
      if (zero_pos == 0)
        in[0] = 0;
      if (zero_pos == 1 && L >= 1)
        in[L - 1 < sizeof in ? L - 1 : 0] = 0;
      if (zero_pos == 2 && L > 254)
        in[254] = 0;
      size_t n = tband_cobs_encode(in, L, buf);
      CHECK(n <= TBAND_COBS_MAXLEN(L));
      CHECK_EQ_U(buf[n - 1], 0);
      CHECK(memchr(buf, 0, n - 1) == NULL);
      long m = sonde_tband_cobs_decode(buf, n - 1, back);
      CHECK_EQ_I(m, (long)L);
      CHECK(m == (long)L && memcmp(back, in, L) == 0);
    }
  }
  /* all-nonzero 254 bytes: exactly 1 + 254 + 1 bytes, as the bound promises */
  for (size_t i = 0; i < 254; i++)
    in[i] = 7;
  CHECK_EQ_U(tband_cobs_encode(in, 254, buf), 256);
  CHECK_EQ_U(tband_cobs_encode(in, 255, buf) , 258);
}

/* Events whose frames cross the block edges, through the full decoder. */
static void test_long_frames(void)
{
  static char msg[601];
  uint8_t buf[1024];
  for (size_t len = 230; len <= 520; len++) {
    for (size_t i = 0; i < len; i++)
      msg[i] = (char)('a' + i % 26);
    msg[len] = 0;
    size_t n = tband_encode_evtmarker(buf, 0x1234, 77, msg);
    /* the one-pass encoder gives exactly the bytes of the two-pass reference */
    uint8_t raw[700], ref[800];
    size_t rn = 0;
    raw[rn++] = 0x07;
    rn += tband_put_u64(raw + rn, 0x1234);
    rn += tband_put_u32(raw + rn, 77);
    rn += tband_put_str(raw + rn, msg, 600);
    size_t refn = tband_cobs_encode(raw, rn, ref);
    CHECK_EQ_U(n, refn);
    CHECK(n == refn && memcmp(buf, ref, n) == 0);
    CHECK(n <= TBAND_COBS_MAXLEN(rn));
    struct capture c;
    decode1(&c, buf, n);
    CHECK_EQ_I(c.errors, 0);
    CHECK_EQ_U(c.e.str_len, len);
    CHECK(c.e.str && strcmp(c.e.str, msg) == 0);
    CHECK_EQ_U(c.e.ts, 0x1234);
    CHECK_EQ_U(c.e.val[0], 77);
  }
}

static void test_varlen(void)
{
  uint8_t b[16];
  CHECK_EQ_U(tband_put_u32(b, 5), 1);
  CHECK_EQ_U(b[0], 0x05);
  CHECK_EQ_U(tband_put_u32(b, 0xFF), 2); /* the reference's example */
  CHECK_EQ_U(b[0], 0xFF);
  CHECK_EQ_U(b[1], 0x01);
  CHECK_EQ_U(tband_put_u32(b, UINT32_MAX), 5);
  CHECK_EQ_U(b[4], 0x0F);
  CHECK_EQ_U(tband_put_u64(b, UINT64_MAX), 10);
  CHECK_EQ_U(b[9], 0x01);
  CHECK_EQ_U(tband_put_u64(b, 0x100000000ull), 5);
  /* s64: LSB is the sign */
  CHECK_EQ_U(tband_put_s64(b, 0), 1);
  CHECK_EQ_U(b[0], 0x00);
  CHECK_EQ_U(tband_put_s64(b, -1), 1);
  CHECK_EQ_U(b[0], 0x03);
  CHECK_EQ_U(tband_put_s64(b, 1), 1);
  CHECK_EQ_U(b[0], 0x02);
  CHECK_EQ_U(tband_put_s64(b, INT64_MIN), 1); /* negative zero */
  CHECK_EQ_U(b[0], 0x01);
  CHECK_EQ_U(tband_put_s64(b, INT64_MIN + 1), 10);
  static const int64_t vals[] = {0, 1, -1, 63, -64, 64, -65, 1000000, -1000000, INT64_MAX,
                                 INT64_MIN, INT64_MIN + 1, INT32_MIN, INT32_MAX};
  uint8_t f[64];
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    size_t n = tband_encode_valmarker(f, 9, 3, vals[i]);
    struct capture c;
    decode1(&c, f, n);
    CHECK_EQ_I(c.errors, 0);
    CHECK_EQ_I((int64_t)c.e.val[1], vals[i]);
  }
}

struct col {
  int n;
  struct {
    uint64_t off;
    int err;
    uint8_t id;
  } e[10];
};
static void col_cb(void *ctx, const struct sonde_tband_evt *e)
{
  struct col *c = ctx;
  if (c->n < 10) {
    c->e[c->n].off = e->offset;
    c->e[c->n].err = e->error;
    c->e[c->n].id = e->id;
  }
  c->n++;
}

/* Hand-made corrupt frames: each is reported with its offset and the good
 * frames around it still decode. */
static void test_corrupt(void)
{
  uint8_t buf[256];
  size_t n = 0;
  n += tband_encode_isr_enter(buf + n, 1, 5);  /* good, offset 0 */
  size_t off_unknown = n;
  const uint8_t unknown[] = {0x03, 0xEE, 0x01, 0x00}; /* id 0xEE */
  memcpy(buf + n, unknown, sizeof unknown);
  n += sizeof unknown;
  size_t off_trunc = n;
  const uint8_t trunc[] = {0x03, 0x04, 0x81, 0x00}; /* isr_enter, ts varlen cut */
  memcpy(buf + n, trunc, sizeof trunc);
  n += sizeof trunc;
  size_t off_cobs = n;
  const uint8_t badcobs[] = {0x09, 0x04, 0x01, 0x00}; /* block runs past the end */
  memcpy(buf + n, badcobs, sizeof badcobs);
  n += sizeof badcobs;
  size_t off_extra = n;
  const uint8_t extra[] = {0x05, 0x05, 0x01, 0x02, 0x03, 0x00}; /* trailing byte */
  memcpy(buf + n, extra, sizeof extra);
  n += sizeof extra;
  size_t off_good2 = n;
  n += tband_encode_isr_exit(buf + n, 2, 5);
  size_t off_tail = n;
  buf[n++] = 0x02;
  buf[n++] = 0x04; /* no delimiter: truncated at end */

  struct sonde_tband_dec *d;
  struct col col;
  memset(&col, 0, sizeof col);
  d = sonde_tband_dec_new(SONDE_TBAND_AUTO, 0, "t");
  for (size_t i = 0; i < n; i++)
    sonde_tband_dec_feed(d, buf + i, 1, col_cb, &col);
  sonde_tband_dec_finish(d, col_cb, &col);
  struct sonde_tband_stats st;
  sonde_tband_dec_stats(d, &st);
  sonde_tband_dec_free(d);
  REQUIRE(col.n == 7);
  CHECK_EQ_I(col.e[0].err, 0);
  CHECK_EQ_U(col.e[0].off, 0);
  CHECK_EQ_I(col.e[1].err, SONDE_E_FORMAT);
  CHECK_EQ_U(col.e[1].off, off_unknown);
  CHECK_EQ_I(col.e[2].err, SONDE_E_TRUNCATED);
  CHECK_EQ_U(col.e[2].off, off_trunc);
  CHECK_EQ_I(col.e[3].err, SONDE_E_FORMAT);
  CHECK_EQ_U(col.e[3].off, off_cobs);
  CHECK_EQ_I(col.e[4].err, SONDE_E_FORMAT);
  CHECK_EQ_U(col.e[4].off, off_extra);
  CHECK_EQ_I(col.e[5].err, 0);
  CHECK_EQ_U(col.e[5].off, off_good2);
  CHECK_EQ_U(col.e[5].id, 0x05);
  CHECK_EQ_I(col.e[6].err, SONDE_E_TRUNCATED);
  CHECK_EQ_U(col.e[6].off, off_tail);
  CHECK_EQ_U(st.frames, 7);
  CHECK_EQ_U(st.errors, 5);
}

/* Hex input: same frames as text, offsets are text offsets. */
static void test_hex_input(void)
{
  const char *txt = "0x04 0x04 0x01 05 00\n04 04 02 zz 05 00 0405040300";
  struct col col;
  memset(&col, 0, sizeof col);
  CHECK_EQ_I(sonde_tband_detect_format(txt, 20), SONDE_TBAND_HEX);
  struct sonde_tband_dec *d = sonde_tband_dec_new(SONDE_TBAND_AUTO, 2, "t");
  sonde_tband_dec_feed(d, txt, strlen(txt), col_cb, &col);
  sonde_tband_dec_finish(d, col_cb, &col);
  CHECK_EQ_I(sonde_tband_dec_format(d), SONDE_TBAND_HEX);
  sonde_tband_dec_free(d);
  REQUIRE(col.n == 4);
  CHECK_EQ_I(col.e[0].err, 0);
  CHECK_EQ_U(col.e[0].id, 4);
  CHECK_EQ_U(col.e[0].off, 2); /* after the 0x prefix */
  CHECK_EQ_I(col.e[1].err, SONDE_E_FORMAT); /* 'zz' */
  CHECK_EQ_U(col.e[1].off, 30);
  CHECK_EQ_I(col.e[2].err, 0);
  CHECK_EQ_U(col.e[2].off, 21);
  CHECK_EQ_I(col.e[3].err, 0);
  CHECK_EQ_U(col.e[3].id, 5);
  CHECK_EQ_U(col.e[3].off, 39);
  const uint8_t bin[] = {0x03, 0x04, 0x00};
  CHECK_EQ_I(sonde_tband_detect_format(bin, 3), SONDE_TBAND_BIN);
}

static void test_input_spec(void)
{
  char p[64];
  int core;
  CHECK_EQ_I(sonde_tband_parse_input("a/b.bin@3", p, sizeof p, &core), 0);
  CHECK_EQ_STR(p, "a/b.bin");
  CHECK_EQ_I(core, 3);
  CHECK_EQ_I(sonde_tband_parse_input("mail@host.bin", p, sizeof p, &core), 0);
  CHECK_EQ_STR(p, "mail@host.bin");
  CHECK_EQ_I(core, -1);
  CHECK_EQ_I(sonde_tband_parse_input("x@", p, sizeof p, &core), 0);
  CHECK_EQ_STR(p, "x@");
  CHECK_EQ_I(sonde_tband_parse_input("abcdef", p, 3, &core), SONDE_E_RANGE);
  /* a core that is not one is an error, not a file name (issue 21) */
  CHECK_EQ_I(sonde_tband_parse_input("x@-1", p, sizeof p, &core), SONDE_E_ARG);
  CHECK_EQ_I(sonde_tband_parse_input("x@2b", p, sizeof p, &core), SONDE_E_ARG);
  CHECK_EQ_I(sonde_tband_parse_input("x@1234567", p, sizeof p, &core), SONDE_E_ARG);
  CHECK_EQ_I(sonde_tband_parse_input("serial:/dev/ttyACM0@115200", p, sizeof p, &core), 0);
  CHECK_EQ_STR(p, "serial:/dev/ttyACM0@115200");
  CHECK_EQ_I(core, -1);
  CHECK_EQ_I(sonde_tband_parse_input("serial:/dev/ttyACM0@115200@1", p, sizeof p, &core), 0);
  CHECK_EQ_STR(p, "serial:/dev/ttyACM0@115200");
  CHECK_EQ_I(core, 1);
  CHECK_EQ_I(sonde_tband_parse_input("tcp:localhost:4000@2", p, sizeof p, &core), 0);
  CHECK_EQ_STR(p, "tcp:localhost:4000");
  CHECK_EQ_I(core, 2);
}

int main(void)
{
  RUN(test_every_event_min_max);
  RUN(test_documented_max_lengths);
  RUN(test_cobs_vectors);
  RUN(test_cobs_block_edges);
  RUN(test_long_frames);
  RUN(test_varlen);
  RUN(test_corrupt);
  RUN(test_hex_input);
  RUN(test_input_spec);
  return check_summary();
}
