/* The executors' side of the timing model (tm.h) for machines that declare a
 * memory system (`memsys` lines): exec_insn() charges every instruction the
 * model's cycles instead of the table's (docs/vm.md, "Memory-system
 * timing"). Such machines run every instruction through exec_insn (run_tm in
 * exec.c); the block executor and the block compiler are not used for them
 * yet. */
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "vm_internal.h"

static uint16_t read16(void *ctx, uint32_t addr)
{
  struct sonde_vm *vm = ctx;
  uint32_t avail = 0;
  const uint8_t *p = vm_bus_code_ptr(&vm->bus, addr, &avail, NULL);
  uint16_t hw = 0;
  if (p && avail >= 2)
    memcpy(&hw, p, 2);
  return hw;
}

int vm_exec_tm_create(struct sonde_vm *vm)
{
  if (!vm->machine->tm.on)
    return 0;
  vm->tm = malloc(sizeof *vm->tm);
  if (!vm->tm)
    return SONDE_E_NOMEM;
  int rc = vm_tm_init(vm->tm, &vm->machine->tm, 0);
  if (rc) {
    free(vm->tm);
    vm->tm = NULL;
    return rc;
  }
  vm->tm->read16 = read16;
  vm->tm->read_ctx = vm;
  return 0;
}

void vm_exec_tm_free(struct sonde_vm *vm)
{
  if (!vm->tm)
    return;
  vm_tm_free(vm->tm);
  free(vm->tm);
  vm->tm = NULL;
}

void vm_exec_tm_reset(struct sonde_vm *vm)
{
  if (!vm->tm)
    return;
  vm_tm_free(vm->tm);
  if (vm_tm_init(vm->tm, &vm->machine->tm, vm->cpu.r[15])) {
    free(vm->tm); /* out of memory: the table's timing from here on */
    vm->tm = NULL;
    return;
  }
  vm->tm->read16 = read16;
  vm->tm->read_ctx = vm;
}

/* The table's minimum of an operand-dependent instruction (what tm.c adds
 * `extra` to). */
static uint32_t table_min(const struct vm_insn *in)
{
  switch (in->op) {
  case VM_OP_UMULL: case VM_OP_SMULL: return 3;
  case VM_OP_UMLAL: case VM_OP_SMLAL: return 4;
  case VM_OP_SDIV: case VM_OP_UDIV: return 2;
  default: return 0;
  }
}

uint32_t vm_exec_tm_charge(struct sonde_vm *vm, const struct vm_insn *in, uint32_t pc,
                           uint32_t next, bool executed, uint32_t table_cycles, unsigned naccess,
                           uint32_t addr, uint32_t wdata)
{
  struct vm_tm *tm = vm->tm;
  if (pc != tm->dpc) /* an exception entry or return, a debugger write to the PC */
    vm_tm_redirect(tm, pc, 0);
  struct vm_tm_insn ti;
  ti.d = in;
  ti.pc = pc;
  ti.next_pc = next & ~1u;
  ti.executed = executed;
  uint32_t min = table_min(in);
  ti.extra = (uint8_t)(min && table_cycles > min ? table_cycles - min : 0);
  ti.naccess = (uint8_t)(naccess > 255 ? 255 : naccess);
  ti.addr = addr;
  ti.wdata = wdata;
  return vm_tm_step(tm, &ti);
}
