/* The system side of the virtual Cortex-M: exception model (NVIC, SCB, SysTick,
 * faults, reset), sleep, semihosting — and the calls the CPU makes into it.
 * ARMv7-M ARM B1.5 (exception model), B3.2 (SCS), B3.3 (SysTick), B3.4 (NVIC). */
#ifndef SONDE_VM_SYS_H
#define SONDE_VM_SYS_H

#include <stdbool.h>
#include <stdint.h>

struct sonde_vm;

/* Exception numbers, ARMv7-M ARM B1.5.2. */
enum vm_exc {
  VM_EXC_RESET = 1, VM_EXC_NMI = 2, VM_EXC_HARDFAULT = 3, VM_EXC_MEMMANAGE = 4,
  VM_EXC_BUSFAULT = 5, VM_EXC_USAGEFAULT = 6, VM_EXC_SECUREFAULT = 7, VM_EXC_SVCALL = 11,
  VM_EXC_DEBUGMONITOR = 12, VM_EXC_PENDSV = 14, VM_EXC_SYSTICK = 15, VM_EXC_IRQ0 = 16,
};
#define VM_MAX_IRQS 240
#define VM_MAX_EXC (VM_EXC_IRQ0 + VM_MAX_IRQS)

/* Synchronous faults the CPU reports; each sets its CFSR/HFSR bits. */
enum vm_fault {
  VM_FAULT_UNDEFINSTR,  /* UFSR.UNDEFINSTR */
  VM_FAULT_INVSTATE,    /* UFSR.INVSTATE (T bit clear) */
  VM_FAULT_INVPC,       /* UFSR.INVPC (bad EXC_RETURN) */
  VM_FAULT_NOCP,        /* UFSR.NOCP (FPU disabled in CPACR / no coprocessor) */
  VM_FAULT_UNALIGNED,   /* UFSR.UNALIGNED */
  VM_FAULT_DIVBYZERO,   /* UFSR.DIVBYZERO */
  VM_FAULT_IBUSERR,     /* BFSR.IBUSERR: instruction fetch from bad memory */
  VM_FAULT_PRECISERR,   /* BFSR.PRECISERR + BFARVALID: data access, addr given */
  VM_FAULT_BKPT,        /* BKPT with no debugger: HardFault (HFSR.DEBUGEVT) */
};

/* State of the system side (sys.c and friends). */
struct vm_sys {
  /* NVIC */
  uint32_t nvic_enabled[VM_MAX_EXC / 32 + 1];
  uint32_t nvic_pending[VM_MAX_EXC / 32 + 1];
  uint32_t nvic_active[VM_MAX_EXC / 32 + 1];
  uint8_t priority[VM_MAX_EXC]; /* programmed priority of each exception */
  unsigned num_irqs;
  unsigned prio_bits;           /* implemented priority bits (3 on CC2650, 4 on most) */
  /* SCB */
  uint32_t vtor, aircr, scr, ccr, shcsr, cfsr, hfsr, mmfar, bfar, cpacr, fpccr, fpcar, fpdscr;
  /* SysTick */
  uint32_t syst_csr, syst_rvr;
  uint64_t syst_base_cycle; /* cycle at which the counter last reloaded */
  bool event_register;      /* WFE/SEV event register */
  uint64_t exceptions_taken;
  uint64_t sleep_cycles;
};

/* Reset the system side; on power_on also clear non-retained memory. Loads SP
 * and PC from the vector table (via vm_cpu_*). */
void vm_sys_reset(struct sonde_vm *vm, bool power_on);
/* Called by the CPU at an instruction boundary when vm->attention is set or
 * cycles >= vm->event_cycle: advances timers, takes a pending exception
 * (entry, tail-chain), handles stop requests. Returns true if execution must
 * stop now (vm->stop says why). */
bool vm_sys_service(struct sonde_vm *vm);
/* The CPU wrote the PC with an EXC_RETURN value in Handler mode. */
void vm_exc_return(struct sonde_vm *vm, uint32_t exc_return);
/* A synchronous fault: the current instruction does not complete. */
void vm_fault(struct sonde_vm *vm, enum vm_fault fault, uint32_t addr);
/* SVC instruction executed (PC already points past it). */
void vm_svc(struct sonde_vm *vm);
/* BKPT #imm executed at vm->cpu.r[15]: semihosting for 0xAB. Returns true if
 * the instruction completed (execution continues after it). */
bool vm_bkpt(struct sonde_vm *vm, uint8_t imm);
/* WFI (wfe=false) or WFE: sleep until the next event; time jumps forward. */
void vm_wait(struct sonde_vm *vm, bool wfe);
void vm_sev(struct sonde_vm *vm);
/* PRIMASK/FAULTMASK/BASEPRI changed (MSR, CPS): re-evaluate pending exceptions. */
void vm_exc_mask_changed(struct sonde_vm *vm);
/* Before any FP instruction: CPACR check (NOCP fault -> returns false) and
 * lazy FP state preservation (FPCCR.LSPACT). */
bool vm_fp_prepare(struct sonde_vm *vm);
/* Current execution priority (for BASEPRI_MAX, debug monitor). */
int vm_exc_execution_priority(const struct sonde_vm *vm);

#endif
