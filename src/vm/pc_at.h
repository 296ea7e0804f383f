/* The PC at a cycle (here, inline; sonde_vm_pc_at_cycle in pc_at.c): what DWT PC sampling shows for a cycle, from
 * the VM's state. One rule for periodic and CYCMATCH samples, DWT_PCSR reads
 * by a debugger and sonde_vm_pc_at_cycle() (include/sonde/trace.h,
 * sonde_pcsample_of; docs/vm.md "Which PC a sample carries"). */
#ifndef SONDE_VM_PC_AT_H
#define SONDE_VM_PC_AT_H

#include <stdbool.h>
#include <stdint.h>

#include "sonde/trace.h"
#include "vm_internal.h"

/* (inline: the DWT takes a sample every few hundred cycles; the rule,
 * pc_at.c's header, lives here once) */
static inline bool vm_pc_in_sleep(const struct sonde_vm *vm, uint64_t t)
{
  const struct vm_sys *s = &vm->sys;
  return s->sleep_from != UINT64_MAX && t >= s->sleep_from &&
         t - s->sleep_from < s->sleep_cycles - s->sleep_base;
}

/* The sample at a cycle t between the instruction at prev_pc (have_prev:
 * there was one) and the next one, which has not started by t: the sleep
 * form inside the latest sleep span, else prev_pc (an exception entry,
 * return or tail-chain shows the last instruction that entered Execute). */
static inline void vm_pc_in_gap(const struct sonde_vm *vm, uint64_t t, bool have_prev,
                                uint32_t prev_pc, struct sonde_pcsample *out)
{
  const enum sonde_pcsample_kind kind =
      vm_pc_in_sleep(vm, t) ? SONDE_PCSAMPLE_SLEEP
                            : have_prev ? SONDE_PCSAMPLE_PC : SONDE_PCSAMPLE_NONE;
  out->cycle = t;
  out->kind = kind;
  out->pc = kind == SONDE_PCSAMPLE_PC ? prev_pc : 0;
}

/* The sample at cycle t from the state: the last instruction that entered
 * Execute (cpu.exec_pc) and the latest sleep span. The caller knows that
 * this instruction started at or before t (the VM stopped at the first
 * boundary at or after an event at t, or t >= vm->pc_floor). False when
 * the VM has not passed t yet: what occupies t is not decided. */
static inline bool vm_pc_at(const struct sonde_vm *vm, uint64_t t, struct sonde_pcsample *out)
{
  const struct vm_cpu *c = &vm->cpu;
  if (t >= c->cycles)
    return false;
  /* t lies in the last instruction's cycles or in the gap after it (the
   * gap's sleep first, then exception entry, return, tail-chain) */
  vm_pc_in_gap(vm, t, c->exec_pc != VM_EXEC_NONE, c->exec_pc, out);
  return true;
}

#endif
