/* tband_defaults.h: default values and sanity checks of every configuration
 * and porting macro (docs/tband.md, "Configuration reference" and "Porting").
 * Included by tband.h after the user's tband_config.h and tband_port.h. The
 * names and defaults are those of Tonbandgerät's documentation; macros marked
 * "Sonde" are additions. */
#ifndef TBAND_DEFAULTS_H
#define TBAND_DEFAULTS_H

/* ---- configuration (tband_config.h) ---- */
#ifndef tband_configENABLE
#define tband_configENABLE 0
#endif
#ifndef tband_configMAX_STR_LEN
#define tband_configMAX_STR_LEN 20
#endif
#ifndef tband_configTRACE_DROP_CNT_EVERY
#define tband_configTRACE_DROP_CNT_EVERY 50
#endif
#ifndef tband_configMARKER_TRACE_ENABLE
#define tband_configMARKER_TRACE_ENABLE 1
#endif
#ifndef tband_configISR_TRACE_ENABLE
#define tband_configISR_TRACE_ENABLE 1
#endif
/* Sonde: the straight-line encoder for markers without a message, value
 * markers and interrupts (tband_fast.h); 0 = always the generic encoder
 * (needed where unaligned stores trap: CCR.UNALIGN_TRP set). */
#ifndef tband_configFAST_PATH
#define tband_configFAST_PATH 1
#endif
#ifndef tband_configUSE_METADATA_BUF
#define tband_configUSE_METADATA_BUF 1
#endif
#ifndef tband_configMETADATA_BUF_SIZE
#define tband_configMETADATA_BUF_SIZE 256
#endif
#ifndef tband_configUSE_BACKEND_STREAMING
#define tband_configUSE_BACKEND_STREAMING 0
#endif
#ifndef tband_configUSE_BACKEND_SNAPSHOT
#define tband_configUSE_BACKEND_SNAPSHOT 0
#endif
#ifndef tband_configBACKEND_SNAPSHOT_BUF_SIZE
#define tband_configBACKEND_SNAPSHOT_BUF_SIZE 32768
#endif
#ifndef tband_configUSE_BACKEND_POST_MORTEM
#define tband_configUSE_BACKEND_POST_MORTEM 0
#endif
/* Sonde: per-core size of the post-mortem ring in bytes. */
#ifndef tband_configBACKEND_POST_MORTEM_BUF_SIZE
#define tband_configBACKEND_POST_MORTEM_BUF_SIZE 4096
#endif
#ifndef tband_configUSE_BACKEND_EXTERNAL
#define tband_configUSE_BACKEND_EXTERNAL 0
#endif
#ifndef tband_configFREERTOS_TRACE_ENABLE
#define tband_configFREERTOS_TRACE_ENABLE 0
#endif
#ifndef tband_configFREERTOS_TASK_TRACE_ENABLE
#define tband_configFREERTOS_TASK_TRACE_ENABLE 1
#endif
#ifndef tband_configFREERTOS_QUEUE_TRACE_ENABLE
#define tband_configFREERTOS_QUEUE_TRACE_ENABLE 1
#endif
#ifndef tband_configFREERTOS_STREAM_BUFFER_TRACE_ENABLE
#define tband_configFREERTOS_STREAM_BUFFER_TRACE_ENABLE 1
#endif
/* Sonde: the objects upstream does not trace. */
#ifndef tband_configFREERTOS_NOTIFY_TRACE_ENABLE
#define tband_configFREERTOS_NOTIFY_TRACE_ENABLE 1
#endif
#ifndef tband_configFREERTOS_EVENT_GROUP_TRACE_ENABLE
#define tband_configFREERTOS_EVENT_GROUP_TRACE_ENABLE 1
#endif
#ifndef tband_configFREERTOS_TIMER_TRACE_ENABLE
#define tband_configFREERTOS_TIMER_TRACE_ENABLE 1
#endif
/* Sonde: trace the outgoing task's stack high-water mark on every Nth
 * switch-out per core (0: only through tband_freertos_stack_hwm()). The scan
 * costs time proportional to the unused stack. */
#ifndef tband_configFREERTOS_STACK_HWM_EVERY
#define tband_configFREERTOS_STACK_HWM_EVERY 16
#endif

/* ---- port (tband_port.h) ---- */
#if tband_configENABLE
#ifndef tband_portTIMESTAMP
#error "tband: the port must define tband_portTIMESTAMP()"
#endif
#ifndef tband_portTIMESTAMP_RESOLUTION_NS
#error "tband: the port must define tband_portTIMESTAMP_RESOLUTION_NS"
#endif
#ifndef tband_portENTER_CRITICAL_FROM_ANY
#error "tband: the port must define tband_portENTER_CRITICAL_FROM_ANY()"
#endif
#ifndef tband_portEXIT_CRITICAL_FROM_ANY
#error "tband: the port must define tband_portEXIT_CRITICAL_FROM_ANY()"
#endif
#ifndef tband_portNUMBER_OF_CORES
#error "tband: the port must define tband_portNUMBER_OF_CORES"
#endif
#ifndef tband_portGET_CORE_ID
#error "tband: the port must define tband_portGET_CORE_ID()"
#endif
#if tband_configUSE_BACKEND_STREAMING && !defined(tband_portBACKEND_STREAM_DATA)
#error "tband: the streaming backend needs tband_portBACKEND_STREAM_DATA(buf, len)"
#endif
#if tband_configUSE_BACKEND_EXTERNAL && !defined(tband_portBACKEND_EXTERNAL_HANDLER)
#error "tband: the external backend needs tband_portBACKEND_EXTERNAL_HANDLER(buf, len, is_metadata)"
#endif
#if (tband_configUSE_BACKEND_STREAMING + tband_configUSE_BACKEND_SNAPSHOT + \
     tband_configUSE_BACKEND_POST_MORTEM + tband_configUSE_BACKEND_EXTERNAL) != 1
#error "tband: exactly one backend must be enabled"
#endif
#if tband_configMAX_STR_LEN < 1
#error "tband: tband_configMAX_STR_LEN must be at least 1"
#endif
#endif

#ifndef tband_portBACKEND_SNAPSHOT_BUF_FULL_CALLBACK
#define tband_portBACKEND_SNAPSHOT_BUF_FULL_CALLBACK()
#endif
/* Sonde: streaming with the core id, for ports with one channel per core
 * (e.g. one ITM stimulus port per core). Defaults to the documented macro. */
#ifndef tband_portBACKEND_STREAM_DATA_CORE
#define tband_portBACKEND_STREAM_DATA_CORE(buf, len, core) tband_portBACKEND_STREAM_DATA(buf, len)
#endif
/* Sonde: section of the post-mortem ring; it must not be zeroed at start-up. */
#ifndef tband_portNOINIT_SECTION
#define tband_portNOINIT_SECTION ".noinit"
#endif
/* Sonde: spinlock primitives on a `volatile unsigned char`. Needed only with
 * more than one core; the default uses the GCC/Clang atomic builtins (LDREXB/
 * STREXB on ARMv7-M). Single-core builds compile them away. */
#ifndef tband_portSPIN_LOCK
#if tband_portNUMBER_OF_CORES > 1
#define tband_portSPIN_LOCK(l)                                   \
  do {                                                           \
    while (__atomic_test_and_set((l), __ATOMIC_ACQUIRE)) {       \
    }                                                            \
  } while (0)
#define tband_portSPIN_UNLOCK(l) __atomic_clear((l), __ATOMIC_RELEASE)
#else
#define tband_portSPIN_LOCK(l) ((void)(l))
#define tband_portSPIN_UNLOCK(l) ((void)(l))
#endif
#endif

#endif
