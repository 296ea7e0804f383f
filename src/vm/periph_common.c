/* Creation and reset of the demo peripherals a machine lists (periph.h). */
#include <stdlib.h>

#include "machine.h"
#include "periph.h"
#include "vm_internal.h"

int vm_periph_create(struct sonde_vm *vm, const struct vm_machine_periph *cfg)
{
  if (vm->nperiph >= sizeof vm->periph / sizeof vm->periph[0])
    return SONDE_E_LIMIT;
  struct vm_periph *p = NULL;
  int rc;
  switch (cfg->type) {
  case VM_PERIPH_UART: rc = vm_uart_new(vm, cfg, &p); break;
  case VM_PERIPH_GPIO: rc = vm_gpio_new(vm, cfg, &p); break;
  case VM_PERIPH_TIMER: rc = vm_timer_new(vm, cfg, &p); break;
  case VM_PERIPH_DELAY: rc = vm_delay_new(vm, cfg, &p); break;
  default: return SONDE_E_ARG;
  }
  if (rc < 0) {
    free(p);
    return rc;
  }
  p->type = (int)cfg->type;
  vm->periph[vm->nperiph++] = p;
  return 0;
}

void sonde_vm_set_run_index(struct sonde_vm *vm, uint32_t run)
{
  for (unsigned i = 0; i < vm->nperiph; i++) {
    struct vm_periph *p = vm->periph[i];
    if (p && p->set_run)
      p->set_run(p, run);
  }
}

void vm_periph_reset_all(struct sonde_vm *vm)
{
  for (unsigned i = 0; i < vm->nperiph; i++) {
    struct vm_periph *p = vm->periph[i];
    if (p && p->reset)
      p->reset(vm, p);
  }
}
