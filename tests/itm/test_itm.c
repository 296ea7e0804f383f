/* ITM/DWT packet decoder tests: hand-built streams for every packet type of
 * ARMv7-M ARM Appendix D4 / ARMv8-M D1, checked field by field, including
 * the ones other tools get wrong (GTS1/GTS2, page extension, PC sleep
 * 0x15 0x00, LTS with every TC value, data trace for every comparator);
 * streaming split at every byte; loss, resync and truncation with offsets;
 * random input. The expected values come from the bit layouts in the spec,
 * written out by hand below, not from the decoder. */
#include "check.h"

#include "itm/itm_fast.h"
#include "itm/itm_mix.h"
#include "itm/itm_table.h"
#include "sonde/itm.h"

#define MAXP 4096

struct res {
  struct sonde_itm_packet p[MAXP];
  size_t n;
  struct sonde_itm_stats st;
};

/* Decode `len` bytes fed in chunks of `chunk` bytes (0 = all at once) with an
 * output array of `cap` packets; then finish. */
static void decode(const uint8_t *s, size_t len, size_t chunk, size_t cap,
                   const struct sonde_itm_config *cfg, struct res *r)
{
  struct sonde_itm *d = sonde_itm_new(cfg);
  r->n = 0;
  size_t pos = 0;
  if (!chunk)
    chunk = len ? len : 1;
  while (pos < len) {
    size_t k = len - pos < chunk ? len - pos : chunk;
    size_t done = 0;
    while (done < k) {
      size_t used = 0;
      size_t room = MAXP - r->n < cap ? MAXP - r->n : cap;
      size_t got = sonde_itm_decode(d, s + pos + done, k - done, &used, r->p + r->n, room);
      r->n += got;
      done += used;
      if (!got && !used)
        break;
    }
    pos += k;
  }
  r->n += sonde_itm_finish(d, r->p + r->n, MAXP - r->n);
  r->st = *sonde_itm_stats(d);
  sonde_itm_free(d);
}

static struct res R, R2;

#define P(i) (&R.p[i])
#define CHECK_PKT(i, ty, off, sz, prt, fl, val)                                            \
  do {                                                                                     \
    REQUIRE((size_t)(i) < R.n);                                                            \
    CHECK_EQ_STR(sonde_itm_type_name(P(i)->type), sonde_itm_type_name(ty));                \
    CHECK_EQ_U(P(i)->offset, (off));                                                       \
    CHECK_EQ_U(P(i)->size, (sz));                                                          \
    CHECK_EQ_U(P(i)->port, (prt));                                                         \
    CHECK_EQ_U(P(i)->flags, (fl));                                                         \
    CHECK_EQ_U(P(i)->value, (val));                                                        \
  } while (0)

static void test_table_matches_spec(void)
{
  /* Re-derive each header's class from D4.2 "Packet types" */
  for (unsigned h = 0; h < 256; h++) {
    const struct itm_hdr *e = &itm_hdr_table[h];
    unsigned want;
    if (h == 0)
      want = K_ZERO;
    else if (h == 0x70)
      want = K_OVF;
    else if (h & 3)
      want = (h & 4) ? ((h & 3) == 1 ? K_HW1 : (h & 3) == 2 ? K_HW2 : K_HW4)
                     : ((h & 3) == 1 ? K_SW1 : (h & 3) == 2 ? K_SW2 : K_SW4);
    else if ((h & 0x8f) == 0x00)
      want = K_LTS2; /* 0TTT0000, TTT != 000, 111 */
    else if ((h & 0xcf) == 0xc0)
      want = K_LTS1; /* 11TC0000 */
    else if ((h & 0x0b) == 0x08)
      want = K_EXT;  /* CEEE1S00 */
    else if (h == 0x94)
      want = K_GTS1;
    else if (h == 0xb4)
      want = K_GTS2;
    else
      want = K_RES;
    if (e->kind != want)
      CHECK_FAIL_("header 0x%02x: kind %u, want %u", h, e->kind, want);
    if ((want == K_SW1 || want == K_SW2 || want == K_SW4) && e->port != (h >> 3))
      CHECK_FAIL_("header 0x%02x: port %u", h, e->port);
  }
}

static void test_sync_overflow_sw(void)
{
  const uint8_t s[] = {
      0x00, 0x00, 0x00, 0x00, 0x00, 0x80,       /* 0: sync (6 bytes) */
      0x70,                                     /* 6: overflow */
      0x01, 0x41,                               /* 7: port 0, 1 byte 'A' */
      0x2a, 0x34, 0x12,                         /* 9: port 5, 2 bytes 0x1234 */
      0xfb, 0x78, 0x56, 0x34, 0x12,             /* 12: port 31, 4 bytes */
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* 17: sync of 8 bytes */
  };
  decode(s, sizeof s, 0, MAXP, NULL, &R);
  REQUIRE(R.n == 6);
  CHECK_PKT(0, SONDE_ITM_SYNC, 0, 6, 0, 0, 6);
  CHECK_PKT(1, SONDE_ITM_OVERFLOW, 6, 0, 0, 0, 0);
  CHECK_PKT(2, SONDE_ITM_SW, 7, 1, 0, 0, 0x41);
  CHECK_PKT(3, SONDE_ITM_SW, 9, 2, 5, 0, 0x1234);
  CHECK_PKT(4, SONDE_ITM_SW, 12, 4, 31, 0, 0x12345678);
  CHECK_PKT(5, SONDE_ITM_SYNC, 17, 8, 0, 0, 8);
  CHECK_EQ_U(P(2)->ts, SONDE_ITM_TS_UNKNOWN);
  CHECK_EQ_U(R.st.bytes, sizeof s);
  CHECK_EQ_U(R.st.packets[SONDE_ITM_SW], 3);
  CHECK_EQ_U(R.st.packets[SONDE_ITM_SYNC], 2);
  CHECK_EQ_U(R.st.skipped_bytes, 0);
}

static void test_page_extension(void)
{
  const uint8_t s[] = {
      0x19, 0x07,             /* 0: port 3 (page 0) */
      0x28,                   /* 2: extension SH=0 EX=2: page 2 */
      0x19, 0x08,             /* 3: port 2*32+3 = 67 */
      0xfa, 0x01, 0x00,       /* 5: port 2*32+31 = 95, 2 bytes */
      0x98, 0x01,             /* 8: extension C=1 EX[2:0]=1, EX[9:3]=1: page 9 */
      0x09, 0x01,             /* 10: port 9*32+1 = 289 */
      0x0c,                   /* 12: extension SH=1 (hardware), EX=0 */
      0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* 13: sync: page back to 0 */
      0x19, 0x09,             /* 19: port 3 */
      0x78,                   /* 21: page 7 (highest single-byte page) */
      0xf9, 0xff,             /* 22: port 7*32+31 = 255 */
  };
  decode(s, sizeof s, 0, MAXP, NULL, &R);
  REQUIRE(R.n == 11);
  CHECK_PKT(0, SONDE_ITM_SW, 0, 1, 3, 0, 7);
  CHECK_PKT(1, SONDE_ITM_PAGE, 2, 0, 0, 0, 2);
  CHECK_PKT(2, SONDE_ITM_SW, 3, 1, 67, 0, 8);
  CHECK_PKT(3, SONDE_ITM_SW, 5, 2, 95, 0, 1);
  CHECK_PKT(4, SONDE_ITM_PAGE, 8, 1, 0, 0, 9);
  CHECK_PKT(5, SONDE_ITM_SW, 10, 1, 289, 0, 1);
  CHECK_PKT(6, SONDE_ITM_EXT, 12, 0, 0, 1, 0);
  CHECK_PKT(7, SONDE_ITM_SYNC, 13, 6, 0, 0, 6);
  CHECK_PKT(8, SONDE_ITM_SW, 19, 1, 3, 0, 9);
  CHECK_PKT(9, SONDE_ITM_PAGE, 21, 0, 0, 0, 7);
  CHECK_PKT(10, SONDE_ITM_SW, 22, 1, 255, 0, 0xff);
}

static void test_local_timestamps(void)
{
  const uint8_t s[] = {
      0x10, 0x20, 0x30, 0x40, 0x50, 0x60,     /* 0..5: LTS2 deltas 1..6 (sum 21) */
      0xc0, 0x05,                             /* 6: LTS1 TC=0 delta 5 */
      0xd0, 0x81, 0x01,                       /* 8: TC=1 delta 1 + 1<<7 = 129 */
      0xe0, 0xff, 0xff, 0x7f,                 /* 11: TC=2 delta 2^21 - 1 */
      0xf0, 0x80, 0x80, 0x80, 0x01,           /* 15: TC=3 delta 1<<21 */
      0x01, 0x55,                             /* 20: port 0: ts = sum so far */
      0xc0, 0xff, 0xff, 0xff, 0x7f,           /* 22: TC=0 max delta 2^28 - 1 */
  };
  decode(s, sizeof s, 0, MAXP, NULL, &R);
  REQUIRE(R.n == 12);
  uint64_t t = 0;
  for (unsigned i = 0; i < 6; i++) {
    t += i + 1;
    CHECK_PKT(i, SONDE_ITM_LTS, i, 0, 0, SONDE_ITM_LTS2, i + 1);
    CHECK_EQ_U(P(i)->ts, t);
  }
  CHECK_PKT(6, SONDE_ITM_LTS, 6, 1, 0, 0, 5);
  CHECK_EQ_U(P(6)->ts, t += 5);
  CHECK_PKT(7, SONDE_ITM_LTS, 8, 2, 0, 1, 129);
  CHECK_EQ_U(P(7)->ts, t += 129);
  CHECK_PKT(8, SONDE_ITM_LTS, 11, 3, 0, 2, (1u << 21) - 1);
  CHECK_EQ_U(P(8)->ts, t += (1u << 21) - 1);
  CHECK_PKT(9, SONDE_ITM_LTS, 15, 4, 0, 3, 1u << 21);
  CHECK_EQ_U(P(9)->ts, t += 1u << 21);
  CHECK_PKT(10, SONDE_ITM_SW, 20, 1, 0, 0, 0x55);
  CHECK_EQ_U(P(10)->ts, t);
  CHECK_PKT(11, SONDE_ITM_LTS, 22, 4, 0, 0, (1u << 28) - 1);
  CHECK_EQ_U(P(11)->ts, t + (1u << 28) - 1);

  /* prescaler: deltas count TSPrescale cycles */
  struct sonde_itm_config c;
  sonde_itm_config_init(&c);
  c.ts_prescale = 16;
  const uint8_t s2[] = {0x30, 0xc0, 0x02};
  decode(s2, sizeof s2, 0, MAXP, &c, &R);
  REQUIRE(R.n == 2);
  CHECK_EQ_U(P(0)->ts, 48);
  CHECK_EQ_U(P(1)->ts, 80);
  CHECK_EQ_U(P(1)->value, 2);
}

static void test_global_timestamps(void)
{
  const uint8_t s[] = {
      0x94, 0x85, 0x80, 0x80, 0x60,           /* 0: GTS1 full: TS=5, Wrap, ClkCh */
      0xb4, 0x81, 0x80, 0x80, 0x00,           /* 5: GTS2 48-bit: TS[47:26] = 1 */
      0x94, 0x03,                             /* 10: GTS1 short: low 7 bits = 3 */
      0x94, 0xff, 0xff, 0xff, 0x1f,           /* 12: GTS1 full: 2^26 - 1, no flags */
      0xb4, 0x80, 0x80, 0x80, 0x80, 0x80, 0x04, /* 17: GTS2 64-bit: TS[63:26] = 4<<35 */
      0x94, 0xaa, 0x55,                       /* 24: GTS1 2 bytes: low 14 bits */
  };
  decode(s, sizeof s, 0, MAXP, NULL, &R);
  REQUIRE(R.n == 6);
  CHECK_PKT(0, SONDE_ITM_GTS, 0, 4, 0, SONDE_ITM_GTS_WRAP | SONDE_ITM_GTS_CLKCH, 5);
  CHECK_PKT(1, SONDE_ITM_GTS, 5, 4, 0, SONDE_ITM_GTS2, (1ull << 26) | 5);
  CHECK_PKT(2, SONDE_ITM_GTS, 10, 1, 0, 0, (1ull << 26) | 3);
  CHECK_PKT(3, SONDE_ITM_GTS, 12, 4, 0, 0, (1ull << 26) | ((1ull << 26) - 1));
  uint64_t hi = 4ull << 35 << 26; /* = 1 << 63 */
  CHECK_EQ_U(hi, 1ull << 63);
  CHECK_PKT(4, SONDE_ITM_GTS, 17, 6, 0, SONDE_ITM_GTS2, hi | ((1ull << 26) - 1));
  /* low 14 bits = 0x2a | 0x55 << 7 = 0x2aaa; bits 25:14 stay all ones */
  CHECK_PKT(5, SONDE_ITM_GTS, 24, 2, 0, 0, hi | ((1ull << 26) - 1 - 0x3fff) | 0x2aaa);
}

static void test_hardware_packets(void)
{
  const uint8_t s[] = {
      0x05, 0x3f,                         /* 0: event counter: all six bits */
      0x05, 0x20,                         /* 2: Cyc only */
      0x05, 0x01,                         /* 4: CPI only */
      0x0e, 0x0f, 0x10,                   /* 6: exception 15 entered */
      0x0e, 0x2f, 0x21,                   /* 9: exception 0x12f exited */
      0x0e, 0x00, 0x30,                   /* 12: returned to thread (0) */
      0x17, 0x21, 0x43, 0x00, 0x08,       /* 15: PC sample 0x08004321 */
      0x15, 0x00,                         /* 20: PC sample, sleeping */
      0x1d, 0x07,                         /* 22: reserved discriminator 3 */
  };
  decode(s, sizeof s, 0, MAXP, NULL, &R);
  REQUIRE(R.n == 9);
  CHECK_PKT(0, SONDE_ITM_EVCNT, 0, 1, 0, 0x3f, 0x3f);
  CHECK_PKT(1, SONDE_ITM_EVCNT, 2, 1, 0, SONDE_ITM_EV_CYC, 0x20);
  CHECK_PKT(2, SONDE_ITM_EVCNT, 4, 1, 0, SONDE_ITM_EV_CPI, 0x01);
  CHECK_PKT(3, SONDE_ITM_EXC, 6, 2, 0, SONDE_ITM_EXC_ENTER, 15);
  CHECK_PKT(4, SONDE_ITM_EXC, 9, 2, 0, SONDE_ITM_EXC_EXIT, 0x12f);
  CHECK_PKT(5, SONDE_ITM_EXC, 12, 2, 0, SONDE_ITM_EXC_RETURN, 0);
  CHECK_PKT(6, SONDE_ITM_PC, 15, 4, 0, 0, 0x08004321);
  CHECK_PKT(7, SONDE_ITM_PC_SLEEP, 20, 1, 0, 0, 0);
  CHECK_PKT(8, SONDE_ITM_HW, 22, 1, 3, 0, 7);
  char buf[16];
  CHECK_EQ_STR(sonde_itm_exception_name(15, buf, sizeof buf), "SysTick");
  CHECK_EQ_STR(sonde_itm_exception_name(11, buf, sizeof buf), "SVCall");
  CHECK_EQ_STR(sonde_itm_exception_name(0x12f, buf, sizeof buf), "IRQ287");
  CHECK_EQ_STR(sonde_itm_exception_name(9, buf, sizeof buf), "Reserved9");
}

static void test_data_trace_every_comparator(void)
{
  uint8_t s[256];
  size_t n = 0;
  for (unsigned c = 0; c < 4; c++) {
    unsigned pcid = 8 + 2 * c, adid = 9 + 2 * c, rid = 16 + 2 * c, wid = 17 + 2 * c;
    s[n++] = (uint8_t)(pcid << 3 | 4 | 3); /* PC value, 4 bytes */
    s[n++] = (uint8_t)(0x10 + c); s[n++] = 0x32; s[n++] = 0x00; s[n++] = 0x08;
    s[n++] = (uint8_t)(adid << 3 | 4 | 2); /* address offset, 2 bytes */
    s[n++] = (uint8_t)(0x40 + c); s[n++] = 0x12;
    s[n++] = (uint8_t)(rid << 3 | 4 | 1);  /* data value read, 1 byte */
    s[n++] = (uint8_t)(0xa0 + c);
    s[n++] = (uint8_t)(wid << 3 | 4 | 2);  /* data value write, 2 bytes */
    s[n++] = 0x34; s[n++] = (uint8_t)(0x12 + c);
    s[n++] = (uint8_t)(wid << 3 | 4 | 3);  /* data value write, 4 bytes */
    s[n++] = 0x78; s[n++] = 0x56; s[n++] = 0x34; s[n++] = (uint8_t)(0x12 + c);
    s[n++] = (uint8_t)(pcid << 3 | 4 | 1); /* ARMv8-M data trace match, 1 byte */
    s[n++] = 0x01;
    s[n++] = (uint8_t)(adid << 3 | 4 | 3); /* ARMv8-M full data address */
    s[n++] = 0x00; s[n++] = 0x10; s[n++] = 0x00; s[n++] = (uint8_t)(0x20 + c);
  }
  decode(s, n, 0, MAXP, NULL, &R);
  REQUIRE(R.n == 28);
  size_t off = 0;
  for (unsigned c = 0; c < 4; c++) {
    size_t b = c * 7;
    CHECK_PKT(b + 0, SONDE_ITM_DT_PC, off, 4, c, 0, 0x08003210u + c);
    CHECK_PKT(b + 1, SONDE_ITM_DT_ADDR, off + 5, 2, c, 0, 0x1240u + c);
    CHECK_PKT(b + 2, SONDE_ITM_DT_DATA, off + 8, 1, c, 0, 0xa0u + c);
    CHECK_PKT(b + 3, SONDE_ITM_DT_DATA, off + 10, 2, c, SONDE_ITM_DT_WRITE, 0x1234u + (c << 8));
    CHECK_PKT(b + 4, SONDE_ITM_DT_DATA, off + 13, 4, c, SONDE_ITM_DT_WRITE,
              0x12345678u + (c << 24));
    CHECK_PKT(b + 5, SONDE_ITM_DT_MATCH, off + 18, 1, c, 0, 1);
    CHECK_PKT(b + 6, SONDE_ITM_DT_ADDR, off + 20, 4, c, 0, 0x20001000u + (c << 24));
    off += 25;
  }
}

static void test_loss_and_resync(void)
{
  const uint8_t s[] = {
      0x01, 0x11,                   /* 0: port 0 */
      0x04,                         /* 2: reserved header: sync lost */
      0x01, 0x22, 0x33, 0x00, 0x00, /* 3: garbage incl. a short zero run */
      0x80,                         /* 8: 0x80 after 2 zeros: not a sync */
      0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* 9: sync */
      0x01, 0x44,                   /* 15: port 0 */
      0xc0, 0x80, 0x80, 0x80, 0x80, /* 17: LTS1 with C=1 in its 4th payload byte */
      0x01, 0x55,                   /* 22: skipped */
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* 24: sync */
      0x00, 0x00, 0x01,             /* 31: broken sync run while synced */
      0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* 34: sync */
      0x03, 0x01, 0x02,             /* 40: 4-byte SW packet cut off by the end */
  };
  decode(s, sizeof s, 0, MAXP, NULL, &R);
  REQUIRE(R.n == 9);
  CHECK_PKT(0, SONDE_ITM_SW, 0, 1, 0, 0, 0x11);
  CHECK_PKT(1, SONDE_ITM_SKIP, 2, 0, 0, SONDE_ITM_SKIP_HEADER, 7);
  CHECK_PKT(2, SONDE_ITM_SYNC, 9, 6, 0, 0, 6);
  CHECK_PKT(3, SONDE_ITM_SW, 15, 1, 0, 0, 0x44);
  CHECK_PKT(4, SONDE_ITM_SKIP, 17, 0, 0, SONDE_ITM_SKIP_MALFORMED, 7);
  CHECK_PKT(5, SONDE_ITM_SYNC, 24, 7, 0, 0, 7);
  CHECK_PKT(6, SONDE_ITM_SKIP, 31, 0, 0, SONDE_ITM_SKIP_SYNC, 3);
  CHECK_PKT(7, SONDE_ITM_SYNC, 34, 6, 0, 0, 6);
  CHECK_PKT(8, SONDE_ITM_SKIP, 40, 0, 0, SONDE_ITM_SKIP_TRUNCATED, 3);
  CHECK_EQ_U(R.st.skipped_bytes, 7 + 7 + 3 + 3);
  CHECK_EQ_U(R.st.losses, 4);
  REQUIRE(R.n >= 9);

  /* start_unsynced: everything before the first sync is skipped */
  struct sonde_itm_config c;
  sonde_itm_config_init(&c);
  c.start_unsynced = true;
  const uint8_t s2[] = {0x01, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x66};
  decode(s2, sizeof s2, 1, MAXP, &c, &R);
  REQUIRE(R.n == 3);
  CHECK_PKT(0, SONDE_ITM_SKIP, 0, 0, 0, SONDE_ITM_SKIP_START, 3);
  CHECK_PKT(1, SONDE_ITM_SYNC, 3, 6, 0, 0, 6);
  CHECK_PKT(2, SONDE_ITM_SW, 9, 1, 0, 0, 0x66);
}

/* A long mixed stream built from all the above; decoding it with every
 * chunk size and a tiny output array gives the same packets. */
static uint8_t mixed[8192];
static size_t mixed_len;

static void build_mixed(void)
{
  static const uint8_t parts[][8] = {
      {6, 0, 0, 0, 0, 0, 0x80}, {2, 0x01, 0x41}, {3, 0x2a, 0x34, 0x12},
      {5, 0xfb, 1, 2, 3, 4},    {1, 0x70},       {2, 0x28, 0}, /* len 1 page (see below) */
      {2, 0xc0, 0x05},          {3, 0xd0, 0x81, 0x01},         {5, 0x94, 0x85, 0x80, 0x80, 0x60},
      {7, 0xb4, 0x81, 0x80, 0x80, 0x80, 0x80, 0x04},           {2, 0x05, 0x3f},
      {3, 0x0e, 0x0f, 0x10},    {5, 0x17, 0x21, 0x43, 0x00, 0x08}, {2, 0x15, 0x00},
      {5, 0x47, 1, 2, 3, 4},    {3, 0x4e, 0x40, 0x12},         {2, 0x85, 0xa0},
      {5, 0x9f, 1, 2, 3, 4},    {1, 0x30},       {2, 0x98, 0x01},
      {3, 0x04, 0x01, 0x02},    /* reserved header + garbage: loss */
  };
  unsigned x = 12345;
  mixed_len = 0;
  while (mixed_len + 16 < sizeof mixed) {
    x = x * 1103515245 + 12345;
    unsigned k = (x >> 16) % (sizeof parts / sizeof parts[0]);
    unsigned l = parts[k][0];
    if (parts[k][1] == 0x28)
      l = 1;
    memcpy(mixed + mixed_len, &parts[k][1], l);
    mixed_len += l;
  }
}

static bool same(const struct res *a, const struct res *b)
{
  return a->n == b->n && !memcmp(a->p, b->p, a->n * sizeof a->p[0]) &&
         !memcmp(&a->st, &b->st, sizeof a->st);
}

static void test_split_anywhere(void)
{
  build_mixed();
  decode(mixed, mixed_len, 0, MAXP, NULL, &R);
  CHECK(R.n > 500);
  CHECK(R.st.losses > 10);
  CHECK(R.n < MAXP);
  for (size_t chunk = 1; chunk <= 17; chunk++) {
    decode(mixed, mixed_len, chunk, MAXP, NULL, &R2);
    if (!same(&R, &R2))
      CHECK_FAIL_("chunk %zu differs (%zu vs %zu packets)", chunk, R2.n, R.n);
  }
  for (size_t cap = 2; cap <= 5; cap++) {
    decode(mixed, mixed_len, 0, cap, NULL, &R2);
    if (!same(&R, &R2))
      CHECK_FAIL_("cap %zu differs", cap);
  }
  /* every two-way split */
  struct sonde_itm *d = sonde_itm_new(NULL);
  for (size_t cut = 0; cut <= 600; cut++) {
    sonde_itm_reset(d);
    R2.n = 0;
    size_t used;
    R2.n += sonde_itm_decode(d, mixed, cut, &used, R2.p, MAXP);
    CHECK_EQ_U(used, cut);
    R2.n += sonde_itm_decode(d, mixed + cut, mixed_len - cut, &used, R2.p + R2.n, MAXP - R2.n);
    R2.n += sonde_itm_finish(d, R2.p + R2.n, MAXP - R2.n);
    R2.st = *sonde_itm_stats(d);
    if (!same(&R, &R2)) {
      CHECK_FAIL_("split at %zu differs", cut);
      break;
    }
  }
  sonde_itm_free(d);
  /* statistics add up: every byte is in a packet or skipped */
  uint64_t total = 0;
  for (unsigned t = 0; t < SONDE_ITM_TYPE_COUNT; t++)
    total += R.st.packets[t];
  CHECK_EQ_U(total, R.n);
  /* no-malloc variant behaves the same */
  static uint64_t mem[64];
  REQUIRE(sonde_itm_sizeof() <= sizeof mem);
  struct sonde_itm *s = sonde_itm_init(mem, sizeof mem, NULL);
  REQUIRE(s != NULL);
  size_t used;
  R2.n = sonde_itm_decode(s, mixed, mixed_len, &used, R2.p, MAXP);
  R2.n += sonde_itm_finish(s, R2.p + R2.n, MAXP - R2.n);
  R2.st = *sonde_itm_stats(s);
  CHECK(same(&R, &R2));
  CHECK(sonde_itm_init(mem, 8, NULL) == NULL);
}

/* What the run loops of src/itm/itm.c take from itm_fast.h without looking:
 * every header xxxxxx11 is a 5-byte packet with all fields fixed by the
 * header (no flag bits from the payload, no timestamp), counted in its
 * type's lane; every LTS1 header is kind 2; lanes name distinct types. */
static void test_run_loop_table(void)
{
  for (unsigned h = 0; h < 256; h++) {
    const struct itm_fast *e = &itm_fast_table[h];
    if ((h & 3) == 3) {
      CHECK_EQ_U(e->kind, 1);
      CHECK_EQ_U(e->len, 5);
      CHECK_EQ_U(e->fm, 0);
      CHECK_EQ_U(e->lts2, 0);
      CHECK_EQ_U((unsigned)(e->meta >> 24 & 0xff), 4u); /* size */
      CHECK_EQ_U(e->vmask, 0xffffffffu);
      uint64_t inc = itm_lane_inc[e->type];
      unsigned lane = (unsigned)__builtin_ctzll(inc) / 8;
      CHECK(inc != 0 && inc == 1ull << (8 * lane));
      CHECK(lane < sizeof itm_lane_type && itm_lane_type[lane] == e->type);
      CHECK_EQ_U((unsigned)(e->meta >> 16 & 0xff), e->type);
    }
    if ((h & 0xcf) == 0xc0)
      CHECK_EQ_U(e->kind, 2);
  }
  CHECK_EQ_U(itm_lane_type[6], SONDE_ITM_LTS);
  CHECK_EQ_U(ITM_LANE(SONDE_ITM_LTS), 1ull << 48);
  /* the pair loop's sleeping sample: header 0x15, 1 payload byte as value */
  const struct itm_fast *e = &itm_fast_table[0x15];
  CHECK_EQ_U(e->kind, 1);
  CHECK_EQ_U(e->type, SONDE_ITM_PC_SLEEP);
  CHECK_EQ_U(e->fm, 0);
  CHECK_EQ_U(e->pgmask, 0);
  CHECK_EQ_U(e->meta, (uint64_t)SONDE_ITM_PC_SLEEP << 16 | 1u << 24);
  CHECK_EQ_U(itm_lane_type[7], SONDE_ITM_PC_SLEEP);
  CHECK_EQ_U(ITM_LANE(SONDE_ITM_PC_SLEEP), 1ull << 56);
}

/* itm_mix.h (the x86-64 mixed loop's blocks) against itm_fast.h: the same
 * meta, type and page mask for every header of kinds 1 and 2, the pext mask
 * taking exactly the payload bits as value (vmask's after the header byte,
 * an LTS1's 7 bits a byte, an LTS2's TS[2:0] from the header), the time
 * mask only for timestamps; every other header all zero (the cold path).
 * And what the blocks OR into meta: the size is length - 1 for kind 1. */
static void test_mix_table(void)
{
  for (unsigned h = 0; h < 256; h++) {
    const struct itm_fast *f = &itm_fast_table[h];
    const struct itm_mix *m = &itm_mix_table[h];
    if (f->kind != 1 && f->kind != 2) {
      CHECK(!m->meta && !m->pm && !m->tsm && !m->pgmask && !m->type);
      continue;
    }
    CHECK_EQ_U(m->meta, f->meta);
    CHECK_EQ_U(m->type, f->type);
    CHECK_EQ_U(m->pgmask, f->pgmask);
    uint64_t pm = f->kind == 2 ? 0x7f7f7f7f00ull : f->lts2 ? 0x70 : (uint64_t)f->vmask << 8;
    CHECK_EQ_U(m->pm, pm);
    CHECK_EQ_U(m->tsm, f->type == SONDE_ITM_LTS ? pm : 0);
    if (f->lts2)
      CHECK_EQ_U((h >> 4) & 7, f->lts2);
    if (f->kind == 1)
      CHECK_EQ_U((unsigned)(f->meta >> 24 & 0xff), f->len - 1u);
  }
}

/* Every header byte, followed by payloads with every continuation pattern:
 * the hot path (whole buffer) and the general path (one byte at a time)
 * give identical packets. */
static void test_fast_equals_general(void)
{
  static const uint8_t pays[][6] = {
      {0x85, 0x80, 0x80, 0x60, 0x11, 0x22}, {0x05, 0x11, 0x22, 0x33, 0x44, 0x55},
      {0xff, 0x7f, 0x01, 0x02, 0x03, 0x04}, {0x81, 0x82, 0x03, 0x04, 0x05, 0x06},
      {0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, {0x2f, 0x21, 0x10, 0x00, 0x08, 0x09},
      {0x00, 0x30, 0x00, 0x00, 0x00, 0x00}, {0xff, 0xff, 0xff, 0x7f, 0x00, 0x01},
  };
  for (unsigned h = 1; h < 256; h++) {
    for (size_t k = 0; k < sizeof pays / sizeof pays[0]; k++) {
      uint8_t s[32];
      size_t n = 0;
      s[n++] = 0xc0; /* an LTS first so ts is known */
      s[n++] = 0x03;
      s[n++] = (uint8_t)h;
      memcpy(s + n, pays[k], 6);
      n += 6;
      /* then a known packet and a sync, so a loss ends the same way */
      static const uint8_t tail[] = {0x01, 0x42, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x43};
      memcpy(s + n, tail, sizeof tail);
      n += sizeof tail;
      decode(s, n, 0, MAXP, NULL, &R);
      decode(s, n, 1, MAXP, NULL, &R2);
      if (!same(&R, &R2))
        CHECK_FAIL_("header 0x%02x payload %zu: whole-buffer and byte-wise decoding differ", h, k);
    }
  }
}

static void test_random_bytes(void)
{
  static uint8_t buf[1 << 20];
  static struct sonde_itm_packet out[512];
  unsigned x = 777;
  for (int round = 0; round < 4; round++) {
    for (size_t i = 0; i < sizeof buf; i++) {
      x = x * 1664525 + 1013904223;
      buf[i] = (uint8_t)(x >> 24);
      if (round & 1 && (x & 0x300) == 0)
        buf[i] = 0; /* more zeros: more sync attempts */
    }
    /* a sync and a known packet at the end: decoding must recover there */
    static const uint8_t tail[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x5a};
    memcpy(buf + sizeof buf - sizeof tail, tail, sizeof tail);
    struct sonde_itm *d = sonde_itm_new(NULL);
    size_t pos = 0;
    struct sonde_itm_packet last = {0};
    uint64_t skipped = 0, pkts = 0, types = 0;
    while (pos < sizeof buf) {
      size_t used;
      size_t k = 1 + (x % 4096);
      x = x * 1664525 + 1013904223;
      if (k > sizeof buf - pos)
        k = sizeof buf - pos;
      size_t n = sonde_itm_decode(d, buf + pos, k, &used, out, 512);
      for (size_t i = 0; i < n; i++) {
        CHECK(out[i].type >= SONDE_ITM_SYNC && out[i].type < SONDE_ITM_TYPE_COUNT);
        CHECK(out[i].offset < sizeof buf);
        if (out[i].type == SONDE_ITM_SKIP)
          skipped += out[i].value;
        last = out[i];
        types |= 1ull << out[i].type;
      }
      pkts += n;
      pos += used;
    }
    const struct sonde_itm_stats *st = sonde_itm_stats(d);
    CHECK_EQ_U(st->bytes, sizeof buf);
    CHECK_EQ_U(st->skipped_bytes, skipped);
    CHECK(sonde_itm_synced(d));
    CHECK(pkts >= 3); /* random bytes lose sync at once; the tail sync recovers */
    CHECK(types & (1ull << SONDE_ITM_SKIP));
    CHECK_EQ_U(last.type, SONDE_ITM_SW);
    CHECK_EQ_U(last.value, 0x5a);
    CHECK_EQ_U(last.offset, sizeof buf - 2);
    sonde_itm_free(d);
  }
}

int main(void)
{
  RUN(test_table_matches_spec);
  RUN(test_sync_overflow_sw);
  RUN(test_page_extension);
  RUN(test_local_timestamps);
  RUN(test_global_timestamps);
  RUN(test_hardware_packets);
  RUN(test_data_trace_every_comparator);
  RUN(test_loss_and_resync);
  RUN(test_split_anywhere);
  RUN(test_fast_equals_general);
  RUN(test_run_loop_table);
  RUN(test_mix_table);
  RUN(test_random_bytes);
  return check_summary();
}
