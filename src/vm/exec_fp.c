/* Floating point extension instructions (FPv4-SP, FPv5-SP subset), ARMv7-M
 * ARM A7.7 and A2.5. See exec_ext.h. */
#include "exec_ext.h"
#include "vm_internal.h"

int vm_exec_fp(struct sonde_vm *vm, uint32_t insn)
{
  (void)vm;
  (void)insn;
  return VM_EXT_UNDEFINED;
}
