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
}
