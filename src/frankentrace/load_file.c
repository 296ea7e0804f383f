/* Whole-file input, gzip or plain (zlib reads both), for the trace readers. */
#include "load_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int ft_load_file(const char *path, char **data, size_t *len, struct sonde_diag *diag)
{
  *data = NULL;
  *len = 0;
  bool is_stdin = strcmp(path, "-") == 0;
  gzFile g = is_stdin ? gzdopen(dup(STDIN_FILENO), "rb") : gzopen(path, "rb");
  if (!g)
    return sonde_diag_set(diag, SONDE_E_IO, "%s: %s", path, strerror(errno ? errno : ENOMEM));
  size_t cap = 1 << 20, n = 0;
  char *buf = malloc(cap + 1);
  if (!buf) {
    gzclose(g);
    return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", path);
  }
  for (;;) {
    if (n == cap) {
      char *p = cap < (SIZE_MAX / 4) ? realloc(buf, 2 * cap + 1) : NULL;
      if (!p) {
        free(buf);
        gzclose(g);
        return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", path);
      }
      buf = p;
      cap *= 2;
    }
    size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
    int got = gzread(g, buf + n, (unsigned)want);
    if (got < 0) {
      int zerr;
      const char *msg = gzerror(g, &zerr);
      int rc = sonde_diag_set(diag, zerr == Z_ERRNO ? SONDE_E_IO : SONDE_E_FORMAT,
                              "%s: offset %zu: %s", path, n,
                              zerr == Z_ERRNO ? strerror(errno) : msg);
      free(buf);
      gzclose(g);
      return rc;
    }
    if (got == 0)
      break;
    n += (size_t)got;
  }
  /* zlib returns what it could of a cut gzip stream: say so, never use it. */
  int zerr;
  gzerror(g, &zerr);
  if (zerr == Z_BUF_ERROR) {
    gzclose(g);
    free(buf);
    return sonde_diag_set(diag, SONDE_E_TRUNCATED,
                          "%s: compressed stream ends early (after %zu bytes of data)", path, n);
  }
  gzclose(g);
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return 0;
}
