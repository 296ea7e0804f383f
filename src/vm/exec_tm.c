/* The executors' side of the timing model (tm.h) for machines that declare a
 * memory system (`memsys` lines): exec_insn() charges every instruction the
 * model's cycles instead of the table's (docs/vm.md, "Memory-system
 * timing"). Such machines run on the block executor's variant run_block_tm
 * (exec.c, exec_threaded.h with FAST_TM: its fast handlers charge the model
 * as they retire, and check the event after each instruction) or, with
 * observers, on the hooked one-at-a-time executor; exec_insn charges the
 * model for both. The model's memo (tm_memo.c) answers most steps: its
 * replay is inline in vm_exec_tm_charge_fast and vm_exec_tm_charge. The
 * block compiler compiles these machines' blocks too (jit_x64.c, emit_tm_*):
 * its code charges the model after each instruction, as run_block_tm's
 * handlers do, with the memo's replay inline in the host code and
 * vm_exec_tm_charge_jit below for the rest, and checks the event after each
 * instruction (docs/vm.md, "Compiled code on these machines"). */
#include <stdlib.h>
#include <string.h>

#include "fast.h"
#include "machine.h"
#include "vm_internal.h"

/* The model asks for halfwords of code near the PC: keep the last window
 * of host memory the bus gave (its pointers do not move). */
struct code_window {
  struct sonde_vm *vm;
  uint32_t base, len;
  const uint8_t *p;
};

static uint16_t read16(void *ctx, uint32_t addr)
{
  struct code_window *w = ctx;
  uint16_t hw = 0;
  if (addr - w->base >= w->len || w->len - (addr - w->base) < 2) {
    uint32_t avail = 0;
    const uint8_t *p = vm_bus_code_ptr(&w->vm->bus, addr, &avail, NULL);
    if (!p || avail < 2)
      return 0;
    w->base = addr;
    w->len = avail;
    w->p = p;
  }
  memcpy(&hw, w->p + (addr - w->base), 2);
  return hw;
}

static int setup(struct sonde_vm *vm, struct code_window *w)
{
  int rc = vm_tm_init(vm->tm, &vm->machine->tm, vm->cpu.r[15]);
  if (rc)
    return rc;
  w->vm = vm;
  w->base = w->len = 0;
  vm->tm->read16 = read16;
  vm->tm->read_ctx = w;
  return 0;
}

int vm_exec_tm_create(struct sonde_vm *vm)
{
  if (!vm->machine->tm.on)
    return 0;
  /* the model and its code window in one allocation */
  struct both {
    struct vm_tm tm;
    struct code_window w;
  } *b = calloc(1, sizeof *b);
  if (!b)
    return SONDE_E_NOMEM;
  vm->tm = &b->tm;
  int rc = setup(vm, &b->w);
  if (rc) {
    free(b);
    vm->tm = NULL;
    return rc;
  }
  return 0;
}

void vm_exec_tm_free(struct sonde_vm *vm)
{
  if (!vm->tm)
    return;
  vm_tm_free(vm->tm);
  free(vm->tm); /* the start of struct both */
  vm->tm = NULL;
}

void vm_exec_tm_reset(struct sonde_vm *vm)
{
  if (!vm->tm)
    return;
  struct code_window *w = vm->tm->read_ctx;
  vm_tm_free(vm->tm);
  if (setup(vm, w)) { /* out of memory: the table's timing from here on */
    free(vm->tm);
    vm->tm = NULL;
    vm_blocks_flush(vm); /* they hold run_block_tm's labels (exec.c) */
  }
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
  struct vm_tm_insn ti;
  ti.d = in;
  ti.pc = pc;
  /* an exception return (EXC_RETURN to the PC): the unstacked PC comes
   * next, a redirect of its own (the pc check below), as a trace shows it */
  ti.next_pc = next >= 0xF0000000u ? pc + in->len : next & ~1u;
  ti.executed = executed;
  uint32_t min = table_min(in);
  ti.extra = (uint8_t)(min && table_cycles > min ? table_cycles - min : 0);
  if (pc == tm->dpc) { /* the memo's answer (tm_memo.h) */
    const int memo = vm_tm_memo_replay(tm, pc, ti.next_pc, executed, ti.extra, addr);
    if (memo >= 0)
      return (uint32_t)memo;
  } else { /* an exception entry or return, a debugger write to the PC */
    vm_tm_redirect(tm, pc, 0);
  }
  ti.naccess = (uint8_t)(naccess > 255 ? 255 : naccess);
  ti.addr = addr;
  ti.wdata = wdata;
  return vm_tm_step(tm, &ti);
}

uint32_t vm_exec_tm_charge_step(struct sonde_vm *vm, const struct vm_insn *in, uint32_t pc,
                                uint32_t next, unsigned naccess, uint32_t addr, uint32_t wdata)
{
  struct vm_tm *tm = vm->tm;
  if (pc != tm->dpc) /* an exception entry or return, a debugger write */
    vm_tm_redirect(tm, pc, 0);
  if (next >= 0xF0000000u) /* a BX there: as vm_exec_tm_charge takes it */
    next = pc + in->len;
  const struct vm_tm_insn ti = {.d = in, .pc = pc, .next_pc = next, .executed = true,
                                .naccess = (uint8_t)naccess, .addr = addr, .wdata = wdata};
  return vm_tm_step(tm, &ti);
}

uint32_t vm_exec_tm_charge_jit(struct sonde_vm *vm, const struct vm_icache_entry *d,
                               uint32_t next, uint32_t addr, uint32_t wdata, uint32_t executed)
{
  const struct vm_insn *in = &d->insn;
  if (!executed) /* exec_insn's charge of an IT block's skipped instruction */
    return vm_exec_tm_charge(vm, in, d->tag, d->tag + in->len, false, 1, 0, 0, 0);
  /* vm_exec_tm_charge_fast, with the memo's fork tried before the model:
   * a branch that goes either way replays from one run to the other */
  struct vm_tm *tm = vm->tm;
  if (VM_LIKELY(d->tag == tm->dpc && next < 0xF0000000u)) {
    int memo = vm_tm_memo_replay(tm, d->tag, next, true, 0, addr);
    if (memo < 0)
      memo = vm_tm_memo_fork(tm, d->tag, next, addr);
    if (VM_LIKELY(memo >= 0))
      return (uint32_t)memo;
  }
  /* what the block executor's handler logs (exec_threaded.h TX_LOG): how
   * many accesses, the first's value as stored (the model reads it only
   * for a store) */
  const unsigned f = d->fast;
  unsigned n = 0;
  if (f == VM_FAST_LDM || f == VM_FAST_STM) {
    n = (unsigned)__builtin_popcount(in->imm);
  } else if (vm_fast_is_load_store(f)) {
    static const uint8_t form_size[8] = {4, 2, 2, 1, 1, 4, 2, 1}; /* enum VM_LDST_LDR_W.. */
    const unsigned size =
        f == VM_FAST_LD || f == VM_FAST_ST ? in->sub & 7u : form_size[(f - VM_FAST_LDST) % 8];
    n = 1;
    if (size < 4)
      wdata &= (1u << (8 * size)) - 1;
  }
  return vm_exec_tm_charge_step(vm, in, d->tag, next, n, addr, wdata);
}
