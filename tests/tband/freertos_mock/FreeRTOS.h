/* A FreeRTOS-like stand-in for the hook unit test (test_freertos_hooks.c):
 * the types, fields and trace-number API that Sonde's hooks use, with the
 * kernel's names, so the hook macros expand exactly as inside the kernel.
 * Not FreeRTOS code; the real kernel is tested by test_freertos_kernel when
 * FREERTOS_KERNEL is set. */
#ifndef MOCK_FREERTOS_H
#define MOCK_FREERTOS_H
#include <stddef.h>
#include <stdint.h>

typedef unsigned long UBaseType_t;
typedef long BaseType_t;
typedef uint32_t TickType_t;
#define configUSE_TRACE_FACILITY 1
#define configUSE_TIMERS 1
#define configNUMBER_OF_CORES 1

typedef struct tskTaskControlBlock {
  UBaseType_t uxTaskNumber;
  UBaseType_t uxPriority;
  char pcTaskName[16];
  uint32_t ulNotifiedValue[1];
  UBaseType_t stack_free; /* what uxTaskGetStackHighWaterMark returns */
} TCB_t;
typedef TCB_t *TaskHandle_t;

typedef struct QueueDefinition {
  UBaseType_t uxQueueNumber;
  UBaseType_t uxMessagesWaiting;
  UBaseType_t uxLength;
  uint8_t ucQueueType;
} Queue_t;
typedef Queue_t *QueueHandle_t;

typedef struct StreamBufferDef_t {
  UBaseType_t uxStreamBufferNumber;
  size_t bytes;
} StreamBuffer_t;
typedef StreamBuffer_t *StreamBufferHandle_t;

typedef struct EventGroupDef_t {
  UBaseType_t uxEventGroupNumber;
} EventGroup_t;
typedef EventGroup_t *EventGroupHandle_t;

typedef struct tmrTimerControl {
  UBaseType_t uxTimerNumber;
  const char *pcTimerName;
} Timer_t;
typedef Timer_t *TimerHandle_t;

#include "FreeRTOSConfig.h"

UBaseType_t uxTaskGetTaskNumber(TaskHandle_t t);
void vTaskSetTaskNumber(TaskHandle_t t, UBaseType_t n);
TaskHandle_t xTaskGetCurrentTaskHandle(void);
UBaseType_t uxTaskGetStackHighWaterMark(TaskHandle_t t);
TaskHandle_t xTimerGetTimerDaemonTaskHandle(void);
UBaseType_t uxQueueGetQueueNumber(QueueHandle_t q);
void vQueueSetQueueNumber(QueueHandle_t q, UBaseType_t n);
UBaseType_t uxStreamBufferGetStreamBufferNumber(StreamBufferHandle_t s);
void vStreamBufferSetStreamBufferNumber(StreamBufferHandle_t s, UBaseType_t n);
size_t xStreamBufferBytesAvailable(StreamBufferHandle_t s);
UBaseType_t uxEventGroupGetNumber(void *e);
void vEventGroupSetNumber(void *e, UBaseType_t n);
UBaseType_t uxTimerGetTimerNumber(TimerHandle_t t);
void vTimerSetTimerNumber(TimerHandle_t t, UBaseType_t n);
const char *pcTimerGetName(TimerHandle_t t);
#endif
