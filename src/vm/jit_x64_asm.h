/* An x86-64 instruction encoder for the block compiler (jit_x64.c): the
 * few forms it emits, each as a function that appends its bytes (Intel SDM
 * vol. 2: REX prefixes, ModRM/SIB addressing, group-1 ALU and group-2 shift
 * opcodes, Jcc/JMP rel32). Forward jumps return where their rel32 is, to
 * patch() once the target is known. Writing past `end` sets `full` and
 * writes nothing: the caller then drops what it was compiling. Not a
 * standalone header: included by jit_x64.c only. */
#ifndef SONDE_VM_JIT_X64_ASM_H
#define SONDE_VM_JIT_X64_ASM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* where code is being written */
struct jit_asm {
  uint8_t *p, *end;
  bool full;
};

/* host registers */
enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 };
/* condition codes */
enum { CC_O = 0, CC_NO, CC_B, CC_AE, CC_E, CC_NE, CC_BE, CC_A, CC_S, CC_NS,
       CC_L = 12, CC_GE, CC_LE, CC_G };
/* group-1 ALU opcodes (op r/m, reg) and their /digit with an immediate */
enum { ALU_ADD = 0, ALU_OR = 1, ALU_AND = 4, ALU_SUB = 5, ALU_XOR = 6, ALU_CMP = 7 };
/* group-2 shifts (/digit) */
enum { SH_ROL = 0, SH_ROR = 1, SH_SHL = 4, SH_SHR = 5, SH_SAR = 7 };

static inline void b1(struct jit_asm *e, unsigned v)
{
  if (e->p < e->end)
    *e->p++ = (uint8_t)v;
  else
    e->full = true;
}

static inline void b4(struct jit_asm *e, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    b1(e, (v >> (8 * i)) & 0xff);
}

static inline void b8(struct jit_asm *e, uint64_t v)
{
  b4(e, (uint32_t)v);
  b4(e, (uint32_t)(v >> 32));
}

/* REX with W and the high bits of reg, index and base; left out when empty */
static inline void rex(struct jit_asm *e, bool w, unsigned reg, unsigned index, unsigned base)
{
  unsigned r = 0x40 | (w ? 8 : 0) | ((reg >> 3) & 1) << 2 | ((index >> 3) & 1) << 1 |
               ((base >> 3) & 1);
  if (r != 0x40)
    b1(e, r);
}

/* ModRM (+SIB, displacement) for [base + disp] */
static inline void mem(struct jit_asm *e, unsigned reg, unsigned base, int32_t disp)
{
  unsigned mod = (disp == 0 && (base & 7) != RBP) ? 0 : (disp >= -128 && disp <= 127) ? 1 : 2;
  b1(e, mod << 6 | (reg & 7) << 3 | (base & 7));
  if ((base & 7) == RSP)
    b1(e, 0x24);
  if (mod == 1)
    b1(e, (uint8_t)disp);
  else if (mod == 2)
    b4(e, (uint32_t)disp);
}

/* ModRM + SIB for [base + index] (index is not rsp) */
static inline void mem_bi(struct jit_asm *e, unsigned reg, unsigned base, unsigned index)
{
  if ((base & 7) == RBP) {
    b1(e, 0x44 | (reg & 7) << 3);
    b1(e, (index & 7) << 3 | (base & 7));
    b1(e, 0);
  } else {
    b1(e, 0x04 | (reg & 7) << 3);
    b1(e, (index & 7) << 3 | (base & 7));
  }
}

/* op reg, [base + disp] (or op [base + disp], reg: by the opcode) */
static inline void op_m(struct jit_asm *e, bool w, unsigned opc, unsigned reg, unsigned base, int32_t disp)
{
  rex(e, w, reg, 0, base);
  if (opc > 0xff)
    b1(e, opc >> 8);
  b1(e, opc & 0xff);
  mem(e, reg, base, disp);
}

/* op reg, [base + index + disp8] (index is not rsp) */
static inline void op_mbi(struct jit_asm *e, bool w, unsigned opc, unsigned reg, unsigned base,
                          unsigned index, int8_t disp)
{
  rex(e, w, reg, index, base);
  if (opc > 0xff)
    b1(e, opc >> 8);
  b1(e, opc & 0xff);
  b1(e, 0x44 | (reg & 7) << 3);
  b1(e, (index & 7) << 3 | (base & 7));
  b1(e, (uint8_t)disp);
}

/* op rm, reg (register form) */
static inline void op_r(struct jit_asm *e, bool w, unsigned opc, unsigned reg, unsigned rm)
{
  rex(e, w, reg, 0, rm);
  if (opc > 0xff)
    b1(e, opc >> 8);
  b1(e, opc & 0xff);
  b1(e, 0xc0 | (reg & 7) << 3 | (rm & 7));
}

static inline void load32(struct jit_asm *e, unsigned r, unsigned base, int32_t d) { op_m(e, false, 0x8b, r, base, d); }
static inline void store32(struct jit_asm *e, unsigned base, int32_t d, unsigned r) { op_m(e, false, 0x89, r, base, d); }
static inline void load64(struct jit_asm *e, unsigned r, unsigned base, int32_t d) { op_m(e, true, 0x8b, r, base, d); }
static inline void store64(struct jit_asm *e, unsigned base, int32_t d, unsigned r) { op_m(e, true, 0x89, r, base, d); }
static inline void mov_rr(struct jit_asm *e, unsigned dst, unsigned src) { op_r(e, false, 0x89, src, dst); }
static inline void mov64_rr(struct jit_asm *e, unsigned dst, unsigned src) { op_r(e, true, 0x89, src, dst); }

static inline void mov_ri(struct jit_asm *e, unsigned r, uint32_t v)
{
  if (v == 0) { /* xor r, r */
    op_r(e, false, 0x31, r, r);
    return;
  }
  rex(e, false, 0, 0, r);
  b1(e, 0xb8 + (r & 7));
  b4(e, v);
}

static inline void mov64_ri(struct jit_asm *e, unsigned r, uint64_t v)
{
  rex(e, true, 0, 0, r);
  b1(e, 0xb8 + (r & 7));
  b8(e, v);
}

/* mov dword [base + d], imm32 */
static inline void store32_i(struct jit_asm *e, unsigned base, int32_t d, uint32_t v)
{
  op_m(e, false, 0xc7, 0, base, d);
  b4(e, v);
}

/* ALU r, r (32 or 64 bits): opcode base = 8 * group-1 op + 1 */
static inline void alu_rr(struct jit_asm *e, bool w, unsigned alu, unsigned dst, unsigned src)
{
  op_r(e, w, 8 * alu + 1, src, dst);
}

/* ALU r, imm32 */
static inline void alu_ri(struct jit_asm *e, bool w, unsigned alu, unsigned r, uint32_t imm)
{
  if ((int32_t)imm >= -128 && (int32_t)imm <= 127) {
    op_r(e, w, 0x83, alu, r);
    b1(e, imm & 0xff);
  } else {
    op_r(e, w, 0x81, alu, r);
    b4(e, imm);
  }
}

/* ALU r, [base + d] */
static inline void alu_rm(struct jit_asm *e, unsigned alu, unsigned r, unsigned base, int32_t d)
{
  op_m(e, false, 8 * alu + 3, r, base, d);
}

/* cmp dword [base + d], imm8 */
static inline void cmp_mi8(struct jit_asm *e, unsigned base, int32_t d, int8_t imm)
{
  op_m(e, false, 0x83, ALU_CMP, base, d);
  b1(e, (uint8_t)imm);
}

static inline void shift_ri(struct jit_asm *e, bool w, unsigned sh, unsigned r, unsigned n)
{
  op_r(e, w, 0xc1, sh, r);
  b1(e, n);
}

static inline void not_r(struct jit_asm *e, unsigned r) { op_r(e, false, 0xf7, 2, r); }
static inline void test_rr(struct jit_asm *e, unsigned a, unsigned b) { op_r(e, false, 0x85, b, a); }
/* test r64, r64: for host pointers (a non-NULL one may have a zero low half) */
/* jmp r64 */
static inline void jmp_r(struct jit_asm *e, unsigned r) { op_r(e, false, 0xff, 4, r); }
static inline void test64_rr(struct jit_asm *e, unsigned a, unsigned b) { op_r(e, true, 0x85, b, a); }

/* setcc r8 (al, cl, dl or bl only: no REX) */
static inline void setcc(struct jit_asm *e, unsigned cc, unsigned r)
{
  b1(e, 0x0f);
  b1(e, 0x90 + cc);
  b1(e, 0xc0 | (r & 7));
}


/* add r64, imm (nothing for 0) */
static inline void add64_i(struct jit_asm *e, unsigned r, uint32_t v)
{
  if (v)
    alu_ri(e, true, ALU_ADD, r, v);
}

/* jcc rel32 / jmp rel32 to be patched, or to a known place */
static inline uint8_t *jcc_fwd(struct jit_asm *e, unsigned cc)
{
  b1(e, 0x0f);
  b1(e, 0x80 + cc);
  uint8_t *at = e->p;
  b4(e, 0);
  return at;
}

static inline uint8_t *jmp_fwd(struct jit_asm *e)
{
  b1(e, 0xe9);
  uint8_t *at = e->p;
  b4(e, 0);
  return at;
}

static inline void patch(struct jit_asm *e, uint8_t *at, const uint8_t *to)
{
  if (e->full || !at || at + 4 > e->end)
    return;
  int32_t rel = (int32_t)(to - (at + 4));
  memcpy(at, &rel, 4);
}

static inline void jmp_to(struct jit_asm *e, const uint8_t *to) { patch(e, jmp_fwd(e), to); }

#endif
