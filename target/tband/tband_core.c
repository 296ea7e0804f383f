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
  struct tband_core_state *cs = &tband_cores[core];
  enum tband_backend_result r = tband_backend_submit(core, buf, len, is_metadata);
  if (r == TBAND_DROPPED) {
    cs->dropped++;
    cs->report_pending = true;
  }
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
    cs->since_report = 0;
  }
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
  tband_backend_init();
  tband_gather_system_metadata();
}

#if tband_configMARKER_TRACE_ENABLE
void tband_evtmarker_name(uint32_t id, const char *name) { TBAND_EMIT_META(evtmarker_name, id, name); }
void tband_evtmarker(uint32_t id, const char *msg) { TBAND_EMIT_TS(evtmarker, id, msg); }
void tband_evtmarker_begin(uint32_t id, const char *msg) { TBAND_EMIT_TS(evtmarker_begin, id, msg); }
void tband_evtmarker_end(uint32_t id) { TBAND_EMIT_TS(evtmarker_end, id); }
void tband_valmarker_name(uint32_t id, const char *name) { TBAND_EMIT_META(valmarker_name, id, name); }
void tband_valmarker(uint32_t id, int64_t val) { TBAND_EMIT_TS(valmarker, id, val); }
#else
void tband_evtmarker_name(uint32_t id, const char *name) { (void)id; (void)name; }
void tband_evtmarker(uint32_t id, const char *msg) { (void)id; (void)msg; }
void tband_evtmarker_begin(uint32_t id, const char *msg) { (void)id; (void)msg; }
void tband_evtmarker_end(uint32_t id) { (void)id; }
void tband_valmarker_name(uint32_t id, const char *name) { (void)id; (void)name; }
void tband_valmarker(uint32_t id, int64_t val) { (void)id; (void)val; }
#endif

#if tband_configISR_TRACE_ENABLE
void tband_isr_name(uint32_t id, const char *name) { TBAND_EMIT_META(isr_name, id, name); }
void tband_isr_enter(uint32_t id) { TBAND_EMIT_TS(isr_enter, id); }
void tband_isr_exit(uint32_t id) { TBAND_EMIT_TS(isr_exit, id); }
#else
void tband_isr_name(uint32_t id, const char *name) { (void)id; (void)name; }
void tband_isr_enter(uint32_t id) { (void)id; }
void tband_isr_exit(uint32_t id) { (void)id; }
#endif

#endif /* tband_configENABLE */
