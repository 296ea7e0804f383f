/* test_itm_par: sonde_itm_decode_parallel against the sequential decoder
 * (sonde_itm_decode over the whole buffer, then sonde_itm_finish): packets
 * and statistics byte for byte. It is test_itm_diff.c built with
 * ITM_PAR_TEST, so it runs over every stream that test uses (the fuzz
 * corpus and its suffixes, firmware SWO from the VM, random, regular and
 * mixed streams), at prescale 1 and 4 and waiting for the first sync, with
 * chunks from 1 byte (a chunk boundary inside every packet, sync run,
 * overflow run and loss) to 64 KiB, with 1, 2, 3 and 8 threads, and after a
 * sequential start of 0-49 bytes (so the first chunk starts in any state);
 * then the tests of par_tests. */

static struct sonde_itm_par_stats par_sum; /* all parallel decodes */
/* chunks of >= 257 bytes of streams without a loss, not waiting for sync:
 * speculative, joined */
static uint64_t big_spec, big_joined;
static bool clean; /* the stream being compared has no loss */
static size_t mixed_stream(uint8_t *s, size_t cap, unsigned style);

static int par_sink(void *user, const struct sonde_itm_packet *p, size_t n)
{
  struct res *r = user;
  if (!n)
    CHECK_FAIL_("sink called with 0 packets");
  if (r->n + n + 4 > r->cap) {
    r->cap = (r->n + n + 4) * 2;
    r->p = realloc(r->p, r->cap * sizeof *r->p);
  }
  memcpy(r->p + r->n, p, n * sizeof *p);
  r->n += n;
  return 0;
}

/* `pre` bytes through sonde_itm_decode, the rest in parallel, then finish. */
static void decode_par(const uint8_t *s, size_t len, size_t pre, size_t chunk, unsigned threads,
                       struct res *r)
{
  struct sonde_itm_config cfg;
  sonde_itm_config_init(&cfg);
  cfg.ts_prescale = ts_prescale;
  cfg.start_unsynced = unsynced;
  struct sonde_itm *d = sonde_itm_new(&cfg);
  struct sonde_itm_packet buf[64];
  r->n = 0;
  size_t pos = 0;
  while (pos < pre) {
    size_t used = 0;
    size_t got = sonde_itm_decode(d, s + pos, pre - pos, &used, buf, 64);
    if (got)
      par_sink(r, buf, got);
    pos += used;
  }
  struct sonde_itm_par_config pc;
  sonde_itm_par_config_init(&pc);
  pc.threads = threads;
  pc.chunk_bytes = chunk;
  struct sonde_itm_par_stats ps;
  int rc = sonde_itm_decode_parallel(d, s + pre, len - pre, &pc, par_sink, r, &ps);
  if (rc)
    CHECK_FAIL_("sonde_itm_decode_parallel returned %d", rc);
  par_sum.chunks += ps.chunks;
  par_sum.joined += ps.joined;
  par_sum.exact += ps.exact;
  par_sum.walk_bytes += ps.walk_bytes;
  if (chunk >= 257 && clean && !unsynced) {
    big_spec += ps.chunks - ps.exact;
    big_joined += ps.joined;
  }
  if (ps.threads > par_sum.threads)
    par_sum.threads = ps.threads;
  finish_res(d, r);
}

static struct res A2;

static void compare_once(const char *what, const uint8_t *s, size_t len)
{
  static const struct {
    size_t chunk;
    unsigned threads;
  } runs[] = {{1, 2},    {2, 3},    {3, 8},      {5, 2}, {7, 3},  {13, 8}, {64, 2},
              {257, 3},  {1000, 8}, {4096, 2},   {65536, 3}, {0, 8}, {100, 1}};
  loop_mode = ITM_LOOP_AUTO;
  decode(s, len, 0, 600, &A);
  for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
    size_t l = len;
    const struct res *ref = &A;
    if (runs[k].chunk < 64 && len > 3000) { /* tiny chunks: a prefix */
      l = 3000;
      decode(s, l, 0, 600, &A2);
      ref = &A2;
    }
    size_t pre = l && rnd() % 3 == 0 ? rnd() % (l < 50 ? l : 50) : 0;
    clean = ref->st.losses == 0;
    itm_par_force_speculation(k % 2 == 0);
    decode_par(s, l, pre, runs[k].chunk, runs[k].threads, &B);
    itm_par_force_speculation(false);
    if (!same(ref, &B))
      CHECK_FAIL_("%s (%zu bytes, prescale %u%s): parallel, chunk %zu, %u threads, %zu bytes "
                  "first: %zu packets, sequential: %zu",
                  what, l, ts_prescale, unsynced ? ", unsynced" : "", runs[k].chunk,
                  runs[k].threads, pre, B.n, ref->n);
  }
  streams++;
}

/* Every chunk size from 1 to 40 bytes over short streams with all kinds of
 * state at the boundaries: long sync runs, runs of overflow packets, zero
 * runs that are not syncs, losses, pages, global timestamps. */
static void test_par_every_chunk(void)
{
  uint8_t s[2048];
  size_t n = 0;
  static const uint8_t head[] = {0x17, 1, 2, 3, 4, 0x70, 0x70, 0x70, 0x70, 0x70, 0x70, 0x70,
                                 0xc0, 0x85, 0x01, 0x28, 0x03, 1, 2, 3, 4, 0x94, 0x81, 0x82,
                                 0x03, 0xb4, 0x81, 0x81, 0x81, 0x01, 0x0b, 0x11, 0x22, 0x33,
                                 0x44, 0x00, 0x00, 0x00, 0x01, 0x03, 5, 6, 7, 8};
  memcpy(s + n, head, sizeof head); /* ... and a zero run that is not a sync: a loss */
  n += sizeof head;
  memset(s + n, 0, 30); /* a long sync */
  n += 30;
  s[n++] = 0x80;
  while (n + 40 < sizeof s) {
    uint32_t v = rnd();
    switch (v % 9) {
    case 0: memset(s + n, 0x70, 1 + v / 16 % 20); n += 1 + v / 16 % 20; break;
    case 1: memset(s + n, 0, 5 + v / 16 % 12); n += 5 + v / 16 % 12; s[n++] = 0x80; break;
    case 2: s[n++] = (uint8_t)(0x08 | (v >> 8 & 7) << 4); break;
    case 3: s[n++] = 0xc0 | (v >> 8 & 0x30); s[n++] = 0x80 | (v >> 12 & 0x7f); s[n++] = v >> 20 & 0x7f; break;
    case 4: s[n++] = 0x94; s[n++] = 0x80 | (v >> 8 & 0x7f); s[n++] = v >> 16 & 0x7f; break;
    case 5: s[n++] = (uint8_t)(v >> 8); break; /* anything */
    case 6: s[n++] = 0; s[n++] = 0; s[n++] = (uint8_t)(v >> 8 | 1); break; /* not a sync */
    default:
      s[n++] = (uint8_t)(0x03 | (v >> 8 & 31) << 3);
      for (int k = 0; k < 4; k++)
        s[n++] = (uint8_t)rnd();
    }
  }
  for (unsigned pass = 0; pass < 4; pass++) {
    ts_prescale = pass & 1 ? 4 : 1;
    unsynced = pass >= 2;
    decode(s, n, 0, 600, &A);
    for (size_t chunk = 1; chunk <= 40; chunk++) {
      static const unsigned th[] = {2, 3, 8};
      itm_par_force_speculation(chunk % 2 == 0);
      decode_par(s, n, chunk % 5 == 0 ? chunk / 5 : 0, chunk, th[chunk % 3], &B);
      itm_par_force_speculation(false);
      if (!same(&A, &B))
        CHECK_FAIL_("hand-built stream (prescale %u%s): chunk %zu: %zu packets, sequential: %zu",
                    ts_prescale, unsynced ? ", unsynced" : "", chunk, B.n, A.n);
    }
  }
  ts_prescale = 1;
  unsynced = false;
}

/* Random bytes (losses everywhere, joins rare) and zeros only. */
static void test_par_random_bytes(void)
{
  size_t len = 1 << 16;
  uint8_t *s = malloc(len);
  for (int iter = 0; iter < 4; iter++) {
    for (size_t i = 0; i < len; i++)
      s[i] = iter == 3 ? 0 : (uint8_t)rnd();
    decode(s, len, 0, 600, &A);
    static const size_t chunks[] = {1, 9, 100, 4096};
    for (size_t k = 0; k < 4; k++) {
      size_t l = chunks[k] < 64 ? 5000 : len;
      decode(s, l, 0, 600, &A2);
      itm_par_force_speculation(true);
      decode_par(s, l, 0, chunks[k], 2 + (unsigned)k, &B);
      itm_par_force_speculation(false);
      if (!same(&A2, &B))
        CHECK_FAIL_("random bytes %d: chunk %zu: %zu packets, sequential: %zu", iter, chunks[k],
                    B.n, A2.n);
    }
  }
  free(s);
}

struct stop_ctx {
  struct res *r;
  size_t after;
};

static int stop_sink(void *user, const struct sonde_itm_packet *p, size_t n)
{
  struct stop_ctx *x = user;
  par_sink(x->r, p, n);
  return x->r->n >= x->after ? 7 : 0;
}

/* A sink that stops: its value comes back, and what it got is a prefix of
 * the sequential packets. */
static void test_par_sink_stops(void)
{
  size_t cap = 1 << 17;
  uint8_t *s = malloc(cap);
  size_t n = mixed_stream(s, cap, 0);
  decode(s, n, 0, 600, &A);
  for (unsigned threads = 1; threads <= 3; threads++) {
    struct sonde_itm *d = sonde_itm_new(NULL);
    struct stop_ctx x = {&B, A.n / 3};
    B.n = 0;
    struct sonde_itm_par_config pc = {threads, 4000};
    int rc = sonde_itm_decode_parallel(d, s, n, &pc, stop_sink, &x, NULL);
    CHECK(rc == 7);
    CHECK(B.n >= A.n / 3 && B.n < A.n);
    CHECK(!memcmp(A.p, B.p, B.n * sizeof *B.p));
    sonde_itm_free(d);
  }
  free(s);
}

/* What the parallel decodes did: the test proves something only if both
 * ways were taken (joins, and walks of the exact decoder). */
static void test_par_summary(void)
{
  fprintf(stderr,
          "parallel decodes: %llu chunks, %llu joined, %llu exact, %llu bytes walked by the "
          "exact decoder, up to %u threads; chunks of >= 257 bytes without a loss: %llu speculative, "
          "%llu joined\n",
          (unsigned long long)par_sum.chunks, (unsigned long long)par_sum.joined,
          (unsigned long long)par_sum.exact, (unsigned long long)par_sum.walk_bytes,
          par_sum.threads, (unsigned long long)big_spec, (unsigned long long)big_joined);
  CHECK(big_spec > 1000 && big_joined * 100 >= big_spec * 99);
  CHECK(par_sum.joined > 100000);
  CHECK(par_sum.walk_bytes > 0);
  CHECK(par_sum.threads >= 3);
}

static void par_tests(void)
{
  RUN(test_par_every_chunk);
  RUN(test_par_random_bytes);
  RUN(test_par_sink_stops);
  RUN(test_par_summary);
}
