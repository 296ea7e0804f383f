/* SWO UART (NRZ) line decoding from logic-analyzer samples.
 *
 * Implements the TPIU "UART encoding" pin protocol (ARM CoreSight Components
 * TRM DDI 0314, TPIU, Physical pin protocol; TPIU_SPPR = 2): ten-bit frames,
 * start bit LOW, eight data bits LSB first, stop bit HIGH, line idle HIGH.
 *
 * Sampling: the start edge is taken midway between the last HIGH and first
 * LOW sample (index f), so the centre of bit k (k = 0 start .. 9 stop) is at
 * f - 0.5 + (k + 0.5) * spb, i.e. sample f + floor((k + 0.5) * spb). Every
 * frame re-times on its own start edge, so error does not accumulate beyond
 * one frame: at 3 samples/bit a +-3% baud error moves the stop-bit centre by
 * 0.86 samples, inside the 1.5-sample half-bit. When the baud was measured
 * (auto-detection: the transmitter's clock is not known exactly) or
 * cfg.retime asks for it, uart_run_retimed also re-times on every edge
 * between two bit centres (the edge found by looking back from the later
 * centre, the same in any chunking) and takes a stop bit that is LOW at its
 * centre but HIGH at 9.2 bits (the next start bit came early): a transmitter
 * up to 5% off for a whole frame then still decodes at 8 samples/bit, as
 * `sonde run --swo-jitter 5` makes it. That costs branches per bit, so a
 * given baud keeps the fixed path (docs/benchmarks.md).
 *
 *   U_WAIT_HIGH --(HIGH sample)--> U_IDLE --(LOW sample = start edge)--> U_FRAME
 *   U_FRAME: start centre HIGH       -> glitch, U_IDLE
 *            stop centre HIGH        -> byte out, U_IDLE (search from the centre)
 *            stop centre LOW         -> framing error (break if all zero), U_WAIT_HIGH
 */
#include <math.h>

#include "line_internal.h"

void swo_uart_setup(struct sonde_swo_line *l)
{
  for (unsigned k = 0; k < 10; k++) {
    l->off[k] = (uint32_t)floor((k + 0.5) * l->spb);
    l->edge[k] = (uint32_t)floor(k * l->spb + 0.5);
  }
  l->stop_early = (uint32_t)floor(9.2 * l->spb);
  /* Without context the line must be seen HIGH before a start edge counts. */
  l->ust = l->prev_level == 1 ? U_IDLE : U_WAIT_HIGH;
  l->early_seen = false;
  l->uedge = UINT64_MAX;
  l->ulast = l->prev_level == 1;
  l->bit = 0;
  l->acc = 0;
}

/* The line level at sample p, 1 = HIGH (after inversion). */
static inline unsigned uart_level(const uint8_t *s, uint64_t p, unsigned ch, unsigned inv)
{
  return (((unsigned)s[p] >> ch) & 1u) ^ inv;
}

/* A start bit that did not last to its centre. */
static inline void uart_glitch(struct sonde_swo_line *l, uint64_t fstart, size_t o)
{
  l->st.glitches++;
  swo_line_report(l, SONDE_SWO_LINE_ERR_GLITCH, fstart, o);
}

/* Keep the frame in progress for the next buffer. */
static inline void uart_save(struct sonde_swo_line *l, enum uart_state st, unsigned bit,
                             unsigned acc, uint64_t fstart)
{
  l->ust = st;
  l->bit = bit;
  l->acc = acc;
  l->fstart = fstart;
}

/* U_WAIT_HIGH / U_IDLE: advance *i to the next start edge; false when the
 * buffer ends first or the output is full (resume at that edge next time). */
static inline bool uart_find_start(const uint8_t *s, size_t n, unsigned ch, unsigned inv,
                                   enum uart_state *st, size_t *i, size_t o, size_t cap)
{
  if (*st == U_WAIT_HIGH) {
    *i = swo_find_level(s, *i, n, ch, 1u ^ inv);
    if (*i == n)
      return false;
    *st = U_IDLE;
  }
  *i = swo_find_level(s, *i, n, ch, 0u ^ inv);
  return *i < n && SWO_LIKELY(o < cap);
}

/* The stop bit v of a frame: the byte out, or a framing error / break.
 * Returns the next state. */
static inline enum uart_state uart_stop(struct sonde_swo_line *l, unsigned v, unsigned acc,
                                        uint64_t fstart, uint8_t *out, size_t *o)
{
  l->st.packets++;
  if (SWO_LIKELY(v)) {
    out[(*o)++] = (uint8_t)acc;
    return U_IDLE;
  }
  if (acc == 0) {
    l->st.breaks++;
    swo_line_report(l, SONDE_SWO_LINE_ERR_BREAK, fstart, *o);
  } else {
    l->st.framing_errors++;
    swo_line_report(l, SONDE_SWO_LINE_ERR_FRAMING, fstart, *o);
  }
  return U_WAIT_HIGH;
}

/* A given baud: the bit centres from the start edge only (the fastest path). */
static size_t uart_run_fixed(struct sonde_swo_line *l, const uint8_t *s, size_t n, size_t *consumed,
                             uint8_t *out, size_t cap)
{
  const unsigned ch = l->ch, inv = l->inv;
  const uint64_t base = l->pos;
  size_t i = 0, o = 0;
  enum uart_state st = l->ust;
  unsigned bit = l->bit, acc = l->acc;
  uint64_t fstart = l->fstart;

  for (;;) {
    if (st != U_FRAME) {
      if (!uart_find_start(s, n, ch, inv, &st, &i, o, cap))
        break;
      fstart = base + i;
      bit = 0;
      acc = 0;
      st = U_FRAME;
    }
    /* U_FRAME: sample bit centres while they are inside this buffer. */
    const uint64_t rel = fstart - base; /* may wrap if the frame began earlier; sums are exact */
    for (; bit < 10; bit++) {
      const uint64_t p = rel + l->off[bit];
      if (p >= n)
        goto out;
      const unsigned v = uart_level(s, p, ch, inv);
      if (bit == 0) {
        if (SWO_UNLIKELY(v)) {
          uart_glitch(l, fstart, o);
          i = (size_t)p;
          st = U_IDLE;
          goto next;
        }
      } else if (bit < 9) {
        acc |= v << (bit - 1);
      } else {
        i = (size_t)p;
        st = uart_stop(l, v, acc, fstart, out, &o);
        bit = 0;
        goto next;
      }
    }
  next:
    continue;
  }
out:
  if (st == U_FRAME)
    i = n;
  uart_save(l, st, bit, acc, fstart);
  *consumed = i;
  return o;
}

/* A measured baud: re-timed on every edge, stop bits cut short accepted. */
static size_t uart_run_retimed(struct sonde_swo_line *l, const uint8_t *s, size_t n, size_t *consumed,
                               uint8_t *out, size_t cap)
{
  const unsigned ch = l->ch, inv = l->inv;
  const uint64_t base = l->pos;
  size_t i = 0, o = 0;
  enum uart_state st = l->ust;
  unsigned bit = l->bit, acc = l->acc;
  uint64_t fstart = l->fstart;

  for (;;) {
    if (st != U_FRAME) {
      if (!uart_find_start(s, n, ch, inv, &st, &i, o, cap))
        break;
      fstart = base + i;
      bit = 0;
      acc = 0;
      l->early_seen = false;
      l->uedge = UINT64_MAX;
      st = U_FRAME;
    }
    /* U_FRAME: sample bit centres while they are inside this buffer. */
    for (; bit < 10; bit++) {
      const uint64_t rel = fstart - base; /* may wrap if the frame began earlier; sums are exact */
      if (bit == 9 && !l->early_seen) { /* 9.2 bits: a stop bit cut short is HIGH here */
        const uint64_t q = rel + l->stop_early;
        if (q >= n)
          goto out;
        l->early_seen = true;
        if (uart_level(s, q, ch, inv) != 0) {
          l->st.packets++; /* the stop bit: the next start edge may come before 9.5 bits */
          out[o++] = (uint8_t)acc;
          i = (size_t)q;
          st = U_IDLE;
          bit = 0;
          goto next;
        }
      }
      uint64_t p = rel + l->off[bit];
      if (p >= n)
        goto out;
      unsigned v = uart_level(s, p, ch, inv);
      if (bit == 0) {
        if (SWO_UNLIKELY(v)) {
          uart_glitch(l, fstart, o);
          i = (size_t)p;
          st = U_IDLE;
          goto next;
        }
        continue;
      }
      const unsigned was = bit == 1 ? 0u : (acc >> (bit - 2)) & 1u;
      if (l->retime && v != was) { /* an edge since the last centre: re-time on the latest one */
        const uint64_t prev = rel + l->off[bit - 1]; /* wraps when in an earlier buffer */
        const uint64_t lo = (int64_t)prev >= 0 ? prev + 1 : 0;
        uint64_t e = p;
        while (e > lo && uart_level(s, e - 1, ch, inv) == v)
          e--;
        uint64_t at = UINT64_MAX; /* absolute sample of the edge */
        if (e > lo) /* s[e - 1] differs */
          at = base + e;
        else if ((int64_t)prev >= 0) /* the edge is at lo if the sample before it differs */
          at = uart_level(s, lo - 1, ch, inv) != v ? base + lo : UINT64_MAX;
        else if (l->ulast != v)
          at = base; /* right at this buffer's start */
        else if (l->uedge != UINT64_MAX && l->uedge > fstart + l->off[bit - 1])
          at = l->uedge; /* in an earlier buffer */
        if (at != UINT64_MAX)
          fstart = at - l->edge[bit];
        l->uedge = UINT64_MAX;
      }
      if (bit < 9) {
        acc |= v << (bit - 1);
        continue;
      }
      i = (size_t)p;
      st = uart_stop(l, v, acc, fstart, out, &o);
      bit = 0;
      goto next;
    }
  next:
    continue;
  }
out:
  if (st == U_FRAME) {
    /* Remember the latest edge after the last centre sampled, for a
     * re-timing in the next buffer (the same result in any chunking). */
    if (n > 0 && bit > 0) {
      const uint64_t prev = fstart - base + l->off[bit - 1];
      const uint64_t lo = (int64_t)prev >= 0 ? prev + 1 : 0;
      const unsigned last = uart_level(s, n - 1, ch, inv);
      uint64_t e = n - 1;
      while (e > lo && uart_level(s, e - 1, ch, inv) == last)
        e--;
      if (e > lo) /* s[e - 1] differs */
        l->uedge = base + e;
      else if (lo > 0 && lo <= n - 1) /* the centre sample s[lo - 1] is in this buffer */
        l->uedge = uart_level(s, lo - 1, ch, inv) != last ? base + lo : UINT64_MAX;
      else if (lo == 0 && l->ulast != last)
        l->uedge = base;
    }
    i = n;
  }
  if (i > 0) /* the level before the next call's first sample */
    l->ulast = uart_level(s, i - 1, ch, inv);
  uart_save(l, st, bit, acc, fstart);
  *consumed = i;
  return o;
}

size_t swo_uart_run(struct sonde_swo_line *l, const uint8_t *s, size_t n, size_t *consumed,
                    uint8_t *out, size_t cap)
{
  return l->retime ? uart_run_retimed(l, s, n, consumed, out, cap)
                   : uart_run_fixed(l, s, n, consumed, out, cap);
}
