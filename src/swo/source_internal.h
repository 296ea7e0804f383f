/* Private to src/swo: the platform part of serial sources (serial_linux.c). */
#ifndef SONDE_SWO_SOURCE_INTERNAL_H
#define SONDE_SWO_SOURCE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "sonde/common.h"

/* Open `dev` as a raw 8N1 tty; if baud != 0 set it exactly (any integer
 * rate, BOTHER). On success *fd and *baud_out (as read back) are set. */
int swo_serial_open(const char *dev, uint32_t baud, bool nonblocking, int *fd,
                    uint32_t *baud_out, struct sonde_diag *diag);

#endif
