/* Benchmark: SWO line decoding (UART NRZ and Manchester) from logic-analyzer
 * samples, and the TPIU deformatter, each next to a plain byte scan of the
 * same buffer in the same run (docs/benchmarks.md, "SWO").
 *
 *   bench_swo [MB]      (default 128 MB of samples per case)
 *
 * Prints MB/s of input for each decoder and the ratio to the byte scan
 * (best of 5 rounds, decoder and scan interleaved).
 * Timing never decides pass/fail. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/swo.h"
#include "../tests/swo/wavegen.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Baseline: count samples whose channel bit is set, one byte at a time —
 * the least any decoder must do, compiled with the same flags. */
#define ROUNDS 5
static volatile uint64_t sink;
static double scan_mbs(const uint8_t *s, size_t n, unsigned ch)
{
  double best = 0;
  for (int r = 0; r < 1; r++) {
    double t0 = now_s();
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
      c += (s[i] >> ch) & 1u;
    double dt = now_s() - t0;
    sink += c;
    double mbs = n / dt / 1e6;
    if (mbs > best)
      best = mbs;
  }
  return best;
}

static bool bench_retime; /* cfg.retime: the path a detected baud takes */

static double line_mbs(const uint8_t *s, size_t n, enum sonde_swo_line_mode m, double rate,
                       double baud, unsigned ch, uint64_t *bytes_out, uint64_t *errors)
{
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = m;
  cfg.baud = (uint32_t)baud;
  cfg.sample_rate_hz = (uint64_t)rate;
  cfg.channel = ch;
  cfg.retime = bench_retime;
  static uint8_t out[1 << 20];
  const size_t chunk = 4u << 20; /* what a capture reader would feed */
  double best = 0;
  for (int r = 0; r < 1; r++) {
    struct sonde_swo_line *l = NULL;
    if (sonde_swo_line_new(&cfg, &l, NULL))
      abort();
    uint64_t bytes = 0;
    double t0 = now_s();
    for (size_t i = 0; i < n;) {
      size_t k = n - i < chunk ? n - i : chunk, c = 0;
      bytes += sonde_swo_line_feed(l, s + i, k, &c, out, sizeof out);
      i += c;
    }
    double dt = now_s() - t0;
    struct sonde_swo_line_stats st;
    sonde_swo_line_get_stats(l, &st);
    *bytes_out = bytes;
    *errors = st.framing_errors + st.glitches + st.breaks;
    sonde_swo_line_free(l);
    double mbs = n / dt / 1e6;
    if (mbs > best)
      best = mbs;
  }
  return best;
}

static void line_case(const char *name, enum sonde_swo_line_mode m, double rate, double baud,
                      double gap_bits, size_t mb)
{
  const unsigned ch = 0;
  struct wavegen g;
  wg_init(&g, rate, baud, 0.01, ch, 0, 12345, 0.37);
  size_t target = mb << 20;
  uint8_t chunk[4096];
  uint64_t rs = 99;
  wg_level(&g, m == SONDE_SWO_LINE_UART, 10 * g.bit);
  while (g.n < target && !g.oom) {
    for (size_t i = 0; i < sizeof chunk; i++) {
      rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
      chunk[i] = (uint8_t)rs;
    }
    if (m == SONDE_SWO_LINE_UART) {
      for (size_t i = 0; i < sizeof chunk; i++) {
        wg_uart_byte(&g, chunk[i]);
        if (gap_bits > 0)
          wg_level(&g, 1, gap_bits * g.bit);
      }
    } else {
      for (size_t i = 0; i < sizeof chunk; i += 4) {
        wg_man_packet(&g, chunk + i, 4);
        wg_level(&g, 0, (1.0 + gap_bits) * g.bit);
      }
    }
  }
  if (g.oom) {
    fprintf(stderr, "bench_swo: out of memory\n");
    exit(1);
  }
  uint64_t bytes = 0, errors = 0;
  double dec = 0, scan = 0;
  for (int r = 0; r < ROUNDS; r++) { /* interleaved, so both see the same machine load */
    double d = line_mbs(g.buf, g.n, m, rate, baud, ch, &bytes, &errors);
    double sc = scan_mbs(g.buf, g.n, ch);
    dec = d > dec ? d : dec;
    scan = sc > scan ? sc : scan;
  }
  printf("%-34s %6.1f samples/bit %8.0f MB/s  scan %8.0f MB/s  ratio %5.2f  (%zu MB, %llu bytes, "
         "%llu errors)\n",
         name, rate / baud, dec, scan, dec / scan, g.n >> 20, (unsigned long long)bytes,
         (unsigned long long)errors);
  free(g.buf);
}

static void tpiu_case(size_t mb)
{
  size_t n = mb << 20;
  uint8_t *s = malloc(n), *out = malloc(n + 16);
  if (!s || !out)
    abort();
  /* Frames: ID 1 with an occasional switch to ID 2, a sync every 64 frames. */
  uint64_t rs = 7;
  size_t p = 0;
  unsigned frames = 0;
  while (p + 20 <= n) {
    uint8_t *f = s + p;
    unsigned aux = 0;
    for (int k = 0; k < 8; k++) {
      rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
      uint8_t b = (uint8_t)(rs >> 20);
      if (k == 0 && (rs & 7) == 0) {
        f[0] = (uint8_t)((((rs >> 8) & 1) + 1) << 1 | 1);
      } else {
        f[2 * k] = b & 0xFE;
        aux |= (unsigned)(b & 1) << k;
      }
      if (k < 7)
        f[2 * k + 1] = (uint8_t)(rs >> 40);
    }
    f[15] = (uint8_t)aux;
    p += 16;
    if (++frames % 64 == 0) {
      s[p] = s[p + 1] = s[p + 2] = 0xFF;
      s[p + 3] = 0x7F;
      p += 4;
    }
  }
  double best = 0, scan = 0;
  uint64_t outn = 0;
  for (int r = 0; r < ROUNDS; r++) {
    struct sonde_swo_tpiu *t = NULL;
    if (sonde_swo_tpiu_new(NULL, &t))
      abort();
    double t0 = now_s();
    const size_t chunk = 1u << 20;
    outn = 0;
    for (size_t i = 0; i < p; i += chunk) {
      size_t k = p - i < chunk ? p - i : chunk;
      outn += sonde_swo_tpiu_feed(t, s + i, k, out, NULL);
    }
    double dt = now_s() - t0;
    sonde_swo_tpiu_free(t);
    if (p / dt / 1e6 > best)
      best = p / dt / 1e6;
    double sc = scan_mbs(s, p, 0);
    scan = sc > scan ? sc : scan;
  }
  printf("%-34s %8.0f MB/s  scan %8.0f MB/s  ratio %5.2f  (%zu MB in, %llu bytes of ID 1)\n",
         "TPIU deformatter", best, scan, best / scan, p >> 20, (unsigned long long)outn);
  free(s);
  free(out);
}

int main(int argc, char **argv)
{
  size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 128;
  if (mb < 1)
    mb = 1;
  printf("bench_swo: %zu MB per case, best of 5 interleaved with the scan, 4 MB feeds\n", mb);
  line_case("UART 2 Mbaud @ 6 MHz (back to back)", SONDE_SWO_LINE_UART, 6e6, 2e6, 0, mb);
  line_case("UART 2 Mbaud @ 24 MHz (back to back)", SONDE_SWO_LINE_UART, 24e6, 2e6, 0, mb);
  line_case("UART 1 Mbaud @ 24 MHz (idle gaps)", SONDE_SWO_LINE_UART, 24e6, 1e6, 8, mb);
  line_case("UART 115200 @ 8 MHz (back to back)", SONDE_SWO_LINE_UART, 8e6, 115200, 0, mb);
  bench_retime = true; /* re-timed on every edge, as after auto-detection */
  line_case("UART 2 Mbaud @ 6 MHz, re-timed", SONDE_SWO_LINE_UART, 6e6, 2e6, 0, mb);
  line_case("UART 1 Mbaud @ 8 MHz, re-timed", SONDE_SWO_LINE_UART, 8e6, 1e6, 0, mb);
  bench_retime = false;
  line_case("Manchester 2 Mbaud @ 24 MHz", SONDE_SWO_LINE_MANCHESTER, 24e6, 2e6, 1, mb);
  tpiu_case(mb);
  return 0;
}
