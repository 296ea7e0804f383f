/* CSV rows from a memory buffer (RFC 4180 quoting: a field in double quotes may
 * hold commas, newlines and "" for a quote). */
#include "csv_fields.h"

#include <string.h>

int ft_csv_next(struct ft_csv *c)
{
  if (c->pos >= c->len)
    return 0;
  c->row_offset = c->pos;
  c->line++;
  c->nfields = 0;
  size_t p = c->pos;
  for (;;) {
    if (c->nfields == FT_CSV_MAX_FIELDS)
      return -1;
    size_t i = c->nfields++;
    if (p < c->len && c->data[p] == '"') {
      c->quoted[i] = true;
      size_t q = ++p;
      for (;;) {
        if (q >= c->len) {
          c->pos = q;
          return -1; /* unterminated quote */
        }
        if (c->data[q] == '"') {
          if (q + 1 < c->len && c->data[q + 1] == '"') {
            q += 2;
            continue;
          }
          break;
        }
        q++;
      }
      c->start[i] = p;
      c->flen[i] = q - p;
      p = q + 1;
    } else {
      c->quoted[i] = false;
      size_t q = p;
      while (q < c->len && c->data[q] != ',' && c->data[q] != '\n' && c->data[q] != '\r')
        q++;
      c->start[i] = p;
      c->flen[i] = q - p;
      p = q;
    }
    if (p < c->len && c->data[p] == ',') {
      p++;
      continue;
    }
    if (p < c->len && c->data[p] == '\r')
      p++;
    if (p < c->len && c->data[p] == '\n')
      p++;
    else if (p < c->len) {
      c->pos = p;
      return -1; /* text after a closing quote */
    }
    c->pos = p;
    return 1;
  }
}

bool ft_csv_is(const struct ft_csv *c, size_t i, const char *s)
{
  size_t n = strlen(s);
  return i < c->nfields && c->flen[i] == n && memcmp(c->data + c->start[i], s, n) == 0;
}

bool ft_csv_u64(const struct ft_csv *c, size_t i, bool hex_ok, uint64_t *out)
{
  if (i >= c->nfields || c->flen[i] == 0 || c->flen[i] > 20)
    return false;
  const char *s = c->data + c->start[i];
  size_t n = c->flen[i], k = 0;
  unsigned base = 10;
  if (hex_ok && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    k = 2;
  }
  uint64_t v = 0;
  for (; k < n; k++) {
    unsigned d;
    char ch = s[k];
    if (ch >= '0' && ch <= '9')
      d = (unsigned)(ch - '0');
    else if (base == 16 && ch >= 'a' && ch <= 'f')
      d = (unsigned)(ch - 'a' + 10);
    else if (base == 16 && ch >= 'A' && ch <= 'F')
      d = (unsigned)(ch - 'A' + 10);
    else
      return false;
    if (v > (UINT64_MAX - d) / base)
      return false;
    v = v * base + d;
  }
  *out = v;
  return true;
}
