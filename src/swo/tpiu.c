/* TPIU deformatter: removes the CoreSight trace formatter from a byte stream.
 *
 * Implements ARM CoreSight Architecture Specification v2.0 (IHI 0029),
 * chapter "Trace Formatter" (frame format, synchronisation packets):
 *
 *   frame (16 bytes, after alignment by a full sync):
 *   | offset | size | meaning                                                |
 *   |--------|------|--------------------------------------------------------|
 *   | 0,2..14| 1    | bit0=1: ID change, ID = bits 7:1                       |
 *   |        |      | bit0=0: data, bits 7:1 here, bit 0 = aux bit k (2k)    |
 *   | 1,3..13| 1    | data (full byte)                                       |
 *   | 15     | 1    | auxiliary: bit k belongs to byte 2k (k = 0..7)         |
 *
 *   For an ID change at byte 2k the aux bit k says when the new ID applies:
 *   0 = from byte 2k+1 on, 1 = after byte 2k+1 (2k+1 keeps the old ID).
 *   Full sync: FF FF FF 7F between frames. Half sync: FF 7F at an even/odd
 *   pair inside a frame (ID 0x7F + 0x7F), ignored. ID 0 = null, 0x70..0x7F
 *   reserved.
 *
 * State machine (one byte at a time in tpiu_feed's loop):
 *
 *   UNSYNCED --(FF FF FF 7F seen)--> SYNCED, pos = 0        [EV_UNSYNCED/EV_SYNC]
 *   SYNCED: frame[pos++] = byte
 *       sync completes with pos == 4   -> pos = 0 (normal inter-frame sync)
 *       sync completes with pos != 4   -> drop partial frame, pos = 0 [EV_RESYNC]
 *       pos == 16                      -> decode_frame(), pos = 0
 *
 * Invariant: a full sync cannot occur inside a legal frame (it would need an
 * FF at an even offset, i.e. ID 0x7F, followed by something other than 7F),
 * so any sync off a boundary is corruption or misalignment. */
#include <stdlib.h>
#include <string.h>

#include "sonde/swo.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "src/swo word-at-a-time scanning assumes a little-endian host"
#endif
#if defined(__GNUC__)
#define SWO_TPIU_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SWO_TPIU_UNLIKELY(x) (x)
#endif
#define SYNC_WORD 0xFFFFFF7Fu /* last four bytes FF FF FF 7F, oldest in the top byte */
/* Bit 0 of bytes 0, 2, 4, 6 of a little-endian 64-bit load: the ID-change
 * flags of the even frame bytes. */
#define EVEN_LSB 0x0001000100010001ull
#define REP8(b) (0x0101010101010101ull * (b))

/* True if any of the 16 bytes at p is 0x7F (the only byte that completes a
 * full sync). */
static inline bool has_7f(const uint8_t *p)
{
  uint64_t a, b;
  memcpy(&a, p, 8);
  memcpy(&b, p + 8, 8);
  a ^= REP8(0x7F);
  b ^= REP8(0x7F);
  /* classic "has zero byte" test */
  uint64_t za = (a - REP8(0x01)) & ~a & REP8(0x80);
  uint64_t zb = (b - REP8(0x01)) & ~b & REP8(0x80);
  return (za | zb) != 0;
}

struct sonde_swo_tpiu {
  struct sonde_swo_tpiu_config cfg;
  sonde_swo_tpiu_event_fn cb;
  void *cb_ctx;
  uint32_t sr;         /* the last four input bytes */
  unsigned pos;        /* bytes in frame[] */
  int cur_id;
  bool synced;
  uint64_t unsynced_since; /* offset where skipping began */
  struct sonde_swo_tpiu_stats st;
  uint8_t frame[16];
};

void sonde_swo_tpiu_config_init(struct sonde_swo_tpiu_config *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->id = SONDE_SWO_TPIU_ID_ITM;
  cfg->assume_aligned = false;
  cfg->initial_id = 0;
}

static void tpiu_start(struct sonde_swo_tpiu *t)
{
  sonde_swo_tpiu_event_fn cb = t->cb;
  void *ctx = t->cb_ctx;
  struct sonde_swo_tpiu_config cfg = t->cfg;
  memset(t, 0, sizeof *t);
  t->cfg = cfg;
  t->cb = cb;
  t->cb_ctx = ctx;
  t->cur_id = cfg.initial_id;
  t->synced = cfg.assume_aligned;
  t->st.synced = t->synced;
  t->st.current_id = t->cur_id;
}

int sonde_swo_tpiu_new(const struct sonde_swo_tpiu_config *cfg, struct sonde_swo_tpiu **out)
{
  struct sonde_swo_tpiu_config def;
  if (!out)
    return SONDE_E_ARG;
  *out = NULL;
  if (!cfg) {
    sonde_swo_tpiu_config_init(&def);
    cfg = &def;
  }
  if (cfg->id != SONDE_SWO_TPIU_ID_ALL && (cfg->id < 1 || cfg->id > 0x6F))
    return SONDE_E_ARG;
  if (cfg->initial_id < 0 || cfg->initial_id > 0x7F)
    return SONDE_E_ARG;
  struct sonde_swo_tpiu *t = calloc(1, sizeof *t);
  if (!t)
    return SONDE_E_NOMEM;
  t->cfg = *cfg;
  tpiu_start(t);
  *out = t;
  return 0;
}

void sonde_swo_tpiu_free(struct sonde_swo_tpiu *t) { free(t); }

void sonde_swo_tpiu_reset(struct sonde_swo_tpiu *t)
{
  if (t)
    tpiu_start(t);
}

void sonde_swo_tpiu_set_event_callback(struct sonde_swo_tpiu *t, sonde_swo_tpiu_event_fn fn,
                                       void *ctx)
{
  t->cb = fn;
  t->cb_ctx = ctx;
}

static void tpiu_event(struct sonde_swo_tpiu *t, enum sonde_swo_tpiu_event_kind k, uint64_t off,
                       uint64_t lost)
{
  if (t->cb) {
    struct sonde_swo_tpiu_event e = {k, off, lost};
    t->cb(t->cb_ctx, &e);
  }
}

/* Account one data byte under `id` and output it if selected. */
#define EMIT(byte, id)                                                        \
  do {                                                                        \
    unsigned id_ = (unsigned)(id);                                            \
    st->bytes_per_id[id_]++;                                                  \
    if (id_ == sel || (all && id_ != 0 && id_ < 0x70)) {                      \
      out[o] = (byte);                                                        \
      if (out_ids)                                                            \
        out_ids[o] = (uint8_t)id_;                                            \
      o++;                                                                    \
    } else if (id_ == 0) {                                                    \
      st->null_bytes++;                                                       \
    } else if (id_ >= 0x70) {                                                 \
      st->reserved_bytes++;                                                   \
    }                                                                         \
  } while (0)

/* Decode one complete 16-byte frame; returns the new output count. */
static size_t decode_frame_body(struct sonde_swo_tpiu *t, const uint8_t *f, uint8_t *out,
                                uint8_t *out_ids, size_t o)
{
  struct sonde_swo_tpiu_stats *st = &t->st;
  const unsigned sel = t->cfg.id == SONDE_SWO_TPIU_ID_ALL ? 0x100u : (unsigned)t->cfg.id;
  const bool all = t->cfg.id == SONDE_SWO_TPIU_ID_ALL;
  const unsigned aux = f[15];
  unsigned id = (unsigned)t->cur_id;
  uint64_t w0, w1;
  memcpy(&w0, f, 8);
  memcpy(&w1, f + 8, 8);
  if (((w0 | w1) & EVEN_LSB) == 0) {
    /* Common case: no ID change in the frame, 15 data bytes for one ID. */
    st->bytes_per_id[id] += 15;
    st->frames++;
    if (id == sel || (all && id != 0 && id < 0x70)) {
      for (unsigned k = 0; k < 7; k++) {
        out[o + 2 * k] = (uint8_t)(f[2 * k] | ((aux >> k) & 1u));
        out[o + 2 * k + 1] = f[2 * k + 1];
      }
      out[o + 14] = (uint8_t)(f[14] | ((aux >> 7) & 1u));
      if (out_ids)
        memset(out_ids + o, (int)id, 15);
      return o + 15;
    }
    if (id == 0)
      st->null_bytes += 15;
    else if (id >= 0x70)
      st->reserved_bytes += 15;
    return o;
  }
  for (unsigned k = 0; k < 8; k++) {
    const unsigned e = f[2 * k];
    const unsigned auxbit = (aux >> k) & 1u;
    if (e & 1u) {
      const unsigned nid = e >> 1;
      if (k == 7) { /* byte 14: no data byte follows in this frame */
        if (e == 0xFFu) {
          /* ID 0x7F with nothing after it: reserved, ignore */
          continue;
        }
        id = nid;
        st->id_changes++;
        continue;
      }
      const unsigned d = f[2 * k + 1];
      if (e == 0xFFu && d == 0x7Fu) { /* half sync */
        st->half_syncs++;
        continue;
      }
      st->id_changes++;
      if (auxbit) { /* takes effect after the next data byte */
        EMIT(d, id);
        id = nid;
      } else {
        id = nid;
        EMIT(d, id);
      }
    } else {
      EMIT((e & 0xFEu) | auxbit, id);
      if (k < 7)
        EMIT(f[2 * k + 1], id);
    }
  }
  t->cur_id = (int)id;
  st->frames++;
  return o;
}

/* Decode the frame that starts at input offset `foff`; reports data dropped
 * under reserved IDs once per frame. */
static inline size_t decode_frame(struct sonde_swo_tpiu *t, const uint8_t *f, uint8_t *out,
                                  uint8_t *out_ids, size_t o, uint64_t foff)
{
  const uint64_t before = t->st.reserved_bytes;
  o = decode_frame_body(t, f, out, out_ids, o);
  if (SWO_TPIU_UNLIKELY(t->st.reserved_bytes != before))
    tpiu_event(t, SONDE_SWO_TPIU_EV_RESERVED, foff, t->st.reserved_bytes - before);
  return o;
}

size_t sonde_swo_tpiu_feed(struct sonde_swo_tpiu *t, const uint8_t *in, size_t n,
                           uint8_t *out, uint8_t *out_ids)
{
  size_t o = 0;
  size_t i = 0;
  const uint64_t base = t->st.in_bytes;
  uint32_t sr = t->sr;

  while (i < n) {
    if (!t->synced) {
      /* Skip until a full sync completes. */
      for (; i < n; i++) {
        sr = (sr << 8) | in[i];
        if (sr == SYNC_WORD)
          break;
      }
      if (i == n)
        break;
      i++;
      uint64_t at = base + i; /* first byte after the sync */
      uint64_t lost = at >= 4 ? at - 4 - t->unsynced_since : 0;
      if (lost) {
        t->st.lost_bytes += lost;
        tpiu_event(t, SONDE_SWO_TPIU_EV_UNSYNCED, t->unsynced_since, lost);
      }
      t->synced = true;
      t->pos = 0;
      t->st.full_syncs++;
      tpiu_event(t, SONDE_SWO_TPIU_EV_SYNC, at - 4, 0);
      continue;
    }

    /* Fast path: whole frames straight from the input when no byte in
     * offsets 0..15 can complete a sync (no 0x7F anywhere in it). A sync can
     * only complete on a 0x7F byte, and FF FF FF carried over in `sr` alone
     * cannot complete one without it. */
    if (t->pos == 0) {
      const size_t i0 = i;
      while (n - i >= 16 && !has_7f(in + i)) {
        o = decode_frame(t, in + i, out, out_ids, o, base + i);
        i += 16;
      }
      if (i != i0)
        sr = (uint32_t)in[i - 4] << 24 | (uint32_t)in[i - 3] << 16 | (uint32_t)in[i - 2] << 8 |
             in[i - 1];
      if (i == n)
        break;
    }

    /* Byte loop for the rest of the current frame. */
    while (i < n) {
      const uint8_t b = in[i++];
      sr = (sr << 8) | b;
      t->frame[t->pos++] = b;
      if (sr == SYNC_WORD) {
        t->st.full_syncs++;
        if (t->pos != 4) {
          uint64_t lost = t->pos > 4 ? t->pos - 4 : 0;
          t->st.resyncs++;
          t->st.lost_bytes += lost;
          tpiu_event(t, SONDE_SWO_TPIU_EV_RESYNC, base + i - t->pos, lost);
        }
        t->pos = 0;
        break;
      }
      if (t->pos == 16) {
        o = decode_frame(t, t->frame, out, out_ids, o, base + i - 16);
        t->pos = 0;
        break;
      }
    }
  }
  t->sr = sr;
  t->st.in_bytes += n;
  t->st.out_bytes += o;
  t->st.current_id = t->cur_id;
  t->st.synced = t->synced;
  return o;
}

void sonde_swo_tpiu_get_stats(const struct sonde_swo_tpiu *t, struct sonde_swo_tpiu_stats *st)
{
  *st = t->st;
  if (!t->synced) /* bytes skipped so far, still waiting for a sync */
    st->lost_bytes += t->st.in_bytes - t->unsynced_since;
}

int sonde_swo_tpiu_parse_id(const char *text, int *id)
{
  if (!text || !*text) {
    *id = SONDE_SWO_TPIU_ID_ITM;
    return 0;
  }
  if (strcmp(text, "all") == 0) {
    *id = SONDE_SWO_TPIU_ID_ALL;
    return 0;
  }
  char *end;
  unsigned long v = strtoul(text, &end, 0);
  if (*end || text[0] == '-' || v < 1 || v > 0x6F)
    return SONDE_E_ARG;
  *id = (int)v;
  return 0;
}
