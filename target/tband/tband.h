/* tband.h: Sonde's on-target event tracer, speaking Tonbandgerät's binary
 * trace format (docs/tband.md; events in docs/tband-events.md).
 *
 * The only header application code includes. It pulls in the user's
 * tband_config.h and the port's tband_port.h, then the defaults. With
 * FreeRTOS, include it at the end of FreeRTOSConfig.h so that the trace hook
 * macros (tband_freertos.h) replace the kernel's empty defaults.
 *
 * Portable C99 (plus optional GCC atomics for multi-core), no libc. Every
 * function may be called from any context, including interrupts and other
 * cores; with tband_configENABLE == 0 they all compile to nothing. */
#ifndef TBAND_H
#define TBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tband_config.h"
#include "tband_port.h"
#include "tband_defaults.h"

#ifdef __cplusplus
extern "C" {
#endif

#if tband_configENABLE

/* Optional start-up call: validates the post-mortem ring (keeping its content
 * across a reset) and records ts_resolution_ns. Call before the first event. */
void tband_init(void);
/* Trace the system metadata (timestamp resolution and, per core, core_id).
 * tband_init() calls it; call again e.g. when a host connects to a stream. */
void tband_gather_system_metadata(void);

/* Event markers: instants and (strictly nested) spans with a global 32-bit id. */
void tband_evtmarker_name(uint32_t id, const char *name);
void tband_evtmarker(uint32_t id, const char *msg);
void tband_evtmarker_begin(uint32_t id, const char *msg);
void tband_evtmarker_end(uint32_t id);
/* Value markers: an int64_t over time. */
void tband_valmarker_name(uint32_t id, const char *name);
void tband_valmarker(uint32_t id, int64_t val);
/* Interrupts (ids are per core). */
void tband_isr_name(uint32_t id, const char *name);
void tband_isr_enter(uint32_t id);
void tband_isr_exit(uint32_t id);

/* Events dropped so far on the calling core (also traced as dropped_evt_cnt
 * after a drop and every tband_configTRACE_DROP_CNT_EVERY events). */
uint32_t tband_dropped_evt_cnt(void);

#if tband_configUSE_METADATA_BUF
/* The metadata buffer: every metadata event so far, COBS framed, to be
 * prepended to a snapshot or re-sent to a late stream client. If events did
 * not fit, the buffer ends with a metadata_overflow frame counting them (the
 * overflow is also traced live when it happens). */
const uint8_t *tband_get_metadata_buf(size_t *len);
/* Metadata events that did not fit into the buffer. */
uint32_t tband_metadata_buf_lost(void);
#endif

#if tband_configUSE_BACKEND_SNAPSHOT
/* Start recording into the per-core snapshot buffers (each begins with a
 * core_id event). Returns false if a snapshot is running or finished. */
bool tband_trigger_snapshot(void);
/* Stop recording on all cores. */
void tband_stop_snapshot(void);
/* True once any core's buffer filled up (recording then stops everywhere). */
bool tband_snapshot_full(void);
/* Forget the recorded data; tband_trigger_snapshot() may be called again. */
void tband_reset_snapshot(void);
/* The snapshot of one core: COBS frames, *len bytes. */
const uint8_t *tband_get_core_snapshot_buf(uint32_t core_id, size_t *len);
#endif

#if tband_configUSE_BACKEND_POST_MORTEM
/* Copy the newest complete events of a core's post-mortem ring, oldest
 * first, into dst (at most cap bytes, keeping the newest). Returns the number
 * of bytes written; they decode like a snapshot. Works after a reset: the
 * ring lives in tband_portNOINIT_SECTION and tband_init() keeps it. */
size_t tband_postmortem_read(uint32_t core_id, uint8_t *dst, size_t cap);
/* Erase all rings. */
void tband_postmortem_clear(void);
/* Resets survived by the current ring content (0 after a cold start). */
uint32_t tband_postmortem_boot_cnt(void);
#endif

/* ---- internal, used by the hooks in tband_freertos.c ---- */
/* Hand a framed event to the metadata buffer (is_metadata) and the backend,
 * counting drops. Call inside a tband critical section. */
void tband_submit_to_backend(const uint8_t *buf, size_t len, bool is_metadata);

#else /* tband_configENABLE */

#define tband_init()
#define tband_gather_system_metadata()
#define tband_evtmarker_name(id, name)
#define tband_evtmarker(id, msg)
#define tband_evtmarker_begin(id, msg)
#define tband_evtmarker_end(id)
#define tband_valmarker_name(id, name)
#define tband_valmarker(id, val)
#define tband_isr_name(id, name)
#define tband_isr_enter(id)
#define tband_isr_exit(id)
#define tband_dropped_evt_cnt() 0u

#endif /* tband_configENABLE */

#ifdef __cplusplus
}
#endif

#if tband_configENABLE && tband_configFREERTOS_TRACE_ENABLE
#include "tband_freertos.h"
#endif

#endif
