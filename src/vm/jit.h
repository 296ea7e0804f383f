/* The block compiler of the virtual Cortex-M: host code for the blocks of
 * the block executor (block.c, exec_threaded.h with FAST_BLOCK).
 *
 * A compiled block does exactly what the block executor's handlers do for
 * its entries, cycle for cycle: the same registers, flags, memory and cycle
 * count, in the same order. Whenever an instruction would leave the fast
 * handlers' case (an unaligned address, memory that is not plain, an
 * EXC_RETURN or interworking branch target, an instruction the compiler
 * does not cover) the compiled code stops before it, with nothing of it
 * done, and the block executor goes on from that entry with its own
 * handler, which takes it to exec_insn if it must. So the compiler never
 * decides an architectural corner case; it only runs the common ones faster.
 *
 * Taken branches go from compiled block to compiled block without leaving
 * the host code when the target block's bound allows (the same check as
 * the block executor's), so a hot loop runs in host code until the next
 * event is near. Compiled code lives as long as the blocks it was made
 * from: vm_blocks_flush drops both.
 *
 * x86-64 hosts only (jit_x64.c); elsewhere vm_jit_new returns NULL and the
 * block executor interprets. SONDE_JIT=0 in the environment, or
 * sonde_vm_set_jit(vm, false), turns it off. */
#ifndef SONDE_VM_JIT_H
#define SONDE_VM_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "bus.h"
#include "cpu.h"
#include "fast.h"

struct sonde_vm;
struct vm_jit;

/* What compiled code and the block executor hand each other. On entry: the
 * block executor's locals (cy, ir: the instructions before the block, fl,
 * the load/store pipelining state lsp/lsrt) and ev, the next event. */
struct vm_jit_state {
  uint64_t cy, ev, ir;
  struct vm_lflags fl;
  /* VM_JIT_RESUME: the entry to go on from with the block executor's
   * handler (state as before it); VM_JIT_ENTER: the direct branch to link
   * to the block at pc, or NULL. */
  const struct vm_block_op *op;
  uint32_t pc; /* VM_JIT_ENTER: where execution goes on */
  uint8_t lsp, lsrt;
  /* The checked variant's exits store here the address of the last
   * instruction it ran (cpu.exec_pc); other code leaves it as it came. */
  uint32_t exec_pc;
  /* A machine with a memory system (exec_tm.c): the first data access of
   * the instruction being retired, for the timing model (address, value) */
  uint32_t tm_addr, tm_val;
};

enum vm_jit_exit {
  VM_JIT_RESUME = 0, /* go on at state.op with the block executor */
  VM_JIT_ENTER = 1,  /* a branch retired: go on at state.pc (label enter) */
  VM_JIT_PLAIN = 2,  /* go on at state.op one instruction at a time (run_plain) */
  VM_JIT_SYNCED = 3, /* vm_jit_slow ran an instruction: the state is the cpu's (LOAD) */
  VM_JIT_SERVED = 4, /* vm_jit_serve did the service: the block executor returns */
};

/* A code buffer for the blocks of a block cache (whose map indirect
 * branches look their targets up in), or NULL: no JIT on this host,
 * SONDE_JIT=0, or no memory. */
struct vm_jit *vm_jit_new(const struct vm_block *map);
void vm_jit_free(struct vm_jit *j);
/* Drop all compiled code (with the blocks). */
void vm_jit_flush(struct vm_jit *j);
/* Whether the buffer may not hold another block: flush before building. */
bool vm_jit_full(const struct vm_jit *j);
/* Compile the block whose first entry is `first` (entries up to its closing
 * one, as block.c leaves them); NULL when its first instruction is not
 * covered or the buffer is full. For a machine with a memory system
 * (vm->tm) the code charges each instruction the timing model's cycles as
 * run_block_tm's handlers do (vm_exec_tm_charge_jit, exec_tm.c) and checks
 * the event after each one, leaving towards it (VM_JIT_PLAIN, or
 * VM_JIT_ENTER after a branch) as run_block_tm leaves: such a block has
 * bound 0 and no checked variant. `checked`: the variant for a block the
 * next event may fall inside (its bound fails), which stops before the
 * first instruction that would start at or after the event, as the
 * one-at-a-time executor does, and leaves every case it does not cover to
 * that executor (VM_JIT_PLAIN) instead of the block executor. */
const void *vm_jit_compile(struct sonde_vm *vm, struct vm_jit *j, const struct vm_block_op *first,
                           bool checked);
/* The checked variant's stop at the event before op (exec.c): with the
 * state as its exit leaves it (s->cy, s->ir, s->exec_pc), serve the event
 * there when it is one periodic PC sample, as the block executor does at
 * its label `event`, and return the next event to go on with op; 0: the
 * code exits as it would have (the block executor then returns at once
 * when cpu.served says the service is done). */
uint64_t vm_jit_event(struct sonde_vm *vm, struct vm_jit_state *s, const struct vm_block_op *op);
/* The block executor's handler for op where compiled code would stop
 * before it to leave it to exec_insn (a load or store of memory that is not
 * plain, an EXC_RETURN): run here, from the compiled code, as run_block's
 * label `slow` and EXC_RETURN_RETIRE do it (exec_threaded.h), with s as
 * the exit before op leaves it (s->cy, s->ir, s->fl, s->lsp/lsrt,
 * s->exec_pc). 0: nothing done (the event is due, or a case it leaves to
 * the block executor): exit to resume at op. 1: done, and compiled code
 * may go on at s->pc with s->cy, s->ir, s->ev, s->fl, s->lsp/lsrt and
 * s->exec_pc as run_block's LOAD would have them (as the block executor
 * would go on: check_mode, then `enter`). VM_JIT_SYNCED: done, but the
 * block executor goes on (an IT block, the event, attention). */
int vm_jit_slow(struct sonde_vm *vm, struct vm_jit_state *s, const struct vm_block_op *op);
/* A single load or store op (LDR/STR forms, fast.h) that compiled code's
 * page check sent to vm_jit_slow, done here at once when a device the bus
 * met before answers it (bus.h, vm_bus_device_seen), exactly as exec_insn
 * does it: the same state where a device may read it, the same cycles, a
 * refused access's BusFault. s as for vm_jit_slow, with s->ev the event
 * compiled code checks against (r13). 0: nothing done (on to vm_jit_slow).
 * VM_JIT_DEV_ON: done, and compiled code goes on after op in its block with
 * s->cy (the cycle after op) and s->ev (the event, no sooner than before).
 * Else done, and as vm_jit_slow returns (1, VM_JIT_SYNCED): the access
 * moved the event sooner, asked for attention or dropped the blocks. */
#define VM_JIT_DEV_ON 8
int vm_jit_dev(struct sonde_vm *vm, struct vm_jit_state *s, const struct vm_block_op *op);
/* The checked variant's stop at the event before op, after vm_jit_event
 * left it (no periodic PC sample, or none alone): what run_block does from
 * that exit (VM_JIT_PLAIN) to its label `event` and the service there
 * (an exception to take, a timer), here. 0: nothing done (not due, or
 * served already): exit as before. 1: on in compiled code at s->pc as for
 * vm_jit_slow; VM_JIT_SYNCED as there; VM_JIT_SERVED: the block executor
 * returns (the service stopped the run, or vm_cpu_execute goes on). */
int vm_jit_serve(struct sonde_vm *vm, struct vm_jit_state *s, const struct vm_block_op *op);
/* Run compiled code until it exits; returns enum vm_jit_exit. */
int vm_jit_run(const struct vm_jit *j, struct vm_jit_state *s, struct vm_cpu *c,
               const struct vm_page *pages, const void *code);

#endif
