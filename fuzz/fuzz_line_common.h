/* Shared body of the line-decoder fuzz targets (fuzz_uart_line.c,
 * fuzz_manchester.c): byte 0 = channel, inversion (8), auto (0x10), UART
 * re-timing (0x20); byte 1 = samples per bit, byte 2 = chunk size; the rest
 * are samples. Checks that feeding in
 * chunks with a tiny output buffer gives exactly the bytes and statistics of
 * a single feed, and that output stays within sonde_swo_line_out_bound(). */
#ifndef SONDE_FUZZ_LINE_COMMON_H
#define SONDE_FUZZ_LINE_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/swo.h"

static size_t fuzz_line_run(struct sonde_swo_line *l, const uint8_t *s, size_t n, size_t chunk,
                            size_t out_step, uint8_t *out, size_t cap)
{
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t k = n - i < chunk ? n - i : chunk;
    size_t c = 0;
    size_t room = cap - o < out_step ? cap - o : out_step;
    o += sonde_swo_line_feed(l, s + i, k, &c, out + o, room);
    if (c > k)
      abort();
    i += c;
    if (o >= cap && c == 0)
      abort(); /* out_bound must be enough */
  }
  size_t f;
  while ((f = sonde_swo_line_finish(l, out + o, cap - o)) > 0)
    o += f;
  return o;
}

static int fuzz_line(const uint8_t *data, size_t size, enum sonde_swo_line_mode mode)
{
  if (size < 3)
    return 0;
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = mode;
  cfg.channel = data[0] & 7;
  cfg.invert = (data[0] & 8) != 0;
  unsigned spb = (mode == SONDE_SWO_LINE_MANCHESTER ? 4 : 3) + data[1] % 29;
  cfg.sample_rate_hz = 1000000ull * spb;
  cfg.baud = (data[0] & 0x10) ? 0 : 1000000; /* 0: auto-detect */
  cfg.retime = (data[0] & 0x20) != 0; /* UART: the re-timed path with a fixed baud too */
  cfg.detect_window = 4096;
  size_t chunk = 1 + data[2] % 101;
  data += 3;
  size -= 3;
  struct sonde_swo_line *a = NULL, *b = NULL;
  if (sonde_swo_line_new(&cfg, &a, NULL) || sonde_swo_line_new(&cfg, &b, NULL))
    abort();
  size_t cap = sonde_swo_line_out_bound(a, size) + 16;
  uint8_t *o1 = malloc(cap), *o2 = malloc(cap);
  size_t n1 = fuzz_line_run(a, data, size, size ? size : 1, cap, o1, cap);
  size_t n2 = fuzz_line_run(b, data, size, chunk, 1 + chunk % 3, o2, cap);
  struct sonde_swo_line_stats s1, s2;
  sonde_swo_line_get_stats(a, &s1);
  sonde_swo_line_get_stats(b, &s2);
  if (s1.bytes != n1 || s1.samples != size)
    abort();
  /* Auto-detection may decide at different chunk boundaries; compare only
   * fixed-configuration runs, and all runs shorter than one window. */
  if (cfg.baud || size < 4096) {
    if (n1 != n2 || memcmp(o1, o2, n1) || s1.framing_errors != s2.framing_errors ||
        s1.glitches != s2.glitches || s1.breaks != s2.breaks ||
        s1.first_error_sample != s2.first_error_sample)
      abort();
  }
  free(o1);
  free(o2);
  sonde_swo_line_free(a);
  sonde_swo_line_free(b);
  return 0;
}

#endif
