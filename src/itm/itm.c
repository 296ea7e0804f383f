/* Sonde ITM/DWT packet decoder — ARMv7-M ARM Appendix D4 "Debug ITM and DWT
 * Packet Protocol" (D4.2 packet formats, D4.3 DWT hardware source packets)
 * and ARMv8-M ARM chapter D1 (same protocol, plus data trace match/address
 * packets). See include/sonde/itm.h for the model.
 *
 * State machine (d->state), one transition function per edge:
 *
 *           header byte, whole packet in buffer -> emit (decode_fast)
 *   IDLE ---- packet cut by end of buffer ------> PEND   (copy to d->pend)
 *    ^  \---- 0x00 -----------------------------> ZEROS  (count zeros)
 *    |   \--- reserved header / malformed ------> LOST   (lose)
 *    |
 *   PEND ---- packet completes (decode_packet) -> IDLE
 *        \--- malformed ------------------------> LOST
 *   ZEROS --- 0x80 after >= 5 zeros (sync) -----> IDLE   (+ SKIP if it was lost)
 *        \--- anything else --------------------> LOST   (lose unless already lost)
 *   LOST ---- 0x00 (memchr) --------------------> ZEROS
 *
 * Invariants: in IDLE the next byte is a packet header; d->npend < 8 and
 * d->pend holds the first bytes of one incomplete packet (PEND only);
 * d->lost is true from a loss until the sync that ends it.
 *
 * Hot path: IDLE with whole packets in the buffer. Headers are classified by
 * the 256-entry itm_hdr_table; source packets (1/2/4-byte payloads, the bulk
 * of any stream) are decoded inline without touching d->pend. */
#include "sonde/itm.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "itm_fast.h"
#include "itm_internal.h"
#include "itm_mix.h"
#include "itm_table.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the hot loop loads packets as little-endian words"
#endif

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#endif

/* A second copy of the hot loops for x86-64 CPUs with BMI2 and AVX2 (see
 * fast_run_x86v3, runs_x86v3), with GCC or Clang. */
#if defined(__x86_64__) && defined(__GNUC__)
#define ITM_X86_V3 1
#include <immintrin.h>
#else
#define ITM_X86_V3 0
#endif

#if defined(__GNUC__)
#define ITM_NOINLINE __attribute__((noinline)) /* its own register allocation */
#else
#define ITM_NOINLINE
#endif

/* fast_run() stores port, type, size, flags and reserved as one word */
_Static_assert(offsetof(struct sonde_itm_packet, port) == 24 &&
                   offsetof(struct sonde_itm_packet, type) == 26 &&
                   offsetof(struct sonde_itm_packet, size) == 27 &&
                   offsetof(struct sonde_itm_packet, flags) == 28 &&
                   sizeof(struct sonde_itm_packet) == 32,
               "packet layout");

void sonde_itm_config_init(struct sonde_itm_config *c)
{
  c->start_unsynced = false;
  c->ts_prescale = 1;
}

size_t sonde_itm_sizeof(void) { return sizeof(struct sonde_itm); }

static void itm_setup(struct sonde_itm *d, const struct sonde_itm_config *cfg)
{
  memset(d, 0, sizeof *d);
  if (cfg)
    d->cfg = *cfg;
  else
    sonde_itm_config_init(&d->cfg);
  if (!d->cfg.ts_prescale)
    d->cfg.ts_prescale = 1;
  d->ts_out = SONDE_ITM_TS_UNKNOWN;
#if ITM_X86_V3
  __builtin_cpu_init();
  d->x86v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#endif
  if (d->cfg.start_unsynced) {
    d->state = ST_LOST;
    d->lost = 1;
    d->skip_why = SONDE_ITM_SKIP_START;
  }
}

struct sonde_itm *sonde_itm_init(void *mem, size_t size, const struct sonde_itm_config *cfg)
{
  if (!mem || size < sizeof(struct sonde_itm) || ((uintptr_t)mem & 7))
    return NULL;
  itm_setup(mem, cfg);
  return mem;
}

struct sonde_itm *sonde_itm_new(const struct sonde_itm_config *cfg)
{
  struct sonde_itm *d = malloc(sizeof *d);
  if (d)
    itm_setup(d, cfg);
  return d;
}

void sonde_itm_free(struct sonde_itm *d) { free(d); }

void itm_force_loop(struct sonde_itm *d, unsigned mode) { d->loop_mode = (uint8_t)mode; }
void itm_force_portable(struct sonde_itm *d) { d->x86v3 = 0; }

void sonde_itm_reset(struct sonde_itm *d)
{
  if (d) {
    struct sonde_itm_config c = d->cfg;
    uint8_t loop = d->loop_mode, v3 = d->x86v3;
    itm_setup(d, &c);
    d->loop_mode = loop;
    d->x86v3 = v3;
  }
}

const struct sonde_itm_stats *sonde_itm_stats(const struct sonde_itm *d) { return &d->st; }
bool sonde_itm_synced(const struct sonde_itm *d) { return d && !d->lost; }

/* ---- packet decoding ------------------------------------------------------ */

static inline void put(struct sonde_itm_packet *o, uint64_t off, uint64_t ts, unsigned type,
                       unsigned size, unsigned port, unsigned flags, uint64_t value)
{
  o->offset = off;
  o->ts = ts;
  o->value = value;
  o->port = (uint16_t)port;
  o->type = (uint8_t)type;
  o->size = (uint8_t)size;
  o->flags = (uint8_t)flags;
  o->reserved[0] = o->reserved[1] = o->reserved[2] = 0;
}

static inline uint32_t load_le(const uint8_t *p, unsigned size)
{
  switch (size) {
  case 1:
    return p[0];
  case 2:
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
  default:
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  }
}

/* A source packet (instrumentation or hardware) whose payload is at p+1. */
static inline void source_packet(struct sonde_itm *d, struct sonde_itm_packet *o, uint64_t off,
                                 const struct itm_hdr *hi, const uint8_t *p, unsigned size)
{
  uint32_t v = load_le(p + 1, size);
  unsigned type = hi->type, port = hi->port, flags = hi->flags;
  if (type == SONDE_ITM_SW) {
    port += d->page_base;
  } else if (type == SONDE_ITM_EXC) {
    /* payload byte 0 = ExceptionNumber[7:0]; byte 1: bit 0 = number[8],
     * bits 5:4 = FN (D4.3.2) */
    flags = (v >> 12) & 3;
    v &= 0x1ff;
  } else if (type == SONDE_ITM_EVCNT) {
    flags = v & 0x3f;
  }
  put(o, off, d->ts_out, type, size, port, flags, v);
  d->st.packets[type]++;
}

/* Length of a variable-length packet (header + payload bytes with the
 * continuation bit C in bit 7): the packet ends at the first byte with C = 0.
 * Returns the length, 0 if more bytes are needed, -1 if `maxpay` payload
 * bytes all had C = 1 (malformed). */
static inline int var_len(const uint8_t *p, size_t avail, unsigned maxpay)
{
  for (unsigned i = 1; i <= maxpay; i++) {
    if (i >= avail)
      return 0;
    if (!(p[i] & 0x80))
      return (int)i + 1;
  }
  return -1;
}

/* Decode one protocol packet (LTS, GTS, extension, overflow) or a source
 * packet at p (avail bytes). Returns its length (> 0) after writing *o, 0 if
 * the packet is not complete yet, -1 if it is malformed. Never called for
 * K_ZERO or K_RES. */
static int decode_packet(struct sonde_itm *d, const uint8_t *p, size_t avail, uint64_t off,
                         struct sonde_itm_packet *o)
{
  uint8_t h = p[0];
  const struct itm_hdr *hi = &itm_hdr_table[h];
  int len;
  uint64_t v;
  switch (hi->kind) {
  case K_SW1: case K_HW1:
    if (avail < 2)
      return 0;
    source_packet(d, o, off, hi, p, 1);
    return 2;
  case K_SW2: case K_HW2:
    if (avail < 3)
      return 0;
    source_packet(d, o, off, hi, p, 2);
    return 3;
  case K_SW4: case K_HW4:
    if (avail < 5)
      return 0;
    source_packet(d, o, off, hi, p, 4);
    return 5;
  case K_OVF:
    put(o, off, d->ts_out, SONDE_ITM_OVERFLOW, 0, 0, 0, 0);
    d->st.packets[SONDE_ITM_OVERFLOW]++;
    return 1;
  case K_LTS2: /* 0TTT0000: TS[2:0] in bits 6:4, TC implicitly 0 (D4.2.4) */
    v = (h >> 4) & 7;
    d->ts_abs += v * d->cfg.ts_prescale;
    d->ts_out = d->ts_abs;
    put(o, off, d->ts_out, SONDE_ITM_LTS, 0, 0, SONDE_ITM_LTS2, v);
    d->st.packets[SONDE_ITM_LTS]++;
    return 1;
  case K_LTS1: /* 11TC0000 + 1..4 bytes of TS[6:0], TS[13:7], ... */
    len = var_len(p, avail, 4);
    if (len <= 0)
      return len;
    v = 0;
    for (int i = 1; i < len; i++)
      v |= (uint64_t)(p[i] & 0x7f) << (7 * (i - 1));
    d->ts_abs += v * d->cfg.ts_prescale;
    d->ts_out = d->ts_abs;
    put(o, off, d->ts_out, SONDE_ITM_LTS, (unsigned)len - 1, 0, hi->flags, v);
    d->st.packets[SONDE_ITM_LTS]++;
    return len;
  case K_GTS1: { /* 0x94 + TS[6:0], TS[13:7], TS[20:14], {0 Wrap ClkCh TS[25:21]} */
    len = var_len(p, avail, 4);
    if (len <= 0)
      return len;
    unsigned flags = 0, bits = 0;
    v = 0;
    for (int i = 1; i < len; i++) {
      if (i == 4) { /* last possible byte: 5 timestamp bits, then ClkCh, Wrap */
        v |= (uint64_t)(p[i] & 0x1f) << 21;
        flags = (p[i] & 0x40 ? SONDE_ITM_GTS_WRAP : 0) | (p[i] & 0x20 ? SONDE_ITM_GTS_CLKCH : 0);
        bits = 26;
      } else {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * (i - 1));
        bits = 7 * (unsigned)i;
      }
    }
    uint64_t mask = (1ull << bits) - 1; /* a short packet updates the low bits only */
    d->gts = (d->gts & ~mask) | v;
    put(o, off, d->ts_out, SONDE_ITM_GTS, (unsigned)len - 1, 0, flags, d->gts);
    d->st.packets[SONDE_ITM_GTS]++;
    return len;
  }
  case K_GTS2: { /* 0xB4 + TS[32:26], TS[39:33], ... (4 bytes: 48-bit, 6: 64-bit) */
    len = var_len(p, avail, 6);
    if (len <= 0)
      return len;
    v = 0;
    for (int i = 1; i < len; i++)
      v |= (uint64_t)(p[i] & 0x7f) << (7 * (i - 1));
    d->gts = (d->gts & ((1ull << 26) - 1)) | (v << 26);
    put(o, off, d->ts_out, SONDE_ITM_GTS, (unsigned)len - 1, 0, SONDE_ITM_GTS2, d->gts);
    d->st.packets[SONDE_ITM_GTS]++;
    return len;
  }
  case K_EXT: { /* C EX[2:0] 1 SH 0 0 + EX[9:3], ... (D4.2.3) */
    if (h & 0x80) {
      len = var_len(p, avail, 4);
      if (len <= 0)
        return len;
    } else {
      len = 1;
    }
    v = (h >> 4) & 7;
    for (int i = 1; i < len; i++)
      v |= (uint64_t)(p[i] & (i == 4 ? 0xff : 0x7f)) << (3 + 7 * (i - 1));
    if (!(h & 0x04)) { /* SH = 0: stimulus port page */
      /* ports are 16-bit: pages beyond 2046 saturate (ARMv7-M has 8 pages) */
      d->page_base = v < 2047 ? (uint32_t)v * 32 : 2047u * 32;
      put(o, off, d->ts_out, SONDE_ITM_PAGE, (unsigned)len - 1, 0, 0, v);
      d->st.packets[SONDE_ITM_PAGE]++;
    } else {
      put(o, off, d->ts_out, SONDE_ITM_EXT, (unsigned)len - 1, 0, 1, v);
      d->st.packets[SONDE_ITM_EXT]++;
    }
    return len;
  }
  default:
    return -1;
  }
}

/* Sync lost at stream offset `off`. */
static void lose(struct sonde_itm *d, uint64_t off, unsigned why)
{
  if (!d->lost) {
    d->lost = 1;
    d->skip_start = off;
    d->skip_why = (uint8_t)why;
  }
  d->state = ST_LOST;
}

/* A sync packet ends a run of zeros at `end` (offset of the 0x80). */
static size_t sync_found(struct sonde_itm *d, struct sonde_itm_packet *o)
{
  size_t n = 0;
  if (d->lost) {
    uint64_t skipped = d->zstart - d->skip_start;
    if (skipped) {
      put(&o[n++], d->skip_start, d->ts_out, SONDE_ITM_SKIP, 0, 0, d->skip_why, skipped);
      d->st.packets[SONDE_ITM_SKIP]++;
      d->st.skipped_bytes += skipped;
      d->st.losses++;
    }
    d->lost = 0;
  }
  uint64_t size = d->zeros + 1;
  put(&o[n++], d->zstart, d->ts_out, SONDE_ITM_SYNC, size > 255 ? 255 : (unsigned)size, 0, 0,
      size);
  d->st.packets[SONDE_ITM_SYNC]++;
  d->page_base = 0; /* D4.2.8: page 0 until an extension packet after a sync */
  d->state = ST_IDLE;
  return n;
}

#if ITM_X86_V3
/* not always_inline: inlined into the x86-64 v3 copy only (in the
 * baseline copy its call is dead code) */
static inline __attribute__((target("bmi2"))) uint64_t pext_v3(uint64_t w, uint64_t m)
{
  return _pext_u64(w, m);
}
#endif

/* A GTS1, GTS2 or extension packet (itm_fast kind 3, 4, 5) at the start of
 * the 8 bytes in w, decoded exactly as decode_packet does (D4.2.3, D4.2.5).
 * Sets *value, *meta (port, type, size, flags) and *type, updates the global
 * timestamp and the stimulus page; returns the packet's length, or 0 when it
 * is malformed (the general path reports it). */
static inline __attribute__((always_inline)) unsigned
decode_rare(struct sonde_itm *d, uint64_t w, unsigned kind, uint64_t *page_base, uint64_t *value,
            uint64_t *meta, unsigned *type, const bool v3)
{
  unsigned h = (unsigned)w & 0xff, len = 1, flags = 0, size;
  if (kind != 5 || (h & 0x80)) {
    uint64_t c = ~w & (kind == 4 ? 0x80808080808000ull : 0x8080808000ull);
    if (!c)
      return 0;
    len = ((unsigned)__builtin_ctzll(c) >> 3) + 1;
  }
  size = len - 1;
  uint64_t v = 0;
#if ITM_X86_V3
  if (v3) {
    /* the same fields by one pext over the packet's bytes (len <= 7) */
    uint64_t cut = w & ((1ull << (8 * len)) - 1);
    if (kind == 3) {
      v = pext_v3(cut, 0x1f7f7f7f00ull);
      uint64_t mask = len == 5 ? (1ull << 26) - 1 : (1ull << (7 * size)) - 1;
      unsigned b4 = (unsigned)(cut >> 32);
      flags = (b4 & 0x40 ? SONDE_ITM_GTS_WRAP : 0) | (b4 & 0x20 ? SONDE_ITM_GTS_CLKCH : 0);
      d->gts = (d->gts & ~mask) | v;
      *value = d->gts;
      *type = SONDE_ITM_GTS;
    } else if (kind == 4) {
      v = pext_v3(cut, 0x7f7f7f7f7f7f00ull);
      d->gts = (d->gts & ((1ull << 26) - 1)) | (v << 26);
      *value = d->gts;
      flags = SONDE_ITM_GTS2;
      *type = SONDE_ITM_GTS;
    } else {
      v = ((h >> 4) & 7) | pext_v3(cut, 0xff7f7f7f00ull) << 3;
      if (!(h & 0x04)) {
        *page_base = v < 2047 ? v * 32 : 2047u * 32;
        *type = SONDE_ITM_PAGE;
      } else {
        flags = 1;
        *type = SONDE_ITM_EXT;
      }
      *value = v;
    }
    *meta = (uint64_t)*type << 16 | (uint64_t)size << 24 | (uint64_t)flags << 32;
    return len;
  }
#endif
  (void)v3;
  if (kind == 3) { /* GTS1: TS[6:0], TS[13:7], TS[20:14], {0 Wrap ClkCh TS[25:21]} */
    unsigned bits = 0;
    for (unsigned i = 1; i < len; i++) {
      unsigned b = (unsigned)(w >> (8 * i)) & 0xff;
      if (i == 4) {
        v |= (uint64_t)(b & 0x1f) << 21;
        flags = (b & 0x40 ? SONDE_ITM_GTS_WRAP : 0) | (b & 0x20 ? SONDE_ITM_GTS_CLKCH : 0);
        bits = 26;
      } else {
        v |= (uint64_t)(b & 0x7f) << (7 * (i - 1));
        bits = 7 * i;
      }
    }
    uint64_t mask = (1ull << bits) - 1;
    d->gts = (d->gts & ~mask) | v;
    *value = d->gts;
    *type = SONDE_ITM_GTS;
  } else if (kind == 4) { /* GTS2: TS[32:26], TS[39:33], ... */
    for (unsigned i = 1; i < len; i++)
      v |= (uint64_t)((w >> (8 * i)) & 0x7f) << (7 * (i - 1));
    d->gts = (d->gts & ((1ull << 26) - 1)) | (v << 26);
    *value = d->gts;
    flags = SONDE_ITM_GTS2;
    *type = SONDE_ITM_GTS;
  } else { /* extension: C EX[2:0] 1 SH 0 0 + EX[9:3], ... */
    v = (h >> 4) & 7;
    for (unsigned i = 1; i < len; i++)
      v |= (uint64_t)((w >> (8 * i)) & (i == 4 ? 0xff : 0x7f)) << (3 + 7 * (i - 1));
    if (!(h & 0x04)) {
      *page_base = v < 2047 ? v * 32 : 2047u * 32;
      *type = SONDE_ITM_PAGE;
    } else {
      flags = 1;
      *type = SONDE_ITM_EXT;
    }
    *value = v;
  }
  *meta = (uint64_t)*type << 16 | (uint64_t)size << 24 | (uint64_t)flags << 32;
  return len;
}

/* The loop of fast_run for random-looking streams, inlined once per
 * prescale (1, the common case, makes the timestamp multiply vanish) and per
 * timestamp state. `known`: a local timestamp has been seen, so the time
 * stamped on packets is the running sum itself (ts_out == ts_abs from the
 * first LTS on) and an LTS only adds its delta; before that (!known) LTS
 * packets leave the loop and the general path decodes the first one.
 * Pointers instead of indices keep the loop variables in registers.
 *
 * The loop-carried chain is header -> length -> next header. The next
 * header is taken from the word already loaded (a packet is at most 7
 * bytes, so it is in there): a shift instead of a load on that chain; the
 * word at the next packet is loaded only for its payload. */
static inline __attribute__((always_inline)) void
fast_loop(struct sonde_itm *d, const uint8_t **pp, const uint8_t *pend, struct sonde_itm_packet **op,
          const struct sonde_itm_packet *oend, uint64_t off0, const uint64_t pre, const bool known,
          const bool v3)
{
  const uint8_t *p = *pp;
  struct sonde_itm_packet *o = *op;
  uint64_t ts = known ? d->ts_abs : SONDE_ITM_TS_UNKNOWN;
  uint64_t page_base = d->page_base;
  uint64_t *cnt = d->st.packets;
  /* Both bounds checked per packet (input, output room): a single bound of
   * `room` bytes (a packet takes at least one) ended the loop after about a
   * third of the room on this stream, i.e. some 20 rounds per 512-packet
   * array, each with a mispredicted exit: 3% slower than a second compare. */
  if (p < pend && o < oend) {
    uint64_t w;
    memcpy(&w, p, 8);
    unsigned h = (unsigned)w & 0xff;
    for (;;) {
      const struct itm_fast *e = &itm_fast_table[h];
      uint64_t x = w >> 8;
      /* Fixed-length packets (almost all of a stream): the length from the
       * header with ALU operations only, 1 + 1/2/4 for source packets, 1 for
       * LTS2 and overflow; decoded without branches (masks instead of ?:).
       * LTS1, whose length comes from continuation bits, takes a short
       * branch. */
      unsigned sh = 0x28181008u >> ((h << 3) & 0x18); /* 8 * (1 + 0/1/2/4) */
      unsigned plen = (sh & 0xff) >> 3;
      uint64_t value, meta;
      unsigned type = e->type;
      if (LIKELY(e->kind == 1) && (known || !e->lts2)) {
        value = (x & e->vmask) | e->lts2;
        meta = e->meta + ((x & e->fm) << e->fsh) + (page_base & e->pgmask);
        if (known)
          ts += (uint64_t)e->lts2 * pre;
      } else {
        uint64_t c = ~w & 0x8080808000ull;
        if (UNLIKELY(e->kind != 2)) {
          /* GTS and extension packets are decoded here, in line: a call would
           * make every loop variable live across it, i.e. spilled to the stack
           * and reloaded per packet. Anything else (sync, reserved, malformed,
           * an LTS2 before any timestamp) leaves the loop for the general
           * path, which decodes one packet and comes back. */
          if (e->kind == 0 || e->kind == 1)
            goto out;
          plen = decode_rare(d, w, e->kind, &page_base, &value, &meta, &type, v3);
          if (!plen)
            goto out;
          sh = 8 * plen;
        } else {
          if (UNLIKELY(!c) || !known)
            goto out;
          plen = ((unsigned)__builtin_ctzll(c) >> 3) + 1;
          sh = 8 * plen;
          value = (x & 0x7f) | ((x >> 1) & 0x3f80) | ((x >> 2) & 0x1fc000) | ((x >> 3) & 0xfe00000);
          value &= (1ull << (7 * (plen - 1))) - 1;
          ts += value * pre;
          meta = e->meta | (uint64_t)(plen - 1) << 24;
        }
      }
      o->offset = off0 + (uint64_t)(uintptr_t)p;
      o->ts = ts;
      o->value = value;
      memcpy(&o->port, &meta, sizeof meta); /* port, type, size, flags, reserved */
      o++;
      cnt[type]++;
      h = (unsigned)(w >> (sh & 63)) & 0xff; /* plen <= 7 */
      p += plen;
      if (UNLIKELY(p >= pend || o >= oend))
        break;
      memcpy(&w, p, 8);
    }
  }
out:
  if (known) {
    d->ts_abs = ts;
    d->ts_out = ts;
  }
  d->page_base = (uint32_t)page_base;
  *pp = p;
  *op = o;
}

/* Adds the packed lane counters of a run loop (itm_fast.h, ITM_LANE) to the
 * statistics. */
static inline void lanes_flush(uint64_t *cnt, uint64_t acc)
{
  /* unrolled by hand: GCC keeps the loop, with a load per lane */
  cnt[itm_lane_type[0]] += acc & 0xff;
  cnt[itm_lane_type[1]] += (acc >> 8) & 0xff;
  cnt[itm_lane_type[2]] += (acc >> 16) & 0xff;
  cnt[itm_lane_type[3]] += (acc >> 24) & 0xff;
  cnt[itm_lane_type[4]] += (acc >> 32) & 0xff;
  cnt[itm_lane_type[5]] += (acc >> 40) & 0xff;
  cnt[itm_lane_type[6]] += (acc >> 48) & 0xff;
  cnt[itm_lane_type[7]] += acc >> 56;
}

/* A word at p that holds a 5-byte source packet (header xxxxxx11) and an
 * LTS1 (11TC0000) with two payload bytes (C = 1, then C = 0). */
#define RUN_PAIR_MASK 0x8080cf0000000003ull
#define RUN_PAIR 0x0080c00000000003ull
/* ... and a sleeping PC sample (0x15 + 1 byte) with such an LTS1 */
#define RUN_SLEEP_MASK 0x8080cf00ffull
#define RUN_SLEEP 0x0080c00015ull

#if ITM_X86_V3
/* Runs of 32-bit instrumentation writes (5-byte packets, header
 * AAAAA011) with now and then an LTS1, for the x86-64 BMI2/AVX2 copy of
 * run_loop (a logging stream: sw32). Two packets a step, like run_loop's
 * 5-byte run, but
 *  - the two records are built in one 256-bit register and stored as two
 *    32-byte vectors: offset and time from a vector of both records'
 *    (`bt`, advanced by 10), payload and port from the 16 bytes at p and
 *    p + 5, one per 128-bit lane (shuffle, the header >> 3 by a per-lane
 *    shift, type and size ORed in): ~8 instructions a packet instead of
 *    ~20;
 *  - the branch that ends a pair run (an LTS1 comes: at random, so it
 *    mispredicts once per LTS1) tests the word loaded one step before, so
 *    it resolves as soon as it issues (-4% time on sw32);
 *  - a write before the LTS1 is taken without a second branch: its
 *    record is written anyway and kept by advancing o, the LTS1's word
 *    picked from the loads at p and p + 5.
 * On sw32reg (the LTS1 at every 8th packet) this runs at ~1.5x run_loop;
 * on sw32 the mispredict per LTS1 is most of its time (docs/benchmarks.md).
 * Records written past the ones kept lie past the count returned. The
 * caller bounds o (room for two records) and p (the 16-byte load at p + 5,
 * the word at p + 10). Its packets are counted as writes and LTS1 (nsw,
 * nlts), not in the 8-bit lanes of itm_fast.h, so a run is not cut every
 * 254 records (a mispredicted exit and a new call each time). Stimulus page
 * 0 only (port = A), and only once a timestamp is known (ts_out ==
 * ts_abs). */
struct run5 {
  const uint8_t *p;
  struct sonde_itm_packet *o;
  uint64_t ts_abs, ts_out, nsw, nlts;
};

static inline __attribute__((always_inline, target("avx2,bmi,bmi2,lzcnt,popcnt"))) void
run5_steps(struct run5 *r, const uint8_t *plim, const struct sonde_itm_packet *olim, uint64_t off0,
           const uint64_t pre)
{
  /* per 128-bit lane: bytes 1..4 (payload) to the value word, byte 0
   * (header) to the port word, >> 3, type and size ORed in */
  const __m256i shuf = _mm256_setr_epi8(1, 2, 3, 4, -1, -1, -1, -1, 0, -1, -1, -1, -1, -1, -1, -1,
                                        1, 2, 3, 4, -1, -1, -1, -1, 0, -1, -1, -1, -1, -1, -1, -1);
  const __m256i port = _mm256_setr_epi64x(0, 3, 0, 3);
  const __m256i fixed = _mm256_setr_epi64x(0, (long long)ITM_SW4_META, 0, (long long)ITM_SW4_META);
  const __m256i step2 = _mm256_setr_epi64x(10, 0, 10, 0);
  const uint8_t *p = r->p;
  struct sonde_itm_packet *o = r->o;
  uint64_t ts = r->ts_abs, nlts = 0;
  const struct sonde_itm_packet *o0 = o;
  /* offset and time of the records at p and p + 5 */
  uint64_t base = off0 + (uint64_t)(uintptr_t)p;
  __m256i bt = _mm256_setr_epi64x((long long)base, (long long)ts, (long long)base + 5, (long long)ts);
  uint64_t w, wn;
  memcpy(&w, p, 8);
  while (p < plim && o < olim) {
    /* the next pair's word loaded a pair ahead: the branch below then
     * resolves as soon as it issues, and a mispredict costs less */
    memcpy(&wn, p + 10, 8);
    if (LIKELY((w & 0x70000000007ull) == 0x30000000003ull)) {
      /* two writes: records from the 16 bytes at p and p + 5, one per lane */
      __m256i x = _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p)),
          _mm_loadu_si128((const __m128i *)(const void *)(p + 5)), 1);
      __m256i hi = _mm256_or_si256(_mm256_srlv_epi64(_mm256_shuffle_epi8(x, shuf), port), fixed);
      _mm256_storeu_si256((__m256i *)(void *)&o[0], _mm256_permute2x128_si256(bt, hi, 0x20));
      _mm256_storeu_si256((__m256i *)(void *)&o[1], _mm256_permute2x128_si256(bt, hi, 0x31));
      bt = _mm256_add_epi64(bt, step2);
      o += 2;
      p += 10;
      w = wn;
      continue;
    }
    /* Not two writes: a write and an LTS1, or an LTS1 (or the run ends).
     * The write is taken without a branch (its record written anyway,
     * kept by advancing o), the LTS1's word selected from the two loads:
     * one mispredicted branch per LTS1, the one above. */
    unsigned one = (w & 7) == 3;
    __m256i x = _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p));
    __m256i hi = _mm256_or_si256(_mm256_srlv_epi64(_mm256_shuffle_epi8(x, shuf), port), fixed);
    _mm256_storeu_si256((__m256i *)(void *)&o[0], _mm256_permute2x128_si256(bt, hi, 0x20));
    uint64_t w5;
    memcpy(&w5, p + 5, 8);
    o += one;
    p += 5 * one;
    w = one ? w5 : w;
    unsigned ll;
    uint64_t dt;
    if (LIKELY((w & 0x80cf) == 0xc0)) {
      /* a 1-byte LTS1 (the usual one: a short gap): its length from this
       * predicted branch, not from the loaded word, so the next position
       * (and the loads at it) need not wait for the load of w5 */
      ll = 2;
      dt = (w >> 8) & 0x7f;
    } else {
      uint64_t c = ~w & 0x8080808000ull;
      if ((w & 0xcf) != 0xc0 || !c)
        break; /* not an LTS1, or a malformed one: run_loop decodes it */
      ll = ((unsigned)__builtin_ctzll(c) >> 3) + 1;
      dt = _pext_u64(_bzhi_u64(w, 8 * ll), 0x7f7f7f7f00ull);
    }
    ts += dt * pre;
    uint64_t meta = itm_fast_table[w & 0xff].meta | (uint64_t)(ll - 1) << 24;
    o->offset = off0 + (uint64_t)(uintptr_t)p;
    o->ts = ts;
    o->value = dt;
    memcpy(&o->port, &meta, sizeof meta);
    o++;
    nlts++;
    p += ll;
    base = off0 + (uint64_t)(uintptr_t)p;
    bt = _mm256_setr_epi64x((long long)base, (long long)ts, (long long)base + 5, (long long)ts);
    memcpy(&w, p, 8);
  }
  r->p = p;
  r->o = o;
  r->ts_abs = r->ts_out = ts;
  r->nsw = (uint64_t)(o - o0) - nlts;
  r->nlts = nlts;
}

/* aligned: where its loop fell relative to 64-byte lines moved sw32 by ~2%
 * when code before it changed (itm8: 2,017 against 2,050 MB/s, same code) */
ITM_NOINLINE __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt"), aligned(64))) static void
run5_x86v3(struct run5 *r, const uint8_t *plim, const struct sonde_itm_packet *olim, uint64_t off0,
           uint64_t pre)
{
  if (pre == 1)
    run5_steps(r, plim, olim, off0, 1);
  else
    run5_steps(r, plim, olim, off0, pre);
}
#endif

/* Pairs of a 5-byte source packet and an LTS1 with 2 payload bytes (PC
 * sampling with timestamps: 8 bytes, 2 packets, one word), and sleeping
 * PC samples (0x15 + 1 byte) with such an LTS1 (5 bytes, once in 16
 * samples on the pc stream), for run_loop. The source header and the
 * LTS1 header (its TC) of the first pair are the run's key: while they
 * repeat, both records' fixed fields are constants and the packets are
 * counted after the loop from the number of pairs (no table load, no
 * counter per pair): 27 host instructions a pair instead of ~51 (callgrind
 * on pc: 3.45 a byte instead of 6.42). Any other
 * word ends the run (run_loop then takes it, perhaps as a new run).
 * p < pend (8 bytes readable) and 2 records of room before each pair:
 * stopping 8 * pairs bytes on bounds both, a sleeping pair moving the limit
 * 3 bytes closer. Stimulus page 0 only (the caller checks). */
struct pairs {
  const uint8_t *p;
  struct sonde_itm_packet *o;
  uint64_t ts_abs, ts_out;
  uint64_t n, nsleep; /* pairs decoded, of which sleeping */
  unsigned type0;     /* type of the run's source packets */
};

#define PAIR_KEY_MASK 0x8080ff00000000ffull
#define SLEEP_KEY_MASK 0x8080ff00ffull

static inline __attribute__((always_inline)) uint64_t pair_dt(uint64_t w, const bool v3)
{
#if ITM_X86_V3
  if (v3)
    return pext_v3(w, 0x7f7f000000000000ull);
#endif
  (void)v3;
  return ((w >> 48) & 0x7f) | ((w >> 49) & 0x3f80);
}

static inline __attribute__((always_inline)) void
pairs_run(struct pairs *r, const uint8_t *pend, const struct sonde_itm_packet *oend, uint64_t off0,
          const uint64_t pre, const bool v3)
{
  const uint8_t *p = r->p;
  struct sonde_itm_packet *o = r->o, *o0 = o;
  uint64_t ts = r->ts_abs, ts_prev = r->ts_out, nsleep = 0;
  uint64_t w;
  memcpy(&w, p, 8);
  const uint64_t key = w & PAIR_KEY_MASK;
  const uint64_t skey = ((w >> 40) & 0xff) << 16 | 0x0080000015ull;
  const uint64_t meta0 = itm_fast_table[w & 0xff].meta;
  const uint64_t metal = itm_fast_table[(w >> 40) & 0xff].meta | 2ull << 24;
  const uint64_t metas = itm_fast_table[0x15].meta;
  r->type0 = itm_fast_table[w & 0xff].type;
  size_t pairs = (size_t)(oend - o) / 2;
  const uint8_t *lim = (size_t)(pend - p) > 8 * pairs ? p + 8 * pairs : pend;
  for (;;) {
    uint64_t off = off0 + (uint64_t)(uintptr_t)p, dt;
    if (LIKELY((w & PAIR_KEY_MASK) == key)) {
      uint32_t v;
      memcpy(&v, p + 1, 4);
      dt = pair_dt(w, v3);
      o[0].value = v;
      memcpy(&o[0].port, &meta0, sizeof meta0);
      o[1].offset = off + 5;
      p += 8;
    } else if ((w & SLEEP_KEY_MASK) == skey) {
      dt = pair_dt(w << 24, v3);
      o[0].value = (w >> 8) & 0xff;
      memcpy(&o[0].port, &metas, sizeof metas);
      o[1].offset = off + 2;
      nsleep++;
      p += 5;
      lim -= 3;
    } else {
      break;
    }
    o[0].offset = off;
    o[0].ts = ts_prev;
    ts += dt * pre;
    ts_prev = ts;
    o[1].ts = ts;
    o[1].value = dt;
    memcpy(&o[1].port, &metal, sizeof metal);
    o += 2;
    if (p >= lim)
      break;
    memcpy(&w, p, 8);
  }
  r->p = p;
  r->o = o;
  r->ts_abs = ts;
  r->ts_out = ts_prev;
  r->n = (uint64_t)(o - o0) / 2;
  r->nsleep = nsleep;
}

/* The loop for streams of regular packets (runs of 5-byte source packets,
 * each perhaps followed by a local timestamp: PC sampling, 32-bit
 * instrumentation logging). Here branches predict well, so it branches on
 * the packet kind instead of computing every field with masks:
 *  - a 5-byte source packet (header xxxxxx11: 4-byte instrumentation write,
 *    PC sample, DWT data value) has a fixed length and fixed fields per
 *    header (itm_fast.h: kind 1, length 5, no flag bits, checked by
 *    tests/itm/test_itm.c), so it costs one table load and four stores;
 *  - an LTS1 gets its length from the continuation bits, as in fast_loop;
 *  - anything else takes fast_loop's branch-free step.
 * *other counts the packets of the last kind, by which fast_run decides
 * which loop suits the stream. */
static inline __attribute__((always_inline)) void
run_loop(struct sonde_itm *d, const uint8_t **pp, const uint8_t *pend, struct sonde_itm_packet **op,
         const struct sonde_itm_packet *oend, uint64_t off0, const uint64_t pre, uint64_t *other,
         const bool v3)
{
  const uint8_t *p = *pp;
  struct sonde_itm_packet *o = *op;
  uint64_t ts_abs = d->ts_abs, ts_out = d->ts_out;
  uint64_t page_base = d->page_base;
  uint64_t *cnt = d->st.packets;
  uint64_t n_other = 0;
  while (LIKELY(p < pend && o < oend)) {
    unsigned h = p[0];
    const struct itm_fast *e = &itm_fast_table[h];
    uint64_t w;
    memcpy(&w, p, 8);
    size_t room = (size_t)(oend - o);
    /* (the run loops assume stimulus page 0: no port arithmetic) */
    if ((w & RUN_PAIR_MASK) == RUN_PAIR && room >= 2 && !page_base) {
      /* PC sampling with timestamps: pairs_run */
      struct pairs r = {p, o, ts_abs, ts_out, 0, 0, 0};
      pairs_run(&r, pend, oend, off0, pre, v3);
      p = r.p;
      o = r.o;
      ts_abs = r.ts_abs;
      ts_out = r.ts_out;
      cnt[r.type0] += r.n - r.nsleep;
      cnt[SONDE_ITM_PC_SLEEP] += r.nsleep;
      cnt[SONDE_ITM_LTS] += r.n;
      continue;
    }
#if ITM_X86_V3
    /* two 32-bit instrumentation writes: run5, records built in vectors */
    if (v3 && (w & 0x70000000007ull) == 0x30000000003ull && !page_base && ts_out == ts_abs &&
        room >= 2 && (size_t)(pend - p) > 16) {
      /* o below olim before each step of two records; the 16-byte load
       * at p + 5 inside the input */
      struct run5 r = {p, o, ts_abs, ts_out, 0, 0};
      run5_x86v3(&r, pend - 14, oend - 1, off0, pre);
      p = r.p;
      o = r.o;
      ts_abs = r.ts_abs;
      ts_out = r.ts_out;
      cnt[SONDE_ITM_SW] += r.nsw;
      cnt[SONDE_ITM_LTS] += r.nlts;
      continue;
    }
#endif
    if ((w & 0x30000000003ull) == 0x30000000003ull && !page_base) {
      /* A run of 5-byte source packets (32-bit instrumentation writes, PC
       * samples without timestamps): a fixed stride of 5, with now and
       * then an LTS1 decoded in line. At most 255 packets (the counter
       * lanes) and the output room: stopping 5 * that many bytes on bounds
       * them, an LTS1 taking 5 of that budget (the limit moves closer by
       * what it is shorter). A bound of 2 bytes a packet ended the run
       * after 100 packets, half of all its exits on the sw32 stream. */
      size_t k = room < 255 ? room : 255;
      const uint8_t *lim = (size_t)(pend - p) > 5 * k ? p + 5 * k : pend;
      uint64_t acc = 0;
      for (;;) {
        uint64_t meta = e->meta;
        o->offset = off0 + (uint64_t)(uintptr_t)p;
        o->ts = ts_out;
        o->value = (uint32_t)(w >> 8);
        memcpy(&o->port, &meta, sizeof meta);
        acc += itm_lane_inc[e->type];
        o++;
        if ((w & 0x30000000000ull) == 0x30000000000ull && p + 5 < lim) {
          /* the next packet is one too: two per header check */
          const struct itm_fast *e1 = &itm_fast_table[(w >> 40) & 0xff];
          uint32_t v;
          memcpy(&v, p + 6, 4);
          meta = e1->meta;
          o->offset = off0 + (uint64_t)(uintptr_t)p + 5;
          o->ts = ts_out;
          o->value = v;
          memcpy(&o->port, &meta, sizeof meta);
          acc += itm_lane_inc[e1->type];
          o++;
          p += 5;
        }
        p += 5;
        if (p >= lim)
          break;
        memcpy(&w, p, 8);
        h = (unsigned)w & 0xff;
        if ((h & 3) != 3) {
          uint64_t lw = w, c;
          if ((h & 0xcf) != 0xc0 || !(c = ~lw & 0x8080808000ull))
            break;
          unsigned ll = ((unsigned)__builtin_ctzll(c) >> 3) + 1;
          uint64_t lx = lw >> 8;
          uint64_t dt = (lx & 0x7f) | ((lx >> 1) & 0x3f80) | ((lx >> 2) & 0x1fc000) |
                        ((lx >> 3) & 0xfe00000);
          dt &= (1ull << (7 * (ll - 1))) - 1;
          ts_abs += dt * pre;
          ts_out = ts_abs;
          meta = itm_fast_table[h].meta | (uint64_t)(ll - 1) << 24;
          o->offset = off0 + (uint64_t)(uintptr_t)p;
          o->ts = ts_out;
          o->value = dt;
          memcpy(&o->port, &meta, sizeof meta);
          acc += ITM_LANE(SONDE_ITM_LTS);
          o++;
          p += ll;
          lim -= 5 - ll;
          if (p >= lim)
            break;
          memcpy(&w, p, 8);
          h = (unsigned)w & 0xff;
          if ((h & 3) != 3)
            break;
        }
        e = &itm_fast_table[h];
      }
      lanes_flush(cnt, acc);
      continue;
    }
    uint64_t x = w >> 8, value, meta;
    unsigned plen;
    if ((h & 3) == 3) {
      value = (uint32_t)x;
      meta = e->meta + (page_base & e->pgmask);
      plen = 5;
    } else if (e->kind == 2) {
      uint64_t c = ~w & 0x8080808000ull;
      if (UNLIKELY(!c))
        break; /* malformed: the general path reports it */
      plen = ((unsigned)__builtin_ctzll(c) >> 3) + 1;
      value = (x & 0x7f) | ((x >> 1) & 0x3f80) | ((x >> 2) & 0x1fc000) | ((x >> 3) & 0xfe00000);
      value &= (1ull << (7 * (plen - 1))) - 1;
      ts_abs += value * pre;
      ts_out = ts_abs;
      meta = e->meta | (uint64_t)(plen - 1) << 24;
    } else if (LIKELY(e->kind == 1)) {
      plen = e->len;
      value = (x & e->vmask) | e->lts2;
      meta = e->meta + ((x & e->fm) << e->fsh) + (page_base & e->pgmask);
      ts_abs += (uint64_t)e->lts2 * pre;
      ts_out = e->lts2 ? ts_abs : ts_out;
      n_other++;
    } else {
      break;
    }
    o->offset = off0 + (uint64_t)(uintptr_t)p;
    o->ts = ts_out;
    o->value = value;
    memcpy(&o->port, &meta, sizeof meta);
    o++;
    cnt[e->type]++;
    p += plen;
  }
  d->ts_abs = ts_abs;
  d->ts_out = ts_out;
  *pp = p;
  *op = o;
  *other = n_other;
}

/* run_loop with the prescale known when it is 1 (no multiply). */
static inline __attribute__((always_inline)) void
runs_any(struct sonde_itm *d, const uint8_t **pp, const uint8_t *pend, struct sonde_itm_packet **op,
         const struct sonde_itm_packet *oend, uint64_t off0, uint64_t *other, const bool v3)
{
  if (d->cfg.ts_prescale == 1)
    run_loop(d, pp, pend, op, oend, off0, 1, other, v3);
  else
    run_loop(d, pp, pend, op, oend, off0, d->cfg.ts_prescale, other, v3);
}

/* run_loop in a function of its own, once per copy of the hot loops: its
 * own register allocation (pc ~6% faster than inlined next to fast_loop). */
ITM_NOINLINE static void runs_portable(struct sonde_itm *d, const uint8_t **pp, const uint8_t *pend,
                                       struct sonde_itm_packet **op,
                                       const struct sonde_itm_packet *oend, uint64_t off0,
                                       uint64_t *other)
{
  runs_any(d, pp, pend, op, oend, off0, other, false);
}

#if ITM_X86_V3
ITM_NOINLINE __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt"))) static void
runs_x86v3(struct sonde_itm *d, const uint8_t **pp, const uint8_t *pend,
           struct sonde_itm_packet **op, const struct sonde_itm_packet *oend, uint64_t off0,
           uint64_t *other)
{
  runs_any(d, pp, pend, op, oend, off0, other, true);
}
#endif

#if ITM_X86_V3
/* The mixed loop's x86-64 BMI2/AVX2 form (streams of random packet kinds,
 * once a timestamp is known): packet boundaries first, then the packets.
 * fast_loop is bound by the instructions a packet (~46), not by its chain;
 * here most of a packet's decoding is done for all byte positions of a
 * block at once, 32 a vector step, as if a header were at each:
 *  - nxt[i] = i + the length (1 + 0/1/2/4 by the size bits; 1 + the
 *    continuation bytes for LTS1, GTS and extension headers with C = 1);
 *  - bz[i] = 8 * length, the bits of the packet in its word, or 0 when the
 *    packet is one for the cold path: GTS, extension (decoded there by
 *    decode_rare, as fast_loop does), sync, reserved, an LTS1 not ended
 *    within 4 bytes (those stop the loop: the general path's);
 *  - sf[i] = size (length - 1) | flags from the payload (EXC FN, EVCNT
 *    bits) << 8, i.e. bits 24..39 of the record's meta word.
 * The loop then follows nxt[] (the loop-carried chain is one byte load)
 * and per packet needs a table entry (itm_mix.h) and two pext: value and
 * time delta (an LTS1's without a branch), ~27 instructions; GTS and
 * extension packets on a cold branch of the same loop (itm_cold_table).
 * While the output room holds a block's MB_POS positions (a packet takes
 * at least a byte) the room is checked per block, below that per packet
 * too. Same records and counts as
 * fast_loop (tests/itm/test_itm_diff.c forces both). Returns true when it
 * stopped at a packet of the general path's, false when the input (a
 * block reads up to MB_POS + 7 bytes) or the output room ran short. */
enum { MB_POS = 224 }; /* positions a block: nxt[i] <= 223 + 5 fits a byte */

static inline __attribute__((always_inline, target("avx2,bmi,bmi2,lzcnt,popcnt"))) void
mixed_next(const uint8_t *p, unsigned npos, uint8_t *nxt, uint8_t *bz, uint16_t *sf)
{
#define V(q) _mm256_loadu_si256((const __m256i *)(const void *)(q))
  /* the splat constants from memory (one table; its address hidden from
   * the optimiser): GCC built each with a movabs and a broadcast, again
   * per block, as the walk's call between blocks clobbers every ymm */
  static const _Alignas(32) int8_t splat[][32] = {
#define X8(x) x, x, x, x, x, x, x, x
#define X32(x) {X8(x), X8(x), X8(x), X8(x)}
      X32(0x0f), X32(0x30), X32(5), X32(4), X32(3), X32(2), X32(0x0e), X32(0x3f), X32(1),
      X32(0x20), X32(-1),
#undef X32
#undef X8
  };
  const int8_t(*sp)[32] = splat;
  __asm__("" : "+r"(sp));
  enum { S_0F, S_30, S_05, S_04, S_03, S_02, S_0E, S_3F, S_01, S_20, S_FF };
#define B(x) V(sp[S_##x])
  /* by the header's low nibble: a fixed packet's length (size bits) */
  const __m256i lfix = _mm256_setr_epi8(1, 2, 3, 5, 1, 2, 3, 5, 1, 2, 3, 5, 1, 2, 3, 5,
                                        1, 2, 3, 5, 1, 2, 3, 5, 1, 2, 3, 5, 1, 2, 3, 5);
  /* header classes: a bit set in both its low and its high nibble's entry.
   * Variable length: 1 LTS1 (0xc0, 0xd0, 0xe0, 0xf0), 2 GTS1 (0x94), 4 GTS2
   * (0xb4), 8 extension with C = 1 (1xxx1s00). Cold path: 16 low nibble
   * 4, 8 or 0xc (GTS, extension, reserved), 32 sync (0x00) and reserved
   * 0x80, 0x90, 0xa0, 0xb0: exactly itm_fast.h's kinds other than 1 and
   * 2, checked for all 256 headers when written; tests/itm/test_itm_diff.c
   * checks the packets). */
  const __m256i clo = _mm256_setr_epi8(33, 0, 0, 0, 22, 0, 0, 0, 24, 0, 0, 0, 24, 0, 0, 0,
                                       33, 0, 0, 0, 22, 0, 0, 0, 24, 0, 0, 0, 24, 0, 0, 0);
  const __m256i chi = _mm256_setr_epi8(48, 16, 16, 16, 16, 16, 16, 16, 56, 58, 56, 60, 25, 25,
                                       25, 25, 48, 16, 16, 16, 16, 16, 16, 16, 56, 58, 56, 60,
                                       25, 25, 25, 25);
  const __m256i nib = B(0F), neg = B(FF), zero = _mm256_setzero_si256();
  __m256i idx = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
  for (unsigned i = 0; i < npos; i += 32) {
    const uint8_t *q = p + i;
    __m256i h = V(q), b1 = V(q + 1), b2 = V(q + 2);
    __m256i lo = _mm256_and_si256(h, nib);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(h, 4), nib);
    __m256i cls = _mm256_and_si256(_mm256_shuffle_epi8(clo, lo), _mm256_shuffle_epi8(chi, hi));
    __m256i var = _mm256_cmpgt_epi8(_mm256_and_si256(cls, B(0F)), zero);
    __m256i cold = _mm256_cmpgt_epi8(_mm256_and_si256(cls, B(30)), zero);
    /* the first of the next four bytes with C = 0 ends a variable packet */
    __m256i lv = _mm256_and_si256(_mm256_cmpgt_epi8(V(q + 4), neg), B(05));
    lv = _mm256_blendv_epi8(lv, B(04), _mm256_cmpgt_epi8(V(q + 3), neg));
    lv = _mm256_blendv_epi8(lv, B(03), _mm256_cmpgt_epi8(b2, neg));
    lv = _mm256_blendv_epi8(lv, B(02), _mm256_cmpgt_epi8(b1, neg));
    cold = _mm256_or_si256(cold, _mm256_and_si256(var, _mm256_cmpeq_epi8(lv, zero)));
    __m256i len = _mm256_blendv_epi8(_mm256_shuffle_epi8(lfix, lo), lv, var);
    _mm256_store_si256((__m256i *)(void *)(nxt + i), _mm256_add_epi8(idx, len));
    _mm256_store_si256((__m256i *)(void *)(bz + i),
                       _mm256_andnot_si256(cold, _mm256_slli_epi16(len, 3)));
    /* EXC (0x0e): FN = payload byte 1 bits 5:4; EVCNT (0x05): byte 0 bits 5:0 */
    __m256i fl = _mm256_or_si256(
        _mm256_and_si256(_mm256_cmpeq_epi8(h, B(0E)),
                         _mm256_and_si256(_mm256_srli_epi16(b2, 4), B(03))),
        _mm256_and_si256(_mm256_cmpeq_epi8(h, B(05)), _mm256_and_si256(b1, B(3F))));
    /* size | flags << 8, in position order (the unpacks work per 128-bit lane) */
    __m256i sz = _mm256_permute4x64_epi64(_mm256_sub_epi8(len, B(01)), 0xd8);
    fl = _mm256_permute4x64_epi64(fl, 0xd8);
    _mm256_store_si256((__m256i *)(void *)(sf + i), _mm256_unpacklo_epi8(sz, fl));
    _mm256_store_si256((__m256i *)(void *)(sf + i + 16), _mm256_unpackhi_epi8(sz, fl));
    idx = _mm256_add_epi8(idx, B(20));
  }
#undef V
#undef B
}

/* A block's per-position arrays (mixed_next). */
struct mix_block {
  _Alignas(32) uint8_t nxt[MB_POS];
  _Alignas(32) uint8_t bz[MB_POS];
  _Alignas(32) uint16_t sf[MB_POS];
};

/* The cold packets of the walk (GTS1, GTS2, extension), by class: 0 GTS1,
 * 1 GTS2, 2 stimulus page (extension, SH = 0), 3 other extension (SH = 1).
 * Decoded without a branch on the class (the classes come at random, and
 * a branch per class mispredicted about once a cold packet), exactly as
 * decode_rare does:
 *   v       pext(packet bytes, vm): GTS1 TS[25:0], GTS2 TS[..:26] (shifted
 *           by sh), extension EX (the header's bits 6:4 first)
 *   repl    global timestamp bits replaced: GTS1 the bits its payload
 *           carries (pext of the packet's all-ones bytes by vm: 7 a byte,
 *           26 for a full one), GTS2 bits 63:26 (fix), extension none
 *   gm      value = the global timestamp (GTS) or v (extension)
 *   fm      GTS1: Wrap and ClkCh from its fourth payload byte
 *   pg      the stimulus page changes (page base = min(v, 2047) * 32) */
struct itm_cold {
  uint64_t vm, lenrepl, fixrepl, gm, meta, fm, pg;
  uint8_t sh, type, pad[6];
};

#define COLD_META(type, flags) ((uint64_t)(type) << 16 | (uint64_t)(flags) << 32)
static const struct itm_cold itm_cold_table[4] = {
    {0x1f7f7f7f00ull, ~0ull, 0, ~0ull, COLD_META(SONDE_ITM_GTS, 0), 3, 0, 0, SONDE_ITM_GTS, {0}},
    {0x7f7f7f7f7f7f00ull, 0, ~((1ull << 26) - 1), ~0ull, COLD_META(SONDE_ITM_GTS, SONDE_ITM_GTS2),
     0, 0, 26, SONDE_ITM_GTS, {0}},
    {0xff7f7f7f70ull, 0, 0, 0, COLD_META(SONDE_ITM_PAGE, 0), 0, ~0ull, 0, SONDE_ITM_PAGE, {0}},
    {0xff7f7f7f70ull, 0, 0, 0, COLD_META(SONDE_ITM_EXT, 1), 0, 0, 0, SONDE_ITM_EXT, {0}},
};
#undef COLD_META

/* The packets of a block from position i while below lim, up to the
 * first one for the general path (returned: below lim) or, with `room`,
 * until the output is full (oend). In a function of
 * its own so that its few variables stay in registers (with the walk in
 * line in mixed_blocks, GCC kept the position and the limit on the
 * stack). The cold packets (bz 0) are decoded in the loop, out of line:
 * a return to mixed_blocks for each (as the sixth pass did) cost some 65
 * cycles a cold packet, 5% of the mixed stream's packets. */
struct mix_walk {
  struct sonde_itm_packet *o;
  uint64_t ts, page_base, offb; /* offb: stream offset of the block */
  uint64_t *cnt;
  uint64_t *gts;
};

static inline __attribute__((always_inline, target("avx2,bmi,bmi2,lzcnt,popcnt"))) unsigned
mixed_walk(const struct mix_block *b, const uint8_t *base, unsigned i, unsigned lim,
           struct mix_walk *r, const uint64_t pre, const struct sonde_itm_packet *oend,
           const bool room)
{
  struct sonde_itm_packet *o = r->o;
  uint64_t ts = r->ts, offb = r->offb;
  uint64_t page_base = r->page_base;
  uint64_t *cnt = r->cnt;
  do {
    unsigned bits = b->bz[i];
    uint64_t w;
    memcpy(&w, base + i, 8);
    if (UNLIKELY(!bits)) {
      /* GTS1, GTS2, extension (itm_fast.h kinds 3, 4, 5) whose end
       * mixed_next found (the same length decode_rare finds: both look
       * for the first C = 0 in the next 4 bytes); anything else is the
       * general path's */
      unsigned kind = itm_fast_table[w & 0xff].kind, len = b->nxt[i] - i;
      if (kind < 3 || !len)
        break;
      const struct itm_cold *c = &itm_cold_table[kind - 3 + (((unsigned)w >> 2) & (kind == 5))];
      uint64_t cut = _bzhi_u64(w, 8 * len);
      uint64_t v = _pext_u64(cut, c->vm);
      uint64_t repl = (_pext_u64(_bzhi_u64(~0ull, 8 * len), c->vm) & c->lenrepl) | c->fixrepl;
      uint64_t g = (*r->gts & ~repl) | ((v << c->sh) & repl);
      *r->gts = g;
      uint64_t flags = (((cut >> 38) & 1) | ((cut >> 36) & 2)) & c->fm;
      uint64_t npg = (v < 2047 ? v : 2047) * 32;
      page_base = (page_base & ~c->pg) | (npg & c->pg);
      o->offset = offb + i;
      o->ts = ts;
      o->value = (g & c->gm) | (v & ~c->gm);
      uint64_t meta = c->meta | (uint64_t)(len - 1) << 24 | flags << 32;
      memcpy(&o->port, &meta, sizeof meta);
      o++;
      cnt[c->type]++;
      i = b->nxt[i];
      continue;
    }
    const struct itm_mix *e = &itm_mix_table[w & 0xff];
    uint64_t wb = _bzhi_u64(w, bits);
    uint64_t meta = (e->meta | (uint64_t)b->sf[i] << 24) + (page_base & e->pgmask);
    ts += _pext_u64(wb, e->tsm) * pre;
    o->offset = offb + i;
    o->ts = ts;
    o->value = _pext_u64(wb, e->pm);
    memcpy(&o->port, &meta, sizeof meta);
    o++;
    cnt[e->type]++;
    i = b->nxt[i];
  } while (i < lim && (!room || o < oend));
  r->o = o;
  r->ts = ts;
  r->page_base = page_base;
  return i;
}

/* oend: NULL when the room holds one packet a position (the block's
 * last), else the walk checks the room per packet too */
ITM_NOINLINE __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt"))) static unsigned
mixed_walk_x86v3(const struct mix_block *b, const uint8_t *base, unsigned i, unsigned lim,
                 struct mix_walk *r, uint64_t pre, const struct sonde_itm_packet *oend)
{
  if (oend)
    return pre == 1 ? mixed_walk(b, base, i, lim, r, 1, oend, true)
                    : mixed_walk(b, base, i, lim, r, pre, oend, true);
  if (pre == 1)
    return mixed_walk(b, base, i, lim, r, 1, NULL, false);
  return mixed_walk(b, base, i, lim, r, pre, NULL, false);
}

static inline __attribute__((always_inline, target("avx2,bmi,bmi2,lzcnt,popcnt"))) bool
mixed_blocks(struct sonde_itm *d, const uint8_t **pp, const uint8_t *pend,
             struct sonde_itm_packet **op, const struct sonde_itm_packet *oend, uint64_t off0)
{
  const uint8_t *base = *pp;
  struct mix_walk r = {*op, d->ts_abs, d->page_base, 0, d->st.packets, &d->gts};
  bool stopped = false;
  unsigned i = 0;
  struct mix_block b;
  /* mixed_next's last load ends at base + MB_POS + 3, the walk's last word
   * at base + MB_POS + 6: below pend (8 bytes readable there) */
  while ((size_t)(pend - base) >= MB_POS + 32 && oend - r.o >= 16) {
    /* At most one packet a position: while the room holds MB_POS packets
     * the walk need not check it. Below that the walk checks it per
     * packet: blocks of `room` positions (the sixth pass) shrank with the
     * room, and with the bench's 512-record output made some 12 blocks a
     * decode call instead of 6, each with its set-up and a mispredicted
     * exit. */
    mixed_next(base, MB_POS, b.nxt, b.bz, b.sf);
    r.offb = off0 + (uint64_t)(uintptr_t)base;
    i = mixed_walk_x86v3(&b, base, 0, MB_POS, &r, d->cfg.ts_prescale,
                         oend - r.o >= MB_POS ? NULL : oend);
    if (i < MB_POS) {
      /* the room is full, or a packet of the general path's: stop */
      stopped = r.o < oend;
      break;
    }
    base += i;
    i = 0;
  }
  d->ts_abs = r.ts;
  d->ts_out = r.ts;
  d->page_base = (uint32_t)r.page_base;
  *pp = base + i;
  *op = r.o;
  return stopped;
}

/* mixed_blocks in a function of its own. */
ITM_NOINLINE __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt"))) static bool
blocks_x86v3(struct sonde_itm *d, const uint8_t **pp, const uint8_t *pend,
             struct sonde_itm_packet **op, const struct sonde_itm_packet *oend, uint64_t off0)
{
  return mixed_blocks(d, pp, pend, op, oend, off0);
}
#endif

/* The hot loop: while at least 8 bytes remain and the header is a
 * fixed-length packet (instrumentation, DWT, LTS2, overflow) or an LTS1,
 * decode it with one of the two loops above. Returns at the first other
 * header; the caller handles that one on the general path.
 *
 * Which loop: fast_loop has no data-dependent branch but the LTS1 one, and
 * wins on streams whose packet kinds look random; run_loop branches on the
 * kind and wins (2x on PC-sample and 32-bit logging streams) when the kinds
 * repeat. The choice is made per call from the previous call's stream:
 * run_loop while at most 1 packet in 8 takes its "other" branch, fast_loop
 * after that until a call averages >= 3.75 bytes per packet (5-byte packets
 * dominate). Both loops give identical packets (tests/itm/test_itm_diff.c
 * forces each). In the x86-64 copy the mixed loop is mixed_blocks while
 * whole blocks fit, fast_loop for the rest. */
static inline __attribute__((always_inline)) void
fast_run_body(struct sonde_itm *d, const uint8_t *in, size_t len, size_t *ip,
              struct sonde_itm_packet *out, size_t cap, size_t *np, uint64_t base, const bool v3)
{
  /* p < pend: 8 bytes readable; o < oend: room for a packet */
  const uint8_t *p = in + *ip, *p0 = p, *pend = in + len - 7;
  struct sonde_itm_packet *o = out + *np, *o0 = o, *oend = out + cap;
  /* offset of the byte at p = off0 + (uintptr_t)p (mod 2^64) */
  uint64_t off0 = base - (uint64_t)(uintptr_t)in;
  unsigned mode = d->loop_mode;
  if (mode == ITM_LOOP_AUTO)
    mode = d->run_mode ? ITM_LOOP_RUN : ITM_LOOP_MIXED;
  if (mode == ITM_LOOP_RUN) {
    uint64_t other = 0;
#if ITM_X86_V3
    if (v3)
      runs_x86v3(d, &p, pend, &o, oend, off0, &other);
    else
#endif
      runs_portable(d, &p, pend, &o, oend, off0, &other);
    if ((uint64_t)(o - o0) >= 64 && other * 8 > (uint64_t)(o - o0))
      d->run_mode = 0;
  } else {
    bool stopped = false;
#if ITM_X86_V3
    /* the blocks (x86-64 copy, once a timestamp is known); fast_loop takes
     * the input's and the room's last packets, and nothing when the blocks
     * stopped at a packet of the general path's */
    if (v3 && d->ts_out != SONDE_ITM_TS_UNKNOWN)
      stopped = blocks_x86v3(d, &p, pend, &o, oend, off0);
#endif
    if (stopped)
      ;
    else if (d->ts_out == SONDE_ITM_TS_UNKNOWN)
      fast_loop(d, &p, pend, &o, oend, off0, 1, false, v3);
    else if (d->cfg.ts_prescale == 1)
      fast_loop(d, &p, pend, &o, oend, off0, 1, true, v3);
    else
      fast_loop(d, &p, pend, &o, oend, off0, d->cfg.ts_prescale, true, v3);
    if ((uint64_t)(o - o0) >= 64 && (uint64_t)(p - p0) * 4 >= (uint64_t)(o - o0) * 15)
      d->run_mode = 1;
  }
  *ip = (size_t)(p - in);
  *np = (size_t)(o - out);
}

/* fast_run, compiled twice: for the baseline ISA, and on x86-64 for CPUs
 * with BMI1/BMI2/LZCNT and AVX2 (three-operand shifts, andn, tzcnt; run5's
 * vectors), chosen once per decoder (itm_setup) like zstd's _default/_bmi2
 * variants. Same packets; tests/itm/test_itm_diff.c runs both
 * (itm_force_portable). */
ITM_NOINLINE static void fast_run(struct sonde_itm *d, const uint8_t *in, size_t len, size_t *ip,
                                  struct sonde_itm_packet *out, size_t cap, size_t *np,
                                  uint64_t base)
{
  fast_run_body(d, in, len, ip, out, cap, np, base, false);
}

#if ITM_X86_V3
ITM_NOINLINE __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt"))) static void
fast_run_x86v3(struct sonde_itm *d, const uint8_t *in, size_t len, size_t *ip,
               struct sonde_itm_packet *out, size_t cap, size_t *np, uint64_t base)
{
  fast_run_body(d, in, len, ip, out, cap, np, base, true);
}
#endif

size_t sonde_itm_decode(struct sonde_itm *d, const uint8_t *in, size_t len, size_t *consumed,
                        struct sonde_itm_packet *out, size_t cap)
{
  size_t i = 0, n = 0;
  const uint64_t base = d->offset;
  if (cap < 2) {
    *consumed = 0;
    return 0;
  }
  while (i < len && n + 2 <= cap) {
    switch (d->state) {
    case ST_IDLE:
      /* Hot loop: whole packets in the buffer. */
      while (LIKELY(i < len && n < cap)) {
        if (i + 8 <= len) {
#if ITM_X86_V3
          if (d->x86v3)
            fast_run_x86v3(d, in, len, &i, out, cap, &n, base);
          else
#endif
            fast_run(d, in, len, &i, out, cap, &n, base);
          if (i >= len || n >= cap)
            break;
        }
        const uint8_t *p = in + i;
        const struct itm_hdr *hi = &itm_hdr_table[*p];
        size_t avail = len - i;
        unsigned k = hi->kind;
        if (LIKELY(k >= K_SW1)) {
          static const uint8_t sz[] = {[K_SW1] = 1, [K_SW2] = 2, [K_SW4] = 4,
                                       [K_HW1] = 1, [K_HW2] = 2, [K_HW4] = 4};
          unsigned size = sz[k];
          if (UNLIKELY(avail < size + 1u))
            goto to_pend;
          source_packet(d, &out[n++], base + i, hi, p, size);
          i += size + 1;
          continue;
        }
        if (UNLIKELY(k == K_ZERO)) {
          d->state = ST_ZEROS;
          d->zstart = base + i;
          d->zeros = 0;
          break;
        }
        if (UNLIKELY(k == K_RES)) {
          lose(d, base + i, SONDE_ITM_SKIP_HEADER);
          i++;
          break;
        }
        int r = decode_packet(d, p, avail, base + i, &out[n]);
        if (r > 0) {
          n++;
          i += (size_t)r;
          continue;
        }
        if (r < 0) {
          lose(d, base + i, SONDE_ITM_SKIP_MALFORMED);
          i++;
          break;
        }
      to_pend:
        memcpy(d->pend, p, avail); /* avail < 8: a packet is at most 7 bytes */
        d->npend = (uint8_t)avail;
        d->pend_off = base + i;
        d->state = ST_PEND;
        i = len;
        break;
      }
      break;
    case ST_PEND:
      while (i < len) {
        d->pend[d->npend++] = in[i++];
        int r = decode_packet(d, d->pend, d->npend, d->pend_off, &out[n]);
        if (r > 0) {
          n++;
          d->npend = 0;
          d->state = ST_IDLE;
          break;
        }
        if (r < 0 || d->npend >= 7) {
          d->npend = 0;
          lose(d, d->pend_off, SONDE_ITM_SKIP_MALFORMED);
          break;
        }
      }
      break;
    case ST_ZEROS:
      while (i < len) {
        uint8_t b = in[i];
        if (b == 0) {
          d->zeros++;
          i++;
          continue;
        }
        i++;
        if (b == 0x80 && d->zeros >= 5) {
          n += sync_found(d, &out[n]);
        } else {
          lose(d, d->zstart, SONDE_ITM_SKIP_SYNC);
        }
        break;
      }
      break;
    case ST_LOST: {
      const uint8_t *z = memchr(in + i, 0, len - i);
      if (!z) {
        i = len;
        break;
      }
      i = (size_t)(z - in);
      d->state = ST_ZEROS;
      d->zstart = base + i;
      d->zeros = 0;
      break;
    }
    }
  }
  d->offset = base + i;
  d->st.bytes += i;
  *consumed = i;
  return n;
}

size_t sonde_itm_finish(struct sonde_itm *d, struct sonde_itm_packet *out, size_t cap)
{
  if (cap < 1)
    return 0;
  uint64_t from = 0;
  unsigned why = 0;
  if (d->lost) {
    from = d->skip_start;
    why = d->skip_why;
  } else if (d->state == ST_PEND) {
    from = d->pend_off;
    why = SONDE_ITM_SKIP_TRUNCATED;
  } else if (d->state == ST_ZEROS) {
    from = d->zstart;
    why = SONDE_ITM_SKIP_TRUNCATED;
  } else {
    return 0;
  }
  size_t n = 0;
  uint64_t skipped = d->offset - from;
  if (skipped) {
    put(&out[n++], from, d->ts_out, SONDE_ITM_SKIP, 0, 0, why, skipped);
    d->st.packets[SONDE_ITM_SKIP]++;
    d->st.skipped_bytes += skipped;
    d->st.losses++;
  }
  /* what remains is reported; the decoder waits for a sync */
  d->npend = 0;
  d->lost = 1;
  d->skip_start = d->offset;
  d->skip_why = SONDE_ITM_SKIP_TRUNCATED;
  d->state = ST_LOST;
  return n;
}
