/* tband_backend_external.c: the external backend: every framed event is handed
 * to a user function, which returns true when it dropped the event. */
#include "tband_internal.h"

#if tband_configENABLE && tband_configUSE_BACKEND_EXTERNAL
#if tband_configFREERTOS_TRACE_ENABLE
#include "FreeRTOS.h"
#include "task.h"
#endif

void tband_backend_init(void) {}

enum tband_backend_result tband_backend_submit(uint32_t core, const uint8_t *buf, size_t len,
                                               bool is_metadata)
{
  (void)core;
  return tband_portBACKEND_EXTERNAL_HANDLER(buf, len, is_metadata) ? TBAND_DROPPED : TBAND_STORED;
}
#endif
