/* Tracer configuration of the VM demos (demo.c, postmortem.c). The backend is
 * chosen by the build: TBAND_DEMO_SNAPSHOT, TBAND_DEMO_POSTMORTEM, else streaming. */
#ifndef TBAND_CONFIG_H
#define TBAND_CONFIG_H
#define tband_configENABLE 1
#if defined(TBAND_DEMO_SNAPSHOT)
#define tband_configUSE_BACKEND_SNAPSHOT 1
#ifndef tband_configBACKEND_SNAPSHOT_BUF_SIZE
#define tband_configBACKEND_SNAPSHOT_BUF_SIZE 8192
#endif
#elif defined(TBAND_DEMO_NULL)
/* the benchmark's null backend: the tracer's own cost without a transport */
#define tband_configUSE_BACKEND_EXTERNAL 1
#define tband_portBACKEND_EXTERNAL_HANDLER(buf, len, meta) ((void)(buf), (void)(len), (void)(meta), 0)
#elif defined(TBAND_DEMO_POSTMORTEM)
#define tband_configUSE_BACKEND_POST_MORTEM 1
#define tband_configBACKEND_POST_MORTEM_BUF_SIZE 512
#else
#define tband_configUSE_BACKEND_STREAMING 1
#endif
#ifndef tband_configTRACE_DROP_CNT_EVERY
#define tband_configTRACE_DROP_CNT_EVERY 0
#endif
#ifndef TBAND_CM_CPU_HZ
#define TBAND_CM_CPU_HZ 48000000u /* the VM's cm3 machine */
#endif
#endif
