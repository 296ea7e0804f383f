/* Per-core cycle parameters (timing.h). Sources: Cortex-M3 TRM (DDI 0337)
 * 3.3.1 Table 3-1; Cortex-M4 TRM (DDI 0439) 3.3.1 Table 3-1; Cortex-M0+ TRM
 * (DDI 0484) 3.3 Table 3-1; Cortex-M33 assumed equal to Cortex-M4 (its TRM
 * gives no instruction table). See docs/vm.md. */
#include "timing.h"

#include "vm_internal.h"

void vm_timing_setup(struct sonde_vm *vm)
{
  struct vm_timing *t = &vm->cpu.t;
  if (t->core == (int)vm->core + 1)
    return;
  t->core = (int)vm->core + 1;
  t->bl_extra = 0;
  switch (vm->core) {
  case SONDE_VM_CORE_M0PLUS:
    t->refill = 1;
    t->mul = 1;
    t->mla = 1;
    t->sysreg = 3;
    t->barrier = 3;
    t->ls_pipeline = false;
    t->long_mul_fast = true;
    t->bl_extra = 1;
    break;
  case SONDE_VM_CORE_M3:
    t->refill = 2;
    t->mul = 1;
    t->mla = 2;
    t->sysreg = 1;
    t->barrier = 1;
    t->ls_pipeline = true;
    t->long_mul_fast = false;
    break;
  default: /* M4, M4F, M33 */
    t->refill = 2;
    t->mul = 1;
    t->mla = 2;
    t->sysreg = 1;
    t->barrier = 1;
    t->ls_pipeline = true;
    t->long_mul_fast = true;
    break;
  }
}
