/* tband_core.c: markers, interrupts, the metadata buffer and dropped-event
 * accounting (docs/tband.md, "Instrumenting", "The metadata buffer",
 * "Dropped events"). Backends live in tband_backend_*.c. */
#include "tband_internal.h"

#if tband_configENABLE
#if tband_configFREERTOS_TRACE_ENABLE
#include "FreeRTOS.h"
#include "task.h"
#endif

struct tband_core_state tband_cores[tband_portNUMBER_OF_CORES];

#if TBAND_FAST
/* The hot path of the events with a tband_fast.h shape, all inside one
 * critical section: encode straight into the snapshot buffer (other
 * backends: into a stack buffer handed to tband_backend_submit). Returns
 * false, having traced nothing, when the event needs the generic path:
 * fields or timestamp out of the fast range, snapshot not recording or
 * nearly full. The caller then emits it with TBAND_EMIT_TS. The fields were
 * checked with TBAND_FAST_OK1/2. A pending drop report needs no check here:
 * it is the countdown's (tband_stored). */
/* (here, not in tband_internal.h: the port's critical section may need
 * FreeRTOS.h, included above) */
TBAND_INLINE bool tband_fast_emit(uint8_t id, uint32_t mid, uint32_t last, bool two)
{
  size_t n = 0;
  tband_portENTER_CRITICAL_FROM_ANY();
  {
    uint32_t c = (uint32_t)(tband_portGET_CORE_ID());
    struct tband_core_state *cs = &tband_cores[c];
#if TBAND_BACKEND_HAS_RESERVE
    uint8_t *d = cs->wp;
    if (__builtin_expect((uintptr_t)d < (uintptr_t)TBAND_LOAD(&cs->wlim), 1)) {
#else
    uint8_t d[TBAND_FAST_SCRATCH];
    {
#endif
#ifdef tband_portTS_LO
      /* the port's timestamp window (e.g. the Cortex-M port's tband_cm_ts_lo) */
      uint32_t lo;
      if (__builtin_expect(tband_portTS_LO(&cs->port, &lo), 1))
        n = two ? tband_fast_lo2(d, &cs->tsc, id, lo, mid, last)
                : tband_fast_lo1(d, &cs->tsc, id, lo, last);
#else
      uint64_t ts = tband_portTIMESTAMP();
      n = two ? tband_fast_ts2(d, &cs->tsc, id, ts, mid, last)
              : tband_fast_ts1(d, &cs->tsc, id, ts, last);
#endif
      if (__builtin_expect(n != 0, 1)) {
#if TBAND_BACKEND_HAS_RESERVE
        cs->wp = d + n;
        tband_stored(c);
#else
        /* straight to the backend (not a metadata event: no metadata buffer) */
        enum tband_backend_result r = tband_backend_submit(c, d, n, false);
        if (__builtin_expect(r == TBAND_STORED, 1))
          tband_stored(c);
        else if (r == TBAND_DROPPED)
          tband_dropped(cs);
#endif
      }
    }
  }
  tband_portEXIT_CRITICAL_FROM_ANY();
  return n != 0;
}
#endif


#if tband_configUSE_METADATA_BUF
/* Shared by all cores: guarded by tband_meta_lock. The tail reserve holds the
 * metadata_overflow frame that tband_get_metadata_buf() appends. */
static uint8_t tband_meta_buf[tband_configMETADATA_BUF_SIZE + TBAND_EVT_metadata_overflow_MAXLEN];
static size_t tband_meta_len;
static uint32_t tband_meta_lost;
static volatile unsigned char tband_meta_lock;

/* Returns the new lost count if the event did not fit, else 0. */
static uint32_t tband_meta_append(const uint8_t *buf, size_t len)
{
  uint32_t lost = 0;
  tband_portSPIN_LOCK(&tband_meta_lock);
  /* After the first loss the buffer is closed: the overflow frame that
   * tband_get_metadata_buf() writes after the last event then never moves. */
  if (!tband_meta_lost && len <= tband_configMETADATA_BUF_SIZE - tband_meta_len) {
    tband_copy(tband_meta_buf + tband_meta_len, buf, len);
    tband_meta_len += len;
  } else {
    lost = ++tband_meta_lost;
  }
  tband_portSPIN_UNLOCK(&tband_meta_lock);
  return lost;
}

const uint8_t *tband_get_metadata_buf(size_t *len)
{
  size_t n;
  tband_portENTER_CRITICAL_FROM_ANY();
  tband_portSPIN_LOCK(&tband_meta_lock);
  n = tband_meta_len;
  if (tband_meta_lost)
    n += tband_encode_metadata_overflow(tband_meta_buf + n, tband_portTIMESTAMP(), tband_meta_lost);
  tband_portSPIN_UNLOCK(&tband_meta_lock);
  tband_portEXIT_CRITICAL_FROM_ANY();
  *len = n;
  return tband_meta_buf;
}

uint32_t tband_metadata_buf_lost(void) { return TBAND_LOAD(&tband_meta_lost); }
#endif

static bool tband_send(uint32_t core, const uint8_t *buf, size_t len, bool is_metadata)
{
  enum tband_backend_result r = tband_backend_submit(core, buf, len, is_metadata);
  if (r == TBAND_DROPPED)
    tband_dropped(&tband_cores[core]);
  return r == TBAND_STORED;
}

void tband_submit_to_backend(const uint8_t *buf, size_t len, bool is_metadata)
{
  uint32_t core = (uint32_t)(tband_portGET_CORE_ID());
#if tband_configUSE_METADATA_BUF
  if (is_metadata) {
    uint32_t lost = tband_meta_append(buf, len);
    if (lost) { /* make the overflow visible in the trace itself */
      uint8_t b[TBAND_EVT_metadata_overflow_MAXLEN];
      size_t n = tband_encode_metadata_overflow(b, tband_portTIMESTAMP(), lost);
      tband_send(core, b, n, false);
    }
  }
#endif
  if (tband_send(core, buf, len, is_metadata))
    tband_stored(core);
}

void tband_report_drops(uint32_t core)
{
  struct tband_core_state *cs = &tband_cores[core];
  uint8_t b[TBAND_EVT_dropped_evt_cnt_MAXLEN];
  size_t n = tband_encode_dropped_evt_cnt(b, tband_portTIMESTAMP(), cs->dropped);
  if (tband_send(core, b, n, false)) {
    cs->report_pending = false;
    cs->countdown = tband_configTRACE_DROP_CNT_EVERY;
  } else {
    cs->countdown = 1; /* again after the next stored event */
  }
}

/* The countdown reached 0: a report is due, unless periodic reports are off
 * and no drop is pending (the count wrapped after 2^32 events). */
void tband_report_due(uint32_t core)
{
  struct tband_core_state *cs = &tband_cores[core];
  if (tband_configTRACE_DROP_CNT_EVERY == 0 && !cs->report_pending)
    cs->countdown = 0;
  else
    tband_report_drops(core);
}

uint32_t tband_dropped_evt_cnt(void)
{
  uint32_t v;
  tband_portENTER_CRITICAL_FROM_ANY();
  v = tband_cores[tband_portGET_CORE_ID()].dropped;
  tband_portEXIT_CRITICAL_FROM_ANY();
  return v;
}

void tband_gather_system_metadata(void)
{
  TBAND_EMIT_META(ts_resolution_ns, (uint64_t)(tband_portTIMESTAMP_RESOLUTION_NS));
}

void tband_init(void)
{
  for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++)
    tband_cores[c].countdown = tband_configTRACE_DROP_CNT_EVERY;
  tband_backend_init();
  tband_gather_system_metadata();
}

/* Markers without a message, value markers and interrupts take the
 * straight-line path of tband_fast.h; what it declines goes to the generic
 * encoder, kept out of line so that the fast path saves few registers. */
#if TBAND_FAST
#define TBAND_NOINLINE __attribute__((noinline))
#define TBAND_FAST1(name, last)                                                      \
  if (__builtin_expect(TBAND_FAST_OK1(last), 1) &&                                   \
      __builtin_expect(tband_fast_emit(TBAND_EVT_##name##_ID, 0, (last), false), 1)) \
  return
#define TBAND_FAST2(name, mid, last)                                                   \
  if (__builtin_expect(TBAND_FAST_OK2(mid, last), 1) &&                                \
      __builtin_expect(tband_fast_emit(TBAND_EVT_##name##_ID, (mid), (last), true), 1)) \
  return
#else
#define TBAND_NOINLINE
#define TBAND_FAST1(name, last) (void)0
#define TBAND_FAST2(name, mid, last) (void)0
#endif
/* With a port's own fast path for the one-field events (tband_portFAST_EVENTS,
 * e.g. the Cortex-M port's assembly), these are its fallback, tband_c_<name>. */
#ifdef tband_portFAST_EVENTS
#define TBAND_API1(name) tband_c_##name
void tband_c_evtmarker(uint32_t id, const char *msg);
void tband_c_evtmarker_begin(uint32_t id, const char *msg);
void tband_c_evtmarker_end(uint32_t id);
void tband_c_isr_enter(uint32_t id);
void tband_c_isr_exit(uint32_t id);
void tband_c_valmarker(uint32_t id, int64_t val);
#else
#define TBAND_API1(name) tband_##name
#endif
#if tband_configMARKER_TRACE_ENABLE
void tband_evtmarker_name(uint32_t id, const char *name) { TBAND_EMIT_META(evtmarker_name, id, name); }
static TBAND_NOINLINE void tband_slow_evtmarker(uint32_t id, const char *msg)
{
  TBAND_EMIT_TS(evtmarker, id, msg);
}
static TBAND_NOINLINE void tband_slow_evtmarker_begin(uint32_t id, const char *msg)
{
  TBAND_EMIT_TS(evtmarker_begin, id, msg);
}
static TBAND_NOINLINE void tband_slow_evtmarker_end(uint32_t id) { TBAND_EMIT_TS(evtmarker_end, id); }
static TBAND_NOINLINE void tband_slow_valmarker(uint32_t id, int64_t val)
{
  TBAND_EMIT_TS(valmarker, id, val);
}
void TBAND_API1(evtmarker)(uint32_t id, const char *msg)
{
  if (!msg || !*msg)
    TBAND_FAST1(evtmarker, id);
  tband_slow_evtmarker(id, msg);
}
void TBAND_API1(evtmarker_begin)(uint32_t id, const char *msg)
{
  if (!msg || !*msg)
    TBAND_FAST1(evtmarker_begin, id);
  tband_slow_evtmarker_begin(id, msg);
}
void TBAND_API1(evtmarker_end)(uint32_t id)
{
  TBAND_FAST1(evtmarker_end, id);
  tband_slow_evtmarker_end(id);
}
void tband_valmarker_name(uint32_t id, const char *name) { TBAND_EMIT_META(valmarker_name, id, name); }
void TBAND_API1(valmarker)(uint32_t id, int64_t val)
{
  uint32_t m = tband_fast_s64(val);
  TBAND_FAST2(valmarker, id, m);
  tband_slow_valmarker(id, val);
}
#else
void tband_evtmarker(uint32_t id, const char *msg) { (void)id; (void)msg; }
void tband_evtmarker_begin(uint32_t id, const char *msg) { (void)id; (void)msg; }
void tband_evtmarker_end(uint32_t id) { (void)id; }
void tband_valmarker_name(uint32_t id, const char *name) { (void)id; (void)name; }
void tband_valmarker(uint32_t id, int64_t val) { (void)id; (void)val; }
#endif

#if tband_configISR_TRACE_ENABLE
static TBAND_NOINLINE void tband_slow_isr_enter(uint32_t id) { TBAND_EMIT_TS(isr_enter, id); }
static TBAND_NOINLINE void tband_slow_isr_exit(uint32_t id) { TBAND_EMIT_TS(isr_exit, id); }
void tband_isr_name(uint32_t id, const char *name) { TBAND_EMIT_META(isr_name, id, name); }
void TBAND_API1(isr_enter)(uint32_t id)
{
  TBAND_FAST1(isr_enter, id);
  tband_slow_isr_enter(id);
}
void TBAND_API1(isr_exit)(uint32_t id)
{
  TBAND_FAST1(isr_exit, id);
  tband_slow_isr_exit(id);
}
#else
void tband_isr_name(uint32_t id, const char *name) { (void)id; (void)name; }
void tband_isr_enter(uint32_t id) { (void)id; }
void tband_isr_exit(uint32_t id) { (void)id; }
#endif

#endif /* tband_configENABLE */
