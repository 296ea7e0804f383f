/* FreeRTOSConfig.h of the mock-kernel hook test: Sonde's tracer hooks in
 * through tband.h, included last as docs/tband.md says. */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H
#include "tband.h"
#endif
