/* The SWO wire of a FrankenTrace run on the VM (ft_wire.c): the bytes the
 * host receives, optionally through bit errors (the VM's SWO impairments:
 * each bit time of the waveform inverted with a probability, sampled at 4x
 * the baud rate and decoded back with the UART line decoder of src/swo, as a
 * logic analyzer would). Internal to src/frankentrace. */
#ifndef SONDE_FT_WIRE_H
#define SONDE_FT_WIRE_H

#include <stdint.h>
#include <stddef.h>

#include "sonde/swo.h"
#include "sonde/vm.h"

struct ft_wire {
  uint8_t *buf; /* what the host received */
  size_t n, cap;
  uint64_t clock_hz;
  double bit_errors;  /* per bit time; 0: the bytes as sent */
  uint64_t rng;       /* splitmix64 state */
  uint64_t flipped;   /* bit times inverted */
  uint64_t sent;      /* bytes the pin sent */
  uint64_t framing;   /* line decoder: frames dropped */
  uint64_t last_end;
  uint32_t bit_cycles;
  struct sonde_vm_swo_sampler *sampler;
  struct sonde_swo_line *line;
  uint8_t *lbuf; /* line decoder output */
  size_t lcap;
  int err;
};

/* splitmix64 of x: seeds from (seed, iteration, attempt). */
uint64_t ft_wire_mix(uint64_t x);
void ft_wire_init(struct ft_wire *w, uint64_t clock_hz, double bit_errors, uint64_t seed);
/* sonde_vm_swo_fn: one byte on the pin. */
int ft_wire_byte(void *ctx, const struct sonde_vm_swo_byte *b);
/* End of the run: the line's idle tail, the decoder flushed. */
int ft_wire_finish(struct ft_wire *w);
void ft_wire_free(struct ft_wire *w);

#endif
