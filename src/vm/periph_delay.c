/* Demo delay peripheral: an operation started by a write to START completes
 * DELAY cycles later (STATUS.READY goes to 1), for busy-wait loops; with
 * CTRL.IE the completion pulses its interrupt.
 *
 *   0x00 DELAY   RW: cycles an operation takes
 *   0x04 START   W:  start an operation (READY = 0 until it completes)
 *   0x08 STATUS  R:  bit0 READY
 *   0x0C CTRL    RW: bit0 IE
 *   0x10 DONE    R:  number of completed operations
 *
 * Deliberate nondeterminism for tests (machine file `jitter=J seed=S`): each
 * operation takes DELAY plus 0..J cycles, drawn from (seed, run index,
 * operation number) — the same in every VM at the same run index, different
 * from run to run. The run index is 0 after power-on, +1 at every system
 * reset, or set by the host (sonde_vm_set_run_index), so a self-resetting
 * FrankenTrace runner and one VM per iteration see the same environment.
 */
#include <stdlib.h>

#include "machine.h"
#include "periph.h"
#include "vm_internal.h"

struct delay {
  struct vm_periph hdr;
  int irq, timer;
  uint32_t delay, ctrl, done;
  uint64_t ready_at;
  bool busy;
  uint32_t jitter, run, ops; /* jitter: see above; ops: operations since reset */
  uint64_t seed;
  unsigned index; /* in vm->periph[], for the power model */
};

/* splitmix64 of (seed, run, operation): the jitter of one operation. */
static uint32_t delay_extra(const struct delay *d)
{
  if (!d->jitter)
    return 0;
  uint64_t z = d->seed + 0x9E3779B97F4A7C15ull * (((uint64_t)d->run << 32 | d->ops) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (uint32_t)(z % ((uint64_t)d->jitter + 1));
}

static void delay_fire(struct sonde_vm *vm, void *ctx)
{
  struct delay *d = ctx;
  d->busy = false;
  d->done++;
  if ((d->ctrl & 1) && d->irq >= 0)
    vm_irq_pulse(vm, (unsigned)d->irq);
}

static int delay_read(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size,
                      uint32_t *value, bool debug)
{
  struct delay *d = ctx;
  (void)size;
  (void)debug;
  switch (off & ~3u) {
  case 0x00: *value = d->delay; break;
  case 0x08: *value = (!d->busy || vm->cpu.cycles >= d->ready_at) ? 1 : 0; break;
  case 0x0C: *value = d->ctrl; break;
  case 0x10: *value = d->done + (d->busy && vm->cpu.cycles >= d->ready_at ? 1 : 0); break;
  default: *value = 0; break;
  }
  return VM_BUS_OK;
}

static int delay_write(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size,
                       uint32_t value, bool debug)
{
  struct delay *d = ctx;
  (void)size;
  (void)debug;
  switch (off & ~3u) {
  case 0x00: d->delay = value; break;
  case 0x04:
    if (d->busy && vm->cpu.cycles >= d->ready_at)
      delay_fire(vm, d); /* the previous operation completed already */
    d->busy = true;
    d->ready_at = vm->cpu.cycles + d->delay + delay_extra(d);
    d->ops++;
    vm_sys_timer_set(vm, d->timer, d->ready_at);
    /* Power model (power.c): the peripheral draws its current while an
     * operation runs, from START to READY. */
    vm_power_active(vm, d->index, vm->cpu.cycles, d->ready_at);
    break;
  case 0x0C: d->ctrl = value & 1; break;
  default: break;
  }
  return VM_BUS_OK;
}

static const struct vm_device_ops delay_ops = {"delay", delay_read, delay_write};

static void delay_reset(struct sonde_vm *vm, struct vm_periph *p)
{
  struct delay *d = (struct delay *)p;
  d->delay = d->ctrl = d->done = d->ops = 0;
  d->busy = false;
  /* power-on (the core's cycles restart) or a system reset (they go on) */
  d->run = vm->cpu.cycles ? d->run + 1 : 0;
  vm_sys_timer_set(vm, d->timer, UINT64_MAX);
  vm_power_idle(vm, d->index, vm->cpu.cycles);
}

static void delay_set_run(struct vm_periph *p, uint32_t run)
{
  ((struct delay *)p)->run = run;
}

int vm_delay_new(struct sonde_vm *vm, const struct vm_machine_periph *cfg, struct vm_periph **out)
{
  struct delay *d = calloc(1, sizeof *d);
  if (!d)
    return SONDE_E_NOMEM;
  *out = &d->hdr;
  d->hdr.reset = delay_reset;
  d->hdr.set_run = delay_set_run;
  d->jitter = cfg->jitter;
  d->seed = cfg->seed;
  d->irq = cfg->irq;
  d->index = vm->nperiph; /* periph_common.c appends this one next */
  d->timer = vm_sys_timer_add(vm, delay_fire, d);
  if (d->timer < 0)
    return SONDE_E_LIMIT;
  return vm_bus_add_device(&vm->bus, cfg->base, 0x1000, &delay_ops, d);
}
