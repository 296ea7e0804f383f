/* A small CSV field splitter (RFC 4180 quoting) shared by the trace and LSU
 * readers: it walks a memory buffer line by line and knows the byte offset of
 * every field, for error messages. */
#ifndef SONDE_FT_CSV_FIELDS_H
#define SONDE_FT_CSV_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FT_CSV_MAX_FIELDS 16

struct ft_csv {
  const char *data;
  size_t len, pos;
  uint64_t line; /* 1-based number of the row last read */
  /* the row last read: fields as (start, length) into data, unquoted text
   * needs unescaping only when `quoted[i]` and it holds "" */
  size_t nfields;
  size_t start[FT_CSV_MAX_FIELDS], flen[FT_CSV_MAX_FIELDS];
  bool quoted[FT_CSV_MAX_FIELDS];
  size_t row_offset; /* byte offset of the row */
};

/* The next row: 1, 0 at the end, -1 on an unterminated quote or more than
 * FT_CSV_MAX_FIELDS fields (then row_offset/pos say where). */
int ft_csv_next(struct ft_csv *c);
/* Field i equals the string s. */
bool ft_csv_is(const struct ft_csv *c, size_t i, const char *s);
/* Parse field i: decimal, or hex with 0x when hex_ok. */
bool ft_csv_u64(const struct ft_csv *c, size_t i, bool hex_ok, uint64_t *out);

#endif
