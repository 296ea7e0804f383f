/* tband_freertos.h: FreeRTOS trace hooks (docs/tband.md, "FreeRTOS").
 *
 * Included by tband.h when tband_configFREERTOS_TRACE_ENABLE is 1; tband.h
 * must be included at the end of FreeRTOSConfig.h. The hook macros expand
 * inside the kernel's own .c files, so they may use the kernel's local
 * variables (xTicksToDelay, xTicksToWait, pxCurrentTCB, ...). They call the
 * small functions below, which take plain numbers so that this header needs
 * no FreeRTOS types.
 *
 * Objects get trace ids (1, 2, ... per kind) in their create hook, stored
 * with the kernel's own trace-number API (vTaskSetTaskNumber,
 * vQueueSetQueueNumber, vStreamBufferSetStreamBufferNumber,
 * vEventGroupSetNumber, vTimerSetTimerNumber), so configUSE_TRACE_FACILITY
 * must be 1.
 *
 * Requires FreeRTOS-Kernel V11 hook signatures (traceSTARTING_SCHEDULER with
 * the idle task handles, traceTASK_NOTIFY with the index). Known limits:
 * queue_overwrite is reported only when the overwrite hits a full queue (the
 * kernel's hook does not say whether it overwrites); queue_reset is never
 * emitted (the kernel has no hook for it). */
#ifndef TBAND_FREERTOS_H
#define TBAND_FREERTOS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- user API ---- */
/* Task-local markers: like tband_evtmarker*, shown on the current task. */
void tband_task_evtmarker_name(uint32_t id, const char *name);
void tband_task_evtmarker(uint32_t id, const char *msg);
void tband_task_evtmarker_begin(uint32_t id, const char *msg);
void tband_task_evtmarker_end(uint32_t id);
void tband_task_valmarker_name(uint32_t id, const char *name);
void tband_task_valmarker(uint32_t id, int64_t val);
/* Trace a task's stack high-water mark now (task: a TaskHandle_t, NULL = current). */
void tband_freertos_stack_hwm(void *task);
/* Name objects that FreeRTOS does not name itself (handles as void *). */
void tband_freertos_stream_buffer_name(void *stream_buffer, const char *name);
void tband_freertos_event_group_name(void *event_group, const char *name);
/* Queues and semaphores are named through vQueueAddToRegistry(). */

/* ---- called by the hook macros ---- */
uint32_t tband_freertos_new_id(unsigned kind);
void tband_freertos_task_create(void *tcb, const char *name, uint32_t priority);
void tband_freertos_task_evt(uint8_t evt_id, uint32_t task_id);
void tband_freertos_task_prio(uint8_t evt_id, uint32_t task_id, uint32_t prio);
void tband_freertos_task_switched_out(void *tcb);
void tband_freertos_curtask_u32(uint8_t evt_id, uint32_t val);
void tband_freertos_scheduler_starting(void *const *idle_handles, uint32_t n_idle);
void tband_freertos_queue_create(void *queue, uint8_t queue_type);
void tband_freertos_queue_name(void *queue, const char *name);
void tband_freertos_obj_evt(uint8_t evt_id, uint32_t obj_id);
void tband_freertos_obj_evt2(uint8_t evt_id, uint32_t obj_id, uint32_t a);
void tband_freertos_obj_evt3(uint8_t evt_id, uint32_t obj_id, uint32_t a, uint32_t b);
void tband_freertos_stream_buffer_create(void *sb, uint32_t is_message_buffer);
void tband_freertos_event_group_create(void *eg);
void tband_freertos_timer_create(void *timer);

enum { TBAND_FR_TASK, TBAND_FR_QUEUE, TBAND_FR_SB, TBAND_FR_EG, TBAND_FR_TIMER, TBAND_FR_KINDS };

#ifdef __cplusplus
}
#endif

/* Trace ids of kernel objects (0 for NULL). */
#define tband_frTASK_ID(tcb) ((tcb) ? (uint32_t)uxTaskGetTaskNumber((TaskHandle_t)(tcb)) : 0u)
#define tband_frQUEUE_ID(q) ((uint32_t)uxQueueGetQueueNumber((QueueHandle_t)(q)))
#define tband_frSB_ID(s) ((uint32_t)uxStreamBufferGetStreamBufferNumber((StreamBufferHandle_t)(s)))
#define tband_frEG_ID(e) ((uint32_t)uxEventGroupGetNumber((void *)(e)))
#define tband_frTIMER_ID(t) ((uint32_t)uxTimerGetTimerNumber((TimerHandle_t)(t)))

/* ---- tasks ---- */
#if tband_configFREERTOS_TASK_TRACE_ENABLE
#define traceTASK_CREATE(pxNewTCB) \
  tband_freertos_task_create((void *)(pxNewTCB), (pxNewTCB)->pcTaskName, (uint32_t)(pxNewTCB)->uxPriority)
#define traceTASK_SWITCHED_IN() tband_freertos_task_evt(0x54, (uint32_t)pxCurrentTCB->uxTaskNumber)
#define traceTASK_SWITCHED_OUT() tband_freertos_task_switched_out((void *)pxCurrentTCB)
#define traceMOVED_TASK_TO_READY_STATE(pxTCB) tband_freertos_task_evt(0x55, (uint32_t)(pxTCB)->uxTaskNumber)
#define traceTASK_RESUME(pxTCB) tband_freertos_task_evt(0x56, (uint32_t)(pxTCB)->uxTaskNumber)
#define traceTASK_RESUME_FROM_ISR(pxTCB) tband_freertos_task_evt(0x57, (uint32_t)(pxTCB)->uxTaskNumber)
#define traceTASK_SUSPEND(pxTCB) tband_freertos_task_evt(0x58, (uint32_t)(pxTCB)->uxTaskNumber)
#define traceTASK_DELAY() tband_freertos_curtask_u32(0x59, (uint32_t)xTicksToDelay)
#define traceTASK_DELAY_UNTIL(x) tband_freertos_curtask_u32(0x5A, (uint32_t)(x))
#define traceTASK_PRIORITY_SET(pxTCB, prio) \
  tband_freertos_task_prio(0x5B, (uint32_t)(pxTCB)->uxTaskNumber, (uint32_t)(prio))
#define traceTASK_PRIORITY_INHERIT(pxTCB, prio) \
  tband_freertos_task_prio(0x5C, (uint32_t)(pxTCB)->uxTaskNumber, (uint32_t)(prio))
#define traceTASK_PRIORITY_DISINHERIT(pxTCB, prio) \
  tband_freertos_task_prio(0x5D, (uint32_t)(pxTCB)->uxTaskNumber, (uint32_t)(prio))
#define traceTASK_DELETE(pxTCB) tband_freertos_task_evt(0x62, (uint32_t)(pxTCB)->uxTaskNumber)
#define traceSTARTING_SCHEDULER(xIdleTaskHandles)                                   \
  tband_freertos_scheduler_starting((void *const *)(xIdleTaskHandles),              \
                                    (uint32_t)(sizeof(xIdleTaskHandles) / sizeof((xIdleTaskHandles)[0])))
#endif

/* ---- direct-to-task notifications ---- */
#if tband_configFREERTOS_NOTIFY_TRACE_ENABLE
#define traceTASK_NOTIFY(uxIndexToNotify)                                           \
  tband_freertos_obj_evt3(0x98, (uint32_t)pxTCB->uxTaskNumber, (uint32_t)(uxIndexToNotify), \
                          (uint32_t)pxTCB->ulNotifiedValue[uxIndexToNotify])
#define traceTASK_NOTIFY_FROM_ISR(uxIndexToNotify)                                  \
  tband_freertos_obj_evt3(0x99, (uint32_t)pxTCB->uxTaskNumber, (uint32_t)(uxIndexToNotify), \
                          (uint32_t)pxTCB->ulNotifiedValue[uxIndexToNotify])
#define traceTASK_NOTIFY_GIVE_FROM_ISR(uxIndexToNotify)                             \
  tband_freertos_obj_evt3(0x9A, (uint32_t)pxTCB->uxTaskNumber, (uint32_t)(uxIndexToNotify), \
                          (uint32_t)pxTCB->ulNotifiedValue[uxIndexToNotify])
#define traceTASK_NOTIFY_TAKE_BLOCK(uxIndexToWait) \
  tband_freertos_obj_evt2(0x9B, (uint32_t)(uxIndexToWait), (uint32_t)xTicksToWait)
#define traceTASK_NOTIFY_TAKE(uxIndexToWait) \
  tband_freertos_obj_evt2(0x9C, (uint32_t)(uxIndexToWait), (uint32_t)pxCurrentTCB->ulNotifiedValue[uxIndexToWait])
#define traceTASK_NOTIFY_WAIT_BLOCK(uxIndexToWait) \
  tband_freertos_obj_evt2(0x9D, (uint32_t)(uxIndexToWait), (uint32_t)xTicksToWait)
#define traceTASK_NOTIFY_WAIT(uxIndexToWait) \
  tband_freertos_obj_evt2(0x9E, (uint32_t)(uxIndexToWait), (uint32_t)pxCurrentTCB->ulNotifiedValue[uxIndexToWait])
#endif

/* ---- queues, semaphores, mutexes ---- */
#if tband_configFREERTOS_QUEUE_TRACE_ENABLE
#define traceQUEUE_CREATE(pxNewQueue) tband_freertos_queue_create((void *)(pxNewQueue), (uint8_t)(pxNewQueue)->ucQueueType)
#define traceCREATE_COUNTING_SEMAPHORE()                                            \
  tband_freertos_obj_evt2(0x70, tband_frQUEUE_ID(xHandle),                          \
                          (uint32_t)((Queue_t *)xHandle)->uxMessagesWaiting)
#define traceQUEUE_DELETE(pxQueue) tband_freertos_obj_evt(0x81, (uint32_t)(pxQueue)->uxQueueNumber)
#define traceQUEUE_REGISTRY_ADD(xQueue, pcQueueName) tband_freertos_queue_name((void *)(xQueue), (pcQueueName))
/* The hook runs before the copy: a full queue can only be overwritten. */
#define tband_frQUEUE_SEND(pxQueue, evt_send, evt_overwrite)                         \
  (((pxQueue)->uxMessagesWaiting >= (pxQueue)->uxLength)                            \
       ? tband_freertos_obj_evt2((evt_overwrite), (uint32_t)(pxQueue)->uxQueueNumber, \
                                 (uint32_t)(pxQueue)->uxLength)                      \
       : tband_freertos_obj_evt2((evt_send), (uint32_t)(pxQueue)->uxQueueNumber,      \
                                 (uint32_t)(pxQueue)->uxMessagesWaiting + 1u))
#define traceQUEUE_SEND(pxQueue) tband_frQUEUE_SEND(pxQueue, 0x66, 0x68)
#define traceQUEUE_SEND_FROM_ISR(pxQueue) tband_frQUEUE_SEND(pxQueue, 0x67, 0x69)
/* ... and receive hooks run before the count is decremented. */
#define traceQUEUE_RECEIVE(pxQueue) \
  tband_freertos_obj_evt2(0x6A, (uint32_t)(pxQueue)->uxQueueNumber, (uint32_t)(pxQueue)->uxMessagesWaiting - 1u)
#define traceQUEUE_RECEIVE_FROM_ISR(pxQueue) \
  tband_freertos_obj_evt2(0x6B, (uint32_t)(pxQueue)->uxQueueNumber, (uint32_t)(pxQueue)->uxMessagesWaiting - 1u)
#define traceBLOCKING_ON_QUEUE_PEEK(pxQueue) \
  tband_freertos_obj_evt2(0x6D, (uint32_t)(pxQueue)->uxQueueNumber, (uint32_t)xTicksToWait)
#define traceBLOCKING_ON_QUEUE_SEND(pxQueue) \
  tband_freertos_obj_evt2(0x6E, (uint32_t)(pxQueue)->uxQueueNumber, (uint32_t)xTicksToWait)
#define traceBLOCKING_ON_QUEUE_RECEIVE(pxQueue) \
  tband_freertos_obj_evt2(0x6F, (uint32_t)(pxQueue)->uxQueueNumber, (uint32_t)xTicksToWait)
#endif

/* ---- stream and message buffers ---- */
#if tband_configFREERTOS_STREAM_BUFFER_TRACE_ENABLE
#define traceSTREAM_BUFFER_CREATE(pxStreamBuffer, xStreamBufferType) \
  tband_freertos_stream_buffer_create((void *)(pxStreamBuffer), (uint32_t)(xStreamBufferType))
#define traceSTREAM_BUFFER_DELETE(xStreamBuffer) tband_freertos_obj_evt(0x92, tband_frSB_ID(xStreamBuffer))
#define traceSTREAM_BUFFER_RESET(xStreamBuffer) tband_freertos_obj_evt(0x8F, tband_frSB_ID(xStreamBuffer))
#define traceSTREAM_BUFFER_RESET_FROM_ISR(xStreamBuffer) tband_freertos_obj_evt(0x8F, tband_frSB_ID(xStreamBuffer))
#define traceSTREAM_BUFFER_SEND(xStreamBuffer, xBytesSent) \
  tband_freertos_obj_evt2(0x8B, tband_frSB_ID(xStreamBuffer), (uint32_t)xStreamBufferBytesAvailable(xStreamBuffer))
#define traceSTREAM_BUFFER_SEND_FROM_ISR(xStreamBuffer, xBytesSent) \
  tband_freertos_obj_evt2(0x8C, tband_frSB_ID(xStreamBuffer), (uint32_t)xStreamBufferBytesAvailable(xStreamBuffer))
#define traceSTREAM_BUFFER_RECEIVE(xStreamBuffer, xReceivedLength) \
  tband_freertos_obj_evt2(0x8D, tband_frSB_ID(xStreamBuffer), (uint32_t)xStreamBufferBytesAvailable(xStreamBuffer))
#define traceSTREAM_BUFFER_RECEIVE_FROM_ISR(xStreamBuffer, xReceivedLength) \
  tband_freertos_obj_evt2(0x8E, tband_frSB_ID(xStreamBuffer), (uint32_t)xStreamBufferBytesAvailable(xStreamBuffer))
#define traceBLOCKING_ON_STREAM_BUFFER_SEND(xStreamBuffer) tband_freertos_obj_evt(0x90, tband_frSB_ID(xStreamBuffer))
#define traceBLOCKING_ON_STREAM_BUFFER_RECEIVE(xStreamBuffer) tband_freertos_obj_evt(0x91, tband_frSB_ID(xStreamBuffer))
#endif

/* ---- event groups ---- */
#if tband_configFREERTOS_EVENT_GROUP_TRACE_ENABLE
#define traceEVENT_GROUP_CREATE(xEventGroup) tband_freertos_event_group_create((void *)(xEventGroup))
#define traceEVENT_GROUP_DELETE(xEventGroup) tband_freertos_obj_evt(0xA9, tband_frEG_ID(xEventGroup))
#define traceEVENT_GROUP_SET_BITS(xEventGroup, uxBitsToSet) \
  tband_freertos_obj_evt2(0xA2, tband_frEG_ID(xEventGroup), (uint32_t)(uxBitsToSet))
#define traceEVENT_GROUP_SET_BITS_FROM_ISR(xEventGroup, uxBitsToSet) \
  tband_freertos_obj_evt2(0xA3, tband_frEG_ID(xEventGroup), (uint32_t)(uxBitsToSet))
#define traceEVENT_GROUP_CLEAR_BITS(xEventGroup, uxBitsToClear) \
  tband_freertos_obj_evt2(0xA4, tband_frEG_ID(xEventGroup), (uint32_t)(uxBitsToClear))
#define traceEVENT_GROUP_CLEAR_BITS_FROM_ISR(xEventGroup, uxBitsToClear) \
  tband_freertos_obj_evt2(0xA5, tband_frEG_ID(xEventGroup), (uint32_t)(uxBitsToClear))
#define traceEVENT_GROUP_WAIT_BITS_BLOCK(xEventGroup, uxBitsToWaitFor) \
  tband_freertos_obj_evt2(0xA6, tband_frEG_ID(xEventGroup), (uint32_t)(uxBitsToWaitFor))
#define traceEVENT_GROUP_SYNC_BLOCK(xEventGroup, uxBitsToSet, uxBitsToWaitFor) \
  tband_freertos_obj_evt2(0xA6, tband_frEG_ID(xEventGroup), (uint32_t)(uxBitsToWaitFor))
#define traceEVENT_GROUP_WAIT_BITS_END(xEventGroup, uxBitsToWaitFor, xTimeoutOccurred) \
  tband_freertos_obj_evt3(0xA7, tband_frEG_ID(xEventGroup), (uint32_t)(uxBitsToWaitFor), (uint32_t)(xTimeoutOccurred))
#define traceEVENT_GROUP_SYNC_END(xEventGroup, uxBitsToSet, uxBitsToWaitFor, xTimeoutOccurred) \
  tband_freertos_obj_evt3(0xA8, tband_frEG_ID(xEventGroup), (uint32_t)(uxBitsToWaitFor), (uint32_t)(xTimeoutOccurred))
#endif

/* ---- software timers ---- */
#if tband_configFREERTOS_TIMER_TRACE_ENABLE
#define traceTIMER_CREATE(pxNewTimer) tband_freertos_timer_create((void *)(pxNewTimer))
#define traceTIMER_COMMAND_SEND(xTimer, xMessageID, xMessageValueValue, xReturn) \
  tband_freertos_obj_evt3(0xB2, tband_frTIMER_ID(xTimer), (uint32_t)(xMessageID), (uint32_t)(xMessageValueValue))
#define traceTIMER_COMMAND_RECEIVED(pxTimer, xMessageID, xMessageValue) \
  tband_freertos_obj_evt3(0xB3, tband_frTIMER_ID(pxTimer), (uint32_t)(xMessageID), (uint32_t)(xMessageValue))
#define traceTIMER_EXPIRED(pxTimer) tband_freertos_obj_evt(0xB4, tband_frTIMER_ID(pxTimer))
#endif

#endif
