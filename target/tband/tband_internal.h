/* tband_internal.h: what the tracer's own .c files share (not for users). */
#ifndef TBAND_INTERNAL_H
#define TBAND_INTERNAL_H

#include "tband.h"

#if tband_configENABLE
#include "tband_encode.h"
#include "tband_fast.h"

/* Emit one event: critical section, timestamp taken inside it (so the order
 * in a core's buffer is timestamp order), encode on the stack, submit.
 *   TBAND_EMIT_TS(isr_enter, id);    TBAND_EMIT_META(isr_name, id, name); */
#define TBAND_EMIT_TS(name, ...)                                                       \
  do {                                                                                 \
    tband_portENTER_CRITICAL_FROM_ANY();                                               \
    {                                                                                  \
      uint32_t tband_c_ = (uint32_t)(tband_portGET_CORE_ID());                         \
      uint8_t tband_b_[TBAND_EVT_##name##_MAXLEN];                                     \
      /* straight into the backend's buffer when it has room (no copy) */            \
      uint8_t *tband_d_ = tband_backend_reserve(tband_c_, TBAND_EVT_##name##_MAXLEN);  \
      uint64_t tband_t_ = tband_portTIMESTAMP();                                       \
      TBAND_FAST_UPDATE(tband_c_, tband_t_);                                           \
      size_t tband_n_ = tband_encode_##name(tband_d_ ? tband_d_ : tband_b_,            \
                                            tband_t_, __VA_ARGS__);                    \
      if (tband_d_) {                                                                  \
        tband_backend_commit(tband_c_, tband_n_);                                      \
        tband_stored(tband_c_);                                                        \
      } else {                                                                         \
        tband_submit_to_backend(tband_b_, tband_n_, false);                            \
      }                                                                                \
    }                                                                                  \
    tband_portEXIT_CRITICAL_FROM_ANY();                                                \
  } while (0)
/* The generic path keeps the fast path's timestamp cache current. */
#if TBAND_FAST && defined(tband_portTS_ARM)
/* ... and the port's timestamp window, which relies on that cache */
#define TBAND_FAST_UPDATE(core, ts)                                                    \
  do {                                                                                 \
    tband_fast_tscache_update(&tband_cores[core].tsc, (ts));                           \
    tband_portTS_ARM(&tband_cores[core].port);                                         \
  } while (0)
#elif TBAND_FAST
#define TBAND_FAST_UPDATE(core, ts) tband_fast_tscache_update(&tband_cores[core].tsc, (ts))
#else
#define TBAND_FAST_UPDATE(core, ts) ((void)0)
#endif
#define TBAND_EMIT_META(name, ...)                                                   \
  do {                                                                               \
    tband_portENTER_CRITICAL_FROM_ANY();                                             \
    {                                                                                \
      uint8_t tband_b_[TBAND_EVT_##name##_MAXLEN];                                   \
      size_t tband_n_ = tband_encode_##name(tband_b_, __VA_ARGS__);                  \
      tband_submit_to_backend(tband_b_, tband_n_, true);                             \
    }                                                                                \
    tband_portEXIT_CRITICAL_FROM_ANY();                                              \
  } while (0)

/* Loads/stores of flags shared between cores. */
#if tband_portNUMBER_OF_CORES > 1
#define TBAND_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define TBAND_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else
#define TBAND_LOAD(p) (*(p))
#define TBAND_STORE(p, v) (*(p) = (v))
#endif

/* Per-core state (tband_core.c). Only its own core touches it, inside a
 * critical section, except `wlim`, which the snapshot's state changes set for
 * every core under the snapshot lock. The fast path's fields come first and
 * together: one object, one address on the hot path (docs/tband.md, "Cost per
 * event"). */
struct tband_core_state {
  uint8_t *wp;        /* snapshot backend: where this core's next frame goes.
                       * Streaming over ITM with the Cortex-M port's assembly
                       * (TBAND_CM_FAST_ITM, core 0): its frame buffer, set by
                       * tband_cm_init(), where the assembly builds each frame
                       * before writing it out (wp does not move) */
  uint8_t *wlim;      /* snapshot backend: while wp < wlim, a fast frame
                       * (TBAND_FAST_SCRATCH bytes) fits; NULL unless recording.
                       * TBAND_CM_FAST_ITM: wp + 1 from tband_cm_init() on
                       * (always room), NULL before (the assembly falls back to
                       * the C path, which does not use wp or wlim there) */
  uint32_t countdown; /* stored events until the next dropped_evt_cnt: 1 after
                       * a drop, else tband_configTRACE_DROP_CNT_EVERY (0: none
                       * due; the count then wraps and tband_report_due says so) */
  struct tband_tscache tsc; /* the fast encoders' high timestamp bytes */
#ifdef tband_portFAST_STATE
  tband_portFAST_STATE port; /* the port's part (Cortex-M: the timestamp window) */
#endif
  uint32_t dropped;    /* events lost so far (cumulative, as traced) */
  bool report_pending; /* a drop happened that is not yet reported */
};
extern struct tband_core_state tband_cores[tband_portNUMBER_OF_CORES];
void tband_report_drops(uint32_t core);
void tband_report_due(uint32_t core);

/* After an event was stored: the countdown to the next dropped-event report
 * (after a drop, or every tband_configTRACE_DROP_CNT_EVERY events). */
TBAND_INLINE void tband_stored(uint32_t core)
{
  if (__builtin_expect(--tband_cores[core].countdown == 0, 0))
    tband_report_due(core);
}

/* An event was lost: count it, and report the count after the next stored one. */
TBAND_INLINE void tband_dropped(struct tband_core_state *cs)
{
  cs->dropped++;
  cs->report_pending = true;
  cs->countdown = 1;
}

/* Backend interface (one of tband_backend_*.c is compiled in). */
enum tband_backend_result {
  TBAND_STORED,  /* accepted */
  TBAND_DROPPED, /* lost: counted and reported as dropped_evt_cnt */
  TBAND_IGNORED, /* backend not recording (snapshot not triggered/finished) */
};
enum tband_backend_result tband_backend_submit(uint32_t core, const uint8_t *buf, size_t len,
                                               bool is_metadata);
void tband_backend_init(void);
/* Zero-copy path: room for a frame of at most maxlen bytes in the backend's
 * own buffer, or NULL (then the event goes through tband_backend_submit).
 * tband_backend_commit() then says how many bytes were written there.
 * Inline, so that the hot path has no calls and other backends fold it away. */
#if tband_configUSE_BACKEND_SNAPSHOT
#define TBAND_BACKEND_HAS_RESERVE 1
enum { TBAND_SNAP_IDLE, TBAND_SNAP_RUNNING, TBAND_SNAP_DONE };
extern uint8_t tband_snap_buf[tband_portNUMBER_OF_CORES][tband_configBACKEND_SNAPSHOT_BUF_SIZE];
extern volatile uint32_t tband_snap_state;
TBAND_INLINE uint8_t *tband_backend_reserve(uint32_t core, size_t maxlen)
{
  struct tband_core_state *cs = &tband_cores[core];
  uint8_t *lim = TBAND_LOAD(&cs->wlim);
  /* the buffer ends TBAND_FAST_SCRATCH - 1 bytes past lim */
  if (!lim || maxlen > (size_t)(lim + (TBAND_FAST_SCRATCH - 1) - cs->wp))
    return 0; /* near the end or not recording: tband_backend_submit decides */
  return cs->wp;
}
TBAND_INLINE void tband_backend_commit(uint32_t core, size_t len) { tband_cores[core].wp += len; }
#else
#define TBAND_BACKEND_HAS_RESERVE 0
TBAND_INLINE uint8_t *tband_backend_reserve(uint32_t core, size_t maxlen)
{
  (void)core;
  (void)maxlen;
  return 0;
}
TBAND_INLINE void tband_backend_commit(uint32_t core, size_t len)
{
  (void)core;
  (void)len;
}
#endif

/* Byte copy without libc. */
static inline void tband_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
  for (size_t i = 0; i < n; i++)
    dst[i] = src[i];
}

#endif
#endif
