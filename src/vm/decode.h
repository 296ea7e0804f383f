/* Thumb/Thumb-2 decoder of the virtual Cortex-M: a pure function from an
 * encoding (and the core's feature set) to an intermediate form that exec.c
 * runs and the decode cache keeps per PC.
 *
 * Encodings follow the ARMv7-M ARM (DDI 0403E) chapter A5 "The Thumb
 * Instruction Set Encoding" (A5.2 16-bit, A5.3 32-bit) and the ARMv6-M ARM
 * (DDI 0419) A5 for the Cortex-M0+ subset; ARMv8-M Mainline additions
 * (load-acquire/store-release, TT) follow DDI 0553 C2.4. */
#ifndef SONDE_VM_DECODE_H
#define SONDE_VM_DECODE_H

#include <stdbool.h>
#include <stdint.h>

/* Operations. Names follow the ARM ARM; "I" = immediate operand, "R" =
 * register with an immediate shift, "RSR" = register shifted by register. */
enum vm_op {
  VM_OP_UNDEF = 0, /* UsageFault UNDEFINSTR */
  VM_OP_NOCP,      /* coprocessor other than 10/11: UsageFault NOCP */
  VM_OP_DP_I,      /* sub = alu op; operand2 = imm (carry in flags) */
  VM_OP_DP_R,      /* sub = alu op; operand2 = shift(rm, sh_type, sh_n) */
  VM_OP_DP_RSR,    /* rd = shift(rn, sh_type, rm[7:0]) (LSL/LSR/ASR/ROR by register) */
  VM_OP_ADR,       /* rd = Align(PC,4) + (int32)imm */
  VM_OP_MOVT,      /* rd[31:16] = imm */
  VM_OP_MUL, VM_OP_MLA, VM_OP_MLS,
  VM_OP_UMULL, VM_OP_SMULL, VM_OP_UMLAL, VM_OP_SMLAL, /* rd=RdLo, ra=RdHi */
  VM_OP_SDIV, VM_OP_UDIV,
  VM_OP_SSAT, VM_OP_USAT,      /* imm = saturate bits; shift in sh_type/sh_n */
  VM_OP_SBFX, VM_OP_UBFX,      /* sh_n = lsb, imm = width */
  VM_OP_BFI, VM_OP_BFC,        /* sh_n = lsb, imm = msb */
  VM_OP_CLZ, VM_OP_RBIT, VM_OP_REV, VM_OP_REV16, VM_OP_REVSH,
  VM_OP_EXT,       /* sub = VM_EXT_*; rn = 15 for no accumulate; sh_n = rotation */
  VM_OP_LD,        /* sub = VM_SZ_* | VM_SZ_SIGNED; flags P/U/W; rm != 0xff: register offset */
  VM_OP_ST,
  VM_OP_LDM, VM_OP_STM,        /* imm = register list; flags W; sub 0 = IA, 1 = DB */
  VM_OP_LDRD, VM_OP_STRD,      /* rd = Rt, ra = Rt2 */
  VM_OP_LDREX, VM_OP_STREX,    /* sub = size; STREX: ra = status register */
  VM_OP_LDA, VM_OP_STL,        /* v8-M acquire/release (sub = size) */
  VM_OP_LDAEX, VM_OP_STLEX,
  VM_OP_CLREX,
  VM_OP_TBB, VM_OP_TBH,
  VM_OP_B,         /* cond in `cond` (14 = always); imm = offset */
  VM_OP_BL,        /* imm = offset */
  VM_OP_BX, VM_OP_BLX,
  VM_OP_CBZ, VM_OP_CBNZ,
  VM_OP_MRS, VM_OP_MSR,        /* imm = SYSm; MSR: sub = mask */
  VM_OP_CPS,                   /* sub bit0 = disable, imm: bit0 I, bit1 F */
  VM_OP_HINT,                  /* sub = VM_HINT_* */
  VM_OP_BARRIER,               /* sub: 0 DSB, 1 DMB, 2 ISB */
  VM_OP_SVC, VM_OP_BKPT, VM_OP_UDF,
  VM_OP_IT,                    /* imm = firstcond:mask */
  VM_OP_DSP, VM_OP_FP,         /* routed to exec_dsp.c / exec_fp.c with `raw` */
  VM_OP_TT,
  /* After decoding, VM_OP_DP_I/VM_OP_DP_R become one op per ALU operation
   * (VM_OP_DPI0 + alu, VM_OP_DPR0 + alu) so execution dispatches once. */
  VM_OP_DPI0 = 64,
  VM_OP_DPR0 = 80,
  VM_OP_COUNT = 96
};

/* ALU operations of VM_OP_DP_*. */
enum vm_alu {
  VM_ALU_AND, VM_ALU_EOR, VM_ALU_ORR, VM_ALU_ORN, VM_ALU_BIC, VM_ALU_MOV, VM_ALU_MVN,
  VM_ALU_TST, VM_ALU_TEQ, VM_ALU_ADD, VM_ALU_ADC, VM_ALU_SUB, VM_ALU_SBC, VM_ALU_RSB,
  VM_ALU_CMP, VM_ALU_CMN,
};

enum vm_shift { VM_SH_LSL, VM_SH_LSR, VM_SH_ASR, VM_SH_ROR, VM_SH_RRX };

enum { VM_SZ_B = 1, VM_SZ_H = 2, VM_SZ_W = 4, VM_SZ_SIGNED = 8, VM_SZ_UNPRIV = 16 };
enum { VM_EXT_SXTB, VM_EXT_SXTH, VM_EXT_UXTB, VM_EXT_UXTH };
enum { VM_HINT_NOP, VM_HINT_YIELD, VM_HINT_WFE, VM_HINT_WFI, VM_HINT_SEV };

/* flags */
enum {
  VM_F_S = 1u << 0,        /* set flags */
  VM_F_S_NOTIT = 1u << 1,  /* set flags only outside an IT block (16-bit encodings) */
  VM_F_IMMC = 1u << 2,     /* the immediate defines the carry out (ThumbExpandImm_C) */
  VM_F_IMMC_1 = 1u << 3,   /* ... and that carry is 1 */
  VM_F_P = 1u << 4,        /* index (offset applied before the access) */
  VM_F_U = 1u << 5,        /* add the offset */
  VM_F_W = 1u << 6,        /* write back the base */
  VM_F_LIT = 1u << 7,      /* PC-relative literal: base = Align(PC,4) */
};

#define VM_NOREG 0xffu

/* One decoded instruction (20 bytes). */
struct vm_insn {
  uint8_t op;     /* enum vm_op */
  uint8_t len;    /* 2 or 4 bytes */
  uint8_t sub;    /* op-specific (alu op, size, ...) */
  uint8_t flags;  /* VM_F_* */
  uint8_t rd, rn, rm, ra;
  uint8_t sh_type, sh_n;
  uint8_t cond;   /* VM_OP_B only */
  uint8_t ls_cycles; /* 0 from the decoder; in a block (block.c), a load/store's
                      * cycles before wait states when its predecessor is known */
  uint32_t imm;
  uint32_t raw;   /* the encoding: hw1 for 16-bit, (hw1 << 16) | hw2 for 32-bit */
};

/* Feature set the decoder honours (struct sonde_vm's gates). */
struct vm_decode_features {
  bool v7m, dsp, fpu, v8m;
};

/* ITAdvance (A7.3.2): the ITSTATE after an instruction of an IT block. */
static inline uint8_t vm_it_advance(uint8_t it)
{
  if ((it & 7) == 0)
    return 0;
  return (uint8_t)((it & 0xe0) | ((it << 1) & 0x1f));
}

/* True when hw1 starts a 32-bit encoding (A5.1). */
static inline bool vm_thumb_is32(uint16_t hw1)
{
  return (hw1 >> 11) >= 0x1d;
}

/* Decode one instruction. hw2 is ignored for 16-bit encodings. Never fails:
 * unknown or gated encodings decode to VM_OP_UNDEF (or VM_OP_NOCP). */
void vm_decode(const struct vm_decode_features *f, uint16_t hw1, uint16_t hw2,
               struct vm_insn *out);

#endif
