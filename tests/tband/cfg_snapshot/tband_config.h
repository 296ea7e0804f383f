/* Tracer configuration for the host snapshot tests. */
#include <stdbool.h>
extern volatile int test_snapshot_full_calls;
#define tband_configENABLE 1
#define tband_configUSE_BACKEND_SNAPSHOT 1
#define tband_configBACKEND_SNAPSHOT_BUF_SIZE 256
#define tband_configTRACE_DROP_CNT_EVERY 0
#define tband_portBACKEND_SNAPSHOT_BUF_FULL_CALLBACK() (test_snapshot_full_calls++)
