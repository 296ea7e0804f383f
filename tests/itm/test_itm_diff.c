/* ITM decoder, differential: the hot path (whole buffers: fast_run, 8-byte
 * loads, packets decoded from tables) against the general path (the same
 * stream fed one byte at a time, so every packet goes through the state
 * machine and decode_packet). The hot path runs three ways: its own choice
 * of loop, and each of its two loops forced (fast_loop for random-looking
 * streams, run_loop with the 5-byte-run and PC+LTS pair loops for regular
 * ones), each in both copies of the hot loops (the baseline-ISA one and,
 * on x86-64 CPUs with BMI2 and AVX2, the one compiled for them), with LTS
 * prescale 1 and 4. On real and fuzzed streams: the fuzz corpus
 * (fuzz/corpus/itm) and the SWO bytes of firmware images run on the VM
 * (`sonde run --swo`, when the firmware is built), plus random chunk sizes
 * and small output arrays. Packets, offsets, timestamps and statistics must
 * be identical. */
#include <dirent.h>
#include <unistd.h>

#include "check.h"
#include "itm/itm_internal.h"
#include "sonde/itm.h"

struct res {
  struct sonde_itm_packet *p;
  size_t n, cap;
  struct sonde_itm_stats st;
};

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (uint32_t)(rs >> 11);
}

/* chunk 0: whole buffer; -1: random chunk sizes (1-100 bytes), -2: random
 * chunk sizes of 200-4199 bytes (the x86-64 mixed loop's blocks need 256);
 * out: `room` packets a call */
static unsigned loop_mode;   /* ITM_LOOP_* for the next decode */
static bool portable;        /* the baseline-ISA copy of the hot loops */
static unsigned ts_prescale = 1;
static bool unsynced;        /* start_unsynced (the parallel test) */

/* End of input: sonde_itm_finish's packets and the statistics into r; frees d. */
static void finish_res(struct sonde_itm *d, struct res *r)
{
  if (r->n + 4 > r->cap) {
    r->cap = r->n + 4;
    r->p = realloc(r->p, r->cap * sizeof *r->p);
  }
  r->n += sonde_itm_finish(d, r->p + r->n, 4);
  r->st = *sonde_itm_stats(d);
  sonde_itm_free(d);
}

static void decode(const uint8_t *s, size_t len, long chunk, size_t room, struct res *r)
{
  struct sonde_itm_config cfg;
  sonde_itm_config_init(&cfg);
  cfg.ts_prescale = ts_prescale;
  cfg.start_unsynced = unsynced;
  struct sonde_itm *d = sonde_itm_new(&cfg);
  itm_force_loop(d, loop_mode);
  if (portable)
    itm_force_portable(d);
  struct sonde_itm_packet buf[600];
  r->n = 0;
  size_t pos = 0;
  while (pos < len) {
    size_t k = chunk == 0    ? len - pos
               : chunk == -1 ? 1 + rnd() % 100
               : chunk == -2 ? 200 + rnd() % 4000
                             : (size_t)chunk;
    if (k > len - pos)
      k = len - pos;
    size_t done = 0;
    while (done < k) {
      size_t used = 0;
      size_t got = sonde_itm_decode(d, s + pos + done, k - done, &used, buf, room);
      if (got > room)
        CHECK_FAIL_("%zu packets written to a room of %zu", got, room);
      if (r->n + got + 4 > r->cap) {
        r->cap = (r->n + got + 4) * 2;
        r->p = realloc(r->p, r->cap * sizeof *r->p);
      }
      memcpy(r->p + r->n, buf, got * sizeof *buf);
      r->n += got;
      done += used;
      if (!got && !used)
        break;
    }
    pos += k;
  }
  finish_res(d, r);
}

static struct res A, B;

static bool same(const struct res *a, const struct res *b)
{
  if (a->n == b->n && !memcmp(a->p, b->p, a->n * sizeof *a->p) &&
      !memcmp(&a->st, &b->st, sizeof a->st))
    return true;
  /* the first record that differs, for the failure message */
  for (size_t i = 0; i < a->n && i < b->n; i++)
    if (memcmp(&a->p[i], &b->p[i], sizeof a->p[i])) {
      const struct sonde_itm_packet *x = &a->p[i], *y = &b->p[i];
      fprintf(stderr,
              "record %zu: offset %llu/%llu ts %llu/%llu value %llx/%llx port %u/%u type %u/%u "
              "size %u/%u flags %u/%u\n",
              i, (unsigned long long)x->offset, (unsigned long long)y->offset,
              (unsigned long long)x->ts, (unsigned long long)y->ts,
              (unsigned long long)x->value, (unsigned long long)y->value, x->port, y->port,
              x->type, y->type, x->size, y->size, x->flags, y->flags);
      break;
    }
  return false;
}

static int streams; /* streams compared */

#ifdef ITM_PAR_TEST
#include "itm_par_check.h"
#else
static void compare_once(const char *what, const uint8_t *s, size_t len)
{
  static const char *loop_name[] = {"auto", "mixed loop", "run loop"};
  loop_mode = ITM_LOOP_AUTO;
  decode(s, len, 1, 600, &A); /* the general path, byte by byte */
  for (unsigned m = 0; m < 2 * (ITM_LOOP_RUN + 1); m++) {
    loop_mode = m % (ITM_LOOP_RUN + 1);
    portable = m > ITM_LOOP_RUN;
    const char *isa = portable ? "portable" : "cpu's";
    decode(s, len, 0, 600, &B);
    if (!same(&A, &B))
      CHECK_FAIL_("%s (%zu bytes, prescale %u, %s, %s): whole buffer: %zu packets, byte by byte: %zu",
                  what, len, ts_prescale, loop_name[loop_mode], isa, B.n, A.n);
    decode(s, len, -1, 2 + rnd() % 40, &B);
    if (!same(&A, &B))
      CHECK_FAIL_("%s (%zu bytes, prescale %u, %s, %s): random chunks differ (%zu vs %zu packets)",
                  what, len, ts_prescale, loop_name[loop_mode], isa, B.n, A.n);
    /* long chunks, output rooms below and above a mixed-loop block */
    decode(s, len, -2, 2 + rnd() % 400, &B);
    if (!same(&A, &B))
      CHECK_FAIL_("%s (%zu bytes, prescale %u, %s, %s): long chunks differ (%zu vs %zu packets)",
                  what, len, ts_prescale, loop_name[loop_mode], isa, B.n, A.n);
  }
  portable = false;
  streams++;
}
#endif

static void compare(const char *what, const uint8_t *s, size_t len)
{
  ts_prescale = 1;
  compare_once(what, s, len);
  ts_prescale = 4;
  compare_once(what, s, len);
#ifdef ITM_PAR_TEST
  unsynced = true; /* and waiting for the first sync, prescale 4 */
  compare_once(what, s, len);
  unsynced = false;
#endif
  ts_prescale = 1;
}

static uint8_t *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0, k;
  uint8_t *b = malloc(cap);
  while ((k = fread(b + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap)
      b = realloc(b, cap *= 2);
  }
  fclose(f);
  *len = n;
  return b;
}

static void test_fuzz_corpus(void)
{
  const char *dir = SONDE_SOURCE_DIR "/fuzz/corpus/itm";
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (!d)
    return;
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len;
    uint8_t *b = slurp(path, &len);
    if (!b)
      continue;
    compare(e->d_name, b, len);
    /* and every suffix start, so packets straddle the 8-byte fast-path edge */
    for (size_t off = 1; off < 16 && off < len; off++)
      compare(e->d_name, b + off, len - off);
    free(b);
    files++;
  }
  closedir(d);
  CHECK(files >= 3);
}

/* SWO of firmware images on the VM: what a user decodes. */
static void test_vm_swo(void)
{
  static const char *fw[] = {"dbg_pc1003", "dbg_excdt", "dbg_gts", "dbg_cmp", "dbg_printf",
                             "dbg_ovf1003"};
  char sonde[1024], elf[1024];
  snprintf(sonde, sizeof sonde, "%s/src/cli/sonde", SONDE_BINARY_DIR);
  int ran = 0;
  for (size_t i = 0; i < sizeof fw / sizeof fw[0]; i++) {
    snprintf(elf, sizeof elf, "%s/firmware/%s.elf", SONDE_BINARY_DIR, fw[i]);
    if (access(elf, R_OK) || access(sonde, X_OK))
      continue;
    char out[] = "/tmp/sonde_itm_diff_XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0)
      continue;
    close(fd);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' run -m cm3 --swo '%s' '%s' >/dev/null 2>&1", sonde, out, elf);
    int rc = system(cmd);
    size_t len = 0;
    uint8_t *b = rc == 0 ? slurp(out, &len) : NULL;
    unlink(out);
    CHECK(b != NULL && len > 0);
    if (!b)
      continue;
    compare(fw[i], b, len);
    free(b);
    ran++;
  }
  if (!ran)
    fprintf(stderr, "note: no firmware built, VM SWO streams skipped\n");
}

/* Long random streams of valid packets with rare corruption. */
static void test_random_streams(void)
{
  static const uint8_t hdr[] = {0x01, 0x02, 0x03, 0x0b, 0x05, 0x0e, 0x15, 0x17, 0x47, 0x4e,
                                0x8d, 0x86, 0xc0, 0xd0, 0x10, 0x70, 0x94, 0xb4, 0x08, 0x88};
  size_t cap = 1 << 20;
  uint8_t *s = malloc(cap);
  for (int iter = 0; iter < 8; iter++) {
    size_t n = 0;
    while (n + 16 < cap) {
      uint32_t v = rnd();
      if (v % 4096 == 0) { /* sync */
        memset(s + n, 0, 5);
        s[n + 5] = 0x80;
        n += 6;
        continue;
      }
      if (iter & 1 && v % 1000 == 1) { /* a random byte: losses and resyncs */
        s[n++] = (uint8_t)(v >> 8);
        continue;
      }
      uint8_t h = hdr[(v >> 4) % sizeof hdr];
      s[n++] = h;
      size_t pay = (h & 3) == 1 ? 1 : (h & 3) == 2 ? 2 : (h & 3) == 3 ? 4 : 0;
      if ((h & 0x0f) == 0 && h & 0x80) /* LTS1: 1-4 bytes with C bits */
        pay = 1 + (v >> 12) % 4;
      if (h == 0x94 || h == 0x88)
        pay = 1 + (v >> 12) % 4;
      if (h == 0xb4)
        pay = 1 + (v >> 12) % 6;
      for (size_t k = 0; k < pay; k++) {
        uint8_t b = (uint8_t)rnd();
        if ((h & 3) == 0)
          b = (uint8_t)((b & 0x7f) | (k + 1 < pay ? 0x80 : 0));
        s[n++] = b;
      }
    }
    compare("random stream", s, n);
  }
  free(s);
}

/* Streams of random packet kinds like bench_itm's "mixed" (what the x86-64
 * mixed loop's blocks are for), with every packet it takes and every one it
 * leaves to its cold path or the general path: instrumentation of 1/2/4
 * bytes on any port, stimulus page changes (1-byte and 2-5-byte extension
 * packets, SH = 0 and 1), LTS1 of 1-4 bytes with any TC, LTS2, overflow,
 * PC samples (sleeping too), exception trace with every FN, event counter
 * bits, data trace, DT match, other hardware sources, GTS1 of 1-4 payload
 * bytes (wrap and clock-change bits), GTS2 of 4 and 6, and rarely a
 * malformed LTS1, GTS1 or GTS2 (no end within its bytes), a reserved
 * header, a random byte, a sync. Style 1 starts without a timestamp and
 * has LTS2 before the first LTS1. */
static size_t mixed_stream(uint8_t *s, size_t cap, unsigned style)
{
  static const uint8_t src[] = {0x01, 0x02, 0x03, 0x0b, 0xfa, 0x79, 0x05, 0x0e, 0x15, 0x17, 0x45,
                                0x47, 0x4e, 0x4f, 0x85, 0x86, 0x87, 0x8d, 0x8e, 0x8f, 0x06, 0x07,
                                0x0d, 0x0f, 0xff, 0x55, 0x9e, 0xbd};
  size_t n = 0;
  if (style == 0) { /* a timestamp first: the loops' "known" state */
    s[n++] = 0xc0;
    s[n++] = 0x11;
  }
  while (n + 16 < cap) {
    uint32_t v = rnd(), r = rnd();
    unsigned c = v % 1000;
    if (style == 2 && c < 500 && (v >> 20 & 1)) /* a third of them GTS and extension */
      c = 700 + c % 200;
    if (c < 450) { /* a source packet */
      uint8_t h = src[(v >> 10) % sizeof src];
      s[n++] = h;
      unsigned size = (h & 3) == 3 ? 4 : h & 3;
      for (unsigned k = 0; k < size; k++)
        s[n++] = (uint8_t)(r >> (8 * k));
    } else if (c < 600) { /* LTS1 of 1-4 bytes, any TC */
      unsigned pay = 1 + (r >> 4) % 4;
      s[n++] = (uint8_t)(0xc0 | (r & 3) << 4);
      for (unsigned k = 0; k < pay; k++)
        s[n++] = (uint8_t)((rnd() & 0x7f) | (k + 1 < pay ? 0x80 : 0));
    } else if (c < 700) { /* LTS2, overflow */
      s[n++] = r & 8 ? 0x70 : (uint8_t)((1 + r % 6) << 4);
    } else if (c < 780) { /* extension: stimulus page (SH = 0) or other (SH = 1) */
      unsigned pay = r & 1 ? 0 : 1 + (r >> 1) % 4;
      s[n++] = (uint8_t)((pay ? 0x80 : 0) | ((r >> 4) & 7) << 4 | 0x08 | (r & 0x100 ? 0x04 : 0));
      for (unsigned k = 0; k < pay; k++)
        s[n++] = (uint8_t)((rnd() & (k == 3 && r & 0x200 ? 0x07 : 0x7f)) | (k + 1 < pay ? 0x80 : 0));
    } else if (c < 850) { /* GTS1 of 1-4 payload bytes */
      unsigned pay = 1 + (r >> 4) % 4;
      s[n++] = 0x94;
      for (unsigned k = 0; k < pay; k++)
        s[n++] = (uint8_t)((rnd() & 0x7f) | (k + 1 < pay ? 0x80 : 0));
    } else if (c < 900) { /* GTS2 of 4 or 6 payload bytes */
      unsigned pay = r & 1 ? 4 : 6;
      s[n++] = 0xb4;
      for (unsigned k = 0; k < pay; k++)
        s[n++] = (uint8_t)((rnd() & 0x7f) | (k + 1 < pay ? 0x80 : 0));
    } else if (c < 990) { /* an exception with every FN, an event counter */
      s[n++] = r & 1 ? 0x0e : 0x05;
      s[n++] = (uint8_t)(r >> 8);
      if (r & 1)
        s[n++] = (uint8_t)(r >> 16);
    } else if (c < 993) { /* malformed: LTS1, GTS1, GTS2 with C set throughout */
      s[n++] = r % 3 == 0 ? 0xd0 : r % 3 == 1 ? 0x94 : 0xb4;
      memset(s + n, 0x81, 7);
      n += 7;
      s[n++] = 0x01;
    } else if (c < 995) {
      s[n++] = (uint8_t)(0x04 | (r & 0xf0)); /* reserved */
    } else if (c < 997) {
      s[n++] = (uint8_t)r; /* a random byte */
    } else {
      memset(s + n, 0, 5); /* sync */
      s[n + 5] = 0x80;
      n += 6;
    }
  }
  return n;
}

/* Output rooms at the edges of the x86-64 mixed loop's walk: below 16
 * records (no block), around MB_POS = 224 (below it the walk checks the
 * room per packet, and the room ends inside a block), whole buffer and
 * long chunks, prescale 4. */
static void compare_rooms(const char *what, const uint8_t *s, size_t len)
{
#ifdef ITM_PAR_TEST
  return; /* the rooms are the sequential loops' business */
#endif
  static const size_t rooms[] = {15, 16, 17, 223, 224, 225, 300, 448, 599};
  ts_prescale = 4;
  loop_mode = ITM_LOOP_AUTO;
  decode(s, len, 1, 600, &A);
  loop_mode = ITM_LOOP_MIXED;
  for (size_t k = 0; k < sizeof rooms / sizeof rooms[0]; k++) {
    decode(s, len, 0, rooms[k], &B);
    if (!same(&A, &B))
      CHECK_FAIL_("%s (%zu bytes): room %zu, whole buffer: %zu packets, byte by byte: %zu", what,
                  len, rooms[k], B.n, A.n);
    decode(s, len, -2, rooms[k], &B);
    if (!same(&A, &B))
      CHECK_FAIL_("%s (%zu bytes): room %zu, long chunks: %zu packets, byte by byte: %zu", what,
                  len, rooms[k], B.n, A.n);
  }
  loop_mode = ITM_LOOP_AUTO;
  ts_prescale = 1;
}

static void test_mixed_streams(void)
{
  size_t cap = 1 << 17;
  uint8_t *s = malloc(cap);
  /* style 2: a third of the packets GTS and extension (the walk's cold path) */
  for (unsigned style = 0; style < 3; style++) {
    for (int iter = 0; iter < 3; iter++) {
      size_t n = mixed_stream(s, cap, style);
      compare("mixed stream", s, n);
      for (size_t cut = 1; cut < 6; cut++)
        compare("mixed stream, cut", s, n - cut * 13 - iter);
      compare_rooms("mixed stream", s, n);
    }
  }
  /* 1-byte packets only (LTS2, overflow, stimulus pages): a packet at
   * every position, the most a block can hold against the room */
  s[0] = 0x10;
  for (size_t k = 1; k < 20000; k++) {
    uint32_t r = rnd();
    s[k] = r % 50 == 0 ? (uint8_t)(0x08 | (r >> 8 & 7) << 4)
           : r % 7 == 0 ? 0x70 : (uint8_t)((1 + (r >> 8) % 6) << 4);
  }
  compare("1-byte packets", s, 20000);
  compare_rooms("1-byte packets", s, 20000);
  free(s);
}

/* Regular streams, what the run loops are for, with every way to leave a
 * run: runs of 5-byte packets (instrumentation on any port and page, PC
 * samples, data trace), PC + LTS1 pairs with 1-4 byte timestamps, sleep
 * samples (alone, and in place of a PC before its LTS1), 32-bit writes with
 * LTS1 of 1-4 bytes (one or two in a row), malformed LTS1 (C set in the
 * last byte), LTS2, page changes, long runs of pairs with one source
 * header and one LTS1 TC (style 4: pairs_run's key, its output bound),
 * syncs, overflow and random bytes; whole and cut at every length near the
 * end, so runs meet the 8-byte edge and the output room. */
static size_t regular_stream(uint8_t *s, size_t cap, unsigned style)
{
  static const uint8_t h5[] = {0x03, 0x0b, 0xfb, 0x17, 0x47, 0x4f, 0x87, 0x8f, 0x07, 0x1f};
  static const uint8_t h4[] = {0x17, 0x03, 0x47, 0x8f, 0xfb};
  static unsigned n4;
  uint8_t key_h = h4[n4 % sizeof h4], key_tc = (uint8_t)(n4++ % 4);
  size_t n = 0;
  while (n + 24 < cap) {
    uint32_t v = rnd();
    unsigned pick = v % 1000;
    if (style == 4) {
      /* a pair with the run's key (a sleeping one in 16, with the same
       * TC), now and then another TC or header, rarely anything else */
      if (pick < 60) {
        s[n++] = 0x15;
        s[n++] = (uint8_t)(pick < 30 ? 0 : rnd());
      } else {
        s[n++] = pick < 970 ? key_h : h4[(v >> 12) % sizeof h4];
        for (int k = 0; k < 4; k++)
          s[n++] = (uint8_t)rnd();
      }
      s[n++] = (uint8_t)(0xc0 | (pick < 990 ? key_tc : v >> 24 & 3) << 4);
      s[n++] = (uint8_t)(0x80 | rnd());
      s[n++] = (uint8_t)(rnd() & 0x7f);
      if (pick < 6) /* overflow, LTS2, stimulus page 1, back to page 0 */
        s[n++] = pick == 0 ? 0x70 : pick == 1 ? 0x30 : pick == 2 ? 0x18 : 0x08;
      continue;
    }
    uint8_t h = style == 0                ? 0x17
                : style == 1 || style == 3 ? (uint8_t)(0x03 | (v >> 12 & 31) << 3)
                                           : h5[(v >> 12) % sizeof h5];
    if (style == 0 && pick >= 900 && pick < 960) {
      /* a sleeping sample (any payload byte) in place of the PC: the pair
       * loop takes it with the LTS1 that follows */
      s[n++] = 0x15;
      s[n++] = (uint8_t)(pick < 930 ? 0 : rnd());
    } else {
      s[n++] = h;
      for (int k = 0; k < 4; k++)
        s[n++] = (uint8_t)rnd();
    }
    if (style == 0 || (style == 2 && v & 0x100)) { /* an LTS1 after the sample */
      unsigned pay = pick < 900 ? 2 : 1 + (v >> 20) % 4;
      s[n++] = (uint8_t)(0xc0 | (v >> 24 & 3) << 4);
      for (unsigned k = 0; k < pay; k++)
        s[n++] = (uint8_t)((rnd() & 0x7f) | (k + 1 < pay ? 0x80 : 0));
    } else if (style == 1 && v % 8 == 0) {
      s[n++] = (uint8_t)(0xc0 | (v >> 24 & 3) << 4);
      s[n++] = (uint8_t)(rnd() & 0x7f);
    } else if (style == 3 && v % 6 == 0) {
      /* LTS1 of 1-4 bytes, any TC, now and then two in a row (the
       * x86-64 copy's run5 takes a write and an LTS1 without a branch) */
      for (unsigned t = 0; t < 1 + (v >> 8 & 7) / 7; t++) {
        unsigned pay = 1 + (rnd() >> 7) % 4;
        s[n++] = (uint8_t)(0xc0 | (v >> 24 & 3) << 4);
        for (unsigned k = 0; k < pay; k++)
          s[n++] = (uint8_t)((rnd() & 0x7f) | (k + 1 < pay ? 0x80 : 0));
      }
    }
    if (pick < 8) { /* sleeping sample */
      s[n++] = 0x15;
      s[n++] = 0;
    } else if (pick < 12) { /* malformed LTS1: all four payload bytes have C = 1 */
      s[n++] = 0xc0;
      memset(s + n, 0x81, 4);
      n += 4;
    } else if (pick < 16) { /* stimulus page change (0..7) */
      s[n++] = (uint8_t)(0x08 | (v >> 16 & 7) << 4);
    } else if (pick < 18) {
      s[n++] = 0x30; /* LTS2 */
    } else if (pick < 20) {
      s[n++] = 0x70; /* overflow */
    } else if (pick < 22) {
      memset(s + n, 0, 5); /* sync */
      s[n + 5] = 0x80;
      n += 6;
    } else if (pick < 23) {
      s[n++] = (uint8_t)(v >> 8); /* a random byte */
    }
  }
  return n;
}

static void test_regular_streams(void)
{
  size_t cap = 1 << 18;
  uint8_t *s = malloc(cap);
  for (unsigned style = 0; style < 5; style++) {
    for (int iter = 0; iter < 3; iter++) {
      size_t n = regular_stream(s, cap, style);
      compare("regular stream", s, n);
      for (size_t cut = 1; cut < 12; cut++)
        compare("regular stream, cut", s, n - cut * 7 - iter);
    }
  }
  free(s);
}

int main(void)
{
  RUN(test_fuzz_corpus);
  RUN(test_vm_swo);
  RUN(test_random_streams);
  RUN(test_regular_streams);
  RUN(test_mixed_streams);
#ifdef ITM_PAR_TEST
  par_tests();
#endif
  fprintf(stderr, "%d streams compared\n", streams);
  return check_summary();
}
