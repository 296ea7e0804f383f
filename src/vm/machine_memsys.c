/* The `memsys` statements of a machine file (docs/vm.md, "Memory-system
 * timing"): what the timing model (tm.h) needs to know of the chip's fetch
 * path, flash, cache and slow regions.
 *
 *   memsys flash BASE SIZE wait=N [line=BYTES]
 *   memsys cache ctl=ADDR size=SIZE ways=N line=BYTES [tag=N] [prefetch=0|1] [mode=0|1|3]
 *   memsys latency BASE SIZE read=N write=N
 *   memsys sram read=N write=N
 *   memsys fetch depth=N
 *   memsys write-buffer 0|1 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"

static bool num(const char *s, uint64_t *out)
{
  char *end;
  if (!*s || *s == '-')
    return false;
  unsigned long long v = strtoull(s, &end, 0);
  if (*end == 'K' || *end == 'k') {
    v *= 1024;
    end++;
  }
  if (*end)
    return false;
  *out = v;
  return true;
}

/* key=value with a number in [lo, hi]. Returns 1 when t is key=..., 0 when
 * it is another key, -1 on a bad value. */
static int kv(const char *t, const char *key, uint64_t lo, uint64_t hi, uint64_t *out)
{
  size_t n = strlen(key);
  if (strncmp(t, key, n) != 0 || t[n] != '=')
    return 0;
  if (!num(t + n + 1, out) || *out < lo || *out > hi)
    return -1;
  return 1;
}

int vm_machine_parse_memsys(struct sonde_machine *m, int n, char **t, char *err, size_t cap)
{
  struct vm_tm_cfg *c = &m->tm;
  uint64_t x, y;
  if (n < 2) {
    snprintf(err, cap, "memsys: expected flash, cache, latency, sram, fetch or write-buffer");
    return -1;
  }
  c->on = true;
  if (!strcmp(t[1], "flash")) {
    if (n < 5 || !num(t[2], &x) || x > 0xFFFFFFFFu || !num(t[3], &y) || !y ||
        y > 0x100000000ull - x)
      goto usage_flash;
    c->flash_base = (uint32_t)x;
    c->flash_size = (uint32_t)y;
    c->flash_line = 0;
    bool wait = false;
    for (int i = 4; i < n; i++) {
      int r;
      if ((r = kv(t[i], "wait", 0, 15, &x)) == 1) {
        c->flash_wait = (uint8_t)x;
        wait = true;
      } else if ((r = kv(t[i], "line", 0, 64, &x)) == 1 && !(x & (x - 1)))
        c->flash_line = (uint8_t)x;
      else
        goto usage_flash;
    }
    if (!wait)
      goto usage_flash;
    return 0;
  usage_flash:
    snprintf(err, cap, "memsys flash: expected 'memsys flash BASE SIZE wait=N [line=BYTES]' "
                       "(wait 0-15, line a power of two up to 64)");
    return -1;
  }
  if (!strcmp(t[1], "cache")) {
    c->cache = true;
    c->cache_tag = 1;
    c->cache_prefetch = true;
    c->cache_mode = 1;
    c->cache_ctl = 0;
    c->cache_size = 0;
    c->cache_ways = 0;
    c->cache_line = 0;
    for (int i = 2; i < n; i++) {
      if (kv(t[i], "ctl", 0, 0xFFFFFFFFu, &x) == 1)
        c->cache_ctl = (uint32_t)x;
      else if (kv(t[i], "size", 1, 1u << 20, &x) == 1)
        c->cache_size = (uint32_t)x;
      else if (kv(t[i], "ways", 1, 16, &x) == 1)
        c->cache_ways = (uint8_t)x;
      else if (kv(t[i], "line", 4, 64, &x) == 1 && !(x & (x - 1)))
        c->cache_line = (uint8_t)x;
      else if (kv(t[i], "tag", 0, 8, &x) == 1)
        c->cache_tag = (uint8_t)x;
      else if (kv(t[i], "prefetch", 0, 1, &x) == 1)
        c->cache_prefetch = x != 0;
      else if (kv(t[i], "mode", 0, 3, &x) == 1 && x != 2)
        c->cache_mode = (uint8_t)x;
      else {
        snprintf(err, cap, "memsys cache: bad '%s' (expected ctl=ADDR size=SIZE ways=N "
                           "line=BYTES [tag=N] [prefetch=0|1] [mode=0|1|3])", t[i]);
        return -1;
      }
    }
    if (!c->cache_ctl || !c->cache_size || !c->cache_ways || !c->cache_line ||
        c->cache_size % ((uint32_t)c->cache_ways * c->cache_line)) {
      snprintf(err, cap, "memsys cache: ctl, size, ways and line are required; size must be "
                         "a multiple of ways x line");
      return -1;
    }
    return 0;
  }
  if (!strcmp(t[1], "latency")) {
    if (c->nlat >= VM_TM_MAX_LAT) {
      snprintf(err, cap, "memsys latency: at most %d regions", VM_TM_MAX_LAT);
      return -1;
    }
    struct vm_tm_lat *l = &c->lat[c->nlat];
    if (n != 6 || !num(t[2], &x) || x > 0xFFFFFFFFu || !num(t[3], &y) || !y ||
        y > 0x100000000ull - x)
      goto usage_lat;
    l->base = (uint32_t)x;
    l->size = (uint32_t)(y - 1) + 1;
    if (kv(t[4], "read", 1, 255, &x) != 1 || kv(t[5], "write", 1, 255, &y) != 1)
      goto usage_lat;
    l->read = (uint8_t)x;
    l->write = (uint8_t)y;
    c->nlat++;
    return 0;
  usage_lat:
    snprintf(err, cap, "memsys latency: expected 'memsys latency BASE SIZE read=N write=N' "
                       "(data-phase cycles, 1 = no wait state)");
    return -1;
  }
  if (!strcmp(t[1], "sram")) {
    if (n != 4 || kv(t[2], "read", 1, 255, &x) != 1 || kv(t[3], "write", 1, 255, &y) != 1) {
      snprintf(err, cap, "memsys sram: expected 'memsys sram read=N write=N'");
      return -1;
    }
    c->sram_read = (uint8_t)x;
    c->sram_write = (uint8_t)y;
    return 0;
  }
  if (!strcmp(t[1], "fetch")) {
    if (n != 3 || kv(t[2], "depth", 1, 8, &x) != 1) {
      snprintf(err, cap, "memsys fetch: expected 'memsys fetch depth=N' (1-8 words)");
      return -1;
    }
    c->fetch_depth = (uint8_t)x;
    return 0;
  }
  if (!strcmp(t[1], "write-buffer")) {
    if (n != 3 || (strcmp(t[2], "0") && strcmp(t[2], "1"))) {
      snprintf(err, cap, "memsys write-buffer: expected 0 or 1");
      return -1;
    }
    c->write_buffer = t[2][0] == '1';
    return 0;
  }
  snprintf(err, cap, "memsys: unknown '%s' (expected flash, cache, latency, sram, fetch or "
                     "write-buffer)", t[1]);
  return -1;
}
