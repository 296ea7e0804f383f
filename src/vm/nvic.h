/* Internal interface of the NVIC and exception-priority logic (nvic.c), used
 * by exception.c and scb.c. ARMv7-M ARM B1.5.4, B3.4.
 *
 * The lookups the exception path makes several times per exception (the
 * exception to take, the execution priority, activation and deactivation)
 * are static inline here, so exception.c inlines them; the scans behind their
 * caches stay out of line in nvic.c. */
#ifndef SONDE_VM_NVIC_H
#define SONDE_VM_NVIC_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "vm_internal.h"

static inline bool vm_nvic_bit(const uint32_t *map, unsigned n)
{
  return (map[n >> 5] >> (n & 31)) & 1;
}

static inline void vm_nvic_bit_put(uint32_t *map, unsigned n, bool v)
{
  if (v)
    map[n >> 5] |= 1u << (n & 31);
  else
    map[n >> 5] &= ~(1u << (n & 31));
}

static inline bool vm_nvic_is_pending(const struct sonde_vm *vm, unsigned exc)
{
  return vm_nvic_bit(vm->sys.nvic_pending, exc);
}

static inline bool vm_nvic_is_active(const struct sonde_vm *vm, unsigned exc)
{
  return vm_nvic_bit(vm->sys.nvic_active, exc);
}

static inline unsigned vm_nvic_num_exc(const struct sonde_vm *vm)
{
  return VM_EXC_IRQ0 + vm->sys.num_irqs;
}

/* Whether exception `exc` exists on this core and is enabled (may be taken). */
static inline bool vm_nvic_is_enabled(const struct sonde_vm *vm, unsigned exc)
{
  const struct vm_sys *s = &vm->sys;
  switch (exc) {
  case VM_EXC_NMI: case VM_EXC_HARDFAULT: case VM_EXC_SVCALL: case VM_EXC_PENDSV:
  case VM_EXC_SYSTICK:
    return true;
  case VM_EXC_MEMMANAGE:
    return vm->has_v7m && (s->shcsr & (1u << 16));
  case VM_EXC_BUSFAULT:
    return vm->has_v7m && (s->shcsr & (1u << 17));
  case VM_EXC_USAGEFAULT:
    return vm->has_v7m && (s->shcsr & (1u << 18));
  case VM_EXC_DEBUGMONITOR:
    return vm->has_v7m; /* pended by the debug blocks only with DEMCR.MON_EN */
  default:
    if (exc >= VM_EXC_IRQ0 && exc < vm_nvic_num_exc(vm))
      return vm_nvic_bit(s->nvic_enabled, exc);
    return false;
  }
}

/* Raw priority of an exception: -3 Reset, -2 NMI, -1 HardFault, else the
 * programmed 8-bit value (only the top prio_bits implemented). */
static inline int vm_nvic_priority(const struct sonde_vm *vm, unsigned exc)
{
  if (exc == VM_EXC_RESET)
    return -3;
  if (exc == VM_EXC_NMI)
    return -2;
  if (exc == VM_EXC_HARDFAULT)
    return -1;
  return vm->sys.priority[exc];
}

/* Group priority: the priority with the subpriority field masked off
 * (AIRCR.PRIGROUP = n: bits [n:0] are the subpriority). */
static inline int vm_nvic_group_priority(const struct sonde_vm *vm, int prio)
{
  assert(vm->sys.group_mask ==
         (int)((0xFFu << ((vm->has_v7m ? (vm->sys.aircr >> 8) & 7 : 0) + 1)) & 0xFF));
  return prio < 0 ? prio : prio & vm->sys.group_mask;
}

/* Keep sys.group_mask (the group bits of a priority) after AIRCR.PRIGROUP
 * changed, and drop the caches that depend on it. */
static inline void vm_nvic_prigroup_changed(struct sonde_vm *vm)
{
  unsigned prigroup = vm->has_v7m ? (vm->sys.aircr >> 8) & 7 : 0;
  vm->sys.group_mask = (int)((0xFFu << (prigroup + 1)) & 0xFF);
  vm_sys_nvic_changed(&vm->sys);
}

static inline uint8_t vm_nvic_prio_mask(const struct sonde_vm *vm)
{
  return (uint8_t)(0xFFu << (8 - vm->sys.prio_bits));
}

/* exception.c: recompute the VM_ATTN_EXCEPTION request after any change to
 * pending/enabled/priority/mask state (nothing while defer_exc_update). */
void vm_exc_update(struct sonde_vm *vm);

/* Out of line (nvic.c): the scans behind the caches below. */
int vm_nvic_active_group_scan(const struct sonde_vm *vm);
unsigned vm_nvic_highest_pending_scan(const struct sonde_vm *vm, int *prio);
unsigned vm_nvic_takeable_masked(const struct sonde_vm *vm);

/* The highest group priority of the active exceptions (256: none), cached
 * (sys.h, act_valid). A cache, so filling it is no change of the VM: const
 * callers (the execution priority for the CPU) may ask too. */
VM_INLINE int vm_nvic_active_group(const struct sonde_vm *vm)
{
  struct vm_sys *s = (struct vm_sys *)&vm->sys;
  if (VM_UNLIKELY(!s->act_valid)) {
    s->act_group = vm_nvic_active_group_scan(vm);
    s->act_valid = true;
  }
  assert(s->act_group == vm_nvic_active_group_scan(vm));
  return s->act_group;
}

/* ARMv7-M ARM B1.5.4 ExecutionPriority(): the boosted priority of the active
 * exceptions and the mask registers. 256 is "no boost". `ignore_primask` is
 * for the WFI wake-up condition. */
VM_INLINE int vm_nvic_execution_priority(const struct sonde_vm *vm, bool ignore_primask)
{
  int highest = vm->sys.nactive ? vm_nvic_active_group(vm) : 256;
  int boost = 256;
  const struct vm_cpu *c = &vm->cpu;
  if (vm->has_v7m && (c->basepri & 0xFF))
    boost = vm_nvic_group_priority(vm, (int)(c->basepri & 0xFF));
  if ((c->primask & 1) && !ignore_primask)
    boost = 0;
  if (vm->has_v7m && (c->faultmask & 1))
    boost = -1;
  return boost < highest ? boost : highest;
}

/* The pending, enabled exception that would be taken next (lowest group
 * priority, then lowest subpriority, then lowest number), or 0; its raw
 * priority in *prio (1000 if none). Cached (sys.h, hp_valid): hence the
 * non-const vm. */
VM_INLINE unsigned vm_nvic_highest_pending(struct sonde_vm *vm, int *prio)
{
  struct vm_sys *s = &vm->sys;
  if (VM_UNLIKELY(!s->hp_valid)) {
    s->hp_exc = vm_nvic_highest_pending_scan(vm, &s->hp_prio);
    s->hp_group = s->hp_exc ? vm_nvic_group_priority(vm, s->hp_prio) : 1000;
    s->hp_valid = true;
  }
#ifndef NDEBUG
  { /* a writer that forgot vm_sys_nvic_changed() shows up here */
    int p;
    unsigned e = vm_nvic_highest_pending_scan(vm, &p);
    assert(e == s->hp_exc && p == s->hp_prio);
    assert(s->hp_group == (e ? vm_nvic_group_priority(vm, p) : 1000));
    (void)e;
  }
#endif
  if (prio)
    *prio = s->hp_prio;
  return s->hp_exc;
}

/* The exception to take now, or 0: the highest pending one if its group
 * priority is higher (lower number) than the execution priority. Asked
 * several times per exception, mostly with nothing pending. */
VM_INLINE unsigned vm_nvic_takeable(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  unsigned exc = vm_nvic_highest_pending(vm, NULL);
  if (!exc)
    return 0;
  if (VM_UNLIKELY(s->maskints) && exc >= VM_EXC_PENDSV) {
    /* Halting debug masks PendSV, SysTick and IRQs: look for anything else. */
    return vm_nvic_takeable_masked(vm);
  }
  if (s->hp_group < vm_nvic_execution_priority(vm, false))
    return exc;
  return 0;
}

/* No exception is pending (as the scan reads the bits); then the cache says
 * so. */
VM_INLINE bool vm_nvic_none_pending(struct vm_sys *s)
{
  unsigned words = (VM_EXC_IRQ0 + s->num_irqs - 1) / 32 + 1;
  for (unsigned w = 0; w < words; w++)
    if (s->nvic_pending[w])
      return false;
  s->hp_exc = 0;
  s->hp_prio = 1000;
  s->hp_group = 1000;
  return true;
}

/* Keep the cache exact across a change of one pending bit without a new scan
 * where that is cheap: a newly pending exception either beats the cached
 * choice or does not (the scan's order is group, priority, then number), and
 * clearing anything but the cached choice leaves it the choice. */
VM_INLINE void vm_nvic_note_pending(struct sonde_vm *vm, unsigned exc, bool pending)
{
  struct vm_sys *s = &vm->sys;
  if (!s->hp_valid)
    return;
  if (exc == s->hp_exc) {
    if (!pending)
      s->hp_valid = vm_nvic_none_pending(s); /* else the choice itself went: scan when asked */
    return;
  }
  if (!pending || !vm_nvic_is_enabled(vm, exc))
    return;
  int p = vm_nvic_priority(vm, exc), g = vm_nvic_group_priority(vm, p);
  if (g < s->hp_group || (g == s->hp_group && (p < s->hp_prio ||
                                               (p == s->hp_prio && exc < s->hp_exc)))) {
    s->hp_exc = exc;
    s->hp_prio = p;
    s->hp_group = g;
  }
}

VM_INLINE void vm_nvic_set_pending(struct sonde_vm *vm, unsigned exc, bool pending)
{
  vm_nvic_bit_put(vm->sys.nvic_pending, exc, pending);
  vm_nvic_note_pending(vm, exc, pending);
}

VM_INLINE void vm_nvic_set_active(struct sonde_vm *vm, unsigned exc, bool active)
{
  struct vm_sys *s = &vm->sys;
  if (vm_nvic_bit(s->nvic_active, exc) == active)
    return;
  vm_nvic_bit_put(s->nvic_active, exc, active);
  if (active) {
    int g = vm_nvic_group_priority(vm, vm_nvic_priority(vm, exc));
    if (!s->nactive++) {
      s->act_group = g; /* the only one */
      s->act_valid = true;
    } else if (s->act_valid && g < s->act_group) {
      s->act_group = g;
    }
  } else if (!--s->nactive) {
    s->act_group = 256; /* none left */
    s->act_valid = true;
  } else if (vm_nvic_group_priority(vm, vm_nvic_priority(vm, exc)) <= s->act_group) {
    s->act_valid = false; /* it may have been the highest: scan when asked */
  }
}

/* Exception entry: `exc` stops pending and becomes active. */
VM_INLINE void vm_nvic_activate(struct sonde_vm *vm, unsigned exc)
{
  vm_nvic_set_pending(vm, exc, false);
  vm_nvic_set_active(vm, exc, true);
}

/* `exc` (not active, of group priority g) becomes active: the active bit,
 * the count and the active group's cache. */
VM_INLINE void vm_nvic_activate_group(struct vm_sys *s, unsigned exc, int g)
{
  s->nvic_active[exc >> 5] |= 1u << (exc & 31);
  if (!s->nactive++) {
    s->act_group = g; /* the only one */
    s->act_valid = true;
  } else if (s->act_valid && g < s->act_group) {
    s->act_group = g;
  }
}

/* vm_nvic_activate() of the cached choice (hp_valid, exc == hp_exc, not
 * active): its group priority is the cache's, and clearing its pending bit
 * leaves "nothing pending" or a new scan. */
VM_INLINE void vm_nvic_activate_choice(struct sonde_vm *vm, unsigned exc)
{
  struct vm_sys *s = &vm->sys;
  assert(s->hp_valid && exc == s->hp_exc && !vm_nvic_is_active(vm, exc));
  const int g = s->hp_group;
  s->nvic_pending[exc >> 5] &= ~(1u << (exc & 31));
  s->hp_valid = vm_nvic_none_pending(s);
  vm_nvic_activate_group(s, exc, g);
}

/* Exception return: `exc` is no longer active; an IRQ whose level-sensitive
 * line is still high pends again. */
VM_INLINE void vm_nvic_deactivate(struct sonde_vm *vm, unsigned exc)
{
  vm_nvic_set_active(vm, exc, false);
  if (exc >= VM_EXC_IRQ0 && vm_nvic_bit(vm->sys.irq_level, exc))
    vm_nvic_set_pending(vm, exc, true);
}

void vm_exc_update(struct sonde_vm *vm);

/* vm_exc_set_pending() (sys.h) for exc < VM_MAX_EXC, inline: a timer that
 * pends its interrupt in the service leaves the update to the service. */
VM_INLINE void vm_exc_pend(struct sonde_vm *vm, unsigned exc)
{
  struct vm_sys *s = &vm->sys;
  if (exc >= VM_EXC_IRQ0 && (s->scr & (1u << 4)) && !vm_nvic_bit(s->nvic_pending, exc))
    s->event_register = true; /* SCR.SEVONPEND: a newly pending interrupt */
  vm_nvic_set_pending(vm, exc, true);
  if (!s->defer_exc_update)
    vm_exc_update(vm);
}

/* vm_nvic_irq_level() less the pend: the line's new level, and the
 * exception its rising edge pends (0: none), which the caller pends or,
 * for the direct service (exception.c), takes at once. */
VM_INLINE unsigned vm_nvic_irq_level_edge(struct sonde_vm *vm, unsigned irq, bool high)
{
  if (irq >= vm->sys.num_irqs)
    return 0;
  const unsigned exc = VM_EXC_IRQ0 + irq;
  const bool was = vm_nvic_bit(vm->sys.irq_level, exc);
  vm_nvic_bit_put(vm->sys.irq_level, exc, high);
  return high && !was ? exc : 0;
}

/* vm_irq_set_level() (sys.h), inline: the demo timer sets its line from its
 * timed event, in the service (periph_timer.c). */
VM_INLINE void vm_nvic_irq_level(struct sonde_vm *vm, unsigned irq, bool high)
{
  const unsigned exc = vm_nvic_irq_level_edge(vm, irq, high);
  if (exc)
    vm_exc_pend(vm, exc);
}

/* SysTick's timed event (systick.c): the counter reached zero. It sets
 * COUNTFLAG, pends SysTick with TICKINT and re-arms RVR+1 cycles later (RVR
 * = 0: the counter stops at zero). Inline, as the service fires it for most
 * exceptions of a SysTick-driven program (exception.c, fire_timers). */
#define VM_SYST_CSR_TICKINT 2u
#define VM_SYST_CSR_COUNTFLAG (1u << 16)
void vm_systick_fire(struct sonde_vm *vm, void *ctx);
unsigned vm_systick_direct(struct sonde_vm *vm, void *ctx);
/* The wrap less the pend: returns VM_EXC_SYSTICK with TICKINT (to pend),
 * else 0 (the timer's direct function, exception.c inlines it). */
VM_INLINE unsigned vm_systick_advance(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  s->syst_csr |= VM_SYST_CSR_COUNTFLAG;
  const unsigned exc = (s->syst_csr & VM_SYST_CSR_TICKINT) ? VM_EXC_SYSTICK : 0;
  if (s->syst_rvr == 0) {
    s->syst_cvr = 0;
    vm_sys_timer_set(vm, s->syst_timer, UINT64_MAX);
    return exc;
  }
  s->syst_base_cycle += (uint64_t)s->syst_rvr + 1;
  assert(s->firing);
  vm_sys_timer_rearm(s, (unsigned)s->syst_timer, s->syst_base_cycle);
  return exc;
}

/* The pend and the timer's re-arm touch different state: their order does
 * not matter. */
VM_INLINE void vm_systick_wrap(struct sonde_vm *vm)
{
  const unsigned exc = vm_systick_advance(vm);
  if (exc)
    vm_exc_pend(vm, exc);
}

/* NVIC registers at 0xE000E000 + off; false if `off` is not an NVIC register. */
bool vm_nvic_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value);
bool vm_nvic_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask);

/* scb.c / systick.c register blocks. */
bool vm_scb_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value);
bool vm_scb_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask);
bool vm_systick_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value, bool debug);
bool vm_systick_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask);
void vm_systick_reset(struct sonde_vm *vm);
int vm_systick_init(struct sonde_vm *vm);

#endif
