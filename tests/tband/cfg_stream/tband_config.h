/* Tracer configuration for the host streaming tests. */
#define tband_configENABLE 1
#define tband_configUSE_BACKEND_STREAMING 1
#define tband_configMETADATA_BUF_SIZE 64
#define tband_configTRACE_DROP_CNT_EVERY 10
