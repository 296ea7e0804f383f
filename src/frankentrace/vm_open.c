/* One VM for one FrankenTrace run (probe runs, runner iterations, LSU runs):
 * created, loaded, its program output silenced and its SWO bytes handed to
 * the caller's tap, reset. */
#include <stdio.h>

#include "ft_vm.h"

static int quiet(void *ctx, int stream, const void *buf, size_t len)
{
  (void)ctx, (void)stream, (void)buf, (void)len;
  return 0;
}

int ft_vm_open(const struct ft_vm_open_args *a, sonde_vm_swo_fn swo, void *swo_ctx,
               struct sonde_vm **out, char *msg, size_t cap)
{
  struct sonde_vm *vm = NULL;
  int rc = sonde_vm_new(a->machine, &vm);
  if (!rc)
    rc = sonde_vm_load_elf(vm, a->elf, a->elf_len, a->elf_name);
  if (rc) {
    snprintf(msg, cap, "%s: %s", a->elf_name, vm ? sonde_vm_error_detail(vm) : sonde_strerror(rc));
    sonde_vm_free(vm);
    *out = NULL;
    return rc;
  }
  if (a->no_jit)
    sonde_vm_set_jit(vm, false);
  sonde_vm_set_output(vm, quiet, NULL);
  sonde_vm_set_swo(vm, swo, swo_ctx);
  sonde_vm_reset(vm);
  *out = vm;
  return 0;
}
