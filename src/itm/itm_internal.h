/* Internal hooks of the ITM decoder, for tests only (not in the public API). */
#ifndef SONDE_ITM_INTERNAL_H
#define SONDE_ITM_INTERNAL_H

#include "sonde/itm.h"

/* Which hot loop fast_run uses (src/itm/itm.c): chosen per call from the
 * stream (AUTO, the default), or forced so that a test can compare both
 * loops with the byte-at-a-time general path. */
enum { ITM_LOOP_AUTO = 0, ITM_LOOP_MIXED, ITM_LOOP_RUN };
void itm_force_loop(struct sonde_itm *d, unsigned mode);
/* Use the baseline-ISA copy of the hot loops even where the x86-64
 * BMI2/AVX2 copy would run (src/itm/itm.c, fast_run_x86v3). */
void itm_force_portable(struct sonde_itm *d);

#endif
