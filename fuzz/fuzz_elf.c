/* Fuzz target: the VM's ELF loader (src/vm/loader.c) on arbitrary bytes.
 * Any input must be either loaded or rejected with an error and a detail. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static struct sonde_machine *m;
  static struct sonde_vm *vm;
  if (!vm) {
    if (sonde_machine_builtin("cc2650", &m) != 0 || sonde_vm_new(m, &vm) != 0)
      abort();
  }
  int rc = sonde_vm_load_elf(vm, data, size, "fuzz.elf");
  if (rc < 0 && sonde_vm_error_detail(vm)[0] == '\0')
    abort(); /* every error explains itself */
  return 0;
}
