/* Sonde: shared definitions of libsonde — error codes, version, diagnostics.
 *
 * Every library function that can fail returns 0 (or a non-negative size) on
 * success and a negative SONDE_E_* code on failure. The numeric values are part
 * of the ABI and never change. The library never prints, exits or spawns a
 * process: where a code alone is not enough (which file, which byte offset), a
 * handle keeps a human-readable detail that its module exposes as
 * sonde_<module>_error_detail(). */
#ifndef SONDE_COMMON_H
#define SONDE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SONDE_VERSION_MAJOR 0
#define SONDE_VERSION_MINOR 1
#define SONDE_VERSION_PATCH 0
#define SONDE_VERSION_NUMBER \
  (SONDE_VERSION_MAJOR * 10000 + SONDE_VERSION_MINOR * 100 + SONDE_VERSION_PATCH)

enum sonde_error {
  SONDE_OK = 0,
  SONDE_E_NOMEM = -1,       /* allocation failed */
  SONDE_E_IO = -2,          /* read/write/open failed (errno says more) */
  SONDE_E_FORMAT = -3,      /* input is not in the expected format / corrupt */
  SONDE_E_TRUNCATED = -4,   /* input ends in the middle of a unit */
  SONDE_E_UNSUPPORTED = -5, /* valid, but not supported by this build/target */
  SONDE_E_RANGE = -6,       /* value or address out of range */
  SONDE_E_ARG = -7,         /* invalid argument from the caller */
  SONDE_E_NOTFOUND = -8,    /* named thing (symbol, machine, file) not found */
  SONDE_E_STATE = -9,       /* call not valid in the handle's current state */
  SONDE_E_EOF = -10,        /* end of input */
  SONDE_E_AGAIN = -11,      /* no data yet; call again */
  SONDE_E_LIMIT = -12,      /* a configured limit (cycles, size) was reached */
  SONDE_E_FAULT = -13,      /* the emulated target faulted / locked up */
};

/* Short, static, lowercase description of an error code ("input is corrupt"). */
const char *sonde_strerror(int err);

/* True for a negative return value that is one of SONDE_E_*. */
static inline int sonde_is_error(long long ret) { return ret < 0; }

unsigned sonde_version_number(void);     /* SONDE_VERSION_NUMBER of the library */
const char *sonde_version_string(void);  /* "0.1.0" */

/* Write s as a JSON string literal (with its quotes) through put(ctx, bytes, n),
 * always as valid UTF-8 JSON: '"', '\\' and control characters are escaped, so
 * is DEL (0x7f); well-formed UTF-8 passes through; every byte that is not part
 * of a well-formed UTF-8 sequence becomes \u00XX (the byte read as Latin-1),
 * so nothing is dropped. Every JSON writer of Sonde goes through it. */
void sonde_json_quote(const char *s, void (*put)(void *ctx, const char *p, size_t n), void *ctx);

/* A fixed-size message buffer that handles embed to explain their last error.
 * sonde_diag_set() formats into it and returns `err`, so a failing path reads
 *   return sonde_diag_set(&h->diag, SONDE_E_FORMAT, "%s: offset %llu: bad magic", ...); */
struct sonde_diag {
  char msg[320];
};
int sonde_diag_set(struct sonde_diag *d, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void sonde_diag_clear(struct sonde_diag *d);

#ifdef __cplusplus
}
#endif
#endif
