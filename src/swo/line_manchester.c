/* SWO Manchester line decoding from logic-analyzer samples.
 *
 * Implements the TPIU "Manchester encoding" pin protocol (ARM CoreSight
 * Components TRM DDI 0314, TPIU, Physical pin protocol, Table "Manchester pin
 * protocol encoding"; TPIU_SPPR = 1): logic 0 = LOW then HIGH, logic 1 = HIGH
 * then LOW (two half-bit periods), idle LOW; a packet is a start bit (logic
 * 1), 1..8 bytes LSB first, and a stop: the line held LOW, which is not a
 * valid symbol.
 *
 * Decoding is by edges, re-timed on every mid-bit edge (T = samples per bit,
 * d = distance from the last mid-bit edge):
 *
 *   M_WAIT_LOW --LOW--> M_IDLE --rising edge--> M_START
 *   M_START   --falling edge at 0.25T..0.75T--> M_BITS (start bit's mid edge)
 *   M_BITS    edge, no boundary edge yet:  d < 0.25T         glitch, M_IDLE/M_WAIT_LOW
 *                                          d < 0.75T         bit-boundary edge
 *                                          d <= 1.25T        mid edge: falling=1, rising=0
 *             edge after a boundary edge:  0.75T..1.25T      mid edge (value by direction)
 *             no edge for > 1.25T:         line LOW          end of packet (stop)
 *                                          line HIGH         invalid symbol, M_WAIT_LOW
 *   End of packet with bits % 8 != 0: the partial byte is a framing error. */
#include "line_internal.h"

void swo_manchester_setup(struct sonde_swo_line *l)
{
  l->mst = l->prev_level == 0 ? M_IDLE : M_WAIT_LOW;
  l->mbits = 0;
  l->macc = 0;
  l->mboundary = false;
}

static void end_packet(struct sonde_swo_line *l, bool clean, size_t o)
{
  if (!clean) {
    l->st.glitches++;
    swo_line_report(l, SONDE_SWO_LINE_ERR_GLITCH, l->mpacket, o);
  } else if (l->mbits % 8 != 0 || l->mbits == 0) {
    l->st.framing_errors++;
    swo_line_report(l, SONDE_SWO_LINE_ERR_FRAMING, l->mpacket, o);
  }
  l->mbits = 0;
  l->macc = 0;
  l->mboundary = false;
}

size_t swo_manchester_run(struct sonde_swo_line *l, const uint8_t *s, size_t n,
                          size_t *consumed, uint8_t *out, size_t cap)
{
  const unsigned ch = l->ch, inv = l->inv;
  const uint64_t base = l->pos;
  const double T = l->spb;
  const uint64_t q1 = (uint64_t)(0.25 * T), q3 = (uint64_t)(0.75 * T + 0.5),
                 q5 = (uint64_t)(1.25 * T + 0.5);
  size_t i = 0, o = 0;

  for (;;) {
    switch (l->mst) {
    case M_WAIT_LOW:
      i = swo_find_level(s, i, n, ch, 0u ^ inv);
      if (i == n)
        goto out;
      l->mst = M_IDLE;
      /* fall through */
    case M_IDLE:
      i = swo_find_level(s, i, n, ch, 1u ^ inv);
      if (i == n)
        goto out;
      l->medge = l->mpacket = base + i;
      l->mst = M_START;
      /* fall through */
    case M_START: {
      size_t j = swo_find_level(s, i, n, ch, 0u ^ inv);
      uint64_t lim = l->medge + q3;
      if (j == n) {
        if (base + n > lim + 1) { /* HIGH too long for a start bit */
          l->st.glitches++;
          swo_line_report(l, SONDE_SWO_LINE_ERR_GLITCH, l->mpacket, o);
          l->mst = M_WAIT_LOW;
        }
        i = n;
        goto out;
      }
      uint64_t d = base + j - l->medge;
      i = j;
      if (d < q1 || d > q3 + 1) {
        l->st.glitches++;
        swo_line_report(l, SONDE_SWO_LINE_ERR_GLITCH, l->mpacket, o);
        l->mst = M_IDLE; /* the line is LOW here */
        continue;
      }
      l->st.packets++;
      l->medge = base + j;
      l->mlevel = 0;
      l->mboundary = false;
      l->mbits = 0;
      l->macc = 0;
      l->mst = M_BITS;
    }
      /* fall through */
    case M_BITS: {
      /* Hot loop: state in locals (stores to out[] could alias *l). */
      uint64_t medge = l->medge;
      unsigned level = l->mlevel, acc = l->macc, nbits = l->mbits;
      bool boundary = l->mboundary;
      int ended = 0; /* 0: buffer end or out full; 1: clean end; 2: bad end */
      for (;;) {
        /* The next edge must come within q5 of the last mid-bit edge: scan
         * only that far, sample by sample (edges are a few samples apart). */
        const uint64_t r = medge + q5 + 1; /* first sample past the timeout */
        const bool timeout_here = r <= base + n;
        const size_t lim = r <= base ? 0 : (timeout_here ? (size_t)(r - base) : n);
        const unsigned raw = level ^ inv;
        size_t j = i;
        while (j < lim && (((unsigned)s[j] >> ch) & 1u) == raw)
          j++;
        if (j >= lim) {
          if (!timeout_here) {
            i = n;
            break;
          }
          /* no edge in time: end of packet (clean if the line is LOW) */
          ended = level == 0 ? 1 : 2;
          i = lim > i ? lim : i;
          break;
        }
        const uint64_t d = base + j - medge;
        if (SWO_UNLIKELY(o == cap)) {
          i = j;
          break;
        }
        i = j;
        level ^= 1u;
        if (d < q3) {
          if (boundary || d < q1) { /* two edges in one bit, or a sliver */
            ended = 2;
            break;
          }
          boundary = true; /* bit-boundary edge */
          continue;
        }
        /* mid-bit edge: falling (now LOW) = 1, rising = 0 */
        acc |= (level ^ 1u) << (nbits & 7);
        nbits++;
        medge = base + j;
        boundary = false;
        if ((nbits & 7) == 0) {
          out[o++] = (uint8_t)acc;
          acc = 0;
        }
      }
      l->medge = medge;
      l->mlevel = level;
      l->macc = acc;
      l->mbits = nbits;
      l->mboundary = boundary;
      if (!ended)
        goto out;
      end_packet(l, ended == 1, o);
      l->mst = ended == 1 ? M_IDLE : (level ? M_WAIT_LOW : M_IDLE);
      break;
    }
    }
  }
out:
  *consumed = i;
  return o;
}

size_t swo_manchester_finish(struct sonde_swo_line *l, uint8_t *out, size_t cap)
{
  (void)out;
  (void)cap;
  /* Whole bytes were already output as they completed; a cut packet only
   * leaves a partial byte, which is reported like any short packet. */
  if (l->mst == M_BITS) {
    end_packet(l, l->mlevel == 0, 0);
    l->mst = M_IDLE;
  }
  return 0;
}
