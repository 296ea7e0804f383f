/* Power model (power.h; docs/vm.md "Power model"): the supply current is
 * run_ua (or sleep_ua while the core sleeps in WFI/WFE) plus periph_ua[i] for
 * every peripheral that is active. The charge is the exact integer sum of
 * current x cycles between state changes. */
#include "power.h"

#include <string.h>

#include "machine.h"
#include "periph.h"
#include "vm_internal.h"

static uint32_t current(const struct vm_power *p)
{
  uint32_t ua = p->sleeping ? p->sleep_ua : p->run_ua;
  for (unsigned i = 0; i < VM_POWER_MAX_PERIPH; i++)
    if (p->active_until[i])
      ua += p->periph_ua[i];
  return ua;
}

/* Integrate to `t` at the present current and make `t` the new start. */
static void step_to(struct vm_power *p, uint64_t t)
{
  if (t <= p->last)
    return;
  p->charge += (uint64_t)p->current_ua * (t - p->last);
  p->last = t;
}

static void recompute(struct vm_power *p)
{
  uint32_t ua = current(p);
  if (ua != p->current_ua) {
    p->current_ua = ua;
    if (p->fn)
      p->fn(p->ctx, p->last, ua);
  }
}

void vm_power_advance(struct vm_power *p, uint64_t t)
{
  for (;;) {
    /* The earliest end of peripheral activity at or before t. */
    uint64_t e = UINT64_MAX;
    for (unsigned i = 0; i < VM_POWER_MAX_PERIPH; i++)
      if (p->active_until[i] && p->active_until[i] <= t && p->active_until[i] < e)
        e = p->active_until[i];
    if (e == UINT64_MAX)
      break;
    step_to(p, e);
    for (unsigned i = 0; i < VM_POWER_MAX_PERIPH; i++)
      if (p->active_until[i] == e)
        p->active_until[i] = 0;
    recompute(p);
  }
  step_to(p, t);
}

void vm_power_init(struct sonde_vm *vm)
{
  struct vm_power *p = &vm->power;
  const struct sonde_machine *m = vm->machine;
  memset(p, 0, sizeof *p);
  p->run_ua = m->power_run_ua;
  p->sleep_ua = m->power_sleep_ua;
  for (unsigned i = 0; i < m->nperiph && i < VM_POWER_MAX_PERIPH; i++)
    p->periph_ua[i] = m->power_periph_ua[m->periph[i].type];
  p->current_ua = p->run_ua;
}

void vm_power_sleep(struct sonde_vm *vm, uint64_t from, uint64_t to)
{
  struct vm_power *p = &vm->power;
  if (to <= from)
    return;
  vm_power_advance(p, from);
  p->sleeping = true;
  recompute(p);
  vm_power_advance(p, to);
  p->sleeping = false;
  recompute(p);
}

void vm_power_active(struct sonde_vm *vm, unsigned index, uint64_t from, uint64_t to)
{
  struct vm_power *p = &vm->power;
  if (index >= VM_POWER_MAX_PERIPH || to <= from)
    return;
  vm_power_advance(p, from);
  p->active_until[index] = to;
  recompute(p);
}

void vm_power_idle(struct sonde_vm *vm, unsigned index, uint64_t at)
{
  struct vm_power *p = &vm->power;
  if (index >= VM_POWER_MAX_PERIPH)
    return;
  vm_power_advance(p, at);
  if (p->active_until[index]) {
    p->active_until[index] = 0;
    recompute(p);
  }
}
