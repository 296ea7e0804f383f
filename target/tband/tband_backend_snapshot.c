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

/* shared with the inline reserve/commit of tband_internal.h; tband_snap.end
 * mirrors the state (buffer size while RUNNING, else 0) and changes with it */
struct tband_snap tband_snap;
volatile uint32_t tband_snap_state;
static volatile uint32_t tband_snap_full;
static volatile unsigned char tband_snap_lock;

void tband_backend_init(void) {}

enum tband_backend_result tband_backend_submit(uint32_t core, const uint8_t *buf, size_t len,
                                               bool is_metadata)
{
  (void)is_metadata;
  if (TBAND_LOAD(&tband_snap_state) != SNAP_RUNNING)
    return TBAND_IGNORED;
  size_t used = tband_snap.len[core];
  if (len > tband_configBACKEND_SNAPSHOT_BUF_SIZE - used) {
    bool first = false;
    tband_portSPIN_LOCK(&tband_snap_lock);
    if (tband_snap_state == SNAP_RUNNING) {
      TBAND_STORE(&tband_snap.end, 0u);
      TBAND_STORE(&tband_snap_state, SNAP_DONE);
      tband_snap_full = 1;
      first = true;
    }
    tband_portSPIN_UNLOCK(&tband_snap_lock);
    if (first) {
      tband_portBACKEND_SNAPSHOT_BUF_FULL_CALLBACK();
    }
    return TBAND_DROPPED;
  }
  tband_copy(tband_snap.buf[core] + used, buf, len);
  tband_snap.len[core] = (uint32_t)(used + len);
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
      tband_snap.len[c] = (uint32_t)tband_encode_core_id(tband_snap.buf[c], ts, c);
    TBAND_STORE(&tband_snap_state, SNAP_RUNNING);
    TBAND_STORE(&tband_snap.end, (uint32_t)tband_configBACKEND_SNAPSHOT_BUF_SIZE);
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
  if (tband_snap_state == SNAP_RUNNING) {
    TBAND_STORE(&tband_snap.end, 0u);
    TBAND_STORE(&tband_snap_state, SNAP_DONE);
  }
  tband_portSPIN_UNLOCK(&tband_snap_lock);
  tband_portEXIT_CRITICAL_FROM_ANY();
}

bool tband_snapshot_full(void) { return TBAND_LOAD(&tband_snap_full) != 0; }

void tband_reset_snapshot(void)
{
  tband_portENTER_CRITICAL_FROM_ANY();
  tband_portSPIN_LOCK(&tband_snap_lock);
  for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++)
    tband_snap.len[c] = 0;
  tband_snap_full = 0;
  TBAND_STORE(&tband_snap.end, 0u);
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
  *len = tband_snap.len[core_id];
  return tband_snap.buf[core_id];
}
#endif
