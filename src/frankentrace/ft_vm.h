/* What the VM runs of FrankenTrace share (vm_run.c, vm_runner.c). Internal. */
#ifndef SONDE_FT_VM_INTERNAL_H
#define SONDE_FT_VM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/frankentrace.h"
#include "sonde/vm.h"

struct ft_vm_truth_args {
  const struct sonde_machine *machine;
  const void *elf;
  size_t elf_len;
  const char *elf_name;
  uint64_t max_cycles;  /* 0: 10 G */
  bool stop_at_reset;   /* a runner image: iteration 0 only (halt at its SYSRESETREQ) */
};
/* The DWT-visible ground truth of one hooked run (docs/vm.md "Which PC a
 * sample carries"); *len its cycles. */
int ft_vm_truth(const struct ft_vm_truth_args *a, struct sonde_ft_trace **out, uint64_t *len,
                struct sonde_diag *diag);
struct ft_vm_open_args {
  const struct sonde_machine *machine;
  const void *elf;
  size_t elf_len;
  const char *elf_name;
  bool no_jit;
};
/* A VM for one run: new, the ELF loaded, output silenced, SWO bytes to
 * swo(swo_ctx), reset. On error msg says why (the ELF's name first). */
int ft_vm_open(const struct ft_vm_open_args *a, sonde_vm_swo_fn swo, void *swo_ctx,
               struct sonde_vm **out, char *msg, size_t cap);
/* As a debugger: halt when the core comes out of reset (DHCSR.C_DEBUGEN,
 * DEMCR.VC_CORERESET), so a runner image stops after one iteration. */
int ft_vm_catch_reset(struct sonde_vm *vm);

#endif
