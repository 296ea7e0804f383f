/* Tracer configuration of the FreeRTOS demo on the VM: streaming over the UART. */
#ifndef TBAND_CONFIG_H
#define TBAND_CONFIG_H
#define tband_configENABLE 1
#define tband_configUSE_BACKEND_STREAMING 1
#define tband_configFREERTOS_TRACE_ENABLE 1
#define tband_configTRACE_DROP_CNT_EVERY 0
#define tband_configMETADATA_BUF_SIZE 512
#define tband_configFREERTOS_STACK_HWM_EVERY 8
#define TBAND_CM_CPU_HZ 48000000u
#endif
