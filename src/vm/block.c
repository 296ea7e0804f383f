/* The block cache of the block executor (exec_threaded.h with FAST_BLOCK).
 *
 * A block is a straight-line run of instructions the fast handlers take,
 * copied out of the decode cache: it ends with an unconditional branch,
 * before a slow instruction, or after VM_BLOCK_LEN instructions, and a taken
 * conditional branch leaves it from the middle. Its bound on cycles lets
 * the executor check the next event once per block instead of once per
 * instruction: going one at a time, an executor starts another instruction
 * while the cycle count is below the next event, so a block whose last
 * instruction cannot start later than that may run whole. That last
 * instruction may end at or after the event: every exit of a block towards
 * the event (exec_threaded.h, jit_x64.c) stores its address for DWT PC
 * sampling (cpu.exec_pc, pc_at.c), off the way of a block that runs on.
 * The instructions still charge their exact cycles as they run; the bound
 * only decides whether a block runs whole (else one instruction at a time
 * up to the event), never the results.
 *
 * Blocks are dropped all at once: when the entry pool is full, when the
 * decode cache is flushed, and when the core writes into the code they were
 * built from. */
#include <stdlib.h>
#include <string.h>

#include "fast.h"
#include "jit.h"
#include "vm_internal.h"

struct vm_blocks *vm_blocks_get(struct sonde_vm *vm)
{
  if (!vm->cpu.blocks) {
    vm->cpu.blocks = malloc(sizeof *vm->cpu.blocks);
    if (vm->cpu.blocks) {
      vm->cpu.blocks->jit = NULL;
      vm_blocks_flush(vm);
      if (!vm->jit_off)
        vm->cpu.blocks->jit = vm_jit_new(vm->cpu.blocks->map);
    }
  }
  return vm->cpu.blocks;
}

void vm_blocks_flush(struct sonde_vm *vm)
{
  struct vm_blocks *bk = vm->cpu.blocks;
  if (!bk)
    return;
  memset(bk->map, 0, sizeof bk->map);
  bk->used = 0;
  bk->lo = UINT32_MAX;
  bk->hi = 0;
  vm_jit_flush(bk->jit);
}

void vm_blocks_code_written(struct sonde_vm *vm, uint32_t addr, unsigned size)
{
  const struct vm_blocks *bk = vm->cpu.blocks;
  if (bk && addr < bk->hi && (uint64_t)addr + size > bk->lo)
    vm_blocks_flush(vm);
}

void vm_blocks_free(struct sonde_vm *vm)
{
  if (vm->cpu.blocks)
    vm_jit_free(vm->cpu.blocks->jit);
  free(vm->cpu.blocks);
  vm->cpu.blocks = NULL;
}

/* The most wait states any access or fetch can cost on this bus. */
static unsigned max_wait(const struct vm_bus *bus)
{
  unsigned w = 0;
  for (unsigned i = 0; i < bus->nregions; i++) {
    if (bus->region[i].wait_read > w)
      w = bus->region[i].wait_read;
    if (bus->region[i].wait_write > w)
      w = bus->region[i].wait_write;
  }
  return w;
}

/* The most cycles the fast handler of `op` charges (exec_threaded.h): its
 * base cycles, w per memory access and, for a branch, the refill and the
 * target's fetch wait states. */
static uint32_t op_max_cycles(const struct vm_timing *t, const struct vm_icache_entry *op,
                              unsigned w)
{
  const unsigned f = op->fast;
  const uint32_t refill = t->refill + w;
  if (f >= VM_FAST_DP && f < VM_FAST_LD)
    return 1;
  if (f >= VM_FAST_LDST || f == VM_FAST_LD || f == VM_FAST_ST)
    return 2 + w;
  if (f == VM_FAST_LDM || f == VM_FAST_STM) {
    uint32_t n = (uint32_t)__builtin_popcount(op->insn.imm);
    return 1 + n + n * w + refill;
  }
  if (vm_fast_direct_branch(f))
    return op->taken_cycles; /* not taken: 1 */
  switch (f) {
  case VM_FAST_MUL: return t->mul;
  case VM_FAST_MLA: case VM_FAST_MLS: return t->mla;
  default: break;
  }
  if (vm_fast_branches(f, &op->insn)) /* BX */
    return 1 + refill;
  return 1; /* SBFX, UBFX, extends, ADR, MOVT */
}

/* Whether the IT at `a` (decoded d), n entries into a block, may stay in
 * it with its instructions: they all fit and are of the kinds the compiler
 * runs inside an IT block (fast.h vm_fast_in_it_block). The executors run
 * the IT through exec_insn, which leaves the block there, so only compiled
 * code (jit.h) ever goes past it. */
static bool it_block_fits(struct sonde_vm *vm, const struct vm_icache_entry *d, uint32_t a,
                          unsigned n)
{
  const unsigned len = vm_it_length(d->insn.imm);
  if (n + 1 + len > VM_BLOCK_LEN)
    return false;
  a += d->insn.len;
  for (unsigned i = 0; i < len; i++) {
    const struct vm_icache_entry *x = vm_cpu_decoded(vm, a);
    /* on a machine with a memory system, compiled code runs loads and
     * stores in IT blocks too (jit_x64.c, emit_it) */
    if (!x || !(vm_fast_in_it_block(x->fast) || (vm->tm && vm_fast_is_load_store(x->fast))))
      return false;
    a += x->insn.len;
  }
  return true;
}

const struct vm_block *vm_block_build(struct sonde_vm *vm, uint32_t pc,
                                      const void *const *handler)
{
  struct vm_blocks *bk = vm->cpu.blocks;
  if (bk->used + VM_BLOCK_LEN + 1 > VM_BLOCK_OPS || vm_jit_full(bk->jit))
    vm_blocks_flush(vm);
  const unsigned w = max_wait(&vm->bus);
  struct vm_block *b = &bk->map[(pc >> 1) & (VM_BLOCK_MAP - 1)];
  const uint32_t first = bk->used;
  uint32_t a = pc, cycles = 0, last_start = 0;
  unsigned n = 0;
  uint8_t end = VM_FAST_BLKEND; /* what follows the block: see below */
  bool branch = false;
  unsigned in_it = 0; /* instructions of an IT block still to come */
  for (;;) {
    if (n == VM_BLOCK_LEN)
      break;
    const struct vm_icache_entry *d = vm_cpu_decoded(vm, a);
    if (!d || d->fast == VM_FAST_SLOW) { /* exec_insn runs it (or raises the fetch fault) */
      end = VM_FAST_SLOW;
      break;
    }
    if (in_it) {
      in_it--;
    } else if (d->fast == VM_FAST_IT && !it_block_fits(vm, d, a, n)) {
      end = VM_FAST_SLOW; /* as any instruction exec_insn runs */
      break;
    } else if (d->fast == VM_FAST_IT) {
      in_it = vm_it_length(d->insn.imm);
    }
    struct vm_block_op *bop = &bk->op[bk->used++];
    struct vm_icache_entry *op = &bop->d;
    memset(bop, 0, sizeof *bop);
    *op = *d;
    op->tag = a;
    op->nth = (uint8_t)n;
    bop->handler = handler[op->fast];
    if (n && vm_fast_is_load_store(op->fast)) { /* the pipelining follows from the op before */
      const struct vm_icache_entry *prev = &bop[-1].d;
      bool lsp;
      uint8_t lsrt;
      vm_fast_ls_after(prev->fast, &prev->insn, vm->cpu.t.ls_pipeline, &lsp, &lsrt);
      op->insn.ls_cycles = (uint8_t)vm_fast_ls_cycles(lsp, lsrt, &op->insn);
    }
    last_start = cycles;
    cycles += op_max_cycles(&vm->cpu.t, op, w);
    n++;
    a += d->insn.len;
    if (vm_fast_ends_block(op->fast, &op->insn)) {
      branch = true;
      break;
    }
  }
  if (!branch) { /* the entry where execution goes on after the block */
    struct vm_block_op *bop = &bk->op[bk->used++];
    memset(bop, 0, sizeof *bop);
    bop->d.tag = a;
    bop->d.nth = (uint8_t)n;
    bop->d.fast = end;
    bop->handler = handler[end];
  }
  if (pc < bk->lo)
    bk->lo = pc;
  if (a + 4 > bk->hi) /* a 32-bit instruction at `a` may have been fetched */
    bk->hi = a + 4;
  b->tag = pc | 1;
  b->op = &bk->op[first];
  /* A block that is just a slow instruction (which may fault) is never
   * entered straight when an event may be near: every way there then
   * stores the branch's address, the instruction before it (cpu.h). */
  bk->op[first].bound = n ? last_start : UINT32_MAX >> 1;
  /* A machine with a memory system: no table bound (the model's stalls
   * make it none); run_block_tm and its compiled code check the event
   * after every instruction instead (exec_threaded.h FAST_TM, jit.h), and
   * compiled code's branches check cy + 0 < ev before the next block. */
  if (vm->tm)
    bk->op[first].bound = 0;
  /* compiled, the block's first entry enters its code (exec_threaded.h) */
  const void *code = vm_jit_compile(vm, bk->jit, &bk->op[first], false);
  if (code) {
    bk->op[first].jit = code;
    /* (no checked variant for a machine with a memory system: every
     * instruction of its code checks the event) */
    bk->op[first].jit_checked =
        vm->tm ? NULL : vm_jit_compile(vm, bk->jit, &bk->op[first], true);
    bk->op[first].handler = handler[VM_FAST_JIT];
    vm->jit_blocks++;
  }
  return b;
}
