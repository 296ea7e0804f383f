/* SWO line decoders: state shared by line.c (configuration, auto-detection,
 * dispatch), line_uart.c (NRZ) and line_manchester.c. Private to src/swo. */
#ifndef SONDE_SWO_LINE_INTERNAL_H
#define SONDE_SWO_LINE_INTERNAL_H

#include <string.h>

#include "sonde/swo.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "src/swo word-at-a-time scanning assumes a little-endian host"
#endif
#if defined(__GNUC__)
#define SWO_LIKELY(x) __builtin_expect(!!(x), 1)
#define SWO_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SWO_LIKELY(x) (x)
#define SWO_UNLIKELY(x) (x)
#endif

enum uart_state { U_WAIT_HIGH, U_IDLE, U_FRAME };
enum man_state { M_WAIT_LOW, M_IDLE, M_START, M_BITS };

struct sonde_swo_line {
  struct sonde_swo_line_config cfg;
  sonde_swo_line_error_fn cb;
  void *cb_ctx;
  struct sonde_diag diag;
  struct sonde_swo_line_stats st;
  uint64_t pos;        /* absolute index of the next sample the core decoder sees */
  double spb;          /* samples per bit in use */
  unsigned ch;         /* channel bit */
  unsigned inv;        /* 1 if inverted */
  enum sonde_swo_line_mode mode;
  bool detected;
  int prev_level;      /* level of the sample before pos (-1 unknown): context
                          kept across auto-detection windows that were dropped */

  /* auto-detection buffer */
  uint8_t *dbuf;
  size_t dcap, dlen, dpos; /* dpos: replayed so far once detected */

  /* UART */
  enum uart_state ust;
  uint64_t fstart;     /* absolute index of the first LOW sample of the start bit */
  unsigned bit;        /* next bit to sample, 0 (start) .. 9 (stop) */
  unsigned acc;
  uint32_t off[10];    /* bit-centre offsets from fstart */
  uint32_t edge[10];   /* UART: bit-start offsets from fstart (re-timing on an edge) */
  uint32_t stop_early; /* UART: 9.2 bits, where a stop bit cut short is still HIGH */
  bool early_seen;     /* UART: the line at stop_early was sampled (LOW) */
  bool retime;         /* UART: re-time on edges inside a frame (set at _new) */
  uint64_t uedge;      /* UART: the latest edge after the last centre, in an earlier buffer */
  unsigned ulast;      /* UART: the level of the last sample fed */

  /* Manchester */
  enum man_state mst;
  uint64_t medge;      /* M_START: rising edge; M_BITS: last mid-bit edge */
  unsigned mlevel;     /* line level after the last edge */
  bool mboundary;      /* a bit-boundary edge came after the last mid-bit edge */
  unsigned mbits;      /* data bits in this packet */
  unsigned macc;
  uint64_t mpacket;    /* absolute sample of the packet's start edge */
};

/* Index of the first sample in s[i..n) whose level (bit `ch`, xor `inv`) is
 * `want`, or n. Scans eight samples per step. */
static inline size_t swo_find_level(const uint8_t *s, size_t i, size_t n, unsigned ch,
                                    unsigned want)
{
  const uint64_t rep = 0x0101010101010101ull << ch;
  const uint64_t flip = want ? 0 : ~0ull; /* look for set bits in (w ^ flip) */
  while (i < n && (i & 7)) {
    if ((((unsigned)s[i] >> ch) & 1u) == want)
      return i;
    i++;
  }
  while (n - i >= 32) {
    uint64_t a, b, c, d;
    memcpy(&a, s + i, 8);
    memcpy(&b, s + i + 8, 8);
    memcpy(&c, s + i + 16, 8);
    memcpy(&d, s + i + 24, 8);
    if (((a ^ flip) | (b ^ flip) | (c ^ flip) | (d ^ flip)) & rep)
      break;
    i += 32;
  }
  while (n - i >= 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    uint64_t x = (w ^ flip) & rep;
    if (x)
      return i + (size_t)(__builtin_ctzll(x) >> 3); /* little-endian */
    i += 8;
  }
  for (; i < n; i++)
    if ((((unsigned)s[i] >> ch) & 1u) == want)
      return i;
  return n;
}

void swo_line_report(struct sonde_swo_line *l, enum sonde_swo_line_error_kind k, uint64_t sample,
                     size_t pending_bytes);

void swo_uart_setup(struct sonde_swo_line *l);
size_t swo_uart_run(struct sonde_swo_line *l, const uint8_t *s, size_t n, size_t *consumed,
                    uint8_t *out, size_t cap);
void swo_manchester_setup(struct sonde_swo_line *l);
size_t swo_manchester_run(struct sonde_swo_line *l, const uint8_t *s, size_t n,
                          size_t *consumed, uint8_t *out, size_t cap);
size_t swo_manchester_finish(struct sonde_swo_line *l, uint8_t *out, size_t cap);

#endif
