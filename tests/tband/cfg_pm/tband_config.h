/* Tracer configuration for the host post-mortem tests. */
#define tband_configENABLE 1
#define tband_configUSE_BACKEND_POST_MORTEM 1
#define tband_configBACKEND_POST_MORTEM_BUF_SIZE 200
#define tband_configTRACE_DROP_CNT_EVERY 0
