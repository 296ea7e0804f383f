/* tband_port.h for the real FreeRTOS kernel on its POSIX port (the
 * FREERTOS_KERNEL test): critical sections mask the port's "interrupts"
 * (the tick signal) in any context, timestamps are CLOCK_MONOTONIC in ns,
 * and the stream is collected in memory by ports/host/tband_port_host.c.
 * The kernel macros are only expanded where tband_core.c has included
 * FreeRTOS.h, so this header needs no FreeRTOS include itself. */
#ifndef TBAND_PORT_H
#define TBAND_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TBAND_HOST_CORES 1
uint64_t tband_posix_ts_ns(void);
bool tband_host_stream(const uint8_t *buf, size_t len, uint32_t core);
const uint8_t *tband_host_stream_data(uint32_t core, size_t *len);

#define tband_portTIMESTAMP() tband_posix_ts_ns()
#define tband_portTIMESTAMP_RESOLUTION_NS (1)
#define tband_portNUMBER_OF_CORES (1)
#define tband_portGET_CORE_ID() (0)
#define tband_portENTER_CRITICAL_FROM_ANY() UBaseType_t tband_port_key = portSET_INTERRUPT_MASK_FROM_ISR()
#define tband_portEXIT_CRITICAL_FROM_ANY() portCLEAR_INTERRUPT_MASK_FROM_ISR(tband_port_key)
#define tband_portBACKEND_STREAM_DATA(buf, len) tband_host_stream((buf), (len), 0)

#endif
