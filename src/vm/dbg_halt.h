/* Halting debug, the debug monitor and the Flash Patch and Breakpoint unit
 * of the virtual Cortex-M (dbg_halt.c, dbg_fpb.c). ARMv7-M ARM C1.2-C1.6
 * (debug events, halting debug, DebugMonitor, DHCSR/DCRSR/DCRDR/DEMCR, DFSR),
 * C1.11 (FPB); ARMv8-M ARM B12/D1 for the FPB version 2 layout (M33).
 *
 * DHCSR/DCRSR/DCRDR/DEMCR reads are served here; DEMCR writes are also passed
 * to the SCS ops the trace blocks installed before (struct vm_dbgh.next_ops). */
#ifndef SONDE_VM_DBG_HALT_H
#define SONDE_VM_DBG_HALT_H

#include <stdbool.h>
#include <stdint.h>

#include "sonde/vm.h"

#define VM_DBG_MAX_FPB 8
#define VM_DBG_MAX_HOST_BP 64

/* DHCSR bits (C1.6.2). */
#define DHCSR_C_DEBUGEN (1u << 0)
#define DHCSR_C_HALT (1u << 1)
#define DHCSR_C_STEP (1u << 2)
#define DHCSR_C_MASKINTS (1u << 3)
#define DHCSR_S_REGRDY (1u << 16)
#define DHCSR_S_HALT (1u << 17)
#define DHCSR_S_SLEEP (1u << 18)
#define DHCSR_S_LOCKUP (1u << 19)
#define DHCSR_S_RETIRE_ST (1u << 24)
#define DHCSR_S_RESET_ST (1u << 25)
/* DEMCR bits (C1.6.5). */
#define DEMCR_VC_CORERESET (1u << 0)
#define DEMCR_VC_MMERR (1u << 4)
#define DEMCR_VC_NOCPERR (1u << 5)
#define DEMCR_VC_CHKERR (1u << 6)
#define DEMCR_VC_STATERR (1u << 7)
#define DEMCR_VC_BUSERR (1u << 8)
#define DEMCR_VC_INTERR (1u << 9)
#define DEMCR_VC_HARDERR (1u << 10)
#define DEMCR_MON_EN (1u << 16)
#define DEMCR_MON_PEND (1u << 17)
#define DEMCR_MON_STEP (1u << 18)
#define DEMCR_MON_REQ (1u << 19)
#define DEMCR_TRCENA (1u << 24)
/* DFSR bits (C1.6.1 / B3.2.15). */
#define DFSR_HALTED (1u << 0)
#define DFSR_BKPT (1u << 1)
#define DFSR_DWTTRAP (1u << 2)
#define DFSR_VCATCH (1u << 3)
#define DFSR_EXTERNAL (1u << 4)

struct vm_dbgh {
  uint32_t dhcsr;        /* control bits C_* (S_* are computed on read) */
  uint32_t demcr;
  uint32_t dcrdr;
  bool halted;           /* stopped by a debug event or halt request (S_HALT) */
  bool stepping;         /* C_STEP: one instruction, then halt */
  bool mon_stepping;     /* MON_STEP: one instruction, then DebugMonitor */
  uint64_t step_instret; /* instret when the step began */
  uint64_t taken0;       /* exceptions_taken at the start of the service */
  bool resetting;        /* a system reset is taken in this service call */
  bool reset_st;         /* S_RESET_ST: a reset since the debugger last read DHCSR */
  uint64_t retire_mark;  /* instret at that read (S_RETIRE_ST) */
  /* FPB (dbg_fpb.c) */
  bool fp_enable;
  bool fp_v2;            /* ARMv8-M FPB (BPADDR[31:1] | BE) */
  unsigned fp_ncode;     /* instruction comparators */
  unsigned fp_nlit;      /* literal comparators (remap: not implemented) */
  uint32_t fp_comp[VM_DBG_MAX_FPB];
  /* Breakpoints of the host (GDB Z0): invisible to the target. */
  uint32_t host_bp[VM_DBG_MAX_HOST_BP];
  unsigned nhost_bp;
  unsigned nbp;          /* enabled breakpoints of either kind (0: no decode check) */
  /* SCS debug registers installed before us (the trace blocks, dbg.h): every
   * DEMCR write and the 0xFB0.. range are forwarded there, so TRCENA reaches
   * the DWT/ITM while DEMCR has one value (ours). */
  const struct vm_device_ops *next_ops;
  void *next_ctx;
};

/* Create the debug state and map the FPB; called once by sonde_vm_new. */
int vm_dbgh_init(struct sonde_vm *vm);
void vm_dbgh_free(struct sonde_vm *vm);
/* DEMCR.TRCENA: the DWT and ITM are enabled. */
bool vm_dbgh_trcena(const struct sonde_vm *vm);
/* DHCSR.C_DEBUGEN && C_MASKINTS: PendSV, SysTick and IRQs are not taken. */
bool vm_dbgh_maskints(const struct sonde_vm *vm);
/* A breakpoint debug event at vm->cpu.r[15] (BKPT instruction or FPB/host
 * breakpoint match). Halts, pends DebugMonitor or escalates to HardFault.
 * Always returns false: the instruction does not execute. */
bool vm_dbgh_breakpoint(struct sonde_vm *vm);
/* A DWT watchpoint debug event (the DWT calls this; DFSR.DWTTRAP). */
void vm_dbgh_watchpoint(struct sonde_vm *vm);
/* Service hooks at the start (pre) and end of vm_sys_service(); return true
 * when execution must stop. */
bool vm_dbgh_service(struct sonde_vm *vm, bool pre);
/* Decode-cache patch: true when `pc` has an enabled breakpoint. */
bool vm_dbgh_bp_match(const struct sonde_vm *vm, uint32_t pc);
/* Recount breakpoints and drop cached decodes (after any change). */
void vm_dbgh_bp_changed(struct sonde_vm *vm);

/* Host-side (debugger) operations used by the GDB server. */
int vm_dbgh_host_bp(struct sonde_vm *vm, uint32_t addr, bool insert);
/* Program a free FPB comparator (insert) or clear the one at addr; enables the
 * FPB as a debugger does. SONDE_E_FULL-like SONDE_E_RANGE when none is free. */
int vm_dbgh_fpb_bp(struct sonde_vm *vm, uint32_t addr, bool insert);
/* Step one instruction with C_MASKINTS semantics when `maskints`. */
int vm_dbgh_step(struct sonde_vm *vm, bool maskints, struct sonde_vm_stop *stop);
/* Mark the core as halted by the debugger (S_HALT) or running again. */
void vm_dbgh_set_halted(struct sonde_vm *vm, bool halted);

/* FPB device (dbg_fpb.c). */
int vm_fpb_init(struct sonde_vm *vm);

#endif
