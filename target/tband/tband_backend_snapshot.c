/* tband_backend_snapshot.c: the snapshot backend (docs/tband.md, "Snapshot").
 *
 * One buffer per core, filled only by its own core. Shared state is the
 * recording state, changed under tband_snap_lock and read with acquire
 * semantics:  IDLE --tband_trigger_snapshot--> RUNNING --(a buffer is full |
 * tband_stop_snapshot)--> DONE --tband_reset_snapshot--> IDLE.
 * The full-callback runs once, on the core whose buffer filled first. */
#include "tband_internal.h"

#if tband_configENABLE && tband_configUSE_BACKEND_SNAPSHOT
#if tband_configFREERTOS_TRACE_ENABLE
#include "FreeRTOS.h"
#include "task.h"
#endif

#define SNAP_IDLE TBAND_SNAP_IDLE
#define SNAP_RUNNING TBAND_SNAP_RUNNING
#define SNAP_DONE TBAND_SNAP_DONE

/* Each core's write position and fast-path limit are in its tband_cores[]
 * entry (wp, wlim: see tband_backend_reserve in tband_internal.h); wlim is
 * non-NULL only while RUNNING and changes with the state, under the lock. */
uint8_t tband_snap_buf[tband_portNUMBER_OF_CORES][tband_configBACKEND_SNAPSHOT_BUF_SIZE];
volatile uint32_t tband_snap_state;
static volatile uint32_t tband_snap_full;
static volatile unsigned char tband_snap_lock;

/* (C99: a negative array size if tband_configBACKEND_SNAPSHOT_BUF_SIZE is too small) */
typedef char tband_snap_buf_size_check[tband_configBACKEND_SNAPSHOT_BUF_SIZE >=
                                               TBAND_FAST_SCRATCH + TBAND_EVT_core_id_MAXLEN +
                                                   TBAND_EVT_dropped_evt_cnt_MAXLEN
                                           ? 1
                                           : -1];

/* The fast path's limit of core c while recording (room for TBAND_FAST_SCRATCH bytes). */
#define SNAP_WLIM(c)                                                                   \
  (tband_snap_buf[c] + tband_configBACKEND_SNAPSHOT_BUF_SIZE - (TBAND_FAST_SCRATCH - 1))

/* RUNNING -> DONE (under the lock): no core records any more. */
static void snap_close(void)
{
  for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++)
    TBAND_STORE(&tband_cores[c].wlim, (uint8_t *)0);
  TBAND_STORE(&tband_snap_state, SNAP_DONE);
}

void tband_backend_init(void)
{
  for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++)
    tband_cores[c].wp = tband_snap_buf[c];
}

enum tband_backend_result tband_backend_submit(uint32_t core, const uint8_t *buf, size_t len,
                                               bool is_metadata)
{
  (void)is_metadata;
  if (TBAND_LOAD(&tband_snap_state) != SNAP_RUNNING)
    return TBAND_IGNORED;
  uint8_t *wp = tband_cores[core].wp;
  if (len > (size_t)(tband_snap_buf[core] + tband_configBACKEND_SNAPSHOT_BUF_SIZE - wp)) {
    bool first = false;
    tband_portSPIN_LOCK(&tband_snap_lock);
    if (tband_snap_state == SNAP_RUNNING) {
      snap_close();
      tband_snap_full = 1;
      first = true;
    }
    tband_portSPIN_UNLOCK(&tband_snap_lock);
    if (first) {
      tband_portBACKEND_SNAPSHOT_BUF_FULL_CALLBACK();
    }
    return TBAND_DROPPED;
  }
  tband_copy(wp, buf, len);
  tband_cores[core].wp = wp + len;
  return TBAND_STORED;
}

bool tband_trigger_snapshot(void)
{
  bool ok = false;
  tband_portENTER_CRITICAL_FROM_ANY();
  tband_portSPIN_LOCK(&tband_snap_lock);
  if (tband_snap_state == SNAP_IDLE) {
    uint64_t ts = tband_portTIMESTAMP();
    /* every core's buffer starts by naming its core, so a dump decodes alone */
    for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++)
      tband_cores[c].wp = tband_snap_buf[c] + tband_encode_core_id(tband_snap_buf[c], ts, c);
    /* A drop report still pending here is from the last recording, which
     * ended with that drop: it opens this one (this core's; the others' come
     * with their next stored event). Drops only happen when a recording ends,
     * so while RUNNING this core has no report pending and its fast paths
     * need not check (the Cortex-M port's assembly does not). */
    struct tband_core_state *self = &tband_cores[tband_portGET_CORE_ID()];
    if (self->report_pending) {
      self->wp += tband_encode_dropped_evt_cnt(self->wp, ts, self->dropped);
      self->report_pending = false;
      self->countdown = tband_configTRACE_DROP_CNT_EVERY;
    }
    TBAND_STORE(&tband_snap_state, SNAP_RUNNING);
    for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++)
      TBAND_STORE(&tband_cores[c].wlim, SNAP_WLIM(c));
    ok = true;
  }
  tband_portSPIN_UNLOCK(&tband_snap_lock);
  tband_portEXIT_CRITICAL_FROM_ANY();
  return ok;
}

void tband_stop_snapshot(void)
{
  tband_portENTER_CRITICAL_FROM_ANY();
  tband_portSPIN_LOCK(&tband_snap_lock);
  if (tband_snap_state == SNAP_RUNNING)
    snap_close();
  tband_portSPIN_UNLOCK(&tband_snap_lock);
  tband_portEXIT_CRITICAL_FROM_ANY();
}

bool tband_snapshot_full(void) { return TBAND_LOAD(&tband_snap_full) != 0; }

void tband_reset_snapshot(void)
{
  tband_portENTER_CRITICAL_FROM_ANY();
  tband_portSPIN_LOCK(&tband_snap_lock);
  for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++) {
    TBAND_STORE(&tband_cores[c].wlim, (uint8_t *)0);
    tband_cores[c].wp = tband_snap_buf[c];
  }
  tband_snap_full = 0;
  TBAND_STORE(&tband_snap_state, SNAP_IDLE);
  tband_portSPIN_UNLOCK(&tband_snap_lock);
  tband_portEXIT_CRITICAL_FROM_ANY();
}

const uint8_t *tband_get_core_snapshot_buf(uint32_t core_id, size_t *len)
{
  if (core_id >= tband_portNUMBER_OF_CORES) {
    *len = 0;
    return 0;
  }
  uint8_t *wp = tband_cores[core_id].wp; /* NULL before tband_init */
  *len = wp ? (size_t)(wp - tband_snap_buf[core_id]) : 0;
  return tband_snap_buf[core_id];
}
#endif
