/* Minimal protobuf encoder: varints, length-delimited strings and nested
 * messages (protobuf encoding guide: wire types 0 and 2). Nested messages
 * are written in place and their length prefix is inserted at pb_end(). */
#include "export_internal.h"

#include <stdlib.h>
#include <string.h>

static int reserve(struct pbuf *p, size_t more)
{
  if (p->oom)
    return -1;
  if (p->len + more <= p->cap)
    return 0;
  size_t nc = p->cap ? p->cap * 2 : 256;
  while (nc < p->len + more)
    nc *= 2;
  uint8_t *b = realloc(p->buf, nc);
  if (!b) {
    p->oom = 1;
    return -1;
  }
  p->buf = b;
  p->cap = nc;
  return 0;
}

void pb_reset(struct pbuf *p)
{
  p->len = 0;
  p->depth = 0;
}

static size_t varint_to(uint8_t *o, uint64_t v)
{
  size_t n = 0;
  while (v >= 0x80) {
    o[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  o[n++] = (uint8_t)v;
  return n;
}

void pb_varint(struct pbuf *p, uint64_t v)
{
  if (reserve(p, 10))
    return;
  p->len += varint_to(p->buf + p->len, v);
}

void pb_uint(struct pbuf *p, unsigned field, uint64_t v)
{
  pb_varint(p, (uint64_t)field << 3 | 0);
  pb_varint(p, v);
}

void pb_int(struct pbuf *p, unsigned field, int64_t v) { pb_uint(p, field, (uint64_t)v); }

void pb_str(struct pbuf *p, unsigned field, const char *s)
{
  size_t n = s ? strlen(s) : 0;
  pb_varint(p, (uint64_t)field << 3 | 2);
  pb_varint(p, n);
  if (!n || reserve(p, n)) /* (no memcpy from a NULL s, even of 0 bytes) */
    return;
  memcpy(p->buf + p->len, s, n);
  p->len += n;
}

void pb_begin(struct pbuf *p, unsigned field)
{
  pb_varint(p, (uint64_t)field << 3 | 2);
  if (p->depth < 8)
    p->stack[p->depth] = p->len;
  p->depth++;
}

void pb_end(struct pbuf *p)
{
  if (p->depth <= 0 || p->depth > 8) {
    p->oom = 1; /* misuse: nesting deeper than supported */
    return;
  }
  size_t start = p->stack[--p->depth];
  size_t n = p->len - start;
  uint8_t hdr[10];
  size_t h = varint_to(hdr, n);
  if (reserve(p, h))
    return;
  memmove(p->buf + start + h, p->buf + start, n);
  memcpy(p->buf + start, hdr, h);
  p->len += h;
}

void pb_bytes(struct pbuf *p, const void *b, size_t n)
{
  if (reserve(p, n))
    return;
  memcpy(p->buf + p->len, b, n);
  p->len += n;
}
