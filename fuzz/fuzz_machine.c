/* Fuzz target: the machine description parser (src/vm/machine.c) on
 * arbitrary text. Any input is either a machine a VM can be built from, or
 * rejected with SONDE_E_FORMAT and a message naming the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sonde_machine *m = NULL;
  struct sonde_diag d;
  sonde_diag_clear(&d);
  int rc = sonde_machine_parse((const char *)data, size, "fuzz.machine", &m, &d);
  if (rc < 0) {
    if (rc != SONDE_E_FORMAT || m || strncmp(d.msg, "fuzz.machine", 12) != 0)
      abort();
    return 0;
  }
  struct sonde_vm *vm = NULL;
  /* A parsed machine may still fail to build (e.g. too much memory); it must
   * not crash. */
  if (sonde_vm_new(m, &vm) == 0) {
    sonde_vm_reset(vm);
    sonde_vm_free(vm);
  }
  sonde_machine_free(m);
  return 0;
}
