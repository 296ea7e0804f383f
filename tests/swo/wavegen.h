/* Test waveform generator for SWO line decoding: turns bytes into
 * logic-analyzer samples (one byte per sample, bit n = channel n, as
 * `sigrok-cli -O binary` writes), with a chosen baud error, sample phase,
 * idle gaps and noise on the other channels. Written from the pin protocols
 * (DDI 0314 TPIU: UART 8N1 idle HIGH; Manchester 0 = LOW-HIGH, 1 = HIGH-LOW,
 * start bit 1, idle LOW), independently of the decoders under test.
 * Header-only; used by the unit tests, the wavegen tool and bench/. */
#ifndef SONDE_TEST_WAVEGEN_H
#define SONDE_TEST_WAVEGEN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct wavegen {
  uint8_t *buf;
  size_t n, cap;
  double t;          /* current time in sample periods */
  unsigned ch;       /* the SWO channel */
  uint8_t noise;     /* other channels toggled randomly in this mask */
  uint64_t rng;
  double bit;        /* samples per bit actually transmitted (with error) */
  int oom;
};

static inline uint64_t wg_rand(struct wavegen *g)
{
  uint64_t x = g->rng;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  g->rng = x;
  return x;
}

/* rate/baud in Hz and bit/s; err: +0.03 = transmitter 3% fast. phase: where in
 * [0,1) of a sample period the signal starts. */
static inline void wg_init(struct wavegen *g, double rate, double baud, double err, unsigned ch,
                           uint8_t noise, uint64_t seed, double phase)
{
  memset(g, 0, sizeof *g);
  g->ch = ch;
  g->noise = (uint8_t)(noise & ~(1u << ch));
  g->rng = seed ? seed : 1;
  g->bit = rate / (baud * (1.0 + err));
  g->t = phase;
}

/* Hold `level` for `dur` sample periods: samples at integer times in [t, t+dur). */
static inline void wg_level(struct wavegen *g, unsigned level, double dur)
{
  double end = g->t + dur;
  size_t k = (size_t)ceil(g->t);
  size_t last = (size_t)ceil(end); /* exclusive */
  if (last > g->cap) {
    size_t nc = g->cap ? g->cap : 4096;
    while (nc < last)
      nc *= 2;
    uint8_t *nb = realloc(g->buf, nc);
    if (!nb) {
      g->oom = 1;
      return;
    }
    g->buf = nb;
    g->cap = nc;
  }
  for (; k < last; k++) {
    uint8_t v = (uint8_t)((level & 1u) << g->ch);
    if (g->noise)
      v |= (uint8_t)(wg_rand(g) & g->noise);
    g->buf[k] = v;
  }
  if (last > g->n)
    g->n = last;
  g->t = end;
}

static inline void wg_uart_byte(struct wavegen *g, uint8_t b)
{
  wg_level(g, 0, g->bit);
  for (int i = 0; i < 8; i++)
    wg_level(g, (b >> i) & 1u, g->bit);
  wg_level(g, 1, g->bit);
}

/* UART bytes with random idle gaps of 0..max_gap_bits (fractional). */
static inline void wg_uart(struct wavegen *g, const uint8_t *d, size_t n, double max_gap_bits)
{
  wg_level(g, 1, 20 * g->bit);
  for (size_t i = 0; i < n; i++) {
    wg_uart_byte(g, d[i]);
    if (max_gap_bits > 0 && (wg_rand(g) & 3) == 0)
      wg_level(g, 1, g->bit * max_gap_bits * (double)(wg_rand(g) % 1000) / 1000.0);
  }
  wg_level(g, 1, 20 * g->bit);
}

/* One Manchester packet: start bit (1), bytes LSB first, then LOW. */
static inline void wg_man_packet(struct wavegen *g, const uint8_t *d, size_t n)
{
  double h = g->bit / 2;
  wg_level(g, 1, h);
  wg_level(g, 0, h);
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 8; k++) {
      unsigned v = (d[i] >> k) & 1u;
      wg_level(g, v, h);
      wg_level(g, !v, h);
    }
}

/* Manchester: packets of 1..8 bytes separated by min_gap..min_gap+2 bits LOW. */
static inline void wg_manchester(struct wavegen *g, const uint8_t *d, size_t n, double min_gap)
{
  wg_level(g, 0, 20 * g->bit);
  size_t i = 0;
  while (i < n) {
    size_t k = 1 + wg_rand(g) % 8;
    if (k > n - i)
      k = n - i;
    wg_man_packet(g, d + i, k);
    i += k;
    wg_level(g, 0, g->bit * (min_gap + (double)(wg_rand(g) % 2000) / 1000.0));
  }
  wg_level(g, 0, 20 * g->bit);
}

#endif
