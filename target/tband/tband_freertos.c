/* tband_freertos.c: the functions behind the FreeRTOS hook macros of
 * tband_freertos.h, and the task-local marker API. Event ids are those of
 * tband_events.def (FreeRTOS group). */
#include "tband_internal.h"

#if tband_configENABLE && tband_configFREERTOS_TRACE_ENABLE
#include "FreeRTOS.h"
#include "task.h"
#include "queue.h"
#include "timers.h"
#include "event_groups.h"
#include "stream_buffer.h"

#if configUSE_TRACE_FACILITY != 1
#error "tband: FreeRTOS tracing needs configUSE_TRACE_FACILITY 1 (object trace numbers)"
#endif

/* Next trace id per object kind; ids start at 1 so that 0 means "untraced". */
static uint32_t tband_fr_next[TBAND_FR_KINDS];
static volatile unsigned char tband_fr_lock;
#if tband_configFREERTOS_STACK_HWM_EVERY
static uint32_t tband_fr_switches[tband_portNUMBER_OF_CORES];
#endif

uint32_t tband_freertos_new_id(unsigned kind)
{
  uint32_t id;
  tband_portENTER_CRITICAL_FROM_ANY();
  tband_portSPIN_LOCK(&tband_fr_lock);
  id = ++tband_fr_next[kind];
  tband_portSPIN_UNLOCK(&tband_fr_lock);
  tband_portEXIT_CRITICAL_FROM_ANY();
  return id;
}

/* Generic emitters: one per field shape, switching on the id keeps the
 * encoders (and their maximum lengths) those of the table. */
void tband_freertos_task_evt(uint8_t evt_id, uint32_t task_id)
{
  switch (evt_id) {
  case 0x54: TBAND_EMIT_TS(task_switched_in, task_id); break;
  case 0x55: TBAND_EMIT_TS(task_to_rdy_state, task_id); break;
  case 0x56: TBAND_EMIT_TS(task_resumed, task_id); break;
  case 0x57: TBAND_EMIT_TS(task_resumed_from_isr, task_id); break;
  case 0x58: TBAND_EMIT_TS(task_suspended, task_id); break;
  case 0x5E: TBAND_EMIT_TS(task_created, task_id); break;
  case 0x62: TBAND_EMIT_TS(task_deleted, task_id); break;
  default: break;
  }
}

void tband_freertos_task_prio(uint8_t evt_id, uint32_t task_id, uint32_t prio)
{
  switch (evt_id) {
  case 0x5B: TBAND_EMIT_TS(task_priority_set, task_id, prio); break;
  case 0x5C: TBAND_EMIT_TS(task_priority_inherit, task_id, prio); break;
  case 0x5D: TBAND_EMIT_TS(task_priority_disinherit, task_id, prio); break;
  default: break;
  }
}

void tband_freertos_curtask_u32(uint8_t evt_id, uint32_t val)
{
  if (evt_id == 0x59)
    TBAND_EMIT_TS(curtask_delay, val);
  else if (evt_id == 0x5A)
    TBAND_EMIT_TS(curtask_delay_until, val);
}

void tband_freertos_obj_evt(uint8_t evt_id, uint32_t obj_id)
{
  switch (evt_id) {
  case 0x63: TBAND_EMIT_TS(queue_created, obj_id); break;
  case 0x6C: TBAND_EMIT_TS(queue_reset, obj_id); break;
  case 0x81: TBAND_EMIT_TS(queue_deleted, obj_id); break;
  case 0x88: TBAND_EMIT_TS(stream_buffer_created, obj_id); break;
  case 0x8F: TBAND_EMIT_TS(stream_buffer_reset, obj_id); break;
  case 0x90: TBAND_EMIT_TS(curtask_block_on_stream_buffer_send, obj_id); break;
  case 0x91: TBAND_EMIT_TS(curtask_block_on_stream_buffer_receive, obj_id); break;
  case 0x92: TBAND_EMIT_TS(stream_buffer_deleted, obj_id); break;
  case 0xA0: TBAND_EMIT_TS(event_group_created, obj_id); break;
  case 0xA9: TBAND_EMIT_TS(event_group_deleted, obj_id); break;
  case 0xB0: TBAND_EMIT_TS(timer_created, obj_id); break;
  case 0xB4: TBAND_EMIT_TS(timer_expired, obj_id); break;
  default: break;
  }
}

void tband_freertos_obj_evt2(uint8_t evt_id, uint32_t obj_id, uint32_t a)
{
  switch (evt_id) {
  case 0x66: TBAND_EMIT_TS(queue_send, obj_id, a); break;
  case 0x67: TBAND_EMIT_TS(queue_send_from_isr, obj_id, a); break;
  case 0x68: TBAND_EMIT_TS(queue_overwrite, obj_id, a); break;
  case 0x69: TBAND_EMIT_TS(queue_overwrite_from_isr, obj_id, a); break;
  case 0x6A: TBAND_EMIT_TS(queue_receive, obj_id, a); break;
  case 0x6B: TBAND_EMIT_TS(queue_receive_from_isr, obj_id, a); break;
  case 0x6D: TBAND_EMIT_TS(curtask_block_on_queue_peek, obj_id, a); break;
  case 0x6E: TBAND_EMIT_TS(curtask_block_on_queue_send, obj_id, a); break;
  case 0x6F: TBAND_EMIT_TS(curtask_block_on_queue_receive, obj_id, a); break;
  case 0x70: TBAND_EMIT_TS(queue_cur_length, obj_id, a); break;
  case 0x80: TBAND_EMIT_TS(task_stack_hwm, obj_id, a); break;
  case 0x8B: TBAND_EMIT_TS(stream_buffer_send, obj_id, a); break;
  case 0x8C: TBAND_EMIT_TS(stream_buffer_send_from_isr, obj_id, a); break;
  case 0x8D: TBAND_EMIT_TS(stream_buffer_receive, obj_id, a); break;
  case 0x8E: TBAND_EMIT_TS(stream_buffer_receive_from_isr, obj_id, a); break;
  case 0x9B: TBAND_EMIT_TS(curtask_notify_take_block, obj_id, a); break;
  case 0x9C: TBAND_EMIT_TS(curtask_notify_take, obj_id, a); break;
  case 0x9D: TBAND_EMIT_TS(curtask_notify_wait_block, obj_id, a); break;
  case 0x9E: TBAND_EMIT_TS(curtask_notify_wait, obj_id, a); break;
  case 0xA2: TBAND_EMIT_TS(event_group_set_bits, obj_id, a); break;
  case 0xA3: TBAND_EMIT_TS(event_group_set_bits_from_isr, obj_id, a); break;
  case 0xA4: TBAND_EMIT_TS(event_group_clear_bits, obj_id, a); break;
  case 0xA5: TBAND_EMIT_TS(event_group_clear_bits_from_isr, obj_id, a); break;
  case 0xA6: TBAND_EMIT_TS(curtask_block_on_event_group, obj_id, a); break;
  default: break;
  }
}

void tband_freertos_obj_evt3(uint8_t evt_id, uint32_t obj_id, uint32_t a, uint32_t b)
{
  switch (evt_id) {
  case 0x98: TBAND_EMIT_TS(task_notify, obj_id, a, b); break;
  case 0x99: TBAND_EMIT_TS(task_notify_from_isr, obj_id, a, b); break;
  case 0x9A: TBAND_EMIT_TS(task_notify_give_from_isr, obj_id, a, b); break;
  case 0xA7: TBAND_EMIT_TS(event_group_wait_end, obj_id, a, b); break;
  case 0xA8: TBAND_EMIT_TS(event_group_sync_end, obj_id, a, b); break;
  case 0xB2: TBAND_EMIT_TS(timer_command_send, obj_id, a, b); break;
  case 0xB3: TBAND_EMIT_TS(timer_command_received, obj_id, a, b); break;
  default: break;
  }
}

void tband_freertos_task_create(void *tcb, const char *name, uint32_t priority)
{
  uint32_t id = tband_freertos_new_id(TBAND_FR_TASK);
  vTaskSetTaskNumber((TaskHandle_t)tcb, (UBaseType_t)id);
  TBAND_EMIT_META(task_name, id, name);
  TBAND_EMIT_TS(task_created, id);
  TBAND_EMIT_TS(task_priority_set, id, priority);
}

void tband_freertos_scheduler_starting(void *const *idle_handles, uint32_t n_idle)
{
  for (uint32_t c = 0; c < n_idle; c++)
    if (idle_handles[c])
      TBAND_EMIT_META(task_is_idle_task, tband_frTASK_ID(idle_handles[c]), c);
#if configUSE_TIMERS
  {
    TaskHandle_t t = xTimerGetTimerDaemonTaskHandle();
    if (t)
      TBAND_EMIT_META(task_is_timer_task, tband_frTASK_ID(t));
  }
#endif
}

void tband_freertos_stack_hwm(void *task)
{
  TaskHandle_t t = task ? (TaskHandle_t)task : xTaskGetCurrentTaskHandle();
  if (!t)
    return;
  uint32_t free_words = (uint32_t)uxTaskGetStackHighWaterMark(t);
  TBAND_EMIT_TS(task_stack_hwm, tband_frTASK_ID(t), free_words);
}

void tband_freertos_task_switched_out(void *tcb)
{
#if tband_configFREERTOS_STACK_HWM_EVERY
  uint32_t core = (uint32_t)(tband_portGET_CORE_ID());
  if (++tband_fr_switches[core] >= tband_configFREERTOS_STACK_HWM_EVERY) {
    tband_fr_switches[core] = 0;
    tband_freertos_stack_hwm(tcb);
  }
#else
  (void)tcb;
#endif
}

void tband_freertos_queue_create(void *queue, uint8_t queue_type)
{
  uint32_t id = tband_freertos_new_id(TBAND_FR_QUEUE);
  uint8_t kind;
  vQueueSetQueueNumber((QueueHandle_t)queue, (UBaseType_t)id);
  /* kernel queue types -> FrQueueKind */
  switch (queue_type) {
  case 1: kind = 3; break; /* queueQUEUE_TYPE_MUTEX */
  case 2: kind = 1; break; /* queueQUEUE_TYPE_COUNTING_SEMAPHORE */
  case 3: kind = 2; break; /* queueQUEUE_TYPE_BINARY_SEMAPHORE */
  case 4: kind = 4; break; /* queueQUEUE_TYPE_RECURSIVE_MUTEX */
  default: kind = 0; break; /* base queue (queue sets share type 0) */
  }
  TBAND_EMIT_TS(queue_created, id);
  TBAND_EMIT_META(queue_kind, id, kind);
}

void tband_freertos_queue_name(void *queue, const char *name)
{
  TBAND_EMIT_META(queue_name, tband_frQUEUE_ID(queue), name);
}

void tband_freertos_stream_buffer_create(void *sb, uint32_t type)
{
  uint32_t id = tband_freertos_new_id(TBAND_FR_SB);
  vStreamBufferSetStreamBufferNumber((StreamBufferHandle_t)sb, (UBaseType_t)id);
  TBAND_EMIT_TS(stream_buffer_created, id);
  /* sbTYPE_MESSAGE_BUFFER is 1; stream and batching buffers are streams */
  TBAND_EMIT_META(stream_buffer_kind, id, (uint8_t)(type == 1 ? 1 : 0));
}

void tband_freertos_stream_buffer_name(void *sb, const char *name)
{
  TBAND_EMIT_META(stream_buffer_name, tband_frSB_ID(sb), name);
}

void tband_freertos_event_group_create(void *eg)
{
  uint32_t id = tband_freertos_new_id(TBAND_FR_EG);
  vEventGroupSetNumber(eg, (UBaseType_t)id);
  TBAND_EMIT_TS(event_group_created, id);
}

void tband_freertos_event_group_name(void *eg, const char *name)
{
  TBAND_EMIT_META(event_group_name, tband_frEG_ID(eg), name);
}

void tband_freertos_timer_create(void *timer)
{
  uint32_t id = tband_freertos_new_id(TBAND_FR_TIMER);
  vTimerSetTimerNumber((TimerHandle_t)timer, (UBaseType_t)id);
  TBAND_EMIT_TS(timer_created, id);
  TBAND_EMIT_META(timer_name, id, pcTimerGetName((TimerHandle_t)timer));
}

/* ---- task-local markers ---- */
static uint32_t tband_fr_cur_task(void)
{
  TaskHandle_t t = xTaskGetCurrentTaskHandle();
  return tband_frTASK_ID(t);
}

void tband_task_evtmarker_name(uint32_t id, const char *name)
{
  TBAND_EMIT_META(task_evtmarker_name, id, tband_fr_cur_task(), name);
}
void tband_task_evtmarker(uint32_t id, const char *msg) { TBAND_EMIT_TS(task_evtmarker, id, msg); }
void tband_task_evtmarker_begin(uint32_t id, const char *msg)
{
  TBAND_EMIT_TS(task_evtmarker_begin, id, msg);
}
void tband_task_evtmarker_end(uint32_t id) { TBAND_EMIT_TS(task_evtmarker_end, id); }
void tband_task_valmarker_name(uint32_t id, const char *name)
{
  TBAND_EMIT_META(task_valmarker_name, id, tband_fr_cur_task(), name);
}
void tband_task_valmarker(uint32_t id, int64_t val) { TBAND_EMIT_TS(task_valmarker, id, val); }
#endif
