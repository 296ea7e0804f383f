/* The VM backend of the debug link (monitor.h): the virtual Cortex-M's debug
 * access port through its public API. Memory and debug registers are read and
 * written as a MEM-AP would (sonde_vm_read_mem: no effect on timing); halting
 * is DHCSR's (C_DEBUGEN, C_HALT, C_STEP), so breakpoints and single steps go
 * through the VM's FPB and halting-debug model exactly as a probe's would.
 * The target runs only inside wait(), for an exact number of cycles. */
#include "monitor_internal.h"

#include <stdio.h>

#define DBGKEY 0xA05F0000u
#define C_DEBUGEN 1u
#define C_HALT 2u
#define C_STEP 4u
#define C_MASKINTS 8u

static int vm_err(struct sonde_mon_link *l, int rc, const char *op)
{
  return sonde_diag_set(&l->diag, rc, "vm: %s: %s", op, sonde_vm_error_detail(l->vm)[0]
                                                            ? sonde_vm_error_detail(l->vm)
                                                            : sonde_strerror(rc));
}

static int v_read(struct sonde_mon_link *l, uint32_t addr, uint32_t *words, unsigned n)
{
  int rc = sonde_vm_read_mem(l->vm, addr, words, 4u * n);
  if (rc < 0)
    return sonde_diag_set(&l->diag, rc, "vm: read of %u words at 0x%08x: %s", n, (unsigned)addr,
                          sonde_strerror(rc));
  return 0;
}

static int v_write(struct sonde_mon_link *l, uint32_t addr, uint32_t value)
{
  int rc = sonde_vm_write_mem(l->vm, addr, &value, 4);
  if (rc < 0)
    return sonde_diag_set(&l->diag, rc, "vm: write at 0x%08x: %s", (unsigned)addr,
                          sonde_strerror(rc));
  return 0;
}

static int dhcsr(struct sonde_mon_link *l, uint32_t bits)
{
  return v_write(l, SONDE_MON_DHCSR, DBGKEY | C_DEBUGEN | bits);
}

static int v_halt(struct sonde_mon_link *l)
{
  return dhcsr(l, C_HALT);
}

static int v_resume(struct sonde_mon_link *l)
{
  return dhcsr(l, 0);
}

static int map_stop(struct sonde_mon_link *l, const struct sonde_vm_stop *s)
{
  switch (s->reason) {
  case SONDE_VM_STOP_EXIT:
    l->exited = true;
    l->exit_code = s->exit_code;
    return SONDE_MON_EXITED;
  case SONDE_VM_STOP_CYCLE_LIMIT: return SONDE_MON_RUNNING;
  case SONDE_VM_STOP_BREAKPOINT:
  case SONDE_VM_STOP_HALT: return SONDE_MON_HALTED;
  case SONDE_VM_STOP_LOCKUP:
    return sonde_diag_set(&l->diag, SONDE_E_FAULT, "vm: the core locked up at pc 0x%08x",
                          (unsigned)s->pc);
  default:
    return sonde_diag_set(&l->diag, SONDE_E_IO, "vm: run stopped: %s",
                          sonde_vm_error_detail(l->vm));
  }
}

static int v_step(struct sonde_mon_link *l)
{
  int rc = dhcsr(l, C_STEP | C_MASKINTS);
  if (rc < 0)
    return rc;
  struct sonde_vm_stop s;
  rc = sonde_vm_run(l->vm, UINT64_MAX, &s);
  if (rc < 0)
    return vm_err(l, rc, "step");
  rc = map_stop(l, &s);
  if (rc < 0)
    return rc;
  return dhcsr(l, C_HALT);
}

static int v_read_pc(struct sonde_mon_link *l, uint32_t *pc)
{
  int rc = sonde_vm_read_reg(l->vm, SONDE_VM_REG_PC, pc);
  return rc < 0 ? vm_err(l, rc, "read pc") : 0;
}

static int v_wait(struct sonde_mon_link *l, uint64_t cycles, unsigned timeout_ms)
{
  (void)timeout_ms;
  if (l->exited)
    return SONDE_MON_EXITED;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(l->vm, &st);
  uint64_t lim = cycles > UINT64_MAX - st.cycles ? UINT64_MAX : st.cycles + cycles;
  struct sonde_vm_stop s;
  int rc = sonde_vm_run(l->vm, lim, &s);
  if (rc < 0)
    return vm_err(l, rc, "run");
  return map_stop(l, &s);
}

static int v_cycles(struct sonde_mon_link *l, uint64_t *cycles)
{
  struct sonde_vm_stats st;
  sonde_vm_get_stats(l->vm, &st);
  *cycles = st.cycles;
  return 0;
}

static const struct mon_link_ops vm_ops = {v_read, v_write, v_halt, v_resume, v_step,
                                           v_read_pc, v_wait, v_cycles, NULL};

int mon_link_vm_init(struct sonde_mon_link *l, struct sonde_vm *vm)
{
  l->vm = vm;
  l->ops = &vm_ops;
  l->reads_running = true;
  snprintf(l->name, sizeof l->name, "vm");
  return 0;
}
