/* Host port of the tracer (see tband_port.h beside it). Uses libc and
 * pthread-free thread-locals; only for tests and generators on the host. */
#include "tband_port.h"

#include <stdlib.h>
#include <string.h>

static _Thread_local uint32_t host_core;
static _Thread_local int host_depth;
static uint64_t host_ts;
static size_t host_cap = (size_t)-1;

struct host_stream {
  uint8_t *data;
  size_t len, cap;
};
static struct host_stream host_streams[TBAND_HOST_CORES];

uint64_t tband_host_timestamp(void) { return __atomic_fetch_add(&host_ts, 1, __ATOMIC_RELAXED); }
uint32_t tband_host_core_id(void) { return host_core; }
void tband_host_enter_critical(void) { host_depth++; }
void tband_host_exit_critical(void) { host_depth--; }
int tband_host_critical_depth(void) { return host_depth; }
void tband_host_set_core(uint32_t core) { host_core = core; }
void tband_host_set_time(uint64_t ts) { __atomic_store_n(&host_ts, ts, __ATOMIC_RELAXED); }
void tband_host_set_stream_capacity(size_t cap) { host_cap = cap; }

bool tband_host_stream(const uint8_t *buf, size_t len, uint32_t core)
{
  struct host_stream *s = &host_streams[core];
  if (s->len + len > host_cap)
    return true; /* dropped */
  if (s->len + len > s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 4096;
    while (nc < s->len + len)
      nc *= 2;
    uint8_t *p = realloc(s->data, nc);
    if (!p)
      return true;
    s->data = p;
    s->cap = nc;
  }
  memcpy(s->data + s->len, buf, len);
  s->len += len;
  return false;
}

const uint8_t *tband_host_stream_data(uint32_t core, size_t *len)
{
  *len = host_streams[core].len;
  return host_streams[core].data;
}

void tband_host_stream_reset(void)
{
  for (int i = 0; i < TBAND_HOST_CORES; i++)
    host_streams[i].len = 0;
}
