/* The exception model of the virtual Cortex-M: entry (stacking, late
 * arrival), return (EXC_RETURN forms, unstacking, tail-chaining, sleep-on-
 * exit), synchronous faults and their escalation to HardFault, lockup, SVC,
 * WFI/WFE/SEV, lazy FP state preservation, system reset and the service call
 * the CPU makes at instruction boundaries.
 * ARMv7-M ARM B1.5.6 (entry, PushStack), B1.5.7 (stack alignment), B1.5.8
 * (return, PopStack), B1.5.9 (integrity checks), B1.5.12 (late arrival,
 * tail-chaining), B1.5.15 (lockup), B1.5.17 (WFI/WFE); ARMv6-M ARM B1.5;
 * Cortex-M3/M4 TRM "Exception model" for the cycle counts (docs/vm.md).
 *
 * Timing invariant: everything the system side does happens at an
 * instruction boundary, at vm->cpu.cycles. vm->event_cycle is the earliest
 * cycle at which a timed event is due (or the run's cycle limit), so the CPU
 * calls vm_sys_service() exactly at the first boundary at or after it;
 * vm->attention has VM_ATTN_EXCEPTION set whenever an exception can be taken
 * now, the core sleeps, or a reset is requested. */
#include <assert.h>

#include "cpu_exc.h"
#include "nvic.h"
#include "periph.h"
#include "vm_internal.h"

/* CFSR bits (ARMv7-M ARM B3.2.15). */
#define CFSR_IBUSERR (1u << 8)
#define CFSR_PRECISERR (1u << 9)
#define CFSR_UNSTKERR (1u << 11)
#define CFSR_STKERR (1u << 12)
#define CFSR_LSPERR (1u << 13)
#define CFSR_BFARVALID (1u << 15)
#define CFSR_UNDEFINSTR (1u << 16)
#define CFSR_INVSTATE (1u << 17)
#define CFSR_INVPC (1u << 18)
#define CFSR_NOCP (1u << 19)
#define CFSR_STKOF (1u << 20)
#define CFSR_UNALIGNED (1u << 24)
#define CFSR_DIVBYZERO (1u << 25)
#define HFSR_VECTTBL (1u << 1)
#define HFSR_FORCED (1u << 30)
#define HFSR_DEBUGEVT (1u << 31)
#define CCR_NONBASETHRDENA (1u << 0)
#define CCR_STKALIGN (1u << 9)
#define CCR_STKOFHFNMIGN (1u << 10)
#define SCR_SLEEPONEXIT (1u << 1)
#define CONTROL_NPRIV 1u
#define CONTROL_SPSEL 2u
#define CONTROL_FPCA 4u
#define FPCCR_LSPACT (1u << 0)
#define FPCCR_USER (1u << 1)
#define FPCCR_THREAD (1u << 3)
#define FPCCR_HFRDY (1u << 4)
#define FPCCR_MMRDY (1u << 5)
#define FPCCR_BFRDY (1u << 6)
#define FPCCR_LSPEN (1u << 30)
#define FPCCR_ASPEN (1u << 31)
#define LOCKUP_PC 0xEFFFFFFEu

/* Cycle costs (Cortex-M3/M4 TRM, Cortex-M0+ TRM; see docs/vm.md; entry and
 * return: VM_EXC_*_CYCLES_* in sys.h). Wait states of the stack memory and
 * of the vector fetch come on top. */
#define TAILCHAIN_CYCLES 6u
#define FP_FRAME_CYCLES 17u /* s0-s15 + FPSCR, one cycle per word */

/* The gates' constants (vm_features_init) as the tests give them. */
static inline bool exc_consts_ok(const struct sonde_vm *vm)
{
  return vm->exc_entry_cycles ==
             (vm->has_v7m ? VM_EXC_ENTRY_CYCLES_V7 : VM_EXC_ENTRY_CYCLES_V6) &&
         vm->exc_exit_cycles == (vm->has_v7m ? VM_EXC_EXIT_CYCLES_V7 : VM_EXC_EXIT_CYCLES_V6) &&
         vm->exc_return_basic == (vm->has_v8m ? 0xFFFFFFB0u : 0xFFFFFFF1u) &&
         vm->apsr_mask == (vm->has_dsp ? 0xf80f0000u : 0xf8000000u);
}

static inline unsigned entry_cycles(const struct sonde_vm *vm)
{
  assert(exc_consts_ok(vm));
  return vm->exc_entry_cycles;
}

unsigned vm_exc_entry_cycles(const struct sonde_vm *vm)
{
  return entry_cycles(vm);
}

static inline unsigned exit_cycles(const struct sonde_vm *vm)
{
  assert(exc_consts_ok(vm));
  return vm->exc_exit_cycles;
}

/* The local exclusive monitor is cleared on exception entry and return
 * (ARMv7-M ARM A3.4.4). */
static inline void clear_exclusive(struct sonde_vm *vm)
{
  vm->cpu.excl_valid = false; /* vm_cpu_clear_exclusive, without the call */
}

/* Whether hook_exc() calls anything now. */
static inline bool exc_observed(const struct sonde_vm *vm)
{
  assert(vm->exc_observe == vm_exc_observers(vm)); /* kept by vm_update_hooked() */
  return VM_UNLIKELY(vm->exc_observe != 0);
}

/* Whether hook_exc() calls more than the MTB's hook: the user's hook (any
 * code) or the DWT's (which may pend DebugMonitor for a comparator match
 * it flushes). The MTB's writes its buffer and may stop the run, and
 * changes nothing an exception's priority or masking depends on. */
static inline bool exc_observed_beyond_mtb(const struct sonde_vm *vm)
{
  assert(vm->exc_observe == vm_exc_observers(vm));
  return VM_UNLIKELY(vm->exc_observe & VM_EXC_OBS_HOOKS);
}

/* No debugger is involved (dbgh_service() would only record its state),
 * C_MASKINTS is clear and nothing observes the stacking: the quiet service
 * (issue 20). Exception observers (hook_exc) are called as usual. */
static inline bool exc_quiet(const struct sonde_vm *vm)
{
  const struct vm_dbgh *d = vm->dbgh;
  return !vm->hooks.stacking && !vm->sys.maskints &&
         (!d || (!(d->dhcsr & DHCSR_C_DEBUGEN) && !(d->demcr & DEMCR_MON_STEP) && !d->stepping &&
                 !d->mon_stepping && !d->halted));
}

/* The user's hook and the DWT's (vm->exc_observe's VM_EXC_OBS_HOOKS). */
static inline void hook_exc_hooks(struct sonde_vm *vm, enum sonde_vm_exc_event ev, unsigned exc)
{
  if (vm->hooks.exception)
    vm->hooks.exception(vm->hooks.ctx, vm->cpu.cycles, ev, exc);
  /* The DWT ignores exceptions without TRCENA: no call then. */
  if (vm->dbg && (vm->dbg->demcr & VM_DEMCR_TRCENA))
    vm_dbg_exception(vm, ev, exc); /* exception trace, EXCCNT (dbg_dwt.c) */
}

/* The observers of an exception event. vm->exc_observe is read again after
 * each, which may have changed it. */
static inline void hook_exc(struct sonde_vm *vm, enum sonde_vm_exc_event ev, unsigned exc)
{
  if (!exc_observed(vm))
    return;
  if (vm->exc_observe & VM_EXC_OBS_HOOKS)
    hook_exc_hooks(vm, ev, exc);
  /* The MTB writes packets at entry and return, none at the handler's exit:
   * no call then (half the calls). */
  if ((vm->exc_observe & VM_EXC_OBS_MTB) && ev != SONDE_VM_EXC_EXIT &&
      !vm_mtb_exception_fast(vm->mtb, ev, vm->cpu.r[15], vm->cpu.entry_return))
    vm_mtb_exception(vm, ev, exc); /* MTB entry/return packets (dbg_mtb.c) */
}

/* ---- timed events ---------------------------------------------------------- */

int vm_sys_timer_add(struct sonde_vm *vm, vm_timer_fn fire, void *ctx)
{
  struct vm_sys *s = &vm->sys;
  if (s->ntimers >= VM_SYS_MAX_TIMERS)
    return -1;
  struct vm_sys_timer *t = &s->timers[s->ntimers];
  t->due = UINT64_MAX;
  t->fire = fire;
  t->direct = NULL;
  t->ctx = ctx;
  s->next_valid = false;
  return (int)s->ntimers++;
}

void vm_sys_timer_direct(struct vm_sys *s, int id, vm_timer_direct_fn direct)
{
  if (id >= 0 && (unsigned)id < s->ntimers)
    s->timers[id].direct = direct;
}

_Static_assert(VM_SYS_MAX_TIMERS <= 32, "vm_sys.armed has a bit per timer");

static void scan_timers(struct vm_sys *s)
{
  uint64_t e = UINT64_MAX, e2 = UINT64_MAX;
  unsigned next = 0;
  for (uint32_t m = s->armed; m; m &= m - 1) {
    unsigned i = (unsigned)__builtin_ctz(m);
    const uint64_t due = s->timers[i].due;
    if (due < e) {
      e2 = e;
      e = due;
      next = i;
    } else if (due < e2) {
      e2 = due;
    }
  }
  s->next_due = e;
  s->next_timer = next;
  s->next2_due = e2;
  s->next_valid = true;
}

static inline void set_due(struct vm_sys *s, unsigned id, uint64_t due)
{
  vm_sys_timer_due_set(s, id, due);
}

/* The earliest due of all timers (UINT64_MAX: none armed), from the cache. */
static uint64_t next_timer_due(struct vm_sys *s)
{
  if (!s->next_valid)
    scan_timers(s);
#ifndef NDEBUG
  { /* a write of timers[].due that forgot the cache shows up here */
    unsigned next = s->next_timer;
    uint64_t due = s->next_due;
    for (unsigned i = 0; i < s->ntimers; i++) {
      assert(((s->armed >> i) & 1) == (s->timers[i].due != UINT64_MAX));
      assert(i == next || s->timers[i].due >= s->next2_due);
    }
    scan_timers(s);
    assert(due == s->next_due && (due == UINT64_MAX || next == s->next_timer));
  }
#endif
  return s->next_due;
}

static inline void update_event(struct sonde_vm *vm)
{
  uint64_t e = next_timer_due(&vm->sys);
  vm->event_cycle = e < vm->max_cycles ? e : vm->max_cycles;
}

void vm_sys_update_event(struct sonde_vm *vm)
{
  update_event(vm);
}

void vm_sys_timer_set(struct sonde_vm *vm, int id, uint64_t due)
{
  struct vm_sys *s = &vm->sys;
  if (id < 0 || (unsigned)id >= s->ntimers)
    return;
  vm_sys_timer_rearm(s, (unsigned)id, due);
  if (!s->firing) /* else fire_due() sets it once all due timers have fired */
    update_event(vm);
}

/* Fire every timed event due at or before `upto`, earliest first (the lower
 * index first at the same cycle), leaving vm->event_cycle to the caller. */
VM_INLINE void fire_timers(struct sonde_vm *vm, uint64_t upto)
{
  struct vm_sys *s = &vm->sys;
  s->firing = true;
  while (next_timer_due(s) <= upto && s->next_due != UINT64_MAX) {
    struct vm_sys_timer *t = &s->timers[s->next_timer];
    set_due(s, s->next_timer, UINT64_MAX);
    /* The earliest of the others now, so the cache stays exact through
     * the re-arm in `fire` (vm_sys_timer_rearm) and the next turn needs no
     * scan. */
    scan_timers(s);
    if (t->fire == vm_systick_fire) /* the commonest, inline */
      vm_systick_wrap(vm);
    else
      t->fire(vm, t->ctx);
  }
  s->firing = false;
}

/* fire_timers(), then vm->event_cycle for what is armed now. */
static __attribute__((noinline)) void fire_due(struct sonde_vm *vm, uint64_t upto)
{
  fire_timers(vm, upto);
  update_event(vm);
}

/* ---- attention ------------------------------------------------------------- */

static inline void exc_update(struct sonde_vm *vm)
{
  if (vm->sys.defer_exc_update)
    return; /* the service calls it again before anything reads the bit */
  if (vm->sys.reset_request || vm->cpu.sleeping || vm_nvic_takeable(vm))
    vm->attention |= VM_ATTN_EXCEPTION;
  else
    vm->attention &= ~(uint32_t)VM_ATTN_EXCEPTION;
}

void vm_exc_update(struct sonde_vm *vm)
{
  exc_update(vm);
}

void vm_exc_mask_changed(struct sonde_vm *vm)
{
  exc_update(vm);
}

int vm_exc_execution_priority(const struct sonde_vm *vm)
{
  return vm_nvic_execution_priority(vm, false);
}

/* ---- lockup and faults ----------------------------------------------------- */

static void lockup(struct sonde_vm *vm)
{
  vm->cpu.locked_up = true;
  vm->cpu.sleeping = false;
  vm->cpu.r[15] = LOCKUP_PC;
  vm_request_stop(vm, SONDE_VM_STOP_LOCKUP);
}

/* Pend fault exception `exc` (BusFault/UsageFault/MemManage/HardFault) raised
 * now, escalating to HardFault when it is disabled or cannot preempt, and
 * locking up when not even HardFault can (B1.5.15). */
static void raise_fault(struct sonde_vm *vm, unsigned exc, uint32_t hfsr_bits)
{
  struct vm_sys *s = &vm->sys;
  int exec_prio = vm_nvic_execution_priority(vm, false);
  if (exc != VM_EXC_HARDFAULT) {
    if (!vm_nvic_is_enabled(vm, exc) ||
        vm_nvic_group_priority(vm, vm_nvic_priority(vm, exc)) >= exec_prio) {
      exc = VM_EXC_HARDFAULT;
      hfsr_bits |= HFSR_FORCED;
    }
  }
  if (exc == VM_EXC_HARDFAULT) {
    if (vm->has_v7m)
      s->hfsr |= hfsr_bits;
    if (exec_prio <= -1) {
      lockup(vm);
      return;
    }
  }
  vm_nvic_set_pending(vm, exc, true);
  exc_update(vm);
}

void vm_fault(struct sonde_vm *vm, enum vm_fault fault, uint32_t addr)
{
  struct vm_sys *s = &vm->sys;
  unsigned exc = VM_EXC_USAGEFAULT;
  uint32_t hfsr = 0;
  switch (fault) {
  case VM_FAULT_UNDEFINSTR: s->cfsr |= CFSR_UNDEFINSTR; break;
  case VM_FAULT_INVSTATE: s->cfsr |= CFSR_INVSTATE; break;
  case VM_FAULT_INVPC: s->cfsr |= CFSR_INVPC; break;
  case VM_FAULT_NOCP: s->cfsr |= CFSR_NOCP; break;
  case VM_FAULT_UNALIGNED: s->cfsr |= CFSR_UNALIGNED; break;
  case VM_FAULT_DIVBYZERO: s->cfsr |= CFSR_DIVBYZERO; break;
  case VM_FAULT_STKOF: s->cfsr |= CFSR_STKOF; break;
  case VM_FAULT_IBUSERR:
    s->cfsr |= CFSR_IBUSERR;
    exc = VM_EXC_BUSFAULT;
    break;
  case VM_FAULT_PRECISERR:
    s->cfsr |= CFSR_PRECISERR | CFSR_BFARVALID;
    s->bfar = addr;
    exc = VM_EXC_BUSFAULT;
    break;
  case VM_FAULT_BKPT:
    exc = VM_EXC_HARDFAULT;
    hfsr = HFSR_DEBUGEVT;
    break;
  }
  if (!vm->has_v7m) { /* ARMv6-M: every fault is a HardFault, no status registers */
    s->cfsr = 0;
    s->bfar = 0;
    exc = VM_EXC_HARDFAULT;
  }
  raise_fault(vm, exc, hfsr);
}

bool vm_sp_limit_check(struct sonde_vm *vm, uint32_t new_sp)
{
  const struct vm_cpu *c = &vm->cpu;
  if (!vm->has_v8m)
    return true;
  uint32_t limit = c->ipsr == 0 && (c->control & CONTROL_SPSEL) ? c->psplim : c->msplim;
  if (new_sp >= limit)
    return true;
  if ((vm->sys.ccr & CCR_STKOFHFNMIGN) && vm_exc_execution_priority(vm) < 0)
    return true;
  vm_fault(vm, VM_FAULT_STKOF, 0);
  return false;
}

void vm_svc(struct sonde_vm *vm)
{
  /* SVC must be taken at once; when it cannot preempt it escalates. */
  if (vm_nvic_group_priority(vm, vm_nvic_priority(vm, VM_EXC_SVCALL)) >=
      vm_nvic_execution_priority(vm, false)) {
    raise_fault(vm, VM_EXC_HARDFAULT, HFSR_FORCED);
    return;
  }
  vm_nvic_set_pending(vm, VM_EXC_SVCALL, true);
  exc_update(vm);
}

/* ---- stacking -------------------------------------------------------------- */

/* The words of one stacking (at most a full FP frame), kept for the stacking
 * hook, which is called once the cycles of the entry or return are known. */
#define STACK_WORDS 26
struct stacker {
  struct sonde_vm *vm;
  bool error;
  unsigned n;
  uint32_t addr[STACK_WORDS], value[STACK_WORDS];
};

/* The words are written before they are read (up to n): zeroing them, 200
 * bytes per exception, is left out. */
static void stacker_init(struct stacker *st, struct sonde_vm *vm)
{
  st->vm = vm;
  st->error = false;
  st->n = 0;
}

static void note_word(struct stacker *st, uint32_t addr, uint32_t v)
{
  if (st->vm->hooks.stacking && st->n < STACK_WORDS) {
    st->addr[st->n] = addr;
    st->value[st->n++] = v;
  }
}

static void push_word(struct stacker *st, uint32_t addr, uint32_t v)
{
  if (vm_bus_write(st->vm, &st->vm->bus, addr, 4, v) != VM_BUS_OK)
    st->error = true;
  else
    note_word(st, addr, v);
}

static uint32_t pop_word(struct stacker *st, uint32_t addr)
{
  uint32_t v = 0;
  if (vm_bus_read(st->vm, &st->vm->bus, addr, 4, &v) != VM_BUS_OK)
    st->error = true;
  else
    note_word(st, addr, v);
  return v;
}

/* The 8-word basic frame at `addr` as one host pointer, when the whole frame
 * lies in plain memory of one page; NULL otherwise. Each word would then take
 * vm_bus_read()/vm_bus_write()'s fast path, which no hook sees (the DWT and
 * MTB are not told of stacking; the stacking hook gets its words from the
 * caller), so copying the frame at once and adding the page's wait states once
 * per word is the same access. Anything else (devices, read-only or unmapped
 * memory, watched code pages, a frame across a page or region end) goes word
 * by word through the bus, with its faults. */
VM_INLINE uint8_t *basic_frame(struct vm_bus *bus, uint32_t addr, bool write)
{
  const struct vm_page *p = &bus->page[addr >> VM_PAGE_SHIFT];
  uint32_t off = addr & ((1u << VM_PAGE_SHIFT) - 1);
  if (!vm_page_fast(p, off, 0x20, write))
    return NULL;
  bus->stall_cycles += 8u * (write ? p->wait_write : p->wait_read);
  return p->host + off;
}

/* Report the words to the stacking hook: word i at cycle start + 1 + i,
 * clamped to the last cycle before `end` (the sequence spans the entry or
 * return cycles as the bus transfers do; the exact cycle of each word on
 * silicon is not architected). */
static void report_stacking(struct sonde_vm *vm, const struct stacker *st, uint64_t start,
                            uint64_t end, uint32_t pc, bool write)
{
  for (unsigned i = 0; i < st->n; i++) {
    uint64_t cy = start + 1 + i < end ? start + 1 + i : (end > start ? end - 1 : start);
    vm->hooks.stacking(vm->hooks.ctx, cy, pc, st->addr[i], st->value[i], write);
  }
}

/* A stacking or unstacking bus error: a derived BusFault (B1.5.6). */
static void stack_error(struct sonde_vm *vm, uint32_t cfsr_bit)
{
  if (vm->has_v7m)
    vm->sys.cfsr |= cfsr_bit;
  raise_fault(vm, vm->has_v7m ? VM_EXC_BUSFAULT : VM_EXC_HARDFAULT, 0);
}

/* PushStack(): the frame of the current context onto its stack. Returns the
 * EXC_RETURN value for LR and adds the extra cycles to *extra. */
static __attribute__((noinline)) uint32_t push_stack(struct sonde_vm *vm, uint32_t *extra,
                                                     struct stacker *stk)
{
  struct vm_cpu *c = &vm->cpu;
  struct vm_sys *s = &vm->sys;
  bool thread = c->ipsr == 0;
  bool psp = thread && (c->control & CONTROL_SPSEL);
  bool fp = vm->has_fpu && (c->control & CONTROL_FPCA);
  uint32_t framesize = fp ? 0x68 : 0x20;
  bool force8 = fp || (s->ccr & CCR_STKALIGN) || !vm->has_v7m || vm->has_v8m;
  uint32_t sp = c->r[13];
  uint32_t align = force8 ? (sp >> 2) & 1 : 0;
  uint32_t frame = (sp - framesize) & ~(force8 ? 4u : 0u);
  uint32_t xpsr = (vm_cpu_get_xpsr(vm) & ~(1u << 9)) | (align << 9);
  struct stacker *st = stk;
  if (vm->has_v8m) {
    /* ARMv8-M stack limit check on the stack being pushed to: a frame below
     * MSPLIM/PSPLIM is not pushed at all (pushes below the limit must not
     * happen, those above are IMPLEMENTATION DEFINED: none here, as QEMU), SP
     * becomes the limit and a STKOF UsageFault is pended; the exception is
     * still taken. Lazy FP state is not reserved either. */
    uint32_t limit = psp ? c->psplim : c->msplim;
    if (frame < limit) {
      c->r[13] = limit;
      vm_fault(vm, VM_FAULT_STKOF, 0);
      uint32_t base = 0xFFFFFFA0u;
      return base | (fp ? 0 : 0x10) | (thread ? 0x8 : 0) | (psp ? 0x4 : 0);
    }
  }
  const uint32_t words[8] = {c->r[0],  c->r[1],  c->r[2],  c->r[3],
                             c->r[12], c->r[14], c->r[15], xpsr};
  uint8_t *host = basic_frame(&vm->bus, frame, true);
  if (host) {
    memcpy(host, words, sizeof words);
    if (vm->hooks.stacking)
      for (unsigned i = 0; i < 8; i++)
        note_word(st, frame + 4 * i, words[i]);
  } else {
    for (unsigned i = 0; i < 8; i++)
      push_word(st, frame + 4 * i, words[i]);
  }
  if (fp) {
    if (s->fpccr & FPCCR_LSPEN) {
      /* Lazy preservation: space reserved, registers saved by the first FP
       * instruction of the handler (vm_fp_prepare). */
      s->fpcar = frame + 0x20;
      s->fpccr &= ~(FPCCR_USER | FPCCR_THREAD | FPCCR_HFRDY | FPCCR_MMRDY | FPCCR_BFRDY);
      s->fpccr |= FPCCR_LSPACT | FPCCR_HFRDY;
      if (thread)
        s->fpccr |= FPCCR_THREAD;
      if (thread && (c->control & CONTROL_NPRIV))
        s->fpccr |= FPCCR_USER;
      if (vm_nvic_is_enabled(vm, VM_EXC_MEMMANAGE))
        s->fpccr |= FPCCR_MMRDY;
      if (vm_nvic_is_enabled(vm, VM_EXC_BUSFAULT))
        s->fpccr |= FPCCR_BFRDY;
    } else {
      for (unsigned i = 0; i < 16; i++)
        push_word(st, frame + 0x20 + 4 * i, c->s[i]);
      push_word(st, frame + 0x60, c->fpscr);
      push_word(st, frame + 0x64, 0);
      *extra += FP_FRAME_CYCLES;
    }
  }
  c->r[13] = frame;
  if (st->error)
    stack_error(vm, CFSR_STKERR);
  /* ARMv7-M: 0xFFFFFFE1 | FType | Mode | SPSEL (F1/F9/FD, E1/E9/ED).
   * ARMv8-M without the Security Extension: PREFIX | DCRS, S = ES = 0
   * (B0/B8/BC, A0/A8/AC), as the Cortex-M33 writes it. */
  uint32_t base = vm->has_v8m ? 0xFFFFFFA0u : 0xFFFFFFE1u;
  return base | (fp ? 0 : 0x10) | (thread ? 0x8 : 0) | (psp ? 0x4 : 0);
}

/* push_stack() of the common case in one go: a basic frame (no FP context)
 * into plain memory of one page, no stacking hook, within the ARMv8-M stack
 * limit; the same words, SP and EXC_RETURN. Returns false, having changed
 * nothing, when push_stack() must do it. */
VM_INLINE bool push_basic(struct sonde_vm *vm, uint32_t *lr)
{
  struct vm_cpu *c = &vm->cpu;
  if ((vm->has_fpu && (c->control & CONTROL_FPCA)) || vm->hooks.stacking)
    return false;
  bool thread = c->ipsr == 0;
  bool psp = thread && (c->control & CONTROL_SPSEL);
  bool force8 = (vm->sys.ccr & CCR_STKALIGN) || !vm->has_v7m || vm->has_v8m;
  uint32_t sp = c->r[13];
  uint32_t frame = (sp - 0x20) & ~(force8 ? 4u : 0u);
  if (vm->has_v8m && frame < (psp ? c->psplim : c->msplim))
    return false;
  uint8_t *host = basic_frame(&vm->bus, frame, true);
  if (!host)
    return false;
  uint32_t align = force8 ? (sp >> 2) & 1 : 0;
  const uint32_t words[8] = {c->r[0],  c->r[1],  c->r[2],  c->r[3], c->r[12],
                             c->r[14], c->r[15], (vm_cpu_get_xpsr(vm) & ~(1u << 9)) | (align << 9)};
  memcpy(host, words, sizeof words);
  c->r[13] = frame;
  *lr = vm->exc_return_basic | (thread ? 0x8 : 0) | (psp ? 0x4 : 0);
  return true;
}

/* ExceptionTaken(): jump to the handler of `exc` with LR = exc_return. */
VM_INLINE void exception_taken(struct sonde_vm *vm, unsigned exc, uint32_t exc_return)
{
  struct vm_sys *s = &vm->sys;
  uint32_t vector = 0;
  if (vm_bus_read(vm, &vm->bus, s->vtor + 4 * exc, 4, &vector) != VM_BUS_OK) {
    /* Vector fetch failed: HardFault (VECTTBL), or lockup from HardFault/NMI. */
    if (exc == VM_EXC_HARDFAULT || exc == VM_EXC_NMI) {
      lockup(vm);
      return;
    }
    if (vm->has_v7m)
      s->hfsr |= HFSR_VECTTBL;
    vm_nvic_set_pending(vm, exc, false);
    vm_nvic_set_pending(vm, VM_EXC_HARDFAULT, true);
    exc = VM_EXC_HARDFAULT;
    if (vm_bus_read(vm, &vm->bus, s->vtor + 4 * exc, 4, &vector) != VM_BUS_OK) {
      lockup(vm);
      return;
    }
  }
  vm_nvic_activate(vm, exc);
  vm_cpu_exception_taken(vm, exc, exc_return, vector); /* clears the exclusive monitor */
  s->exceptions_taken++;
  s->event_register = true;
}

/* Entry into `exc` from the current context, with late arrival: an exception
 * of higher priority that becomes pending during the stacking is taken
 * instead (its vector is fetched; `exc` stays pending). `quiet`: called by
 * the quiet service (no stacking hook; `exc` is what vm_nvic_takeable()
 * just chose). */
VM_INLINE void exception_entry(struct sonde_vm *vm, unsigned exc, bool quiet)
{
  struct vm_bus *bus = &vm->bus;
  uint64_t stalls = bus->stall_cycles;
  uint32_t extra = 0;
  uint32_t ret_pc = vm->cpu.r[15];
  struct stacker st; /* push_stack()'s words, for the stacking hook */
  uint32_t lr;
  const bool basic = push_basic(vm, &lr);
  if (!basic) {
    stacker_init(&st, vm);
    lr = push_stack(vm, &extra, &st);
  }
  uint64_t start = vm->cpu.cycles;
  uint64_t end = start + entry_cycles(vm) + extra;
  /* Timed events during the stacking, then the highest pending exception.
   * With none due, no call: the service sets event_cycle and the attention
   * bit after the entry. */
  bool fired = false;
  if (next_timer_due(&vm->sys) <= end - 1) {
    vm->sys.defer_exc_update = true;
    fire_due(vm, end - 1);
    vm->sys.defer_exc_update = false;
    fired = true;
  }
  /* Late arrival. Quiet, with no timer fired and the frame pushed in one go
   * (no stacking fault), the NVIC is as vm_nvic_takeable() found it: the
   * highest pending is `exc` itself. */
  if (!quiet || fired || !basic) {
    int prio;
    unsigned late = vm_nvic_highest_pending(vm, &prio);
    if (late && late != exc &&
        vm_nvic_group_priority(vm, prio) <
            vm_nvic_group_priority(vm, vm_nvic_priority(vm, exc)) &&
        vm_nvic_group_priority(vm, prio) < vm_nvic_execution_priority(vm, false))
      exc = late;
  }
  assert(vm_nvic_highest_pending(vm, NULL) == exc || !quiet || fired || !basic);
  exception_taken(vm, exc, lr);
  end += bus->stall_cycles - stalls;
  bus->stall_cycles = stalls;
  vm->cpu.cycles = end;
  if (!quiet && vm->hooks.stacking) /* (quiet: none) */
    report_stacking(vm, &st, start, end, ret_pc, true);
  vm->cpu.entry_return = ret_pc; /* the MTB entry packet's source */
  hook_exc(vm, SONDE_VM_EXC_ENTER, exc);
}

/* exception_entry()'s rest for the direct service's `exc` (of group priority
 * `group`, not pending: the pend the general path makes before the stacking
 * was left out) once its basic frame is written (`waits`: its wait states),
 * when timers are due during the stacking: they fire, then late arrival as
 * exception_entry() decides it. Taken instead, an exception leaves `exc`
 * pending, so `exc` is pended then; otherwise `exc` is taken as it is (the
 * activation of a pending bit already clear changes no more than that). */
static __attribute__((noinline)) void entry_direct_fired(struct sonde_vm *vm, unsigned exc,
                                                         int group, uint32_t lr, uint64_t start,
                                                         uint32_t waits)
{
  struct vm_sys *s = &vm->sys;
  struct vm_bus *bus = &vm->bus;
  const uint64_t end = start + entry_cycles(vm);
  s->defer_exc_update = true;
  fire_due(vm, end - 1);
  s->defer_exc_update = false;
  int prio;
  unsigned late = vm_nvic_highest_pending(vm, &prio);
  if (late && late != exc && vm_nvic_group_priority(vm, prio) < group &&
      vm_nvic_group_priority(vm, prio) < vm_nvic_execution_priority(vm, false)) {
    if (!vm_nvic_is_pending(vm, exc))
      vm_nvic_set_pending(vm, exc, true);
    exc = late;
  }
  const uint64_t stalls = bus->stall_cycles;
  exception_taken(vm, exc, lr);
  vm->cpu.cycles = end + waits + (bus->stall_cycles - stalls);
  bus->stall_cycles = stalls;
  hook_exc(vm, SONDE_VM_EXC_ENTER, exc);
}

/* exception_entry() of the quiet service in one go (issue 20): a basic frame
 * into plain memory of one page (within the ARMv8-M stack limit), the vector
 * from plain memory, no timer due during the stacking, `exc` the NVIC's
 * cached choice. Then no late arrival is possible (nothing changes the NVIC
 * between vm_nvic_takeable() and the activation), nothing can fault, and the
 * entry's cycles are its own plus the wait states of the eight words and the
 * vector, as exception_entry() counts them through bus->stall_cycles.
 * `direct` (the direct service): `exc`, of group priority `group`, is not
 * pending and would be the NVIC's choice once pended (nothing else enabled is
 * pending), so it becomes active without its pending bit going up and down;
 * the choice's cache stays "none pending"; with a timer due during the
 * stacking, entry_direct_fired() takes over once the frame is written and
 * sets *fired.
 * Returns false, having changed nothing, when exception_entry() must do it. */
VM_INLINE bool entry_quiet(struct sonde_vm *vm, unsigned exc, bool direct, int group, bool *fired)
{
  struct vm_cpu *c = &vm->cpu;
  struct vm_sys *s = &vm->sys;
  struct vm_bus *bus = &vm->bus;
  const uint32_t control = c->control;
  if ((vm->has_fpu && (control & CONTROL_FPCA)) || (!direct && (!s->hp_valid || exc != s->hp_exc)))
    return false;
  const bool thread = c->ipsr == 0;
  const bool psp = thread && (control & CONTROL_SPSEL);
  const bool force8 = (s->ccr & CCR_STKALIGN) || !vm->has_v7m || vm->has_v8m;
  const uint32_t sp = c->r[13];
  const uint32_t frame = (sp - 0x20) & ~(force8 ? 4u : 0u);
  if (vm->has_v8m && frame < (psp ? c->psplim : c->msplim))
    return false;
  const struct vm_page *fp = &bus->page[frame >> VM_PAGE_SHIFT];
  const uint32_t foff = frame & ((1u << VM_PAGE_SHIFT) - 1);
  const uint32_t vaddr = s->vtor + 4 * exc;
  const struct vm_page *vp = &bus->page[vaddr >> VM_PAGE_SHIFT];
  const uint32_t voff = vaddr & ((1u << VM_PAGE_SHIFT) - 1);
  const uint64_t start = c->cycles;
  const uint64_t end = start + entry_cycles(vm);
  const bool due = next_timer_due(s) <= end - 1;
  if (!vm_page_fast(fp, foff, 0x20, true) || !vm_page_fast(vp, voff, 4, false) || (!direct && due))
    return false;
  /* What the VM's own state gives, worked out before the frame's stores
   * (host memory, which the compiler must assume may alias it). */
  const uint32_t lr = vm->exc_return_basic | (thread ? 0x8 : 0) | (psp ? 0x4 : 0);
  const uint32_t waits = 8u * fp->wait_write;
  const uint32_t align = force8 ? (sp >> 2) & 1 : 0;
  /* the frame's words stored straight (no copy of them on the host stack) */
  uint8_t *const h = fp->host + foff;
  const uint32_t tail[4] = {c->r[12], c->r[14], c->r[15],
                            (vm_cpu_get_xpsr(vm) & ~(1u << 9)) | (align << 9)};
  memcpy(h, &c->r[0], 16);
  memcpy(h + 16, tail, 16);
  c->r[13] = frame;
  c->entry_return = c->r[15]; /* the MTB entry packet's source */
  if (direct && VM_UNLIKELY(due)) {
    entry_direct_fired(vm, exc, group, lr, start, waits);
    *fired = true;
    return true;
  }
  uint32_t vector;
  memcpy(&vector, vp->host + voff, 4);
  if (direct)
    vm_nvic_activate_group(s, exc, group);
  else
    vm_nvic_activate_choice(vm, exc);
  vm_cpu_exception_taken_sp(vm, exc, lr, vector, psp);
  s->exceptions_taken++;
  s->event_register = true;
  c->cycles = end + waits + vp->wait_read;
  hook_exc(vm, SONDE_VM_EXC_ENTER, exc);
  return true;
}

/* Tail-chain from a returning handler straight into `exc`: no unstacking and
 * stacking; the frame and EXC_RETURN stay. */
static void tail_chain(struct sonde_vm *vm, unsigned exc, uint32_t exc_return)
{
  struct vm_bus *bus = &vm->bus;
  uint64_t stalls = bus->stall_cycles;
  exception_taken(vm, exc, exc_return);
  vm->cpu.cycles += TAILCHAIN_CYCLES + (bus->stall_cycles - stalls);
  bus->stall_cycles = stalls;
  hook_exc(vm, SONDE_VM_EXC_ENTER, exc);
}

/* pop_stack() of the common case in one go: a basic frame in plain memory
 * of one page, in Handler mode (so the frame's SP is the active MSP or the
 * banked PSP), no stacking hook. The frame's words go straight into the core
 * and its eight wait states onto the return's cycles (pop_stack() counts
 * them through bus->stall_cycles). Returns false, having changed nothing,
 * when pop_stack() must do it. */
VM_INLINE bool pop_basic(struct sonde_vm *vm, uint32_t exc_return, bool observed)
{
  struct vm_cpu *c = &vm->cpu;
  if (!(exc_return & 0x10) || vm->hooks.stacking)
    return false;
  assert(c->ipsr);
  const bool thread = exc_return & 8;
  const bool psp = thread && (exc_return & 4);
  const uint32_t frame = psp ? c->sp_inactive : c->r[13];
  const struct vm_page *p = &vm->bus.page[frame >> VM_PAGE_SHIFT];
  const uint32_t off = frame & ((1u << VM_PAGE_SHIFT) - 1);
  if (!vm_page_fast(p, off, 0x20, false))
    return false;
  const uint8_t *h = p->host + off;
  uint32_t xpsr;
  memcpy(&xpsr, h + 28, 4);
  const bool force8 = (vm->sys.ccr & CCR_STKALIGN) || !vm->has_v7m || vm->has_v8m;
  const uint32_t newsp = frame + 0x20 + ((force8 && (xpsr & (1u << 9))) ? 4 : 0);
  const uint32_t control =
      (c->control & ~(CONTROL_SPSEL | CONTROL_FPCA)) | (psp ? CONTROL_SPSEL : 0);
  vm_cpu_exception_return_handler(vm, thread ? 0 : (xpsr & 0x1FF), control, psp, newsp, h);
  c->cycles += exit_cycles(vm) + 8u * p->wait_read;
  vm->sys.event_register = true;
  if (observed)
    hook_exc(vm, SONDE_VM_EXC_RETURN, c->ipsr);
  return true;
}

/* PopStack() and the return to the context EXC_RETURN names. */
static void pop_stack(struct sonde_vm *vm, uint32_t exc_return)
{
  struct vm_cpu *c = &vm->cpu;
  struct vm_sys *s = &vm->sys;
  struct vm_bus *bus = &vm->bus;
  uint64_t stalls = bus->stall_cycles;
  bool thread = exc_return & 8;
  bool psp = thread && (exc_return & 4);
  bool fp = !(exc_return & 0x10);
  uint32_t extra = 0;
  uint32_t frame = vm_cpu_get_sp(vm, psp);
  struct stacker st;
  stacker_init(&st, vm);
  uint32_t r[8];
  const uint8_t *host = basic_frame(bus, frame, false);
  if (host) {
    memcpy(r, host, sizeof r);
    if (vm->hooks.stacking)
      for (unsigned i = 0; i < 8; i++)
        note_word(&st, frame + 4 * i, r[i]);
  } else {
    for (unsigned i = 0; i < 8; i++)
      r[i] = pop_word(&st, frame + 4 * i);
  }
  if (fp) {
    if (s->fpccr & FPCCR_LSPACT) {
      s->fpccr &= ~FPCCR_LSPACT; /* never saved: the registers still hold the context */
    } else {
      for (unsigned i = 0; i < 16; i++)
        c->s[i] = pop_word(&st, frame + 0x20 + 4 * i);
      c->fpscr = pop_word(&st, frame + 0x60);
      extra += FP_FRAME_CYCLES;
    }
  }
  uint32_t framesize = fp ? 0x68 : 0x20;
  bool force8 = fp || (s->ccr & CCR_STKALIGN) || !vm->has_v7m || vm->has_v8m;
  uint32_t newsp = frame + framesize + ((force8 && (r[7] & (1u << 9))) ? 4 : 0);
  uint32_t control = c->control & ~(CONTROL_SPSEL | CONTROL_FPCA);
  if (psp)
    control |= CONTROL_SPSEL;
  if (fp && vm->has_fpu)
    control |= CONTROL_FPCA;
  vm_cpu_exception_return(vm, thread ? 0 : (r[7] & 0x1FF), control, psp, newsp, r);
  if (st.error)
    stack_error(vm, CFSR_UNSTKERR);
  uint64_t ret_start = c->cycles;
  c->cycles += exit_cycles(vm) + extra + (bus->stall_cycles - stalls);
  bus->stall_cycles = stalls;
  if (vm->hooks.stacking)
    report_stacking(vm, &st, ret_start, c->cycles, r[6] & ~1u, false);
  s->event_register = true;
  hook_exc(vm, SONDE_VM_EXC_RETURN, c->ipsr);
}

static bool exc_return_valid(const struct sonde_vm *vm, uint32_t v)
{
  /* F1/F9/FD (a basic frame, ARMv7-M's values) are valid on every core:
   * ARMv8-M's checks below accept them too. */
  if (VM_LIKELY(v == 0xFFFFFFF9u || v == 0xFFFFFFF1u || v == 0xFFFFFFFDu))
    return true;
  if (!(v & 0x10) && !vm->has_fpu)
    return false;
  if (vm->has_v8m) {
    /* ARMv8-M: PREFIX ones, DCRS = 1 (no callee-saved frame without the
     * Security Extension), bit 1 zero. S and ES "should be" 0 (R_XLCP makes
     * 1 UNPREDICTABLE); both are accepted so ARMv7-M style values (F9, FD)
     * keep working. */
    if ((v & 0xFFFFFF80u) != 0xFFFFFF80u || !(v & 0x20) || (v & 2))
      return false;
    unsigned mode = v & 0xC; /* Mode, SPSEL */
    return mode == 0x0 || mode == 0x8 || mode == 0xC;
  }
  if ((v & 0xFFFFFFE0u) != 0xFFFFFFE0u)
    return false;
  unsigned low = v & 0xF;
  return low == 0x1 || low == 0x9 || low == 0xD;
}

/* A failed integrity check of an exception return (B1.5.8 ExceptionReturn()):
 * the returning exception is deactivated, nothing is unstacked, and UsageFault
 * INVPC is taken at once without stacking, with LR = 0xF0000000 +
 * EXC_RETURN<27:0>, so the fault handler runs on the frame of the exception
 * that tried to return. Escalates like any fault. */
static void return_integrity_fault(struct sonde_vm *vm, unsigned exc, uint32_t exc_return)
{
  struct vm_sys *s = &vm->sys;
  if (exc && vm_nvic_is_active(vm, exc)) {
    vm_nvic_set_active(vm, exc, false);
    if (exc != VM_EXC_NMI)
      vm->cpu.faultmask = 0;
  }
  hook_exc(vm, SONDE_VM_EXC_EXIT, exc);
  unsigned target = vm->has_v7m ? VM_EXC_USAGEFAULT : VM_EXC_HARDFAULT;
  if (vm->has_v7m)
    s->cfsr |= CFSR_INVPC;
  int exec_prio = vm_nvic_execution_priority(vm, false);
  if (target != VM_EXC_HARDFAULT &&
      (!vm_nvic_is_enabled(vm, target) ||
       vm_nvic_group_priority(vm, vm_nvic_priority(vm, target)) >= exec_prio)) {
    target = VM_EXC_HARDFAULT;
    s->hfsr |= HFSR_FORCED;
  }
  if (target == VM_EXC_HARDFAULT && exec_prio <= -1) {
    lockup(vm);
    return;
  }
  tail_chain(vm, target, 0xF0000000u | (exc_return & 0x0FFFFFFFu));
}

void vm_exc_return(struct sonde_vm *vm, uint32_t exc_return)
{
  struct vm_cpu *c = &vm->cpu;
  struct vm_sys *s = &vm->sys;
  unsigned exc = c->ipsr;
  if (!exc) { /* not in Handler mode: not an exception return at all */
    vm_cpu_branch(vm, exc_return);
    return;
  }
  if (!exc_return_valid(vm, exc_return) || !vm_nvic_is_active(vm, exc) ||
      ((exc_return & 8) && s->nactive > 1 && !vm->has_v8m && !(s->ccr & CCR_NONBASETHRDENA))) {
    return_integrity_fault(vm, exc, exc_return);
    exc_update(vm);
    return;
  }
  vm_nvic_deactivate(vm, exc);
  if (exc != VM_EXC_NMI)
    c->faultmask = 0;
  /* Nothing on the way to the unstacking changes what observes exceptions:
   * with no observer now, none at the return either (pop_basic). The MTB
   * has nothing to say at the handler's exit (hook_exc). */
  const bool observed = exc_observed(vm);
  const bool beyond_mtb = observed && exc_observed_beyond_mtb(vm);
  if (beyond_mtb)
    hook_exc(vm, SONDE_VM_EXC_EXIT, exc);
  clear_exclusive(vm);
  unsigned next = vm_nvic_takeable(vm);
  if (next) {
    tail_chain(vm, next, exc_return);
  } else if ((exc_return & 8) && (s->scr & SCR_SLEEPONEXIT)) {
    /* Sleep-on-exit: stay stacked and sleep; a wake-up tail-chains. */
    vm_cpu_set_ipsr(vm, 0);
    s->sleep_on_exit = true;
    s->sleep_exc_return = exc_return;
    s->sleep_wfe = false;
    c->sleeping = true;
    s->sleep_from = c->cycles;
    s->sleep_base = s->sleep_cycles;
  } else if (pop_basic(vm, exc_return, observed)) {
    if (!beyond_mtb && !s->defer_exc_update) {
      /* exc_update() with vm_nvic_takeable() known: nothing was takeable
       * above, and the unstacking changed no pending, active or mask state,
       * nor did the MTB's hook if it was called (only the other observers
       * could have) */
      assert(!vm_nvic_takeable(vm));
      if (s->reset_request || c->sleeping)
        vm->attention |= VM_ATTN_EXCEPTION;
      else
        vm->attention &= ~(uint32_t)VM_ATTN_EXCEPTION;
      return;
    }
  } else {
    pop_stack(vm, exc_return);
  }
  exc_update(vm);
}

/* ---- sleep --------------------------------------------------------------- */

/* B1.5.17: WFI wakes on an exception that would preempt were PRIMASK clear;
 * WFE also on the event register. */
static bool wake_condition(struct sonde_vm *vm)
{
  int prio;
  unsigned exc = vm_nvic_highest_pending(vm, &prio);
  if (exc && vm_nvic_group_priority(vm, prio) < vm_nvic_execution_priority(vm, true))
    return true;
  if (vm->sys.sleep_wfe && vm->sys.event_register) {
    vm->sys.event_register = false;
    return true;
  }
  return false;
}

void vm_wait(struct sonde_vm *vm, bool wfe)
{
  if (wfe && vm->sys.event_register) {
    vm->sys.event_register = false;
    return;
  }
  vm->sys.sleep_wfe = wfe;
  if (wake_condition(vm))
    return;
  vm->cpu.sleeping = true;
  vm->sys.sleep_from = vm->cpu.cycles;
  vm->sys.sleep_base = vm->sys.sleep_cycles;
  vm->attention |= VM_ATTN_EXCEPTION;
}

void vm_sev(struct sonde_vm *vm)
{
  vm->sys.event_register = true;
}

/* ---- FP ------------------------------------------------------------------ */

bool vm_fp_prepare(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  struct vm_cpu *c = &vm->cpu;
  unsigned cp10 = (s->cpacr >> 20) & 3;
  bool priv = c->ipsr || !(c->control & CONTROL_NPRIV);
  if (!vm->has_fpu || cp10 == 0 || cp10 == 2 || (cp10 == 1 && !priv)) {
    vm_fault(vm, VM_FAULT_NOCP, 0);
    return false;
  }
  if (s->fpccr & FPCCR_LSPACT) {
    /* Deferred save of the interrupted context's s0-s15 and FPSCR. */
    struct stacker st;
    stacker_init(&st, vm);
    for (unsigned i = 0; i < 16; i++)
      push_word(&st, s->fpcar + 4 * i, c->s[i]);
    push_word(&st, s->fpcar + 0x40, c->fpscr);
    if (vm->hooks.stacking) /* the frame's return address is in the frame */
      for (unsigned i = 0; i < st.n; i++)
        vm->hooks.stacking(vm->hooks.ctx, c->cycles, c->r[15], st.addr[i], st.value[i], true);
    s->fpccr &= ~FPCCR_LSPACT;
    vm->bus.stall_cycles += FP_FRAME_CYCLES; /* charged to this instruction */
    if (st.error && vm->has_v7m) {
      s->cfsr |= CFSR_LSPERR;
      raise_fault(vm, VM_EXC_BUSFAULT, 0);
    }
  }
  if ((s->fpccr & FPCCR_ASPEN) && !(c->control & CONTROL_FPCA)) {
    /* A new FP context: default FPSCR from FPDSCR. */
    c->fpscr = (c->fpscr & ~0x07C00000u) | (s->fpdscr & 0x07C00000u);
    vm_cpu_set_control(vm, c->control | CONTROL_FPCA);
  }
  return true;
}

/* ---- reset ----------------------------------------------------------------- */

static void sys_reset(struct sonde_vm *vm, bool power_on, bool local)
{
  struct vm_sys *s = &vm->sys;
  struct vm_cpu *c = &vm->cpu;
  uint64_t cycles = c->cycles, instret = c->instret;
  vm_cpu_reset(vm);
  if (!power_on) { /* cycles count from power-on; a system reset keeps them */
    c->cycles = cycles;
    c->instret = instret;
    if (!local)
      vm_bus_clear(&vm->bus, false);
  }
  for (unsigned i = 0; i <= VM_MAX_EXC / 32; i++) {
    s->nvic_enabled[i] = s->nvic_pending[i] = s->nvic_active[i] = s->irq_level[i] = 0;
  }
  memset(s->priority, 0, sizeof s->priority);
  s->nactive = 0;
  s->aircr = s->scr = s->shcsr = s->cfsr = s->hfsr = s->mmfar = s->bfar = 0;
  s->vtor = s->reset_vtor; /* 0, or the machine's `vtor` (ARMv8-M) */
  vm_nvic_prigroup_changed(vm);
  s->cpacr = s->fpcar = s->fpdscr = s->actlr = s->dfsr = s->afsr = 0;
  s->fpccr = vm->has_fpu ? (FPCCR_ASPEN | FPCCR_LSPEN) : 0;
  if (!vm->has_v7m)
    s->ccr = CCR_STKALIGN | (1u << 3); /* ARMv6-M: fixed */
  else
    s->ccr = CCR_STKALIGN;
  s->event_register = false;
  s->sleep_on_exit = false;
  s->reset_request = VM_RESET_NONE;
  if (power_on) { /* nothing has run yet (pc_at.c) */
    s->sleep_from = UINT64_MAX;
    c->exec_pc = VM_EXEC_NONE;
  }
  if (!local) {
    for (unsigned i = 0; i < s->ntimers; i++)
      s->timers[i].due = UINT64_MAX;
    s->armed = 0;
    s->next_valid = false;
    vm_periph_reset_all(vm);
  }
  vm_systick_reset(vm); /* disarms its own timer */
  vm_dbg_reset(vm, power_on); /* re-arms the DWT timer (dbg_dwt.c) */
  c->sleeping = false;
  c->locked_up = false;
  uint32_t sp = 0, pc = 0;
  vm_bus_debug_read(vm, &vm->bus, s->vtor, &sp, 4);
  vm_bus_debug_read(vm, &vm->bus, s->vtor + 4, &pc, 4);
  c->primask = c->faultmask = c->basepri = 0;
  vm_cpu_set_ipsr(vm, 0);
  vm_cpu_set_control(vm, 0);
  vm_cpu_set_sp(vm, false, sp & ~3u);
  c->r[14] = 0xFFFFFFFFu;
  vm_cpu_branch(vm, pc);
  update_event(vm);
  vm->attention &= ~(uint32_t)VM_ATTN_EXCEPTION;
}

void vm_sys_reset(struct sonde_vm *vm, bool power_on)
{
  sys_reset(vm, power_on, false);
}

void vm_sys_reset_local(struct sonde_vm *vm)
{
  sys_reset(vm, false, true);
}

/* ---- the service call -------------------------------------------------------- */

/* vm_dbgh_service() (dbg_halt.c) without the call while no debugger is
 * involved: no C_DEBUGEN (nothing halts, no vector catch), no C_STEP or
 * MON_STEP, not halted and no debug request. Then its pre part only records
 * what its post part reads (kept here, in case the state changes in between),
 * and its post part does nothing. */
static inline bool dbgh_service(struct sonde_vm *vm, bool pre)
{
  struct vm_dbgh *d = vm->dbgh;
  if (!d)
    return false;
  if (!(d->dhcsr & DHCSR_C_DEBUGEN) && !(d->demcr & DEMCR_MON_STEP) && !d->stepping &&
      !d->mon_stepping && !d->halted && !(vm->attention & VM_ATTN_DEBUG)) {
    if (pre) {
      d->taken0 = vm->sys.exceptions_taken;
      d->resetting = vm->sys.reset_request;
    }
    return false;
  }
  return vm_dbgh_service(vm, pre);
}

/* The commonest service under DWT PC sampling (issue 20): the DWT's timer
 * due for one periodic sample and no other timer due, the core awake and
 * below the cycle limit, no attention (no stop or debug request, nothing
 * takeable: VM_ATTN_EXCEPTION is kept exact outside the service) and no
 * debugger involved, no reset or sleep-on-exit owed. The general path below
 * would record dbgh_service's pre state, fire that one timer, find no
 * exception to take (a sample changes no NVIC state) and set event_cycle:
 * this does just that. Returns false, having changed nothing, when the case
 * is not this one. */
static inline bool service_one_sample(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  struct vm_cpu *c = &vm->cpu;
  const struct vm_dbg *dbg = vm->dbg;
  if (vm->attention || !dbg || !s->next_valid || s->next_timer != (unsigned)dbg->timer ||
      s->next_due > c->cycles || s->reset_request || c->locked_up || c->sleeping ||
      c->cycles >= vm->max_cycles || s->sleep_on_exit)
    return false;
  const struct vm_dbgh *h = vm->dbgh;
  if (h && ((h->dhcsr & DHCSR_C_DEBUGEN) || (h->demcr & DEMCR_MON_STEP) || h->stepping ||
            h->mon_stepping || h->halted))
    return false;
  const unsigned id = s->next_timer;
  /* the earliest of the other timers (scan_timers without this one, whose
   * cache fire_timers would leave during the fire): none may be due */
  uint64_t e = UINT64_MAX;
  unsigned next = 0;
  for (uint32_t m = s->armed & ~(1u << id); m; m &= m - 1) {
    unsigned i = (unsigned)__builtin_ctz(m);
    if (s->timers[i].due < e) {
      e = s->timers[i].due;
      next = i;
    }
  }
  if (e <= c->cycles)
    return false;
  const uint64_t due = vm_dwt_sample_plain(vm); /* 0: not a single plain sample */
  if (!due)
    return false;
  /* the re-arm (vm_sys_timer_rearm on that cache), then update_event */
  const uint64_t e_others = e;
  vm_sys_timer_due_set(s, id, due);
  if (due < e || (due == e && id < next)) {
    e = due;
    next = id;
  }
  s->next2_due = e_others; /* below every timer but the earliest */
  s->next_due = e;
  s->next_timer = next;
  s->next_valid = true;
  if (vm->dbgh) /* dbgh_service(vm, true) */
    vm->dbgh->taken0 = s->exceptions_taken, vm->dbgh->resetting = 0;
  vm->event_cycle = e < vm->max_cycles ? e : vm->max_cycles;
  return true;
}

bool vm_sys_service_sample(struct sonde_vm *vm)
{
  return service_one_sample(vm);
}

/* vm_sys_service() after the timers due now fired: sleep, the cycle limit,
 * sleep-on-exit, the exception to take, event_cycle, attention and the
 * debugger's post step. */
static __attribute__((noinline)) bool service_rest(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  struct vm_cpu *c = &vm->cpu;
  /* vm->event_cycle: nothing reads it before the update_event() at the end,
   * on the way there; set it at once on the others. */
  if (VM_UNLIKELY(c->sleeping || c->cycles >= vm->max_cycles))
    update_event(vm);
  while (c->sleeping) {
    if (wake_condition(vm)) {
      c->sleeping = false;
      break;
    }
    if (VM_UNLIKELY(vm->dbg_observe)) /* a PC sample due now shows the sleep (dbg_dwt.c) */
      vm_dbg_asleep(vm);
    uint64_t next = next_timer_due(s);
    if (c->cycles >= vm->max_cycles) {
      vm_request_stop(vm, SONDE_VM_STOP_CYCLE_LIMIT);
      return true;
    }
    if (next == UINT64_MAX && vm->max_cycles == UINT64_MAX) {
      /* Asleep with nothing that could ever wake the core. */
      vm_request_stop(vm, SONDE_VM_STOP_HALT);
      return true;
    }
    if (next > vm->max_cycles)
      next = vm->max_cycles;
    if (next > c->cycles) {
      vm_power_sleep(vm, c->cycles, next); /* power.c: sleep current in [cycles, next) */
      s->sleep_cycles += next - c->cycles;
      c->cycles = next;
    }
    fire_due(vm, c->cycles);
  }
  if (c->cycles >= vm->max_cycles) {
    vm_request_stop(vm, SONDE_VM_STOP_CYCLE_LIMIT);
    return true;
  }
  if (s->sleep_on_exit) {
    s->sleep_on_exit = false;
    unsigned exc = vm_nvic_takeable(vm);
    if (exc)
      tail_chain(vm, exc, s->sleep_exc_return);
    else
      pop_stack(vm, s->sleep_exc_return);
  } else {
    unsigned exc = vm_nvic_takeable(vm);
    if (exc)
      exception_entry(vm, exc, false);
  }
  update_event(vm);
  exc_update(vm);
  if (dbgh_service(vm, false)) /* vector catch, arm a step (dbg_halt.c) */
    return true;
  return (vm->attention & VM_ATTN_STOP) != 0;
}

/* The general service: stops, the debugger, resets, lockup, the timers due,
 * then service_rest(). */
static __attribute__((noinline)) bool service_general(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  struct vm_cpu *c = &vm->cpu;
  if (vm->attention & VM_ATTN_STOP)
    return true;
  if (dbgh_service(vm, true)) /* halt request, C_STEP/MON_STEP done (dbg_halt.c) */
    return true;
  if (s->reset_request == VM_RESET_LOCAL)
    vm_sys_reset_local(vm);
  else if (s->reset_request) {
    vm_sys_reset(vm, false);
    if (vm->stop_at_reset) { /* sonde_vm_set_stop_at_reset */
      vm_request_stop(vm, SONDE_VM_STOP_HALT);
      return true;
    }
  }
  if (c->locked_up) {
    vm_request_stop(vm, SONDE_VM_STOP_LOCKUP);
    return true;
  }
  /* Awake and below the cycle limit, the service goes on to exc_update() at
   * its end: the updates of the timers that fire are left to that one. */
  s->defer_exc_update = !c->sleeping && c->cycles < vm->max_cycles;
  fire_timers(vm, c->cycles);
  s->defer_exc_update = false;
  return service_rest(vm);
}

/* exception_entry() where entry_quiet() declined, out of line: its stacker
 * stays out of the quiet service's stack frame. */
static __attribute__((noinline)) void entry_declined(struct sonde_vm *vm, unsigned exc)
{
  exception_entry(vm, exc, true);
}

/* The quiet case (issue 20 item 2): nothing asks for attention (no stop,
 * debug request or exception takeable, so no reset request and not asleep),
 * not locked up, no sleep-on-exit owed, below the cycle limit, and
 * exc_quiet(): no debugger involved, no stacking hook, no C_MASKINTS. The
 * general path would then pass its stop, debugger, reset and lockup tests
 * with nothing to do, record dbgh_service's pre state, fire the timers due
 * and go on as below; the entry needs no stacker (entry_quiet, or
 * exception_entry with `quiet`). Exception observers are called as on the
 * general path. A stop caused by the timers goes on in service_rest() as
 * before. */
static inline bool service_quiet_ok(const struct sonde_vm *vm)
{
  const struct vm_sys *s = &vm->sys;
  const struct vm_cpu *c = &vm->cpu;
  return !vm->attention && !(s->reset_request | c->sleeping | c->locked_up | s->sleep_on_exit) &&
         c->cycles < vm->max_cycles && exc_quiet(vm);
}

/* dbgh_service(vm, true) of the quiet service: the debugger not involved. */
static inline void dbgh_pre_quiet(struct sonde_vm *vm)
{
  if (vm->dbgh) {
    vm->dbgh->taken0 = vm->sys.exceptions_taken;
    vm->dbgh->resetting = 0;
  }
}

/* The quiet service after dbgh_service's pre record: the timers due, the
 * exception to take, event_cycle, attention and the post step. */
VM_INLINE bool service_quiet_fire(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  struct vm_cpu *c = &vm->cpu;
  s->defer_exc_update = true;
  fire_timers(vm, c->cycles);
  s->defer_exc_update = false;
  /* The timers' fire functions may stop the run; they do not put the core
   * to sleep, lock it up or set C_MASKINTS (no instruction runs). */
  assert(!c->sleeping && !s->sleep_on_exit && !c->locked_up && !s->maskints);
  if (VM_UNLIKELY(vm->attention))
    return service_rest(vm);
  unsigned exc = vm_nvic_takeable(vm);
  if (exc && !entry_quiet(vm, exc, false, 0, NULL))
    entry_declined(vm, exc);
  update_event(vm);
  exc_update(vm);
  if (dbgh_service(vm, false)) /* vector catch, arm a step (dbg_halt.c) */
    return true;
  return (vm->attention & VM_ATTN_STOP) != 0;
}

VM_INLINE bool service_quiet(struct sonde_vm *vm)
{
  dbgh_pre_quiet(vm);
  return service_quiet_fire(vm);
}

/* The direct service did the first timer's fire less its pend (`exc`, 0:
 * none) and cannot take `exc` at once: the pend as the fire would have made
 * it, then the quiet service goes on (the other timers due, the choice, the
 * entry). */
static __attribute__((noinline)) bool direct_declined(struct sonde_vm *vm, unsigned exc)
{
  if (exc) {
    vm->sys.defer_exc_update = true;
    vm_exc_pend(vm, exc);
  }
  return service_quiet_fire(vm);
}

/* The direct service (issue 20 item 2): the quiet case, with the first timer
 * due one with a direct function (SysTick, the demo timer). The general path
 * would fire it (its pend setting the pending bit and the choice's cache),
 * fire any other timer due, find that exception the one to take, and enter
 * it (clearing the pending bit, the cache back to "none pending"). When
 * nothing else enabled is pending, no other timer is due now or during the
 * stacking and the exception preempts, this fires the timer less its pend
 * and enters the exception at once (entry_quiet's `direct`): the same state
 * without the pending bit's round trip, the fire loop and the choice's
 * lookups. Anything else: direct_declined(). */
VM_INLINE bool service_direct(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  const unsigned id = s->next_timer;
  struct vm_sys_timer *t = &s->timers[id];
  dbgh_pre_quiet(vm);
  /* fire_timers()'s turn for this timer */
  unsigned exc;
  if (t->direct == vm_systick_direct && s->syst_rvr) {
    /* vm_systick_advance() with the re-arm and the cache's scan in one.
     * (Calling it, with vm_sys_timer_rearm and a scan when asked, costs 18
     * host instructions more per exception in bench_irq, callgrind.) */
    s->syst_csr |= VM_SYST_CSR_COUNTFLAG;
    exc = (s->syst_csr & VM_SYST_CSR_TICKINT) ? VM_EXC_SYSTICK : 0;
    s->syst_base_cycle += (uint64_t)s->syst_rvr + 1;
    t->due = s->syst_base_cycle; /* armed before and after */
    if (t->due < s->next2_due)
      s->next_due = t->due; /* still the earliest (vm_sys_timer_rearm) */
    else
      scan_timers(s);
  } else {
    s->firing = true;
    set_due(s, id, UINT64_MAX);
    scan_timers(s);
    exc = t->direct(vm, t->ctx);
    s->firing = false;
  }
  /* vm_nvic_takeable() once `exc` pended: nothing else enabled pending, so
   * `exc` if enabled and of a group above the execution priority */
  int g;
  bool fired = false;
  if (VM_UNLIKELY(!exc || vm->attention || !s->hp_valid || s->hp_exc ||
                  (exc != VM_EXC_SYSTICK && !vm_nvic_is_enabled(vm, exc)) ||
                  (g = vm_nvic_group_priority(vm, vm_nvic_priority(vm, exc))) >=
                      vm_nvic_execution_priority(vm, false) ||
                  !entry_quiet(vm, exc, true, g, &fired)))
    return direct_declined(vm, exc);
  update_event(vm);
  /* Without timers fired in the stacking and observers beyond the MTB,
   * nothing but the MTB's hook ran since the entry, and that only writes its
   * buffer and may ask for a stop: nothing is takeable (anything pending
   * stays below the execution priority, now raised), attention has no
   * exception or debug request (not asleep, no reset request) and the
   * debugger is still not involved, so exc_update() and dbgh_service's post
   * part would change nothing. */
  if (VM_LIKELY(!fired && !exc_observed_beyond_mtb(vm)))
    return (vm->attention & VM_ATTN_STOP) != 0;
  exc_update(vm);
  if (dbgh_service(vm, false)) /* vector catch, arm a step (dbg_halt.c) */
    return true;
  return (vm->attention & VM_ATTN_STOP) != 0;
}

bool vm_sys_service(struct sonde_vm *vm)
{
  const struct vm_sys *s = &vm->sys;
  if (s->next_valid && s->timers[s->next_timer].direct && s->next_due <= vm->cpu.cycles &&
      VM_LIKELY(service_quiet_ok(vm)))
    return service_direct(vm);
  if (service_one_sample(vm))
    return (vm->attention & VM_ATTN_STOP) != 0;
  if (VM_LIKELY(service_quiet_ok(vm)))
    return service_quiet(vm);
  return service_general(vm);
}
