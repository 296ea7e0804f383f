/* Tracer configuration of the VM demo (demo.c). The backend is chosen by the
 * build: TBAND_DEMO_SNAPSHOT selects the snapshot backend, else streaming. */
#ifndef TBAND_CONFIG_H
#define TBAND_CONFIG_H
#define tband_configENABLE 1
#ifdef TBAND_DEMO_SNAPSHOT
#define tband_configUSE_BACKEND_SNAPSHOT 1
#define tband_configBACKEND_SNAPSHOT_BUF_SIZE 8192
#else
#define tband_configUSE_BACKEND_STREAMING 1
#endif
#define tband_configTRACE_DROP_CNT_EVERY 0
#ifndef TBAND_CM_CPU_HZ
#define TBAND_CM_CPU_HZ 48000000u /* the VM's cm3 machine */
#endif
#endif
