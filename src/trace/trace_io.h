/* Buffered byte input and output shared by the trace readers and writers:
 * a reader pulls from a FILE or a memory buffer and always knows the byte
 * offset of what it hands out (for error messages); a writer batches small
 * records into large fwrite() calls. */
#ifndef SONDE_TRACE_IO_H
#define SONDE_TRACE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonde/common.h"

#define TRACE_IO_CHUNK 65536

struct trace_in {
  FILE *f;              /* NULL for a memory buffer */
  const uint8_t *data;  /* the bytes available: data[pos..len) */
  size_t len, pos;
  uint64_t base;        /* input offset of data[0] */
  bool eof;             /* no more bytes after data[len) */
  bool io_error;
  uint8_t *own;         /* the FILE's buffer (TRACE_IO_CHUNK bytes) */
};

int trace_in_init_file(struct trace_in *in, FILE *f);
void trace_in_init_buffer(struct trace_in *in, const void *data, size_t len);
void trace_in_free(struct trace_in *in);
/* Make at least `need` (<= TRACE_IO_CHUNK) bytes available at data+pos unless
 * the input ends first; returns how many are available. */
size_t trace_in_fill(struct trace_in *in, size_t need);
static inline uint64_t trace_in_offset(const struct trace_in *in) { return in->base + in->pos; }
/* The next line without its '\n' (and '\r'): 1 = got one (in *line and *n; valid
 * until the next call), 0 = end of input, -1 = line longer than `max`. A last
 * line without '\n' is returned too. */
int trace_in_line(struct trace_in *in, size_t max, const char **line, size_t *n);

struct trace_out {
  FILE *f;
  uint8_t *buf;
  size_t used;
  bool failed;
};

int trace_out_init(struct trace_out *out, FILE *f);
void trace_out_free(struct trace_out *out);
/* Room for `n` (<= 256) bytes at the returned pointer; commit with used += n.
 * Returns NULL after a write error. */
uint8_t *trace_out_reserve(struct trace_out *out, size_t n);
int trace_out_flush(struct trace_out *out);
/* Decimal digits of v at p; returns the count. */
size_t trace_fmt_u64(char *p, uint64_t v);
/* "0x" and exactly 8 lowercase hex digits. */
void trace_fmt_hex8(char *p, uint32_t v);
/* "0x" and the minimal lowercase hex digits; returns the count. */
size_t trace_fmt_hex(char *p, uint32_t v);
/* Parse a whole token: decimal, or 0x-prefixed hex when `hex_ok`. */
bool trace_parse_u64(const char *s, size_t n, bool hex_ok, uint64_t *out);

#endif
