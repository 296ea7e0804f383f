/* FrankenTrace target runner: the DWT/ITM/TPIU settings for one iteration,
 * computed from the core clock, the SWO baud and the sampling interval N
 * (paper 000_6a439e8724f7a0c3, section 4.1 and Table 2). Pure integer code:
 * the runner calls it on the target, the host's unit test compiles the same
 * file (tests/frankentrace/test_ft_setup.c). Portable C99, no libc. */
#ifndef SONDE_FT_SETUP_H
#define SONDE_FT_SETUP_H

#include <stdint.h>

/* Why a configuration cannot work (ft_setup_compute's return value). */
enum ft_setup_error {
  FT_SETUP_OK = 0,
  FT_SETUP_BAUD_DIVIDER = 1, /* core_hz / baud is not an integer in 1..65536 */
  FT_SETUP_N_SHAPE = 2,      /* N is not (1..16) x 64 or (1..16) x 1024 */
  FT_SETUP_N_BANDWIDTH = 3,  /* N cycles are too short to send one sample */
  FT_SETUP_PHASE = 4,        /* phase >= N */
  FT_SETUP_COMPARATORS = 5,  /* LSU: the DWT has fewer comparators than a pair needs (2, 4 invasive) */
};

struct ft_setup {
  uint32_t acpr;       /* TPIU_ACPR: SWO baud = core_hz / (acpr + 1) */
  uint32_t ctrl13;     /* DWT_CTRL[12:0]: PCSAMPLENA, CYCTAP, POSTPRESET, CYCCNTENA */
  uint32_t postinit;   /* DWT_CTRL[8:5] for this phase */
  uint32_t cyccnt0;    /* CYCCNT written before DWT_CTRL for this phase */
  uint32_t min_n;      /* the smallest N this clock and baud can carry */
};

/* Bytes the SWO pin carries per PC sample at interval n: the 5-byte periodic
 * PC packet and the local timestamp that follows it (format 1, 7 bits of
 * delta per payload byte). */
uint32_t ft_setup_bytes_per_sample(uint32_t n);
/* The smallest N that DWT can produce (64..1024 step 64, 2048..16384 step
 * 1024) whose samples fit on a core_hz/baud NRZ (8N1, 10 bits a byte) pin;
 * 0 if none does. */
uint32_t ft_setup_min_n(uint32_t core_hz, uint32_t baud);
/* The settings for sampling phase `phase` (0..n-1): the first sample comes
 * phase+1 cycles after the DWT_CTRL write that starts the counter, then
 * every n cycles (tap = 64 or 1024 cycles: CYCCNT0 places the first tap,
 * POSTINIT counts whole taps). Returns an ft_setup_error. */
int ft_setup_compute(uint32_t core_hz, uint32_t baud, uint32_t n, uint32_t phase,
                     struct ft_setup *out);
/* The DWT_CTRL[12:0] value for sampling every n cycles, 0 if none. */
uint32_t ft_setup_ctrl13(uint32_t n);

#endif
