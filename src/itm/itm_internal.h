/* Internals of the ITM decoder: its state, shared by itm.c and itm_par.c, and
 * hooks for tests (not in the public API). */
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

/* sonde_itm_decode_parallel (src/itm/itm_par.c): when on, the caller never
 * decodes a chunk from the true state (except the first), so that every
 * later chunk goes through speculation and a join (tests). Process-wide. */
void itm_par_force_speculation(bool on);

/* The decoder's state (src/itm/itm.c; read and set by src/itm/itm_par.c). */
enum { ST_IDLE = 0, ST_PEND, ST_ZEROS, ST_LOST };

struct sonde_itm {
  struct sonde_itm_config cfg;
  uint64_t offset;      /* stream offset of the next byte fed */
  uint64_t ts_abs;      /* sum of LTS deltas */
  uint64_t ts_out;      /* ts stamped on packets (TS_UNKNOWN before any LTS) */
  uint64_t gts;         /* global timestamp: bits 25:0 from GTS1, 63:26 from GTS2 */
  uint64_t pend_off;    /* offset of pend[0] */
  uint64_t zstart;      /* offset of the first zero of the current run */
  uint64_t zeros;       /* zeros in the current run */
  uint64_t skip_start;  /* first byte of the current loss */
  uint32_t page_base;   /* stimulus page * 32 */
  uint8_t state, npend, lost, skip_why;
  uint8_t pend[8];
  uint8_t run_mode;     /* fast_run: use run_loop (the stream looked regular) */
  uint8_t loop_mode;    /* ITM_LOOP_*: AUTO, or one loop forced (tests) */
  uint8_t x86v3;        /* use fast_run_x86v3 (the CPU has BMI2 and AVX2) */
  struct sonde_itm_stats st;
};

#endif
