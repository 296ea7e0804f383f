/* FreeRTOS hooks of the tracer, against a FreeRTOS-like stand-in kernel
 * (freertos_mock/): each kernel operation is played by a function that
 * declares the same locals as the kernel and expands the same trace macro, so
 * this checks every hook's ids and fields without a kernel checkout. It
 * always runs; test_freertos_kernel repeats the story with the real kernel. */
#include "FreeRTOS.h"
#include "test_target_common.h"

/* ---- the stand-in kernel's state and trace-number API ---- */
static TCB_t tasks[4] = {{0, 0, "IDLE", {0}, 40}, {0, 1, "Tmr Svc", {0}, 90},
                         {0, 2, "producer", {0}, 100}, {0, 3, "consumer", {0}, 7}};
static TCB_t *pxCurrentTCB;
UBaseType_t uxTaskGetTaskNumber(TaskHandle_t t) { return t->uxTaskNumber; }
void vTaskSetTaskNumber(TaskHandle_t t, UBaseType_t n) { t->uxTaskNumber = n; }
TaskHandle_t xTaskGetCurrentTaskHandle(void) { return pxCurrentTCB; }
UBaseType_t uxTaskGetStackHighWaterMark(TaskHandle_t t) { return t->stack_free; }
TaskHandle_t xTimerGetTimerDaemonTaskHandle(void) { return &tasks[1]; }
UBaseType_t uxQueueGetQueueNumber(QueueHandle_t q) { return q->uxQueueNumber; }
void vQueueSetQueueNumber(QueueHandle_t q, UBaseType_t n) { q->uxQueueNumber = n; }
UBaseType_t uxStreamBufferGetStreamBufferNumber(StreamBufferHandle_t s) { return s->uxStreamBufferNumber; }
void vStreamBufferSetStreamBufferNumber(StreamBufferHandle_t s, UBaseType_t n) { s->uxStreamBufferNumber = n; }
size_t xStreamBufferBytesAvailable(StreamBufferHandle_t s) { return s->bytes; }
UBaseType_t uxEventGroupGetNumber(void *e) { return ((EventGroup_t *)e)->uxEventGroupNumber; }
void vEventGroupSetNumber(void *e, UBaseType_t n) { ((EventGroup_t *)e)->uxEventGroupNumber = n; }
UBaseType_t uxTimerGetTimerNumber(TimerHandle_t t) { return t->uxTimerNumber; }
void vTimerSetTimerNumber(TimerHandle_t t, UBaseType_t n) { t->uxTimerNumber = n; }
const char *pcTimerGetName(TimerHandle_t t) { return t->pcTimerName; }

/* ---- kernel operations, with the kernel's local variable names ---- */
static void k_create(TCB_t *pxNewTCB) { traceTASK_CREATE(pxNewTCB); }
static void k_start(void)
{
  TaskHandle_t xIdleTaskHandles[configNUMBER_OF_CORES] = {&tasks[0]};
  traceSTARTING_SCHEDULER(xIdleTaskHandles);
}
static void k_switch(TCB_t *next)
{
  if (pxCurrentTCB)
    traceTASK_SWITCHED_OUT();
  pxCurrentTCB = next;
  traceTASK_SWITCHED_IN();
}
static void k_delay(TickType_t xTicksToDelay) { traceTASK_DELAY(); }
static void k_ready(TCB_t *pxTCB) { traceMOVED_TASK_TO_READY_STATE(pxTCB); }
static void k_prio(TCB_t *pxTCB, UBaseType_t uxNewPriority) { traceTASK_PRIORITY_SET(pxTCB, uxNewPriority); }
static void k_queue_create(Queue_t *pxNewQueue) { traceQUEUE_CREATE(pxNewQueue); }
static void k_queue_name(QueueHandle_t xQueue, const char *pcQueueName) { traceQUEUE_REGISTRY_ADD(xQueue, pcQueueName); }
static void k_send(Queue_t *pxQueue)
{
  traceQUEUE_SEND(pxQueue); /* before the copy, as in xQueueGenericSend */
  if (pxQueue->uxMessagesWaiting < pxQueue->uxLength)
    pxQueue->uxMessagesWaiting++;
}
static void k_receive(Queue_t *pxQueue)
{
  traceQUEUE_RECEIVE(pxQueue); /* before the decrement, as in xQueueReceive */
  pxQueue->uxMessagesWaiting--;
}
static void k_block_rx(Queue_t *pxQueue, TickType_t xTicksToWait) { traceBLOCKING_ON_QUEUE_RECEIVE(pxQueue); }
static void k_notify(TCB_t *pxTCB, UBaseType_t uxIndexToNotify, uint32_t v)
{
  pxTCB->ulNotifiedValue[uxIndexToNotify] = v;
  traceTASK_NOTIFY(uxIndexToNotify);
}
static void k_notify_take(UBaseType_t uxIndexToWaitOn) { traceTASK_NOTIFY_TAKE(uxIndexToWaitOn); }
static void k_sb(StreamBuffer_t *pxStreamBuffer, StreamBufferHandle_t xStreamBuffer)
{
  BaseType_t xStreamBufferType = 1; /* message buffer */
  traceSTREAM_BUFFER_CREATE(pxStreamBuffer, xStreamBufferType);
  xStreamBuffer->bytes = 12;
  traceSTREAM_BUFFER_SEND(xStreamBuffer, 12);
  xStreamBuffer->bytes = 0;
  traceSTREAM_BUFFER_RECEIVE(xStreamBuffer, 12);
}
static void k_eg(EventGroup_t *pxEventBits)
{
  traceEVENT_GROUP_CREATE(pxEventBits);
  traceEVENT_GROUP_SET_BITS(pxEventBits, 0x5);
  traceEVENT_GROUP_WAIT_BITS_BLOCK(pxEventBits, 0x8);
  traceEVENT_GROUP_WAIT_BITS_END(pxEventBits, 0x8, 1);
}
static void k_timer(Timer_t *pxNewTimer)
{
  traceTIMER_CREATE(pxNewTimer);
  traceTIMER_COMMAND_SEND(pxNewTimer, 1, 100, 1);
  traceTIMER_EXPIRED(pxNewTimer);
}

static struct evlist L;

/* a sink that counts and checks use-after-definition */
static struct {
  int tracks, begins, ends, bad;
  uint64_t defined[256];
} K;
static int k_known(uint64_t u)
{
  for (int i = 0; i < K.tracks; i++)
    if (K.defined[i] == u)
      return 1;
  K.bad++;
  return 0;
}
static int k_track(void *x, uint64_t u, uint64_t p, enum sonde_tband_track_kind kk, const char *n, int64_t id)
{
  (void)x, (void)kk, (void)n, (void)id;
  if (p)
    k_known(p);
  if (K.tracks < 256)
    K.defined[K.tracks++] = u;
  return 0;
}
static int k_begin(void *x, uint64_t u, uint64_t ts, const char *n, const struct sonde_tband_arg *a, unsigned na)
{
  (void)x, (void)ts, (void)n, (void)a, (void)na;
  k_known(u);
  K.begins++;
  return 0;
}
static int k_end(void *x, uint64_t u, uint64_t ts)
{
  (void)x, (void)ts;
  k_known(u);
  K.ends++;
  return 0;
}
static int k_instant(void *x, uint64_t u, uint64_t ts, const char *n, const struct sonde_tband_arg *a, unsigned na)
{
  (void)x, (void)ts, (void)n, (void)a, (void)na;
  k_known(u);
  return 0;
}
static int k_counter(void *x, uint64_t u, uint64_t ts, int64_t v)
{
  (void)x, (void)ts, (void)v;
  k_known(u);
  return 0;
}

static void test_hooks(void)
{
  tband_host_set_time(1);
  tband_init();
  for (int i = 0; i < 4; i++)
    k_create(&tasks[i]);
  CHECK_EQ_U(tasks[0].uxTaskNumber, 1);
  CHECK_EQ_U(tasks[3].uxTaskNumber, 4);
  Queue_t q = {0, 0, 2, 0}, m = {0, 0, 1, 1};
  k_queue_create(&q);
  k_queue_create(&m);
  k_queue_name(&q, "jobs");
  CHECK_EQ_U(q.uxQueueNumber, 1);
  CHECK_EQ_U(m.uxQueueNumber, 2);
  k_start();
  k_switch(&tasks[2]); /* producer */
  k_send(&q);
  k_send(&q);
  k_send(&q); /* full queue: an overwrite */
  k_notify(&tasks[3], 0, 42);
  k_ready(&tasks[3]);
  k_delay(10);
  k_switch(&tasks[3]); /* consumer; producer's stack hwm (2nd switch-out) */
  k_receive(&q);
  k_notify_take(0);
  k_block_rx(&q, 50);
  k_prio(&tasks[3], 5);
  StreamBuffer_t sb = {0, 0};
  k_sb(&sb, &sb);
  tband_freertos_stream_buffer_name(&sb, "msgs");
  EventGroup_t eg = {0};
  k_eg(&eg);
  Timer_t tm = {0, "blink"};
  k_timer(&tm);
  tband_task_evtmarker_name(9, "work");
  tband_task_evtmarker_begin(9, "job");
  tband_task_evtmarker_end(9);
  tband_task_valmarker(9, -3);
  k_switch(&tasks[0]);
  CHECK_EQ_I(tband_host_critical_depth(), 0);

  size_t len;
  const uint8_t *s = tband_host_stream_data(0, &len);
  decode_into(&L, s, len, 0);
  CHECK_EQ_I(L.errors, 0);
  /* the exact stream, id by id (fields checked below) */
  static const uint8_t want[] = {
      0x02,                                                 /* ts_resolution_ns */
      0x5F, 0x5E, 0x5B, 0x5F, 0x5E, 0x5B, 0x5F, 0x5E, 0x5B, 0x5F, 0x5E, 0x5B, /* 4 tasks */
      0x63, 0x65, 0x63, 0x65, 0x64,                         /* queues, kinds, name */
      0x60, 0x61,                                           /* idle task, timer task */
      0x54, 0x66, 0x66, 0x68, 0x98, 0x55, 0x59,             /* producer runs */
      0x54, 0x6A, 0x9C, 0x6F, 0x5B,                         /* consumer runs */
      0x88, 0x8A, 0x8B, 0x8D, 0x89,                         /* message buffer */
      0xA0, 0xA2, 0xA6, 0xA7,                               /* event group */
      0xB0, 0xB1, 0xB2, 0xB4,                               /* timer */
      0x7A, 0x7C, 0x7D, 0x7F,                               /* task-local markers */
      0x80, 0x54};                                          /* 2nd switch-out: stack hwm */
  CHECK_EQ_I(L.n, (int)sizeof want);
  for (int i = 0; i < L.n && i < (int)sizeof want; i++)
    if (L.e[i].id != want[i])
      CHECK_FAIL_("event %d: id 0x%02x, want 0x%02x", i, L.e[i].id, want[i]);
  REQUIRE(L.n == (int)sizeof want);
  CHECK_EQ_STR(L.e[1].str, "IDLE");
  CHECK_EQ_U(L.e[12].val[0], 4); /* consumer priority 3 */
  CHECK_EQ_U(L.e[12].val[1], 3);
  CHECK_EQ_U(L.e[14].val[1], 0); /* queue kind FRQK_QUEUE */
  CHECK_EQ_U(L.e[16].val[1], 3); /* mutex: FRQK_MUTEX */
  CHECK_EQ_STR(L.e[17].str, "jobs");
  CHECK_EQ_U(L.e[18].val[0], 1); /* idle = task 1 on core 0 */
  CHECK_EQ_U(L.e[18].val[1], 0);
  CHECK_EQ_U(L.e[19].val[0], 2); /* timer task */
  CHECK_EQ_U(L.e[20].val[0], 3); /* producer in */
  CHECK_EQ_U(L.e[21].val[1], 1); /* len_after 1 */
  CHECK_EQ_U(L.e[22].val[1], 2);
  CHECK_EQ_U(L.e[23].val[1], 2); /* overwrite of a full queue */
  CHECK_EQ_U(L.e[24].val[0], 4); /* notify consumer index 0 value 42 */
  CHECK_EQ_U(L.e[24].val[2], 42);
  CHECK_EQ_U(L.e[26].val[0], 10); /* delay 10 */
  CHECK_EQ_U(L.e[28].val[1], 1); /* receive: len_after 1 */
  CHECK_EQ_U(L.e[29].val[1], 42); /* notify take: value */
  CHECK_EQ_U(L.e[30].val[1], 50); /* ticks to wait */
  CHECK_EQ_U(L.e[32].val[0], 1);
  CHECK_EQ_U(L.e[33].val[1], 1); /* FRSBK_MESSAGE_BUFFER */
  CHECK_EQ_U(L.e[34].val[1], 12);
  CHECK_EQ_U(L.e[35].val[1], 0);
  CHECK_EQ_STR(L.e[36].str, "msgs");
  CHECK_EQ_U(L.e[38].val[1], 5);
  CHECK_EQ_U(L.e[40].val[2], 1); /* timed out */
  CHECK_EQ_STR(L.e[42].str, "blink");
  CHECK_EQ_U(L.e[43].val[1], 1);
  CHECK_EQ_U(L.e[43].val[2], 100);
  CHECK_EQ_U(L.e[45].val[1], 4); /* task marker owned by the consumer */
  CHECK_EQ_I((int64_t)L.e[48].val[1], -3);
  CHECK_EQ_U(L.e[49].val[0], 4); /* consumer's stack: 7 words free */
  CHECK_EQ_U(L.e[49].val[1], 7);

  /* and the converter makes a well-formed timeline of it */
  struct sonde_tband_conv *c = sonde_tband_conv_new(SONDE_TBAND_FREERTOS, 1);
  for (int i = 0; i < L.n; i++)
    sonde_tband_conv_add(c, &L.e[i]);
  struct sonde_tband_sink sink = {&K, k_track, k_begin, k_end, k_instant, k_counter};
  struct sonde_tband_conv_stats st;
  CHECK_EQ_I(sonde_tband_conv_run(c, &sink, &st), 0);
  CHECK_EQ_U(st.task_switches, 3);
  CHECK_EQ_U(st.errors, 0);
  CHECK_EQ_I(K.begins, K.ends);
  CHECK_EQ_I(K.bad, 0);
  CHECK(K.tracks > 10);
  sonde_tband_conv_free(c);
}

int main(void)
{
  RUN(test_hooks);
  return check_summary();
}
