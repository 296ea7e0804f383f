/* The CPU core of the virtual Cortex-M: architectural state and the calls the
 * rest of the VM makes into it. Decode/execute and the cycle model live in
 * their own files (see docs/vm.md). */
#ifndef SONDE_VM_CPU_H
#define SONDE_VM_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "decode.h"

struct sonde_vm;

#define VM_EXEC_NONE 0xFFFFFFFFu /* cpu.exec_pc before any instruction (odd: no Thumb address) */

/* Per-core cycle parameters (timing.c, docs/vm.md "CPU and cycle model"). */
struct vm_timing {
  uint8_t refill;      /* P: pipeline refill after a taken branch (zero wait states) */
  uint8_t mul, mla;    /* MUL; MLA/MLS */
  uint8_t sysreg;      /* MRS/MSR */
  uint8_t barrier;     /* DSB/DMB */
  bool ls_pipeline;    /* neighbouring single loads/stores pipeline (M3/M4/M33) */
  bool long_mul_fast;  /* UMULL & co. in one cycle (M4, M33); else early termination (M3) */
  uint8_t bl_extra;    /* extra cycle of BL (Cortex-M0+: 3 cycles) */
  int core;            /* 1 + enum sonde_vm_core the parameters are for; 0: not set up */
};

/* Decode cache: direct-mapped by halfword address (exec.c). */
#define VM_ICACHE_SIZE 32768u
struct vm_icache_entry {
  uint32_t tag;  /* pc | 1, 0 = empty */
  uint8_t fast;  /* handler of the fast executor (fast.h, enum vm_fast); 0 = exec_insn */
  uint8_t nth;   /* in a block (below): how many of the block's instructions precede it */
  uint16_t taken_cycles; /* B, B<c>, BL, CBZ, CBNZ: cycles when taken (refill included) */
  int32_t soff;  /* loads/stores: the immediate offset with its sign (VM_F_U);
                  * B, B<c>, BL, CBZ, CBNZ: the target */
  struct vm_insn insn;
};                /* 32 bytes: the index is a shift */
_Static_assert(sizeof(struct vm_icache_entry) == 32, "decode cache entry size");

/* Block cache of the block executor (block.c): straight-line runs of
 * fast-path instructions, each a copy of its decode-cache entries with `tag`
 * the instruction's address (not | 1) and `nth` set, closed by the entry of
 * the instruction after the block unless the block ends with a branch. */
#define VM_BLOCK_MAP 8192u   /* blocks, direct-mapped by start address */
#define VM_BLOCK_LEN 32u     /* instructions in a block at most */
#define VM_BLOCK_OPS 65536u  /* entries of all blocks; when full, all are dropped */
struct vm_block_op {
  struct vm_icache_entry d; /* first: the executor points at it */
  const void *handler;      /* the block executor's label for d.fast */
  /* A taken direct branch's target block once the executor has gone there
   * (entries stay where they are until all are dropped), else NULL. */
  const struct vm_block_op *link;
  /* In a block's first entry: the latest the block's last instruction may
   * start, in cycles after its first (wait states included); it runs whole
   * only when cy + bound < ev. Its last instruction may end at or after the
   * event: every exit towards the event stores its address (cpu.exec_pc). */
  uint32_t bound;
  /* In a block's first entry: its compiled code (jit.h), else NULL, and
   * the variant for when the next event may fall inside it. */
  const void *jit, *jit_checked;
};
struct vm_block {
  uint32_t tag;                 /* start address | 1, 0 = empty */
  const struct vm_block_op *op; /* its first entry, in vm_blocks.op */
};
struct vm_blocks {
  struct vm_block map[VM_BLOCK_MAP];
  uint32_t used;       /* entries of op in use */
  uint32_t lo, hi;     /* the code the blocks were built from: [lo, hi) */
  struct vm_jit *jit;  /* the blocks' compiled code (jit.h); NULL: interpreted */
  struct vm_block_op op[VM_BLOCK_OPS];
};

/* Architectural state, ARMv7-M ARM B1.4. */
struct vm_cpu {
  uint32_t r[16];        /* r[13] is the active SP; r[15] the current instruction's address */
  uint32_t sp_inactive;  /* the banked SP not selected now (PSP or MSP) */
  uint32_t apsr;         /* N Z C V Q (31..27) and GE (19..16), xPSR layout */
  uint32_t ipsr;         /* exception number, 0 in Thread mode */
  uint32_t epsr;         /* T bit (24) and ICI/IT bits (26..25, 15..10), xPSR layout */
  uint32_t primask, faultmask, basepri, control;
  uint32_t s[32];        /* FP registers s0..s31 (d0..d15 alias pairs) */
  uint32_t fpscr;
  uint64_t cycles;       /* core clock cycles since reset */
  uint64_t instret;      /* retired instructions */
  uint32_t entry_return; /* the return address the exception entry being made stacked,
                          * its MTB entry packet's source (exception.c) */
  /* The address of the last instruction that entered Execute (VM_EXEC_NONE:
   * none since power-on), what DWT PC sampling shows in and after it
   * (pc_at.c). Kept wherever an executor may stop at or after an event (the
   * one-at-a-time executors, checked compiled code, exec_insn), never per
   * instruction of a whole block: a block runs whole only when it ends
   * before the next event (block.c). */
  uint32_t exec_pc;
  /* vm_cpu_execute's call of run_block (exec.c), which may serve a PC
   * sample at its event and go on (exec_threaded.h, label `event`) as if
   * it had returned and been called again: run_mtb, whether the call was
   * made with the MTB on (it returns when that changes); `served`: it
   * returned having done the service, `served_stop`: which returned true
   * (stop the run). */
  bool run_mtb, served, served_stop;
  bool sleeping;         /* in WFI/WFE */
  bool locked_up;
  /* --- owned by the CPU files; others use the functions below --- */
  uint8_t itstate;       /* IT[7:0] (mirrored into epsr bits 26:25, 15:10) */
  bool excl_valid;       /* local exclusive monitor open (A3.4) */
  uint32_t excl_addr;
  uint32_t msplim, psplim; /* ARMv8-M stack limits (exec.c, exception.c) */
  bool splim_on;         /* a limit is set: SP-writing instructions take exec_insn */
  bool ls_pipe;          /* previous instruction was a pipelinable load/store */
  uint8_t ls_rt;         /* ... and the register it loaded (0xff none) */
  struct vm_timing t;
  struct vm_icache_entry icache[VM_ICACHE_SIZE];
  struct vm_blocks *blocks; /* NULL until the block executor first runs */
};

/* State access for the exception model and the debugger (cpu.c). */
void vm_cpu_reset(struct sonde_vm *vm);
/* vm_cpu_get_xpsr(): inline, vm_internal.h */
void vm_cpu_set_xpsr(struct sonde_vm *vm, uint32_t xpsr);
/* MSP (process=false) or PSP (true), whichever is active. */
uint32_t vm_cpu_get_sp(const struct sonde_vm *vm, bool process);
void vm_cpu_set_sp(struct sonde_vm *vm, bool process, uint32_t value);
/* Write CONTROL, switching the active SP bank when SPSEL changes. */
void vm_cpu_set_control(struct sonde_vm *vm, uint32_t control);
/* Continue execution at `addr` (bit 0 is the Thumb bit; cleared = INVSTATE on
 * the next instruction, as the architecture says). */
void vm_cpu_branch(struct sonde_vm *vm, uint32_t addr);

/* The core's part of exception entry and return: cpu_exc.h (inline). */
/* Clear the local exclusive monitor (exception entry and return, A3.4.4). */
void vm_cpu_clear_exclusive(struct sonde_vm *vm);
/* Change IPSR (exception entry/return), switching the active SP bank when the
 * mode changes: Handler mode always uses MSP, Thread mode CONTROL.SPSEL. */
void vm_cpu_set_ipsr(struct sonde_vm *vm, uint32_t ipsr);
/* Drop every cached decode (loader writes after the VM ran, reset). */
void vm_cpu_flush_decode_cache(struct sonde_vm *vm);
/* The decode-cache entry of the instruction at pc, filled if needed (exec.c);
 * NULL when it cannot be fetched. */
const struct vm_icache_entry *vm_cpu_decoded(struct sonde_vm *vm, uint32_t pc);

/* The block cache (block.c). vm_blocks_get allocates it on first use (NULL:
 * out of memory); vm_block_build builds the block at pc, whose first entry
 * may be a slow instruction's (then the block is just that), with each
 * entry's handler address from the executor's table (indexed by enum
 * vm_fast), so that an instruction dispatches the next in one jump. */
struct vm_blocks *vm_blocks_get(struct sonde_vm *vm);
const struct vm_block *vm_block_build(struct sonde_vm *vm, uint32_t pc,
                                      const void *const *handler);
void vm_blocks_flush(struct sonde_vm *vm);
void vm_blocks_code_written(struct sonde_vm *vm, uint32_t addr, unsigned size);
void vm_blocks_free(struct sonde_vm *vm);

/* Run until vm->attention asks to stop or vm_sys_service() says so. Returns 0
 * or a negative SONDE_E_* for a host-side error. */
int vm_cpu_execute(struct sonde_vm *vm);
/* Execute exactly one instruction (after servicing attention). */
int vm_cpu_step(struct sonde_vm *vm);
/* Memory at [addr, addr+size) was written: drop cached decodes of it. vm may be
 * NULL when the loader writes before the VM runs. */
void vm_cpu_code_written(struct sonde_vm *vm, uint32_t addr, unsigned size);

#endif
