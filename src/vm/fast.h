/* The handlers of the fast executor (exec.c, exec_threaded.h): each decoded
 * instruction is classified once into one of these (the decode cache entry's
 * `fast`), and the block builder (block.c) reads them to find where blocks
 * end and bound their cycles. */
#ifndef SONDE_VM_FAST_H
#define SONDE_VM_FAST_H

#include <stdbool.h>

#include "decode.h"

#define COND_LIST(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)

#define ALU_LIST(X)                                                                    \
  X(AND) X(EOR) X(ORR) X(ORN) X(BIC) X(MOV) X(MVN) X(TST) X(TEQ) X(ADD) X(ADC) X(SUB)  \
  X(SBC) X(RSB) X(CMP) X(CMN)

enum vm_fast {
  VM_FAST_SLOW = 0,
  VM_FAST_DP = 1, /* + 32 * operand kind (fast_dp) + 2 * alu + setflags: 96 handlers */
  VM_FAST_LD = 97, VM_FAST_ST, VM_FAST_B, VM_FAST_BL, VM_FAST_BX,
  VM_FAST_CBZ, VM_FAST_CBNZ, VM_FAST_LDM, VM_FAST_STM, VM_FAST_MUL, VM_FAST_MLA,
  VM_FAST_MLS, VM_FAST_SBFX, VM_FAST_UBFX, VM_FAST_EXT, VM_FAST_ADR, VM_FAST_MOVT,
  VM_FAST_BCOND, /* + condition (0..13): B<c>, one handler each */
  /* LDR{,H,SH,B,SB}/STR{,H,B} Rt, [Rn, #+-imm]{!} and [Rn], #+-imm:
   * + 8 * addressing mode (offset, pre-indexed, post-indexed) + form */
  VM_FAST_LDST = VM_FAST_BCOND + 14,
  /* block.c: the entry after a block cut at its length limit */
  VM_FAST_BLKEND = VM_FAST_LDST + 24,
  /* block.c: a block's first entry when the block is compiled (jit.h) */
  VM_FAST_JIT,
  /* IT: every executor runs it through exec_insn (label `slow`), but a
   * block may go on past it and its instructions for the compiler (block.c) */
  VM_FAST_IT,
};
/* The APSR's N, Z, C and V as the fast executor (and the JIT) keep them:
 * N is bit 31 of n, Z is set when z is 0, C is c (0 or 1), V is bit 31 of v
 * (exec.c: lflags_pack/lflags_unpack/lflags_pass). */
struct vm_lflags {
  uint32_t n, z, c, v;
};

enum { VM_LDST_OFF, VM_LDST_PRE, VM_LDST_POST };
enum { VM_LDST_LDR_W, VM_LDST_LDR_H, VM_LDST_LDR_SH, VM_LDST_LDR_B, VM_LDST_LDR_SB,
       VM_LDST_STR_W, VM_LDST_STR_H, VM_LDST_STR_B };

/* B, B<c>, BL, CBZ, CBNZ: a branch to a fixed target (the decode-cache
 * entry holds it and its cycles when taken). */
static inline bool vm_fast_direct_branch(unsigned fast)
{
  return fast == VM_FAST_B || fast == VM_FAST_BL || fast == VM_FAST_CBZ ||
         fast == VM_FAST_CBNZ || (fast >= VM_FAST_BCOND && fast < VM_FAST_BCOND + 14);
}

/* A single load or store: its cycles depend on the instruction before it
 * (vm_fast_ls_cycles). */
static inline bool vm_fast_is_load_store(unsigned fast)
{
  return fast == VM_FAST_LD || fast == VM_FAST_ST ||
         (fast >= VM_FAST_LDST && fast < VM_FAST_LDST + 24);
}

/* The load/store pipelining state (exec.c: cpu.ls_pipe, cpu.ls_rt) after the
 * fast handler `fast` ran `in`, as its RETIRE leaves it (exec_threaded.h). */
static inline void vm_fast_ls_after(unsigned fast, const struct vm_insn *in, bool ls_pipeline,
                                    bool *lsp, uint8_t *lsrt)
{
  *lsp = false;
  *lsrt = VM_NOREG;
  if (fast >= VM_FAST_LDST && fast < VM_FAST_LDST + 24) {
    *lsp = ls_pipeline;
    if ((fast - VM_FAST_LDST) % 8 < VM_LDST_STR_W)
      *lsrt = in->rd;
  } else if (fast == VM_FAST_LD) {
    *lsp = ls_pipeline;
    *lsrt = in->rd;
  } else if (fast == VM_FAST_ST) {
    *lsp = ls_pipeline && in->rm == VM_NOREG;
  }
}

/* A single load/store's cycles before wait states (exec_insn's rule): 1 when
 * it pipelines behind the previous load/store and does not use the register
 * that one loaded as its address, else 2. */
static inline unsigned vm_fast_ls_cycles(bool lsp, uint8_t lsrt, const struct vm_insn *in)
{
  return (lsp && (lsrt == VM_NOREG || (lsrt != in->rn && lsrt != in->rm))) ? 1 : 2;
}

/* B<c>, CBZ, CBNZ: a direct branch that may fall through. */
static inline bool vm_fast_conditional(unsigned fast)
{
  return fast == VM_FAST_CBZ || fast == VM_FAST_CBNZ ||
         (fast >= VM_FAST_BCOND && fast < VM_FAST_BCOND + 14);
}

/* Whether a handler may leave the straight line. */
static inline bool vm_fast_branches(unsigned fast, const struct vm_insn *in)
{
  return vm_fast_direct_branch(fast) || fast == VM_FAST_BX ||
         (fast == VM_FAST_LDM && (in->imm & 0x8000));
}

/* Whether an instruction ends a block: every branch but a conditional one,
 * whose block goes on with the instructions it falls through to (a taken
 * branch leaves from the middle). */
static inline bool vm_fast_ends_block(unsigned fast, const struct vm_insn *in)
{
  return vm_fast_branches(fast, in) && !vm_fast_conditional(fast);
}

/* The number of instructions in the IT block an IT with imm (firstcond:mask)
 * starts: 4 minus the trailing zeros of the mask. */
static inline unsigned vm_it_length(uint32_t imm)
{
  return 4u - (unsigned)__builtin_ctz(imm & 0xf);
}

/* Whether an instruction inside an IT block may stay in a block for the
 * compiler (jit.h): one cycle whether or not its condition passes, no
 * memory access, no branch (data processing, extends, bit fields, ADR,
 * MOVT). */
static inline bool vm_fast_in_it_block(unsigned fast)
{
  return (fast >= VM_FAST_DP && fast < VM_FAST_LD) || fast == VM_FAST_SBFX ||
         fast == VM_FAST_UBFX || fast == VM_FAST_EXT || fast == VM_FAST_ADR ||
         fast == VM_FAST_MOVT;
}

#endif
