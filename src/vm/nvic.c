/* NVIC: pending/enabled/active state of every exception, priorities with
 * PRIGROUP, the choice of the exception to take, and the NVIC registers
 * (ISER/ICER/ISPR/ICPR/IABR/IPR, ICTR, STIR).
 * ARMv7-M ARM B1.5.4 (priorities), B3.4 (NVIC); ARMv6-M ARM B3.4. */
#include "nvic.h"

/* The highest group priority of the active exceptions (256: none): what
 * vm_nvic_active_group() caches. */
int vm_nvic_active_group_scan(const struct sonde_vm *vm)
{
  const struct vm_sys *s = &vm->sys;
  int highest = 256;
  unsigned n = vm_nvic_num_exc(vm);
  for (unsigned w = 0; w <= (n - 1) / 32; w++) {
    uint32_t bits = s->nvic_active[w];
    while (bits) {
      unsigned exc = w * 32 + (unsigned)__builtin_ctz(bits);
      bits &= bits - 1;
      int gp = vm_nvic_group_priority(vm, vm_nvic_priority(vm, exc));
      if (gp < highest)
        highest = gp;
    }
  }
  return highest;
}

/* The pending, enabled exception that would be taken next: what
 * vm_nvic_highest_pending() caches. */
unsigned vm_nvic_highest_pending_scan(const struct sonde_vm *vm, int *prio)
{
  const struct vm_sys *s = &vm->sys;
  unsigned n = vm_nvic_num_exc(vm), best = 0;
  int best_prio = 1000, best_group = 1000;
  for (unsigned w = 0; w <= (n - 1) / 32; w++) {
    uint32_t bits = s->nvic_pending[w];
    while (bits) {
      unsigned exc = w * 32 + (unsigned)__builtin_ctz(bits);
      bits &= bits - 1;
      if (exc >= n || !vm_nvic_is_enabled(vm, exc))
        continue;
      int p = vm_nvic_priority(vm, exc), g = vm_nvic_group_priority(vm, p);
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
    if (irq < vm->sys.num_irqs && vm_nvic_bit(map, VM_EXC_IRQ0 + irq))
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
    /* the bits written, lowest first (only those of existing interrupts) */
    for (uint32_t m = value; m; m &= m - 1) {
      unsigned b = (unsigned)__builtin_ctz(m);
      unsigned irq = i * 32 + b;
      if (irq >= s->num_irqs)
        break;
      unsigned exc = VM_EXC_IRQ0 + irq;
      switch (group) {
      case 0: vm_nvic_bit_put(s->nvic_enabled, exc, true); break;
      case 1: vm_nvic_bit_put(s->nvic_enabled, exc, false); break;
      case 2:
        if (!vm_nvic_bit(s->nvic_pending, exc) && (s->scr & (1u << 4)))
          s->event_register = true; /* SCR.SEVONPEND */
        vm_nvic_set_pending(vm, exc, true); /* keeps the pending choice's cache */
        break;
      case 3:
        /* A level-sensitive line still high pends again at once. */
        vm_nvic_set_pending(vm, exc,
                            vm_nvic_bit(s->irq_level, exc) && !vm_nvic_bit(s->nvic_active, exc));
        break;
      default: break; /* IABR is read-only */
      }
    }
    if (group < 2) /* enables change which pending exception is taken */
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
  if (exc < VM_MAX_EXC)
    vm_exc_pend(vm, exc);
}

void vm_irq_pulse(struct sonde_vm *vm, unsigned irq)
{
  if (irq < vm->sys.num_irqs)
    vm_exc_pend(vm, VM_EXC_IRQ0 + irq);
}

void vm_irq_set_level(struct sonde_vm *vm, unsigned irq, bool high)
{
  vm_nvic_irq_level(vm, irq, high);
}
