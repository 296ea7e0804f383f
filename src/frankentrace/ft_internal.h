/* Internals shared by the files of src/frankentrace: the trace's layout. */
#ifndef SONDE_FT_INTERNAL_H
#define SONDE_FT_INTERNAL_H

#include "sonde/frankentrace.h"

/* Structure of arrays: pcs[i] and states[i] describe cycle origin + i.
 * Grown by doubling; `cap` cells allocated. */
struct sonde_ft_trace {
  uint64_t origin, length, cap;
  uint64_t clock_hz;
  uint32_t *pcs;
  uint8_t *states;
};

/* Make room for `length` cells (new ones are UNSAMPLED, pc 0). */
int ft_trace_resize(struct sonde_ft_trace *t, uint64_t length);

#endif
