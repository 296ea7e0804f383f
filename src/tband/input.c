/* Inputs of the Tonbandgerät decoder: "path@core" specs and whole files. */
#include "sonde/tband.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sonde_tband_parse_input(const char *spec, char *path, size_t cap, int *core)
{
  const char *at = strrchr(spec, '@');
  size_t plen = strlen(spec);
  *core = -1;
  /* serial:DEVICE@BAUD: its one '@' is the baud's (a core needs a second) */
  if (at && !strncmp(spec, "serial:", 7) && strchr(spec, '@') == at)
    at = NULL;
  if (at && at[1]) {
    const char *q = at + 1;
    while (*q >= '0' && *q <= '9')
      q++;
    long v = strtol(at + 1, NULL, 10);
    if (!*q && q - (at + 1) <= 6 && v >= 0) {
      *core = (int)v;
      plen = (size_t)(at - spec);
    } else if (at[1] == '-' || at[1] == '+' || (at[1] >= '0' && at[1] <= '9')) {
      return SONDE_E_ARG; /* meant as a core, but not one: "x@-1", "x@2b" */
    }
  }
  if (plen + 1 > cap)
    return SONDE_E_RANGE;
  memcpy(path, spec, plen);
  path[plen] = '\0';
  return 0;
}

int sonde_tband_decode_file(const char *path, enum sonde_tband_input_format fmt, int core,
                            sonde_tband_evt_cb cb, void *ctx, struct sonde_tband_stats *stats,
                            struct sonde_diag *diag)
{
  int is_stdin = !strcmp(path, "-");
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f)
    return sonde_diag_set(diag, SONDE_E_IO, "%s: %s", path, strerror(errno));
  struct sonde_tband_dec *d = sonde_tband_dec_new(fmt, core, path);
  uint8_t *buf = malloc(1 << 16);
  if (!d || !buf) {
    sonde_tband_dec_free(d);
    free(buf);
    if (!is_stdin)
      fclose(f);
    return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", path);
  }
  size_t n;
  int rc = 0;
  while ((n = fread(buf, 1, 1 << 16, f)) > 0)
    sonde_tband_dec_feed(d, buf, n, cb, ctx);
  if (ferror(f))
    rc = sonde_diag_set(diag, SONDE_E_IO, "%s: read error: %s", path, strerror(errno));
  sonde_tband_dec_finish(d, cb, ctx);
  if (stats)
    sonde_tband_dec_stats(d, stats);
  sonde_tband_dec_free(d);
  free(buf);
  if (!is_stdin)
    fclose(f);
  return rc;
}
