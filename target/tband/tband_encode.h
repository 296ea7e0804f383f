/* tband_encode.h: Tonbandgerät wire format, encoder side.
 *
 * Implements "The Tonbandgerät Binary Trace Format" of the reference
 * documentation: varlen (LEB128-style, least significant septet first, MSB =
 * more follows) u32/u64 fields, s64 in sign-magnitude (LSB = sign, INT64_MIN
 * encoded as negative zero 0x01), raw strings as the last field, and COBS
 * framing with a 0x00 delimiter after each event.
 *
 * Portable C99, no libc. Every event of tband_events.def gets
 *   enum { TBAND_EVT_<name>_ID, _IS_METADATA, _RAWMAX, _MAXLEN }
 *   size_t tband_encode_<name>(uint8_t out[TBAND_EVT_<name>_MAXLEN], [uint64_t ts,] fields...)
 * returning the framed length including the trailing zero. Strings are cut at
 * TBAND_ENCODE_MAX_STR_LEN bytes (tband_configMAX_STR_LEN on the target).
 *
 * The host decoder (src/tband) includes only tband_events.def; the host unit
 * tests include this file to round-trip every event. */
#ifndef TBAND_ENCODE_H
#define TBAND_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#ifndef TBAND_ENCODE_MAX_STR_LEN
#ifdef tband_configMAX_STR_LEN
#define TBAND_ENCODE_MAX_STR_LEN tband_configMAX_STR_LEN
#else
#define TBAND_ENCODE_MAX_STR_LEN 20
#endif
#endif

/* Worst case framed size of an n-byte message: one code byte per started
 * 254-byte block, the data, and the delimiter (reference: "at most
 * 1 + ceil(N/254) + N bytes, including a trailing zero"). */
#define TBAND_COBS_MAXLEN(n) ((n) + ((n) + 253) / 254 + 1)

static inline size_t tband_put_u32(uint8_t *p, uint32_t v)
{
  size_t n = 0;
  while (v >= 0x80u) {
    p[n++] = (uint8_t)(v | 0x80u);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

static inline size_t tband_put_u64(uint8_t *p, uint64_t v)
{
  size_t n = 0;
  /* 32-bit cores: finish with the cheaper 32-bit loop once the value fits */
  while (v > 0xFFFFFFFFu) {
    p[n++] = (uint8_t)(v | 0x80u);
    v >>= 7;
  }
  return n + tband_put_u32(p + n, (uint32_t)v);
}

static inline size_t tband_put_s64(uint8_t *p, int64_t v)
{
  uint64_t m;
  if (v == INT64_MIN)
    m = 1; /* "negative zero" */
  else if (v < 0)
    m = ((uint64_t)(-v) << 1) | 1u;
  else
    m = (uint64_t)v << 1;
  return tband_put_u64(p, m);
}

static inline size_t tband_put_u8(uint8_t *p, uint8_t v)
{
  p[0] = v;
  return 1;
}

static inline size_t tband_put_str(uint8_t *p, const char *s, size_t max)
{
  size_t n = 0;
  if (s)
    while (n < max && s[n] != '\0') {
      p[n] = (uint8_t)s[n];
      n++;
    }
  return n;
}

/* COBS-frame raw[0..n) into out and append the 0x00 delimiter. A new block
 * is only opened after a full 254-byte run if more data follows, so the
 * result never exceeds TBAND_COBS_MAXLEN(n). Returns the framed length. */
static inline size_t tband_cobs_encode(const uint8_t *raw, size_t n, uint8_t *out)
{
  size_t code_at = 0, o = 1;
  uint8_t code = 1;
  for (size_t i = 0; i < n; i++) {
    uint8_t b = raw[i];
    if (b == 0) {
      out[code_at] = code;
      code_at = o++;
      code = 1;
    } else {
      out[o++] = b;
      code++;
      if (code == 0xFF && i + 1 < n) {
        out[code_at] = code;
        code_at = o++;
        code = 1;
      }
    }
  }
  out[code_at] = code;
  out[o++] = 0;
  return o;
}

/* ---- generated from tband_events.def ---------------------------------- */
#define TBAND_CTYPE_U8 uint8_t
#define TBAND_CTYPE_QKIND uint8_t
#define TBAND_CTYPE_SBKIND uint8_t
#define TBAND_CTYPE_U32 uint32_t
#define TBAND_CTYPE_U64 uint64_t
#define TBAND_CTYPE_S64 int64_t
#define TBAND_CTYPE_STR const char *

#define TBAND_RAWMAX_U8 1
#define TBAND_RAWMAX_QKIND 1
#define TBAND_RAWMAX_SBKIND 1
#define TBAND_RAWMAX_U32 5
#define TBAND_RAWMAX_U64 10
#define TBAND_RAWMAX_S64 10
#define TBAND_RAWMAX_STR TBAND_ENCODE_MAX_STR_LEN
#define TBAND_RAWMAX_NONE 0
#define TBAND_RAWMAX_KIND_TS 10
#define TBAND_RAWMAX_KIND_META 0
#define TBAND_ISMETA_TS 0
#define TBAND_ISMETA_META 1

#define TBAND_PUT_U8(p, v) p += tband_put_u8(p, v)
#define TBAND_PUT_QKIND(p, v) p += tband_put_u8(p, v)
#define TBAND_PUT_SBKIND(p, v) p += tband_put_u8(p, v)
#define TBAND_PUT_U32(p, v) p += tband_put_u32(p, v)
#define TBAND_PUT_U64(p, v) p += tband_put_u64(p, v)
#define TBAND_PUT_S64(p, v) p += tband_put_s64(p, v)
#define TBAND_PUT_STR(p, v) p += tband_put_str(p, v, TBAND_ENCODE_MAX_STR_LEN)

#define TBAND_TSPARAM_TS , uint64_t ts
#define TBAND_TSPARAM_META
#define TBAND_TSPUT_TS(p) TBAND_PUT_U64(p, ts)
#define TBAND_TSPUT_META(p) (void)0

#define TBAND_PARAMS_0(t1, n1, t2, n2, t3, n3)
#define TBAND_PARAMS_1(t1, n1, t2, n2, t3, n3) , TBAND_CTYPE_##t1 n1
#define TBAND_PARAMS_2(t1, n1, t2, n2, t3, n3) , TBAND_CTYPE_##t1 n1, TBAND_CTYPE_##t2 n2
#define TBAND_PARAMS_3(t1, n1, t2, n2, t3, n3) \
  , TBAND_CTYPE_##t1 n1, TBAND_CTYPE_##t2 n2, TBAND_CTYPE_##t3 n3
#define TBAND_PUTS_0(p, t1, n1, t2, n2, t3, n3) (void)0
#define TBAND_PUTS_1(p, t1, n1, t2, n2, t3, n3) TBAND_PUT_##t1(p, n1)
#define TBAND_PUTS_2(p, t1, n1, t2, n2, t3, n3) TBAND_PUT_##t1(p, n1); TBAND_PUT_##t2(p, n2)
#define TBAND_PUTS_3(p, t1, n1, t2, n2, t3, n3) \
  TBAND_PUT_##t1(p, n1); TBAND_PUT_##t2(p, n2); TBAND_PUT_##t3(p, n3)

#define TBAND_EVENT(id, group, name, kind, origin, nf, t1, n1, t2, n2, t3, n3)          \
  enum {                                                                                \
    TBAND_EVT_##name##_ID = id,                                                         \
    TBAND_EVT_##name##_IS_METADATA = TBAND_ISMETA_##kind,                               \
    TBAND_EVT_##name##_RAWMAX = 1 + TBAND_RAWMAX_KIND_##kind + TBAND_RAWMAX_##t1 +     \
                                TBAND_RAWMAX_##t2 + TBAND_RAWMAX_##t3,                  \
    TBAND_EVT_##name##_MAXLEN = TBAND_COBS_MAXLEN(TBAND_EVT_##name##_RAWMAX)            \
  };                                                                                    \
  static inline size_t tband_encode_##name(uint8_t *out TBAND_TSPARAM_##kind           \
                                               TBAND_PARAMS_##nf(t1, n1, t2, n2, t3, n3)) \
  {                                                                                     \
    uint8_t raw[TBAND_EVT_##name##_RAWMAX];                                             \
    uint8_t *p = raw;                                                                   \
    *p++ = (uint8_t)(id);                                                               \
    TBAND_TSPUT_##kind(p);                                                              \
    TBAND_PUTS_##nf(p, t1, n1, t2, n2, t3, n3);                                         \
    return tband_cobs_encode(raw, (size_t)(p - raw), out);                              \
  }
#include "tband_events.def"
#undef TBAND_EVENT

#endif
