/* The tracer inside the real FreeRTOS kernel (FREERTOS_KERNEL checkout, POSIX
 * port): a demo with a producer and a consumer on a queue, two workers
 * sharing a mutex, a message buffer, a task notification, an event group and
 * an auto-reload software timer. After it ran, the streamed trace is decoded
 * and checked against what the demo did: exact counts of sends, receives,
 * notifications, buffer transfers and bit operations, names and kinds of all
 * objects, monotonic timestamps, and a well-formed converted timeline. */
#include "FreeRTOS.h"
#include "event_groups.h"
#include "message_buffer.h"
#include "queue.h"
#include "semphr.h"
#include "task.h"
#include "timers.h"

#include "test_target_common.h"

#include <time.h>
#include <unistd.h>

#define ITEMS 20
#define MUTEX_ROUNDS 10

uint64_t tband_posix_ts_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static QueueHandle_t q;
static SemaphoreHandle_t mtx;
static MessageBufferHandle_t mb;
static EventGroupHandle_t eg;
static TimerHandle_t tmr;
static TaskHandle_t consumer_h, notified_h;
static volatile int timer_fired, done_workers, done_consumer, done_notified;

static void producer(void *p)
{
  (void)p;
  for (int i = 0; i < ITEMS; i++) {
    xQueueSend(q, &i, portMAX_DELAY);
    vTaskDelay(1);
  }
  xTaskNotify(notified_h, 0x1234, eSetValueWithOverwrite);
  char msg[8] = "hello";
  xMessageBufferSend(mb, msg, 5, portMAX_DELAY);
  xEventGroupSetBits(eg, 0x3);
  vTaskDelete(NULL);
}

static void consumer(void *p)
{
  (void)p;
  int v;
  for (int i = 0; i < ITEMS; i++)
    xQueueReceive(q, &v, portMAX_DELAY);
  done_consumer = 1;
  vTaskDelete(NULL);
}

static void worker(void *p)
{
  (void)p;
  for (int i = 0; i < MUTEX_ROUNDS; i++) {
    xSemaphoreTake(mtx, portMAX_DELAY);
    tband_task_evtmarker_begin(1, "crit");
    vTaskDelay(1);
    tband_task_evtmarker_end(1);
    xSemaphoreGive(mtx);
    vTaskDelay(1);
  }
  taskENTER_CRITICAL();
  done_workers++;
  taskEXIT_CRITICAL();
  vTaskDelete(NULL);
}

static void notified(void *p)
{
  (void)p;
  uint32_t val = 0;
  xTaskNotifyWait(0, 0xFFFFFFFFu, &val, portMAX_DELAY);
  char buf[8];
  xMessageBufferReceive(mb, buf, sizeof buf, portMAX_DELAY);
  xEventGroupWaitBits(eg, 0x3, pdTRUE, pdTRUE, portMAX_DELAY);
  done_notified = 1;
  vTaskDelete(NULL);
}

static void on_timer(TimerHandle_t t)
{
  (void)t;
  timer_fired++;
}

static struct evlist L;

static int count_field(uint8_t id, unsigned f, uint64_t v)
{
  int n = 0;
  for (int i = 0; i < L.n; i++)
    n += L.e[i].id == id && L.e[i].val[f] == v;
  return n;
}

static int nsink_calls, nsink_bad, nbeg, nend;
static int s_track(void *x, uint64_t u, uint64_t p, enum sonde_tband_track_kind k, const char *n, int64_t id)
{
  (void)x, (void)u, (void)p, (void)k, (void)n, (void)id;
  nsink_calls++;
  return 0;
}
static int s_begin(void *x, uint64_t u, uint64_t ts, const char *n, const struct sonde_tband_arg *a, unsigned na)
{
  (void)x, (void)u, (void)ts, (void)n, (void)a, (void)na;
  nbeg++;
  return 0;
}
static int s_end(void *x, uint64_t u, uint64_t ts)
{
  (void)x, (void)u, (void)ts;
  nend++;
  return 0;
}
static int s_instant(void *x, uint64_t u, uint64_t ts, const char *n, const struct sonde_tband_arg *a, unsigned na)
{
  (void)x, (void)u, (void)ts, (void)n, (void)a, (void)na;
  return 0;
}
static int s_counter(void *x, uint64_t u, uint64_t ts, int64_t v)
{
  (void)x, (void)u, (void)ts, (void)v;
  return 0;
}

static void check_trace(void)
{
  size_t len;
  const uint8_t *s = tband_host_stream_data(0, &len);
  decode_into(&L, s, len, 0);
  const char *keep = getenv("SONDE_TBAND_TRACE_OUT"); /* keep the trace, e.g. for sonde tband conv */
  if (keep) {
    FILE *f = fopen(keep, "wb");
    if (f) {
      fwrite(s, 1, len, f);
      fclose(f);
    }
  }
  printf("trace: %zu bytes, %d events, %d task switches\n", len, L.n, count_id(&L, 0x54));
  CHECK_EQ_I(L.errors, 0);
  CHECK(L.n < MAXEV);
  uint64_t last = 0;
  int back = 0;
  for (int i = 0; i < L.n; i++)
    if (L.e[i].has_ts) {
      back += L.e[i].ts < last;
      last = L.e[i].ts;
    }
  CHECK_EQ_I(back, 0);
  /* ids: tasks in creation order; queue 1 = q, 2 = mutex, then the timer queue */
  CHECK_EQ_I(count_id(&L, 0x5F) >= 8, 1); /* 6 tasks + idle + timer task */
  CHECK_EQ_I(count_id(&L, 0x60), 1);
  CHECK_EQ_I(count_id(&L, 0x61), 1);
  CHECK(count_id(&L, 0x54) > 2 * ITEMS);
  CHECK_EQ_I(count_field(0x65, 0, 1), 1);
  CHECK_EQ_I(count_field(0x65, 1, 3), 1); /* one FRQK_MUTEX */
  /* queue 1: exactly ITEMS sends and ITEMS receives */
  CHECK_EQ_I(count_field(0x66, 0, 1), ITEMS);
  CHECK_EQ_I(count_field(0x6A, 0, 1), ITEMS);
  /* mutex (queue 2): give at creation + 2 workers x rounds gives, and as many takes */
  CHECK_EQ_I(count_field(0x66, 0, 2), 1 + 2 * MUTEX_ROUNDS);
  CHECK_EQ_I(count_field(0x6A, 0, 2), 2 * MUTEX_ROUNDS);
  CHECK(count_field(0x6F, 0, 2) >= 1); /* a worker blocked on the mutex */
  CHECK(count_id(&L, 0x5C) >= 1);      /* ... and priority inheritance happened */
  CHECK_EQ_I(count_id(&L, 0x98), 1);   /* one notification, value 0x1234 */
  CHECK_EQ_I(count_field(0x98, 2, 0x1234), 1);
  CHECK_EQ_I(count_field(0x9E, 1, 0x1234), 1);
  CHECK_EQ_I(count_field(0x8A, 1, 1), 1); /* message buffer kind */
  CHECK_EQ_I(count_id(&L, 0x8B), 1);
  CHECK_EQ_I(count_id(&L, 0x8D), 1);
  CHECK_EQ_I(count_field(0xA2, 1, 3), 1); /* set bits 0x3 */
  CHECK_EQ_I(count_id(&L, 0xB0), 1);
  CHECK_EQ_I(count_id(&L, 0xB4), timer_fired);
  CHECK(timer_fired >= 3);
  CHECK(count_id(&L, 0x80) >= 1);              /* stack high-water marks */
  CHECK_EQ_I(count_id(&L, 0x7C), 2 * MUTEX_ROUNDS); /* task markers */
  CHECK_EQ_I(count_id(&L, 0x62), 5);           /* deleted: producer, consumer, 2 workers, notified */
  struct sonde_tband_conv *c = sonde_tband_conv_new(SONDE_TBAND_FREERTOS, 1);
  for (int i = 0; i < L.n; i++)
    sonde_tband_conv_add(c, &L.e[i]);
  struct sonde_tband_sink sink = {NULL, s_track, s_begin, s_end, s_instant, s_counter};
  struct sonde_tband_conv_stats st;
  CHECK_EQ_I(sonde_tband_conv_run(c, &sink, &st), 0);
  CHECK_EQ_I(nbeg, nend);
  CHECK_EQ_U(st.errors, 0);
  CHECK_EQ_U(st.task_switches, (uint64_t)count_id(&L, 0x54));
  sonde_tband_conv_free(c);
  (void)nsink_bad;
}

static void controller(void *p)
{
  (void)p;
  while (timer_fired < 3 || done_workers < 2 || !done_consumer || !done_notified)
    vTaskDelay(5);
  xTimerStop(tmr, portMAX_DELAY);
  vTaskDelay(5); /* lets the idle task free the deleted tasks */
  vTaskSuspendAll();
  RUN(check_trace);
  /* _exit: the kernel's POSIX port keeps per-thread allocations and tick
   * threads alive; a normal exit would run them into LeakSanitizer. */
  int rc = check_summary();
  fflush(stdout);
  fflush(stderr);
  _exit(rc);
}

int main(void)
{
  tband_init();
  q = xQueueCreate(4, sizeof(int));
  vQueueAddToRegistry(q, "items");
  mtx = xSemaphoreCreateMutex();
  vQueueAddToRegistry(mtx, "lock");
  mb = xMessageBufferCreate(64);
  tband_freertos_stream_buffer_name(mb, "msgs");
  eg = xEventGroupCreate();
  tband_freertos_event_group_name(eg, "flags");
  tmr = xTimerCreate("tick10", pdMS_TO_TICKS(10), pdTRUE, NULL, on_timer);
  xTimerStart(tmr, 0);
  xTaskCreate(producer, "producer", configMINIMAL_STACK_SIZE, NULL, 2, NULL);
  xTaskCreate(consumer, "consumer", configMINIMAL_STACK_SIZE, NULL, 3, &consumer_h);
  xTaskCreate(worker, "workerA", configMINIMAL_STACK_SIZE, NULL, 1, NULL);
  xTaskCreate(worker, "workerB", configMINIMAL_STACK_SIZE, NULL, 2, NULL);
  xTaskCreate(notified, "notified", configMINIMAL_STACK_SIZE, NULL, 2, &notified_h);
  xTaskCreate(controller, "control", configMINIMAL_STACK_SIZE * 4, NULL, 1, NULL);
  vTaskStartScheduler();
  return 1;
}
