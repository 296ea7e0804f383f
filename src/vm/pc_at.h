/* The PC at a cycle (pc_at.c): what DWT PC sampling shows for a cycle, from
 * the VM's state. One rule for periodic and CYCMATCH samples, DWT_PCSR reads
 * by a debugger and sonde_vm_pc_at_cycle() (include/sonde/trace.h,
 * sonde_pcsample_of; docs/vm.md "Which PC a sample carries"). */
#ifndef SONDE_VM_PC_AT_H
#define SONDE_VM_PC_AT_H

#include <stdbool.h>
#include <stdint.h>

#include "sonde/trace.h"

struct sonde_vm;

/* The sample at cycle t from the state: the last instruction that entered
 * Execute (cpu.exec_pc) and the latest sleep span. The caller knows that
 * this instruction started at or before t (the VM stopped at the first
 * boundary at or after an event at t, or t >= vm->pc_floor). False when
 * the VM has not passed t yet: what occupies t is not decided. */
bool vm_pc_at(const struct sonde_vm *vm, uint64_t t, struct sonde_pcsample *out);
/* The sample at a cycle t between the instruction at prev_pc (have_prev:
 * there was one) and the next one, which has not started by t: the sleep
 * form inside the latest sleep span, else prev_pc (an exception entry,
 * return or tail-chain shows the last instruction that entered Execute). */
void vm_pc_in_gap(const struct sonde_vm *vm, uint64_t t, bool have_prev, uint32_t prev_pc,
                  struct sonde_pcsample *out);

#endif
