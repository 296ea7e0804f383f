/* Demo timer: counts core cycles up from 0; when the count reaches LOAD it
 * sets STATUS.MATCH and (periodic) starts again from 0, or (one-shot) stops.
 * The interrupt is level-sensitive: MATCH && CTRL.IE; the handler clears
 * MATCH by writing 1 to it. Scheduled as a timed event, so a match interrupt
 * is pending exactly LOAD cycles after the enabling write.
 *
 *   0x00 CTRL    RW: bit0 EN, bit1 IE, bit2 PERIODIC
 *   0x04 LOAD    RW: period in cycles (0 stops the timer)
 *   0x08 COUNT   R:  cycles since the period started
 *   0x0C STATUS  R/W1C: bit0 MATCH
 */
#include <assert.h>
#include <stdlib.h>

#include "machine.h"
#include "nvic.h"
#include "periph.h"
#include "vm_internal.h"

struct tmr {
  struct vm_periph hdr;
  int irq, timer;
  uint32_t ctrl, load, status;
  uint64_t start; /* cycle at which the current period started */
  uint32_t count_stopped;
  unsigned index; /* in vm->periph[], for the power model */
};

static bool running(const struct tmr *t)
{
  return (t->ctrl & 1) && t->load;
}

/* Power model (power.c): the timer draws its current while it runs: a
 * one-shot until its match, a periodic one until it is stopped. */
static void power_update(struct sonde_vm *vm, struct tmr *t)
{
  if (running(t))
    vm_power_active(vm, t->index, vm->cpu.cycles,
                    (t->ctrl & 4) ? UINT64_MAX : t->start + t->load);
  else
    vm_power_idle(vm, t->index, vm->cpu.cycles);
}

static void update_irq(struct sonde_vm *vm, struct tmr *t)
{
  if (t->irq >= 0)
    vm_nvic_irq_level(vm, (unsigned)t->irq, (t->status & 1) && (t->ctrl & 2));
}


/* The match: MATCH set, the next period (periodic) or a stop, and the
 * interrupt line (update_irq) set without the pend: returns the exception
 * vm_nvic_irq_level() would pend now, or 0 (the timer's direct function;
 * exception.c takes that exception at once when it can). */
static unsigned tmr_direct(struct sonde_vm *vm, void *ctx)
{
  struct tmr *t = ctx;
  t->status |= 1;
  uint64_t due = t->start + t->load;
  if (t->ctrl & 4) {
    t->start = due;
    assert(vm->sys.firing);
    vm_sys_timer_rearm(&vm->sys, (unsigned)t->timer, due + t->load);
  } else {
    t->ctrl &= ~1u;
    t->count_stopped = t->load;
  }
  if (t->irq < 0)
    return 0;
  return vm_nvic_irq_level_edge(vm, (unsigned)t->irq, (t->status & 1) && (t->ctrl & 2));
}

/* tmr_direct() and its pend: update_irq() of the match. */
static void tmr_fire(struct sonde_vm *vm, void *ctx)
{
  const unsigned exc = tmr_direct(vm, ctx);
  if (exc)
    vm_exc_pend(vm, exc);
}

static int tmr_read(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size,
                    uint32_t *value, bool debug)
{
  struct tmr *t = ctx;
  (void)size;
  (void)debug;
  switch (off & ~3u) {
  case 0x00: *value = t->ctrl; break;
  case 0x04: *value = t->load; break;
  case 0x08:
    if (running(t)) {
      uint64_t n = vm->cpu.cycles - t->start;
      *value = (uint32_t)(n % t->load);
    } else {
      *value = t->count_stopped;
    }
    break;
  case 0x0C: *value = t->status; break;
  default: *value = 0; break;
  }
  return VM_BUS_OK;
}

static int tmr_write(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size,
                     uint32_t value, bool debug)
{
  struct tmr *t = ctx;
  (void)size;
  (void)debug;
  switch (off & ~3u) {
  case 0x00: {
    bool was = running(t);
    t->ctrl = value & 7;
    if (running(t) && !was) {
      t->start = vm->cpu.cycles;
      vm_sys_timer_set(vm, t->timer, t->start + t->load);
    } else if (!running(t) && was) {
      t->count_stopped = (uint32_t)((vm->cpu.cycles - t->start) % t->load);
      vm_sys_timer_set(vm, t->timer, UINT64_MAX);
    }
    power_update(vm, t);
    update_irq(vm, t);
    break;
  }
  case 0x04:
    /* A new period applies from the next start (a running period keeps its end). */
    t->load = value;
    if (!value) {
      t->ctrl &= ~1u;
      vm_sys_timer_set(vm, t->timer, UINT64_MAX);
      power_update(vm, t);
    }
    break;
  case 0x0C:
    t->status &= ~(value & 1);
    update_irq(vm, t);
    break;
  default: break;
  }
  return VM_BUS_OK;
}

static const struct vm_device_ops tmr_ops = {"timer", tmr_read, tmr_write};

static void tmr_reset(struct sonde_vm *vm, struct vm_periph *p)
{
  struct tmr *t = (struct tmr *)p;
  t->ctrl = t->load = t->status = t->count_stopped = 0;
  vm_sys_timer_set(vm, t->timer, UINT64_MAX);
  power_update(vm, t);
  update_irq(vm, t);
}

int vm_timer_new(struct sonde_vm *vm, const struct vm_machine_periph *cfg, struct vm_periph **out)
{
  struct tmr *t = calloc(1, sizeof *t);
  if (!t)
    return SONDE_E_NOMEM;
  *out = &t->hdr;
  t->hdr.reset = tmr_reset;
  t->irq = cfg->irq;
  t->index = vm->nperiph; /* periph_common.c appends this one next */
  t->timer = vm_sys_timer_add(vm, tmr_fire, t);
  if (t->timer < 0)
    return SONDE_E_LIMIT;
  vm_sys_timer_direct(&vm->sys, t->timer, tmr_direct);
  return vm_bus_add_device(&vm->bus, cfg->base, 0x1000, &tmr_ops, t);
}
