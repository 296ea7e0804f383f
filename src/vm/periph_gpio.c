/* Demo GPIO (LED) port: an output register whose every change is recorded
 * with its cycle, plus set/clear/toggle aliases and an input register.
 *
 *   0x00 OUT     RW: output pins
 *   0x04 SET     W: OUT |= value
 *   0x08 CLR     W: OUT &= ~value
 *   0x0C TOGGLE  W: OUT ^= value
 *   0x10 IN      R: input pins (0)
 */
#include <stdlib.h>

#include "machine.h"
#include "periph.h"
#include "vm_internal.h"

struct gpio {
  struct vm_periph hdr;
  uint32_t out;
  size_t nlog;
  uint64_t dropped;
  unsigned index; /* in vm->periph[], for the power model */
  struct vm_gpio_change log[VM_GPIO_LOG_MAX];
};

static void set_out(struct sonde_vm *vm, struct gpio *g, uint32_t v)
{
  if (v == g->out)
    return;
  /* Power model (power.c): the port draws its current while any output is
   * high (an LED on). */
  if (v && !g->out)
    vm_power_active(vm, g->index, vm->cpu.cycles, UINT64_MAX);
  else if (!v && g->out)
    vm_power_idle(vm, g->index, vm->cpu.cycles);
  g->out = v;
  if (g->nlog < VM_GPIO_LOG_MAX) {
    g->log[g->nlog].cycle = vm->cpu.cycles;
    g->log[g->nlog].value = v;
    g->nlog++;
  } else {
    g->dropped++;
  }
}

static int gpio_read(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size,
                     uint32_t *value, bool debug)
{
  struct gpio *g = ctx;
  (void)vm;
  (void)debug;
  uint32_t v = (off & ~3u) == 0 ? g->out : 0;
  *value = v >> (8 * (off & 3)) & (size == 4 ? 0xFFFFFFFFu : (1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int gpio_write(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size,
                      uint32_t value, bool debug)
{
  struct gpio *g = ctx;
  (void)debug;
  unsigned shift = 8 * (off & 3);
  uint32_t mask = (size == 4 ? 0xFFFFFFFFu : (1u << (8 * size)) - 1) << shift;
  value <<= shift;
  switch (off & ~3u) {
  case 0x00: set_out(vm, g, (g->out & ~mask) | (value & mask)); break;
  case 0x04: set_out(vm, g, g->out | (value & mask)); break;
  case 0x08: set_out(vm, g, g->out & ~(value & mask)); break;
  case 0x0C: set_out(vm, g, g->out ^ (value & mask)); break;
  default: break;
  }
  return VM_BUS_OK;
}

static const struct vm_device_ops gpio_ops = {"gpio", gpio_read, gpio_write};

static void gpio_reset(struct sonde_vm *vm, struct vm_periph *p)
{
  struct gpio *g = (struct gpio *)p;
  set_out(vm, g, 0);
}

int vm_gpio_new(struct sonde_vm *vm, const struct vm_machine_periph *cfg, struct vm_periph **out)
{
  struct gpio *g = calloc(1, sizeof *g);
  if (!g)
    return SONDE_E_NOMEM;
  *out = &g->hdr;
  g->hdr.reset = gpio_reset;
  g->index = vm->nperiph; /* periph_common.c appends this one next */
  return vm_bus_add_device(&vm->bus, cfg->base, 0x1000, &gpio_ops, g);
}

size_t vm_gpio_changes(const struct sonde_vm *vm, const struct vm_gpio_change **out,
                       uint64_t *dropped)
{
  for (unsigned i = 0; i < vm->nperiph; i++) {
    const struct vm_periph *p = vm->periph[i];
    if (p->type == VM_PERIPH_GPIO) {
      const struct gpio *g = (const struct gpio *)p;
      *out = g->log;
      if (dropped)
        *dropped = g->dropped;
      return g->nlog;
    }
  }
  *out = NULL;
  if (dropped)
    *dropped = 0;
  return 0;
}
