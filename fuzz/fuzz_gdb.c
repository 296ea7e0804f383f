/* Fuzz target: the GDB server's packet layer and command handling
 * (src/vm/gdb_server.c) on arbitrary client bytes, with a VM running the
 * small program below. Any input must be answered or dropped, never crash. */
#include <stdint.h>
#include <stdlib.h>

#include "sonde/vm.h"

int vm_gdb_fuzz(struct sonde_vm *vm, const uint8_t *data, size_t len, uint64_t max_cycles);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static struct sonde_machine *m;
  static struct sonde_vm *vm; /* reused: creating one per input is slow */
  if (!vm && (sonde_machine_builtin("cm4f", &m) != 0 || sonde_vm_new(m, &vm) != 0))
    abort();
  /* vectors: SP 0x20001000, reset 0x41; code: movs r0,#1; adds r0,#1; b . */
  static const uint32_t vt[2] = {0x20001000, 0x41};
  static const uint16_t code[3] = {0x2001, 0x3001, 0xE7FE};
  sonde_vm_write_mem(vm, 0, vt, sizeof vt);
  sonde_vm_write_mem(vm, 0x40, code, sizeof code);
  sonde_vm_reset(vm);
  vm_gdb_fuzz(vm, data, size, 200000);
  return 0;
}
