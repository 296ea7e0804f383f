/* NVIC: pending/enabled/active state of every exception, priorities with
 * PRIGROUP, the choice of the exception to take, and the NVIC registers
 * (ISER/ICER/ISPR/ICPR/IABR/IPR, ICTR, STIR).
 * ARMv7-M ARM B1.5.4 (priorities), B3.4 (NVIC); ARMv6-M ARM B3.4. */
#include "nvic.h"

#include <assert.h>

#include "vm_internal.h"

static inline bool bit_get(const uint32_t *map, unsigned n)
{
  return (map[n >> 5] >> (n & 31)) & 1;
}

static inline void bit_put(uint32_t *map, unsigned n, bool v)
{
  if (v)
    map[n >> 5] |= 1u << (n & 31);
  else
    map[n >> 5] &= ~(1u << (n & 31));
}

bool vm_nvic_is_pending(const struct sonde_vm *vm, unsigned exc)
{
  return bit_get(vm->sys.nvic_pending, exc);
}

bool vm_nvic_is_active(const struct sonde_vm *vm, unsigned exc)
{
  return bit_get(vm->sys.nvic_active, exc);
}

static inline void set_active(struct sonde_vm *vm, unsigned exc, bool active)
{
  struct vm_sys *s = &vm->sys;
  bool was = bit_get(s->nvic_active, exc);
  if (was == active)
    return;
  bit_put(s->nvic_active, exc, active);
  if (active)
    s->nactive++;
  else
    s->nactive--;
}

void vm_nvic_set_active(struct sonde_vm *vm, unsigned exc, bool active)
{
  set_active(vm, exc, active);
}

/* The lookups below are static inline so the scans of this file (the
 * exception to take, the execution priority: several per exception taken)
 * inline them; the exported vm_nvic_* versions wrap them. */

static inline unsigned num_exc(const struct sonde_vm *vm)
{
  return VM_EXC_IRQ0 + vm->sys.num_irqs;
}

unsigned vm_nvic_num_exc(const struct sonde_vm *vm)
{
  return num_exc(vm);
}

/* Whether exception `exc` exists on this core and is enabled (may be taken). */
static inline bool enabled(const struct sonde_vm *vm, unsigned exc)
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
    if (exc >= VM_EXC_IRQ0 && exc < num_exc(vm))
      return bit_get(s->nvic_enabled, exc);
    return false;
  }
}

bool vm_nvic_is_enabled(const struct sonde_vm *vm, unsigned exc)
{
  return enabled(vm, exc);
}

/* Raw priority of an exception: -3 Reset, -2 NMI, -1 HardFault, else the
 * programmed 8-bit value (only the top prio_bits implemented). */
static inline int priority(const struct sonde_vm *vm, unsigned exc)
{
  if (exc == VM_EXC_RESET)
    return -3;
  if (exc == VM_EXC_NMI)
    return -2;
  if (exc == VM_EXC_HARDFAULT)
    return -1;
  return vm->sys.priority[exc];
}

int vm_nvic_priority(const struct sonde_vm *vm, unsigned exc)
{
  return priority(vm, exc);
}

/* Group priority: the priority with the subpriority field masked off
 * (AIRCR.PRIGROUP = n: bits [n:0] are the subpriority). */
static inline int group(const struct sonde_vm *vm, int prio)
{
  if (prio < 0)
    return prio;
  unsigned prigroup = vm->has_v7m ? (vm->sys.aircr >> 8) & 7 : 0;
  unsigned mask = 0xFFu << (prigroup + 1);
  return prio & (int)(mask & 0xFF);
}

int vm_nvic_group_priority(const struct sonde_vm *vm, int prio)
{
  return group(vm, prio);
}

uint8_t vm_nvic_prio_mask(const struct sonde_vm *vm)
{
  return (uint8_t)(0xFFu << (8 - vm->sys.prio_bits));
}

/* The highest group priority of the active exceptions (256: none). Out of
 * line, as its callers mostly have nothing active: they then need no saved
 * registers. */
static __attribute__((noinline)) int active_group(const struct sonde_vm *vm)
{
  const struct vm_sys *s = &vm->sys;
  int highest = 256;
  unsigned n = num_exc(vm);
  for (unsigned w = 0; w <= (n - 1) / 32; w++) {
    uint32_t bits = s->nvic_active[w];
    while (bits) {
      unsigned exc = w * 32 + (unsigned)__builtin_ctz(bits);
      bits &= bits - 1;
      int gp = group(vm, priority(vm, exc));
      if (gp < highest)
        highest = gp;
    }
  }
  return highest;
}

/* ARMv7-M ARM B1.5.4 ExecutionPriority(): the boosted priority of the active
 * exceptions and the mask registers. 256 is "no boost". `ignore_primask` is
 * for the WFI wake-up condition. */
static inline int execution_priority(const struct sonde_vm *vm, bool ignore_primask)
{
  int highest = vm->sys.nactive ? active_group(vm) : 256;
  int boost = 256;
  const struct vm_cpu *c = &vm->cpu;
  if (vm->has_v7m && (c->basepri & 0xFF))
    boost = group(vm, (int)(c->basepri & 0xFF));
  if ((c->primask & 1) && !ignore_primask)
    boost = 0;
  if (vm->has_v7m && (c->faultmask & 1))
    boost = -1;
  return boost < highest ? boost : highest;
}

int vm_nvic_execution_priority(const struct sonde_vm *vm, bool ignore_primask)
{
  return execution_priority(vm, ignore_primask);
}

/* The pending, enabled exception that would be taken next: lowest group
 * priority, then lowest subpriority, then lowest number. Returns 0 if none;
 * its raw priority in *prio (1000 if none). Out of line: the cache below
 * answers most calls, and its hit path then needs no saved registers. */
static __attribute__((noinline)) unsigned scan_highest_pending(const struct sonde_vm *vm,
                                                               int *prio)
{
  const struct vm_sys *s = &vm->sys;
  unsigned n = num_exc(vm), best = 0;
  int best_prio = 1000, best_group = 1000;
  for (unsigned w = 0; w <= (n - 1) / 32; w++) {
    uint32_t bits = s->nvic_pending[w];
    while (bits) {
      unsigned exc = w * 32 + (unsigned)__builtin_ctz(bits);
      bits &= bits - 1;
      if (exc >= n || !enabled(vm, exc))
        continue;
      int p = priority(vm, exc), g = group(vm, p);
      if (g < best_group || (g == best_group && p < best_prio)) {
        best = exc;
        best_prio = p;
        best_group = g;
      }
    }
  }
  *prio = best_prio;
  return best;
}

/* The cached answer of scan_highest_pending() (sys.h, hp_valid). */
static inline unsigned highest_pending(struct sonde_vm *vm, int *prio)
{
  struct vm_sys *s = &vm->sys;
  if (VM_UNLIKELY(!s->hp_valid)) {
    s->hp_exc = scan_highest_pending(vm, &s->hp_prio);
    s->hp_valid = true;
  }
#ifndef NDEBUG
  { /* a writer that forgot vm_sys_nvic_changed() shows up here */
    int p;
    unsigned e = scan_highest_pending(vm, &p);
    assert(e == s->hp_exc && p == s->hp_prio);
    (void)e;
  }
#endif
  *prio = s->hp_prio;
  return s->hp_exc;
}

unsigned vm_nvic_highest_pending(struct sonde_vm *vm, int *prio)
{
  int p;
  unsigned exc = highest_pending(vm, &p);
  if (prio)
    *prio = p;
  return exc;
}

/* No exception is pending (as scan_highest_pending() reads the bits); then
 * the cache says so. */
static inline bool none_pending(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  unsigned words = (num_exc(vm) - 1) / 32 + 1;
  for (unsigned w = 0; w < words; w++)
    if (s->nvic_pending[w])
      return false;
  s->hp_exc = 0;
  s->hp_prio = 1000;
  return true;
}

/* Keep the cache exact across a change of one pending bit without a new scan
 * where that is cheap: a newly pending exception either beats the cached
 * choice or does not (the scan's order is group, priority, then number), and
 * clearing anything but the cached choice leaves it the choice. */
static inline void note_pending(struct sonde_vm *vm, unsigned exc, bool pending)
{
  struct vm_sys *s = &vm->sys;
  if (!s->hp_valid)
    return;
  if (exc == s->hp_exc) {
    if (!pending)
      s->hp_valid = none_pending(vm); /* else the choice itself went: scan when asked */
    return;
  }
  if (!pending || exc >= num_exc(vm) || !enabled(vm, exc))
    return;
  int p = priority(vm, exc), g = group(vm, p);
  int bg = s->hp_exc ? group(vm, s->hp_prio) : 1000;
  if (g < bg || (g == bg && (p < s->hp_prio || (p == s->hp_prio && exc < s->hp_exc)))) {
    s->hp_exc = exc;
    s->hp_prio = p;
  }
}

void vm_nvic_set_pending(struct sonde_vm *vm, unsigned exc, bool pending)
{
  bit_put(vm->sys.nvic_pending, exc, pending);
  note_pending(vm, exc, pending);
}

void vm_nvic_activate(struct sonde_vm *vm, unsigned exc)
{
  bit_put(vm->sys.nvic_pending, exc, false);
  note_pending(vm, exc, false);
  set_active(vm, exc, true);
}

/* With DHCSR.C_MASKINTS: the highest pending exception below PendSV
 * (faults, SVCall, DebugMonitor, NMI) that may preempt, or 0. */
unsigned vm_nvic_takeable_masked(const struct sonde_vm *vm)
{
  unsigned best = 0;
  int best_prio = 1000, best_group = 1000;
  for (unsigned exc = VM_EXC_NMI; exc < VM_EXC_PENDSV; exc++) {
    if (!vm_nvic_is_pending(vm, exc) || !vm_nvic_is_enabled(vm, exc))
      continue;
    int p = vm_nvic_priority(vm, exc), g = vm_nvic_group_priority(vm, p);
    if (g < best_group || (g == best_group && p < best_prio)) {
      best = exc;
      best_prio = p;
      best_group = g;
    }
  }
  if (best && best_group < vm_nvic_execution_priority(vm, false))
    return best;
  return 0;
}

/* vm_nvic_takeable() with something pending (or the cache to fill). */
static __attribute__((noinline)) unsigned takeable_pending(struct sonde_vm *vm)
{
  int prio;
  unsigned exc = highest_pending(vm, &prio);
  if (!exc)
    return 0;
  if (vm->sys.maskints && exc >= VM_EXC_PENDSV) {
    /* Halting debug masks PendSV, SysTick and IRQs: look for anything else. */
    return vm_nvic_takeable_masked(vm);
  }
  if (group(vm, prio) < execution_priority(vm, false))
    return exc;
  return 0;
}

/* The exception to take now, or 0: the highest pending one if its group
 * priority is higher (lower number) than the execution priority. Asked
 * about five times per exception, mostly with nothing pending: that answer
 * comes without saving registers. */
unsigned vm_nvic_takeable(struct sonde_vm *vm)
{
  const struct vm_sys *s = &vm->sys;
  if (VM_LIKELY(s->hp_valid) && !s->hp_exc) {
    assert(!scan_highest_pending(vm, &(int){0})); /* as highest_pending() checks */
    return 0;
  }
  return takeable_pending(vm);
}

/* ---- NVIC registers (offsets from 0xE000E000) ---------------------------- */

static unsigned nregs(const struct sonde_vm *vm)
{
  return (vm->sys.num_irqs + 31) / 32;
}

/* Bitmap register word `i` of IRQs (IRQ 32*i .. 32*i+31) from an exception map. */
static uint32_t irq_word(const struct sonde_vm *vm, const uint32_t *map, unsigned i)
{
  uint32_t v = 0;
  for (unsigned b = 0; b < 32; b++) {
    unsigned irq = i * 32 + b;
    if (irq < vm->sys.num_irqs && bit_get(map, VM_EXC_IRQ0 + irq))
      v |= 1u << b;
  }
  return v;
}

bool vm_nvic_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value)
{
  struct vm_sys *s = &vm->sys;
  if (off == 0x004) { /* ICTR (not on ARMv6-M) */
    *value = vm->has_v7m ? nregs(vm) - 1 : 0;
    return true;
  }
  if (off >= 0x100 && off < 0x380) {
    unsigned group = (off - 0x100) >> 7, i = (off & 0x7F) >> 2;
    if (i >= nregs(vm) || (group == 4 && !vm->has_v7m)) {
      *value = 0;
      return true;
    }
    switch (group) {
    case 0: case 1: *value = irq_word(vm, s->nvic_enabled, i); break; /* ISER, ICER */
    case 2: case 3: *value = irq_word(vm, s->nvic_pending, i); break; /* ISPR, ICPR */
    case 4: *value = irq_word(vm, s->nvic_active, i); break;          /* IABR */
    default: *value = 0; break;
    }
    return true;
  }
  if (off >= 0x400 && off < 0x5F0) { /* IPR */
    uint32_t v = 0;
    for (unsigned b = 0; b < 4; b++) {
      unsigned irq = off - 0x400 + b;
      if (irq < s->num_irqs)
        v |= (uint32_t)s->priority[VM_EXC_IRQ0 + irq] << (8 * b);
    }
    *value = v;
    return true;
  }
  if (off == 0xF00) { /* STIR is write-only */
    *value = 0;
    return true;
  }
  return false;
}

/* `value` is already shifted to the byte lanes written; `mask` says which. */
bool vm_nvic_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask)
{
  struct vm_sys *s = &vm->sys;
  if (off == 0x004)
    return true;
  if (off >= 0x100 && off < 0x380) {
    unsigned group = (off - 0x100) >> 7, i = (off & 0x7F) >> 2;
    if (i >= nregs(vm))
      return true;
    value &= mask;
    for (unsigned b = 0; b < 32; b++) {
      unsigned irq = i * 32 + b;
      if (!((value >> b) & 1) || irq >= s->num_irqs)
        continue;
      unsigned exc = VM_EXC_IRQ0 + irq;
      switch (group) {
      case 0: bit_put(s->nvic_enabled, exc, true); break;
      case 1: bit_put(s->nvic_enabled, exc, false); break;
      case 2:
        if (!bit_get(s->nvic_pending, exc) && (s->scr & (1u << 4)))
          s->event_register = true; /* SCR.SEVONPEND */
        bit_put(s->nvic_pending, exc, true);
        break;
      case 3:
        /* A level-sensitive line still high pends again at once. */
        bit_put(s->nvic_pending, exc, bit_get(s->irq_level, exc) && !bit_get(s->nvic_active, exc));
        break;
      default: break; /* IABR is read-only */
      }
    }
    vm_sys_nvic_changed(s);
    vm_exc_update(vm);
    return true;
  }
  if (off >= 0x400 && off < 0x5F0) {
    uint8_t pm = vm_nvic_prio_mask(vm);
    for (unsigned b = 0; b < 4; b++) {
      unsigned irq = off - 0x400 + b;
      if (((mask >> (8 * b)) & 0xFF) && irq < s->num_irqs)
        s->priority[VM_EXC_IRQ0 + irq] = (uint8_t)(value >> (8 * b)) & pm;
    }
    vm_sys_nvic_changed(s);
    vm_exc_update(vm);
    return true;
  }
  if (off == 0xF00) { /* STIR: INTID in bits [8:0] */
    if (vm->has_v7m && (value & 0x1FF) < s->num_irqs)
      vm_exc_set_pending(vm, VM_EXC_IRQ0 + (value & 0x1FF));
    return true;
  }
  return false;
}

/* ---- interrupt lines of peripherals -------------------------------------- */

void vm_exc_set_pending(struct sonde_vm *vm, unsigned exc)
{
  if (exc >= VM_MAX_EXC)
    return;
  if (exc >= VM_EXC_IRQ0 && !bit_get(vm->sys.nvic_pending, exc) && (vm->sys.scr & (1u << 4)))
    vm->sys.event_register = true; /* SCR.SEVONPEND: a newly pending interrupt */
  bit_put(vm->sys.nvic_pending, exc, true);
  note_pending(vm, exc, true);
  vm_exc_update(vm);
}

void vm_irq_pulse(struct sonde_vm *vm, unsigned irq)
{
  if (irq < vm->sys.num_irqs)
    vm_exc_set_pending(vm, VM_EXC_IRQ0 + irq);
}

void vm_irq_set_level(struct sonde_vm *vm, unsigned irq, bool high)
{
  if (irq >= vm->sys.num_irqs)
    return;
  unsigned exc = VM_EXC_IRQ0 + irq;
  bool was = bit_get(vm->sys.irq_level, exc);
  bit_put(vm->sys.irq_level, exc, high);
  if (high && !was)
    vm_exc_set_pending(vm, exc);
}

void vm_nvic_deactivate(struct sonde_vm *vm, unsigned exc)
{
  set_active(vm, exc, false);
  /* An IRQ whose line is still high pends again. */
  if (exc >= VM_EXC_IRQ0 && bit_get(vm->sys.irq_level, exc)) {
    bit_put(vm->sys.nvic_pending, exc, true);
    note_pending(vm, exc, true);
  }
}
