/* Execution of decoded Thumb instructions (decode.h) with the cycle model
 * (timing.h), the decode cache and the run loop of the virtual Cortex-M.
 *
 * Semantics follow the pseudocode of the ARMv7-M ARM (DDI 0403E) chapter A7
 * (instruction details) and A2.3 (ALU, shifts: Shift_C, AddWithCarry), B1.4
 * (special registers), A3.4 (exclusive monitor), A3.2 (alignment); ITSTATE
 * advance is A7.3.2 (ITAdvance); interworking writes of the PC are A2.3.1
 * (BranchWritePC, BXWritePC, LoadWritePC, ALUWritePC).
 *
 * The executor is instantiated twice from one always-inline function: once
 * without observation hooks (the fast path pays nothing for them) and once
 * with them (vm->hooked). */
#include <stdlib.h>

#include "decode.h"
#include "exec_ext.h"
#include "fast.h"
#include "jit.h"
#include "timing.h"
#include "vm_internal.h"

#define APSR_N (1u << 31)
#define APSR_Z (1u << 30)
#define APSR_C (1u << 29)
#define APSR_V (1u << 28)
#define APSR_Q (1u << 27)
#define EPSR_T (1u << 24)
#define CCR_UNALIGN_TRP (1u << 3)
#define CCR_DIV_0_TRP (1u << 4)

/* ---- helpers ------------------------------------------------------------ */

static inline uint32_t ror32(uint32_t v, unsigned n)
{
  n &= 31;
  return n ? (v >> n) | (v << (32 - n)) : v;
}

/* Shift_C, A2.3.2 (amount 0 leaves value and carry; RRX uses carry_in). */
static inline uint32_t shift_c(uint32_t v, unsigned type, unsigned n, uint32_t cin,
                               uint32_t *cout)
{
  if (n == 0 && type != VM_SH_RRX) {
    *cout = cin;
    return v;
  }
  switch (type) {
  case VM_SH_LSL:
    if (n < 32) { *cout = (v >> (32 - n)) & 1; return v << n; }
    *cout = n == 32 ? v & 1 : 0;
    return 0;
  case VM_SH_LSR:
    if (n < 32) { *cout = (v >> (n - 1)) & 1; return v >> n; }
    *cout = n == 32 ? v >> 31 : 0;
    return 0;
  case VM_SH_ASR:
    if (n < 32) { *cout = ((uint32_t)((int32_t)v >> (n - 1))) & 1; return (uint32_t)((int32_t)v >> n); }
    *cout = v >> 31;
    return (uint32_t)((int32_t)v >> 31);
  case VM_SH_ROR: {
    uint32_t r = ror32(v, n);
    *cout = r >> 31;
    return r;
  }
  default: /* RRX */
    *cout = v & 1;
    return (cin << 31) | (v >> 1);
  }
}

/* ConditionPassed, A7.3.1. */
static inline bool cond_pass(unsigned cond, uint32_t apsr)
{
  bool n = apsr >> 31, z = (apsr >> 30) & 1, c = (apsr >> 29) & 1, v = (apsr >> 28) & 1;
  bool r;
  switch (cond >> 1) {
  case 0: r = z; break;
  case 1: r = c; break;
  case 2: r = n; break;
  case 3: r = v; break;
  case 4: r = c && !z; break;
  case 5: r = n == v; break;
  case 6: r = n == v && !z; break;
  default: return true;
  }
  return (cond & 1) ? !r : r;
}

static inline void it_store(struct vm_cpu *c, uint8_t it)
{
  c->itstate = it;
  c->epsr = (c->epsr & ~0x0600fc00u) | ((uint32_t)(it & 3) << 25) | ((uint32_t)(it >> 2) << 10);
}

static inline bool is_privileged(const struct sonde_vm *vm)
{
  return vm->cpu.ipsr != 0 || !(vm->cpu.control & 1);
}

static inline bool is_exc_return(const struct sonde_vm *vm, uint32_t v)
{
  if (!vm->cpu.ipsr)
    return false;
  return vm->has_v8m ? (v >> 24) == 0xff : (v >> 28) == 0xf;
}

/* Data transfers of one instruction, reported after it retires. */
struct vm_txlog {
  unsigned n;
  struct { uint32_t addr, value; uint8_t size, write; } t[20];
};

struct vm_exec_ctx {
  uint32_t next;      /* address of the next instruction */
  uint32_t cycles;    /* cycles of this instruction (without bus wait states) */
  uint32_t exc_ret;   /* EXC_RETURN written to the PC (0 if none) */
  uint8_t post;       /* action after retiring: 1 SVC, 2 WFI, 3 WFE, 4 SEV */
  bool branched;
  struct vm_txlog tx;
};

/* The observers of a retired instruction (the hooked path): transfer and
 * retire hooks, the debug blocks, the MTB. Transfer i of an instruction is
 * stamped with cycle start+1+i (its data phase), clamped to the
 * instruction's last cycle (docs/vm.md). */
static void observe_retire(struct sonde_vm *vm, uint32_t pc, uint64_t start, uint32_t cycles,
                           unsigned len, const struct vm_txlog *tx)
{
  if (vm->hooks.transfer)
    for (unsigned i = 0; i < tx->n; i++) {
      uint64_t cy = start + (i + 1 < cycles ? i + 1 : cycles - 1);
      vm->hooks.transfer(vm->hooks.ctx, cy, pc, tx->t[i].addr, tx->t[i].size, tx->t[i].value,
                         tx->t[i].write);
    }
  if (vm->hooks.retire)
    vm->hooks.retire(vm->hooks.ctx, pc, start, cycles);
  if (vm->dbg_observe) { /* DWT comparators, counters, PC sample (dbg_dwt.c) */
    for (unsigned i = 0; i < tx->n; i++)
      vm_dbg_transfer(vm, pc, tx->t[i].addr, tx->t[i].size, tx->t[i].value, tx->t[i].write,
                      start + (i + 1 < cycles ? i + 1 : cycles - 1));
    vm_dbg_retire(vm, pc, start, cycles, tx->n);
  }
  if (vm->mtb_observe) /* non-sequential PC changes (dbg_mtb.c) */
    vm_mtb_retire(vm, pc, len);
}

/* exec_insn's report to the MTB (nothing else writes x.next), out of line:
 * vm_mtb_retire(), the first packet of an exception return (`exc_ret`, 0:
 * none) inline. */
static __attribute__((noinline)) void mtb_retire_insn(struct sonde_vm *vm, uint32_t pc,
                                                      unsigned len, uint32_t exc_ret)
{
  if (exc_ret)
    vm_mtb_retire_exc_return(vm, pc, len, exc_ret);
  else
    vm_mtb_retire(vm, pc, len);
}

/* observe_retire() with the commonest case inline: only the retire hook
 * (sonde run --trace-pc) or only the MTB, in the order observe_retire uses. */
VM_INLINE void observe(struct sonde_vm *vm, uint32_t pc, uint64_t start, uint32_t cycles,
                       unsigned len, const struct vm_txlog *tx)
{
  if (VM_LIKELY(!vm->hooks.transfer && !vm->dbg_observe)) {
    if (vm->hooks.retire)
      vm->hooks.retire(vm->hooks.ctx, pc, start, cycles);
    if (vm->mtb_observe)
      vm_mtb_retire(vm, pc, len);
    return;
  }
  observe_retire(vm, pc, start, cycles, len, tx);
}

/* Fetch wait states charged on a pipeline refill: the target region's read
 * wait states (docs/vm.md, "CPU and cycle model"). */
static inline uint32_t refill_cycles(const struct sonde_vm *vm, uint32_t target)
{
  return vm->cpu.t.refill + vm->bus.page[target >> VM_PAGE_SHIFT].wait_read;
}

VM_INLINE bool mem_read(struct sonde_vm *vm, struct vm_exec_ctx *x, uint32_t addr, unsigned size,
                     uint32_t *out, bool hooked)
{
  if (vm_bus_read(vm, &vm->bus, addr, size, out) != VM_BUS_OK) {
    vm_fault(vm, VM_FAULT_PRECISERR, addr);
    return false;
  }
  if (hooked && x->tx.n < 20) {
    x->tx.t[x->tx.n].addr = addr;
    x->tx.t[x->tx.n].value = *out;
    x->tx.t[x->tx.n].size = (uint8_t)size;
    x->tx.t[x->tx.n].write = 0;
    x->tx.n++;
  }
  return true;
}

VM_INLINE bool mem_write(struct sonde_vm *vm, struct vm_exec_ctx *x, uint32_t addr, unsigned size,
                      uint32_t value, bool hooked)
{
  if (vm_bus_write(vm, &vm->bus, addr, size, value) != VM_BUS_OK) {
    vm_fault(vm, VM_FAULT_PRECISERR, addr);
    return false;
  }
  if (hooked && x->tx.n < 20) {
    x->tx.t[x->tx.n].addr = addr;
    x->tx.t[x->tx.n].value = size == 4 ? value : value & ((1u << (size * 8)) - 1);
    x->tx.t[x->tx.n].size = (uint8_t)size;
    x->tx.t[x->tx.n].write = 1;
    x->tx.n++;
  }
  return true;
}

/* Alignment for LDR/STR/LDRH/STRH (A3.2.1): unaligned is allowed on ARMv7-M
 * unless CCR.UNALIGN_TRP; ARMv6-M always faults. */
static inline bool align_ok(struct sonde_vm *vm, uint32_t addr, unsigned size)
{
  if (VM_LIKELY(!(addr & (size - 1))))
    return true;
  if (vm->has_v7m && !(vm->sys.ccr & CCR_UNALIGN_TRP))
    return true;
  vm_fault(vm, VM_FAULT_UNALIGNED, addr);
  return false;
}

static inline bool align_strict(struct sonde_vm *vm, uint32_t addr, unsigned size)
{
  if (VM_LIKELY(!(addr & (size - 1))))
    return true;
  vm_fault(vm, VM_FAULT_UNALIGNED, addr);
  return false;
}

/* BXWritePC / LoadWritePC (A2.3.1): EXC_RETURN in Handler mode, or bit 0
 * selecting the (only) Thumb state; bit 0 clear faults INVSTATE on the next
 * instruction. */
static inline void bx_write(struct sonde_vm *vm, struct vm_exec_ctx *x, uint32_t v)
{
  x->branched = true;
  if (is_exc_return(vm, v)) {
    x->exc_ret = v;
    x->next = v;
    return;
  }
  if (!(v & 1))
    vm->cpu.epsr &= ~EPSR_T;
  x->next = v & ~1u;
}

static inline void branch_write(struct vm_exec_ctx *x, uint32_t v)
{
  x->branched = true;
  x->next = v & ~1u;
}

static inline uint32_t sig_bits_u(uint32_t v)
{
  return v ? 32 - (uint32_t)__builtin_clz(v) : 0;
}

static inline uint32_t sig_bits_s(uint32_t v)
{
  uint32_t m = (int32_t)v < 0 ? ~v : v;
  return sig_bits_u(m) + 1;
}

/* ---- MRS / MSR / CPS, B5.2 ------------------------------------------------ */

static uint32_t prio_mask(const struct sonde_vm *vm)
{
  unsigned bits = vm->sys.prio_bits ? vm->sys.prio_bits : 8;
  return (0xffu << (8 - bits)) & 0xffu;
}

static uint32_t do_mrs(struct sonde_vm *vm, unsigned sysm)
{
  const struct vm_cpu *c = &vm->cpu;
  uint32_t v = 0;
  switch (sysm >> 3) {
  case 0:
    if (sysm & 1)
      v |= c->ipsr & 0x1ff;
    if (!(sysm & 4))
      v |= c->apsr & (vm->has_dsp ? 0xf80f0000u : 0xf8000000u);
    return v;
  case 1:
    if (!is_privileged(vm))
      return 0;
    switch (sysm & 7) {
    case 0: return vm_cpu_get_sp(vm, false);
    case 1: return vm_cpu_get_sp(vm, true);
    case 2: return vm->has_v8m ? c->msplim : 0;
    case 3: return vm->has_v8m ? c->psplim : 0;
    }
    return 0;
  case 2:
    switch (sysm & 7) {
    case 0: return c->primask & 1;
    case 1: case 2: return vm->has_v7m ? c->basepri & 0xff : 0;
    case 3: return vm->has_v7m ? c->faultmask & 1 : 0;
    case 4: return c->control & (vm->has_fpu ? 7u : 3u);
    }
    return 0;
  }
  return 0;
}

static void do_msr(struct sonde_vm *vm, unsigned sysm, unsigned mask, uint32_t v)
{
  struct vm_cpu *c = &vm->cpu;
  switch (sysm >> 3) {
  case 0:
    if (sysm & 4)
      return;
    if (mask & 2)
      c->apsr = (c->apsr & ~0xf8000000u) | (v & 0xf8000000u);
    if ((mask & 1) && vm->has_dsp)
      c->apsr = (c->apsr & ~0x000f0000u) | (v & 0x000f0000u);
    return;
  case 1:
    if (!is_privileged(vm))
      return;
    switch (sysm & 7) {
    case 0: vm_cpu_set_sp(vm, false, v & ~3u); break;
    case 1: vm_cpu_set_sp(vm, true, v & ~3u); break;
    case 2: if (vm->has_v8m) c->msplim = v & ~7u; break;
    case 3: if (vm->has_v8m) c->psplim = v & ~7u; break;
    }
    if ((sysm & 6) == 2 && vm->has_v8m && c->splim_on != ((c->msplim | c->psplim) != 0)) {
      /* the fast handlers do not check limits: re-classify every decode */
      c->splim_on = (c->msplim | c->psplim) != 0;
      vm_cpu_flush_decode_cache(vm);
    }
    return;
  case 2:
    if (!is_privileged(vm))
      return;
    switch (sysm & 7) {
    case 0: c->primask = v & 1; vm_exc_mask_changed(vm); break;
    case 1:
      if (vm->has_v7m) { c->basepri = v & prio_mask(vm); vm_exc_mask_changed(vm); }
      break;
    case 2: {
      uint32_t nv = v & prio_mask(vm);
      if (vm->has_v7m && nv && (nv < c->basepri || !c->basepri)) {
        c->basepri = nv;
        vm_exc_mask_changed(vm);
      }
      break;
    }
    case 3:
      if (vm->has_v7m && vm_exc_execution_priority(vm) > -1) {
        c->faultmask = v & 1;
        vm_exc_mask_changed(vm);
      }
      break;
    case 4: {
      uint32_t nc = c->control;
      nc = (nc & ~1u) | (v & 1);
      if (!c->ipsr)
        nc = (nc & ~2u) | (v & 2);
      if (vm->has_fpu)
        nc = (nc & ~4u) | (v & 4);
      vm_cpu_set_control(vm, nc);
      break;
    }
    }
    return;
  }
}

static void do_cps(struct sonde_vm *vm, bool disable, unsigned which)
{
  struct vm_cpu *c = &vm->cpu;
  if (!is_privileged(vm))
    return;
  if (which & 2)
    c->primask = disable;
  if ((which & 1) && vm->has_v7m) {
    if (!disable)
      c->faultmask = 0;
    else if (vm_exc_execution_priority(vm) > -1)
      c->faultmask = 1;
  }
  vm_exc_mask_changed(vm);
}

/* ---- the executor ---------------------------------------------------------- */

#define R(n) ((n) == 15 ? pc + 4 : c->r[(n)])
#define FAULT() goto fault
/* ARMv8-M stack limit (exception.c, vm_sp_limit_check): an instruction that
 * would move SP below the active limit raises STKOF before it writes or
 * accesses anything (the checks QEMU makes; fast_classify sends these
 * instructions here while a limit is set). */
#define SP_LIMIT(V)                                                                    \
  do {                                                                                 \
    if (VM_UNLIKELY(c->splim_on) && !vm_sp_limit_check(vm, (V)))                       \
      FAULT();                                                                         \
  } while (0)

/* Execute one decoded instruction at c->r[15]. Returns false if it faulted
 * (state unchanged except what the fault did; the caller charges a cycle). */
VM_INLINE bool exec_insn(struct sonde_vm *vm, const struct vm_insn *in, const bool hooked)
{
  struct vm_cpu *c = &vm->cpu;
  const uint32_t pc = c->r[15];
  const uint64_t start = c->cycles;
  struct vm_exec_ctx x;
  x.next = pc + in->len;
  x.cycles = 1;
  x.exc_ret = 0;
  x.post = 0;
  x.branched = false;
  if (hooked)
    x.tx.n = 0;
  bool ls_pipe = false;
  uint8_t ls_rt = VM_NOREG;

  bool executed = true; /* false: failed its IT condition */
  const uint8_t it = c->itstate;
  if (VM_UNLIKELY(it)) {
    if (in->op != VM_OP_BKPT && !cond_pass(it >> 4, c->apsr)) {
      it_store(c, vm_it_advance(it));
      executed = false;
      goto retire;
    }
    it_store(c, vm_it_advance(it));
  }

  uint32_t apsr = c->apsr;
  const bool setflags = (in->flags & VM_F_S) || ((in->flags & VM_F_S_NOTIT) && !it);
  const uint32_t cin = (apsr >> 29) & 1;
  uint32_t a, b, res, carry = cin, ovf = (apsr >> 28) & 1;
  bool wr = true;

  switch ((unsigned)in->op) {
#define DP_CASES(BASE, OPERAND)                                                        \
  case BASE + VM_ALU_AND: OPERAND; res = R(in->rn) & b; goto logical;                  \
  case BASE + VM_ALU_TST: OPERAND; res = R(in->rn) & b; wr = false; goto logical;      \
  case BASE + VM_ALU_EOR: OPERAND; res = R(in->rn) ^ b; goto logical;                  \
  case BASE + VM_ALU_TEQ: OPERAND; res = R(in->rn) ^ b; wr = false; goto logical;      \
  case BASE + VM_ALU_ORR: OPERAND; res = R(in->rn) | b; goto logical;                  \
  case BASE + VM_ALU_ORN: OPERAND; res = R(in->rn) | ~b; goto logical;                 \
  case BASE + VM_ALU_BIC: OPERAND; res = R(in->rn) & ~b; goto logical;                 \
  case BASE + VM_ALU_MOV: OPERAND; res = b; goto logical;                              \
  case BASE + VM_ALU_MVN: OPERAND; res = ~b; goto logical;                             \
  case BASE + VM_ALU_ADD: OPERAND; a = R(in->rn); goto add0;                           \
  case BASE + VM_ALU_CMN: OPERAND; a = R(in->rn); wr = false; goto add0;               \
  case BASE + VM_ALU_ADC: OPERAND; a = R(in->rn); goto adc;                    \
  case BASE + VM_ALU_SUB: OPERAND; a = R(in->rn); b = ~b; goto add1;                   \
  case BASE + VM_ALU_CMP: OPERAND; a = R(in->rn); b = ~b; wr = false; goto add1;       \
  case BASE + VM_ALU_SBC: OPERAND; a = R(in->rn); b = ~b; goto adc;                    \
  case BASE + VM_ALU_RSB: OPERAND; a = ~R(in->rn); goto add1;
#define OPERAND_I                                                                      \
  b = in->imm;                                                                         \
  if (in->flags & VM_F_IMMC)                                                           \
    carry = (in->flags & VM_F_IMMC_1) ? 1 : 0
#define OPERAND_R                                                                      \
  b = (in->sh_n == 0 && in->sh_type == VM_SH_LSL)                                      \
          ? R(in->rm)                                                                  \
          : shift_c(R(in->rm), in->sh_type, in->sh_n, cin, &carry)

  DP_CASES(VM_OP_DPI0, OPERAND_I)
  DP_CASES(VM_OP_DPR0, OPERAND_R)
  logical:
    if (setflags)
      c->apsr = (apsr & 0x0fffffffu) | (res & APSR_N) | (res ? 0 : APSR_Z) | (carry << 29) |
                (apsr & APSR_V);
    goto dp_write;
  adc: {
      uint64_t u = (uint64_t)a + b + cin;
      res = (uint32_t)u;
      carry = (uint32_t)(u >> 32);
      ovf = ((~(a ^ b) & (a ^ res)) >> 31) & 1;
      goto arith;
    }
  add0: {
      uint64_t u = (uint64_t)a + b;
      res = (uint32_t)u;
      carry = (uint32_t)(u >> 32);
      ovf = ((~(a ^ b) & (a ^ res)) >> 31) & 1;
      goto arith;
    }
  add1: {
      uint64_t u = (uint64_t)a + b + 1;
      res = (uint32_t)u;
      carry = (uint32_t)(u >> 32);
      ovf = ((~(a ^ b) & (a ^ res)) >> 31) & 1;
    }
  arith:
    if (setflags)
      c->apsr = (apsr & 0x0fffffffu) | (res & APSR_N) | (res ? 0 : APSR_Z) | (carry << 29) |
                (ovf << 28);
  dp_write:
    if (!wr)
      break;
    if (VM_UNLIKELY(in->rd == 15)) {
      branch_write(&x, res);
      x.cycles += refill_cycles(vm, x.next);
    } else {
      if (VM_UNLIKELY(in->rd == 13 && c->splim_on) && !vm_sp_limit_check(vm, res)) {
        c->apsr = apsr; /* ADD/SUB/MOV SP faulted: no flags either */
        FAULT();
      }
      c->r[in->rd] = res;
    }
    break;
#undef DP_CASES
#undef OPERAND_I
#undef OPERAND_R

  case VM_OP_DP_RSR:
    res = shift_c(c->r[in->rn], in->sh_type, c->r[in->rm] & 0xff, cin, &carry);
    c->r[in->rd] = res;
    if (setflags)
      c->apsr = (apsr & 0x1fffffffu) | (res & APSR_N) | (res ? 0 : APSR_Z) | (carry << 29);
    break;

  case VM_OP_ADR:
    c->r[in->rd] = ((pc + 4) & ~3u) + in->imm;
    break;
  case VM_OP_MOVT:
    c->r[in->rd] = (c->r[in->rd] & 0xffff) | (in->imm << 16);
    break;

  case VM_OP_MUL:
    res = c->r[in->rn] * c->r[in->rm];
    c->r[in->rd] = res;
    if (setflags)
      c->apsr = (apsr & 0x3fffffffu) | (res & APSR_N) | (res ? 0 : APSR_Z);
    x.cycles = c->t.mul;
    break;
  case VM_OP_MLA:
    c->r[in->rd] = c->r[in->ra] + c->r[in->rn] * c->r[in->rm];
    x.cycles = c->t.mla;
    break;
  case VM_OP_MLS:
    c->r[in->rd] = c->r[in->ra] - c->r[in->rn] * c->r[in->rm];
    x.cycles = c->t.mla;
    break;
  case VM_OP_UMULL: case VM_OP_UMLAL: {
    uint32_t rn = c->r[in->rn], rm = c->r[in->rm];
    uint64_t r = (uint64_t)rn * rm;
    if (in->op == VM_OP_UMLAL)
      r += ((uint64_t)c->r[in->ra] << 32) | c->r[in->rd];
    c->r[in->rd] = (uint32_t)r;
    c->r[in->ra] = (uint32_t)(r >> 32);
    x.cycles = vm_timing_mull(&c->t, sig_bits_u(rn > rm ? rm : rn), in->op == VM_OP_UMLAL);
    break;
  }
  case VM_OP_SMULL: case VM_OP_SMLAL: {
    uint32_t rn = c->r[in->rn], rm = c->r[in->rm];
    int64_t r = (int64_t)(int32_t)rn * (int32_t)rm;
    if (in->op == VM_OP_SMLAL)
      r = (int64_t)((uint64_t)r + (((uint64_t)c->r[in->ra] << 32) | c->r[in->rd]));
    c->r[in->rd] = (uint32_t)r;
    c->r[in->ra] = (uint32_t)((uint64_t)r >> 32);
    uint32_t bn = sig_bits_s(rn), bm = sig_bits_s(rm);
    x.cycles = vm_timing_mull(&c->t, bn < bm ? bn : bm, in->op == VM_OP_SMLAL);
    break;
  }
  case VM_OP_UDIV: case VM_OP_SDIV: {
    uint32_t n = c->r[in->rn], m = c->r[in->rm];
    if (!m) {
      if (vm->sys.ccr & CCR_DIV_0_TRP) {
        vm_fault(vm, VM_FAULT_DIVBYZERO, 0);
        FAULT();
      }
      res = 0;
      x.cycles = vm_timing_div(&c->t, 0, 0);
    } else if (in->op == VM_OP_UDIV) {
      res = n / m;
      x.cycles = vm_timing_div(&c->t, n, m);
    } else {
      int32_t sn = (int32_t)n, sm = (int32_t)m;
      if (sn == INT32_MIN && sm == -1)
        res = n;
      else
        res = (uint32_t)(sn / sm);
      x.cycles = vm_timing_div(&c->t, sn < 0 ? -n : n, sm < 0 ? -m : m);
    }
    c->r[in->rd] = res;
    break;
  }

  case VM_OP_SSAT: case VM_OP_USAT: {
    uint32_t dummy;
    int64_t v = (int32_t)shift_c(c->r[in->rm], in->sh_type, in->sh_n, 0, &dummy);
    int64_t lo, hi;
    if (in->op == VM_OP_SSAT) {
      hi = ((int64_t)1 << (in->imm - 1)) - 1;
      lo = -((int64_t)1 << (in->imm - 1));
    } else {
      hi = ((int64_t)1 << in->imm) - 1;
      lo = 0;
    }
    if (v > hi) { v = hi; c->apsr |= APSR_Q; }
    else if (v < lo) { v = lo; c->apsr |= APSR_Q; }
    c->r[in->rd] = (uint32_t)v;
    break;
  }
  case VM_OP_SBFX: case VM_OP_UBFX: {
    uint32_t v = c->r[in->rn] >> in->sh_n;
    unsigned w = in->imm;
    if (w < 32) {
      v &= (1u << w) - 1;
      if (in->op == VM_OP_SBFX && ((v >> (w - 1)) & 1))
        v |= ~((1u << w) - 1);
    }
    c->r[in->rd] = v;
    break;
  }
  case VM_OP_BFI: case VM_OP_BFC: {
    unsigned lsb = in->sh_n, width = in->imm - lsb + 1;
    uint32_t mask = (uint32_t)((((uint64_t)1 << width) - 1) << lsb);
    uint32_t src = in->op == VM_OP_BFI ? c->r[in->rn] << lsb : 0;
    c->r[in->rd] = (c->r[in->rd] & ~mask) | (src & mask);
    break;
  }
  case VM_OP_CLZ: {
    uint32_t v = c->r[in->rm];
    c->r[in->rd] = v ? (uint32_t)__builtin_clz(v) : 32;
    break;
  }
  case VM_OP_RBIT: {
    uint32_t v = c->r[in->rm];
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
    c->r[in->rd] = __builtin_bswap32(v);
    break;
  }
  case VM_OP_REV: c->r[in->rd] = __builtin_bswap32(c->r[in->rm]); break;
  case VM_OP_REV16: {
    uint32_t v = c->r[in->rm];
    c->r[in->rd] = ((v >> 8) & 0x00ff00ffu) | ((v & 0x00ff00ffu) << 8);
    break;
  }
  case VM_OP_REVSH: {
    uint32_t v = c->r[in->rm];
    c->r[in->rd] = (uint32_t)(int32_t)(int16_t)(((v >> 8) & 0xff) | ((v & 0xff) << 8));
    break;
  }
  case VM_OP_EXT: {
    uint32_t v = ror32(c->r[in->rm], in->sh_n);
    switch (in->sub) {
    case VM_EXT_SXTB: v = (uint32_t)(int32_t)(int8_t)v; break;
    case VM_EXT_SXTH: v = (uint32_t)(int32_t)(int16_t)v; break;
    case VM_EXT_UXTB: v &= 0xff; break;
    default: v &= 0xffff; break;
    }
    if (in->rn != 15)
      v += c->r[in->rn];
    c->r[in->rd] = v;
    break;
  }

  case VM_OP_LD: case VM_OP_ST: {
    uint32_t base = (in->flags & VM_F_LIT) ? (pc + 4) & ~3u : c->r[in->rn];
    uint32_t off = in->rm != VM_NOREG ? c->r[in->rm] << in->sh_n : in->imm;
    uint32_t offaddr = (in->flags & VM_F_U) ? base + off : base - off;
    uint32_t addr = (in->flags & VM_F_P) ? offaddr : base;
    unsigned size = in->sub & 7;
    if ((in->flags & VM_F_W) && in->rn == 13)
      SP_LIMIT(offaddr);
    if (!align_ok(vm, addr, size))
      FAULT();
    if (in->op == VM_OP_LD) {
      uint32_t v;
      if (!mem_read(vm, &x, addr, size, &v, hooked))
        FAULT();
      if (in->sub & VM_SZ_SIGNED)
        v = size == 1 ? (uint32_t)(int32_t)(int8_t)v : (uint32_t)(int32_t)(int16_t)v;
      if (in->flags & VM_F_W)
        c->r[in->rn] = offaddr;
      if (VM_UNLIKELY(in->rd == 15)) {
        bx_write(vm, &x, v);
        x.cycles = 2 + refill_cycles(vm, x.next);
        break;
      }
      c->r[in->rd] = v;
      ls_rt = in->rd;
    } else {
      if (!mem_write(vm, &x, addr, size, c->r[in->rd], hooked))
        FAULT();
      if (in->flags & VM_F_W)
        c->r[in->rn] = offaddr;
    }
    /* Neighbouring single loads/stores pipeline (Cortex-M3 TRM 18.3). */
    x.cycles = (c->ls_pipe && (c->ls_rt == VM_NOREG ||
                               (c->ls_rt != in->rn && c->ls_rt != in->rm))) ? 1 : 2;
    ls_pipe = c->t.ls_pipeline && !(in->op == VM_OP_ST && in->rm != VM_NOREG);
    break;
  }

  case VM_OP_LDM: case VM_OP_STM: {
    uint32_t list = in->imm, n = (uint32_t)__builtin_popcount(list);
    uint32_t base = c->r[in->rn];
    uint32_t addr = in->sub ? base - 4 * n : base;
    uint32_t vals[16];
    if ((in->flags & VM_F_W) && in->rn == 13)
      SP_LIMIT(addr); /* the lowest address: the new SP of a PUSH (QEMU's choice for IA) */
    if (!align_strict(vm, addr, 4))
      FAULT();
    if (in->op == VM_OP_LDM) {
      uint32_t a2 = addr;
      for (unsigned r = 0; r < 16; r++)
        if (list & (1u << r)) {
          if (!mem_read(vm, &x, a2, 4, &vals[r], hooked))
            FAULT();
          a2 += 4;
        }
      if (in->flags & VM_F_W)
        c->r[in->rn] = in->sub ? base - 4 * n : base + 4 * n;
      for (unsigned r = 0; r < 15; r++)
        if (list & (1u << r))
          c->r[r] = vals[r];
      x.cycles = 1 + n;
      if (list & 0x8000) {
        bx_write(vm, &x, vals[15]);
        x.cycles += refill_cycles(vm, x.next);
      }
    } else {
      uint32_t a2 = addr;
      for (unsigned r = 0; r < 15; r++)
        if (list & (1u << r)) {
          if (!mem_write(vm, &x, a2, 4, c->r[r], hooked))
            FAULT();
          a2 += 4;
        }
      if (in->flags & VM_F_W)
        c->r[in->rn] = in->sub ? base - 4 * n : base + 4 * n;
      x.cycles = 1 + n;
    }
    break;
  }

  case VM_OP_LDRD: case VM_OP_STRD: {
    uint32_t base = (in->flags & VM_F_LIT) ? (pc + 4) & ~3u : c->r[in->rn];
    uint32_t offaddr = (in->flags & VM_F_U) ? base + in->imm : base - in->imm;
    uint32_t addr = (in->flags & VM_F_P) ? offaddr : base;
    if ((in->flags & VM_F_W) && in->rn == 13)
      SP_LIMIT(offaddr);
    if (!align_strict(vm, addr, 4))
      FAULT();
    if (in->op == VM_OP_LDRD) {
      uint32_t v1, v2;
      if (!mem_read(vm, &x, addr, 4, &v1, hooked) || !mem_read(vm, &x, addr + 4, 4, &v2, hooked))
        FAULT();
      if (in->flags & VM_F_W)
        c->r[in->rn] = offaddr;
      c->r[in->rd] = v1;
      c->r[in->ra] = v2;
    } else {
      if (!mem_write(vm, &x, addr, 4, c->r[in->rd], hooked) ||
          !mem_write(vm, &x, addr + 4, 4, c->r[in->ra], hooked))
        FAULT();
      if (in->flags & VM_F_W)
        c->r[in->rn] = offaddr;
    }
    x.cycles = 3;
    break;
  }

  case VM_OP_LDREX: case VM_OP_LDAEX: case VM_OP_LDA: {
    uint32_t addr = c->r[in->rn] + in->imm, v;
    unsigned size = in->sub & 7;
    if (!align_strict(vm, addr, size) || !mem_read(vm, &x, addr, size, &v, hooked))
      FAULT();
    if (in->op != VM_OP_LDA) {
      c->excl_valid = true;
      c->excl_addr = addr;
    }
    c->r[in->rd] = v;
    x.cycles = 2;
    break;
  }
  case VM_OP_STREX: case VM_OP_STLEX: {
    uint32_t addr = c->r[in->rn] + in->imm;
    unsigned size = in->sub & 7;
    if (!align_strict(vm, addr, size))
      FAULT();
    if (c->excl_valid && c->excl_addr == addr) {
      if (!mem_write(vm, &x, addr, size, c->r[in->rd], hooked))
        FAULT();
      c->r[in->ra] = 0;
    } else {
      c->r[in->ra] = 1;
    }
    c->excl_valid = false;
    x.cycles = 2;
    break;
  }
  case VM_OP_STL: {
    uint32_t addr = c->r[in->rn];
    unsigned size = in->sub & 7;
    if (!align_strict(vm, addr, size) || !mem_write(vm, &x, addr, size, c->r[in->rd], hooked))
      FAULT();
    x.cycles = 2;
    break;
  }
  case VM_OP_CLREX:
    c->excl_valid = false;
    break;

  case VM_OP_TBB: case VM_OP_TBH: {
    uint32_t idx = c->r[in->rm], base = R(in->rn), v;
    if (in->op == VM_OP_TBB) {
      if (!mem_read(vm, &x, base + idx, 1, &v, hooked))
        FAULT();
    } else {
      uint32_t addr = base + 2 * idx;
      if (!align_ok(vm, addr, 2) || !mem_read(vm, &x, addr, 2, &v, hooked))
        FAULT();
    }
    branch_write(&x, pc + 4 + 2 * v);
    x.cycles = 2 + refill_cycles(vm, x.next);
    break;
  }

  case VM_OP_B:
    if (in->cond == 14 || cond_pass(in->cond, apsr)) {
      branch_write(&x, pc + 4 + in->imm);
      x.cycles = 1 + refill_cycles(vm, x.next);
    }
    break;
  case VM_OP_BL:
    c->r[14] = x.next | 1;
    branch_write(&x, pc + 4 + in->imm);
    x.cycles = 1 + c->t.bl_extra + refill_cycles(vm, x.next);
    break;
  case VM_OP_BX:
    bx_write(vm, &x, R(in->rm));
    x.cycles = 1 + refill_cycles(vm, x.next);
    break;
  case VM_OP_BLX: {
    uint32_t t = c->r[in->rm];
    c->r[14] = x.next | 1;
    x.branched = true;
    if (!(t & 1))
      c->epsr &= ~EPSR_T;
    x.next = t & ~1u;
    x.cycles = 1 + refill_cycles(vm, x.next);
    break;
  }
  case VM_OP_CBZ: case VM_OP_CBNZ:
    if ((c->r[in->rn] == 0) == (in->op == VM_OP_CBZ)) {
      branch_write(&x, pc + 4 + in->imm);
      x.cycles = 1 + refill_cycles(vm, x.next);
    }
    break;

  case VM_OP_MRS:
    c->r[in->rd] = do_mrs(vm, in->imm);
    x.cycles = c->t.sysreg;
    break;
  case VM_OP_MSR:
    do_msr(vm, in->imm, in->sub, c->r[in->rn]);
    x.cycles = c->t.sysreg;
    break;
  case VM_OP_CPS:
    do_cps(vm, in->sub & 1, in->imm);
    break;
  case VM_OP_HINT:
    switch (in->sub) {
    case VM_HINT_WFI: x.post = 2; break;
    case VM_HINT_WFE: x.post = 3; break;
    case VM_HINT_SEV: x.post = 4; break;
    default: break;
    }
    break;
  case VM_OP_BARRIER:
    if (in->sub == 2)
      x.cycles = 1 + refill_cycles(vm, x.next);
    else
      x.cycles = c->t.barrier;
    break;
  case VM_OP_SVC:
    x.post = 1;
    break;
  case VM_OP_BKPT:
    if (!vm_bkpt(vm, (uint8_t)in->imm))
      FAULT();
    break;
  case VM_OP_IT:
    it_store(c, (uint8_t)in->imm);
    break;
  case VM_OP_TT:
    /* No MPU regions and no Security Extension: MREGION invalid; R/RW follow
     * the default memory map for privileged access (DDI 0553 C2.4.225). */
    c->r[in->rd] = (1u << 18) | (1u << 19);
    break;

  case VM_OP_DSP: case VM_OP_FP: {
    int r = in->op == VM_OP_DSP ? vm_exec_dsp(vm, in->raw) : vm_exec_fp(vm, in->raw);
    if (r == VM_EXT_UNDEFINED) {
      vm_fault(vm, VM_FAULT_UNDEFINSTR, 0);
      FAULT();
    }
    if (r < 1)
      FAULT();
    x.cycles = (uint32_t)r;
    break;
  }
  case VM_OP_NOCP:
    vm_fault(vm, VM_FAULT_NOCP, 0);
    FAULT();
  case VM_OP_UDF:
  case VM_OP_UNDEF:
  default:
    vm_fault(vm, VM_FAULT_UNDEFINSTR, 0);
    FAULT();
  }

retire:
  c->ls_pipe = ls_pipe;
  c->ls_rt = ls_rt;
  if (VM_UNLIKELY(vm->tm) && hooked) {
    /* a machine with a memory system: the timing model's cycles (exec_tm.c);
     * its wait states are the model's, not the regions' */
    vm_bus_take_stalls(&vm->bus);
    x.cycles = vm_exec_tm_charge(vm, in, pc, x.next, executed, x.cycles, x.tx.n,
                                 x.tx.n ? x.tx.t[0].addr : 0, x.tx.n ? x.tx.t[0].value : 0);
  } else if (VM_UNLIKELY(vm->bus.stall_cycles)) { /* wait states of this instruction's accesses */
    x.cycles += (uint32_t)vm_bus_take_stalls(&vm->bus);
  }
  c->r[15] = x.next;
  c->cycles = start + x.cycles;
  c->instret++;
  c->exec_pc = pc;
  if (hooked && x.cycles) /* (a folded IT takes no cycle: nothing to observe) */
    observe(vm, pc, start, x.cycles, in->len, &x.tx);
  else if (VM_UNLIKELY(vm->mtb_observe) && (x.branched || vm->mtb_hooked))
    mtb_retire_insn(vm, pc, in->len, x.exc_ret); /* the MTB executor's slow path */
  if (VM_UNLIKELY(x.exc_ret | x.post)) {
    if (x.exc_ret)
      vm_exc_return(vm, x.exc_ret); /* sets the PC from the unstacked frame */
    switch (x.post) {
    case 1: vm_svc(vm); break;
    case 2: vm_wait(vm, false); break;
    case 3: vm_wait(vm, true); break;
    case 4: vm_sev(vm); break;
    }
  }
  return true;

fault:
  it_store(c, it);
  c->ls_pipe = false;
  vm_bus_take_stalls(&vm->bus);
  c->cycles = start + 1;
  return false;
}

#undef R
#undef FAULT

/* ---- the fast executor (plain path) ---------------------------------------
 *
 * Without observation hooks, the hot instructions run from threaded handlers:
 * icache_fill() classifies each decoded instruction once (fast_classify) into
 * a handler of run_plain(), which dispatches with computed goto (one indirect
 * jump per handler, so the host predicts each guest op's successor). A handler
 * covers only the common, exactly modelled case (no IT block, no PC operand,
 * plain memory with its wait states, no EXC_RETURN, no interworking to ARM
 * state); it checks its conditions before changing any state and otherwise
 * runs the instruction through exec_insn() (label `slow`), so cycles, faults
 * and every side effect are those of the one executor above. Invariants while
 * a handler runs: ITSTATE is 0 and EPSR.T is 1 (only slow instructions and
 * exceptions change them), and the bus has no stalls pending. Fast handlers
 * never touch devices, so `attention` and `event_cycle` can only change in the
 * slow path; they are re-read after it. */

static bool alu_reads_rn(unsigned alu)
{
  return alu != VM_ALU_MOV && alu != VM_ALU_MVN;
}

static bool alu_writes(unsigned alu)
{
  return alu != VM_ALU_TST && alu != VM_ALU_TEQ && alu != VM_ALU_CMP && alu != VM_ALU_CMN;
}

/* The fast handler for a decoded instruction, or VM_FAST_SLOW. */
static uint8_t fast_classify(const struct vm_insn *in, bool splim)
{
  unsigned op = in->op;
  /* With a stack limit set (ARMv8-M), whatever may write SP takes exec_insn,
   * which checks it: Rd = SP, or SP as a written-back base. */
  if (VM_UNLIKELY(splim) && (in->rd == 13 || (in->rn == 13 && (in->flags & VM_F_W))))
    return VM_FAST_SLOW;
  if (op >= VM_OP_DPI0 && op < VM_OP_DPR0 + 16) {
    bool reg = op >= VM_OP_DPR0;
    unsigned alu = op - (reg ? VM_OP_DPR0 : VM_OP_DPI0);
    if ((alu_writes(alu) && in->rd == 15) || (alu_reads_rn(alu) && in->rn == 15) ||
        (reg && in->rm == 15))
      return VM_FAST_SLOW;
    /* outside IT blocks, VM_F_S_NOTIT sets the flags as VM_F_S does */
    bool s = (in->flags & (VM_F_S | VM_F_S_NOTIT)) != 0;
    unsigned kind = !reg ? 0 : in->sh_n == 0 && in->sh_type == VM_SH_LSL ? 1 : 2;
    return (uint8_t)(VM_FAST_DP + 32 * kind + 2 * alu + s);
  }
  switch (op) {
  case VM_OP_LD: case VM_OP_ST:
    if ((op == VM_OP_LD && in->rd == 15) || in->rm == 15 ||
        (in->rn == 15 && !(in->flags & VM_F_LIT)) ||
        ((in->flags & VM_F_W) && (in->rn == 15 || (in->flags & VM_F_LIT))))
      return VM_FAST_SLOW;
    if (in->rm == VM_NOREG && !(in->flags & VM_F_LIT) && (in->flags & (VM_F_P | VM_F_W))) {
      unsigned mode = !(in->flags & VM_F_W) ? VM_LDST_OFF
                      : (in->flags & VM_F_P) ? VM_LDST_PRE : VM_LDST_POST;
      int form = -1;
      switch (in->sub & (7 | VM_SZ_SIGNED)) {
      case VM_SZ_W: form = op == VM_OP_LD ? VM_LDST_LDR_W : VM_LDST_STR_W; break;
      case VM_SZ_H: form = op == VM_OP_LD ? VM_LDST_LDR_H : VM_LDST_STR_H; break;
      case VM_SZ_B: form = op == VM_OP_LD ? VM_LDST_LDR_B : VM_LDST_STR_B; break;
      case VM_SZ_H | VM_SZ_SIGNED: form = op == VM_OP_LD ? VM_LDST_LDR_SH : -1; break;
      case VM_SZ_B | VM_SZ_SIGNED: form = op == VM_OP_LD ? VM_LDST_LDR_SB : -1; break;
      default: break;
      }
      if (form >= 0)
        return (uint8_t)(VM_FAST_LDST + 8 * mode + (unsigned)form);
    }
    return op == VM_OP_LD ? VM_FAST_LD : VM_FAST_ST;
  case VM_OP_B: return in->cond >= 14 ? VM_FAST_B : (uint8_t)(VM_FAST_BCOND + in->cond);
  case VM_OP_BL: return VM_FAST_BL;
  case VM_OP_BX: return in->rm == 15 ? VM_FAST_SLOW : VM_FAST_BX;
  case VM_OP_CBZ: return VM_FAST_CBZ;
  case VM_OP_CBNZ: return VM_FAST_CBNZ;
  case VM_OP_LDM: case VM_OP_STM:
    if (in->rn == 15 || !in->imm)
      return VM_FAST_SLOW;
    return op == VM_OP_LDM ? VM_FAST_LDM : VM_FAST_STM;
  case VM_OP_IT: return VM_FAST_IT; /* exec_insn's, but blocks may hold it (block.c) */
  default: break;
  }
  /* The remaining handlers write rd; the fast executor keeps the PC in a
   * local, so an instruction reading r15 as a plain register is slow too. */
  if (in->rd == 15)
    return VM_FAST_SLOW;
  switch (op) {
  case VM_OP_MUL:
    return in->rn == 15 || in->rm == 15 ? VM_FAST_SLOW : VM_FAST_MUL;
  case VM_OP_MLA: case VM_OP_MLS:
    if (in->rn == 15 || in->rm == 15 || in->ra == 15)
      return VM_FAST_SLOW;
    return op == VM_OP_MLA ? VM_FAST_MLA : VM_FAST_MLS;
  case VM_OP_SBFX: case VM_OP_UBFX:
    if (in->rn == 15)
      return VM_FAST_SLOW;
    return op == VM_OP_SBFX ? VM_FAST_SBFX : VM_FAST_UBFX;
  case VM_OP_EXT: return in->rm == 15 ? VM_FAST_SLOW : VM_FAST_EXT; /* rn 15: no add */
  case VM_OP_ADR: return VM_FAST_ADR;
  case VM_OP_MOVT: return VM_FAST_MOVT;
  default: return VM_FAST_SLOW;
  }
}

/* The fast executor keeps the APSR's N, Z, C and V unpacked, in locals
 * (struct vm_lflags, fast.h): a flag-setting instruction stores its result
 * into n and z and its carry and overflow words as they fall out of the
 * arithmetic; packing them into APSR bits waits until the slow path or an
 * exit needs the APSR (lflags_pack), which most flag writes never reach. */

VM_INLINE void lflags_unpack(struct vm_lflags *f, uint32_t apsr)
{
  f->n = apsr;
  f->z = ~apsr & APSR_Z;
  f->c = (apsr >> 29) & 1;
  f->v = apsr << 3;
}

VM_INLINE uint32_t lflags_pack(const struct vm_lflags *f, uint32_t apsr)
{
  return (apsr & 0x0fffffffu) | (f->n & APSR_N) | (f->z ? 0 : APSR_Z) | (f->c << 29) |
         ((f->v >> 3) & APSR_V);
}

/* ConditionPassed for B<c> (cond 0..13, constant after inlining). */
VM_INLINE bool lflags_pass(const struct vm_lflags *f, const unsigned cond)
{
  bool ge = (int32_t)(f->n ^ f->v) >= 0;
  bool r;
  switch (cond >> 1) {
  case 0: r = f->z == 0; break;                 /* EQ */
  case 1: r = f->c != 0; break;                 /* CS */
  case 2: r = (int32_t)f->n < 0; break;         /* MI */
  case 3: r = (int32_t)f->v < 0; break;         /* VS */
  case 4: r = f->c != 0 && f->z != 0; break;    /* HI */
  case 5: r = ge; break;                        /* GE */
  default: r = ge && f->z != 0; break;          /* GT */
  }
  return (cond & 1) ? !r : r;
}

/* Data processing with a constant ALU op, operand kind (0 immediate, 1
 * register, 2 shifted register) and flag setting: each handler gets its own
 * copy (the same semantics as exec_insn's DP cases), on the unpacked flags. */
VM_INLINE void fast_dp(struct vm_cpu *c, struct vm_lflags *fl, const struct vm_insn *in,
                       const unsigned alu, const unsigned kind, const bool s)
{
  const uint32_t cin = fl->c;
  uint32_t carry = cin, b, a = 0, res;
  if (kind == 0) { /* immediate */
    b = in->imm;
    if (s && (in->flags & VM_F_IMMC))
      carry = (in->flags & VM_F_IMMC_1) ? 1 : 0;
  } else if (kind == 1) { /* register, no shift */
    b = c->r[in->rm];
  } else { /* shifted register */
    b = shift_c(c->r[in->rm], in->sh_type, in->sh_n, cin, &carry);
  }
  if (alu_reads_rn(alu))
    a = c->r[in->rn];
  bool logical = true;
  switch (alu) {
  case VM_ALU_AND: case VM_ALU_TST: res = a & b; break;
  case VM_ALU_EOR: case VM_ALU_TEQ: res = a ^ b; break;
  case VM_ALU_ORR: res = a | b; break;
  case VM_ALU_ORN: res = a | ~b; break;
  case VM_ALU_BIC: res = a & ~b; break;
  case VM_ALU_MOV: res = b; break;
  case VM_ALU_MVN: res = ~b; break;
  default: {
    uint32_t ci;
    switch (alu) {
    case VM_ALU_ADD: case VM_ALU_CMN: ci = 0; break;
    case VM_ALU_ADC: ci = cin; break;
    case VM_ALU_SUB: case VM_ALU_CMP: b = ~b; ci = 1; break;
    case VM_ALU_SBC: b = ~b; ci = cin; break;
    default: /* RSB */ a = ~a; ci = 1; break;
    }
    uint64_t u = (uint64_t)a + b + ci; /* AddWithCarry (A2.2.1) */
    res = (uint32_t)u;
    if (s) {
      fl->n = fl->z = res;
      fl->c = (uint32_t)(u >> 32);
      fl->v = ~(a ^ b) & (a ^ res);
    }
    logical = false;
    break;
  }
  }
  if (s && logical) {
    fl->n = fl->z = res;
    fl->c = carry;
  }
  if (alu_writes(alu))
    c->r[in->rd] = res;
}

/* A plain-memory page for [addr, addr+len) (one page), or NULL: devices,
 * bit-band, unmapped, read-only or code-watched pages take the slow path. */
VM_INLINE const struct vm_page *fast_page(const struct vm_bus *bus, uint32_t addr, uint32_t len,
                                          bool write)
{
  const struct vm_page *p = &bus->page[addr >> VM_PAGE_SHIFT];
  uint32_t off = addr & ((1u << VM_PAGE_SHIFT) - 1);
  if (VM_LIKELY(vm_page_fast(p, off, len, write)))
    return p;
  return NULL;
}

/* ---- decode cache and run loop --------------------------------------------- */

static void features(const struct sonde_vm *vm, struct vm_decode_features *f)
{
  f->v7m = vm->has_v7m;
  f->dsp = vm->has_dsp;
  f->fpu = vm->has_fpu;
  f->v8m = vm->has_v8m;
}

/* Decode the instruction at pc into the cache entry. False: fetch fault. */
static bool icache_fill(struct sonde_vm *vm, uint32_t pc, struct vm_icache_entry *e)
{
  uint32_t avail = 0;
  const uint8_t *p = vm_bus_code_ptr(&vm->bus, pc, &avail, NULL);
  if (!p || avail < 2)
    return false;
  uint16_t hw1, hw2 = 0;
  memcpy(&hw1, p, 2);
  if (vm_thumb_is32(hw1)) {
    if (avail < 4)
      return false;
    memcpy(&hw2, p + 2, 2);
  }
  struct vm_decode_features f;
  features(vm, &f);
  vm_decode(&f, hw1, hw2, &e->insn);
  if (VM_UNLIKELY(vm->dbgh && vm->dbgh->nbp) && vm_dbgh_bp_match(vm, pc)) {
    e->insn.op = VM_OP_BKPT; /* FPB or host breakpoint (dbg_fpb.c) */
    e->insn.imm = 0;
  }
  const struct vm_region *r = vm_bus_find_region(&vm->bus, pc);
  if (r && !(r->flags & VM_REGION_READONLY)) {
    vm->bus.code_written = vm_cpu_code_written;
    vm_bus_watch_code(&vm->bus, pc);
    if (e->insn.len == 4)
      vm_bus_watch_code(&vm->bus, pc + 2);
  }
  e->fast = fast_classify(&e->insn, vm->cpu.splim_on);
  e->nth = 0;
  e->taken_cycles = 0;
  e->soff = (int32_t)((e->insn.flags & VM_F_U) ? e->insn.imm : 0u - e->insn.imm);
  if (vm_fast_direct_branch(e->fast)) { /* the target and its cost are fixed */
    uint32_t target = (pc + 4 + e->insn.imm) & ~1u;
    e->soff = (int32_t)target;
    e->taken_cycles = (uint16_t)(1 + (e->fast == VM_FAST_BL ? vm->cpu.t.bl_extra : 0) +
                                 refill_cycles(vm, target));
  }
  e->tag = pc | 1;
  return true;
}

VM_INLINE bool step_one(struct sonde_vm *vm, const bool hooked)
{
  struct vm_cpu *c = &vm->cpu;
  uint32_t pc = c->r[15];
  if (VM_UNLIKELY(!(c->epsr & EPSR_T))) {
    vm_fault(vm, VM_FAULT_INVSTATE, 0);
    c->cycles++;
    return false;
  }
  struct vm_icache_entry *e = &c->icache[(pc >> 1) & (VM_ICACHE_SIZE - 1)];
  if (VM_UNLIKELY(e->tag != (pc | 1))) {
    if (!icache_fill(vm, pc, e)) {
      vm_fault(vm, VM_FAULT_IBUSERR, pc);
      c->cycles++;
      return false;
    }
  }
  return exec_insn(vm, &e->insn, hooked);
}

/* Whether the service due may be one periodic PC sample (the first test
 * of vm_sys_service_sample, inline: the executors ask at every event). */
static inline bool sample_may_be_due(const struct sonde_vm *vm)
{
  return vm->dbg && vm->sys.next_valid && vm->sys.next_timer == (unsigned)vm->dbg->timer &&
         !vm->attention;
}

static inline bool needs_service(const struct sonde_vm *vm)
{
  return vm->attention || vm->cpu.cycles >= vm->event_cycle || vm->cpu.sleeping ||
         vm->cpu.locked_up;
}

/* Keep one dispatch per handler: without these GCC merges the handlers'
 * identical dispatch tails into one shared indirect jump. */
#if defined(__GNUC__) && !defined(__clang__)
#define VM_THREADED __attribute__((optimize("no-crossjumping", "no-gcse")))
#else
#define VM_THREADED
#endif

/* run_plain() and run_hooked(): the same threaded executor without
 * observers (the MTB's branch reports only, dbg_mtb.c) and with every
 * instruction observed (exec_threaded.h). */
#define FAST_FN run_plain
#define FAST_HOOKED 0
#define FAST_MTB 0
#define FAST_BLOCK 0
#include "exec_threaded.h"
#define FAST_FN run_hooked
#define FAST_HOOKED 1
#define FAST_MTB 0
#define FAST_BLOCK 0
#include "exec_threaded.h"
/* run_block(): run_plain() a block at a time (block.c); it hands over to
 * run_plain() when the next event may fall inside the block to run. */
#define FAST_FN run_block
#define FAST_HOOKED 0
#define FAST_MTB 0
#define FAST_BLOCK 1
#include "exec_threaded.h"
/* run_block_tm(): run_block() for a machine with a memory system, whose
 * every instruction the timing model charges (exec_tm.c); it checks the
 * event after each instruction and has no compiled code. */
#define FAST_FN run_block_tm
#define FAST_HOOKED 0
#define FAST_MTB 0
#define FAST_BLOCK 1
#define FAST_TM 1
#include "exec_threaded.h"

uint64_t vm_jit_event(struct sonde_vm *vm, struct vm_jit_state *s, const struct vm_block_op *op)
{
  /* run_block's label `event` (exec_threaded.h) after the exit's SYNC: the
   * state the service reads (the PC for a stop's report) */
  struct vm_cpu *c = &vm->cpu;
  if (!sample_may_be_due(vm))
    return 0;
  c->r[15] = op->d.tag;
  c->cycles = s->cy;
  c->instret = s->ir + op->d.nth;
  c->exec_pc = s->exec_pc;
  if (!vm_sys_service_sample(vm))
    return 0;
  if (VM_UNLIKELY(vm->attention || vm->hooked || vm->mtb_observe != c->run_mtb ||
                  !vm->event_cycle)) {
    c->served = true; /* (0 is the exit) */
    return 0;
  }
  return vm->event_cycle;
}

int vm_cpu_execute(struct sonde_vm *vm)
{
  vm_timing_setup(vm);
  struct vm_cpu *c = &vm->cpu;
  c->served = c->served_stop = false;
  for (;;) {
    /* No pipeline reset here: where the VM stops to service events must not
     * change the timing (exception entry/return and branches reset it). */
    if (VM_UNLIKELY(c->served)) { /* run_block did the service */
      c->served = false;
      if (c->served_stop || (vm->attention & VM_ATTN_STOP)) { /* what vm_sys_service returned */
        c->served_stop = false;
        vm_dbg_settle(vm);
        return 0;
      }
    } else if (needs_service(vm)) {
      if (vm_sys_service(vm)) {
        if (vm->dbg) /* PC samples due before now (dbg_dwt.c) */
          vm_dbg_settle(vm);
        return 0;
      }
      if (vm->cpu.sleeping || vm->cpu.locked_up)
        continue;
    }
    if (vm->hooked) {
      run_hooked(vm);
    } else if (!vm->mtb_observe) {
      c->run_mtb = false;
      if (vm->tm) /* a machine with a memory system (exec_tm.c) */
        run_block_tm(vm);
      else
        run_block(vm);
    } else {
      /* The MTB: its branch packets from the blocks and compiled code
       * (NONSEQ); an entry packet's source is the return address the
       * entry stacks (cpu.entry_return, exception.c). */
      c->run_mtb = true;
      if (vm->tm)
        run_block_tm(vm);
      else
        run_block(vm);
    }
  }
}

int vm_cpu_step(struct sonde_vm *vm)
{
  vm_timing_setup(vm);
  if (needs_service(vm)) {
    vm->cpu.ls_pipe = false;
    if (vm_sys_service(vm))
      return 0;
    if (vm->cpu.sleeping || vm->cpu.locked_up)
      return 0;
  }
  if (vm->hooked || vm->tm)
    step_one(vm, true);
  else
    step_one(vm, false);
  return 0;
}

void vm_cpu_code_written(struct sonde_vm *vm, uint32_t addr, unsigned size)
{
  if (!vm)
    return;
  /* A 32-bit instruction starting 2 bytes earlier covers addr too. */
  uint32_t first = (addr & ~1u) - 2;
  unsigned n = (size + (addr & 1) + 1) / 2 + 1;
  for (unsigned i = 0; i < n; i++) {
    uint32_t a = first + 2 * i;
    struct vm_icache_entry *e = &vm->cpu.icache[(a >> 1) & (VM_ICACHE_SIZE - 1)];
    if (e->tag == (a | 1))
      e->tag = 0;
  }
  vm_blocks_code_written(vm, first, 2 * n);
  if (vm->tm) /* the model's memoized runs read code (tm_memo.c) */
    vm_tm_memo_code_written(vm->tm, first, 2 * n);
}

void vm_cpu_flush_decode_cache(struct sonde_vm *vm)
{
  for (unsigned i = 0; i < VM_ICACHE_SIZE; i++)
    vm->cpu.icache[i].tag = 0;
  vm_blocks_flush(vm);
  if (vm->tm)
    vm_tm_memo_code_written(vm->tm, 0, UINT32_MAX);
}

const struct vm_icache_entry *vm_cpu_decoded(struct sonde_vm *vm, uint32_t pc)
{
  struct vm_icache_entry *e = &vm->cpu.icache[(pc >> 1) & (VM_ICACHE_SIZE - 1)];
  if (e->tag != (pc | 1) && !icache_fill(vm, pc, e))
    return NULL;
  return e;
}
