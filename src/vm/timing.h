/* The cycle model of the virtual Cortex-M's core: per-core parameters and
 * the operand-dependent timings (long multiply early termination, divide).
 * The table and its sources are in docs/vm.md, "CPU and cycle model". */
#ifndef SONDE_VM_TIMING_H
#define SONDE_VM_TIMING_H

#include <stdint.h>

#include "cpu.h"

struct sonde_vm;

/* Fill vm->cpu.t for vm->core (cheap when already done). */
void vm_timing_setup(struct sonde_vm *vm);

/* UMULL/SMULL (acc=0) and UMLAL/SMLAL (acc=1): `bits` is the number of
 * significant bits of the smaller operand (Cortex-M3 TRM 3.3.1 note a: early
 * termination). */
static inline uint32_t vm_timing_mull(const struct vm_timing *t, uint32_t bits, int acc)
{
  if (t->long_mul_fast)
    return 1;
  uint32_t extra = bits <= 8 ? 0 : bits <= 16 ? 1 : bits <= 24 ? 2 : 3;
  if (acc)
    return 4 + extra;
  return 3 + (extra > 2 ? 2 : extra);
}

/* SDIV/UDIV on magnitudes n / d: 2 to 12 cycles (TRM 3.3.1 note b). The
 * model: 2 cycles when the quotient is 0 (d > n, or d = 0), else 3 plus one
 * cycle per 4 quotient bits. */
static inline uint32_t vm_timing_div(const struct vm_timing *t, uint32_t n, uint32_t d)
{
  (void)t;
  if (!d || n < d)
    return 2;
  uint32_t qbits = (uint32_t)(__builtin_clz(d) - __builtin_clz(n)) + 1;
  uint32_t c = 3 + qbits / 4;
  return c > 12 ? 12 : c;
}

#endif
