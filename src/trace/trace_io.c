/* Buffered trace input/output (trace_io.h). */
#include "trace_io.h"

#include <stdlib.h>
#include <string.h>

int trace_in_init_file(struct trace_in *in, FILE *f)
{
  memset(in, 0, sizeof *in);
  in->own = malloc(TRACE_IO_CHUNK);
  if (!in->own)
    return SONDE_E_NOMEM;
  in->f = f;
  in->data = in->own;
  return 0;
}

void trace_in_init_buffer(struct trace_in *in, const void *data, size_t len)
{
  memset(in, 0, sizeof *in);
  in->data = data;
  in->len = len;
  in->eof = true;
}

void trace_in_free(struct trace_in *in)
{
  free(in->own);
  in->own = NULL;
}

size_t trace_in_fill(struct trace_in *in, size_t need)
{
  size_t avail = in->len - in->pos;
  if (avail >= need || in->eof)
    return avail;
  /* slide the unread tail to the front, then read to fill the chunk */
  memmove(in->own, in->own + in->pos, avail);
  in->base += in->pos;
  in->pos = 0;
  in->len = avail;
  while (in->len < need && !in->eof) {
    size_t got = fread(in->own + in->len, 1, TRACE_IO_CHUNK - in->len, in->f);
    in->len += got;
    if (got == 0) {
      in->eof = true;
      in->io_error = ferror(in->f) != 0;
    }
  }
  return in->len - in->pos;
}

int trace_in_line(struct trace_in *in, size_t max, const char **line, size_t *n)
{
  if (max > TRACE_IO_CHUNK - 1)
    max = TRACE_IO_CHUNK - 1;
  size_t avail = trace_in_fill(in, 1);
  if (avail == 0)
    return 0;
  const uint8_t *p = in->data + in->pos;
  const uint8_t *nl = memchr(p, '\n', avail);
  if (!nl && !in->eof) {
    avail = trace_in_fill(in, max + 1 < TRACE_IO_CHUNK ? max + 1 : TRACE_IO_CHUNK);
    p = in->data + in->pos;
    nl = memchr(p, '\n', avail);
  }
  size_t len = nl ? (size_t)(nl - p) : avail;
  if (len > max)
    return -1;
  in->pos += len + (nl ? 1 : 0);
  if (len && p[len - 1] == '\r')
    len--;
  *line = (const char *)p;
  *n = len;
  return 1;
}

int trace_out_init(struct trace_out *out, FILE *f)
{
  memset(out, 0, sizeof *out);
  out->buf = malloc(TRACE_IO_CHUNK);
  if (!out->buf)
    return SONDE_E_NOMEM;
  out->f = f;
  return 0;
}

void trace_out_free(struct trace_out *out)
{
  free(out->buf);
  out->buf = NULL;
}

int trace_out_flush(struct trace_out *out)
{
  if (out->failed)
    return SONDE_E_IO;
  if (out->used && fwrite(out->buf, 1, out->used, out->f) != out->used) {
    out->failed = true;
    return SONDE_E_IO;
  }
  out->used = 0;
  return 0;
}

uint8_t *trace_out_reserve(struct trace_out *out, size_t n)
{
  if (out->used + n > TRACE_IO_CHUNK && trace_out_flush(out) < 0)
    return NULL;
  if (out->failed)
    return NULL;
  return out->buf + out->used;
}

size_t trace_fmt_u64(char *p, uint64_t v)
{
  char tmp[20];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (size_t i = 0; i < n; i++)
    p[i] = tmp[n - 1 - i];
  return n;
}

static const char hexdig[] = "0123456789abcdef";

void trace_fmt_hex8(char *p, uint32_t v)
{
  p[0] = '0';
  p[1] = 'x';
  for (int i = 0; i < 8; i++)
    p[2 + i] = hexdig[(v >> (28 - 4 * i)) & 0xF];
}

size_t trace_fmt_hex(char *p, uint32_t v)
{
  int digits = 1;
  while (digits < 8 && (v >> (4 * digits)))
    digits++;
  p[0] = '0';
  p[1] = 'x';
  for (int i = 0; i < digits; i++)
    p[2 + i] = hexdig[(v >> (4 * (digits - 1 - i))) & 0xF];
  return 2 + (size_t)digits;
}

bool trace_parse_u64(const char *s, size_t n, bool hex_ok, uint64_t *out)
{
  uint64_t v = 0;
  if (n == 0)
    return false;
  if (hex_ok && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    if (n - 2 > 16)
      return false;
    for (size_t i = 2; i < n; i++) {
      char c = s[i];
      unsigned d;
      if (c >= '0' && c <= '9')
        d = (unsigned)(c - '0');
      else if (c >= 'a' && c <= 'f')
        d = (unsigned)(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        d = (unsigned)(c - 'A' + 10);
      else
        return false;
      v = v << 4 | d;
    }
    *out = v;
    return true;
  }
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}
