/* Feature gates of the core, decided once (DESIGN: "feature gates sit in one
 * place"): ARMv6-M is a subset, ARMv7E-M adds DSP, M4F/M33 add single
 * precision FP, M33 is ARMv8-M Mainline (no TrustZone). */
#include "vm_internal.h"

void vm_features_init(struct sonde_vm *vm)
{
  enum sonde_vm_core c = vm->core;
  vm->has_v7m = c != SONDE_VM_CORE_M0PLUS;
  vm->has_dsp = c == SONDE_VM_CORE_M4 || c == SONDE_VM_CORE_M4F || c == SONDE_VM_CORE_M33;
  vm->has_fpu = c == SONDE_VM_CORE_M4F || c == SONDE_VM_CORE_M33;
  vm->has_v8m = c == SONDE_VM_CORE_M33;
  vm->apsr_mask = vm->has_dsp ? 0xf80f0000u : 0xf8000000u;
  vm->exc_return_basic = vm->has_v8m ? 0xFFFFFFB0u : 0xFFFFFFF1u;
  vm->exc_entry_cycles = vm->has_v7m ? VM_EXC_ENTRY_CYCLES_V7 : VM_EXC_ENTRY_CYCLES_V6;
  vm->exc_exit_cycles = vm->has_v7m ? VM_EXC_EXIT_CYCLES_V7 : VM_EXC_EXIT_CYCLES_V6;
}
