/* Error strings and diagnostics shared by every module (include/sonde/common.h). */
#include "sonde/common.h"

#include <stdarg.h>
#include <stdio.h>

/* Indexed by -code; keep in the order of enum sonde_error. */
static const char *const error_text[] = {
    "success",
    "out of memory",
    "input/output error",
    "input is corrupt or not in the expected format",
    "input is truncated",
    "not supported",
    "value out of range",
    "invalid argument",
    "not found",
    "invalid in the current state",
    "end of input",
    "no data available yet",
    "limit reached",
    "target fault",
};

const char *sonde_strerror(int err)
{
  unsigned idx = err <= 0 ? (unsigned)-err : 0xffffu;
  if (idx < sizeof(error_text) / sizeof(error_text[0]))
    return error_text[idx];
  return "unknown error";
}

unsigned sonde_version_number(void) { return SONDE_VERSION_NUMBER; }

#define STR2(x) #x
#define STR(x) STR2(x)
const char *sonde_version_string(void)
{
  return STR(SONDE_VERSION_MAJOR) "." STR(SONDE_VERSION_MINOR) "." STR(SONDE_VERSION_PATCH);
}

int sonde_diag_set(struct sonde_diag *d, int err, const char *fmt, ...)
{
  if (d) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
  }
  return err;
}

void sonde_diag_clear(struct sonde_diag *d)
{
  if (d)
    d->msg[0] = '\0';
}
