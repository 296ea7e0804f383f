/* The whole virtual Cortex-M: the handle behind `struct sonde_vm` and the
 * conventions every part of src/vm follows.
 *
 * Parts and owners (one file, one job):
 *   bus.c/.h          memory map, wait states, devices, bit-band
 *   cpu.h, cpu*.c, decode*.c, exec*.c, timing*   the core: state, decode,
 *                     execute, cycle model, block cache, run loop
 *   exec_dsp.c, exec_fp.c  DSP/SIMD/saturating and FPv4/FPv5 instructions
 *   sys.h, exception.c, nvic.c, scb.c, systick.c  exception model
 *   machine.c         machine descriptions (built-ins and the text format)
 *   periph_*.c        demo peripherals (UART, GPIO, timer, delay)
 *   semihost.c        ARM semihosting
 *   loader.c          ELF and raw images
 *   vm.c              the public API of include/sonde/vm.h
 *
 * Control flow: sonde_vm_run() sets the limits and calls vm_cpu_execute(),
 * which runs instructions until, at an instruction boundary, `attention` is
 * non-zero or cycles >= event_cycle; then it calls vm_sys_service(), which
 * advances timers, takes exceptions and decides whether to stop. */
#ifndef SONDE_VM_INTERNAL_H
#define SONDE_VM_INTERNAL_H

#include "sonde/vm.h"

#include "bus.h"
#include "cpu.h"
#include "dbg.h"
#include "dbg_halt.h"
#include "dbg_rom.h"
#include "mtb.h"
#include "power.h"
#include "sys.h"
#include "tm.h"
#include "tm_memo.h"

/* Reasons for the CPU to leave its fast loop at the next instruction boundary. */
enum vm_attention {
  VM_ATTN_EXCEPTION = 1u << 0, /* an exception is pending and may be taken */
  VM_ATTN_STOP = 1u << 1,      /* return from vm_cpu_execute (vm->stop is set) */
  VM_ATTN_DEBUG = 1u << 2,     /* a debug request (halt, step) */
};

struct sonde_vm {
  struct vm_cpu cpu; /* hot: first */
  uint32_t attention;   /* VM_ATTN_* */
  uint64_t event_cycle; /* earliest cycle something else needs service */
  uint64_t max_cycles;  /* limit of the current sonde_vm_run() */
  /* The last instruction that entered Execute (cpu.exec_pc) started at or
   * before this cycle (sonde_vm_pc_at_cycle looks back no further; vm.c). */
  uint64_t pc_floor;
  /* sonde_vm_pc_at_cycle() saw the program end (exit, lockup): later calls
   * report that stop instead of running past the end (pc_at.c). */
  bool pc_at_ended;
  struct sonde_vm_stop pc_at_end;
  bool hooked;          /* any observation hook is set: use the traced path */
  bool jit_off;         /* the block executor interprets (sonde_vm_set_jit) */
  uint64_t jit_blocks;  /* blocks compiled so far (sonde_vm_stats.compiled_blocks) */
  struct sonde_vm_hooks hooks;

  struct vm_bus bus;
  struct vm_sys sys;
  const struct sonde_machine *machine;
  enum sonde_vm_core core;
  /* Feature gates, decided once from the core (one place: vm_features_init). */
  bool has_v7m;   /* ARMv7-M: Thumb-2 beyond ARMv6-M's subset */
  bool has_dsp;   /* ARMv7E-M DSP extension */
  bool has_fpu;   /* single-precision FP */
  bool has_v8m;   /* ARMv8-M Mainline additions */
  /* What the exception path derives from the gates, set with them (read
   * once per exception entry and return instead of the tests; exception.c
   * checks them in Debug builds): the APSR bits that exist (GE with DSP),
   * EXC_RETURN of a basic frame to Handler mode (ARMv8-M's PREFIX | DCRS
   * form, ARMv7-M's F1), and the entry's and return's own cycles. */
  uint32_t apsr_mask;
  uint32_t exc_return_basic;
  uint8_t exc_entry_cycles, exc_exit_cycles;

  struct sonde_vm_stop stop; /* why execution stopped (valid once VM_ATTN_STOP) */
  bool reset_done;           /* a reset happened since sonde_vm_new */
  bool stop_at_reset;        /* sonde_vm_set_stop_at_reset: stop after a system reset */
  uint64_t start_host_ns;    /* for semihosting SYS_ELAPSED/SYS_CLOCK */

  sonde_vm_write_fn out_write;
  void *out_ctx;
  struct sonde_diag diag;

  void *periph[8];           /* peripheral instances (periph_*.c) */
  struct vm_dbgh *dbgh;      /* halting debug, DebugMonitor, FPB (dbg_halt.h) */
  struct vm_dbg *dbg;        /* DWT, ITM, TPIU, SWO (dbg.h); NULL on ARMv6-M */
  bool dbg_observe;          /* the debug blocks need the hooked path (dbg.h) */
  struct vm_rom *rom;        /* the ROM table (dbg_rom.c) */
  struct vm_mtb *mtb;        /* Micro Trace Buffer (mtb.h); NULL without one */
  bool mtb_observe;          /* MTB enabled: the executors feed it (dbg_mtb.c) */
  bool mtb_hooked;           /* ... and needs every instruction (TSTART/TSTOP armed) */
  /* Who observes exceptions (VM_EXC_OBS_*, 0: nobody), kept by
   * vm_update_hooked(): exception.c tests this one byte at each entry and
   * return instead of the hook, the DWT's DEMCR.TRCENA and the MTB. */
  uint8_t exc_observe;
  unsigned nperiph;
  struct vm_power power;     /* power model (power.c) */
  /* The timing model of a machine that declares a memory system (tm.h,
   * exec_tm.c); NULL: the executors' table timing. */
  struct vm_tm *tm;
};

/* exec_tm.c: the model for vm->machine (when it declares one), its reset,
 * and what exec_insn charges an instruction with it (its table cycles in
 * table_cycles, the first data access's address and stored value). */
int vm_exec_tm_create(struct sonde_vm *vm);
void vm_exec_tm_free(struct sonde_vm *vm);
void vm_exec_tm_reset(struct sonde_vm *vm);
uint32_t vm_exec_tm_charge(struct sonde_vm *vm, const struct vm_insn *in, uint32_t pc,
                           uint32_t next, bool executed, uint32_t table_cycles, unsigned naccess,
                           uint32_t addr, uint32_t wdata);
/* vm_exec_tm_charge() for the block executor's fast handlers
 * (exec_threaded.h, FAST_TM): an instruction that executed, with no
 * operand-dependent cycles. The memo's answer (tm_memo.h) inline, as it
 * runs for nearly every instruction of such a machine; the rest in
 * vm_exec_tm_charge_step (exec_tm.c). */
uint32_t vm_exec_tm_charge_step(struct sonde_vm *vm, const struct vm_insn *in, uint32_t pc,
                                uint32_t next, unsigned naccess, uint32_t addr, uint32_t wdata);
static inline uint32_t vm_exec_tm_charge_fast(struct sonde_vm *vm, const struct vm_insn *in,
                                              uint32_t pc, uint32_t next, unsigned naccess,
                                              uint32_t addr, uint32_t wdata)
{
  struct vm_tm *tm = vm->tm;
  if (VM_LIKELY(pc == tm->dpc && next < 0xF0000000u)) {
    const int memo = vm_tm_memo_replay(tm, pc, next, true, 0, addr);
    if (VM_LIKELY(memo >= 0))
      return (uint32_t)memo;
  }
  return vm_exec_tm_charge_step(vm, in, pc, next, naccess, addr, wdata);
}

/* vm_exec_tm_charge_fast() for compiled code (jit_x64.c): the block entry
 * d (its address, instruction and handler kind) retired to next, with its
 * first data access (addr, the stored value wdata); executed 0: an
 * instruction of an IT block that failed its condition, charged as
 * exec_insn charges it. */
uint32_t vm_exec_tm_charge_jit(struct sonde_vm *vm, const struct vm_icache_entry *d,
                               uint32_t next, uint32_t addr, uint32_t wdata, uint32_t executed);

/* The xPSR composed from the core's fields (cpu.c); inline, as exception
 * entry stacks it once per exception (exception.c). */
static inline uint32_t vm_cpu_get_xpsr(const struct sonde_vm *vm)
{
  const struct vm_cpu *c = &vm->cpu;
  uint32_t it = c->itstate;
  return (c->apsr & 0xf80f0000u) | (c->ipsr & 0x1ffu) | (c->epsr & (1u << 24)) |
         ((it & 3u) << 25) | ((it >> 2) << 10);
}

/* Request a stop at the next instruction boundary. */
static inline void vm_request_stop(struct sonde_vm *vm, enum sonde_vm_stop_reason reason)
{
  vm->stop.reason = reason;
  vm->stop.pc = vm->cpu.r[15];
  vm->attention |= VM_ATTN_STOP;
}

/* vm->exc_observe: the user's exception hook or the DWT's exception trace
 * (DEMCR.TRCENA; any code may run, a DebugMonitor may pend), and the MTB
 * (writes its buffer, may ask for a stop). */
#define VM_EXC_OBS_HOOKS 1u
#define VM_EXC_OBS_MTB 2u
static inline uint8_t vm_exc_observers(const struct sonde_vm *vm)
{
  const bool hooks = vm->hooks.exception || (vm->dbg && (vm->dbg->demcr & VM_DEMCR_TRCENA));
  return (uint8_t)((hooks ? VM_EXC_OBS_HOOKS : 0) | (vm->mtb_observe ? VM_EXC_OBS_MTB : 0));
}

/* Recompute vm->hooked (the executor that reports every instruction) after an
 * observer changed. An executor that now reports too little leaves at the next
 * boundary (exec.c, vm_cpu_execute picks again); one that reports too much
 * (hooked, or the MTB's) stays correct and leaves at its next exit. */
static inline void vm_update_hooked(struct sonde_vm *vm, bool mtb_was)
{
  bool was = vm->hooked;
  vm->hooked = vm->hooks.retire || vm->hooks.transfer || vm->hooks.exception ||
               vm->dbg_observe || vm->mtb_hooked;
  vm->exc_observe = vm_exc_observers(vm);
  if ((vm->hooked && !was) || (vm->mtb_observe && !mtb_was))
    vm->event_cycle = 0;
}

/* vm_mtb_retire() (mtb.h) of an instruction that wrote EXC_RETURN `v` to
 * the PC (vm->cpu.r[15] = v) while vm->mtb_observe: the first of the
 * return's two packets (dbg_mtb.c) inline while it is nothing but the
 * store and the advance and no start/stop source is watched. */
static inline void vm_mtb_retire_exc_return(struct sonde_vm *vm, uint32_t pc, unsigned size,
                                            uint32_t v)
{
  struct vm_mtb *m = vm->mtb;
  if (VM_LIKELY(!vm->mtb_hooked) && vm_mtb_packet_fast(m, pc, 0, v)) {
    m->exc_return = v;
    return;
  }
  vm_mtb_retire_slow(vm, pc, size);
}

/* Write target output (semihosting, UART) through the user's callback. */
int vm_output(struct sonde_vm *vm, int stream, const void *data, size_t len);

#endif
