/* tband_backend_stream.c: the streaming backend (docs/tband.md, "Streaming").
 * Every framed event goes straight to the port; the port returns true when it
 * had to drop it. Frames are whole, so events of several cores may share one
 * channel; tband_portBACKEND_STREAM_DATA_CORE lets a port use one per core. */
#include "tband_internal.h"

#if tband_configENABLE && tband_configUSE_BACKEND_STREAMING
#if tband_configFREERTOS_TRACE_ENABLE
#include "FreeRTOS.h"
#include "task.h"
#endif

void tband_backend_init(void) {}

enum tband_backend_result tband_backend_submit(uint32_t core, const uint8_t *buf, size_t len,
                                               bool is_metadata)
{
  (void)core;
  (void)is_metadata;
  return tband_portBACKEND_STREAM_DATA_CORE(buf, len, core) ? TBAND_DROPPED : TBAND_STORED;
}
#endif
