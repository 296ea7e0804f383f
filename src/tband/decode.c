/* Streaming decoder for the Tonbandgerät binary trace format (docs/tband.md,
 * "Framing" and "Fields"; reference: "The Tonbandgerät Binary Trace Format").
 *
 * Layers, each a function:
 *   input bytes --(hex_feed | bin_feed)--> framed bytes --(push/end_frame)-->
 *   one COBS frame --(cobs_decode)--> raw event --(decode_event)--> callback
 * Invariants: frame[] holds the bytes since the last 0x00 delimiter (at most
 * FRAME_MAX; longer frames are flagged overlong and reported, not stored);
 * frame_off is the input offset of frame[0]. Every delimiter ends exactly one
 * frame, so a corrupt frame never swallows its neighbours. */
#include "sonde/tband.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_MAX 4096

struct sonde_tband_dec {
  enum sonde_tband_input_format fmt;
  int fixed_core;
  uint32_t core;
  char name[128];
  uint64_t in_off;     /* input offset of the next byte fed */
  uint64_t frame_off;  /* input offset of frame[0] */
  size_t flen;
  bool overlong;
  int hex_hi;          /* pending high nibble, or -1 */
  uint64_t hex_off;    /* offset of the pending nibble */
  bool bad_run;        /* inside a run of invalid hex characters */
  struct sonde_tband_stats st;
  char msg[160];
  uint8_t frame[FRAME_MAX];
  uint8_t raw[FRAME_MAX];
  char str[FRAME_MAX + 1];
};

struct sonde_tband_dec *sonde_tband_dec_new(enum sonde_tband_input_format fmt, int core,
                                            const char *name)
{
  struct sonde_tband_dec *d = calloc(1, sizeof *d);
  if (!d)
    return NULL;
  d->fmt = fmt;
  d->fixed_core = core;
  d->core = core >= 0 ? (uint32_t)core : 0;
  d->hex_hi = -1;
  snprintf(d->name, sizeof d->name, "%s", name ? name : "input");
  return d;
}

void sonde_tband_dec_free(struct sonde_tband_dec *d) { free(d); }

enum sonde_tband_input_format sonde_tband_dec_format(const struct sonde_tband_dec *d)
{
  return d->fmt;
}

void sonde_tband_dec_stats(const struct sonde_tband_dec *d, struct sonde_tband_stats *out)
{
  *out = d->st;
}

/* 0-15 for hex digits, 16 for separators, 17 for 'x'/'X', 255 otherwise. */
static const uint8_t *hex_class(void)
{
  static uint8_t t[256];
  static int ready;
  if (!ready) {
    memset(t, 255, sizeof t);
    for (int i = 0; i < 10; i++)
      t['0' + i] = (uint8_t)i;
    for (int i = 0; i < 6; i++) {
      t['a' + i] = (uint8_t)(10 + i);
      t['A' + i] = (uint8_t)(10 + i);
    }
    t[' '] = t['\t'] = t['\r'] = t['\n'] = t[','] = t['\f'] = t['\v'] = 16;
    t['x'] = t['X'] = 17;
    ready = 1;
  }
  return t;
}

enum sonde_tband_input_format sonde_tband_detect_format(const void *buf, size_t len)
{
  /* Binary traces are full of 0x00 frame delimiters, which text never has;
   * text is hex if nearly all of it is digits and separators (a few stray
   * characters are reported later, not a reason to read text as binary). */
  const uint8_t *p = buf, *t = hex_class();
  size_t n = len < 4096 ? len : 4096;
  size_t digits = 0, other = 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == 0)
      return SONDE_TBAND_BIN;
    if (t[p[i]] == 255)
      other++;
    else
      digits += t[p[i]] < 16;
  }
  return digits && other * 10 <= n ? SONDE_TBAND_HEX : SONDE_TBAND_BIN;
}

static void emit_error(struct sonde_tband_dec *d, sonde_tband_evt_cb cb, void *ctx,
                       uint64_t off, uint32_t flen, int err)
{
  struct sonde_tband_evt e;
  memset(&e, 0, sizeof e);
  e.offset = off;
  e.frame_len = flen;
  e.core = d->core;
  e.error = err;
  e.error_msg = d->msg;
  d->st.frames++;
  d->st.errors++;
  if (cb)
    cb(ctx, &e);
}

/* COBS-decode src[0..n) (no delimiter) into dst. Returns the decoded length
 * or -1 with d->msg set. */
static long cobs_decode(char *msg, size_t msgcap, const uint8_t *src, size_t n, uint8_t *dst)
{
  size_t i = 0, o = 0;
  while (i < n) {
    unsigned code = src[i++];
    size_t run = code - 1u;
    if (run > n - i) {
      if (msg)
        snprintf(msg, msgcap, "COBS block at frame byte %zu runs past the frame end (%zu > %zu)",
                 i - 1, run, n - i);
      return -1;
    }
    memcpy(dst + o, src + i, run);
    o += run;
    i += run;
    if (code != 0xFF && i < n)
      dst[o++] = 0;
  }
  return (long)o;
}

/* Read a varlen value of at most maxbits bits. Returns bytes used, 0 when the
 * frame ends inside it, -1 when it is too long / overflows. */
static int get_varlen(const uint8_t *p, size_t n, unsigned maxbits, uint64_t *out)
{
  uint64_t v = 0;
  unsigned shift = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t b = p[i];
    uint64_t part = (uint64_t)(b & 0x7F);
    if (shift >= maxbits || (maxbits - shift < 7 && (part >> (maxbits - shift)) != 0))
      return -1;
    v |= part << shift;
    if (!(b & 0x80)) {
      *out = v;
      return (int)i + 1;
    }
    shift += 7;
  }
  return 0;
}

static const char *ftype_name(enum sonde_tband_ftype t)
{
  switch (t) {
  case SONDE_TBAND_U32: return "u32";
  case SONDE_TBAND_U64: return "u64";
  case SONDE_TBAND_S64: return "s64";
  case SONDE_TBAND_STR: return "str";
  default: return "u8";
  }
}

long sonde_tband_cobs_decode(const uint8_t *src, size_t n, uint8_t *dst)
{
  if (memchr(src, 0, n))
    return SONDE_E_FORMAT;
  long r = cobs_decode(NULL, 0, src, n, dst);
  return r < 0 ? SONDE_E_FORMAT : r;
}

static void decode_event(struct sonde_tband_dec *d, const uint8_t *raw, size_t n, uint64_t off,
                         uint32_t flen, sonde_tband_evt_cb cb, void *ctx)
{
  struct sonde_tband_evt e;
  memset(&e, 0, sizeof e);
  e.offset = off;
  e.frame_len = flen;
  e.core = d->core;
  e.id = raw[0];
  const struct sonde_tband_evt_desc *desc = sonde_tband_evt_desc(raw[0]);
  if (!desc) {
    snprintf(d->msg, sizeof d->msg, "unknown event id 0x%02x (%zu bytes)", raw[0], n);
    goto bad;
  }
  size_t p = 1;
  if (desc->has_ts) {
    int k = get_varlen(raw + p, n - p, 64, &e.ts);
    if (k <= 0) {
      snprintf(d->msg, sizeof d->msg, "%s: field ts: %s", desc->name,
               k == 0 ? "frame ends inside the field" : "varlen value longer than 64 bits");
      e.error = k == 0 ? SONDE_E_TRUNCATED : SONDE_E_FORMAT;
      goto bad_desc;
    }
    p += (size_t)k;
    e.has_ts = true;
  }
  for (unsigned f = 0; f < desc->nfields; f++) {
    const struct sonde_tband_field_desc *fd = &desc->fields[f];
    int k;
    uint64_t v = 0;
    switch (fd->type) {
    case SONDE_TBAND_STR: {
      size_t len = n - p;
      memcpy(d->str, raw + p, len);
      d->str[len] = '\0';
      e.str = d->str;
      e.str_len = len;
      p = n;
      e.nfields++;
      continue;
    }
    case SONDE_TBAND_U8:
    case SONDE_TBAND_QKIND:
    case SONDE_TBAND_SBKIND:
      k = p < n ? 1 : 0;
      if (k)
        v = raw[p];
      break;
    case SONDE_TBAND_U32:
      k = get_varlen(raw + p, n - p, 32, &v);
      break;
    default: /* U64, S64 */
      k = get_varlen(raw + p, n - p, 64, &v);
      if (k > 0 && fd->type == SONDE_TBAND_S64) {
        /* sign-magnitude, LSB = sign; negative zero is INT64_MIN */
        uint64_t mag = v >> 1;
        int64_t s = (v & 1) ? (mag ? -(int64_t)mag : INT64_MIN) : (int64_t)mag;
        v = (uint64_t)s;
      }
      break;
    }
    if (k <= 0) {
      snprintf(d->msg, sizeof d->msg, "%s: field %s (%s): %s", desc->name, fd->name,
               ftype_name(fd->type),
               k == 0 ? "frame ends before the field is complete" : "varlen value too large");
      e.error = k == 0 ? SONDE_E_TRUNCATED : SONDE_E_FORMAT;
      goto bad_desc;
    }
    e.val[f] = v;
    e.nfields++;
    p += (size_t)k;
  }
  if (p != n) {
    snprintf(d->msg, sizeof d->msg, "%s: %zu unexpected bytes after the last field", desc->name,
             n - p);
    e.error = SONDE_E_FORMAT;
    goto bad_desc;
  }
  e.desc = desc;
  if (desc->id == 0x00 && d->fixed_core < 0) /* core_id: following frames are that core's */
    d->core = (uint32_t)e.val[0], e.core = d->core;
  d->st.frames++;
  if (cb)
    cb(ctx, &e);
  return;
bad_desc:
  /* keep what was decoded so a dump can show it, but flag the frame */
  e.desc = NULL;
  e.error_msg = d->msg;
  d->st.frames++;
  d->st.errors++;
  if (cb)
    cb(ctx, &e);
  return;
bad:
  emit_error(d, cb, ctx, off, flen, SONDE_E_FORMAT);
}

/* Decode one frame (its bytes without the delimiter). The common case, a
 * frame whose first COBS block spans all of it (no zero inside), is decoded
 * in place without a copy. */
static inline void decode_frame(struct sonde_tband_dec *d, const uint8_t *f, size_t flen,
                                uint64_t off, sonde_tband_evt_cb cb, void *ctx)
{
  if (f[0] == flen && flen > 1) {
    decode_event(d, f + 1, flen - 1, off, (uint32_t)flen, cb, ctx);
    return;
  }
  long n = cobs_decode(d->msg, sizeof d->msg, f, flen, d->raw);
  if (n < 0)
    emit_error(d, cb, ctx, off, (uint32_t)flen, SONDE_E_FORMAT);
  else if (n == 0) {
    snprintf(d->msg, sizeof d->msg, "empty frame");
    emit_error(d, cb, ctx, off, (uint32_t)flen, SONDE_E_FORMAT);
  } else
    decode_event(d, d->raw, (size_t)n, off, (uint32_t)flen, cb, ctx);
}

static void end_frame(struct sonde_tband_dec *d, sonde_tband_evt_cb cb, void *ctx)
{
  if (d->overlong) {
    snprintf(d->msg, sizeof d->msg, "frame longer than %d bytes", FRAME_MAX);
    emit_error(d, cb, ctx, d->frame_off, (uint32_t)d->flen, SONDE_E_FORMAT);
  } else if (d->flen) {
    decode_frame(d, d->frame, d->flen, d->frame_off, cb, ctx);
  }
  d->flen = 0;
  d->overlong = false;
}

static inline void push(struct sonde_tband_dec *d, uint8_t b, uint64_t off, sonde_tband_evt_cb cb,
                        void *ctx)
{
  if (b == 0) {
    end_frame(d, cb, ctx);
    return;
  }
  if (d->flen == 0 && !d->overlong)
    d->frame_off = off;
  if (d->flen < FRAME_MAX)
    d->frame[d->flen++] = b;
  else
    d->overlong = true;
}

static void bin_feed(struct sonde_tband_dec *d, const uint8_t *p, size_t len,
                     sonde_tband_evt_cb cb, void *ctx)
{
  size_t i = 0;
  while (i < len) {
    /* frames are short: a plain scan beats a memchr call per frame */
    size_t j = i;
    while (j < len && p[j] != 0)
      j++;
    size_t seg = j - i;
    if (j < len && d->flen == 0 && !d->overlong) {
      /* a whole frame inside this buffer: decode it where it is */
      if (seg > FRAME_MAX) {
        d->frame_off = d->in_off + i;
        d->flen = seg;
        d->overlong = true;
        end_frame(d, cb, ctx);
      } else if (seg) {
        decode_frame(d, p + i, seg, d->in_off + i, cb, ctx);
      }
      i = j + 1;
      continue;
    }
    if (seg) {
      if (d->flen == 0 && !d->overlong)
        d->frame_off = d->in_off + i;
      size_t room = FRAME_MAX - d->flen;
      size_t take = seg < room ? seg : room;
      memcpy(d->frame + d->flen, p + i, take);
      d->flen += take;
      if (take < seg)
        d->overlong = true;
    }
    i = j;
    if (j < len) {
      end_frame(d, cb, ctx);
      i++;
    }
  }
}

static void hex_feed(struct sonde_tband_dec *d, const uint8_t *p, size_t len,
                     sonde_tband_evt_cb cb, void *ctx)
{
  const uint8_t *t = hex_class();
  for (size_t i = 0; i < len; i++) {
    uint8_t c = t[p[i]];
    uint64_t off = d->in_off + i;
    if (c < 16) {
      d->bad_run = false;
      if (d->hex_hi < 0) {
        d->hex_hi = c;
        d->hex_off = off;
      } else {
        push(d, (uint8_t)(d->hex_hi << 4 | c), d->hex_off, cb, ctx);
        d->hex_hi = -1;
      }
    } else if (c == 17 && d->hex_hi == 0) {
      d->hex_hi = -1; /* "0x" prefix */
    } else if (c == 16) {
      if (d->hex_hi >= 0) { /* a lone digit: "5 " means 0x05 */
        push(d, (uint8_t)d->hex_hi, d->hex_off, cb, ctx);
        d->hex_hi = -1;
      }
    } else {
      d->st.bad_chars++;
      if (!d->bad_run) {
        if (p[i] >= 0x20 && p[i] < 0x7F)
          snprintf(d->msg, sizeof d->msg, "invalid character '%c' in hex input", p[i]);
        else
          snprintf(d->msg, sizeof d->msg, "invalid byte 0x%02x in hex input", p[i]);
        emit_error(d, cb, ctx, off, 0, SONDE_E_FORMAT);
      }
      d->bad_run = true;
      d->hex_hi = -1;
    }
  }
}

int sonde_tband_dec_feed(struct sonde_tband_dec *d, const void *buf, size_t len,
                         sonde_tband_evt_cb cb, void *ctx)
{
  if (!len)
    return 0;
  if (d->fmt == SONDE_TBAND_AUTO)
    d->fmt = sonde_tband_detect_format(buf, len);
  if (d->fmt == SONDE_TBAND_HEX)
    hex_feed(d, buf, len, cb, ctx);
  else
    bin_feed(d, buf, len, cb, ctx);
  d->in_off += len;
  d->st.bytes_in += len;
  return 0;
}

int sonde_tband_dec_finish(struct sonde_tband_dec *d, sonde_tband_evt_cb cb, void *ctx)
{
  if (d->hex_hi >= 0) {
    push(d, (uint8_t)d->hex_hi, d->hex_off, cb, ctx);
    d->hex_hi = -1;
  }
  if (d->flen || d->overlong) {
    snprintf(d->msg, sizeof d->msg, "input ends inside a frame (%zu bytes without delimiter)",
             d->flen);
    emit_error(d, cb, ctx, d->frame_off, (uint32_t)d->flen, SONDE_E_TRUNCATED);
    d->flen = 0;
    d->overlong = false;
  }
  return 0;
}
