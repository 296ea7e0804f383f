/* The PC at a cycle, from the VM's state (pc_at.h): the rule of
 * sonde_pcsample_of() (src/trace/pcsample.c) applied to what the VM keeps
 * instead of a PC trace, the last instruction that entered Execute
 * (cpu.exec_pc) and the latest sleep span (sys.sleep_from, sleep_base),
 * and sonde_vm_pc_at_cycle() on top of it.
 *
 * Why that is enough: the executors stop at the first instruction boundary
 * at or after an event (or the run's cycle limit), so an event at cycle t
 * is served once the VM is past t with no instruction started after t, or
 * exactly at t, where the instruction starting at t (or the exception entry
 * starting at t, or a sleep) is not known yet: dbg_dwt.c keeps such a
 * sample pending until the VM is past t. */
#include "pc_at.h"

#include "vm_internal.h"

int sonde_vm_pc_at_cycle(struct sonde_vm *vm, uint64_t cycle, struct sonde_pcsample *out,
                         struct sonde_vm_stop *stop)
{
  if (!vm || !out || cycle == UINT64_MAX)
    return SONDE_E_ARG;
  struct sonde_vm_stop st;
  if (!stop)
    stop = &st;
  if (vm->cpu.cycles <= cycle) {
    if (vm->pc_at_ended) { /* the program ended before this cycle: never run past it */
      *stop = vm->pc_at_end;
      return SONDE_E_AGAIN;
    }
    int rc = sonde_vm_run(vm, cycle + 1, stop);
    if (rc < 0)
      return rc;
    if (stop->reason == SONDE_VM_STOP_EXIT || stop->reason == SONDE_VM_STOP_LOCKUP) {
      /* An exit or lockup in the same run as `cycle` would otherwise be lost:
       * the next call would run the core on past the end. */
      vm->pc_at_ended = true;
      vm->pc_at_end = *stop;
    }
    if (vm->cpu.cycles <= cycle)
      return SONDE_E_AGAIN; /* stopped before it: stop says why */
  } else {
    memset(stop, 0, sizeof *stop);
    stop->reason = SONDE_VM_STOP_CYCLE_LIMIT;
    stop->pc = vm->cpu.r[15];
  }
  if (cycle < vm->pc_floor || !vm_pc_at(vm, cycle, out))
    return sonde_diag_set(&vm->diag, SONDE_E_RANGE,
                          "cycle %llu: the last instruction may have started after it (it is "
                          "known from cycle %llu on)",
                          (unsigned long long)cycle, (unsigned long long)vm->pc_floor);
  return 0;
}
