/* The block compiler for x86-64 hosts (jit.h says what it promises).
 *
 * Each block entry becomes a few host instructions that do what its handler
 * in exec_threaded.h does (FAST_BLOCK), read and written in the same order.
 * While compiled code runs, the host registers hold:
 *   rbx  struct vm_cpu *      (guest r0..r15 at [rbx + 4 * n])
 *   rbp  struct vm_page *     (the bus's page table)
 *   r12  cycles               r13  the next event's cycle
 *   r14  instructions retired before the current block
 *   r15  struct vm_jit_state * (the flags, the exit's op and pc)
 * rax, rcx, rdx, rsi, rdi and r8-r11 are scratch. Constant cycle counts
 * of consecutive instructions are summed while compiling and added where
 * they must be known: before a memory access's wait states, and at every
 * exit (each exit stub adds what it owes).
 *
 * The buffer starts with three shared stubs: the entry (from C, saves the
 * callee-saved registers), the exit (back to C with an exit code in eax)
 * and the dispatch of an indirect branch (looks its target up in the block
 * map and jumps into its code when the bound allows).
 *
 * W^X: the buffer is never writable and executable at once. The pages a
 * compile (or a flush) writes are made read-write for it and read-execute
 * again before it returns, so code only ever runs from read-execute pages and
 * nothing the guest makes the compiler write can be run before it is sealed. */
#include "jit.h"

#if defined(__x86_64__) && (defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__))

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bus.h"
#include "jit_x64_asm.h"
#include "vm_internal.h"

#define JIT_BUF_SIZE (16u << 20) /* enough for every entry of a full block cache */
/* the most one block can take (32 LDMs and stubs; on a memory-system machine
 * the model's inline replay after each instruction: up to ~22 KiB seen) */
#define JIT_BLOCK_MAX (48u << 10)
#define JIT_STUBS_MAX 256u         /* exits out of line per block (a memory-system machine's, */
#define JIT_STUBS_TABLE 160u       /* with an event exit per instruction; else at most these) */

/* the flags, as a liveness set */
enum { FL_N = 1, FL_C = 2, FL_V = 4, FL_Z = 8, FL_ALL = 15 };

struct vm_jit {
  uint8_t *base;
  size_t used;
  size_t page; /* the host's page size, for W^X */
  const uint8_t *entry, *exit, *dispatch, *slow, *serve, *go;
  const struct vm_block *map;
};

_Static_assert(offsetof(struct vm_cpu, r) == 0, "guest registers at the start of vm_cpu");
_Static_assert(sizeof(struct vm_block) == 16, "block map entry size");
_Static_assert(sizeof(struct vm_page) == 32, "page entry size");

#define ST_CY ((int32_t)offsetof(struct vm_jit_state, cy))
#define ST_EV ((int32_t)offsetof(struct vm_jit_state, ev))
#define ST_IR ((int32_t)offsetof(struct vm_jit_state, ir))
#define ST_FN ((int32_t)offsetof(struct vm_jit_state, fl.n))
#define ST_FZ ((int32_t)offsetof(struct vm_jit_state, fl.z))
#define ST_FC ((int32_t)offsetof(struct vm_jit_state, fl.c))
#define ST_FV ((int32_t)offsetof(struct vm_jit_state, fl.v))
#define ST_OP ((int32_t)offsetof(struct vm_jit_state, op))
#define ST_PC ((int32_t)offsetof(struct vm_jit_state, pc))
#define ST_LSP ((int32_t)offsetof(struct vm_jit_state, lsp))
#define ST_LSRT ((int32_t)offsetof(struct vm_jit_state, lsrt))
#define ST_XPC ((int32_t)offsetof(struct vm_jit_state, exec_pc))
#define ST_TMA ((int32_t)offsetof(struct vm_jit_state, tm_addr))
/* the timing model's memo (tm_memo.h), for its replay inline */
#define VM_TM ((int32_t)offsetof(struct sonde_vm, tm))
#define TM_DPC ((int32_t)offsetof(struct vm_tm, dpc))
#define TM_NOW ((int32_t)offsetof(struct vm_tm, now))
#define TM_MEMO ((int32_t)offsetof(struct vm_tm, memo))
#define M_CUR ((int32_t)offsetof(struct vm_tm_memo, cur))
#define M_S ((int32_t)offsetof(struct vm_tm_memo, s))
#define M_END ((int32_t)offsetof(struct vm_tm_memo, end))
#define S_PC ((int32_t)offsetof(struct vm_tm_memo_step, pc))
#define S_NEXT ((int32_t)offsetof(struct vm_tm_memo_step, next))
#define S_ADDR ((int32_t)offsetof(struct vm_tm_memo_step, addr))
#define S_CYC ((int32_t)offsetof(struct vm_tm_memo_step, cycles))
#define S_EX ((int32_t)offsetof(struct vm_tm_memo_step, ex))
#define S_ACC ((int32_t)offsetof(struct vm_tm_memo_step, acc))
#define TM_EPOCH ((int32_t)offsetof(struct vm_tm, tag_epoch))
#define TM_LATG ((int32_t)offsetof(struct vm_tm, lat_g))
#define TM_CACHE ((int32_t)offsetof(struct vm_tm, cfg.cache))
#define TM_CTL ((int32_t)offsetof(struct vm_tm, cfg.cache_ctl))
#define S_NW ((int32_t)offsetof(struct vm_tm_memo_step, nw))
#define S_WR ((int32_t)offsetof(struct vm_tm_memo_step, wr))
_Static_assert(sizeof(((struct vm_tm *)0)->lat_g) == 32, "the model's lat_g: 256 bits");
_Static_assert(sizeof(((struct vm_tm *)0)->cfg.cache) == 1, "cfg.cache: a byte");
#define M_GEN ((int32_t)offsetof(struct vm_tm_memo, gen))
#define R_LINK ((int32_t)offsetof(struct vm_tm_memo_run, link))
#define R_LINKV ((int32_t)offsetof(struct vm_tm_memo_run, link_ver))
#define R_VER ((int32_t)offsetof(struct vm_tm_memo_run, ver))
#define R_GEN ((int32_t)offsetof(struct vm_tm_memo_run, gen))
#define R_EPOCH ((int32_t)offsetof(struct vm_tm_memo_run, epoch))
#define R_N ((int32_t)offsetof(struct vm_tm_memo_run, n))
#define R_STEP ((int32_t)offsetof(struct vm_tm_memo_run, step))
#define R_FORK ((int32_t)offsetof(struct vm_tm_memo_run, fork))
#define R_FORKV ((int32_t)offsetof(struct vm_tm_memo_run, fork_ver))
#define R_FORKAT ((int32_t)offsetof(struct vm_tm_memo_run, fork_at))
#define R_STAMP ((int32_t)offsetof(struct vm_tm_memo_run, stamp))
#define M_TICK ((int32_t)offsetof(struct vm_tm_memo, tick))
_Static_assert(sizeof(((struct vm_tm_memo_run *)0)->fork_ver) == 4, "a run's fork_ver: 32 bits");
_Static_assert(sizeof(((struct vm_tm_memo_run *)0)->fork_at) == 1, "a run's fork_at: 8 bits");
_Static_assert(sizeof(((struct vm_tm_memo_run *)0)->stamp) == 4, "a run's stamp: 32 bits");
_Static_assert(sizeof(((struct vm_tm_memo *)0)->tick) == 4, "the memo's tick: 32 bits");
_Static_assert(sizeof(((struct vm_tm_memo_run *)0)->n) == 1, "a run's n: 8 bits");
_Static_assert(sizeof(((struct vm_tm_memo_run *)0)->ver) == 4, "a run's ver: 32 bits");
_Static_assert(sizeof(((struct vm_tm_memo_run *)0)->gen) == 4, "a run's gen: 32 bits");
_Static_assert(sizeof(((struct vm_tm_memo_run *)0)->epoch) == 8, "a run's epoch: 64 bits");
_Static_assert(sizeof(((struct vm_tm *)0)->tag_epoch) == 8, "the model's tag epoch: 64 bits");
_Static_assert(sizeof(((struct vm_tm_memo_step *)0)->cycles) == 2, "a step's cycles: 16 bits");
_Static_assert(sizeof(((struct vm_tm_memo_step *)0)->ex) == 2, "a step's ex: 16 bits");
_Static_assert(sizeof(((struct vm_tm_memo_step *)0)->acc) == 1, "a step's acc: 8 bits");
_Static_assert(offsetof(struct vm_tm_memo_step, next) == offsetof(struct vm_tm_memo_step, pc) + 4,
               "a step's pc and next: one 64-bit compare");
_Static_assert(offsetof(struct vm_tm_memo_step, acc) == offsetof(struct vm_tm_memo_step, ex) + 2 &&
                   offsetof(struct vm_tm_memo_step, nw) == offsetof(struct vm_tm_memo_step, ex) + 3,
               "a step's ex, acc and nw: one 32-bit compare");
_Static_assert(sizeof(((struct vm_tm *)0)->now) == 8, "the model's now: 64 bits");
_Static_assert(sizeof(((struct vm_tm *)0)->dpc) == 4, "the model's dpc: 32 bits");
#define ST_TMV ((int32_t)offsetof(struct vm_jit_state, tm_val))
#define CPU_IT ((int32_t)offsetof(struct vm_cpu, itstate))
#define CPU_PC ((int32_t)offsetof(struct vm_cpu, r[15]))
/* rbx is the cpu and, the cpu being the VM's first member, the VM */
_Static_assert(offsetof(struct sonde_vm, cpu) == 0, "the cpu at the start of the VM");
#define VM_MTB_OBS ((int32_t)offsetof(struct sonde_vm, mtb_observe))
#define VM_ATTN ((int32_t)offsetof(struct sonde_vm, attention))
#define VM_EV ((int32_t)offsetof(struct sonde_vm, event_cycle))
#define VM_DBGP ((int32_t)offsetof(struct sonde_vm, dbg))
#define DBG_TIMER ((int32_t)offsetof(struct vm_dbg, timer))
#define SYS_NEXT_TIMER ((int32_t)offsetof(struct sonde_vm, sys.next_timer))
_Static_assert(sizeof(((struct vm_dbg *)0)->timer) == 4 &&
                   sizeof(((struct sonde_vm *)0)->sys.next_timer) == 4,
               "the DWT's timer id and the next timer's: 32-bit");
_Static_assert(offsetof(struct vm_jit_state, lsrt) == offsetof(struct vm_jit_state, lsp) + 1,
               "lsp and lsrt are written as one halfword");
#define OP_LINK ((int32_t)offsetof(struct vm_block_op, link))
#define OP_BOUND ((int32_t)offsetof(struct vm_block_op, bound))
#define OP_JIT ((int32_t)offsetof(struct vm_block_op, jit))
#define OP_JITC ((int32_t)offsetof(struct vm_block_op, jit_checked))
#define PG_HOST ((int32_t)offsetof(struct vm_page, host))
#define PG_LO ((int32_t)offsetof(struct vm_page, lo))
#define PG_RLIM ((int32_t)offsetof(struct vm_page, rlim))
#define PG_WLIM ((int32_t)offsetof(struct vm_page, wlim))
#define PG_WR ((int32_t)offsetof(struct vm_page, wait_read))
#define PG_WW ((int32_t)offsetof(struct vm_page, wait_write))
#define GR(n) ((int32_t)(4 * (n))) /* guest register n, from rbx */
#define PAGE_MASK ((1u << VM_PAGE_SHIFT) - 1)

/* ---- compiling ---------------------------------------------------------------- */

/* Flags owed. A flag-setting ADD, CMN, SUB, CMP or RSB (emit_dp_simple)
 * stores at once only the flags a later instruction of its block reads in
 * compiled code (flags_live_hot); the others an exit may read are owed
 * until an instruction writes them again. Every way out of the block in
 * between stores them first (each stub out of line; a direct jump into a
 * compiled block only those that block may read before writing them,
 * flags_live_in): recomputed there from the guest registers the
 * instruction read, which nothing writes while they are owed (owe_ok). */
struct dflags {
  unsigned owed; /* FL_*: not stored yet (0: nothing owed) */
  unsigned regs; /* the guest registers the recomputation reads, a bit each */
  uint8_t alu;   /* VM_ALU_ADD, CMN, SUB, CMP or RSB */
  bool imm;      /* the second operand is v, else guest register rm */
  bool inverse;  /* rd == rn: the first operand is rd's new value with the op undone */
  uint8_t rn, rm, rd;
  uint32_t v;
};

/* An exit out of line: a jump to patch, and what the stub must do. */
struct stub {
  uint8_t *patch; /* the rel32 to point at the stub */
  const struct vm_block_op *op; /* the entry to resume at, or the branch taken */
  uint32_t pend; /* cycles owed at the jump */
  bool taken; /* a direct branch taken, else a resume */
  uint8_t it; /* a resume inside an IT block: its ITSTATE there (cpu.itstate), else 0 */
  bool plain; /* towards the event: one instruction at a time from op (VM_JIT_PLAIN) */
  bool slow;  /* run op by vm_jit_slow, here, and go on (the shared stub `slow`) */
  /* a single load or store's `slow`: first vm_jit_dev, and when a device
   * answered, back into the block at rejoin with pend_after cycles owed
   * there (emit_dev_call); else NULL */
  const uint8_t *rejoin;
  uint32_t pend_after;
  /* the checked variant's event check that jumped here (emit_check), to go
   * back to when vm_jit_event served the event in place; else NULL */
  const uint8_t *again;
  struct dflags df; /* the flags owed at the jump */
};

struct emit {
  struct jit_asm a; /* the code being written (jit_x64_asm.h) */
  const struct vm_jit *j;
  const struct vm_block_op *first; /* the block being compiled, at code `start` */
  const uint8_t *start;
  bool checked; /* the variant with an event check before each entry */
  /* a machine with a memory system (vm->tm): each instruction charges the
   * timing model's cycles (emit_tm_retire), never the table's */
  bool tm;
  uint8_t wr, ww; /* the most read/write wait states of any memory: 0, none to add */
  unsigned live; /* FL_*: the flags live after the entry being compiled */
  /* flags may be owed (not in the checked variant, nor on a machine with a
   * memory system): hot, the flags compiled code reads after the entry
   * being compiled (cur), exits aside; df, the flags owed */
  bool defer;
  unsigned hot;
  const struct vm_block_op *cur, *end;
  struct dflags df;
  unsigned nstub;
  struct stub stub[JIT_STUBS_MAX]; /* last: not cleared for each compile */
};

/* ---- shared stubs ------------------------------------------------------------- */

/* A taken branch with the MTB on (vm->mtb_observe, checked as it runs: the
 * MTB may be switched on or off at any time): c->r[15] = the target, then
 * vm_mtb_branch(vm, branch, target) as the block executor's NONSEQ does
 * (dbg_mtb.c); its AUTOSTOP or AUTOHALT may move the event or ask for
 * attention, so ev is read again (0 with attention: the next check stops).
 * The branch's address and target are in esi and edx when called; rax,
 * rcx, rdx, rsi, rdi and r8-r11 do not survive it. */
static void emit_mtb_call(struct emit *e, void (*fn)(struct sonde_vm *, uint32_t, uint32_t))
{
  mov64_rr(&e->a, RDI, RBX);
  mov64_ri(&e->a, RAX, (uint64_t)(uintptr_t)fn);
  op_r(&e->a, false, 0xff, 2, RAX); /* call rax */
  load64(&e->a, R13, RBX, VM_EV);
  cmp_mi8(&e->a, RBX, VM_ATTN, 0);
  uint8_t *calm = jcc_fwd(&e->a, CC_E);
  alu_rr(&e->a, false, ALU_XOR, R13, R13);
  patch(&e->a, calm, e->a.p);
}

#define VM_MTBP ((int32_t)offsetof(struct sonde_vm, mtb))
#define M_POS ((int32_t)offsetof(struct vm_mtb, position))
#define M_LEFT ((int32_t)offsetof(struct vm_mtb, fast_left))
#define M_PMASK ((int32_t)offsetof(struct vm_mtb, pmask))
#define M_SRAM ((int32_t)offsetof(struct vm_mtb, sram))
_Static_assert(sizeof(((struct vm_mtb *)0)->position) == 4 &&
                   sizeof(((struct vm_mtb *)0)->fast_left) == 4 &&
                   sizeof(((struct vm_mtb *)0)->pmask) == 4,
               "the MTB's packet state: 32-bit words");

/* The MTB packet of a taken branch, written by the compiled code itself:
 * dbg_mtb.c's emit() while its fast_left says nothing but the store and the
 * advance is due. Its source and destination (even) are the immediates src
 * and dst, or (!imm) r8d and eax. Else (an edge: POINTER's circle wraps,
 * the advance reaches the watermark, the S-bit, EN clear) it jumps *slow
 * with nothing changed, for the C call to do it all; the store jumps
 * *done. Uses rcx and rdi. */
static void emit_mtb_packet(struct emit *e, uint8_t **slow, uint8_t **done, bool imm,
                            uint32_t src, uint32_t dst)
{
  load64(&e->a, RCX, RBX, VM_MTBP);
  op_m(&e->a, false, 0x83, ALU_SUB, RCX, M_LEFT); /* sub dword [rcx + fast_left], 1 */
  b1(&e->a, 1);
  *slow = jcc_fwd(&e->a, CC_B); /* it was 0 (the sub borrowed): undone there */
  load32(&e->a, RDI, RCX, M_POS);
  alu_rm(&e->a, ALU_AND, RDI, RCX, M_PMASK);
  op_m(&e->a, true, 0x03, RDI, RCX, M_SRAM); /* add rdi, [rcx + sram] */
  if (imm) {
    store32_i(&e->a, RDI, 0, src);
    store32_i(&e->a, RDI, 4, dst);
  } else {
    store32(&e->a, RDI, 0, R8);
    store32(&e->a, RDI, 4, RAX);
  }
  op_m(&e->a, false, 0x83, ALU_ADD, RCX, M_POS); /* add dword [rcx + position], 8 */
  b1(&e->a, 8);
  *done = jmp_fwd(&e->a);
}

/* At *slow: fast_left back to 0 (rcx still holds vm->mtb) */
static void emit_mtb_unborrow(struct emit *e)
{
  store32_i(&e->a, RCX, M_LEFT, 0);
}

/* An indirect branch (BX, POP/LDM with PC) from `pc` to `next` with the
 * MTB on: a packet unless it went to the next instruction. */
static void mtb_indirect(struct sonde_vm *vm, uint32_t pc, uint32_t next)
{
  if (next - pc == 2 || next - pc == 4) { /* maybe the next one: its length decides */
    const struct vm_icache_entry *in = vm_cpu_decoded(vm, pc);
    if (in && next == pc + in->insn.len)
      return;
  }
  vm_mtb_branch(vm, pc, next);
}

/* The MTB check of a direct branch op to `target` (one to the next
 * instruction is sequential: no packet, as vm_mtb_retire decides). */
static void emit_mtb_direct(struct emit *e, const struct vm_block_op *op, uint32_t target)
{
  const uint32_t from = op->d.tag;
  if (target == from + op->d.insn.len)
    return;
  op_m(&e->a, false, 0x80, ALU_CMP, RBX, VM_MTB_OBS); /* cmp byte [rbx + mtb_observe], 0 */
  b1(&e->a, 0);
  uint8_t *off = jcc_fwd(&e->a, CC_E);
  uint8_t *slow, *done;
  emit_mtb_packet(e, &slow, &done, true, from & ~1u, target & ~1u);
  patch(&e->a, slow, e->a.p);
  emit_mtb_unborrow(e);
  store32_i(&e->a, RBX, CPU_PC, target);
  mov_ri(&e->a, RSI, from);
  mov_ri(&e->a, RDX, target);
  emit_mtb_call(e, vm_mtb_branch);
  patch(&e->a, off, e->a.p);
  patch(&e->a, done, e->a.p);
}

/* mov word [r15 + lsp], 0xff00: after a branch no load/store is pipelined
 * (state.lsp false, lsrt VM_NOREG), for a block that starts with one */
static void emit_ls_clear(struct emit *e)
{
  b1(&e->a, 0x66);
  op_m(&e->a, false, 0xc7, 0, R15, ST_LSP);
  b1(&e->a, 0x00);
  b1(&e->a, 0xff);
}

/* The block whose first entry is in register r may not run whole before
 * the next event: jump into its checked variant when it has one (else fall
 * through, to hand it to the block executor). */
static void emit_try_checked(struct emit *e, unsigned r)
{
  load64(&e->a, RCX, r, OP_JITC);
  test64_rr(&e->a, RCX, RCX);
  uint8_t *none = jcc_fwd(&e->a, CC_E);
  emit_ls_clear(e);
  jmp_r(&e->a, RCX);
  patch(&e->a, none, e->a.p);
}

/* rax = a block's first entry, reached by a branch (`from`, or NULL: an
 * indirect one, whose address is in r8d). When its bound allows (cy + bound
 * < ev), go into its code, or resume there with the block executor when it
 * has none; else, after storing the branch's address (it may have crossed
 * the event, block.c), into its checked variant; fall through when it has
 * none. */
static void emit_go_block(struct emit *e, const struct vm_block_op *from)
{
  /* the branch is the last instruction run: for a PC sample at the event,
   * and for a fault of the target's first instruction (its exception entry
   * shows the branch) */
  if (from)
    store32_i(&e->a, R15, ST_XPC, from->d.tag);
  else
    store32(&e->a, R15, ST_XPC, R8);
  load32(&e->a, RSI, RAX, OP_BOUND);
  alu_rr(&e->a, true, ALU_ADD, RSI, R12);
  alu_rr(&e->a, true, ALU_CMP, RSI, R13);
  uint8_t *bound = jcc_fwd(&e->a, CC_AE);
  emit_ls_clear(e);
  load64(&e->a, RCX, RAX, OP_JIT);
  test64_rr(&e->a, RCX, RCX);
  uint8_t *interp = jcc_fwd(&e->a, CC_E);
  jmp_r(&e->a, RCX);
  patch(&e->a, interp, e->a.p); /* resume at its first entry */
  store64(&e->a, R15, ST_OP, RAX);
  mov_ri(&e->a, RAX, VM_JIT_RESUME);
  jmp_to(&e->a, e->j->exit);
  patch(&e->a, bound, e->a.p); /* the event is near */
  emit_try_checked(e, RAX);
}

/* The block map's entry of the guest PC in eax: rdx = its address; compares
 * its tag with the PC | 1 and returns the jne to patch for a miss (the entry
 * holds another PC, or none). Uses rcx and rsi. */
static uint8_t *emit_map_lookup(struct emit *e, const struct vm_jit *j)
{
  mov_rr(&e->a, RCX, RAX);
  shift_ri(&e->a, false, SH_SHR, RCX, 1);
  alu_ri(&e->a, false, ALU_AND, RCX, VM_BLOCK_MAP - 1);
  shift_ri(&e->a, true, SH_SHL, RCX, 4);
  mov64_ri(&e->a, RDX, (uint64_t)(uintptr_t)j->map);
  alu_rr(&e->a, true, ALU_ADD, RDX, RCX);
  op_m(&e->a, false, 0x8d, RSI, RAX, 1); /* lea esi, [rax + 1] */
  op_m(&e->a, false, 0x39, RSI, RDX, 0); /* cmp [rdx], esi */
  return jcc_fwd(&e->a, CC_NE);
}

static void emit_stubs_common(struct emit *e, struct vm_jit *j)
{
  /* entry: int (*)(state *rdi, cpu *rsi, pages *rdx, code *rcx) */
  j->entry = e->a.p;
  static const unsigned saved[] = {RBX, RBP, R12, R13, R14, R15};
  for (unsigned i = 0; i < 6; i++) {
    rex(&e->a, false, 0, 0, saved[i]);
    b1(&e->a, 0x50 + (saved[i] & 7));
  }
  alu_ri(&e->a, true, ALU_SUB, RSP, 8); /* keep rsp 16-byte aligned */
  mov64_rr(&e->a, R15, RDI);
  mov64_rr(&e->a, RBX, RSI);
  mov64_rr(&e->a, RBP, RDX);
  load64(&e->a, R12, R15, ST_CY);
  load64(&e->a, R13, R15, ST_EV);
  load64(&e->a, R14, R15, ST_IR);
  jmp_r(&e->a, RCX);

  /* exit: eax holds the exit code */
  j->exit = e->a.p;
  store64(&e->a, R15, ST_CY, R12);
  store64(&e->a, R15, ST_IR, R14);
  alu_ri(&e->a, true, ALU_ADD, RSP, 8);
  for (int i = 5; i >= 0; i--) {
    rex(&e->a, false, 0, 0, saved[i]);
    b1(&e->a, 0x58 + (saved[i] & 7));
  }
  b1(&e->a, 0xc3);

  /* dispatch: eax = the target of a retired indirect branch (cy, ir done),
   * r8d = the branch's address */
  j->dispatch = e->a.p;
  { /* the MTB: eax and r8d kept in c->r[15] and state.exec_pc across the call */
    op_m(&e->a, false, 0x80, ALU_CMP, RBX, VM_MTB_OBS);
    b1(&e->a, 0);
    uint8_t *off = jcc_fwd(&e->a, CC_E);
    /* next - pc of 2 or 4 may be the next instruction: mtb_indirect decides */
    op_m(&e->a, false, 0x8d, RCX, RAX, -2); /* lea ecx, [rax - 2] */
    alu_rr(&e->a, false, ALU_SUB, RCX, R8);
    alu_ri(&e->a, false, ALU_AND, RCX, ~2u);
    uint8_t *near = jcc_fwd(&e->a, CC_E);
    uint8_t *slow, *done;
    emit_mtb_packet(e, &slow, &done, false, 0, 0);
    patch(&e->a, slow, e->a.p);
    emit_mtb_unborrow(e);
    patch(&e->a, near, e->a.p);
    store32(&e->a, RBX, CPU_PC, RAX);
    store32(&e->a, R15, ST_XPC, R8);
    mov_rr(&e->a, RSI, R8);
    mov_rr(&e->a, RDX, RAX);
    emit_mtb_call(e, mtb_indirect);
    load32(&e->a, RAX, RBX, CPU_PC);
    load32(&e->a, R8, R15, ST_XPC);
    patch(&e->a, off, e->a.p);
    patch(&e->a, done, e->a.p);
  }
  uint8_t *miss = emit_map_lookup(e, j);
  op_m(&e->a, false, 0x89, RAX, R15, ST_PC); /* mov [r15 + pc], eax (for a bound miss) */
  load64(&e->a, RAX, RDX, (int32_t)offsetof(struct vm_block, op));
  emit_go_block(e, NULL);
  uint8_t *to_enter = jmp_fwd(&e->a);
  patch(&e->a, miss, e->a.p);
  op_m(&e->a, false, 0x89, RAX, R15, ST_PC);
  patch(&e->a, to_enter, e->a.p); /* enter at pc, nothing to link */
  store32(&e->a, R15, ST_XPC, R8); /* the branch: it may have crossed the event */
  op_m(&e->a, true, 0xc7, 0, R15, ST_OP); /* mov qword [r15 + op], 0 */
  b4(&e->a, 0);
  mov_ri(&e->a, RAX, VM_JIT_ENTER);
  jmp_to(&e->a, j->exit);

  /* slow: rdx = the entry op to run by vm_jit_slow (cycles owed added, the
   * flags stored), which the block executor would run through exec_insn
   * (a load or store of a device, an EXC_RETURN); when it did nothing,
   * resume at op. serve: the same for the checked variant's stop at the
   * event before op, served by vm_jit_serve; when it did nothing, on one
   * instruction at a time from op (as emit_resume leaves there). */
  uint8_t *ran[2];
  for (unsigned k = 0; k < 2; k++) {
    if (k)
      j->serve = e->a.p;
    else
      j->slow = e->a.p;
    store64(&e->a, R15, ST_CY, R12);
    store64(&e->a, R15, ST_IR, R14);
    store64(&e->a, R15, ST_OP, RDX);
    mov64_rr(&e->a, RDI, RBX);
    mov64_rr(&e->a, RSI, R15);
    mov64_ri(&e->a, RAX, k ? (uint64_t)(uintptr_t)vm_jit_serve : (uint64_t)(uintptr_t)vm_jit_slow);
    op_r(&e->a, false, 0xff, 2, RAX); /* call rax */
    test_rr(&e->a, RAX, RAX);
    ran[k] = jcc_fwd(&e->a, CC_NE);
    mov_ri(&e->a, RAX, k ? VM_JIT_PLAIN : VM_JIT_RESUME);
    jmp_to(&e->a, j->exit);
  }
  patch(&e->a, ran[0], e->a.p);
  patch(&e->a, ran[1], e->a.p);
  /* go: eax = what vm_jit_slow or vm_jit_serve returned when they ran:
   * 1, on at state.pc with the state they left: into its block's code when
   * the bound allows, else its checked variant (as `enter` goes on); else
   * back to the block executor with the state in the cpu (VM_JIT_SYNCED).
   * Another value is the exit code. */
  j->go = e->a.p;
  alu_ri(&e->a, false, ALU_CMP, RAX, 1);
  patch(&e->a, jcc_fwd(&e->a, CC_NE), j->exit);
  load64(&e->a, R12, R15, ST_CY);
  load64(&e->a, R13, R15, ST_EV);
  load64(&e->a, R14, R15, ST_IR);
  load32(&e->a, RAX, R15, ST_PC);
  uint8_t *synced[4];
  synced[0] = emit_map_lookup(e, j);
  load64(&e->a, RAX, RDX, (int32_t)offsetof(struct vm_block, op));
  load32(&e->a, RSI, RAX, OP_BOUND);
  alu_rr(&e->a, true, ALU_ADD, RSI, R12);
  alu_rr(&e->a, true, ALU_CMP, RSI, R13);
  uint8_t *near = jcc_fwd(&e->a, CC_AE);
  load64(&e->a, RCX, RAX, OP_JIT);
  test64_rr(&e->a, RCX, RCX);
  synced[1] = jcc_fwd(&e->a, CC_E);
  jmp_r(&e->a, RCX);
  patch(&e->a, near, e->a.p);
  load64(&e->a, RCX, RAX, OP_JITC);
  test64_rr(&e->a, RCX, RCX);
  synced[2] = jcc_fwd(&e->a, CC_E);
  jmp_r(&e->a, RCX);
  for (unsigned i = 0; i < 3; i++)
    patch(&e->a, synced[i], e->a.p);
  mov_ri(&e->a, RAX, VM_JIT_SYNCED);
  jmp_to(&e->a, j->exit);
}

/* ---- out-of-line exits -------------------------------------------------------- */

static bool add_stub(struct emit *e, uint8_t *patch_at, const struct vm_block_op *op,
                     uint32_t pend, bool taken)
{
  if (e->nstub == (e->tm ? JIT_STUBS_MAX : JIT_STUBS_TABLE)) {
    e->a.full = true;
    return false;
  }
  e->stub[e->nstub++] = (struct stub){.patch = patch_at, .op = op, .pend = pend, .taken = taken,
                                      .df = e->df};
  return true;
}

/* r12 += table cycles owed (none on a machine with a memory system: the
 * timing model's come from emit_tm_charge) */
static void add_cy(struct emit *e, uint32_t v)
{
  if (!e->tm)
    add64_i(&e->a, R12, v);
}

/* Resume at op with the block executor (nothing of op done); in the
 * checked variant, or `plain` (the event is due, e->tm), one instruction
 * at a time. */
static void emit_resume(struct emit *e, const struct vm_block_op *op, uint32_t pend, bool plain)
{
  plain |= e->checked;
  if (plain && op->d.nth) /* the last it ran, for a PC sample at the event */
    store32_i(&e->a, R15, ST_XPC, op[-1].d.tag);
  add_cy(e, pend);
  mov64_ri(&e->a, RAX, (uint64_t)(uintptr_t)op);
  store64(&e->a, R15, ST_OP, RAX);
  mov_ri(&e->a, RAX, plain ? VM_JIT_PLAIN : VM_JIT_RESUME);
  jmp_to(&e->a, e->j->exit);
}

/* ---- the timing model (a machine with a memory system, e->tm) ----------------
 *
 * Each instruction, once its semantics are done, calls
 * vm_exec_tm_charge_jit (exec_tm.c) with what run_block_tm's handler gives
 * vm_exec_tm_charge_fast: its entry, the next PC, and its first data
 * access (logged in state.tm_addr/tm_val by the load/store emitters), and
 * adds the model's cycles to r12; then it checks the event, as
 * run_block_tm's RETIRE does (emit_tm_after). A branch's check is the
 * bound check of its target's block (bound 0 on such machines, block.c). */
/* Whether the run at r11 is still the one a link or fork recorded (eax =
 * the version recorded with the pointer), still valid (the memo's gen) and
 * its cache lines there (the epoch): else to slow[]. */
static void emit_tm_run_valid(struct emit *e, uint8_t **slow, unsigned *nsp)
{
  unsigned ns = *nsp;
  alu_rm(&e->a, ALU_CMP, RAX, R11, R_VER);
  slow[ns++] = jcc_fwd(&e->a, CC_NE);
  load32(&e->a, RAX, RSI, M_GEN);
  alu_rm(&e->a, ALU_CMP, RAX, R11, R_GEN);
  slow[ns++] = jcc_fwd(&e->a, CC_NE);
  load64(&e->a, RAX, RDI, TM_EPOCH);
  op_m(&e->a, true, 0x3b, RAX, R11, R_EPOCH); /* cmp rax, [run + epoch] */
  slow[ns++] = jcc_fwd(&e->a, CC_NE);
  *nsp = ns;
}

/* The memo's step for the instruction at pc going to next (in r10d when
 * next_in_eax; executed, or r9d when -1): rdi = the model, rsi = its memo,
 * rdx = the step, r11 = the run hopped to when the replayed run had ended
 * (its link), else 0. Jumps to be patched to the C path are added to
 * slow[]; nothing is stored. */
static void emit_tm_find(struct emit *e, uint32_t pc, uint32_t next, bool next_in_eax,
                         int executed, uint8_t **slow, unsigned *nsp)
{
  unsigned ns = *nsp;
  load64(&e->a, RDI, RBX, VM_TM);
  op_m(&e->a, false, 0x81, ALU_CMP, RDI, TM_DPC); /* cmp dword [tm + dpc], pc */
  b4(&e->a, pc);
  slow[ns++] = jcc_fwd(&e->a, CC_NE);
  load64(&e->a, RSI, RDI, TM_MEMO);
  test64_rr(&e->a, RSI, RSI);
  slow[ns++] = jcc_fwd(&e->a, CC_E);
  op_m(&e->a, true, 0x83, ALU_CMP, RSI, M_CUR); /* cmp qword [m + cur], 0 */
  b1(&e->a, 0);
  slow[ns++] = jcc_fwd(&e->a, CC_E);
  load64(&e->a, RDX, RSI, M_S);
  alu_rr(&e->a, true, ALU_XOR, R11, R11); /* r11: the run hopped to, or 0 */
  op_m(&e->a, true, 0x3b, RDX, RSI, M_END); /* cmp rdx, [m + end] */
  uint8_t *in_run = jcc_fwd(&e->a, CC_NE);
  { /* the end of the run: on to the one linked to it (rcx), whose first
     * step (rdx) is checked below as any other; nothing is stored
     * before every check passed */
    const int32_t step0 = R_STEP;
    load64(&e->a, RCX, RSI, M_CUR);
    load64(&e->a, R11, RCX, R_LINK);
    test64_rr(&e->a, R11, R11);
    uint8_t *try1a = jcc_fwd(&e->a, CC_E);
    if (next_in_eax) {
      alu_rm(&e->a, ALU_CMP, R10, R11, step0 + S_NEXT);
    } else {
      op_m(&e->a, false, 0x81, ALU_CMP, R11, step0 + S_NEXT);
      b4(&e->a, next);
    }
    uint8_t *try1b = jcc_fwd(&e->a, CC_NE);
    op_m(&e->a, false, 0x0fb7, RAX, R11, step0 + S_EX);
    if (executed >= 0)
      alu_ri(&e->a, false, ALU_CMP, RAX, (uint32_t)executed);
    else
      alu_rr(&e->a, false, ALU_CMP, RAX, R9);
    uint8_t *try1c = jcc_fwd(&e->a, CC_NE);
    load32(&e->a, RAX, RCX, R_LINKV);
    uint8_t *check = jmp_fwd(&e->a);
    patch(&e->a, try1a, e->a.p);
    patch(&e->a, try1b, e->a.p);
    patch(&e->a, try1c, e->a.p);
    load64(&e->a, R11, RCX, R_LINK + 8);
    test64_rr(&e->a, R11, R11);
    slow[ns++] = jcc_fwd(&e->a, CC_E);
    load32(&e->a, RAX, RCX, R_LINKV + 4);
    patch(&e->a, check, e->a.p);
    emit_tm_run_valid(e, slow, &ns);
    op_m(&e->a, true, 0x8d, RDX, R11, step0); /* lea rdx, [l + step] */
  }
  patch(&e->a, in_run, e->a.p);
  *nsp = ns;
}

/* Whether the memo step at rdx is the instruction at pc going to next
 * (vm_tm_memo_matches): falls through when it is, else one of the jumps
 * added to fail[]. */
static void emit_tm_match(struct emit *e, uint32_t pc, uint32_t next, bool next_in_eax, bool mem,
                          int executed, uint8_t **fail, unsigned *nfp)
{
  unsigned nf = *nfp;
  if (next_in_eax) {
    op_m(&e->a, false, 0x81, ALU_CMP, RDX, S_PC);
    b4(&e->a, pc);
    fail[nf++] = jcc_fwd(&e->a, CC_NE);
    alu_rm(&e->a, ALU_CMP, R10, RDX, S_NEXT);
  } else { /* pc and next in one compare */
    mov64_ri(&e->a, RAX, pc | (uint64_t)next << 32);
    op_m(&e->a, true, 0x3b, RAX, RDX, S_PC); /* cmp rax, [s + pc] */
  }
  fail[nf++] = jcc_fwd(&e->a, CC_NE);
  if (!mem) {
    /* no data access: a step with the same ex, acc NONE and nw 0 (what
     * the memo records for it, tm_memo.c record), in one compare */
    if (executed >= 0) {
      op_m(&e->a, false, 0x81, ALU_CMP, RDX, S_EX);
      b4(&e->a, vm_tm_memo_ex(executed != 0, 0) | (uint32_t)VM_TM_ACC_NONE << 16);
    } else {
      alu_rm(&e->a, ALU_CMP, R9, RDX, S_EX);
    }
    fail[nf++] = jcc_fwd(&e->a, CC_NE);
  } else {
    op_m(&e->a, false, 0x0fb7, RAX, RDX, S_EX); /* executed | extra << 8 (extra 0) */
    if (executed >= 0)
      alu_ri(&e->a, false, ALU_CMP, RAX, (uint32_t)executed);
    else
      alu_rr(&e->a, false, ALU_CMP, RAX, R9);
    fail[nf++] = jcc_fwd(&e->a, CC_NE);
    op_m(&e->a, false, 0x0fb6, RAX, RDX, S_ACC);
    alu_ri(&e->a, false, ALU_CMP, RAX, VM_TM_ACC_PLAIN);
    uint8_t *not_plain = jcc_fwd(&e->a, CC_NE);
    { /* vm_tm_memo_plain: eax = addr, ecx = last, r8d scratch */
      load32(&e->a, RAX, R15, ST_TMA);
      alu_ri(&e->a, false, ALU_CMP, RAX, 0x20000000u);
      fail[nf++] = jcc_fwd(&e->a, CC_B);
      op_m(&e->a, false, 0x0fb6, RCX, RDX, S_NW);
      shift_ri(&e->a, false, SH_SHL, RCX, 2);
      alu_rr(&e->a, false, ALU_ADD, RCX, RAX);
      alu_ri(&e->a, false, ALU_SUB, RCX, 4);
      alu_rr(&e->a, false, ALU_CMP, RCX, RAX); /* last < addr: it wrapped */
      fail[nf++] = jcc_fwd(&e->a, CC_B);
      for (unsigned k = 0; k < 2; k++) { /* bt [tm + lat_g], granule: in a slow region */
        mov_rr(&e->a, R8, k ? RCX : RAX);
        shift_ri(&e->a, false, SH_SHR, R8, 24);
        op_m(&e->a, false, 0x0fa3, R8, RDI, TM_LATG);
        fail[nf++] = jcc_fwd(&e->a, CC_B);
      }
      op_m(&e->a, false, 0x80, 7, RDX, S_WR); /* cmp byte [s + wr], 0 */
      b1(&e->a, 0);
      uint8_t *no_store = jcc_fwd(&e->a, CC_E);
      op_m(&e->a, false, 0x80, 7, RDI, TM_CACHE); /* cmp byte [tm + cfg.cache], 0 */
      b1(&e->a, 0);
      uint8_t *no_cache = jcc_fwd(&e->a, CC_E);
      load32(&e->a, R8, RDI, TM_CTL); /* cache_ctl - addr < 4 nw: the control register */
      alu_rr(&e->a, false, ALU_SUB, R8, RAX);
      op_m(&e->a, false, 0x0fb6, RCX, RDX, S_NW);
      shift_ri(&e->a, false, SH_SHL, RCX, 2);
      alu_rr(&e->a, false, ALU_CMP, R8, RCX);
      fail[nf++] = jcc_fwd(&e->a, CC_B);
      patch(&e->a, no_store, e->a.p);
      patch(&e->a, no_cache, e->a.p);
    }
    uint8_t *plain_ok = jmp_fwd(&e->a);
    patch(&e->a, not_plain, e->a.p);
    alu_ri(&e->a, false, ALU_CMP, RAX, VM_TM_ACC_EXACT);
    uint8_t *ok = jcc_fwd(&e->a, CC_NE);
    load32(&e->a, RAX, R15, ST_TMA);
    alu_rm(&e->a, ALU_CMP, RAX, RDX, S_ADDR);
    fail[nf++] = jcc_fwd(&e->a, CC_NE);
    patch(&e->a, ok, e->a.p);
    patch(&e->a, plain_ok, e->a.p);
  }
  *nfp = nf;
}

/* The memo's fork (step_slow's case, tm_memo.c vm_tm_memo_fork) after the
 * step at rdx did not match, inside the run being replayed (r11 = 0: no
 * hop): rdx = the fork's first step and r11 = the fork when it is the one
 * for this step, still valid and its cache lines there (the epoch; else
 * the C path looks); any other case to slow[]. Nothing stored. */
static void emit_tm_fork(struct emit *e, uint8_t **slow, unsigned *nsp)
{
  unsigned ns = *nsp;
  test64_rr(&e->a, R11, R11);
  slow[ns++] = jcc_fwd(&e->a, CC_NE);
  load64(&e->a, RCX, RSI, M_CUR);
  load64(&e->a, R11, RCX, R_FORK);
  test64_rr(&e->a, R11, R11);
  slow[ns++] = jcc_fwd(&e->a, CC_E);
  op_m(&e->a, false, 0x0fb6, RAX, RCX, R_FORKAT); /* &r->step[fork_at] == s */
  op_r(&e->a, false, 0x69, RAX, RAX);             /* imul eax, eax, sizeof step */
  b4(&e->a, (uint32_t)sizeof(struct vm_tm_memo_step));
  alu_rr(&e->a, true, ALU_ADD, RAX, RCX);
  add64_i(&e->a, RAX, (uint32_t)R_STEP);
  alu_rr(&e->a, true, ALU_CMP, RAX, RDX);
  slow[ns++] = jcc_fwd(&e->a, CC_NE);
  load32(&e->a, RAX, RCX, R_FORKV);
  emit_tm_run_valid(e, slow, &ns);
  op_m(&e->a, true, 0x8d, RDX, R11, R_STEP); /* lea rdx, [f + step] */
  *nsp = ns;
}

static void emit_tm_charge(struct emit *e, const struct vm_block_op *op, uint32_t next,
                           bool next_in_eax, bool mem, int executed)
{
  const uint32_t pc = op->d.tag;
  uint8_t *slow[48], *mism[24];
  unsigned ns = 0, nm = 0;
  const uint8_t *commit = NULL;
  if (next_in_eax)
    mov_rr(&e->a, R10, RAX);
  /* vm_tm_memo_replay's commonest case inline: the next step of the run
   * being replayed (rdi: the model, rsi: its memo, rdx: the step); any
   * other case goes to the C helper below, with nothing changed */
  if (next_in_eax || next < 0xF0000000u) {
    emit_tm_find(e, pc, next, next_in_eax, executed, slow, &ns);
    emit_tm_match(e, pc, next, next_in_eax, mem, executed, mism, &nm);
    commit = e->a.p; /* (the fork's way in, below: as a hop to it) */
    test64_rr(&e->a, R11, R11);
    uint8_t *same = jcc_fwd(&e->a, CC_E);
    store64(&e->a, RSI, M_CUR, R11); /* the hop: m->cur = l, m->end = its last step's end */
    op_m(&e->a, false, 0x0fb6, RAX, R11, R_N);
    op_r(&e->a, false, 0x69, RAX, RAX); /* imul eax, eax, sizeof step */
    b4(&e->a, (uint32_t)sizeof(struct vm_tm_memo_step));
    alu_rr(&e->a, true, ALU_ADD, RAX, R11);
    add64_i(&e->a, RAX, (uint32_t)R_STEP);
    store64(&e->a, RSI, M_END, RAX);
    patch(&e->a, same, e->a.p);
    op_m(&e->a, true, 0x8d, RCX, RDX, (int32_t)sizeof(struct vm_tm_memo_step));
    store64(&e->a, RSI, M_S, RCX);
    op_m(&e->a, false, 0x0fb7, RAX, RDX, S_CYC);
    op_m(&e->a, true, 0x01, RAX, RDI, TM_NOW); /* add [tm + now], rax */
    if (next_in_eax)
      store32(&e->a, RDI, TM_DPC, R10);
    else
      store32_i(&e->a, RDI, TM_DPC, next);
    alu_rr(&e->a, true, ALU_ADD, R12, RAX);
  }
  uint8_t *done = ns || nm ? jmp_fwd(&e->a) : NULL;
  if (nm && executed == 1) { /* the step did not match: its run's fork, then as a hop to it */
    for (unsigned i = 0; i < nm; i++)
      patch(&e->a, mism[i], e->a.p);
    emit_tm_fork(e, slow, &ns);
    emit_tm_match(e, pc, next, next_in_eax, mem, executed, slow, &ns);
    load32(&e->a, RAX, RSI, M_TICK); /* f->stamp = m->tick */
    store32(&e->a, R11, R_STAMP, RAX);
    jmp_to(&e->a, commit);
  } else {
    for (unsigned i = 0; i < nm; i++)
      slow[ns++] = mism[i];
  }
  for (unsigned i = 0; i < ns; i++)
    patch(&e->a, slow[i], e->a.p);
  if (next_in_eax)
    mov_rr(&e->a, RDX, R10);
  else
    mov_ri(&e->a, RDX, next);
  if (mem) {
    load32(&e->a, RCX, R15, ST_TMA);
    load32(&e->a, R8, R15, ST_TMV);
  } else {
    alu_rr(&e->a, false, ALU_XOR, RCX, RCX);
    alu_rr(&e->a, false, ALU_XOR, R8, R8);
  }
  if (executed >= 0) /* else r9d holds it (IT blocks) */
    mov_ri(&e->a, R9, (uint32_t)executed);
  mov64_rr(&e->a, RDI, RBX);
  mov64_ri(&e->a, RSI, (uint64_t)(uintptr_t)&op->d);
  mov64_ri(&e->a, RAX, (uint64_t)(uintptr_t)vm_exec_tm_charge_jit);
  op_r(&e->a, false, 0xff, 2, RAX); /* call rax */
  mov_rr(&e->a, RAX, RAX);          /* the uint32_t returned, zero-extended */
  alu_rr(&e->a, true, ALU_ADD, R12, RAX);
  if (done)
    patch(&e->a, done, e->a.p);
}

/* After an instruction (the one before `op`) retired: when the event is
 * due (cy >= ev), leave before op, one instruction at a time from there;
 * `it`: the ITSTATE there (0 outside an IT block). */
static void emit_tm_after(struct emit *e, const struct vm_block_op *op, uint8_t it)
{
  const uint8_t *again = e->a.p;
  alu_rr(&e->a, true, ALU_CMP, R12, R13);
  if (add_stub(e, jcc_fwd(&e->a, CC_AE), op, 0, false)) {
    e->stub[e->nstub - 1].it = it;
    e->stub[e->nstub - 1].plain = true;
    /* a periodic PC sample is served at the stop and the check done again
     * with the next event (emit_event_call), as run_block_tm's `event` */
    e->stub[e->nstub - 1].again = again;
  }
}

static bool is_mem_op(unsigned f)
{
  return vm_fast_is_load_store(f) || f == VM_FAST_LDM || f == VM_FAST_STM;
}

/* An instruction that goes on to the next entry retired. */
static void emit_tm_retire(struct emit *e, const struct vm_block_op *op)
{
  emit_tm_charge(e, op, op->d.tag + op->d.insn.len, false, is_mem_op(op->d.fast), 1);
  emit_tm_after(e, op + 1, 0);
}

/* Back to the block executor after the direct branch op was taken, to go on
 * at its target (label enter, which links op to the target's block). */
static void emit_enter_exit(struct emit *e, const struct vm_block_op *op)
{
  store32_i(&e->a, R15, ST_XPC, op->d.tag); /* op may have crossed the event (block.c) */
  mov64_ri(&e->a, RDX, (uint64_t)(uintptr_t)op);
  store64(&e->a, R15, ST_OP, RDX);
  store32_i(&e->a, R15, ST_PC, (uint32_t)op->d.soff);
  mov_ri(&e->a, RAX, VM_JIT_ENTER);
  jmp_to(&e->a, e->j->exit);
}

/* Whether compiled code may stop before an entry of this kind, for the
 * block executor (which may fault it): loads, stores, BX. */
static bool may_stop_first(unsigned fast)
{
  return vm_fast_is_load_store(fast) || fast == VM_FAST_LDM || fast == VM_FAST_STM ||
         fast == VM_FAST_BX || fast == VM_FAST_IT || fast == VM_FAST_SLOW;
}

/* A direct branch op taken: retire it and go to its target block. When the
 * target is compiled already (or is this block), a direct jump after the
 * bound check; else through op's link when set and the target's bound
 * allows (exec_threaded.h, RETIRE_TAKEN), else back to the block executor
 * to look the target up and link it. Blocks and code are dropped together,
 * so a jump into another block's code stays valid as long as it exists. */
static void emit_df_store(struct emit *e, const struct dflags *d, unsigned m);
static unsigned flags_live_in(const struct vm_block_op *first);

/* (df: the flags owed at the branch, or NULL) */
static void emit_taken(struct emit *e, const struct vm_block_op *op, uint32_t pend,
                       const struct dflags *df)
{
  const uint32_t target = (uint32_t)op->d.soff;
  const struct vm_block *tb = &e->j->map[(target >> 1) & (VM_BLOCK_MAP - 1)];
  const struct vm_block_op *to = NULL;
  const uint8_t *code = NULL;
  if (target == e->first->d.tag) {
    to = e->first, code = e->first->jit ? e->first->jit : e->start;
  } else if (tb->tag == (target | 1) && tb->op->jit) {
    to = tb->op, code = tb->op->jit;
  }
  emit_mtb_direct(e, op, target);
  if (e->tm)
    emit_tm_charge(e, op, target, false, false, 1);
  else
    add64_i(&e->a, R12, pend + op->d.taken_cycles);
  add64_i(&e->a, R14, op->d.nth + 1u);
  const unsigned owed = df ? df->owed : 0;
  if (to) {
    /* into its code: only the owed flags it may read before writing them */
    const unsigned need = owed ? owed & flags_live_in(to) : 0;
    const bool ls = vm_fast_is_load_store(to->d.fast), stop = may_stop_first(to->d.fast);
    op_m(&e->a, true, 0x8d, RSI, R12, (int32_t)to->bound); /* lea rsi, [r12 + bound] */
    alu_rr(&e->a, true, ALU_CMP, RSI, R13);
    if (!need && !ls && !stop) {
      patch(&e->a, jcc_fwd(&e->a, CC_B), code);
    } else {
      uint8_t *bound = jcc_fwd(&e->a, CC_AE);
      emit_df_store(e, df, need);
      if (ls) /* it reads the pipelining state */
        emit_ls_clear(e);
      if (stop) /* a fault's entry shows the branch (pc_at.c) */
        store32_i(&e->a, R15, ST_XPC, op->d.tag);
      jmp_to(&e->a, code);
      patch(&e->a, bound, e->a.p);
    }
    /* the event is near: the checked variant, or the block executor */
    emit_df_store(e, df, owed);
    store32_i(&e->a, R15, ST_XPC, op->d.tag); /* op may have crossed it (block.c) */
    mov64_ri(&e->a, RAX, (uint64_t)(uintptr_t)to);
    emit_try_checked(e, RAX);
    emit_enter_exit(e, op);
    return;
  }
  emit_df_store(e, df, owed);
  mov64_ri(&e->a, RDX, (uint64_t)(uintptr_t)op);
  load64(&e->a, RAX, RDX, OP_LINK);
  test64_rr(&e->a, RAX, RAX);
  uint8_t *unlinked = jcc_fwd(&e->a, CC_E);
  emit_go_block(e, op);
  patch(&e->a, unlinked, e->a.p);
  emit_enter_exit(e, op);
}

/* The checked variant at the event, before op (nothing of it done, pend
 * cycles owed): vm_jit_event (exec.c) with the state in memory as the
 * exit would leave it; when it served the event (a periodic PC sample),
 * r13 = the next event and back to the check, else on to the exit. */
static void emit_event_call(struct emit *e, const struct stub *s)
{
  const struct vm_block_op *op = s->op;
  /* no call unless the DWT's timer is the one due (vm_jit_event's first
   * test, exec.c; every other event leaves at once) */
  load64(&e->a, RAX, RBX, VM_DBGP);
  test64_rr(&e->a, RAX, RAX);
  uint8_t *no_dwt = jcc_fwd(&e->a, CC_E);
  load32(&e->a, RCX, RAX, DBG_TIMER);
  alu_rm(&e->a, ALU_CMP, RCX, RBX, SYS_NEXT_TIMER);
  uint8_t *other = jcc_fwd(&e->a, CC_NE);
  if (op->d.nth) /* the last it ran, for the sample */
    store32_i(&e->a, R15, ST_XPC, op[-1].d.tag);
  op_m(&e->a, true, 0x8d, RAX, R12, (int32_t)s->pend); /* lea rax, [r12 + pend] */
  store64(&e->a, R15, ST_CY, RAX);
  store64(&e->a, R15, ST_IR, R14);
  mov64_rr(&e->a, RDI, RBX);
  mov64_rr(&e->a, RSI, R15);
  mov64_ri(&e->a, RDX, (uint64_t)(uintptr_t)op);
  mov64_ri(&e->a, RAX, (uint64_t)(uintptr_t)vm_jit_event);
  op_r(&e->a, false, 0xff, 2, RAX); /* call rax */
  test64_rr(&e->a, RAX, RAX);
  uint8_t *leave = jcc_fwd(&e->a, CC_E);
  mov64_rr(&e->a, R13, RAX);
  jmp_to(&e->a, s->again);
  patch(&e->a, leave, e->a.p);
  patch(&e->a, no_dwt, e->a.p);
  patch(&e->a, other, e->a.p);
}

/* A single load or store's way to vm_jit_slow (stub s): first vm_jit_dev
 * with the state it reads (the cycle op starts at, ir, the event in r13),
 * and when it did the access and the block may go on, back into it after
 * op, its cycles owed as the inline path leaves them there; when it did it
 * and the block may not, on as after vm_jit_slow (the shared stub go);
 * else (nothing done) on to vm_jit_slow, below. */
static void emit_dev_call(struct emit *e, const struct stub *s)
{
  op_m(&e->a, true, 0x8d, RAX, R12, (int32_t)s->pend); /* lea rax, [r12 + pend] */
  store64(&e->a, R15, ST_CY, RAX);
  store64(&e->a, R15, ST_IR, R14);
  store64(&e->a, R15, ST_EV, R13);
  mov64_rr(&e->a, RDI, RBX);
  mov64_rr(&e->a, RSI, R15);
  mov64_ri(&e->a, RDX, (uint64_t)(uintptr_t)s->op);
  mov64_ri(&e->a, RAX, (uint64_t)(uintptr_t)vm_jit_dev);
  op_r(&e->a, false, 0xff, 2, RAX); /* call rax */
  alu_ri(&e->a, false, ALU_CMP, RAX, VM_JIT_DEV_ON);
  uint8_t *other = jcc_fwd(&e->a, CC_NE);
  load64(&e->a, R12, R15, ST_CY);
  if (s->pend_after)
    alu_ri(&e->a, true, ALU_SUB, R12, s->pend_after);
  load64(&e->a, R13, R15, ST_EV);
  jmp_to(&e->a, s->rejoin);
  patch(&e->a, other, e->a.p);
  test_rr(&e->a, RAX, RAX);
  patch(&e->a, jcc_fwd(&e->a, CC_NE), e->j->go);
}

/* After emit_page: the index + 1 of the `slow` stub its page check added
 * for op, for a device's access (emit_dev_call), or 0. */
static unsigned dev_stub(const struct emit *e, const struct vm_block_op *op)
{
  if (!e->nstub || e->a.full)
    return 0;
  const struct stub *s = &e->stub[e->nstub - 1];
  return s->slow && s->op == op && !s->it ? e->nstub : 0;
}

/* ... and after the access's cycles (emit_ls_done): where it goes on. */
static void dev_rejoin(struct emit *e, unsigned ds, uint32_t pend)
{
  if (!ds || e->a.full)
    return;
  e->stub[ds - 1].rejoin = e->a.p;
  e->stub[ds - 1].pend_after = pend;
}

static void emit_stubs(struct emit *e)
{
  for (unsigned i = 0; i < e->nstub; i++) {
    const struct stub *s = &e->stub[i];
    patch(&e->a, s->patch, e->a.p);
    if (!s->taken) /* (a taken branch's: emit_taken, only where it leaves) */
      emit_df_store(e, &s->df, s->df.owed);
    if (s->again && !s->it) /* (inside an IT block: left to the executor) */
      emit_event_call(e, s);
    if (s->it) { /* mov byte [rbx + itstate], it: the one-at-a-time executor goes on */
      op_m(&e->a, false, 0xc6, 0, RBX, CPU_IT);
      b1(&e->a, s->it);
    }
    if (s->taken) {
      emit_taken(e, s->op, s->pend, &s->df);
    } else if (s->slow && !s->it) {
      if (s->rejoin)
        emit_dev_call(e, s);
      add_cy(e, s->pend);
      mov64_ri(&e->a, RDX, (uint64_t)(uintptr_t)s->op);
      jmp_to(&e->a, e->j->slow);
    } else if (s->again && !s->it && !e->tm) {
      /* any other event: its service here (the shared stub serve), and on
       * in compiled code where it leaves the PC (a handler's first block);
       * else the exit emit_resume would make */
      if (s->op->d.nth)
        store32_i(&e->a, R15, ST_XPC, s->op[-1].d.tag);
      add_cy(e, s->pend);
      mov64_ri(&e->a, RDX, (uint64_t)(uintptr_t)s->op);
      jmp_to(&e->a, e->j->serve);
    } else {
      emit_resume(e, s->op, s->pend, s->plain);
    }
  }
}

/* A jump to "resume at op" taken when the flags say cc. */
static void bail_if(struct emit *e, unsigned cc, const struct vm_block_op *op, uint32_t pend)
{
  add_stub(e, jcc_fwd(&e->a, cc), op, pend, false);
}

/* The same where the block executor would take op to exec_insn (memory
 * that is not plain, an EXC_RETURN): run it by vm_jit_slow and go on in
 * compiled code (the shared stub `slow`); the checked variant and a
 * machine with a memory system resume at op. */
static void slow_if(struct emit *e, unsigned cc, const struct vm_block_op *op, uint32_t pend)
{
  bail_if(e, cc, op, pend);
  if (!e->checked && !e->tm && !e->a.full && e->nstub)
    e->stub[e->nstub - 1].slow = true;
}

/* The checked variant's test before op (the one-at-a-time executor's: it
 * starts op while cy < ev), stopping before it otherwise; `it`: the
 * ITSTATE the stop leaves inside an IT block (0 outside one). */
static void emit_check(struct emit *e, const struct vm_block_op *op, uint32_t pend, uint8_t it)
{
  const uint8_t *again = e->a.p;
  op_m(&e->a, true, 0x8d, RAX, R12, (int32_t)pend); /* lea rax, [r12 + pend] */
  alu_rr(&e->a, true, ALU_CMP, RAX, R13);
  bail_if(e, CC_AE, op, pend);
  if (!e->a.full && e->nstub) {
    e->stub[e->nstub - 1].it = it;
    e->stub[e->nstub - 1].again = again;
  }
}

/* ---- instructions ------------------------------------------------------------- */

/* Whether an access's wait states are added to r12 (emit_wait), from the
 * page in rdx: else none are, and its cycles can wait in pend. */
static bool has_wait(const struct emit *e, bool write)
{
  return !e->tm && (write ? e->ww : e->wr);
}

/* rdx = the page of the address in eax (or of the constant `addr` when
 * known), rsi + r10 its host byte, after checking [addr, addr + size) is
 * plain memory a core read (write) may use; else resume at op. Where no
 * wait states are read from it (has_wait), rdx is its offset from rbp. */
static void emit_page_at(struct emit *e, const struct vm_block_op *op, uint32_t pend,
                         uint32_t size, bool write, bool known, uint32_t addr)
{
  if (known) {
    op_m(&e->a, true, 0x8d, RDX, RBP, (int32_t)((addr >> VM_PAGE_SHIFT) * 32)); /* lea rdx, [rbp + d] */
    mov_ri(&e->a, R10, addr & PAGE_MASK);
    mov_ri(&e->a, RCX, addr & PAGE_MASK);
    op_m(&e->a, false, 8 * ALU_SUB + 3, RCX, RDX, PG_LO); /* ecx = off - lo (zero-extended) */
    add64_i(&e->a, RCX, size);
    load32(&e->a, RSI, RDX, write ? PG_WLIM : PG_RLIM);
    alu_rr(&e->a, true, ALU_CMP, RCX, RSI);
    slow_if(e, CC_A, op, pend);
    load64(&e->a, RSI, RDX, PG_HOST);
    return;
  }
  mov_rr(&e->a, RDX, RAX);
  shift_ri(&e->a, false, SH_SHR, RDX, VM_PAGE_SHIFT);
  shift_ri(&e->a, false, SH_SHL, RDX, 5);
  mov_rr(&e->a, R10, RAX);
  alu_ri(&e->a, false, ALU_AND, R10, PAGE_MASK);
  mov_rr(&e->a, RCX, R10);
  op_mbi(&e->a, false, 8 * ALU_SUB + 3, RCX, RBP, RDX, PG_LO); /* ecx = off - lo (zero-extended) */
  add64_i(&e->a, RCX, size);
  op_mbi(&e->a, false, 0x8b, RSI, RBP, RDX, write ? PG_WLIM : PG_RLIM);
  alu_rr(&e->a, true, ALU_CMP, RCX, RSI);
  slow_if(e, CC_A, op, pend);
  op_mbi(&e->a, true, 0x8b, RSI, RBP, RDX, PG_HOST);
  if (has_wait(e, write))
    alu_rr(&e->a, true, ALU_ADD, RDX, RBP);
}

static void emit_page(struct emit *e, const struct vm_block_op *op, uint32_t pend, uint32_t size,
                      bool write)
{
  emit_page_at(e, op, pend, size, write, false, 0);
}

/* Alignment: resume at op unless eax is a multiple of size. */
static void emit_align(struct emit *e, const struct vm_block_op *op, uint32_t pend, uint32_t size)
{
  if (size > 1) {
    b1(&e->a, 0xa8); /* test al, imm8 */
    b1(&e->a, size - 1);
    bail_if(e, CC_NE, op, pend);
  }
}

/* r12 += the load/store's cycles before wait states (exec_threaded.h
 * LS_CYCLES): known when the block was built, except for its first entry,
 * whose predecessor ran before the block (state.lsp/lsrt). */
static void emit_ls_cycles(struct emit *e, const struct vm_block_op *op, uint32_t pend);
static void emit_wait(struct emit *e, bool write);

/* The cycles of a load/store done: with none of them known only at run time
 * (wait states, or the first entry's pipelining), added to *pend, else to
 * r12 with *pend. */
static void emit_ls_done(struct emit *e, const struct vm_block_op *op, uint32_t *pend, bool write)
{
  if (!e->tm && op->d.insn.ls_cycles && !has_wait(e, write)) {
    *pend += op->d.insn.ls_cycles;
    return;
  }
  emit_ls_cycles(e, op, *pend);
  emit_wait(e, write);
  *pend = 0;
}

static void emit_ls_cycles(struct emit *e, const struct vm_block_op *op, uint32_t pend)
{
  const struct vm_insn *in = &op->d.insn;
  if (e->tm)
    return;
  if (in->ls_cycles) {
    add64_i(&e->a, R12, pend + in->ls_cycles);
    return;
  }
  add64_i(&e->a, R12, pend);
  /* 1 when lsp && (lsrt == NOREG || (lsrt != rn && lsrt != rm)), else 2 */
  mov_ri(&e->a, R9, 2);
  op_m(&e->a, false, 0x0fb6, R10, R15, ST_LSP); /* movzx r10d, byte [lsp] */
  test_rr(&e->a, R10, R10);
  uint8_t *two1 = jcc_fwd(&e->a, CC_E);
  op_m(&e->a, false, 0x0fb6, R10, R15, ST_LSRT);
  alu_ri(&e->a, false, ALU_CMP, R10, VM_NOREG);
  uint8_t *one = jcc_fwd(&e->a, CC_E);
  alu_ri(&e->a, false, ALU_CMP, R10, in->rn);
  uint8_t *two2 = jcc_fwd(&e->a, CC_E);
  alu_ri(&e->a, false, ALU_CMP, R10, in->rm);
  uint8_t *two3 = jcc_fwd(&e->a, CC_E);
  patch(&e->a, one, e->a.p);
  mov_ri(&e->a, R9, 1);
  patch(&e->a, two1, e->a.p);
  patch(&e->a, two2, e->a.p);
  patch(&e->a, two3, e->a.p);
  alu_rr(&e->a, true, ALU_ADD, R12, R9);
}

/* r12 += the page's (rdx) read or write wait states (none to add when no
 * memory of the machine has any) */
static void emit_wait(struct emit *e, bool write)
{
  if (!has_wait(e, write))
    return;
  op_m(&e->a, false, 0x0fb6, RCX, RDX, write ? PG_WW : PG_WR);
  alu_rr(&e->a, true, ALU_ADD, R12, RCX);
}

/* r8d = the value of size bytes at [rsi + r10], extended */
static void emit_host_load(struct emit *e, uint32_t size, bool sign)
{
  unsigned opc = size == 4 ? 0x8b : size == 2 ? (sign ? 0x0fbf : 0x0fb7) : (sign ? 0x0fbe : 0x0fb6);
  rex(&e->a, false, R8, R10, RSI);
  if (opc > 0xff)
    b1(&e->a, opc >> 8);
  b1(&e->a, opc & 0xff);
  mem_bi(&e->a, R8, RSI, R10);
}

/* [rsi + r10] = the low size bytes of r8d */
static void emit_host_store(struct emit *e, uint32_t size)
{
  if (size == 2)
    b1(&e->a, 0x66);
  rex(&e->a, false, R8, R10, RSI);
  b1(&e->a, size == 1 ? 0x88 : 0x89);
  mem_bi(&e->a, R8, RSI, R10);
}

static const uint8_t ldst_size[8] = {4, 2, 2, 1, 1, 4, 2, 1};

/* LDR/STR Rt, [Rn, #off]{!} / [Rn], #off (exec_threaded.h LDR_IMM, STR_IMM) */
static bool emit_ldst_imm(struct emit *e, const struct vm_block_op *op, uint32_t *pend)
{
  const struct vm_insn *in = &op->d.insn;
  const unsigned k = op->d.fast - VM_FAST_LDST, mode = k / 8, form = k % 8;
  const uint32_t size = ldst_size[form], soff = (uint32_t)op->d.soff;
  const bool load = form < VM_LDST_STR_W, sign = form == VM_LDST_LDR_SH || form == VM_LDST_LDR_SB;
  if (!load && in->rd == 15)
    return false;
  load32(&e->a, RAX, RBX, GR(in->rn));
  if (mode != VM_LDST_POST && soff)
    alu_ri(&e->a, false, ALU_ADD, RAX, soff);
  emit_align(e, op, *pend, size);
  emit_page(e, op, *pend, size, !load);
  const unsigned ds = dev_stub(e, op);
  if (e->tm)
    store32(&e->a, R15, ST_TMA, RAX);
  if (load) {
    emit_host_load(e, size, sign);
  } else {
    load32(&e->a, R8, RBX, GR(in->rd));
    if (e->tm)
      store32(&e->a, R15, ST_TMV, R8);
    emit_host_store(e, size);
  }
  if (mode == VM_LDST_PRE) {
    store32(&e->a, RBX, GR(in->rn), RAX);
  } else if (mode == VM_LDST_POST) {
    if (soff)
      alu_ri(&e->a, false, ALU_ADD, RAX, soff);
    store32(&e->a, RBX, GR(in->rn), RAX);
  }
  if (load)
    store32(&e->a, RBX, GR(in->rd), R8);
  emit_ls_done(e, op, pend, !load);
  dev_rejoin(e, ds, *pend);
  return true;
}

/* LDR/STR with any addressing (exec_threaded.h `ld`, `st`) */
static bool emit_ldst(struct emit *e, const struct vm_block_op *op, uint32_t *pend, bool load)
{
  const struct vm_insn *in = &op->d.insn;
  const uint32_t size = in->sub & 7;
  const bool sign = (in->sub & VM_SZ_SIGNED) != 0;
  if (size != 1 && size != 2 && size != 4)
    return false;
  const uint32_t pc = op->d.tag;
  if (load && (in->flags & VM_F_LIT) && in->rm == VM_NOREG && !(in->flags & VM_F_W)) {
    /* a literal: the address is known; its page is still checked */
    const uint32_t base = (pc + 4) & ~3u;
    const uint32_t off = (in->flags & VM_F_U) ? base + in->imm : base - in->imm;
    const uint32_t addr = (in->flags & VM_F_P) ? off : base;
    if (addr & (size - 1))
      return false;
    emit_page_at(e, op, *pend, size, false, true, addr);
    const unsigned ds = dev_stub(e, op);
    if (e->tm)
      store32_i(&e->a, R15, ST_TMA, addr);
    emit_host_load(e, size, sign);
    store32(&e->a, RBX, GR(in->rd), R8);
    emit_ls_done(e, op, pend, false);
    dev_rejoin(e, ds, *pend);
    return true;
  }
  if (in->flags & VM_F_LIT)
    mov_ri(&e->a, RAX, (pc + 4) & ~3u);
  else
    load32(&e->a, RAX, RBX, GR(in->rn));
  if (in->rm != VM_NOREG) {
    load32(&e->a, RCX, RBX, GR(in->rm));
    if (in->sh_n)
      shift_ri(&e->a, false, SH_SHL, RCX, in->sh_n & 31);
    if (in->sh_n >= 32)
      return false;
  } else {
    mov_ri(&e->a, RCX, in->imm);
  }
  mov_rr(&e->a, RDI, RAX); /* edi = offaddr */
  alu_rr(&e->a, false, (in->flags & VM_F_U) ? ALU_ADD : ALU_SUB, RDI, RCX);
  if (in->flags & VM_F_P)
    mov_rr(&e->a, RAX, RDI);
  emit_align(e, op, *pend, size);
  emit_page(e, op, *pend, size, !load);
  const unsigned ds = dev_stub(e, op);
  if (e->tm)
    store32(&e->a, R15, ST_TMA, RAX);
  if (load) {
    emit_host_load(e, size, sign);
    if (in->flags & VM_F_W)
      store32(&e->a, RBX, GR(in->rn), RDI);
    store32(&e->a, RBX, GR(in->rd), R8);
  } else {
    if (in->rd == 15)
      mov_ri(&e->a, R8, pc);
    else
      load32(&e->a, R8, RBX, GR(in->rd));
    if (e->tm)
      store32(&e->a, R15, ST_TMV, R8);
    emit_host_store(e, size);
    if (in->flags & VM_F_W)
      store32(&e->a, RBX, GR(in->rn), RDI);
  }
  emit_ls_done(e, op, pend, !load);
  dev_rejoin(e, ds, *pend);
  return true;
}

/* r12 += refill + the fetch wait states at the target in eax; r14 +=
 * the block's instructions up to op; then the dispatch stub. */
static void emit_indirect(struct emit *e, const struct vm_block_op *op, const struct vm_timing *t,
                          uint32_t cycles)
{
  if (e->tm) { /* the model's cycles; the target kept in state.pc across the call */
    store32(&e->a, R15, ST_PC, RAX);
    emit_tm_charge(e, op, 0, true, op->d.fast == VM_FAST_LDM, 1);
    load32(&e->a, RAX, R15, ST_PC);
    mov_ri(&e->a, R8, op->d.tag);
    add64_i(&e->a, R14, op->d.nth + 1u);
    jmp_to(&e->a, e->j->dispatch);
    return;
  }
  mov_ri(&e->a, R8, op->d.tag); /* for the dispatch's exits towards an event */
  if (e->wr) {
    mov_rr(&e->a, RDX, RAX);
    shift_ri(&e->a, false, SH_SHR, RDX, VM_PAGE_SHIFT);
    shift_ri(&e->a, true, SH_SHL, RDX, 5);
    alu_rr(&e->a, true, ALU_ADD, RDX, RBP);
    emit_wait(e, false);
  }
  add64_i(&e->a, R12, cycles + t->refill);
  add64_i(&e->a, R14, op->d.nth + 1u);
  jmp_to(&e->a, e->j->dispatch);
}

/* LDM/STM: rsi = the host address of the n words at Rn (IA) or Rn - 4n
 * (DB), checked for alignment and plain memory (else resume at op). */
static void emit_multi_base(struct emit *e, const struct vm_block_op *op, uint32_t pend,
                            uint32_t n, bool write)
{
  const struct vm_insn *in = &op->d.insn;
  load32(&e->a, RAX, RBX, GR(in->rn));
  if (in->sub)
    alu_ri(&e->a, false, ALU_SUB, RAX, 4 * n);
  emit_align(e, op, pend, 4);
  emit_page(e, op, pend, 4 * n, write);
  rex(&e->a, true, RSI, R10, RSI); /* lea rsi, [rsi + r10] */
  b1(&e->a, 0x8d);
  mem_bi(&e->a, RSI, RSI, R10);
  if (e->tm)
    store32(&e->a, R15, ST_TMA, RAX);
}

/* LDM/STM: Rn moves by 4n when written back; r12 += n times the page's
 * (rdx) wait states. */
static void emit_multi_wb(struct emit *e, const struct vm_insn *in, uint32_t n)
{
  if (in->flags & VM_F_W) {
    load32(&e->a, RDI, RBX, GR(in->rn));
    alu_ri(&e->a, false, in->sub ? ALU_SUB : ALU_ADD, RDI, 4 * n);
    store32(&e->a, RBX, GR(in->rn), RDI);
  }
}

static void emit_multi_wait(struct emit *e, uint32_t n, bool write)
{
  if (has_wait(e, write)) {
    op_m(&e->a, false, 0x0fb6, RCX, RDX, write ? PG_WW : PG_WR);
    op_r(&e->a, false, 0x6b, RCX, RCX); /* imul ecx, ecx, n */
    b1(&e->a, n);
    alu_rr(&e->a, true, ALU_ADD, R12, RCX);
  }
}

/* LDM/POP (exec_threaded.h `ldm`); returns the cycles left pending */
static uint32_t emit_ldm(struct emit *e, const struct vm_block_op *op, uint32_t pend,
                     const struct vm_timing *t)
{
  const struct vm_insn *in = &op->d.insn;
  const uint32_t list = in->imm, n = (uint32_t)__builtin_popcount(list);
  emit_multi_base(e, op, pend, n, false);
  if (list & 0x8000) { /* LoadWritePC: no interworking, no EXC_RETURN here */
    load32(&e->a, R8, RSI, (int32_t)(4 * (n - 1)));
    rex(&e->a, false, 0, 0, R8); /* test r8b, 1 */
    b1(&e->a, 0xf6);
    b1(&e->a, 0xc0 | (R8 & 7));
    b1(&e->a, 1);
    bail_if(e, CC_E, op, pend);
    alu_ri(&e->a, false, ALU_CMP, R8, 0xf0000000u);
    slow_if(e, CC_AE, op, pend);
  }
  emit_multi_wb(e, in, n); /* before the loads: a loaded Rn wins */
  unsigned i = 0;
  for (unsigned r = 0; r < 15; r++)
    if (list & (1u << r)) {
      load32(&e->a, R9, RSI, (int32_t)(4 * i++));
      store32(&e->a, RBX, GR(r), R9);
    }
  emit_multi_wait(e, n, false); /* cycles: 1 + n + n * wait_read */
  if (list & 0x8000) {
    mov_rr(&e->a, RAX, R8);
    alu_ri(&e->a, false, ALU_AND, RAX, ~1u);
    emit_indirect(e, op, t, pend + 1 + n);
  } else if (!has_wait(e, false) && !e->tm) {
    return pend + 1 + n; /* still pending */
  } else {
    add_cy(e, pend + 1 + n);
  }
  return 0;
}

/* STM/PUSH (exec_threaded.h `stm`); *pend: the cycles left pending */
static bool emit_stm(struct emit *e, const struct vm_block_op *op, uint32_t *pend)
{
  const struct vm_insn *in = &op->d.insn;
  const uint32_t list = in->imm, n = (uint32_t)__builtin_popcount(list);
  if (list & 0x8000)
    return false;
  emit_multi_base(e, op, *pend, n, true);
  unsigned i = 0;
  for (unsigned r = 0; r < 15; r++)
    if (list & (1u << r)) {
      load32(&e->a, R9, RBX, GR(r));
      store32(&e->a, RSI, (int32_t)(4 * i++), R9);
    }
  if (e->tm) { /* the first word stored */
    load32(&e->a, R9, RSI, 0);
    store32(&e->a, R15, ST_TMV, R9);
  }
  emit_multi_wb(e, in, n); /* after the stores: they store the old Rn */
  emit_multi_wait(e, n, true);
  if (!has_wait(e, true) && !e->tm) {
    *pend += 1 + n;
  } else {
    add_cy(e, *pend + 1 + n);
    *pend = 0;
  }
  return true;
}

/* Store the flag words of the flags in m: n = z = eax. */
static void emit_nz_m(struct emit *e, unsigned m)
{
  if (m & FL_N)
    store32(&e->a, R15, ST_FN, RAX);
  if (m & FL_Z)
    store32(&e->a, R15, ST_FZ, RAX);
}

static void emit_nz(struct emit *e)
{
  emit_nz_m(e, e->live);
}

/* After an x86 add (add: true) or sub that computed an ARM result into eax,
 * the flags in m: C into fl.c (x86 CF for an add, its inverse for a
 * subtract), V as bit 31 of fl.v (only that bit is ever read: its top byte
 * is written), N and Z. */
static void emit_arith_flags_m(struct emit *e, bool add, unsigned m)
{
  if (m & FL_C)
    op_m(&e->a, false, 0x0f90 + (add ? CC_B : CC_AE), 0, R15, ST_FC); /* setc/setnc byte [c] */
  if (m & FL_V) {
    setcc(&e->a, CC_O, RCX);
    op_r(&e->a, false, 0xc0, SH_SHL, RCX); /* shl cl, 7 */
    b1(&e->a, 7);
    op_m(&e->a, false, 0x88, RCX, R15, ST_FV + 3); /* mov [v + 3], cl */
  }
  emit_nz_m(e, m);
}

static void emit_arith_flags(struct emit *e, bool add)
{
  emit_arith_flags_m(e, add, e->live);
}

static bool alu_is_add(unsigned alu)
{
  return alu == VM_ALU_ADD || alu == VM_ALU_CMN;
}

/* bit n: guest register n (a register past r14, or none: all, so that
 * nothing reading it is ever owed across) */
static unsigned reg_bit(unsigned r)
{
  return r < 15 ? 1u << r : ~0u;
}

/* How the flags of a flag-setting ADD/CMN/SUB/CMP/RSB (an immediate, or a
 * register, second operand) can be computed again after it: from its
 * operands when it wrote neither, else (rd == rn, not RSB) from rd's new
 * value with the op undone. False when neither holds. */
static bool df_recipe(const struct vm_insn *in, unsigned alu, bool imm, struct dflags *r)
{
  const bool writes = alu != VM_ALU_CMP && alu != VM_ALU_CMN;
  if (in->rn >= 15 || (!imm && in->rm >= 15) || (writes && in->rd >= 15))
    return false;
  *r = (struct dflags){0, reg_bit(in->rn) | (imm ? 0 : reg_bit(in->rm)), (uint8_t)alu, imm, false,
                       in->rn, imm ? 0 : in->rm, writes ? in->rd : 0, in->imm};
  if (!writes || (in->rd != in->rn && (imm || in->rd != in->rm)))
    return true;
  if (alu == VM_ALU_RSB || in->rd != in->rn || (!imm && in->rm == in->rd))
    return false;
  r->inverse = true;
  r->regs = reg_bit(in->rd) | (imm ? 0 : reg_bit(in->rm));
  return true;
}

/* eax = the result of ADD/CMN/SUB/CMP/RSB of a = [rn] and b (v, or [rm]),
 * the x86 flags as its add or sub leaves them */
static void emit_arith_op(struct emit *e, unsigned alu, bool imm, unsigned rn, unsigned rm,
                          uint32_t v)
{
  if (alu == VM_ALU_RSB) { /* b - a */
    if (imm)
      mov_ri(&e->a, RAX, v);
    else
      load32(&e->a, RAX, RBX, GR(rm));
    alu_rm(&e->a, ALU_SUB, RAX, RBX, GR(rn));
    return;
  }
  const unsigned x86 = alu_is_add(alu) ? ALU_ADD : ALU_SUB;
  load32(&e->a, RAX, RBX, GR(rn));
  if (imm)
    alu_ri(&e->a, false, x86, RAX, v);
  else
    alu_rm(&e->a, x86, RAX, RBX, GR(rm));
}

/* Store the owed flags of d in m (uses eax, ecx and the x86 flags). */
static void emit_df_store(struct emit *e, const struct dflags *d, unsigned m)
{
  if (!d || !(m &= d->owed))
    return;
  const bool add = alu_is_add(d->alu);
  if (d->inverse) { /* rd = rn op b: rn = rd undone, then the op again */
    const unsigned undo = add ? ALU_SUB : ALU_ADD, x86 = add ? ALU_ADD : ALU_SUB;
    load32(&e->a, RAX, RBX, GR(d->rd));
    if (d->imm) {
      alu_ri(&e->a, false, undo, RAX, d->v);
      alu_ri(&e->a, false, x86, RAX, d->v);
    } else {
      alu_rm(&e->a, undo, RAX, RBX, GR(d->rm));
      alu_rm(&e->a, x86, RAX, RBX, GR(d->rm));
    }
  } else {
    emit_arith_op(e, d->alu, d->imm, d->rn, d->rm, d->v);
  }
  emit_arith_flags_m(e, add, m);
}

/* Whether the flags in owe may stay owed from op on: each later entry up to
 * the ones that write them all again runs in compiled code without reading
 * them (flag_use_hot) and writes no register in regs. */
static bool flag_use_hot(const struct vm_block_op *op, bool fused, unsigned *wr, unsigned *rd);
static unsigned regs_written(const struct vm_block_op *op);
static bool owe_ok(const struct emit *e, const struct vm_block_op *op, unsigned regs, unsigned owe)
{
  for (; op < e->end; op++) {
    unsigned wr, rd;
    if (!flag_use_hot(op, false, &wr, &rd) || (rd & owe))
      return false;
    if (!(owe &= ~wr))
      return true;
    if (regs_written(op) & regs)
      return false;
  }
  return false;
}

/* The flags of a flag-setting ADD/CMN/SUB/CMP/RSB that computed eax, the
 * ones live after the entry `after` (live there, hot: read there by compiled
 * code): stores the hot ones and, when it may, owes the rest (e->df). */
static void emit_arith_owe(struct emit *e, const struct vm_insn *in, unsigned alu, bool imm,
                           const struct vm_block_op *after, unsigned live, unsigned hot)
{
  struct dflags r;
  unsigned owe = live & ~hot;
  if (owe && e->defer && df_recipe(in, alu, imm, &r) && owe_ok(e, after + 1, r.regs, owe)) {
    emit_arith_flags_m(e, alu_is_add(alu), live & hot);
    r.owed = owe;
    e->df = r;
    return;
  }
  emit_arith_flags_m(e, alu_is_add(alu), live);
}

/* Store the flags owed, here. */
static void emit_df_flush(struct emit *e)
{
  emit_df_store(e, &e->df, e->df.owed);
  e->df.owed = 0;
}

/* The common data-processing forms in fewer host instructions: an
 * immediate or an unshifted register, ADD/SUB/CMP/CMN/RSB with or without
 * flags, the logical ops without flags. False: emit_dp's general code. */
static bool emit_dp_simple(struct emit *e, const struct vm_insn *in, unsigned kind, unsigned alu,
                           bool s)
{
  const bool imm = kind == 0;
  const uint32_t v = in->imm;
  if (kind > 1)
    return false;
  /* x86 group-1 op for the ALU op, b (or ~b) as the second operand */
  unsigned x86;
  bool inv = false, writes = true;
  switch (alu) {
  case VM_ALU_ADD: x86 = ALU_ADD; break;
  case VM_ALU_CMN: x86 = ALU_ADD, writes = false; break;
  case VM_ALU_SUB: x86 = ALU_SUB; break;
  case VM_ALU_CMP: x86 = ALU_SUB, writes = false; break;
  case VM_ALU_RSB: x86 = ALU_SUB; break;
  case VM_ALU_AND: x86 = ALU_AND; break;
  case VM_ALU_ORR: x86 = ALU_OR; break;
  case VM_ALU_EOR: x86 = ALU_XOR; break;
  case VM_ALU_BIC: x86 = ALU_AND, inv = true; break;
  case VM_ALU_ORN: x86 = ALU_OR, inv = true; break;
  case VM_ALU_MOV: x86 = 0; break;
  case VM_ALU_TST: x86 = ALU_AND, writes = false; break;
  case VM_ALU_TEQ: x86 = ALU_XOR, writes = false; break;
  default: return false; /* ADC, SBC (64-bit sum), MVN */
  }
  const bool arith = alu == VM_ALU_ADD || alu == VM_ALU_CMN || alu == VM_ALU_SUB ||
                     alu == VM_ALU_CMP || alu == VM_ALU_RSB;
  /* a logical op's flags here when it leaves the carry as it is (no
   * immediate's carry; a register operand is not shifted): N and Z */
  if (s && !arith && imm && (in->flags & VM_F_IMMC))
    return false; /* the carry stays with emit_dp */
  if (inv && !imm)
    return false;
  if (alu == VM_ALU_MOV && s) {
    if (imm)
      mov_ri(&e->a, RAX, v);
    else
      load32(&e->a, RAX, RBX, GR(in->rm));
    emit_nz(e);
    store32(&e->a, RBX, GR(in->rd), RAX);
    return true;
  }
  if (alu == VM_ALU_MOV) {
    if (imm) {
      store32_i(&e->a, RBX, GR(in->rd), v);
    } else {
      load32(&e->a, RAX, RBX, GR(in->rm));
      store32(&e->a, RBX, GR(in->rd), RAX);
    }
    return true;
  }
  if (alu == VM_ALU_RSB) { /* b - a */
    if (imm)
      mov_ri(&e->a, RAX, v);
    else
      load32(&e->a, RAX, RBX, GR(in->rm));
    alu_rm(&e->a, ALU_SUB, RAX, RBX, GR(in->rn));
  } else if (!s && writes && imm && in->rd == in->rn) { /* op dword [rd], imm */
    const uint32_t b = inv ? ~v : v;
    if ((int32_t)b >= -128 && (int32_t)b <= 127) {
      op_m(&e->a, false, 0x83, x86, RBX, GR(in->rd));
      b1(&e->a, b & 0xff);
    } else {
      op_m(&e->a, false, 0x81, x86, RBX, GR(in->rd));
      b4(&e->a, b);
    }
    return true;
  } else {
    load32(&e->a, RAX, RBX, GR(in->rn));
    if (imm)
      alu_ri(&e->a, false, x86, RAX, inv ? ~v : v);
    else
      alu_rm(&e->a, x86, RAX, RBX, GR(in->rm));
  }
  if (s && arith)
    emit_arith_owe(e, in, alu, imm, e->cur, e->live, e->hot);
  else if (s)
    emit_nz(e);
  if (writes)
    store32(&e->a, RBX, GR(in->rd), RAX);
  return true;
}

/* Data processing (exec.c fast_dp): kind 0 immediate, 1 register, 2
 * shifted register; alu = VM_ALU_*; s: set flags. */
static bool emit_dp(struct emit *e, const struct vm_block_op *op, unsigned kind, unsigned alu,
                    bool s)
{
  const struct vm_insn *in = &op->d.insn;
  if (emit_dp_simple(e, in, kind, alu, s))
    return true;
  const bool logical = alu <= VM_ALU_TEQ;
  /* the shifter's carry into r8d when it defines one (carry_set) */
  bool carry_set = false;
  uint32_t carry_const = 2; /* 0/1: a constant carry (immediate, or a shift's) */
  if (kind == 0) {
    mov_ri(&e->a, RCX, in->imm);
    if (in->flags & VM_F_IMMC)
      carry_const = (in->flags & VM_F_IMMC_1) ? 1 : 0;
  } else {
    load32(&e->a, RCX, RBX, GR(in->rm));
    if (kind == 2) {
      const unsigned n = in->sh_n, type = in->sh_type;
      const bool want = s && logical;
      if (n == 0 && type != VM_SH_RRX) {
        /* the value as it is, the carry unchanged */
      } else if (type == VM_SH_RRX) {
        load32(&e->a, R9, R15, ST_FC);
        if (want) {
          mov_rr(&e->a, R8, RCX);
          alu_ri(&e->a, false, ALU_AND, R8, 1);
          carry_set = true;
        }
        shift_ri(&e->a, false, SH_SHL, R9, 31);
        shift_ri(&e->a, false, SH_SHR, RCX, 1);
        alu_rr(&e->a, false, ALU_OR, RCX, R9);
      } else if (type == VM_SH_ROR) {
        if (n & 31)
          shift_ri(&e->a, false, SH_ROR, RCX, n & 31);
        if (want) {
          mov_rr(&e->a, R8, RCX);
          shift_ri(&e->a, false, SH_SHR, R8, 31);
          carry_set = true;
        }
      } else if (n < 32) {
        if (want) { /* the last bit shifted out */
          mov_rr(&e->a, R8, RCX);
          shift_ri(&e->a, false, SH_SHR, R8, type == VM_SH_LSL ? 32 - n : n - 1);
          alu_ri(&e->a, false, ALU_AND, R8, 1);
          carry_set = true;
        }
        shift_ri(&e->a, false, type == VM_SH_LSL ? SH_SHL : type == VM_SH_LSR ? SH_SHR : SH_SAR, RCX, n);
      } else if (type == VM_SH_ASR) { /* n >= 32 */
        shift_ri(&e->a, false, SH_SAR, RCX, 31);
        if (want) {
          mov_rr(&e->a, R8, RCX);
          alu_ri(&e->a, false, ALU_AND, R8, 1);
          carry_set = true;
        }
      } else { /* LSL/LSR by 32 or more: 0, carry the last bit out (n == 32) or 0 */
        if (want) {
          mov_rr(&e->a, R8, RCX);
          if (n == 32 && type == VM_SH_LSR)
            shift_ri(&e->a, false, SH_SHR, R8, 31);
          else if (n == 32)
            alu_ri(&e->a, false, ALU_AND, R8, 1);
          else
            mov_ri(&e->a, R8, 0);
          carry_set = true;
        }
        mov_ri(&e->a, RCX, 0);
      }
    }
  }
  if (alu != VM_ALU_MOV && alu != VM_ALU_MVN)
    load32(&e->a, RAX, RBX, GR(in->rn));
  const bool writes = alu != VM_ALU_TST && alu != VM_ALU_TEQ && alu != VM_ALU_CMP &&
                      alu != VM_ALU_CMN;
  switch (alu) {
  case VM_ALU_AND: case VM_ALU_TST: alu_rr(&e->a, false, ALU_AND, RAX, RCX); break;
  case VM_ALU_EOR: case VM_ALU_TEQ: alu_rr(&e->a, false, ALU_XOR, RAX, RCX); break;
  case VM_ALU_ORR: alu_rr(&e->a, false, ALU_OR, RAX, RCX); break;
  case VM_ALU_ORN: not_r(&e->a, RCX); alu_rr(&e->a, false, ALU_OR, RAX, RCX); break;
  case VM_ALU_BIC: not_r(&e->a, RCX); alu_rr(&e->a, false, ALU_AND, RAX, RCX); break;
  case VM_ALU_MOV: mov_rr(&e->a, RAX, RCX); break;
  case VM_ALU_MVN: mov_rr(&e->a, RAX, RCX); not_r(&e->a, RAX); break;
  case VM_ALU_ADD: case VM_ALU_CMN: case VM_ALU_SUB: case VM_ALU_CMP: case VM_ALU_RSB: {
    const bool sub = alu == VM_ALU_SUB || alu == VM_ALU_CMP;
    if (alu == VM_ALU_RSB) { /* b - a, into eax */
      alu_rr(&e->a, false, ALU_SUB, RCX, RAX);
      mov_rr(&e->a, RAX, RCX); /* mov leaves the flags */
    } else {
      alu_rr(&e->a, false, sub ? ALU_SUB : ALU_ADD, RAX, RCX);
    }
    if (s) /* x86 CF is ARM's C for an add and its inverse for a subtract; OF is V */
      emit_arith_flags(e, alu == VM_ALU_ADD || alu == VM_ALU_CMN);
    break;
  }
  default: { /* ADC, SBC: AddWithCarry in 64 bits, as fast_dp */
    if (alu == VM_ALU_SBC)
      not_r(&e->a, RCX);
    mov_rr(&e->a, R9, RAX); /* a */
    mov_rr(&e->a, R10, RCX); /* b */
    load32(&e->a, RDX, R15, ST_FC);
    mov_rr(&e->a, RAX, RAX); /* zero-extend a (mov clears the upper half) */
    alu_rr(&e->a, true, ALU_ADD, RAX, RCX);
    alu_rr(&e->a, true, ALU_ADD, RAX, RDX);
    if (s) {
      emit_nz(e);
      if (e->live & FL_C) {
        mov64_rr(&e->a, R11, RAX);
        shift_ri(&e->a, true, SH_SHR, R11, 32);
        store32(&e->a, R15, ST_FC, R11);
      }
      if (e->live & FL_V) {
        mov_rr(&e->a, R8, R9); /* v = ~(a ^ b) & (a ^ res) */
        alu_rr(&e->a, false, ALU_XOR, R8, R10);
        not_r(&e->a, R8);
        alu_rr(&e->a, false, ALU_XOR, R9, RAX);
        alu_rr(&e->a, false, ALU_AND, R8, R9);
        store32(&e->a, R15, ST_FV, R8);
      }
    }
    break;
  }
  }
  if (s && logical) {
    emit_nz(e);
    if (!(e->live & FL_C))
      ; /* overwritten before anything reads it */
    else if (carry_set)
      store32(&e->a, R15, ST_FC, R8);
    else if (carry_const <= 1 && kind == 0)
      store32_i(&e->a, R15, ST_FC, carry_const);
  }
  if (writes)
    store32(&e->a, RBX, GR(in->rd), RAX);
  return true;
}

/* Jumps taken when ARM condition cond (0..13) passes on the flags in the
 * state (exec.c lflags_pass): their rel32s in at[], how many in *n (1 or 2). */
static void emit_cond_jumps(struct emit *e, unsigned cond, uint8_t *at[2], unsigned *n)
{
  uint8_t *skip = NULL;
  *n = 1;
  if (cond < 8) { /* EQ/NE: z == 0; CS/CC: c != 0; MI/PL: n < 0; VS/VC: v < 0 */
    static const int32_t field[4] = {ST_FZ, ST_FC, ST_FN, ST_FV};
    static const uint8_t pass[4] = {CC_E, CC_NE, CC_L, CC_L}, fail[4] = {CC_NE, CC_E, CC_GE, CC_GE};
    cmp_mi8(&e->a, R15, field[cond >> 1], 0);
    at[0] = jcc_fwd(&e->a, (cond & 1) ? fail[cond >> 1] : pass[cond >> 1]);
    return;
  }
  switch (cond) {
  case 8: /* HI: c && z != 0 */
    cmp_mi8(&e->a, R15, ST_FC, 0);
    skip = jcc_fwd(&e->a, CC_E);
    cmp_mi8(&e->a, R15, ST_FZ, 0);
    at[0] = jcc_fwd(&e->a, CC_NE);
    patch(&e->a, skip, e->a.p);
    return;
  case 9: /* LS: !c || z == 0 */
    cmp_mi8(&e->a, R15, ST_FC, 0);
    at[0] = jcc_fwd(&e->a, CC_E);
    cmp_mi8(&e->a, R15, ST_FZ, 0);
    at[1] = jcc_fwd(&e->a, CC_E);
    *n = 2;
    return;
  case 10: case 11: /* GE, LT: (n ^ v) >= 0 */
    load32(&e->a, RAX, R15, ST_FN);
    alu_rm(&e->a, ALU_XOR, RAX, R15, ST_FV);
    at[0] = jcc_fwd(&e->a, cond == 10 ? CC_NS : CC_S);
    return;
  case 12: /* GT: ge && z != 0 */
    load32(&e->a, RAX, R15, ST_FN);
    alu_rm(&e->a, ALU_XOR, RAX, R15, ST_FV);
    skip = jcc_fwd(&e->a, CC_S);
    cmp_mi8(&e->a, R15, ST_FZ, 0);
    at[0] = jcc_fwd(&e->a, CC_NE);
    patch(&e->a, skip, e->a.p);
    return;
  default: /* LE: !ge || z == 0 */
    load32(&e->a, RAX, R15, ST_FN);
    alu_rm(&e->a, ALU_XOR, RAX, R15, ST_FV);
    at[0] = jcc_fwd(&e->a, CC_S);
    cmp_mi8(&e->a, R15, ST_FZ, 0);
    at[1] = jcc_fwd(&e->a, CC_E);
    *n = 2;
    return;
  }
}

/* B<c>: to the taken stub of op when its condition passes. */
static void emit_bcond(struct emit *e, const struct vm_block_op *op, uint32_t pend, unsigned cond)
{
  uint8_t *at[2];
  unsigned n;
  emit_cond_jumps(e, cond, at, &n);
  for (unsigned i = 0; i < n; i++)
    add_stub(e, at[i], op, pend, true);
}

/* One entry. Returns false when the compiler does not cover it (the block's
 * code then resumes there); *end is set when the entry leaves the block. */
static bool emit_op(struct emit *e, const struct vm_block_op *op, const struct vm_timing *t,
                    uint32_t *pend, bool *end)
{
  const struct vm_insn *in = &op->d.insn;
  const unsigned f = op->d.fast;
  *end = false;
  if (f >= VM_FAST_DP && f < VM_FAST_LD) {
    const unsigned k = f - VM_FAST_DP;
    if (!emit_dp(e, op, k / 32, (k % 32) / 2, k & 1))
      return false;
    *pend += 1;
    return true;
  }
  if (f >= VM_FAST_LDST && f < VM_FAST_LDST + 24)
    return emit_ldst_imm(e, op, pend);
  if (f >= VM_FAST_BCOND && f < VM_FAST_BCOND + 14) {
    emit_bcond(e, op, *pend, f - VM_FAST_BCOND);
    *pend += 1;
    return true;
  }
  switch (f) {
  case VM_FAST_LD: return emit_ldst(e, op, pend, true);
  case VM_FAST_ST: return emit_ldst(e, op, pend, false);
  case VM_FAST_B:
    emit_taken(e, op, *pend, NULL);
    *end = true;
    return true;
  case VM_FAST_BL:
    store32_i(&e->a, RBX, GR(14), (op->d.tag + in->len) | 1);
    emit_taken(e, op, *pend, NULL);
    *end = true;
    return true;
  case VM_FAST_CBZ: case VM_FAST_CBNZ:
    cmp_mi8(&e->a, RBX, GR(in->rn), 0);
    add_stub(e, jcc_fwd(&e->a, f == VM_FAST_CBZ ? CC_E : CC_NE), op, *pend, true);
    *pend += 1;
    return true;
  case VM_FAST_BX:
    load32(&e->a, RAX, RBX, GR(in->rm));
    b1(&e->a, 0xa8); /* test al, 1: interworking to ARM state is exec_insn's */
    b1(&e->a, 1);
    bail_if(e, CC_E, op, *pend);
    alu_ri(&e->a, false, ALU_CMP, RAX, 0xf0000000u); /* EXC_RETURN (or near it): exec_insn */
    slow_if(e, CC_AE, op, *pend);
    alu_ri(&e->a, false, ALU_AND, RAX, ~1u);
    emit_indirect(e, op, t, *pend + 1);
    *end = true;
    return true;
  case VM_FAST_LDM:
    *pend = emit_ldm(e, op, *pend, t);
    if (in->imm & 0x8000)
      *end = true;
    return true;
  case VM_FAST_STM:
    return emit_stm(e, op, pend);
  case VM_FAST_MUL:
    load32(&e->a, RAX, RBX, GR(in->rn));
    op_m(&e->a, false, 0x0faf, RAX, RBX, GR(in->rm)); /* imul eax, [rm] */
    store32(&e->a, RBX, GR(in->rd), RAX);
    if (in->flags & (VM_F_S | VM_F_S_NOTIT))
      emit_nz(e);
    *pend += t->mul;
    return true;
  case VM_FAST_MLA: case VM_FAST_MLS:
    load32(&e->a, RAX, RBX, GR(in->rn));
    op_m(&e->a, false, 0x0faf, RAX, RBX, GR(in->rm));
    load32(&e->a, RCX, RBX, GR(in->ra));
    if (f == VM_FAST_MLA)
      alu_rr(&e->a, false, ALU_ADD, RCX, RAX);
    else
      alu_rr(&e->a, false, ALU_SUB, RCX, RAX);
    store32(&e->a, RBX, GR(in->rd), RCX);
    *pend += t->mla;
    return true;
  case VM_FAST_SBFX: case VM_FAST_UBFX: {
    const unsigned lsb = in->sh_n, w = in->imm;
    if (lsb >= 32 || w == 0)
      return false;
    load32(&e->a, RAX, RBX, GR(in->rn));
    if (w >= 32) {
      if (lsb)
        shift_ri(&e->a, false, SH_SHR, RAX, lsb);
    } else {
      if (lsb + w > 32)
        return false;
      if (32 - lsb - w)
        shift_ri(&e->a, false, SH_SHL, RAX, 32 - lsb - w);
      shift_ri(&e->a, false, f == VM_FAST_SBFX ? SH_SAR : SH_SHR, RAX, 32 - w);
    }
    store32(&e->a, RBX, GR(in->rd), RAX);
    *pend += 1;
    return true;
  }
  case VM_FAST_EXT:
    load32(&e->a, RAX, RBX, GR(in->rm));
    if (in->sh_n & 31)
      shift_ri(&e->a, false, SH_ROR, RAX, in->sh_n & 31);
    switch (in->sub) {
    case VM_EXT_SXTB: op_r(&e->a, false, 0x0fbe, RAX, RAX); break;
    case VM_EXT_SXTH: op_r(&e->a, false, 0x0fbf, RAX, RAX); break;
    case VM_EXT_UXTB: op_r(&e->a, false, 0x0fb6, RAX, RAX); break;
    default: op_r(&e->a, false, 0x0fb7, RAX, RAX); break;
    }
    if (in->rn != 15)
      alu_rm(&e->a, ALU_ADD, RAX, RBX, GR(in->rn));
    store32(&e->a, RBX, GR(in->rd), RAX);
    *pend += 1;
    return true;
  case VM_FAST_ADR:
    store32_i(&e->a, RBX, GR(in->rd), ((op->d.tag + 4) & ~3u) + in->imm);
    *pend += 1;
    return true;
  case VM_FAST_MOVT: /* mov word [rd + 2], imm16 */
    b1(&e->a, 0x66);
    op_m(&e->a, false, 0xc7, 0, RBX, GR(in->rd) + 2);
    b1(&e->a, in->imm & 0xff);
    b1(&e->a, (in->imm >> 8) & 0xff);
    *pend += 1;
    return true;
  default:
    return false;
  }
}

/* A flag-setting ADD/CMN/SUB/CMP/RSB and the B<c> after it (fusable): a
 * jcc on the x86 flags of its add or sub, whose stub stores them all (they
 * are owed there); on the fall-through they are stored or owed as after
 * the B<c> (live, hot there). */
static bool fusable(const struct vm_block_op *op, unsigned *alu, bool *imm);
static int fused_cc(unsigned cond, bool add);
static void emit_fused(struct emit *e, const struct vm_block_op *op, unsigned live, unsigned hot,
                       uint32_t *pend)
{
  const struct vm_insn *in = &op->d.insn;
  unsigned alu;
  bool imm;
  struct dflags r;
  fusable(op, &alu, &imm);
  df_recipe(in, alu, imm, &r);
  emit_arith_op(e, alu, imm, in->rn, in->rm, in->imm);
  if (alu != VM_ALU_CMP && alu != VM_ALU_CMN)
    store32(&e->a, RBX, GR(in->rd), RAX);
  *pend += 1;
  r.owed = FL_ALL;
  e->df = r;
  const int cc = fused_cc(op[1].d.fast - VM_FAST_BCOND, alu_is_add(alu));
  add_stub(e, jcc_fwd(&e->a, (unsigned)cc), op + 1, *pend, true);
  *pend += 1;
  e->df.owed = 0;
  emit_arith_owe(e, in, alu, imm, op + 1, live, hot);
}

/* Before entry op: the flags owed stay owed when op neither reads them in
 * compiled code nor leaves inline nor writes a register their
 * recomputation reads (unless it writes them all again); else they are
 * stored first. */
static void emit_df_before(struct emit *e, const struct vm_block_op *op)
{
  if (!e->df.owed)
    return;
  unsigned wr, rd;
  if (!flag_use_hot(op, false, &wr, &rd) || (rd & e->df.owed)) {
    emit_df_flush(e);
    return;
  }
  const unsigned rest = e->df.owed & ~wr;
  if (rest && (regs_written(op) & e->df.regs))
    emit_df_flush(e);
  else
    e->df.owed = rest;
}

/* Instructions that go on to the next, touch no memory and never stop
 * (emit_op: data processing, multiplies, bit fields, extends, ADR, MOVT). */
static bool tm_simple(unsigned f)
{
  return (f >= VM_FAST_DP && f < VM_FAST_LD) || f == VM_FAST_MUL || f == VM_FAST_MLA ||
         f == VM_FAST_MLS || f == VM_FAST_SBFX || f == VM_FAST_UBFX || f == VM_FAST_EXT ||
         f == VM_FAST_ADR || f == VM_FAST_MOVT;
}

/* rax = the end of the run whose step rdx is (r11's when it hopped, else
 * the memo's). */
static void emit_tm_run_end(struct emit *e)
{
  test64_rr(&e->a, R11, R11);
  uint8_t *hopped = jcc_fwd(&e->a, CC_NE);
  load64(&e->a, RAX, RSI, M_END);
  uint8_t *have = jmp_fwd(&e->a);
  patch(&e->a, hopped, e->a.p);
  op_m(&e->a, false, 0x0fb6, RAX, R11, R_N);
  op_r(&e->a, false, 0x69, RAX, RAX); /* imul eax, eax, sizeof step */
  b4(&e->a, (uint32_t)sizeof(struct vm_tm_memo_step));
  alu_rr(&e->a, true, ALU_ADD, RAX, R11);
  add64_i(&e->a, RAX, (uint32_t)R_STEP);
  patch(&e->a, have, e->a.p);
}

/* k >= 2 tm_simple instructions from op: when the memo replays all k of
 * them from the run being replayed (or the one it hops to), each step with
 * no data access, and their cycles together stay below the next event (so
 * no check after any of them would leave), charge them at once and run
 * their semantics without a charge or check between them: what k charges
 * and checks would leave, as no one looks at the model or the cycle count
 * in between. Otherwise the same instructions one by one
 * (emit_tm_retire). False, with nothing emitted, when emit_op does not
 * cover one of them. */
static bool emit_tm_group(struct emit *e, const struct vm_block_op *op, unsigned k,
                          const struct vm_timing *t, uint32_t *pend)
{
  uint8_t *const at = e->a.p;
  const unsigned nstub = e->nstub;
  const int32_t step = (int32_t)sizeof(struct vm_tm_memo_step);
  uint8_t *slow[24 + 2 * VM_TM_MEMO_LEN];
  unsigned ns = 0;
  const uint32_t last_next = op[k - 1].d.tag + op[k - 1].d.insn.len;
  emit_tm_find(e, op->d.tag, op->d.tag + op->d.insn.len, false, 1, slow, &ns);
  emit_tm_run_end(e);
  op_m(&e->a, true, 0x8d, RCX, RDX, k * step); /* lea rcx, [rdx + k steps] */
  alu_rr(&e->a, true, ALU_CMP, RCX, RAX);
  slow[ns++] = jcc_fwd(&e->a, CC_A);
  alu_rr(&e->a, false, ALU_XOR, R8, R8); /* r8: their cycles */
  for (unsigned j = 0; j < k; j++) {
    const struct vm_block_op *g = &op[j];
    const int32_t d = (int32_t)j * step;
    mov64_ri(&e->a, RAX, g->d.tag | (uint64_t)(g->d.tag + g->d.insn.len) << 32);
    op_m(&e->a, true, 0x3b, RAX, RDX, d + S_PC); /* cmp rax, [s + pc]: pc and next */
    slow[ns++] = jcc_fwd(&e->a, CC_NE);
    op_m(&e->a, false, 0x81, ALU_CMP, RDX, d + S_EX); /* executed, acc NONE, nw 0 */
    b4(&e->a, vm_tm_memo_ex(true, 0) | (uint32_t)VM_TM_ACC_NONE << 16);
    slow[ns++] = jcc_fwd(&e->a, CC_NE);
    op_m(&e->a, false, 0x0fb7, RAX, RDX, d + S_CYC);
    alu_rr(&e->a, true, ALU_ADD, R8, RAX);
  }
  op_m(&e->a, true, 0x8d, RAX, R12, 0); /* rax = r12 + r8: below the event? */
  alu_rr(&e->a, true, ALU_ADD, RAX, R8);
  alu_rr(&e->a, true, ALU_CMP, RAX, R13);
  slow[ns++] = jcc_fwd(&e->a, CC_AE);
  test64_rr(&e->a, R11, R11); /* the hop: m->cur, m->end */
  uint8_t *same = jcc_fwd(&e->a, CC_E);
  store64(&e->a, RSI, M_CUR, R11);
  emit_tm_run_end(e);
  store64(&e->a, RSI, M_END, RAX);
  patch(&e->a, same, e->a.p);
  store64(&e->a, RSI, M_S, RCX);
  op_m(&e->a, true, 0x01, R8, RDI, TM_NOW); /* add [tm + now], r8 */
  store32_i(&e->a, RDI, TM_DPC, last_next);
  alu_rr(&e->a, true, ALU_ADD, R12, R8);
  for (unsigned j = 0; j < k; j++) {
    bool end;
    if (!emit_op(e, &op[j], t, pend, &end) || e->nstub != nstub) {
      e->a.p = at;
      e->nstub = nstub;
      return false;
    }
  }
  uint8_t *join = jmp_fwd(&e->a);
  for (unsigned i = 0; i < ns; i++)
    patch(&e->a, slow[i], e->a.p);
  for (unsigned j = 0; j < k; j++) {
    bool end;
    emit_op(e, &op[j], t, pend, &end);
    emit_tm_retire(e, &op[j]);
  }
  patch(&e->a, join, e->a.p);
  return true;
}

/* Whether op, a load or store in an IT block, is one emit_op compiles
 * (emit_ldst_imm, emit_ldst) on a machine with a memory system, where
 * block.c keeps such IT blocks (vm_block_build). */
static bool tm_it_ldst(const struct vm_block_op *op)
{
  const unsigned f = op->d.fast;
  const struct vm_insn *in = &op->d.insn;
  if (f >= VM_FAST_LDST && f < VM_FAST_LDST + 24)
    return (f - VM_FAST_LDST) % 8 < VM_LDST_STR_W || in->rd != 15;
  if (f != VM_FAST_LD && f != VM_FAST_ST)
    return false;
  const uint32_t size = in->sub & 7;
  if (size != 1 && size != 2 && size != 4)
    return false;
  if (f == VM_FAST_LD && (in->flags & VM_F_LIT) && in->rm == VM_NOREG && !(in->flags & VM_F_W)) {
    const uint32_t base = (op->d.tag + 4) & ~3u;
    const uint32_t off = (in->flags & VM_F_U) ? base + in->imm : base - in->imm;
    return !(((in->flags & VM_F_P) ? off : base) & (size - 1));
  }
  return in->rm == VM_NOREG || in->sh_n < 32;
}

/* An IT instruction and its block (block.c keeps only instructions of the
 * kinds vm_fast_in_it_block allows, which cost one cycle whether or not
 * their condition passes and never leave compiled code, so no ITSTATE is
 * ever left behind; on a machine with a memory system also loads and
 * stores, tm_it_ldst, which may stop before themselves and then leave
 * ITSTATE set, and each instruction is charged to the timing model and
 * followed by the event check, which may leave inside the IT block too).
 * Each instruction runs when its condition passes on the flags as the ones
 * before it left them; a 16-bit one sets no flags. False, with nothing
 * emitted, for an IT block it does not cover. */
static bool emit_it(struct emit *e, const struct vm_block_op *op, const struct vm_timing *t,
                    uint32_t *pend)
{
  uint8_t it = (uint8_t)op->d.insn.imm;
  const unsigned len = vm_it_length(it);
  for (unsigned j = 0; j < len; j++)
    if (!vm_fast_in_it_block(op[1 + j].d.fast) && !(e->tm && tm_it_ldst(&op[1 + j])))
      return false;
  if ((it >> 4) == 15)
    return false; /* UNPREDICTABLE: exec_insn's */
  if (e->checked) /* the IT itself: nothing of the block run yet */
    emit_check(e, op, *pend, 0);
  *pend += 1; /* the IT */
  if (e->tm) { /* (the model may fold it: its cycles may be 0) */
    emit_tm_charge(e, op, op->d.tag + op->d.insn.len, false, false, 1);
    emit_tm_after(e, op + 1, it);
  }
  e->live = FL_ALL; /* the instructions run or not: nothing they write is sure */
  for (unsigned j = 0; j < len; j++) {
    const struct vm_block_op *g = &op[1 + j];
    const unsigned cond = it >> 4, f = g->d.fast;
    if (e->checked) /* stopped here, the executor goes on with ITSTATE as it is */
      emit_check(e, g, *pend, it);
    const uint8_t it_at = it;
    const unsigned nstub = e->nstub;
    it = vm_it_advance(it);
    uint8_t *skip[2];
    unsigned nskip = 0;
    if (cond != 14)
      emit_cond_jumps(e, cond ^ 1, skip, &nskip); /* over it when the condition fails */
    if (f >= VM_FAST_DP && f < VM_FAST_LD) {
      const unsigned k = f - VM_FAST_DP;
      emit_dp(e, g, k / 32, (k % 32) / 2, (g->d.insn.flags & VM_F_S) != 0);
    } else {
      uint32_t ignore = 0;
      bool end;
      if (!emit_op(e, g, t, &ignore, &end))
        e->a.full = true; /* (tm_it_ldst said it would): not compiled at all */
      /* a load or store that stops before itself (e->tm): the executor
       * goes on with ITSTATE as it is, through exec_insn (exec_threaded.h) */
      for (unsigned i = nstub; i < e->nstub; i++)
        e->stub[i].it = it_at;
    }
    if (e->tm && nskip) { /* r9d: whether it executed, for the model */
      mov_ri(&e->a, R9, 1);
      uint8_t *join = jmp_fwd(&e->a);
      for (unsigned i = 0; i < nskip; i++)
        patch(&e->a, skip[i], e->a.p);
      mov_ri(&e->a, R9, 0);
      if (is_mem_op(f)) /* no access: as exec_insn charges a skipped one */
        store32_i(&e->a, R15, ST_TMA, 0);
      patch(&e->a, join, e->a.p);
    } else {
      for (unsigned i = 0; i < nskip; i++)
        patch(&e->a, skip[i], e->a.p);
    }
    if (e->tm) { /* as exec_insn charges it (executed or not), then the event */
      emit_tm_charge(e, g, g->d.tag + g->d.insn.len, false, is_mem_op(f), nskip ? -1 : 1);
      emit_tm_after(e, g + 1, it);
    }
    *pend += 1;
  }
  return true;
}

/* What an entry does to the flags in compiled code: the ones it surely
 * writes and the ones it reads. Every entry compiled code may leave at or
 * inside (memory accesses, branches, IT blocks, what it cannot compile and
 * resumes at) reads them all: the block executor sees them there. */
static void flag_use(const struct vm_block_op *op, unsigned *wr, unsigned *rd)
{
  const struct vm_insn *in = &op->d.insn;
  const unsigned f = op->d.fast;
  *wr = 0;
  *rd = 0;
  if (f >= VM_FAST_DP && f < VM_FAST_LD) { /* as emit_dp */
    const unsigned k = f - VM_FAST_DP, kind = k / 32, alu = (k % 32) / 2;
    const bool shifted = kind == 2 && (in->sh_n != 0 || in->sh_type == VM_SH_RRX);
    if (k & 1) {
      *wr = FL_N | FL_Z;
      if (alu > VM_ALU_TEQ)
        *wr |= FL_C | FL_V;
      else if ((kind == 0 && (in->flags & VM_F_IMMC)) || shifted)
        *wr |= FL_C;
    }
    if (alu == VM_ALU_ADC || alu == VM_ALU_SBC || (kind == 2 && in->sh_type == VM_SH_RRX))
      *rd = FL_C;
    return;
  }
  switch (f) {
  case VM_FAST_MUL:
    if (in->flags & (VM_F_S | VM_F_S_NOTIT))
      *wr = FL_N | FL_Z;
    return;
  case VM_FAST_SBFX: case VM_FAST_UBFX: /* the forms emit_op compiles */
    if (in->sh_n < 32 && in->imm && (in->imm >= 32 || in->sh_n + in->imm <= 32))
      return;
    *rd = FL_ALL;
    return;
  case VM_FAST_MLA: case VM_FAST_MLS: case VM_FAST_EXT: case VM_FAST_ADR: case VM_FAST_MOVT:
    return;
  default:
    *rd = FL_ALL;
    return;
  }
}

/* The indexes of the entries of the block at first that vm_jit_compile goes
 * through, in order (an IT instruction stands for its block), into at;
 * returns how many. */
static unsigned block_entries(const struct vm_block_op *first, unsigned at[VM_BLOCK_LEN + 1])
{
  unsigned n = 0;
  for (unsigned i = 0; i < VM_BLOCK_LEN;) {
    const struct vm_block_op *op = &first[i];
    const unsigned f = op->d.fast;
    if (f == VM_FAST_SLOW || f == VM_FAST_BLKEND)
      break;
    at[n++] = i;
    if (f == VM_FAST_IT) {
      i += 1 + vm_it_length(op->d.insn.imm);
      continue;
    }
    if (vm_fast_ends_block(f, &op->d.insn))
      break;
    i++;
  }
  return n;
}

/* live[i]: the flags some later reader needs after entry i of the block at
 * first (a backward pass over the entries vm_jit_compile goes through), so
 * that flags written again before anything reads them are not stored. */
static void flags_live(const struct vm_block_op *first, unsigned live[VM_BLOCK_LEN + 1])
{
  unsigned at[VM_BLOCK_LEN + 1], n = block_entries(first, at);
  for (unsigned i = 0; i <= VM_BLOCK_LEN; i++)
    live[i] = FL_ALL;
  unsigned after = FL_ALL; /* every exit reads them all */
  while (n--) {
    const struct vm_block_op *op = &first[at[n]];
    live[at[n]] = after;
    unsigned wr, rd;
    flag_use(op, &wr, &rd);
    after = (after & ~wr) | rd;
  }
}

/* The flags the compiled block at first may read before it writes them
 * (at an exit too): what a jump into its code must have stored. */
static unsigned flags_live_in(const struct vm_block_op *first)
{
  unsigned live[VM_BLOCK_LEN + 1], wr, rd;
  flags_live(first, live);
  flag_use(first, &wr, &rd);
  return (live[0] & ~wr) | rd;
}

/* The flags condition cond (0..13) reads. */
static unsigned cond_flags(unsigned cond)
{
  static const uint8_t fl[7] = {FL_Z, FL_C, FL_N, FL_V, FL_C | FL_Z, FL_N | FL_V,
                                FL_N | FL_Z | FL_V};
  return fl[cond >> 1];
}

/* The x86 condition that is ARM condition cond right after the x86 add
 * (add) or sub of a flag-setting ADD/CMN or SUB/CMP/RSB, or -1 (HI and LS
 * after an add: C is CF there, not its inverse). */
static int fused_cc(unsigned cond, bool add)
{
  static const uint8_t sub_cc[14] = {CC_E,  CC_NE, CC_AE, CC_B,  CC_S,  CC_NS, CC_O,
                                     CC_NO, CC_A,  CC_BE, CC_GE, CC_L,  CC_G,  CC_LE};
  if (add && (cond == 8 || cond == 9))
    return -1;
  if (add && (cond == 2 || cond == 3))
    return cond == 2 ? CC_B : CC_AE;
  return sub_cc[cond];
}

/* Whether op, a flag-setting ADD/CMN/SUB/CMP/RSB emit_dp_simple compiles
 * (its alu in *alu, whether its operand is an immediate in *imm), whose
 * flags can be computed again (df_recipe), and B<c> next, are compiled as
 * one: the x86 add or sub and a jcc on its flags (emit_fused). */
static bool fusable(const struct vm_block_op *op, unsigned *alu, bool *imm)
{
  const unsigned f = op->d.fast;
  if (f < VM_FAST_DP || f >= VM_FAST_LD || op[1].d.fast < VM_FAST_BCOND ||
      op[1].d.fast >= VM_FAST_BCOND + 14)
    return false;
  const unsigned k = f - VM_FAST_DP;
  *alu = (k % 32) / 2;
  *imm = k / 32 == 0;
  struct dflags r;
  return (k & 1) && k / 32 <= 1 &&
         (alu_is_add(*alu) || *alu == VM_ALU_SUB || *alu == VM_ALU_CMP ||
          *alu == VM_ALU_RSB) &&
         df_recipe(&op->d.insn, *alu, *imm, &r) &&
         fused_cc(op[1].d.fast - VM_FAST_BCOND, alu_is_add(*alu)) >= 0;
}

/* What an entry does to the flags in compiled code, its exits aside (they
 * store what is owed, emit_stubs): false for one that leaves inline or
 * stops compiled code (it reads them all). fused: a B<c> fused with the
 * entry before it (it reads x86 flags). */
static bool flag_use_hot(const struct vm_block_op *op, bool fused, unsigned *wr, unsigned *rd)
{
  const unsigned f = op->d.fast;
  *wr = 0;
  *rd = 0;
  if (f >= VM_FAST_BCOND && f < VM_FAST_BCOND + 14) {
    if (!fused)
      *rd = cond_flags(f - VM_FAST_BCOND);
    return true;
  }
  if (vm_fast_is_load_store(f) || f == VM_FAST_STM || f == VM_FAST_CBZ || f == VM_FAST_CBNZ ||
      (f == VM_FAST_LDM && !(op->d.insn.imm & 0x8000)))
    return true;
  flag_use(op, wr, rd);
  return *rd != FL_ALL;
}

/* The guest registers an entry writes, a bit each (all: not known). */
static unsigned regs_written(const struct vm_block_op *op)
{
  const struct vm_insn *in = &op->d.insn;
  const unsigned f = op->d.fast;
  const unsigned wb = (in->flags & VM_F_W) ? reg_bit(in->rn) : 0;
  if (f >= VM_FAST_DP && f < VM_FAST_LD) {
    const unsigned alu = ((f - VM_FAST_DP) % 32) / 2;
    return alu == VM_ALU_TST || alu == VM_ALU_TEQ || alu == VM_ALU_CMP || alu == VM_ALU_CMN
               ? 0
               : reg_bit(in->rd);
  }
  if (f >= VM_FAST_LDST && f < VM_FAST_LDST + 24) {
    const unsigned k = f - VM_FAST_LDST;
    return (k % 8 < VM_LDST_STR_W ? reg_bit(in->rd) : 0) |
           (k / 8 != VM_LDST_OFF ? reg_bit(in->rn) : 0);
  }
  if (f >= VM_FAST_BCOND && f < VM_FAST_BCOND + 14)
    return 0;
  switch (f) {
  case VM_FAST_LD: return reg_bit(in->rd) | wb;
  case VM_FAST_ST: case VM_FAST_STM: return wb;
  case VM_FAST_LDM: return (in->imm & 0xffffu) | wb;
  case VM_FAST_CBZ: case VM_FAST_CBNZ: return 0;
  case VM_FAST_MUL: case VM_FAST_MLA: case VM_FAST_MLS: case VM_FAST_SBFX: case VM_FAST_UBFX:
  case VM_FAST_EXT: case VM_FAST_ADR: case VM_FAST_MOVT:
    return reg_bit(in->rd);
  default: return ~0u;
  }
}

/* hot[i]: the flags compiled code reads after entry i of the block at first,
 * exits aside (flag_use_hot; those that leave inline read them all); fuse[i]:
 * entry i and the B<c> after it are compiled as one (fusable). */
static void flags_live_hot(const struct vm_block_op *first, bool fuse_ok,
                           unsigned hot[VM_BLOCK_LEN + 1], bool fuse[VM_BLOCK_LEN + 1])
{
  unsigned at[VM_BLOCK_LEN + 1], n = block_entries(first, at);
  for (unsigned i = 0; i <= VM_BLOCK_LEN; i++) {
    hot[i] = FL_ALL;
    fuse[i] = false;
  }
  for (unsigned k = 0; fuse_ok && k < n; k++) {
    const unsigned i = at[k];
    const struct vm_block_op *op = &first[i];
    unsigned alu;
    bool imm;
    if (op->d.fast == VM_FAST_IT || vm_fast_ends_block(op->d.fast, &op->d.insn))
      continue; /* (an IT block's instructions are not entries here) */
    if (i + 1 < VM_BLOCK_LEN && (i == 0 || !fuse[i - 1]) && fusable(op, &alu, &imm))
      fuse[i] = true;
  }
  unsigned after = FL_ALL; /* what leaves inline reads them all */
  while (n--) {
    const unsigned i = at[n];
    hot[i] = after;
    unsigned wr, rd;
    if (!flag_use_hot(&first[i], i > 0 && fuse[i - 1], &wr, &rd))
      wr = 0, rd = FL_ALL;
    after = (after & ~wr) | rd;
  }
}

/* ---- buffer ------------------------------------------------------------------- */

/* W^X: [from, from + len) rounded out to pages, read-write for a compile. */
static bool jit_open(const struct vm_jit *j, size_t from, size_t len)
{
  const size_t lo = from & ~(j->page - 1);
  size_t hi = (from + len + j->page - 1) & ~(j->page - 1);
  if (hi > JIT_BUF_SIZE)
    hi = JIT_BUF_SIZE;
  return mprotect(j->base + lo, hi - lo, PROT_READ | PROT_WRITE) == 0;
}

/* ... and read-execute again. Other blocks' code may share its first page,
 * so this cannot fail softly: the kernel refuses it only when it has no
 * memory left for the mapping. */
static void jit_seal(const struct vm_jit *j, size_t from, size_t len)
{
  const size_t lo = from & ~(j->page - 1);
  size_t hi = (from + len + j->page - 1) & ~(j->page - 1);
  if (hi > JIT_BUF_SIZE)
    hi = JIT_BUF_SIZE;
  if (mprotect(j->base + lo, hi - lo, PROT_READ | PROT_EXEC) != 0) {
    fprintf(stderr, "sonde: vm: cannot make compiled code executable: %s\n", strerror(errno));
    abort();
  }
}

struct vm_jit *vm_jit_new(const struct vm_block *map)
{
  const char *env = getenv("SONDE_JIT");
  if (env && env[0] == '0')
    return NULL;
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || (page & (page - 1)))
    return NULL;
  struct vm_jit *j = calloc(1, sizeof *j);
  if (!j)
    return NULL;
  void *p = mmap(NULL, JIT_BUF_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    free(j);
    return NULL;
  }
  j->base = p;
  j->page = (size_t)page;
  j->map = map;
  vm_jit_flush(j);
  return j;
}

void vm_jit_free(struct vm_jit *j)
{
  if (!j)
    return;
  munmap(j->base, JIT_BUF_SIZE);
  free(j);
}

void vm_jit_flush(struct vm_jit *j)
{
  if (!j)
    return;
  if (!jit_open(j, 0, JIT_BLOCK_MAX)) { /* the stubs stay as they are */
    j->used = JIT_BUF_SIZE;             /* full: nothing more is compiled */
    return;
  }
  struct emit e = {.a = {.p = j->base, .end = j->base + JIT_BLOCK_MAX}, .j = j};
  emit_stubs_common(&e, j);
  j->used = (size_t)(e.a.p - j->base);
  jit_seal(j, 0, JIT_BLOCK_MAX);
}

bool vm_jit_full(const struct vm_jit *j)
{
  return j && j->used + JIT_BLOCK_MAX > JIT_BUF_SIZE;
}

static const void *compile_block(struct sonde_vm *vm, struct vm_jit *j,
                                 const struct vm_block_op *first, bool checked)
{
  struct emit e;
  memset(&e, 0, offsetof(struct emit, stub)); /* (the stubs are written as added) */
  e.a = (struct jit_asm){.p = j->base + j->used, .end = j->base + j->used + JIT_BLOCK_MAX};
  e.j = j;
  uint8_t *const start = e.a.p;
  e.first = first;
  e.start = start;
  e.checked = checked;
  e.tm = vm->tm != NULL;
  for (unsigned i = 0; i < vm->bus.nregions; i++) {
    if (vm->bus.region[i].wait_read > e.wr)
      e.wr = vm->bus.region[i].wait_read;
    if (vm->bus.region[i].wait_write > e.ww)
      e.ww = vm->bus.region[i].wait_write;
  }
  const struct vm_timing *t = &vm->cpu.t;
  uint32_t pend = 0;
  unsigned live[VM_BLOCK_LEN + 1], hot[VM_BLOCK_LEN + 1];
  bool fuse[VM_BLOCK_LEN + 1];
  flags_live(first, live);
  /* flags owed (not on a machine with a memory system, whose timing model
   * runs between instructions) and B<c> fused (not in the checked variant,
   * whose event check comes between) */
  const bool defer = !e.tm, fuse_ok = defer && !checked;
  flags_live_hot(first, fuse_ok, hot, fuse);
  e.end = first + VM_BLOCK_LEN;
  const struct vm_block_op *op = first;
  for (;;) {
    const unsigned f = op->d.fast;
    bool end = false;
    if (f == VM_FAST_SLOW || f == VM_FAST_BLKEND) { /* the entry after the block */
      emit_df_flush(&e);
      emit_resume(&e, op, pend, false);
      break;
    }
    if (f == VM_FAST_IT) { /* with its block (the checked variant may stop inside) */
      emit_df_flush(&e);
      e.defer = false;
      if (!emit_it(&e, op, t, &pend)) {
        emit_resume(&e, op, pend, false);
        break;
      }
      op += 1 + vm_it_length(op->d.insn.imm);
      continue;
    }
    if (e.tm) { /* straight-line instructions the memo may replay at once */
      unsigned k = 0; /* (a memoized run has VM_TM_MEMO_LEN steps at most) */
      while (k < VM_TM_MEMO_LEN && tm_simple(op[k].d.fast))
        k++;
      e.live = FL_ALL;
      if (k >= 2 && emit_tm_group(&e, op, k, t, &pend)) {
        op += k;
        continue;
      }
    }
    if (checked) /* the one-at-a-time executor's check: cy < ev to start op */
      emit_check(&e, op, pend, 0);
    const unsigned i = (unsigned)(op - first);
    e.defer = defer;
    e.cur = op;
    emit_df_before(&e, op);
    uint8_t *const at = e.a.p;
    const unsigned nstub = e.nstub;
    /* the checked variant, and every instruction on a machine with a
     * memory system (emit_tm_after), may stop anywhere */
    e.live = checked || e.tm ? FL_ALL : live[i];
    e.hot = defer ? hot[i] : FL_ALL;
    if (fuse_ok && fuse[i]) {
      emit_fused(&e, op, live[i + 1], hot[i + 1], &pend);
      op += 2;
      continue;
    }
    if (!emit_op(&e, op, t, &pend, &end)) {
      if (op == first)
        return NULL;
      e.a.p = at; /* drop what it emitted: resume there instead */
      e.nstub = nstub;
      emit_df_flush(&e);
      emit_resume(&e, op, pend, false);
      break;
    }
    if (end)
      break;
    if (e.tm)
      emit_tm_retire(&e, op);
    op++;
  }
  emit_stubs(&e);
  if (e.a.full)
    return NULL;
  j->used = (size_t)(e.a.p - j->base);
  return start;
}

const void *vm_jit_compile(struct sonde_vm *vm, struct vm_jit *j, const struct vm_block_op *first,
                           bool checked)
{
  if (!j || vm_jit_full(j))
    return NULL;
  const size_t at = j->used;
  if (!jit_open(j, at, JIT_BLOCK_MAX))
    return NULL;
  const void *code = compile_block(vm, j, first, checked);
  jit_seal(j, at, JIT_BLOCK_MAX);
  return code;
}

int vm_jit_run(const struct vm_jit *j, struct vm_jit_state *s, struct vm_cpu *c,
               const struct vm_page *pages, const void *code)
{
  int (*entry)(struct vm_jit_state *, struct vm_cpu *, const struct vm_page *, const void *);
  const void *p = j->entry;
  memcpy(&entry, &p, sizeof entry);
  return entry(s, c, pages, code);
}

#else /* no block compiler on this host: the block executor interprets */

struct vm_jit *vm_jit_new(const struct vm_block *map)
{
  (void)map;
  return NULL;
}
void vm_jit_free(struct vm_jit *j) { (void)j; }
void vm_jit_flush(struct vm_jit *j) { (void)j; }
bool vm_jit_full(const struct vm_jit *j)
{
  (void)j;
  return false;
}
const void *vm_jit_compile(struct sonde_vm *vm, struct vm_jit *j, const struct vm_block_op *first,
                           bool checked)
{
  (void)vm, (void)j, (void)first, (void)checked;
  return NULL;
}
int vm_jit_run(const struct vm_jit *j, struct vm_jit_state *s, struct vm_cpu *c,
               const struct vm_page *pages, const void *code)
{
  (void)j, (void)s, (void)c, (void)pages, (void)code;
  return VM_JIT_RESUME;
}

#endif
