/* Internal hooks of the ITM decoder, for tests only (not in the public API). */
#ifndef SONDE_ITM_INTERNAL_H
#define SONDE_ITM_INTERNAL_H

#include "sonde/itm.h"

/* Which hot loop fast_run uses (src/itm/itm.c): chosen per call from the
 * stream (AUTO, the default), or forced so that a test can compare both
 * loops with the byte-at-a-time general path. */
enum { ITM_LOOP_AUTO = 0, ITM_LOOP_MIXED, ITM_LOOP_RUN };
void itm_force_loop(struct sonde_itm *d, unsigned mode);

#endif
