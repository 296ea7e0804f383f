/* tband_fast.h: straight-line encoders for the common event shapes
 * (docs/tband.md, "Cost per event"). Same bytes as tband_encode.h (the
 * Tonbandgerät binary trace format: varlen fields, COBS framing); the tests in
 * tests/tband/test_fast.c compare the two byte for byte.
 *
 * Shapes: [id][ts][last] (isr_enter/exit, evtmarker_end, evtmarker with an
 * empty string) and [id][ts][mid][last] (valmarker), with
 *   ts   < 2^56 and not 0,
 *   mid  in 1..2^28-1,
 *   last in 0..2^28-1.
 * Outside these the encoders return 0 and the caller uses tband_encode_*.
 *
 * Why it is cheaper than the generic encoder:
 * - a varlen value below 2^28 is spread into one little-endian word (its
 *   four septets, one per byte) and its length and continuation bits come
 *   from one CLZ: no per-byte loop;
 * - a frame whose only possible zero byte is the last field's single 0x00
 *   needs no per-byte COBS bookkeeping: the code byte is the frame length
 *   (minus 1 when the last field is 0, whose byte then becomes the 0x01 code
 *   of the empty final block);
 * - the timestamp's bits 28 and up change every 2^28 units (0.27 s in ns):
 *   their varlen bytes are kept per core in struct tband_tscache and only
 *   re-encoded when they change.
 * The frame is written with unaligned word stores (ARMv7-M and later allow
 * them on normal memory) that may write up to TBAND_FAST_SCRATCH bytes from
 * the frame start, beyond the frame's end: the caller provides that room.
 *
 * Needs GCC/Clang builtins and a little-endian target; elsewhere, or with
 * tband_configFAST_PATH 0 (e.g. when CCR.UNALIGN_TRP traps unaligned
 * stores), TBAND_FAST is 0 and the generic encoder is used. */
#ifndef TBAND_FAST_H
#define TBAND_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "tband_encode.h"

#ifndef TBAND_FAST
#if defined(tband_configFAST_PATH) && !tband_configFAST_PATH
#define TBAND_FAST 0
#elif defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TBAND_FAST 1
#else
#define TBAND_FAST 0
#endif
#endif

/* Bytes a fast encoder may write from the frame start (header 2, ts word 4,
 * cached high ts word 4, mid word 4, last word 4, delimiter 1). */
#define TBAND_FAST_SCRATCH 19

/* Varlen bytes of the timestamp's bits 28..55 (zero-initialised = "0"). */
struct tband_tscache {
  uint32_t key; /* ts >> 28 that hw encodes */
  uint32_t hw;  /* its varlen bytes, little-endian */
  uint32_t len; /* 4 + their number (the ts length); 0: no valid entry (key 0 too) */
};

#if TBAND_FAST

/* Unaligned little-endian stores (one STR/STRH on ARMv7-M; the builtin, not
 * memcpy, so that freestanding builds need no libc). */
TBAND_INLINE void tband_fast_st32(uint8_t *p, uint32_t v) { __builtin_memcpy(p, &v, 4); }
TBAND_INLINE void tband_fast_st16(uint8_t *p, uint32_t v)
{
  uint16_t h = (uint16_t)v;
  __builtin_memcpy(p, &h, 2);
}

/* The septets of v < 2^28, one per byte, least significant first: three
 * "shift the bits above a septet up by one" steps (v += v above bit k). Bits
 * 28..31 of v end up in bit 31 or drop out. Written out for ARMv7-M, where
 * GCC otherwise turns it into masks and a literal load (9 cycles, not 6). */
TBAND_INLINE uint32_t tband_fast_spread(uint32_t v)
{
#if defined(__arm__) && defined(__thumb2__)
  uint32_t t;
  __asm__("lsr %1, %0, #7\n\t"
          "add %0, %0, %1, lsl #7\n\t"
          "lsr %1, %0, #15\n\t"
          "add %0, %0, %1, lsl #15\n\t"
          "lsr %1, %0, #23\n\t"
          "add %0, %0, %1, lsl #23"
          : "+r"(v), "=&r"(t));
#else
  v += (v >> 7) << 7;
  v += (v >> 15) << 15;
  v += (v >> 23) << 23;
#endif
  return v;
}

/* Varlen of v < 2^28 as a little-endian word (bytes beyond the length are
 * 0); *len = 1..4. */
TBAND_INLINE uint32_t tband_fast_varlen(uint32_t v, uint32_t *len)
{
  uint32_t w = tband_fast_spread(v);
  uint32_t s = (uint32_t)__builtin_clz(w | 1u) & 24u; /* 8 x (unused top bytes) */
  *len = 4u - (s >> 3);
  return w | (0x00808080u >> s);
}

/* Bring the cache up to date for timestamp ts (on the generic path, which
 * also takes the events that find it stale). */
TBAND_INLINE void tband_fast_tscache_update(struct tband_tscache *tc, uint64_t ts)
{
  uint32_t key = (uint32_t)(ts >> 28);
  if (key != tc->key && (ts >> 56) == 0) {
    uint32_t n;
    uint32_t w = tband_fast_varlen(key, &n);
    tc->key = key;
    tc->hw = key ? w : 0;
    tc->len = key ? 4u + n : 0;
  }
}

/* The varlen of a timestamp whose bits 28 and up the cache holds, from its
 * low bits `lo` (bits 28-31 are ignored), at p (may write 8 bytes); returns
 * its length, or 0 when the timestamp is 0. */
TBAND_INLINE uint32_t tband_fast_ts_lo(uint8_t *p, const struct tband_tscache *tc, uint32_t lo)
{
  uint32_t w = tband_fast_spread(lo);
  uint32_t n = tc->len;
  if (__builtin_expect(n != 0, 1)) { /* ts >= 2^28: 4 low bytes, all continued */
    tband_fast_st32(p, w | 0x80808080u);
    tband_fast_st32(p + 4, tc->hw);
    return n;
  }
  /* key 0 (the cache holds it with len 0): ts < 2^28, 1-4 bytes */
  if (__builtin_expect(w == 0, 0))
    return 0; /* ts 0: a zero byte in mid-frame */
  uint32_t s = (uint32_t)__builtin_clz(w) & 24u;
  tband_fast_st32(p, w | (0x00808080u >> s));
  return 4u - (s >> 3);
}

/* The timestamp's varlen at p (may write 8 bytes); returns its length, or 0
 * when the cache does not hold ts's high bytes (then the generic path
 * updates it), or ts is 0 or >= 2^56. */
TBAND_INLINE uint32_t tband_fast_ts(uint8_t *p, const struct tband_tscache *tc, uint64_t ts)
{
  uint32_t lo = (uint32_t)ts, hi = (uint32_t)(ts >> 32);
  uint32_t key = hi << 4 | lo >> 28; /* ts >> 28 unless ts >= 2^60 */
  if (__builtin_expect(key != tc->key || (hi >> 24) != 0, 0))
    return 0;
  return tband_fast_ts_lo(p, tc, lo);
}

/* The last field of a frame (v < 2^28) at q, then the delimiter; returns
 * its length. A 0 becomes 0x01, the code of the empty final COBS block: the
 * caller subtracts (v == 0) from the frame's code byte. */
TBAND_INLINE uint32_t tband_fast_last(uint8_t *q, uint32_t v)
{
  if (__builtin_expect(v - 1u < 127u, 1)) { /* 1..127: the byte and the delimiter */
    tband_fast_st16(q, v);
    return 1;
  }
  uint32_t ln;
  uint32_t lw = tband_fast_varlen(v, &ln) | (uint32_t)(v == 0);
  tband_fast_st32(q, lw);
  q[ln] = 0;
  return ln;
}

/* Whether tband_fast_ts1/ts2 take these fields (checked before reading the
 * clock). ts1: last in 1..127 (one byte: ids of markers and interrupts);
 * ts2: mid in 1..2^28-1, last below 2^28. */
#define TBAND_FAST_OK1(last) ((last) - 1u < 127u)
#define TBAND_FAST_OK2(mid, last) (((last) >> 28) == 0 && (mid) - 1u < 0x0FFFFFFFu) /* 0 wraps */

/* The rest of a frame whose timestamp (n bytes, n != 0) is at p + 2. */
TBAND_INLINE size_t tband_fast_end1(uint8_t *p, uint32_t n, uint8_t id, uint32_t last)
{
  tband_fast_st16(p + 2 + n, last); /* the byte, then the delimiter */
  tband_fast_st16(p, (n + 3u) | (uint32_t)id << 8);
  return n + 4u;
}

/* [id][ts][last] with TBAND_FAST_OK1(last): returns the frame length, or 0
 * (use the generic encoder) when the timestamp is not in the fast range. */
TBAND_INLINE size_t tband_fast_ts1(uint8_t *p, const struct tband_tscache *tc, uint8_t id,
                                   uint64_t ts, uint32_t last)
{
  uint32_t n = tband_fast_ts(p + 2, tc, ts);
  if (__builtin_expect(n == 0, 0))
    return 0;
  return tband_fast_end1(p, n, id, last);
}

/* The same from the timestamp's low bits (tband_fast_ts_lo: the cache holds
 * the rest). */
TBAND_INLINE size_t tband_fast_lo1(uint8_t *p, const struct tband_tscache *tc, uint8_t id,
                                   uint32_t lo, uint32_t last)
{
  uint32_t n = tband_fast_ts_lo(p + 2, tc, lo);
  if (__builtin_expect(n == 0, 0))
    return 0;
  return tband_fast_end1(p, n, id, last);
}

/* The rest of a [id][ts][mid][last] frame whose timestamp (n bytes) is at p + 2. */
TBAND_INLINE size_t tband_fast_end2(uint8_t *p, uint32_t n, uint8_t id, uint32_t mid,
                                    uint32_t last)
{
  uint32_t mn;
  tband_fast_st32(p + 2 + n, tband_fast_varlen(mid, &mn));
  n += mn;
  n += tband_fast_last(p + 2 + n, last);
  tband_fast_st16(p, (n + 2u - (uint32_t)(last == 0)) | (uint32_t)id << 8);
  return n + 3u;
}

/* [id][ts][mid][last] with TBAND_FAST_OK2(mid, last): the same as ts1. */
TBAND_INLINE size_t tband_fast_ts2(uint8_t *p, const struct tband_tscache *tc, uint8_t id, uint64_t ts,
                                   uint32_t mid, uint32_t last)
{
  uint32_t n = tband_fast_ts(p + 2, tc, ts);
  if (__builtin_expect(n == 0, 0))
    return 0;
  return tband_fast_end2(p, n, id, mid, last);
}

TBAND_INLINE size_t tband_fast_lo2(uint8_t *p, const struct tband_tscache *tc, uint8_t id,
                                   uint32_t lo, uint32_t mid, uint32_t last)
{
  uint32_t n = tband_fast_ts_lo(p + 2, tc, lo);
  if (__builtin_expect(n == 0, 0))
    return 0;
  return tband_fast_end2(p, n, id, mid, last);
}

/* The sign-magnitude form of an s64 (as tband_cobs_s64 makes it) when
 * |v| < 2^27, so that it fits 28 bits; else 0xFFFFFFFF, which the encoders
 * above refuse. */
TBAND_INLINE uint32_t tband_fast_s64(int64_t v)
{
  uint32_t x = (uint32_t)v;
  if (__builtin_expect((int64_t)(int32_t)x != v || x + (1u << 27) >= (1u << 28), 0))
    return 0xFFFFFFFFu;
  return (int32_t)x < 0 ? (0u - x) << 1 | 1u : x << 1;
}

#endif /* TBAND_FAST */
#endif
