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
/* The hot helpers are inlined even at -Os (where GCC otherwise calls them:
 * 2.5x the cycles per event; docs/benchmarks.md). */
#if defined(__GNUC__)
#define TBAND_INLINE static inline __attribute__((always_inline))
#else
#define TBAND_INLINE static inline
#endif

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

/* One-pass encoder: fields are varlen-encoded straight into COBS output.
 * Invariant: out[code_at] is reserved for the current block's code, `code`
 * is 1 + the bytes written since it. `lng` is a compile-time constant per
 * event: only events that can exceed 253 raw bytes need the 0xFF block
 * split (a split at the very end is left out, as in tband_cobs_encode). */
struct tband_cobs {
  uint8_t *out;
  size_t o, code_at;
  uint32_t code;
  int split; /* the current (empty) block was opened by a 0xFF split */
};

TBAND_INLINE void tband_cobs_begin(struct tband_cobs *c, uint8_t *out)
{
  c->out = out;
  c->code_at = 0;
  c->o = 1;
  c->code = 1;
  c->split = 0;
}

TBAND_INLINE void tband_cobs_nz(struct tband_cobs *c, uint8_t b, int lng)
{
  c->out[c->o++] = b;
  if (lng) {
    c->split = 0;
    if (++c->code == 0xFF) {
      c->out[c->code_at] = 0xFF;
      c->code_at = c->o++;
      c->code = 1;
      c->split = 1;
    }
  } else {
    c->code++;
  }
}

TBAND_INLINE void tband_cobs_zero(struct tband_cobs *c)
{
  c->out[c->code_at] = (uint8_t)c->code;
  c->code_at = c->o++;
  c->code = 1;
  c->split = 0;
}

TBAND_INLINE void tband_cobs_u8(struct tband_cobs *c, uint8_t b, int lng)
{
  if (b)
    tband_cobs_nz(c, b, lng);
  else
    tband_cobs_zero(c);
}

TBAND_INLINE void tband_cobs_u32(struct tband_cobs *c, uint32_t v, int lng)
{
  while (v >= 0x80u) { /* continuation bytes are never zero */
    tband_cobs_nz(c, (uint8_t)(v | 0x80u), lng);
    v >>= 7;
  }
  tband_cobs_u8(c, (uint8_t)v, lng);
}

TBAND_INLINE void tband_cobs_u64(struct tband_cobs *c, uint64_t v, int lng)
{
  while (v > 0xFFFFFFFFu) {
    tband_cobs_nz(c, (uint8_t)(v | 0x80u), lng);
    v >>= 7;
  }
  tband_cobs_u32(c, (uint32_t)v, lng);
}

TBAND_INLINE void tband_cobs_s64(struct tband_cobs *c, int64_t v, int lng)
{
  uint64_t m;
  if (v == INT64_MIN)
    m = 1;
  else if (v < 0)
    m = ((uint64_t)(-v) << 1) | 1u;
  else
    m = (uint64_t)v << 1;
  tband_cobs_u64(c, m, lng);
}

TBAND_INLINE void tband_cobs_str(struct tband_cobs *c, const char *s, size_t max, int lng)
{
  if (s)
    for (size_t n = 0; n < max && s[n] != '\0'; n++)
      tband_cobs_nz(c, (uint8_t)s[n], lng);
}

/* Close the frame: the last block's code, then the delimiter. A trailing
 * 0xFF split with no data after it is undone (the decoder treats a final
 * 0xFF block as ending the frame). */
TBAND_INLINE size_t tband_cobs_end(struct tband_cobs *c)
{
  if (c->split) /* nothing followed the full block: drop its empty successor */
    c->o = c->code_at;
  else
    c->out[c->code_at] = (uint8_t)c->code;
  c->out[c->o++] = 0;
  return c->o;
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

#define TBAND_LONG(name) (TBAND_EVT_##name##_RAWMAX >= 254)
#define TBAND_PUT_U8(c, v, l) tband_cobs_u8(c, v, l)
#define TBAND_PUT_QKIND(c, v, l) tband_cobs_u8(c, v, l)
#define TBAND_PUT_SBKIND(c, v, l) tband_cobs_u8(c, v, l)
#define TBAND_PUT_U32(c, v, l) tband_cobs_u32(c, v, l)
#define TBAND_PUT_U64(c, v, l) tband_cobs_u64(c, v, l)
#define TBAND_PUT_S64(c, v, l) tband_cobs_s64(c, v, l)
#define TBAND_PUT_STR(c, v, l) tband_cobs_str(c, v, TBAND_ENCODE_MAX_STR_LEN, l)

#define TBAND_TSPARAM_TS , uint64_t ts
#define TBAND_TSPARAM_META
#define TBAND_TSPUT_TS(c, l) TBAND_PUT_U64(c, ts, l)
#define TBAND_TSPUT_META(c, l) (void)0

#define TBAND_PARAMS_0(t1, n1, t2, n2, t3, n3)
#define TBAND_PARAMS_1(t1, n1, t2, n2, t3, n3) , TBAND_CTYPE_##t1 n1
#define TBAND_PARAMS_2(t1, n1, t2, n2, t3, n3) , TBAND_CTYPE_##t1 n1, TBAND_CTYPE_##t2 n2
#define TBAND_PARAMS_3(t1, n1, t2, n2, t3, n3) \
  , TBAND_CTYPE_##t1 n1, TBAND_CTYPE_##t2 n2, TBAND_CTYPE_##t3 n3
#define TBAND_PUTS_0(c, l, t1, n1, t2, n2, t3, n3) (void)0
#define TBAND_PUTS_1(c, l, t1, n1, t2, n2, t3, n3) TBAND_PUT_##t1(c, n1, l)
#define TBAND_PUTS_2(c, l, t1, n1, t2, n2, t3, n3) TBAND_PUT_##t1(c, n1, l); TBAND_PUT_##t2(c, n2, l)
#define TBAND_PUTS_3(c, l, t1, n1, t2, n2, t3, n3) \
  TBAND_PUT_##t1(c, n1, l); TBAND_PUT_##t2(c, n2, l); TBAND_PUT_##t3(c, n3, l)

#define TBAND_EVENT(id, group, name, kind, origin, nf, t1, n1, t2, n2, t3, n3)          \
  enum {                                                                                \
    TBAND_EVT_##name##_ID = id,                                                         \
    TBAND_EVT_##name##_IS_METADATA = TBAND_ISMETA_##kind,                               \
    TBAND_EVT_##name##_RAWMAX = 1 + TBAND_RAWMAX_KIND_##kind + TBAND_RAWMAX_##t1 +     \
                                TBAND_RAWMAX_##t2 + TBAND_RAWMAX_##t3,                  \
    TBAND_EVT_##name##_MAXLEN = TBAND_COBS_MAXLEN(TBAND_EVT_##name##_RAWMAX)            \
  };                                                                                    \
  TBAND_INLINE size_t tband_encode_##name(uint8_t *out TBAND_TSPARAM_##kind           \
                                               TBAND_PARAMS_##nf(t1, n1, t2, n2, t3, n3)) \
  {                                                                                     \
    struct tband_cobs c_;                                                               \
    tband_cobs_begin(&c_, out);                                                         \
    tband_cobs_u8(&c_, (uint8_t)(id), 0); /* a constant: the branch folds */              \
    TBAND_TSPUT_##kind(&c_, TBAND_LONG(name));                                          \
    TBAND_PUTS_##nf(&c_, TBAND_LONG(name), t1, n1, t2, n2, t3, n3);                     \
    return tband_cobs_end(&c_);                                                         \
  }
#include "tband_events.def"
#undef TBAND_EVENT

#endif
