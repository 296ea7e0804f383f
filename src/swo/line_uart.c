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
 * 0.86 samples, inside the 1.5-sample half-bit.
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
  for (unsigned k = 0; k < 10; k++)
    l->off[k] = (uint32_t)floor((k + 0.5) * l->spb);
  /* Without context the line must be seen HIGH before a start edge counts. */
  l->ust = l->prev_level == 1 ? U_IDLE : U_WAIT_HIGH;
  l->bit = 0;
  l->acc = 0;
}

size_t swo_uart_run(struct sonde_swo_line *l, const uint8_t *s, size_t n, size_t *consumed,
                    uint8_t *out, size_t cap)
{
  const unsigned ch = l->ch, inv = l->inv;
  const uint64_t base = l->pos;
  size_t i = 0, o = 0;
  enum uart_state st = l->ust;
  unsigned bit = l->bit, acc = l->acc;
  uint64_t fstart = l->fstart;

  for (;;) {
    if (st == U_WAIT_HIGH) {
      i = swo_find_level(s, i, n, ch, 1u ^ inv);
      if (i == n)
        break;
      st = U_IDLE;
    }
    if (st == U_IDLE) {
      i = swo_find_level(s, i, n, ch, 0u ^ inv);
      if (i == n)
        break;
      if (SWO_UNLIKELY(o == cap))
        break; /* resume at this start edge next time */
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
      const unsigned v = (((unsigned)s[p] >> ch) & 1u) ^ inv;
      if (bit == 0) {
        if (SWO_UNLIKELY(v)) { /* start bit did not last to its centre */
          l->st.glitches++;
          swo_line_report(l, SONDE_SWO_LINE_ERR_GLITCH, fstart, o);
          i = (size_t)p;
          st = U_IDLE;
          goto next;
        }
      } else if (bit < 9) {
        acc |= v << (bit - 1);
      } else {
        i = (size_t)p;
        l->st.packets++;
        if (SWO_LIKELY(v)) {
          out[o++] = (uint8_t)acc;
          st = U_IDLE;
        } else {
          if (acc == 0) {
            l->st.breaks++;
            swo_line_report(l, SONDE_SWO_LINE_ERR_BREAK, fstart, o);
          } else {
            l->st.framing_errors++;
            swo_line_report(l, SONDE_SWO_LINE_ERR_FRAMING, fstart, o);
          }
          st = U_WAIT_HIGH;
        }
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
  l->ust = st;
  l->bit = bit;
  l->acc = acc;
  l->fstart = fstart;
  *consumed = i;
  return o;
}
