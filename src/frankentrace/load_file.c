/* Whole-file input, gzip or plain (zlib reads both), for the trace readers. */
#include "load_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int ft_load_file(const char *path, char **data, size_t *len, struct sonde_diag *diag)
{
  return ft_load_file_progress(path, data, len, NULL, NULL, diag);
}

int ft_load_file_progress(const char *path, char **data, size_t *len,
                          void (*fn)(void *ctx, uint64_t done, uint64_t total), void *ctx,
                          struct sonde_diag *diag)
{
  *data = NULL;
  *len = 0;
  bool is_stdin = strcmp(path, "-") == 0;
  gzFile g = is_stdin ? gzdopen(dup(STDIN_FILENO), "rb") : gzopen(path, "rb");
  if (!g)
    return sonde_diag_set(diag, SONDE_E_IO, "%s: %s", path, strerror(errno ? errno : ENOMEM));
  struct stat sb;
  uint64_t file_size = !is_stdin && stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
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
    /* pieces of 4 MiB, so that progress moves */
    size_t want = cap - n > (4u << 20) ? (4u << 20) : cap - n;
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
    if (fn)
      fn(ctx, (uint64_t)gzoffset(g), file_size);
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
