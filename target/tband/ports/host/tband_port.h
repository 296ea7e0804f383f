/* tband_port.h for the host (Sonde's unit tests and round-trip generators).
 * Each host thread plays one core (tband_host_set_core); timestamps come from
 * tband_host_set_time() or, when not set, a counter that advances by one per
 * event; streamed frames are collected per core in memory
 * (tband_port_host.c). Interrupts do not exist, so the critical section only
 * needs to keep other threads of the same "core" out, which the tests never
 * do: it is a nesting counter used to check balance. */
#ifndef TBAND_PORT_H
#define TBAND_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef TBAND_HOST_CORES
#define TBAND_HOST_CORES 1
#endif

uint64_t tband_host_timestamp(void);
uint32_t tband_host_core_id(void);
void tband_host_enter_critical(void);
void tband_host_exit_critical(void);
bool tband_host_stream(const uint8_t *buf, size_t len, uint32_t core);

/* test controls */
void tband_host_set_core(uint32_t core);        /* for the calling thread */
void tband_host_set_time(uint64_t ts);          /* fixed timestamp; auto-increment after */
void tband_host_set_stream_capacity(size_t cap); /* drop frames beyond cap bytes per core */
const uint8_t *tband_host_stream_data(uint32_t core, size_t *len);
void tband_host_stream_reset(void);
int tband_host_critical_depth(void);

#define tband_portTIMESTAMP() tband_host_timestamp()
#define tband_portTIMESTAMP_RESOLUTION_NS (1)
#define tband_portNUMBER_OF_CORES (TBAND_HOST_CORES)
#define tband_portGET_CORE_ID() tband_host_core_id()
#define tband_portENTER_CRITICAL_FROM_ANY() tband_host_enter_critical()
#define tband_portEXIT_CRITICAL_FROM_ANY() tband_host_exit_critical()
#define tband_portBACKEND_STREAM_DATA(buf, len) tband_host_stream((buf), (len), tband_host_core_id())
/* host executables have no .noinit output section; any named section works */
#define tband_portNOINIT_SECTION ".tband_noinit"

#endif
