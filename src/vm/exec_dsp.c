/* ARMv7E-M DSP extension instructions, ARMv7-M ARM A7.7. See exec_ext.h. */
#include "exec_ext.h"
#include "vm_internal.h"

int vm_exec_dsp(struct sonde_vm *vm, uint32_t insn)
{
  (void)vm;
  (void)insn;
  return VM_EXT_UNDEFINED;
}
