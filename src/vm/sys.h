/* The system side of the virtual Cortex-M: exception model (NVIC, SCB, SysTick,
 * faults, reset), sleep, semihosting — and the calls the CPU makes into it.
 * ARMv7-M ARM B1.5 (exception model), B3.2 (SCS), B3.3 (SysTick), B3.4 (NVIC). */
#ifndef SONDE_VM_SYS_H
#define SONDE_VM_SYS_H

#include <stdbool.h>
#include <stdint.h>

struct sonde_vm;
struct vm_device_ops;

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
  VM_FAULT_STKOF,       /* UFSR.STKOF: ARMv8-M stack limit violation */
};

/* A timed event of the system side (SysTick, demo timers): `fire` runs at the
 * first instruction boundary with cycles >= due; it may re-arm itself. */
typedef void (*vm_timer_fn)(struct sonde_vm *vm, void *ctx);
/* Optional: `fire` less the exception it pends, which it returns instead (0:
 * none) without touching the pending bit, so the direct service
 * (exception.c) can take that exception at once. */
typedef unsigned (*vm_timer_direct_fn)(struct sonde_vm *vm, void *ctx);
struct vm_sys_timer {
  uint64_t due; /* UINT64_MAX: off */
  vm_timer_fn fire;
  vm_timer_direct_fn direct; /* NULL: none */
  void *ctx;
};
#define VM_SYS_MAX_TIMERS 12

/* State of the system side (exception.c, nvic.c, scb.c, systick.c). The
 * bitmaps are indexed by exception number (IRQ n is exception 16 + n). */
struct vm_sys {
  /* NVIC */
  uint32_t nvic_enabled[VM_MAX_EXC / 32 + 1];
  uint32_t nvic_pending[VM_MAX_EXC / 32 + 1];
  uint32_t nvic_active[VM_MAX_EXC / 32 + 1];
  uint32_t irq_level[VM_MAX_EXC / 32 + 1]; /* level-sensitive lines held high */
  uint8_t priority[VM_MAX_EXC]; /* programmed priority of each exception */
  unsigned num_irqs;
  unsigned prio_bits;           /* implemented priority bits (3 on CC2650, 4 on most) */
  unsigned nactive;             /* number of active exceptions */
  /* Cache of vm_nvic_highest_pending() (nvic.c), asked about five times per
   * exception taken. Its answer depends on the pending and enabled bits, the
   * priorities, AIRCR.PRIGROUP, SHCSR's fault enables and num_irqs (not on the
   * active bits or the mask registers), so every writer of those either keeps
   * the cache exact (nvic.c, note_pending(): one pending bit) or calls
   * vm_sys_nvic_changed(). Debug builds (no NDEBUG) check every answer. */
  bool hp_valid;
  unsigned hp_exc;
  int hp_prio, hp_group; /* its priority and group priority (1000: none) */
  /* Cache of the highest group priority of the active exceptions (nvic.h,
   * vm_nvic_active_group(); 256: none): kept by vm_nvic_set_active(), dropped
   * by vm_sys_nvic_changed() (priorities, PRIGROUP, a direct write of the
   * active bits). */
  bool act_valid;
  int act_group;
  int group_mask; /* AIRCR.PRIGROUP's group bits of a priority (nvic.h) */
  /* SCB */
  uint32_t reset_vtor; /* VTOR after a reset (the machine's `vtor`; 0 unless ARMv8-M) */
  uint32_t vtor, aircr, scr, ccr, shcsr, cfsr, hfsr, mmfar, bfar, cpacr, fpccr, fpcar, fpdscr;
  uint32_t cpuid, actlr, dfsr, afsr;
  /* SysTick (ARMv7-M ARM B3.3): counter value derived from cycles */
  uint32_t syst_csr, syst_rvr;
  uint64_t syst_base_cycle; /* cycle at which the counter next reaches 0 (enabled) */
  uint32_t syst_cvr;        /* counter value while disabled */
  int syst_timer;           /* index in timers[] */
  bool event_register;      /* WFE/SEV event register */
  bool defer_exc_update;    /* timers fire in a service that ends with vm_exc_update() */
  bool firing;              /* in fire_due(): it sets event_cycle when all have fired */
  uint64_t exceptions_taken;
  uint64_t sleep_cycles;
  /* The latest sleep began at sleep_from (UINT64_MAX: none since power-on)
   * and has lasted sleep_cycles - sleep_base cycles so far (pc_at.c). */
  uint64_t sleep_from, sleep_base;
  /* Timed events. */
  struct vm_sys_timer timers[VM_SYS_MAX_TIMERS];
  unsigned ntimers;
  /* Cache of the timer fire_due() takes next (exception.c): the lowest due,
   * UINT64_MAX if none is armed, and the lowest index with it. Only
   * exception.c writes timers[].due; it keeps the cache exact or clears
   * next_valid, and keeps `armed` (bit i: timers[i].due != UINT64_MAX), so a
   * new scan reads only the armed ones. Debug builds check both. */
  bool next_valid;
  unsigned next_timer;
  uint64_t next_due;
  uint32_t armed;
  /* While next_valid: no armed timer but next_timer is due before next2_due
   * (a lower bound of the others, exact after a scan). The earliest re-armed
   * before it stays the earliest without a scan (SysTick's re-arm in the
   * direct service, vm_sys_timer_rearm). */
  uint64_t next2_due;
  /* Sleep and reset. */
  bool sleep_wfe;            /* sleeping in WFE (else WFI) */
  bool sleep_on_exit;        /* asleep after an exception return (SCR.SLEEPONEXIT) */
  uint32_t sleep_exc_return; /* EXC_RETURN to tail-chain from when woken */
  uint8_t reset_request;     /* VM_RESET_*: AIRCR.SYSRESETREQ/VECTRESET at the next boundary */
  bool stack_fault;          /* a stacking/unstacking bus error is being handled */
  /* Semihosting state. */
  int semi_errno;
  /* Registers at 0xE000EDF0..0xE000EDFF (DHCSR, DCRSR, DCRDR, DEMCR) and other
   * debug registers inside the SCS belong to the debug blocks: when set, SCS
   * accesses there go to these ops with the offset from 0xE000E000. */
  const struct vm_device_ops *debug_ops;
  void *debug_ctx;
  /* DHCSR.C_DEBUGEN && C_MASKINTS, kept current by the debug blocks: PendSV,
   * SysTick and external interrupts are not taken (ARMv7-M ARM C1.6.2). */
  bool maskints;
};

/* The state vm_nvic_highest_pending() or the execution priority reads
 * changed: drop their caches. */
static inline void vm_sys_nvic_changed(struct vm_sys *s)
{
  s->hp_valid = false;
  s->act_valid = false;
}

/* Core-dependent feature gates (features.c): has_v7m, has_dsp, has_fpu, has_v8m. */
void vm_features_init(struct sonde_vm *vm);
/* Set up the system side for the machine (num_irqs, prio_bits, CPUID) and map
 * the System Control Space (0xE000E000..0xE000EFFF) on the bus. */
int vm_sys_init(struct sonde_vm *vm, unsigned num_irqs, unsigned prio_bits);

/* Timed events: add returns an id (or -1 when full); set arms it at absolute
 * cycle `due` (UINT64_MAX disarms) and keeps vm->event_cycle exact. */
int vm_sys_timer_add(struct sonde_vm *vm, vm_timer_fn fire, void *ctx);
/* Give timer `id` its direct function (vm_timer_direct_fn). */
void vm_sys_timer_direct(struct vm_sys *s, int id, vm_timer_direct_fn direct);
void vm_sys_timer_set(struct sonde_vm *vm, int id, uint64_t due);

/* timers[id].due and the `armed` bit. */
static inline void vm_sys_timer_due_set(struct vm_sys *s, unsigned id, uint64_t due)
{
  s->timers[id].due = due;
  if (due != UINT64_MAX)
    s->armed |= 1u << id;
  else
    s->armed &= ~(1u << id);
}

/* vm_sys_timer_set() but for vm->event_cycle: a timer re-arming itself from
 * its `fire` (then fire_due() sets event_cycle once all have fired), inline.
 * The cache stays exact (next2_due a lower bound) unless the earliest moves
 * to or past next2_due: then the next ask scans. */
static inline void vm_sys_timer_rearm(struct vm_sys *s, unsigned id, uint64_t due)
{
  vm_sys_timer_due_set(s, id, due);
  if (s->next_valid) {
    if (due < s->next_due || (due == s->next_due && id < s->next_timer)) {
      if (id != s->next_timer && s->next_due < s->next2_due)
        s->next2_due = s->next_due; /* the old earliest is one of the others now */
      s->next_due = due;
      s->next_timer = id;
    } else if (id != s->next_timer) {
      if (due < s->next2_due)
        s->next2_due = due;
    } else if (due > s->next_due) {
      if (due < s->next2_due)
        s->next_due = due; /* still before all the others */
      else
        s->next_valid = false; /* maybe not the earliest: scan when asked */
    }
  }
}

/* Recompute vm->event_cycle = min(next timer, max_cycles). */
void vm_sys_update_event(struct sonde_vm *vm);

/* Interrupt lines of peripherals (irq = 0..num_irqs-1). A pulse sets the
 * pending bit; a level held high re-pends the interrupt when it is cleared or
 * its handler returns, as the NVIC does for level-sensitive interrupts. */
void vm_irq_pulse(struct sonde_vm *vm, unsigned irq);
void vm_irq_set_level(struct sonde_vm *vm, unsigned irq, bool high);
/* Make exception `exc` pending (NMI, PendSV, SysTick, IRQs). */
void vm_exc_set_pending(struct sonde_vm *vm, unsigned exc);

/* Cycle costs of the exception model (exception.c; documented in docs/vm.md):
 * entry and return of ARMv7-M (Cortex-M3/M4 TRM) and ARMv6-M (Cortex-M0+
 * TRM), kept for the core by vm_features_init (vm->exc_entry_cycles, ...). */
#define VM_EXC_ENTRY_CYCLES_V7 12u
#define VM_EXC_ENTRY_CYCLES_V6 15u
#define VM_EXC_EXIT_CYCLES_V7 10u
#define VM_EXC_EXIT_CYCLES_V6 13u
unsigned vm_exc_entry_cycles(const struct sonde_vm *vm);

/* Reset the system side; on power_on also clear non-retained memory. Loads SP
 * and PC from the vector table (via vm_cpu_*). */
enum { VM_RESET_NONE, VM_RESET_SYSTEM, VM_RESET_LOCAL };
void vm_sys_reset(struct sonde_vm *vm, bool power_on);
/* VECTRESET's local reset: the core, NVIC, SCB and SysTick; peripherals,
 * memory and the debug blocks keep their state. */
void vm_sys_reset_local(struct sonde_vm *vm);
/* Called by the CPU at an instruction boundary when vm->attention is set or
 * cycles >= vm->event_cycle: advances timers, takes a pending exception
 * (entry, tail-chain), handles stop requests. Returns true if execution must
 * stop now (vm->stop says why). */
bool vm_sys_service(struct sonde_vm *vm);
/* vm_sys_service's first step alone, for the block executor at its event
 * (exec_threaded.h): true when the service was one periodic PC sample and
 * is done (vm_sys_service would then return (attention & VM_ATTN_STOP) != 0);
 * false, having changed nothing, in any other case. */
bool vm_sys_service_sample(struct sonde_vm *vm);
/* The CPU wrote the PC with an EXC_RETURN value in Handler mode. */
void vm_exc_return(struct sonde_vm *vm, uint32_t exc_return);
/* A synchronous fault: the current instruction does not complete. */
void vm_fault(struct sonde_vm *vm, enum vm_fault fault, uint32_t addr);
/* ARMv8-M stack limit check of an instruction about to set the active SP to
 * new_sp: true when it may proceed; false after raising the STKOF UsageFault,
 * and the instruction must then change nothing. Always true before ARMv8-M,
 * and at negative priority with CCR.STKOFHFNMIGN. */
bool vm_sp_limit_check(struct sonde_vm *vm, uint32_t new_sp);
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
