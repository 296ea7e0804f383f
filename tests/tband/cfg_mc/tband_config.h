/* Tracer configuration for the host multi-core test (TBAND_HOST_CORES=4). */
#define tband_configENABLE 1
#define tband_configUSE_BACKEND_SNAPSHOT 1
#define tband_configBACKEND_SNAPSHOT_BUF_SIZE 65536
#define tband_configMETADATA_BUF_SIZE (512 * 1024)
#define tband_configTRACE_DROP_CNT_EVERY 0
