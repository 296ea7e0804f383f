/* Whole-file input for the readers of src/frankentrace. */
#ifndef SONDE_FT_LOAD_FILE_H
#define SONDE_FT_LOAD_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"

/* Read all of `path` ("-": stdin), gunzipping it if it is gzip. *data is
 * malloc'd and NUL-terminated (not counted in *len). A cut gzip stream is
 * SONDE_E_TRUNCATED, never a silent partial result. */
int ft_load_file(const char *path, char **data, size_t *len, struct sonde_diag *diag);
/* The same, calling fn(ctx, bytes of the file read, file size) now and then. */
int ft_load_file_progress(const char *path, char **data, size_t *len,
                          void (*fn)(void *ctx, uint64_t done, uint64_t total), void *ctx,
                          struct sonde_diag *diag);

#endif
