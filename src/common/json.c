/* JSON string literals that are always valid UTF-8 JSON (sonde_json_quote in
 * sonde/common.h). Trace payloads (tband messages, symbol names from ELF files
 * of unknown origin) may hold any byte; a JSON reader must never choke. */
#include "sonde/common.h"

#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at c (RFC 3629: no overlongs, no
 * surrogates, at most U+10FFFF), or 0 if the byte does not start one. */
static size_t utf8_len(const unsigned char *c)
{
  if (c[0] >= 0xC2 && c[0] <= 0xDF)
    return (c[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c[0] >= 0xE0 && c[0] <= 0xEF) {
    unsigned lo = c[0] == 0xE0 ? 0xA0 : 0x80, hi = c[0] == 0xED ? 0x9F : 0xBF;
    return c[1] >= lo && c[1] <= hi && (c[2] & 0xC0) == 0x80 ? 3 : 0;
  }
  if (c[0] >= 0xF0 && c[0] <= 0xF4) {
    unsigned lo = c[0] == 0xF0 ? 0x90 : 0x80, hi = c[0] == 0xF4 ? 0x8F : 0xBF;
    return c[1] >= lo && c[1] <= hi && (c[2] & 0xC0) == 0x80 && (c[3] & 0xC0) == 0x80 ? 4 : 0;
  }
  return 0;
}

void sonde_json_quote(const char *s, void (*put)(void *ctx, const char *p, size_t n), void *ctx)
{
  const unsigned char *c = (const unsigned char *)(s ? s : "");
  put(ctx, "\"", 1);
  const unsigned char *run = c; /* bytes that need no escaping, written in one go */
  while (*c) {
    const char *esc = NULL;
    char tmp[8];
    size_t k = 1;
    if (*c == '"')
      esc = "\\\"";
    else if (*c == '\\')
      esc = "\\\\";
    else if (*c == '\n')
      esc = "\\n";
    else if (*c == '\r')
      esc = "\\r";
    else if (*c == '\t')
      esc = "\\t";
    else if (*c < 0x20 || *c == 0x7F || (*c >= 0x80 && !(k = utf8_len(c)))) {
      snprintf(tmp, sizeof tmp, "\\u%04x", *c);
      esc = tmp;
      k = 1;
    }
    if (esc) {
      if (c > run)
        put(ctx, (const char *)run, (size_t)(c - run));
      put(ctx, esc, esc == tmp ? 6 : 2);
      c += 1;
      run = c;
    } else {
      c += k;
    }
  }
  if (c > run)
    put(ctx, (const char *)run, (size_t)(c - run));
  put(ctx, "\"", 1);
}
