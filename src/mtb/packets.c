/* MTB buffer geometry and packets, oldest first (MTB-M0+ TRM 3.2, 3.3). */
#include <stdlib.h>
#include <string.h>

#include "sonde/mtb.h"

static uint32_t le32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int sonde_mtb_geometry(const struct sonde_mtb_raw *raw, uint32_t *size, uint32_t *pointer,
                       struct sonde_diag *d)
{
  struct sonde_diag tmp;
  if (!d)
    d = &tmp;
  if (!raw || (!raw->buf && raw->len))
    return sonde_diag_set(d, SONDE_E_ARG, "no MTB buffer");
  if (raw->len % 8)
    return sonde_diag_set(d, SONDE_E_TRUNCATED,
                          "MTB buffer is %zu bytes, not a whole number of 8-byte packets "
                          "(truncated after offset %zu?)",
                          raw->len, raw->len - raw->len % 8);
  uint64_t circle;
  if (raw->have_master) {
    unsigned mask = raw->master & 0x1F;
    circle = (uint64_t)1 << (mask + 4);
    if (circle > raw->len)
      return sonde_diag_set(d, SONDE_E_TRUNCATED,
                            "MTB buffer is %zu bytes but MASTER 0x%08x (MASK %u) describes a "
                            "%llu-byte circle: truncated dump",
                            raw->len, raw->master, mask, (unsigned long long)circle);
  } else {
    circle = raw->len;
    if (circle < 16 || (circle & (circle - 1)) || circle > ((uint64_t)1 << 35))
      return sonde_diag_set(d, SONDE_E_FORMAT,
                            "MTB buffer is %zu bytes, not a power of two >= 16: truncated dump? "
                            "(give MASTER to say the circle size)",
                            raw->len);
  }
  uint32_t ptr = raw->position & ~7u;
  if (ptr >= circle) {
    if (raw->base && ptr >= raw->base && (uint64_t)(ptr - raw->base) < circle) {
      ptr -= raw->base; /* an absolute address inside the buffer */
    } else {
      return sonde_diag_set(d, SONDE_E_RANGE,
                            "POSITION 0x%08x: its POINTER 0x%08x is outside the %llu-byte MTB "
                            "buffer (offsets 0 to 0x%llx)",
                            raw->position, ptr, (unsigned long long)circle,
                            (unsigned long long)(circle - 8));
    }
  }
  if (size)
    *size = (uint32_t)circle;
  if (pointer)
    *pointer = ptr;
  return 0;
}

int sonde_mtb_packets(const struct sonde_mtb_raw *raw, struct sonde_mtb_packet **out, size_t *n,
                      struct sonde_diag *d)
{
  if (!out || !n)
    return SONDE_E_ARG;
  *out = NULL;
  *n = 0;
  uint32_t size, ptr;
  int rc = sonde_mtb_geometry(raw, &size, &ptr, d);
  if (rc)
    return rc;
  bool wrap = raw->position & 4;
  size_t count = wrap ? size / 8 : ptr / 8;
  uint32_t first = wrap ? ptr : 0;
  if (!count)
    return 0;
  struct sonde_mtb_packet *p = malloc(count * sizeof *p);
  if (!p)
    return d ? sonde_diag_set(d, SONDE_E_NOMEM, "out of memory for %zu MTB packets", count)
             : SONDE_E_NOMEM;
  const uint8_t *b = raw->buf;
  for (size_t i = 0; i < count; i++) {
    uint32_t off = (uint32_t)((first + 8 * (uint64_t)i) % size);
    uint32_t s = le32(b + off), t = le32(b + off + 4);
    p[i] = (struct sonde_mtb_packet){s & ~1u, t & ~1u, s & 1, t & 1, off};
  }
  *out = p;
  *n = count;
  return 0;
}
