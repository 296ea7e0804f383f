/* SWO line decoder tests: UART and Manchester waveforms from the generator in
 * wavegen.h at several bauds, sample rates (down to 3 samples/bit) and baud
 * errors (+-3%), fed in chunks of every size; bit errors; auto-detection;
 * option parsing. (The sigrok-cli cross-check is tests/swo/sigrok_compare.sh.) */
#include "check.h"

#include "sonde/swo.h"
#include "wavegen.h"

static uint64_t rs = 0x1234567887654321ull;
static uint32_t rnd(void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (uint32_t)rs;
}

struct errlog {
  unsigned n;
  struct sonde_swo_line_error e[256];
};
static void on_err(void *ctx, const struct sonde_swo_line_error *e)
{
  struct errlog *l = ctx;
  if (l->n < 256)
    l->e[l->n] = *e;
  l->n++;
}

/* Decode with random chunk sizes (chunk_max 0 = whole buffer) and a small
 * output buffer to exercise the "out full" path. Returns bytes decoded. */
static size_t decode(const struct sonde_swo_line_config *cfg, const uint8_t *s, size_t n,
                     uint8_t *out, size_t cap, size_t chunk_max, struct sonde_swo_line_stats *st,
                     struct errlog *log, size_t out_step)
{
  struct sonde_swo_line *l = NULL;
  struct sonde_diag d = {{0}};
  if (sonde_swo_line_new(cfg, &l, &d) != 0) {
    fprintf(stderr, "line_new: %s\n", d.msg);
    return (size_t)-1;
  }
  if (log)
    sonde_swo_line_set_error_callback(l, on_err, log);
  size_t o = 0, i = 0;
  while (i < n) {
    size_t k = chunk_max ? 1 + rnd() % chunk_max : n - i;
    if (k > n - i)
      k = n - i;
    size_t done = 0;
    while (done < k) {
      size_t c = 0;
      size_t room = cap - o;
      if (out_step && room > out_step)
        room = out_step;
      o += sonde_swo_line_feed(l, s + i + done, k - done, &c, out + o, room);
      done += c;
      if (o >= cap)
        break;
    }
    i += k;
  }
  size_t f;
  while ((f = sonde_swo_line_finish(l, out + o, cap - o)) > 0)
    o += f;
  if (st)
    sonde_swo_line_get_stats(l, st);
  sonde_swo_line_free(l);
  return o;
}

static void uart_case(double rate, double baud, double err, unsigned ch, size_t nbytes,
                      double gap, size_t chunk)
{
  uint8_t *data = malloc(nbytes), *out = malloc(nbytes + 16);
  for (size_t i = 0; i < nbytes; i++)
    data[i] = (uint8_t)rnd();
  struct wavegen g;
  wg_init(&g, rate, baud, err, ch, 0xFF, rnd() | 1, (rnd() % 1000) / 1000.0);
  wg_uart(&g, data, nbytes, gap);
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = SONDE_SWO_LINE_UART;
  cfg.baud = (uint32_t)baud;
  cfg.sample_rate_hz = (uint64_t)rate;
  cfg.channel = ch;
  struct sonde_swo_line_stats st;
  size_t n = decode(&cfg, g.buf, g.n, out, nbytes + 16, chunk, &st, NULL, 7);
  if (n != nbytes || memcmp(out, data, nbytes) != 0 || st.framing_errors || st.glitches)
    fprintf(stderr, "  uart rate %.0f baud %.0f err %+.3f ch %u chunk %zu: got %zu/%zu, "
                    "%llu framing, %llu glitches\n",
            rate, baud, err, ch, chunk, n, nbytes, (unsigned long long)st.framing_errors,
            (unsigned long long)st.glitches);
  CHECK_EQ_U(n, nbytes);
  CHECK(n == nbytes && memcmp(out, data, nbytes) == 0);
  CHECK_EQ_U(st.framing_errors, 0);
  CHECK_EQ_U(st.bytes, nbytes);
  CHECK_EQ_U(st.samples, g.n);
  free(g.buf);
  free(data);
  free(out);
}

static void test_uart_rates(void)
{
  /* 3 samples per bit, exact and +-3% */
  uart_case(6e6, 2e6, 0, 0, 3000, 0, 0);
  uart_case(6e6, 2e6, +0.03, 1, 3000, 0, 0);
  uart_case(6e6, 2e6, -0.03, 2, 3000, 0, 0);
  uart_case(6e6, 2e6, +0.03, 3, 3000, 2.5, 97);
  uart_case(6e6, 2e6, -0.03, 4, 3000, 2.5, 5);
  /* non-integer oversampling */
  uart_case(3.2e6, 1e6, 0, 5, 3000, 1.3, 1);
  uart_case(1e6, 115200, +0.02, 6, 1000, 3, 333);
  uart_case(24e6, 2e6, -0.03, 7, 3000, 0.7, 4096);
  uart_case(24e6, 2e6, +0.03, 0, 3000, 0.7, 4096);
  uart_case(48e6, 12e6, 0, 0, 3000, 0.2, 0);
  uart_case(100e6, 921600, 0.01, 3, 500, 4, 10000);
  /* many phases at the 3 samples/bit limit */
  for (int k = 0; k < 20; k++)
    uart_case(3e6, 1e6, (k & 1) ? 0.03 : -0.03, k % 8, 200, (k % 3) * 0.5, 1 + k * 3);
}

/* An inverted line (a level shifter that inverts) with invert = true. */
static void test_uart_inverted(void)
{
  enum { N = 500 };
  uint8_t data[N], out[N + 8];
  for (size_t i = 0; i < N; i++)
    data[i] = (uint8_t)rnd();
  struct wavegen g;
  wg_init(&g, 8e6, 2e6, 0.02, 6, 0x3, 11, 0.1);
  wg_uart(&g, data, N, 1);
  for (size_t i = 0; i < g.n; i++)
    g.buf[i] ^= 1u << 6;
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = SONDE_SWO_LINE_UART;
  cfg.baud = 2000000;
  cfg.sample_rate_hz = 8000000;
  cfg.channel = 6;
  cfg.invert = true;
  struct sonde_swo_line_stats st;
  size_t n = decode(&cfg, g.buf, g.n, out, sizeof out, 50, &st, NULL, 0);
  CHECK_EQ_U(n, N);
  CHECK(n == N && memcmp(out, data, N) == 0);
  /* Not inverted: garbage, but no crash and errors are counted. */
  cfg.invert = false;
  decode(&cfg, g.buf, g.n, out, sizeof out, 0, &st, NULL, 0);
  CHECK(st.framing_errors + st.breaks + st.glitches > 0);
  free(g.buf);
}

static void test_uart_framing_errors(void)
{
  /* Bytes with a LOW stop bit: a framing error each, at a known sample. */
  struct wavegen g;
  wg_init(&g, 8e6, 1e6, 0, 0, 0, 7, 0);
  wg_level(&g, 1, 80);
  size_t frame1 = (size_t)ceil(g.t);
  wg_uart_byte(&g, 0x41);
  wg_level(&g, 1, 8);
  size_t bad = (size_t)ceil(g.t);
  wg_level(&g, 0, 8);        /* start */
  for (int i = 0; i < 8; i++)
    wg_level(&g, (0x5A >> i) & 1, 8);
  wg_level(&g, 0, 8);        /* stop LOW: framing error */
  wg_level(&g, 1, 24);
  size_t brk = (size_t)ceil(g.t);
  wg_level(&g, 0, 8 * 30);   /* break */
  wg_level(&g, 1, 24);
  wg_uart_byte(&g, 0x42);    /* recovers */
  wg_level(&g, 1, 80);
  (void)frame1;
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = SONDE_SWO_LINE_UART;
  cfg.baud = 1000000;
  cfg.sample_rate_hz = 8000000;
  uint8_t out[16];
  struct sonde_swo_line_stats st;
  struct errlog log = {0};
  size_t n = decode(&cfg, g.buf, g.n, out, sizeof out, 0, &st, &log, 0);
  CHECK_EQ_U(n, 2);
  CHECK_EQ_U(out[0], 0x41);
  CHECK_EQ_U(out[1], 0x42);
  CHECK_EQ_U(st.framing_errors, 1);
  CHECK_EQ_U(st.breaks, 1);
  REQUIRE(log.n == 2);
  CHECK_EQ_U(log.e[0].kind, SONDE_SWO_LINE_ERR_FRAMING);
  CHECK_EQ_U(log.e[0].sample_offset, bad);
  CHECK_EQ_U(log.e[0].byte_offset, 1);
  CHECK_EQ_U(log.e[1].kind, SONDE_SWO_LINE_ERR_BREAK);
  CHECK_EQ_U(log.e[1].sample_offset, brk);
  CHECK_EQ_U(st.first_error_sample, bad);
  CHECK_EQ_U(st.last_error_sample, brk);
  free(g.buf);
}

/* Random bit errors in a UART waveform: never a crash, errors counted, and
 * the decoder resynchronises: a clean tail decodes exactly. */
static void test_uart_bit_errors(void)
{
  enum { N = 4000, TAIL = 500 };
  static uint8_t data[N], out[N * 2];
  for (size_t i = 0; i < N; i++)
    data[i] = (uint8_t)rnd();
  struct wavegen g;
  wg_init(&g, 10e6, 2e6, 0.01, 2, 0x0F, 99, 0.3);
  wg_uart(&g, data, N, 1.5);
  size_t tail_start = g.n;
  (void)tail_start;
  /* corrupt the first 80% of the samples */
  size_t lim = g.n * 8 / 10;
  for (int k = 0; k < 300; k++)
    g.buf[rnd() % lim] ^= 1u << 2;
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = SONDE_SWO_LINE_UART;
  cfg.baud = 2000000;
  cfg.sample_rate_hz = 10000000;
  cfg.channel = 2;
  struct sonde_swo_line_stats st;
  struct errlog log = {0};
  size_t n = decode(&cfg, g.buf, g.n, out, sizeof out, 1000, &st, &log, 0);
  CHECK(n >= TAIL);
  CHECK(st.framing_errors + st.glitches + st.breaks > 0);
  CHECK_EQ_U(log.n, st.framing_errors + st.glitches + st.breaks);
  CHECK(n >= TAIL && memcmp(out + n - TAIL, data + N - TAIL, TAIL) == 0);
  CHECK(st.first_error_sample < lim);
  free(g.buf);
}

static void man_case(double rate, double baud, double err, unsigned ch, size_t nbytes,
                     size_t chunk)
{
  uint8_t *data = malloc(nbytes), *out = malloc(nbytes + 16);
  for (size_t i = 0; i < nbytes; i++)
    data[i] = (uint8_t)rnd();
  struct wavegen g;
  wg_init(&g, rate, baud, err, ch, 0xFF, rnd() | 1, (rnd() % 1000) / 1000.0);
  wg_manchester(&g, data, nbytes, 1.0);
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = SONDE_SWO_LINE_MANCHESTER;
  cfg.baud = (uint32_t)baud;
  cfg.sample_rate_hz = (uint64_t)rate;
  cfg.channel = ch;
  struct sonde_swo_line_stats st;
  size_t n = decode(&cfg, g.buf, g.n, out, nbytes + 16, chunk, &st, NULL, 5);
  if (n != nbytes || memcmp(out, data, nbytes) != 0 || st.framing_errors || st.glitches)
    fprintf(stderr, "  manchester rate %.0f baud %.0f err %+.3f chunk %zu: got %zu/%zu, "
                    "%llu framing, %llu glitches\n",
            rate, baud, err, chunk, n, nbytes, (unsigned long long)st.framing_errors,
            (unsigned long long)st.glitches);
  CHECK_EQ_U(n, nbytes);
  CHECK(n == nbytes && memcmp(out, data, nbytes) == 0);
  CHECK_EQ_U(st.framing_errors, 0);
  CHECK_EQ_U(st.glitches, 0);
  free(g.buf);
  free(data);
  free(out);
}

static void test_manchester(void)
{
  man_case(8e6, 1e6, 0, 0, 3000, 0);
  man_case(8e6, 1e6, 0.03, 1, 3000, 13);
  man_case(8e6, 1e6, -0.03, 2, 3000, 1);
  man_case(24e6, 2e6, 0.03, 3, 3000, 4096);
  man_case(24e6, 2e6, -0.03, 4, 3000, 77);
  man_case(4e6, 1e6, 0, 5, 2000, 9);
  man_case(100e6, 6e6, 0.01, 7, 2000, 1000);
}

/* Manchester: a packet cut mid-byte is a framing error at its start sample;
 * an invalid symbol (HIGH for a whole bit) is a glitch; decoding recovers. */
static void test_manchester_errors(void)
{
  struct wavegen g;
  wg_init(&g, 16e6, 1e6, 0, 0, 0, 5, 0);
  wg_level(&g, 0, 64);
  const uint8_t a[2] = {0x12, 0x34};
  wg_man_packet(&g, a, 2);
  wg_level(&g, 0, 48);
  size_t cut = (size_t)ceil(g.t);
  wg_level(&g, 1, 8); /* start */
  wg_level(&g, 0, 8);
  for (int k = 0; k < 5; k++) { /* only 5 bits */
    wg_level(&g, 1, 8);
    wg_level(&g, 0, 8);
  }
  wg_level(&g, 0, 48);
  size_t bad = (size_t)ceil(g.t);
  wg_level(&g, 1, 8); /* start */
  wg_level(&g, 0, 8);
  wg_level(&g, 1, 40); /* HIGH far too long: invalid */
  wg_level(&g, 0, 64);
  const uint8_t b[3] = {0xA5, 0x00, 0xFF};
  wg_man_packet(&g, b, 3);
  wg_level(&g, 0, 64);
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = SONDE_SWO_LINE_MANCHESTER;
  cfg.baud = 1000000;
  cfg.sample_rate_hz = 16000000;
  uint8_t out[16];
  struct sonde_swo_line_stats st;
  struct errlog log = {0};
  size_t n = decode(&cfg, g.buf, g.n, out, sizeof out, 0, &st, &log, 0);
  const uint8_t want[] = {0x12, 0x34, 0xA5, 0x00, 0xFF};
  CHECK_EQ_U(n, 5);
  CHECK_EQ_MEM(out, want, 5);
  CHECK_EQ_U(st.framing_errors, 1);
  CHECK_EQ_U(st.glitches, 1);
  CHECK_EQ_U(st.packets, 4);
  REQUIRE(log.n == 2);
  CHECK_EQ_U(log.e[0].kind, SONDE_SWO_LINE_ERR_FRAMING);
  CHECK_EQ_U(log.e[0].sample_offset, cut);
  CHECK_EQ_U(log.e[1].kind, SONDE_SWO_LINE_ERR_GLITCH);
  CHECK_EQ_U(log.e[1].sample_offset, bad);
  free(g.buf);
}

/* Manchester with random bit errors: no crash, errors counted, clean tail. */
static void test_manchester_bit_errors(void)
{
  enum { N = 3000, TAIL = 300 };
  static uint8_t data[N], out[N * 2];
  for (size_t i = 0; i < N; i++)
    data[i] = (uint8_t)rnd();
  struct wavegen g;
  wg_init(&g, 16e6, 2e6, 0, 1, 0, 3, 0.5);
  wg_manchester(&g, data, N, 1.5);
  size_t lim = g.n * 8 / 10;
  for (int k = 0; k < 200; k++)
    g.buf[rnd() % lim] ^= 1u << 1;
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = SONDE_SWO_LINE_MANCHESTER;
  cfg.baud = 2000000;
  cfg.sample_rate_hz = 16000000;
  cfg.channel = 1;
  struct sonde_swo_line_stats st;
  size_t n = decode(&cfg, g.buf, g.n, out, sizeof out, 333, &st, NULL, 0);
  CHECK(st.framing_errors + st.glitches > 0);
  CHECK(n >= TAIL && memcmp(out + n - TAIL, data + N - TAIL, TAIL) == 0);
  free(g.buf);
}

/* Auto-detection of baud and mode from the waveform alone. */
static void detect_case(enum sonde_swo_line_mode m, double rate, double baud, double err)
{
  enum { N = 4000 };
  static uint8_t data[N], out[N + 16];
  for (size_t i = 0; i < N; i++)
    data[i] = (uint8_t)rnd();
  struct wavegen g;
  wg_init(&g, rate, baud, err, 3, 0x10, rnd() | 1, 0.25);
  if (m == SONDE_SWO_LINE_UART)
    wg_uart(&g, data, N, 2);
  else
    wg_manchester(&g, data, N, 1.5);
  enum sonde_swo_line_mode dm;
  uint32_t db;
  CHECK_EQ_I(sonde_swo_line_detect(g.buf, g.n, 3, (uint64_t)rate, SONDE_SWO_LINE_AUTO, &dm, &db),
             0);
  CHECK_EQ_U(dm, m);
  if (err == 0)
    CHECK_EQ_U(db, (uint32_t)baud);
  else
    CHECK(fabs(db - baud * (1 + err)) < 0.01 * baud);
  /* The streaming decoder with mode AUTO and baud 0 gives every byte. */
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.sample_rate_hz = (uint64_t)rate;
  cfg.channel = 3;
  cfg.detect_window = 200000; /* smaller than the capture: detection mid-stream */
  struct sonde_swo_line_stats st;
  size_t n = decode(&cfg, g.buf, g.n, out, sizeof out, 7777, &st, NULL, 0);
  CHECK(st.detected);
  CHECK_EQ_U(st.mode, m);
  CHECK_EQ_U(n, N);
  CHECK(n == N && memcmp(out, data, N) == 0);
  free(g.buf);
}

static void test_detect(void)
{
  static uint8_t data[300];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (uint8_t)rnd();
  detect_case(SONDE_SWO_LINE_UART, 24e6, 2e6, 0);
  detect_case(SONDE_SWO_LINE_UART, 16e6, 115200, 0);
  detect_case(SONDE_SWO_LINE_UART, 12e6, 1e6, 0.025);
  detect_case(SONDE_SWO_LINE_MANCHESTER, 24e6, 2e6, 0);
  detect_case(SONDE_SWO_LINE_MANCHESTER, 50e6, 1e6, -0.02);
  /* UART whose longest run is LOW (a break, no idle at the ends): the long
   * HIGH pulses still say UART. */
  {
    struct wavegen g;
    wg_init(&g, 10e6, 1e6, 0, 0, 0, 5, 0);
    for (size_t i = 0; i < 300; i++)
      wg_uart_byte(&g, data[i]);
    wg_level(&g, 0, 400);
    for (size_t i = 0; i < 300; i++)
      wg_uart_byte(&g, data[i]);
    enum sonde_swo_line_mode dm2;
    uint32_t db2;
    CHECK_EQ_I(sonde_swo_line_detect(g.buf, g.n, 0, 10000000, SONDE_SWO_LINE_AUTO, &dm2, &db2), 0);
    CHECK_EQ_U(dm2, SONDE_SWO_LINE_UART);
    CHECK_EQ_U(db2, 1000000);
    free(g.buf);
  }
  /* Silence for three whole detection windows, then a signal, all in one
   * feed with consumed == NULL: the silent windows are dropped, the signal
   * decoded completely (UART, then Manchester). */
  for (int man = 0; man < 2; man++) {
    struct wavegen g;
    wg_init(&g, 8e6, 1e6, 0, 0, 0, 5, 0);
    wg_level(&g, man ? 0 : 1, 3 * 1024);
    if (man) {
      for (size_t i = 0; i < 300; i += 4) {
        wg_man_packet(&g, data + i, 4);
        wg_level(&g, 0, 12);
      }
    } else {
      for (size_t i = 0; i < 300; i++)
        wg_uart_byte(&g, data[i]);
    }
    wg_level(&g, man ? 0 : 1, 64);
    struct sonde_swo_line_config c2;
    sonde_swo_line_config_init(&c2);
    c2.sample_rate_hz = 8000000;
    c2.detect_window = 1024;
    struct sonde_swo_line *l2 = NULL;
    REQUIRE(sonde_swo_line_new(&c2, &l2, NULL) == 0);
    size_t cap = sonde_swo_line_out_bound(l2, g.n);
    uint8_t *o2 = malloc(cap);
    size_t n2 = sonde_swo_line_feed(l2, g.buf, g.n, NULL, o2, cap);
    size_t f;
    while ((f = sonde_swo_line_finish(l2, o2 + n2, cap - n2)) > 0)
      n2 += f;
    CHECK_EQ_U(n2, 300);
    CHECK(n2 == 300 && memcmp(o2, data, 300) == 0);
    struct sonde_swo_line_stats st2;
    sonde_swo_line_get_stats(l2, &st2);
    CHECK_EQ_U(st2.samples, g.n);
    CHECK_EQ_U(st2.baud, 1000000);
    CHECK_EQ_U(st2.mode, man ? SONDE_SWO_LINE_MANCHESTER : SONDE_SWO_LINE_UART);
    free(o2);
    sonde_swo_line_free(l2);
    free(g.buf);
  }
  /* No signal at all: detection fails cleanly. */
  uint8_t flat[4096];
  memset(flat, 0xFF, sizeof flat);
  enum sonde_swo_line_mode dm;
  uint32_t db;
  CHECK_EQ_I(sonde_swo_line_detect(flat, sizeof flat, 0, 1000000, SONDE_SWO_LINE_AUTO, &dm, &db),
             SONDE_E_FORMAT);
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.sample_rate_hz = 1000000;
  struct sonde_swo_line *l = NULL;
  REQUIRE(sonde_swo_line_new(&cfg, &l, NULL) == 0);
  uint8_t out[64];
  CHECK_EQ_U(sonde_swo_line_feed(l, flat, sizeof flat, NULL, out, sizeof out), 0);
  CHECK_EQ_U(sonde_swo_line_finish(l, out, sizeof out), 0);
  struct sonde_swo_line_stats st;
  sonde_swo_line_get_stats(l, &st);
  CHECK(!st.detected);
  CHECK(strstr(sonde_swo_line_error_detail(l), "no SWO signal") != NULL);
  sonde_swo_line_free(l);
}

static void test_parse(void)
{
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  struct sonde_diag d = {{0}};
  CHECK_EQ_I(sonde_swo_line_parse_spec("uart:2000000", &cfg, &d), 0);
  CHECK_EQ_U(cfg.mode, SONDE_SWO_LINE_UART);
  CHECK_EQ_U(cfg.baud, 2000000);
  CHECK_EQ_I(sonde_swo_line_parse_spec("manchester:115.2k", &cfg, &d), 0);
  CHECK_EQ_U(cfg.mode, SONDE_SWO_LINE_MANCHESTER);
  CHECK_EQ_U(cfg.baud, 115200);
  CHECK_EQ_I(sonde_swo_line_parse_spec("nrz:12M", &cfg, &d), 0);
  CHECK_EQ_U(cfg.mode, SONDE_SWO_LINE_UART);
  CHECK_EQ_U(cfg.baud, 12000000);
  CHECK_EQ_I(sonde_swo_line_parse_spec("auto", &cfg, &d), 0);
  CHECK_EQ_U(cfg.mode, SONDE_SWO_LINE_AUTO);
  CHECK_EQ_U(cfg.baud, 0);
  CHECK_EQ_I(sonde_swo_line_parse_spec("uart:auto", &cfg, &d), 0);
  CHECK_EQ_U(cfg.mode, SONDE_SWO_LINE_UART);
  CHECK_EQ_U(cfg.baud, 0);
  CHECK_EQ_I(sonde_swo_line_parse_spec("uart", &cfg, &d), 0);
  CHECK_EQ_I(sonde_swo_line_parse_spec("spi:1M", &cfg, &d), SONDE_E_ARG);
  CHECK(strstr(d.msg, "unknown line encoding") != NULL);
  CHECK_EQ_I(sonde_swo_line_parse_spec("uart:-5", &cfg, &d), SONDE_E_ARG);
  CHECK_EQ_I(sonde_swo_line_parse_spec("uart:fast", &cfg, &d), SONDE_E_ARG);
  CHECK(strstr(d.msg, "bad baud rate") != NULL);
  CHECK_EQ_I(sonde_swo_line_parse_spec("", &cfg, &d), SONDE_E_ARG);
  uint64_t hz = 0;
  CHECK_EQ_I(sonde_swo_parse_rate("24M", &hz), 0);
  CHECK_EQ_U(hz, 24000000);
  CHECK_EQ_I(sonde_swo_parse_rate("24MHz", &hz), 0);
  CHECK_EQ_U(hz, 24000000);
  CHECK_EQ_I(sonde_swo_parse_rate("1.5G", &hz), 0);
  CHECK_EQ_U(hz, 1500000000);
  CHECK_EQ_I(sonde_swo_parse_rate("500k", &hz), 0);
  CHECK_EQ_U(hz, 500000);
  CHECK_EQ_I(sonde_swo_parse_rate("0", &hz), SONDE_E_ARG);
  CHECK_EQ_I(sonde_swo_parse_rate("12x", &hz), SONDE_E_ARG);
  /* config validation */
  sonde_swo_line_config_init(&cfg);
  struct sonde_swo_line *l = NULL;
  CHECK_EQ_I(sonde_swo_line_new(&cfg, &l, &d), SONDE_E_ARG); /* no sample rate */
  cfg.sample_rate_hz = 5000000;
  cfg.mode = SONDE_SWO_LINE_UART;
  cfg.baud = 2000000;
  CHECK_EQ_I(sonde_swo_line_new(&cfg, &l, &d), SONDE_E_ARG); /* 2.5 samples/bit */
  CHECK(strstr(d.msg, "2.50 samples per bit") != NULL);
  cfg.channel = 8;
  cfg.baud = 1000000;
  CHECK_EQ_I(sonde_swo_line_new(&cfg, &l, &d), SONDE_E_ARG);
  CHECK(l == NULL);
  sonde_swo_line_free(NULL);
}

int main(void)
{
  RUN(test_uart_rates);
  RUN(test_uart_inverted);
  RUN(test_uart_framing_errors);
  RUN(test_uart_bit_errors);
  RUN(test_manchester);
  RUN(test_manchester_errors);
  RUN(test_manchester_bit_errors);
  RUN(test_detect);
  RUN(test_parse);
  return check_summary();
}
