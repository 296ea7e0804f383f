/* Halting debug and the debug monitor of the virtual Cortex-M: DHCSR, DCRSR,
 * DCRDR, DEMCR (0xE000EDF0..0xE000EDFF) and the debug events that drive
 * DFSR, halting and the DebugMonitor exception.
 * ARMv7-M ARM C1.2 (debug event behaviour), C1.3 (debug stepping), C1.4
 * (exceptions in debug), C1.5 (halting debug: DHCSR, DCRSR/DCRDR register
 * transfer), C1.6 (DebugMonitor, DEMCR, vector catch, DFSR); ARMv6-M ARM C1.6.
 *
 * How a debug event is handled (C1.2.1, table C1-2):
 *   DHCSR.C_DEBUGEN = 1           -> the core halts (sonde_vm_run returns,
 *                                    stop reason BREAKPOINT or HALT)
 *   else DEMCR.MON_EN = 1         -> DebugMonitor is pended when its priority
 *                                    is higher than the execution priority;
 *                                    otherwise a BKPT escalates to HardFault
 *                                    (HFSR.DEBUGEVT) and other events are ignored
 *   else (no debug configured)    -> a BKPT or breakpoint stops the run as if
 *                                    the host were a debugger (the VM's
 *                                    historical behaviour, docs/vm.md).
 * The DFSR bit of the event is always set.
 *
 * "Halted" here is "sonde_vm_run() returned with a debug stop": the host may
 * then read and write registers (directly or through DCRSR/DCRDR) and resume.
 * Breakpoints (FPB comparators and the host's) are found when an instruction
 * is decoded into the CPU's decode cache: a matching address decodes as a
 * breakpoint, so a run without breakpoints costs nothing (exec.c
 * icache_fill calls vm_dbgh_bp_match only when some breakpoint is enabled). */
#include <stdlib.h>

#include "dbg_halt.h"
#include "nvic.h"
#include "vm_internal.h"

#define DBGKEY 0xA05Fu
#define DHCSR_C_MASK (DHCSR_C_DEBUGEN | DHCSR_C_HALT | DHCSR_C_STEP | DHCSR_C_MASKINTS | (1u << 5))
#define DEMCR_V7_MASK 0x010F07F1u
#define DEMCR_V6_MASK 0x01000401u /* DWTENA(24), VC_HARDERR, VC_CORERESET */

static struct vm_dbgh *D(const struct sonde_vm *vm)
{
  return vm->dbgh;
}

bool vm_dbgh_trcena(const struct sonde_vm *vm)
{
  return vm->dbgh && (vm->dbgh->demcr & DEMCR_TRCENA);
}

bool vm_dbgh_maskints(const struct sonde_vm *vm)
{
  const struct vm_dbgh *d = D(vm);
  return d && (d->dhcsr & (DHCSR_C_DEBUGEN | DHCSR_C_MASKINTS)) ==
                  (DHCSR_C_DEBUGEN | DHCSR_C_MASKINTS);
}

void vm_dbgh_set_halted(struct sonde_vm *vm, bool halted)
{
  struct vm_dbgh *d = D(vm);
  if (!d)
    return;
  d->halted = halted;
  if (halted)
    d->dhcsr |= d->dhcsr & DHCSR_C_DEBUGEN ? DHCSR_C_HALT : 0;
  else
    d->dhcsr &= ~DHCSR_C_HALT; /* resume: the debugger clears C_HALT */
}

static void halt(struct sonde_vm *vm, uint32_t dfsr, enum sonde_vm_stop_reason why)
{
  struct vm_dbgh *d = D(vm);
  vm->sys.dfsr |= dfsr;
  d->halted = true;
  d->stepping = false;
  d->dhcsr |= DHCSR_C_HALT; /* the core stays halted until the debugger clears it */
  vm_request_stop(vm, why);
  vm->attention |= VM_ATTN_DEBUG; /* a later run stops at once while C_HALT is set */
}

/* The DebugMonitor may be taken now (C1.6.1): enabled and of higher priority
 * than the current execution priority. */
static bool monitor_can_preempt(const struct sonde_vm *vm)
{
  int g = vm_nvic_group_priority(vm, vm_nvic_priority(vm, VM_EXC_DEBUGMONITOR));
  return g < vm_nvic_execution_priority(vm, false);
}

bool vm_dbgh_breakpoint(struct sonde_vm *vm)
{
  struct vm_dbgh *d = D(vm);
  if (!d) {
    vm_request_stop(vm, SONDE_VM_STOP_BREAKPOINT);
    return false;
  }
  if (d->dhcsr & DHCSR_C_DEBUGEN) {
    halt(vm, DFSR_BKPT, SONDE_VM_STOP_BREAKPOINT);
    return false;
  }
  if (vm->has_v7m && (d->demcr & DEMCR_MON_EN)) {
    vm->sys.dfsr |= DFSR_BKPT;
    if (monitor_can_preempt(vm))
      vm_exc_set_pending(vm, VM_EXC_DEBUGMONITOR);
    else
      vm_fault(vm, VM_FAULT_BKPT, 0); /* escalation: HardFault, HFSR.DEBUGEVT */
    return false;
  }
  vm->sys.dfsr |= DFSR_BKPT;
  vm_request_stop(vm, SONDE_VM_STOP_BREAKPOINT);
  return false;
}

void vm_dbgh_watchpoint(struct sonde_vm *vm)
{
  struct vm_dbgh *d = D(vm);
  if (!d)
    return;
  if (d->dhcsr & DHCSR_C_DEBUGEN) {
    halt(vm, DFSR_DWTTRAP, SONDE_VM_STOP_BREAKPOINT);
  } else if (vm->has_v7m && (d->demcr & DEMCR_MON_EN)) {
    vm->sys.dfsr |= DFSR_DWTTRAP;
    if (monitor_can_preempt(vm))
      vm_exc_set_pending(vm, VM_EXC_DEBUGMONITOR);
  }
}

/* Vector catch (C1.6.3): a halt on entry to a fault handler, before its first
 * instruction. Only with halting debug enabled. */
static bool vector_caught(const struct sonde_vm *vm, unsigned exc)
{
  uint32_t dm = D(vm)->demcr, cfsr = vm->sys.cfsr;
  switch (exc) {
  case VM_EXC_HARDFAULT: return dm & DEMCR_VC_HARDERR;
  case VM_EXC_BUSFAULT: return dm & DEMCR_VC_BUSERR;
  case VM_EXC_MEMMANAGE: return dm & DEMCR_VC_MMERR;
  case VM_EXC_USAGEFAULT:
    return ((dm & DEMCR_VC_NOCPERR) && (cfsr & (1u << 19))) ||
           ((dm & DEMCR_VC_STATERR) && (cfsr & ((1u << 16) | (1u << 17) | (1u << 18)))) ||
           ((dm & DEMCR_VC_CHKERR) && (cfsr & ((1u << 24) | (1u << 25))));
  default: return false;
  }
}

bool vm_dbgh_service(struct sonde_vm *vm, bool pre)
{
  struct vm_dbgh *d = D(vm);
  struct vm_cpu *c = &vm->cpu;
  if (!d)
    return false;
  if (pre) {
    vm->attention &= ~(uint32_t)VM_ATTN_DEBUG;
    d->taken0 = vm->sys.exceptions_taken;
    d->resetting = vm->sys.reset_request;
    /* A halt request (C_HALT); a reset requested while halted (a debugger's
     * AIRCR.SYSRESETREQ) is taken first, then the core halts again below. */
    if ((d->dhcsr & DHCSR_C_DEBUGEN) && (d->dhcsr & DHCSR_C_HALT) && !d->resetting) {
      halt(vm, DFSR_HALTED, SONDE_VM_STOP_HALT);
      return true;
    }
    d->halted = false;
    if (d->stepping && c->instret != d->step_instret) {
      halt(vm, DFSR_HALTED, SONDE_VM_STOP_HALT);
      return true;
    }
    if (d->mon_stepping && c->instret != d->step_instret) {
      d->mon_stepping = false;
      vm->sys.dfsr |= DFSR_HALTED;
      vm_exc_set_pending(vm, VM_EXC_DEBUGMONITOR);
    }
    return false;
  }
  /* After the service: a reset (VC_CORERESET halts on the reset vector's first
   * instruction), exception entries it made, then arm a step. */
  if (d->resetting && (d->dhcsr & DHCSR_C_DEBUGEN) &&
      (d->demcr & DEMCR_VC_CORERESET || d->dhcsr & DHCSR_C_HALT)) {
    bool vc = d->demcr & DEMCR_VC_CORERESET;
    d->resetting = false;
    halt(vm, vc ? DFSR_VCATCH : DFSR_HALTED, vc ? SONDE_VM_STOP_BREAKPOINT : SONDE_VM_STOP_HALT);
    return true;
  }
  if ((d->dhcsr & DHCSR_C_DEBUGEN) && vm->sys.exceptions_taken != d->taken0 &&
      vector_caught(vm, c->ipsr & 0x1FF)) {
    halt(vm, DFSR_VCATCH, SONDE_VM_STOP_BREAKPOINT);
    return true;
  }
  if (d->stepping) {
    if (vm->sys.exceptions_taken != d->taken0) { /* stepped into a handler */
      halt(vm, DFSR_HALTED, SONDE_VM_STOP_HALT);
      return true;
    }
    vm->event_cycle = c->cycles + 1; /* back here after one instruction */
  } else if ((d->demcr & (DEMCR_MON_EN | DEMCR_MON_STEP)) == (DEMCR_MON_EN | DEMCR_MON_STEP) &&
             !(d->dhcsr & DHCSR_C_DEBUGEN) && (c->ipsr & 0x1FF) != VM_EXC_DEBUGMONITOR &&
             monitor_can_preempt(vm)) {
    /* MON_STEP (C1.6.2): one instruction of the interrupted code, then the
     * monitor again with DFSR.HALTED. */
    if (!d->mon_stepping) {
      d->mon_stepping = true;
      d->step_instret = c->instret;
    }
    vm->event_cycle = c->cycles + 1;
  }
  return false;
}

int vm_dbgh_step(struct sonde_vm *vm, bool maskints, struct sonde_vm_stop *stop)
{
  struct vm_dbgh *d = D(vm);
  uint32_t saved = d->dhcsr;
  d->dhcsr = (d->dhcsr & ~(DHCSR_C_HALT | DHCSR_C_MASKINTS | DHCSR_C_STEP)) | DHCSR_C_DEBUGEN |
             (maskints ? DHCSR_C_MASKINTS : 0);
  d->stepping = false;
  d->halted = false;
  vm->sys.maskints = maskints;
  vm_exc_update(vm);
  int rc = sonde_vm_step(vm, stop);
  d->dhcsr = saved | DHCSR_C_HALT;
  d->halted = true;
  vm->sys.maskints = (saved & (DHCSR_C_DEBUGEN | DHCSR_C_MASKINTS)) ==
                     (DHCSR_C_DEBUGEN | DHCSR_C_MASKINTS);
  vm_exc_update(vm);
  return rc;
}

/* ---- registers ----------------------------------------------------------- */

/* DCRSR REGSEL (C1.6.3) to sonde_vm_read_reg numbers; -1: reserved. */
static int regsel_map(uint32_t sel)
{
  if (sel <= 16)
    return (int)sel;
  if (sel == 17) return SONDE_VM_REG_MSP;
  if (sel == 18) return SONDE_VM_REG_PSP;
  if (sel == 33) return SONDE_VM_REG_FPSCR;
  if (sel >= 64 && sel <= 95) return SONDE_VM_REG_S0 + (int)(sel - 64);
  return -1;
}

static void dcrsr_write(struct sonde_vm *vm, uint32_t v)
{
  struct vm_dbgh *d = D(vm);
  uint32_t sel = v & 0x7F;
  bool wr = (v >> 16) & 1;
  if (!d->halted)
    return; /* transfers are UNPREDICTABLE while running: ignored */
  if (sel == 20) { /* CONTROL[31:24] FAULTMASK[23:16] BASEPRI[15:8] PRIMASK[7:0] */
    if (wr) {
      sonde_vm_write_reg(vm, SONDE_VM_REG_PRIMASK, d->dcrdr & 0xFF);
      sonde_vm_write_reg(vm, SONDE_VM_REG_BASEPRI, (d->dcrdr >> 8) & 0xFF);
      sonde_vm_write_reg(vm, SONDE_VM_REG_FAULTMASK, (d->dcrdr >> 16) & 0xFF);
      sonde_vm_write_reg(vm, SONDE_VM_REG_CONTROL, d->dcrdr >> 24);
    } else {
      uint32_t p = 0, b = 0, f = 0, ctl = 0;
      sonde_vm_read_reg(vm, SONDE_VM_REG_PRIMASK, &p);
      sonde_vm_read_reg(vm, SONDE_VM_REG_BASEPRI, &b);
      sonde_vm_read_reg(vm, SONDE_VM_REG_FAULTMASK, &f);
      sonde_vm_read_reg(vm, SONDE_VM_REG_CONTROL, &ctl);
      d->dcrdr = (ctl << 24) | (f << 16) | (b << 8) | p;
    }
    return;
  }
  int r = regsel_map(sel);
  if (r < 0)
    return;
  if (wr)
    sonde_vm_write_reg(vm, (unsigned)r, d->dcrdr);
  else if (sonde_vm_read_reg(vm, (unsigned)r, &d->dcrdr) < 0)
    d->dcrdr = 0;
}

static uint32_t dhcsr_read(struct sonde_vm *vm, bool debug)
{
  struct vm_dbgh *d = D(vm);
  uint32_t v = d->dhcsr & DHCSR_C_MASK;
  if (debug && d->halted)
    v |= DHCSR_S_HALT | DHCSR_S_REGRDY; /* the core runs whenever it reads DHCSR itself */
  if (debug) { /* the sticky status bits, cleared by the debugger's read (C1.6.2) */
    if (vm->cpu.instret != d->retire_mark)
      v |= DHCSR_S_RETIRE_ST;
    if (d->reset_st)
      v |= DHCSR_S_RESET_ST;
    d->retire_mark = vm->cpu.instret;
    d->reset_st = false;
  }
  if (vm->cpu.sleeping)
    v |= DHCSR_S_SLEEP;
  if (vm->cpu.locked_up)
    v |= DHCSR_S_LOCKUP;
  return v;
}

static void dhcsr_write(struct sonde_vm *vm, uint32_t v, bool debug)
{
  struct vm_dbgh *d = D(vm);
  if ((v >> 16) != DBGKEY)
    return; /* C1.6.2: writes without DBGKEY are ignored */
  uint32_t old = d->dhcsr;
  uint32_t nv = v & DHCSR_C_MASK;
  if (!debug) /* software cannot change C_DEBUGEN */
    nv = (nv & ~DHCSR_C_DEBUGEN) | (old & DHCSR_C_DEBUGEN);
  if (!(nv & DHCSR_C_DEBUGEN))
    nv &= DHCSR_C_DEBUGEN; /* the other control bits need C_DEBUGEN */
  d->dhcsr = nv;
  if ((nv & DHCSR_C_DEBUGEN) && (nv & DHCSR_C_HALT)) {
    vm->attention |= VM_ATTN_DEBUG; /* halt at the next instruction boundary */
  } else if ((nv & DHCSR_C_DEBUGEN) && (nv & DHCSR_C_STEP)) {
    d->stepping = true; /* resume for one instruction (C1.5.1) */
    d->step_instret = vm->cpu.instret;
    vm->attention |= VM_ATTN_DEBUG;
  } else {
    d->stepping = false;
  }
  vm->sys.maskints = (nv & (DHCSR_C_DEBUGEN | DHCSR_C_MASKINTS)) ==
                     (DHCSR_C_DEBUGEN | DHCSR_C_MASKINTS);
  vm_exc_update(vm); /* C_MASKINTS may have changed */
}

static void demcr_write(struct sonde_vm *vm, uint32_t v)
{
  struct vm_dbgh *d = D(vm);
  d->demcr = v & (vm->has_v7m ? DEMCR_V7_MASK : DEMCR_V6_MASK);
  if (vm->has_v7m && (v & DEMCR_MON_PEND))
    vm_exc_set_pending(vm, VM_EXC_DEBUGMONITOR);
  else if (vm->has_v7m)
    vm_nvic_set_pending(vm, VM_EXC_DEBUGMONITOR, false);
  d->mon_stepping = false;
  vm_exc_update(vm);
  if (vm->has_v7m && (v & DEMCR_MON_STEP))
    vm->attention |= VM_ATTN_DEBUG; /* arm MON_STEP at the next boundary */
}

static uint32_t demcr_read(const struct sonde_vm *vm)
{
  uint32_t v = D(vm)->demcr & ~DEMCR_MON_PEND;
  if (vm->has_v7m && vm_nvic_is_pending(vm, VM_EXC_DEBUGMONITOR))
    v |= DEMCR_MON_PEND;
  return v;
}

/* The SCS forwards 0xDF0..0xDFF (and 0xFB0..0xFBF, RAZ/WI here). */
static int dbg_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                    uint32_t *value, bool debug)
{
  struct vm_dbgh *d = ctx;
  uint32_t v = 0;
  if ((offset & ~3u) < 0xDF0 || (offset & ~3u) >= 0xE00) {
    if (d->next_ops && d->next_ops->read)
      return d->next_ops->read(d->next_ctx, vm, offset, size, value, debug);
    *value = 0;
    return VM_BUS_OK;
  }
  switch (offset & ~3u) {
  case 0xDF0: v = dhcsr_read(vm, debug); break;
  case 0xDF4: v = 0; break; /* DCRSR is write-only */
  case 0xDF8: v = D(vm)->dcrdr; break;
  case 0xDFC: v = demcr_read(vm); break;
  default: break;
  }
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int dbg_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                     uint32_t value, bool debug)
{
  struct vm_dbgh *d = ctx;
  uint32_t word = offset & ~3u, shift = 8 * (offset & 3);
  if (d->next_ops && d->next_ops->write && (word == 0xDFC || word < 0xDF0 || word >= 0xE00)) {
    int rc = d->next_ops->write(d->next_ctx, vm, offset, size, value, debug);
    if (rc != VM_BUS_OK || word != 0xDFC)
      return rc;
  }
  uint32_t mask = (size == 4 ? 0xFFFFFFFFu : ((1u << (8 * size)) - 1)) << shift;
  value <<= shift;
  switch (word) {
  case 0xDF0:
    if (size == 4)
      dhcsr_write(vm, value, debug);
    break;
  case 0xDF4:
    if (size == 4)
      dcrsr_write(vm, value);
    break;
  case 0xDF8: D(vm)->dcrdr = (D(vm)->dcrdr & ~mask) | (value & mask); break;
  case 0xDFC: demcr_write(vm, (demcr_read(vm) & ~mask) | (value & mask)); break;
  default: break;
  }
  return VM_BUS_OK;
}

static const struct vm_device_ops dbg_ops = {"debug", dbg_read, dbg_write};

int vm_dbgh_init(struct sonde_vm *vm)
{
  struct vm_dbgh *d = calloc(1, sizeof *d);
  if (!d)
    return SONDE_E_NOMEM;
  vm->dbgh = d;
  d->next_ops = vm->sys.debug_ops; /* chain the trace blocks' SCS registers */
  d->next_ctx = vm->sys.debug_ctx;
  vm->sys.debug_ops = &dbg_ops;
  vm->sys.debug_ctx = d;
  return vm_fpb_init(vm);
}

void vm_dbgh_free(struct sonde_vm *vm)
{
  if (vm) {
    free(vm->dbgh);
    vm->dbgh = NULL;
  }
}

/* ---- breakpoints ----------------------------------------------------------- */

int vm_dbgh_host_bp(struct sonde_vm *vm, uint32_t addr, bool insert)
{
  struct vm_dbgh *d = D(vm);
  addr &= ~1u;
  for (unsigned i = 0; i < d->nhost_bp; i++) {
    if (d->host_bp[i] == addr) {
      if (!insert) {
        d->host_bp[i] = d->host_bp[--d->nhost_bp];
        vm_dbgh_bp_changed(vm);
      }
      return 0;
    }
  }
  if (!insert)
    return 0;
  if (d->nhost_bp >= VM_DBG_MAX_HOST_BP)
    return SONDE_E_RANGE;
  d->host_bp[d->nhost_bp++] = addr;
  vm_dbgh_bp_changed(vm);
  return 0;
}
