/* FreeRTOS demo on Sonde's virtual Cortex-M3 (kernel port ARM_CM3), traced
 * by target/tband and streamed over the UART: a producer and a consumer on a
 * queue, two workers sharing a mutex (with task-local markers around the
 * critical part), and a controller that traces what was done (value markers
 * 90: items, 91: mutex rounds) and ends the run through semihosting.
 *   sonde run --machine cm3 --uart fr.bin build/firmware/tband_vm_freertos.elf
 *   sonde tband conv --mode freertos -o fr.perfetto-trace fr.bin */
#include "FreeRTOS.h"
#include "queue.h"
#include "semphr.h"
#include "task.h"

#include "sonde_fw.h"

#define ITEMS 30
#define ROUNDS 8

static QueueHandle_t q;
static SemaphoreHandle_t mtx;
static volatile int done;

static void producer(void *p)
{
  (void)p;
  for (int i = 0; i < ITEMS; i++) {
    xQueueSend(q, &i, portMAX_DELAY);
    if (i % 3 == 0)
      vTaskDelay(1);
  }
  done++;
  vTaskDelete(NULL);
}

static void consumer(void *p)
{
  (void)p;
  int v;
  for (int i = 0; i < ITEMS; i++)
    xQueueReceive(q, &v, portMAX_DELAY);
  done++;
  vTaskDelete(NULL);
}

static void worker(void *p)
{
  (void)p;
  tband_task_evtmarker_name(1, "locked");
  for (int i = 0; i < ROUNDS; i++) {
    xSemaphoreTake(mtx, portMAX_DELAY);
    tband_task_evtmarker_begin(1, "locked");
    vTaskDelay(1);
    tband_task_evtmarker_end(1);
    xSemaphoreGive(mtx);
    vTaskDelay(1);
  }
  done++;
  vTaskDelete(NULL);
}

static void controller(void *p)
{
  (void)p;
  while (done < 4)
    vTaskDelay(2);
  tband_valmarker(90, ITEMS);
  tband_valmarker(91, 2 * ROUNDS);
  vTaskDelay(2); /* the idle task frees the deleted tasks */
  sonde_exit(0);
}

int main(void)
{
  tband_vm_init();
  tband_init();
  q = xQueueCreate(4, sizeof(int));
  vQueueAddToRegistry(q, "items");
  mtx = xSemaphoreCreateMutex();
  vQueueAddToRegistry(mtx, "lock");
  xTaskCreate(producer, "producer", configMINIMAL_STACK_SIZE, NULL, 2, NULL);
  xTaskCreate(consumer, "consumer", configMINIMAL_STACK_SIZE, NULL, 3, NULL);
  xTaskCreate(worker, "workerA", configMINIMAL_STACK_SIZE, NULL, 1, NULL);
  xTaskCreate(worker, "workerB", configMINIMAL_STACK_SIZE, NULL, 2, NULL);
  xTaskCreate(controller, "control", configMINIMAL_STACK_SIZE, NULL, 1, NULL);
  vTaskStartScheduler();
  sonde_exit(2); /* not reached: out of heap */
}
