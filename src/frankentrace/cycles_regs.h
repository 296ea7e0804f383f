/* Register values along a recorded instruction stream (cycles_regs.c). */
#ifndef SONDE_FT_CYCLES_REGS_H
#define SONDE_FT_CYCLES_REGS_H

#include <stdbool.h>
#include <stdint.h>

#include "sonde/sym.h"
#include "vm/decode.h"

#define FT_SHADOW_BASE 0x20000000u
#define FT_SHADOW_BYTES 32768u /* 32 KiB of SRAM: the stack and data */

struct ft_regs {
  uint32_t v[16];
  uint16_t known; /* bit n: v[n] is known */
  /* what the traced code stored to SRAM (whole words), for what it loads
   * back: saved registers, locals */
  uint8_t mem[FT_SHADOW_BYTES];
  uint8_t mem_known[FT_SHADOW_BYTES];
};

/* Forget every register (the memory shadow stays). */
void ft_regs_clear(struct ft_regs *r);
/* Forget what a call into unknown code (a ROM routine) may change: r0-r3,
 * r12, lr (AAPCS: the rest is preserved). */
void ft_regs_clobber_call(struct ft_regs *r);
void ft_regs_set_sp(struct ft_regs *r, uint32_t sp);
/* Update the registers for one execution of d at pc; for a load/store, *addr
 * is its first data address (the LSU's when have_lsu, whose lsu_val is what
 * a load returned) and the return value says whether it is known. */
bool ft_regs_step(struct ft_regs *r, struct sonde_sym *sym, const struct vm_insn *d, uint32_t pc,
                  bool have_lsu, uint32_t lsu_addr, uint32_t lsu_val, uint32_t *addr);

/* Operand-dependent execute cycles of a long multiply or divide beyond the
 * table's minimum (the VM's rule, timing.h), from the register values before
 * it; 0 for other instructions, -1 when an operand is unknown. */
int ft_regs_extra(const struct ft_regs *r, const struct vm_insn *d);

#endif
