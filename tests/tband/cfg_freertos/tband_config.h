/* Tracer configuration for the FreeRTOS hook tests (mock kernel and real kernel). */
#define tband_configENABLE 1
#define tband_configUSE_BACKEND_STREAMING 1
#define tband_configFREERTOS_TRACE_ENABLE 1
#define tband_configTRACE_DROP_CNT_EVERY 0
#define tband_configMETADATA_BUF_SIZE 1024
#define tband_configFREERTOS_STACK_HWM_EVERY 2
