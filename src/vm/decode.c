/* Thumb/Thumb-2 decoder (decode.h): ARMv7-M ARM A5.2 (16-bit) and A5.3
 * (32-bit) encoding tables, with the ARMv6-M subset (DDI 0419 A5.2/A5.3), the
 * ARMv7E-M DSP extension routed to exec_dsp.c, coprocessor 10/11 routed to
 * exec_fp.c, and ARMv8-M Mainline load-acquire/store-release and TT
 * (DDI 0553 C2.4). Section numbers in comments refer to DDI 0403E. */
#include "decode.h"

#include <string.h>

#define BITS(x, hi, lo) (((x) >> (lo)) & ((1u << ((hi) - (lo) + 1)) - 1))
#define BIT(x, n) (((x) >> (n)) & 1u)

static uint32_t sign_extend(uint32_t v, unsigned bits)
{
  uint32_t m = 1u << (bits - 1);
  return (v ^ m) - m;
}

static void set_undef(struct vm_insn *d)
{
  uint8_t len = d->len;
  uint32_t raw = d->raw;
  memset(d, 0, sizeof *d);
  d->op = VM_OP_UNDEF;
  d->len = len;
  d->raw = raw;
}

/* DecodeImmShift, A7.4.2. */
static void imm_shift(struct vm_insn *d, unsigned type, unsigned imm5)
{
  switch (type) {
  case 0: d->sh_type = VM_SH_LSL; d->sh_n = (uint8_t)imm5; break;
  case 1: d->sh_type = VM_SH_LSR; d->sh_n = (uint8_t)(imm5 ? imm5 : 32); break;
  case 2: d->sh_type = VM_SH_ASR; d->sh_n = (uint8_t)(imm5 ? imm5 : 32); break;
  default:
    if (imm5) { d->sh_type = VM_SH_ROR; d->sh_n = (uint8_t)imm5; }
    else { d->sh_type = VM_SH_RRX; d->sh_n = 1; }
    break;
  }
}

/* ThumbExpandImm_C, A5.3.2. */
static void thumb_expand_imm(struct vm_insn *d, uint32_t imm12)
{
  uint32_t v = imm12 & 0xff;
  if (BITS(imm12, 11, 10) == 0) {
    switch (BITS(imm12, 9, 8)) {
    case 0: break;
    case 1: v = v | v << 16; break;
    case 2: v = v << 8 | v << 24; break;
    default: v = v | v << 8 | v << 16 | v << 24; break;
    }
    d->imm = v;
    return;
  }
  uint32_t unrot = 0x80 | (imm12 & 0x7f);
  unsigned rot = BITS(imm12, 11, 7);
  v = (unrot >> rot) | (unrot << (32 - rot));
  d->imm = v;
  d->flags |= VM_F_IMMC | ((v >> 31) ? VM_F_IMMC_1 : 0);
}

/* ---- 16-bit, A5.2 ------------------------------------------------------- */

static void dec16(const struct vm_decode_features *f, uint16_t h, struct vm_insn *d)
{
  unsigned op6 = h >> 10;
  d->len = 2;
  if (op6 < 0x10) { /* 00xxxx: shift (immediate), add, subtract, move, compare */
    unsigned opc = BITS(h, 13, 9);
    d->rd = (uint8_t)BITS(h, 2, 0);
    d->rm = (uint8_t)BITS(h, 5, 3);
    if (opc < 0xc) { /* LSL/LSR/ASR (immediate) == MOV with a shifted register */
      d->op = VM_OP_DP_R;
      d->sub = VM_ALU_MOV;
      d->rn = VM_NOREG;
      d->flags = VM_F_S_NOTIT;
      imm_shift(d, opc >> 2, BITS(h, 10, 6));
      return;
    }
    d->flags = VM_F_S_NOTIT;
    d->rn = (uint8_t)BITS(h, 5, 3);
    switch (opc) {
    case 0xc: case 0xd: /* ADD/SUB register */
      d->op = VM_OP_DP_R;
      d->sub = opc == 0xc ? VM_ALU_ADD : VM_ALU_SUB;
      d->rm = (uint8_t)BITS(h, 8, 6);
      return;
    case 0xe: case 0xf: /* ADD/SUB imm3 */
      d->op = VM_OP_DP_I;
      d->sub = opc == 0xe ? VM_ALU_ADD : VM_ALU_SUB;
      d->imm = BITS(h, 8, 6);
      return;
    }
    d->rd = d->rn = (uint8_t)BITS(h, 10, 8);
    d->imm = h & 0xff;
    d->op = VM_OP_DP_I;
    switch (opc >> 2) {
    case 4: d->sub = VM_ALU_MOV; d->rn = VM_NOREG; break;
    case 5: d->sub = VM_ALU_CMP; d->flags = VM_F_S; break;
    case 6: d->sub = VM_ALU_ADD; break;
    default: d->sub = VM_ALU_SUB; break;
    }
    return;
  }
  if (op6 == 0x10) { /* data processing, A5.2.2 */
    unsigned opc = BITS(h, 9, 6);
    unsigned rdn = BITS(h, 2, 0), rm = BITS(h, 5, 3);
    d->rd = d->rn = (uint8_t)rdn;
    d->rm = (uint8_t)rm;
    d->flags = VM_F_S_NOTIT;
    d->op = VM_OP_DP_R;
    d->sh_type = VM_SH_LSL;
    switch (opc) {
    case 0: d->sub = VM_ALU_AND; break;
    case 1: d->sub = VM_ALU_EOR; break;
    case 2: case 3: case 4: case 7: /* LSL/LSR/ASR/ROR (register) */
      d->op = VM_OP_DP_RSR;
      d->sh_type = opc == 2 ? VM_SH_LSL : opc == 3 ? VM_SH_LSR : opc == 4 ? VM_SH_ASR : VM_SH_ROR;
      d->rn = (uint8_t)rdn;
      d->rm = (uint8_t)rm;
      break;
    case 5: d->sub = VM_ALU_ADC; break;
    case 6: d->sub = VM_ALU_SBC; break;
    case 8: d->sub = VM_ALU_TST; d->flags = VM_F_S; break;
    case 9: /* RSB #0 */
      d->op = VM_OP_DP_I; d->sub = VM_ALU_RSB; d->rn = (uint8_t)rm; d->imm = 0; break;
    case 10: d->sub = VM_ALU_CMP; d->flags = VM_F_S; break;
    case 11: d->sub = VM_ALU_CMN; d->flags = VM_F_S; break;
    case 12: d->sub = VM_ALU_ORR; break;
    case 13: /* MUL Rdm, Rn, Rdm */
      d->op = VM_OP_MUL; d->rn = (uint8_t)rm; d->rm = (uint8_t)rdn; break;
    case 14: d->sub = VM_ALU_BIC; break;
    default: d->sub = VM_ALU_MVN; d->rn = VM_NOREG; break;
    }
    return;
  }
  if (op6 == 0x11) { /* special data processing, branch and exchange, A5.2.3 */
    unsigned opc = BITS(h, 9, 6);
    unsigned rdn = BITS(h, 2, 0) | (BIT(h, 7) << 3), rm = BITS(h, 6, 3);
    d->sh_type = VM_SH_LSL;
    if (opc < 4) { /* ADD (register) T2 */
      d->op = VM_OP_DP_R; d->sub = VM_ALU_ADD;
      d->rd = d->rn = (uint8_t)rdn; d->rm = (uint8_t)rm;
      return;
    }
    if (opc == 4) { set_undef(d); return; }
    if (opc < 8) { /* CMP (register) T2 */
      d->op = VM_OP_DP_R; d->sub = VM_ALU_CMP; d->flags = VM_F_S;
      d->rn = (uint8_t)rdn; d->rm = (uint8_t)rm;
      return;
    }
    if (opc < 12) { /* MOV (register) T1 */
      d->op = VM_OP_DP_R; d->sub = VM_ALU_MOV; d->rn = VM_NOREG;
      d->rd = (uint8_t)rdn; d->rm = (uint8_t)rm;
      return;
    }
    if (BITS(h, 2, 0)) { set_undef(d); return; }
    d->op = opc < 14 ? VM_OP_BX : VM_OP_BLX;
    d->rm = (uint8_t)rm;
    if (d->op == VM_OP_BLX && rm == 15) set_undef(d);
    return;
  }
  if ((op6 & 0x3e) == 0x12) { /* LDR (literal) */
    d->op = VM_OP_LD; d->sub = VM_SZ_W; d->rd = (uint8_t)BITS(h, 10, 8); d->rn = 15;
    d->rm = VM_NOREG; d->imm = (h & 0xff) * 4; d->flags = VM_F_P | VM_F_U | VM_F_LIT;
    return;
  }
  if ((op6 & 0x3c) == 0x14) { /* load/store register offset, A5.2.4 */
    static const uint8_t sz[8] = {VM_SZ_W, VM_SZ_H, VM_SZ_B, VM_SZ_B | VM_SZ_SIGNED,
                                  VM_SZ_W, VM_SZ_H, VM_SZ_B, VM_SZ_H | VM_SZ_SIGNED};
    unsigned opb = BITS(h, 11, 9);
    d->op = opb < 3 ? VM_OP_ST : VM_OP_LD;
    d->sub = sz[opb];
    d->rd = (uint8_t)BITS(h, 2, 0); d->rn = (uint8_t)BITS(h, 5, 3); d->rm = (uint8_t)BITS(h, 8, 6);
    d->flags = VM_F_P | VM_F_U;
    return;
  }
  if (op6 >= 0x18 && op6 < 0x24) { /* load/store immediate: word, byte, halfword */
    unsigned l = BIT(h, 11), imm5 = BITS(h, 10, 6);
    d->op = l ? VM_OP_LD : VM_OP_ST;
    d->rd = (uint8_t)BITS(h, 2, 0); d->rn = (uint8_t)BITS(h, 5, 3); d->rm = VM_NOREG;
    d->flags = VM_F_P | VM_F_U;
    if (op6 < 0x1c) { d->sub = VM_SZ_W; d->imm = imm5 * 4; }
    else if (op6 < 0x20) { d->sub = VM_SZ_B; d->imm = imm5; }
    else { d->sub = VM_SZ_H; d->imm = imm5 * 2; }
    return;
  }
  if (op6 >= 0x24 && op6 < 0x28) { /* SP-relative load/store */
    d->op = BIT(h, 11) ? VM_OP_LD : VM_OP_ST;
    d->sub = VM_SZ_W; d->rd = (uint8_t)BITS(h, 10, 8); d->rn = 13; d->rm = VM_NOREG;
    d->imm = (h & 0xff) * 4; d->flags = VM_F_P | VM_F_U;
    return;
  }
  if ((op6 & 0x3e) == 0x28) { /* ADR */
    d->op = VM_OP_ADR; d->rd = (uint8_t)BITS(h, 10, 8); d->imm = (h & 0xff) * 4;
    return;
  }
  if ((op6 & 0x3e) == 0x2a) { /* ADD (SP plus immediate) T1 */
    d->op = VM_OP_DP_I; d->sub = VM_ALU_ADD; d->rd = (uint8_t)BITS(h, 10, 8); d->rn = 13;
    d->imm = (h & 0xff) * 4;
    return;
  }
  if ((op6 & 0x3c) == 0x2c) { /* miscellaneous, A5.2.5 */
    unsigned o = BITS(h, 11, 5);
    if ((o & 0x7c) == 0x00 || (o & 0x7c) == 0x04) { /* ADD/SUB SP, SP, #imm7*4 */
      d->op = VM_OP_DP_I; d->sub = (o & 4) ? VM_ALU_SUB : VM_ALU_ADD; d->rd = d->rn = 13;
      d->imm = (h & 0x7f) * 4;
      return;
    }
    if ((o & 0x28) == 0x08) { /* CBZ/CBNZ: 1011 o0i1 */
      if (!f->v7m) { set_undef(d); return; }
      d->op = BIT(h, 11) ? VM_OP_CBNZ : VM_OP_CBZ;
      d->rn = (uint8_t)BITS(h, 2, 0);
      d->imm = (BIT(h, 9) << 6) | (BITS(h, 7, 3) << 1);
      return;
    }
    if ((o & 0x78) == 0x10) { /* SXTH SXTB UXTH UXTB */
      static const uint8_t k[4] = {VM_EXT_SXTH, VM_EXT_SXTB, VM_EXT_UXTH, VM_EXT_UXTB};
      d->op = VM_OP_EXT; d->sub = k[BITS(h, 7, 6)]; d->rd = (uint8_t)BITS(h, 2, 0);
      d->rm = (uint8_t)BITS(h, 5, 3); d->rn = 15; d->sh_n = 0;
      return;
    }
    if ((o & 0x70) == 0x20) { /* PUSH */
      d->op = VM_OP_STM; d->sub = 1; d->rn = 13; d->flags = VM_F_W;
      d->imm = (h & 0xff) | (BIT(h, 8) << 14);
      if (!d->imm) set_undef(d);
      return;
    }
    if (o == 0x33) { /* CPS */
      if (BIT(h, 3) || BIT(h, 2)) { set_undef(d); return; }
      d->op = VM_OP_CPS; d->sub = (uint8_t)BIT(h, 4); d->imm = BITS(h, 1, 0);
      if (!f->v7m && d->imm != 2) set_undef(d);
      return;
    }
    if ((o & 0x78) == 0x50) { /* REV REV16 (HLT) REVSH */
      unsigned k = BITS(h, 7, 6);
      d->rd = (uint8_t)BITS(h, 2, 0); d->rm = (uint8_t)BITS(h, 5, 3);
      if (k == 0) d->op = VM_OP_REV;
      else if (k == 1) d->op = VM_OP_REV16;
      else if (k == 3) d->op = VM_OP_REVSH;
      else set_undef(d);
      return;
    }
    if ((o & 0x70) == 0x60) { /* POP */
      d->op = VM_OP_LDM; d->sub = 0; d->rn = 13; d->flags = VM_F_W;
      d->imm = (h & 0xff) | (BIT(h, 8) << 15);
      if (!d->imm) set_undef(d);
      return;
    }
    if ((o & 0x78) == 0x70) { /* BKPT */
      d->op = VM_OP_BKPT; d->imm = h & 0xff;
      return;
    }
    if ((o & 0x78) == 0x78) { /* IT, hints */
      if (BITS(h, 3, 0)) {
        unsigned fc = BITS(h, 7, 4);
        if (!f->v7m || fc == 15 || (fc == 14 && __builtin_popcount(h & 0xf) != 1)) {
          set_undef(d);
          return;
        }
        d->op = VM_OP_IT; d->imm = h & 0xff;
        return;
      }
      d->op = VM_OP_HINT;
      unsigned hint = BITS(h, 7, 4);
      d->sub = hint <= 4 ? (uint8_t)hint : VM_HINT_NOP;
      return;
    }
    set_undef(d);
    return;
  }
  if ((op6 & 0x3c) == 0x30) { /* STM / LDM */
    unsigned rn = BITS(h, 10, 8), list = h & 0xff;
    d->rn = (uint8_t)rn; d->imm = list; d->sub = 0;
    if (!list) { set_undef(d); return; }
    if (BIT(h, 11)) {
      d->op = VM_OP_LDM;
      d->flags = (list >> rn) & 1 ? 0 : VM_F_W;
    } else {
      d->op = VM_OP_STM;
      d->flags = VM_F_W;
    }
    return;
  }
  if ((op6 & 0x3c) == 0x34) { /* conditional branch, SVC, UDF */
    unsigned cond = BITS(h, 11, 8);
    if (cond == 14) { d->op = VM_OP_UDF; return; }
    if (cond == 15) { d->op = VM_OP_SVC; d->imm = h & 0xff; return; }
    d->op = VM_OP_B; d->cond = (uint8_t)cond; d->imm = sign_extend((h & 0xff) << 1, 9);
    return;
  }
  if ((op6 & 0x3e) == 0x38) { /* B T2 */
    d->op = VM_OP_B; d->cond = 14; d->imm = sign_extend((h & 0x7ff) << 1, 12);
    return;
  }
  set_undef(d);
}

/* ---- 32-bit, A5.3 ------------------------------------------------------- */

static const uint8_t dp_alu[16] = {
  VM_ALU_AND, VM_ALU_BIC, VM_ALU_ORR, VM_ALU_ORN, VM_ALU_EOR, 0xff, 0xff, 0xff,
  VM_ALU_ADD, 0xff, VM_ALU_ADC, VM_ALU_SBC, 0xff, VM_ALU_SUB, VM_ALU_RSB, 0xff,
};

/* Shared by "data processing (modified immediate)" and "(shifted register)":
 * the TST/TEQ/CMP/CMN, MOV/MVN aliases by Rd/Rn == 1111. Returns false for an
 * unallocated op. */
static bool dp_common(struct vm_insn *d, unsigned op, unsigned s, unsigned rn, unsigned rd)
{
  unsigned alu = dp_alu[op];
  if (alu == 0xff)
    return false;
  d->rd = (uint8_t)rd;
  d->rn = (uint8_t)rn;
  d->flags |= s ? VM_F_S : 0;
  if (rd == 15 && s) {
    if (alu == VM_ALU_AND) alu = VM_ALU_TST;
    else if (alu == VM_ALU_EOR) alu = VM_ALU_TEQ;
    else if (alu == VM_ALU_ADD) alu = VM_ALU_CMN;
    else if (alu == VM_ALU_SUB) alu = VM_ALU_CMP;
  }
  if (rn == 15) {
    if (alu == VM_ALU_ORR) { alu = VM_ALU_MOV; d->rn = VM_NOREG; }
    else if (alu == VM_ALU_ORN) { alu = VM_ALU_MVN; d->rn = VM_NOREG; }
  }
  d->sub = (uint8_t)alu;
  return true;
}

static void dec_ldst_multi(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                           struct vm_insn *d)
{
  unsigned op = BITS(h1, 8, 7), w = BIT(h1, 5), l = BIT(h1, 4), rn = BITS(h1, 3, 0);
  (void)f;
  if (op == 0 || op == 3 || rn == 15) { set_undef(d); return; }
  d->op = l ? VM_OP_LDM : VM_OP_STM;
  d->sub = op == 2; /* DB */
  d->rn = (uint8_t)rn;
  d->imm = h2;
  d->flags = w ? VM_F_W : 0;
  if (l) {
    if (BIT(h2, 13) || (BIT(h2, 15) && BIT(h2, 14)) || __builtin_popcount(h2) < 2) {
      if (__builtin_popcount(h2) == 1 && !BIT(h2, 13)) {
        /* LDM with one register (GCC's POP.W {rX}) is UNPREDICTABLE except
         * when it is the LDR alias; accept it like silicon does */
      } else {
        set_undef(d);
      }
    }
    if (w && BIT(h2, rn)) d->flags &= (uint8_t)~VM_F_W; /* UNPREDICTABLE: no writeback */
  } else {
    if (BIT(h2, 13) || BIT(h2, 15) || !h2) set_undef(d);
  }
}

static void dec_ldst_dual(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                          struct vm_insn *d)
{
  unsigned op1 = BITS(h1, 8, 7), op2 = BITS(h1, 5, 4), op3 = BITS(h2, 7, 4);
  unsigned rn = BITS(h1, 3, 0), rt = BITS(h2, 15, 12), rd = BITS(h2, 11, 8);
  d->rn = (uint8_t)rn;
  d->rd = (uint8_t)rt;
  if (op1 == 0 && op2 == 0) { /* STREX, or TT (v8-M) when Rt == 1111 */
    if (rt == 15 && f->v8m) {
      if (BITS(h2, 5, 0)) { set_undef(d); return; }
      d->op = VM_OP_TT; d->rd = (uint8_t)rd; d->sub = (uint8_t)BITS(h2, 7, 6);
      return;
    }
    d->op = VM_OP_STREX; d->sub = VM_SZ_W; d->ra = (uint8_t)rd; d->imm = (h2 & 0xff) * 4;
    return;
  }
  if (op1 == 0 && op2 == 1) {
    d->op = VM_OP_LDREX; d->sub = VM_SZ_W; d->imm = (h2 & 0xff) * 4;
    if (rd != 15) set_undef(d);
    return;
  }
  if ((op1 & 2) || (op2 & 2)) { /* LDRD/STRD (immediate / literal) */
    unsigned p = BIT(h1, 8), u = BIT(h1, 7), w = BIT(h1, 5);
    d->op = BIT(h1, 4) ? VM_OP_LDRD : VM_OP_STRD;
    d->ra = (uint8_t)rd; /* Rt2 */
    d->imm = (h2 & 0xff) * 4;
    d->flags = (p ? VM_F_P : 0) | (u ? VM_F_U : 0) | (w ? VM_F_W : 0);
    if (rn == 15) {
      if (d->op == VM_OP_STRD || w) { set_undef(d); return; }
      d->flags |= VM_F_LIT;
    }
    return;
  }
  if (op1 == 1 && op2 == 0) { /* STREXB/H, v8-M STL* */
    unsigned rs = BITS(h2, 3, 0);
    switch (op3) {
    case 4: case 5:
      d->op = VM_OP_STREX; d->sub = op3 == 4 ? VM_SZ_B : VM_SZ_H; d->ra = (uint8_t)rs; return;
    case 8: case 9: case 10:
      if (!f->v8m) break;
      d->op = VM_OP_STL; d->sub = op3 == 8 ? VM_SZ_B : op3 == 9 ? VM_SZ_H : VM_SZ_W; return;
    case 12: case 13: case 14:
      if (!f->v8m) break;
      d->op = VM_OP_STLEX; d->sub = op3 == 12 ? VM_SZ_B : op3 == 13 ? VM_SZ_H : VM_SZ_W;
      d->ra = (uint8_t)rs;
      return;
    }
    set_undef(d);
    return;
  }
  if (op1 == 1 && op2 == 1) { /* TBB/TBH, LDREXB/H, v8-M LDA* */
    switch (op3) {
    case 0: case 1:
      d->op = op3 ? VM_OP_TBH : VM_OP_TBB; d->rm = (uint8_t)BITS(h2, 3, 0); return;
    case 4: case 5:
      d->op = VM_OP_LDREX; d->sub = op3 == 4 ? VM_SZ_B : VM_SZ_H; return;
    case 8: case 9: case 10:
      if (!f->v8m) break;
      d->op = VM_OP_LDA; d->sub = op3 == 8 ? VM_SZ_B : op3 == 9 ? VM_SZ_H : VM_SZ_W; return;
    case 12: case 13: case 14:
      if (!f->v8m) break;
      d->op = VM_OP_LDAEX; d->sub = op3 == 12 ? VM_SZ_B : op3 == 13 ? VM_SZ_H : VM_SZ_W;
      return;
    }
    set_undef(d);
    return;
  }
  set_undef(d);
}

static void dec_dp_shifted(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                           struct vm_insn *d)
{
  unsigned op = BITS(h1, 8, 5), s = BIT(h1, 4), rn = BITS(h1, 3, 0);
  unsigned rd = BITS(h2, 11, 8), rm = BITS(h2, 3, 0);
  if (BIT(h2, 15)) { set_undef(d); return; }
  if (op == 6) { /* PKHBT/PKHTB */
    if (f->dsp) d->op = VM_OP_DSP; else set_undef(d);
    return;
  }
  if (!dp_common(d, op, s, rn, rd)) { set_undef(d); return; }
  d->op = VM_OP_DP_R;
  d->rm = (uint8_t)rm;
  imm_shift(d, BITS(h2, 5, 4), (BITS(h2, 14, 12) << 2) | BITS(h2, 7, 6));
}

static void dec_dp_modimm(uint16_t h1, uint16_t h2, struct vm_insn *d)
{
  unsigned op = BITS(h1, 8, 5), s = BIT(h1, 4), rn = BITS(h1, 3, 0), rd = BITS(h2, 11, 8);
  uint32_t imm12 = (BIT(h1, 10) << 11) | (BITS(h2, 14, 12) << 8) | (h2 & 0xff);
  if (!dp_common(d, op, s, rn, rd)) { set_undef(d); return; }
  d->op = VM_OP_DP_I;
  thumb_expand_imm(d, imm12);
}

static void dec_dp_plain(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                         struct vm_insn *d)
{
  unsigned op = BITS(h1, 8, 4), rn = BITS(h1, 3, 0), rd = BITS(h2, 11, 8);
  unsigned imm3 = BITS(h2, 14, 12), imm2 = BITS(h2, 7, 6), imm8 = h2 & 0xff;
  uint32_t imm12 = (BIT(h1, 10) << 11) | (imm3 << 8) | imm8;
  d->rd = (uint8_t)rd;
  d->rn = (uint8_t)rn;
  switch (op) {
  case 0x00: case 0x0a: /* ADDW / SUBW, ADR */
    if (rn == 15) {
      d->op = VM_OP_ADR; d->imm = op ? (uint32_t)-(int32_t)imm12 : imm12;
    } else {
      d->op = VM_OP_DP_I; d->sub = op ? VM_ALU_SUB : VM_ALU_ADD; d->imm = imm12;
    }
    return;
  case 0x04: case 0x0c: /* MOVW, MOVT */
    d->imm = (rn << 12) | imm12;
    if (op == 0x04) { d->op = VM_OP_DP_I; d->sub = VM_ALU_MOV; d->rn = VM_NOREG; }
    else d->op = VM_OP_MOVT;
    return;
  case 0x10: case 0x12: case 0x18: case 0x1a: { /* SSAT, USAT (and the 16-bit forms) */
    unsigned sh = BIT(h1, 5), shn = (imm3 << 2) | imm2;
    if (sh && !shn) { /* SSAT16 / USAT16 */
      if (f->dsp) d->op = VM_OP_DSP; else set_undef(d);
      return;
    }
    d->op = op >= 0x18 ? VM_OP_USAT : VM_OP_SSAT;
    d->rm = (uint8_t)rn;
    d->imm = d->op == VM_OP_SSAT ? (h2 & 0x1f) + 1 : (h2 & 0x1f);
    imm_shift(d, sh ? 2 : 0, shn);
    return;
  }
  case 0x14: case 0x1c: /* SBFX, UBFX */
    d->op = op == 0x14 ? VM_OP_SBFX : VM_OP_UBFX;
    d->sh_n = (uint8_t)((imm3 << 2) | imm2);
    d->imm = (h2 & 0x1f) + 1;
    if (d->sh_n + d->imm > 32) set_undef(d);
    return;
  case 0x16: /* BFI, BFC */
    d->op = rn == 15 ? VM_OP_BFC : VM_OP_BFI;
    d->sh_n = (uint8_t)((imm3 << 2) | imm2);
    d->imm = h2 & 0x1f;
    if (d->imm < d->sh_n) set_undef(d);
    return;
  }
  set_undef(d);
}

static void dec_branch_misc(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                            struct vm_insn *d)
{
  unsigned op1 = BITS(h2, 14, 12), op = BITS(h1, 10, 4);
  uint32_t s = BIT(h1, 10), j1 = BIT(h2, 13), j2 = BIT(h2, 11);
  if (op1 & 1) { /* B T4 (op1 x01) or BL (x11); BLX imm (x10) is undefined */
    uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
    uint32_t imm = (s << 24) | (i1 << 23) | (i2 << 22) | (BITS(h1, 9, 0) << 12) |
                   ((h2 & 0x7ff) << 1);
    d->imm = sign_extend(imm, 25);
    if (op1 & 4) d->op = VM_OP_BL;
    else if (f->v7m) { d->op = VM_OP_B; d->cond = 14; }
    else set_undef(d);
    return;
  }
  if (op1 & 4) { set_undef(d); return; } /* BLX (immediate) */
  /* op1 = 0x0 (J1 free): conditional branch, misc control; 010 also UDF.W */
  if ((op & 0x38) != 0x38) {
    if (!f->v7m) { set_undef(d); return; }
    uint32_t imm = (s << 20) | (j2 << 19) | (j1 << 18) | (BITS(h1, 5, 0) << 12) |
                   ((h2 & 0x7ff) << 1);
    d->op = VM_OP_B;
    d->cond = (uint8_t)BITS(h1, 9, 6);
    d->imm = sign_extend(imm, 21);
    return;
  }
  if (op1 == 2) { /* UDF.W is 1111 0111 1111 imm4 1010 imm12 */
    if (op == 0x7f) d->op = VM_OP_UDF;
    else set_undef(d);
    return;
  }
  switch (op) {
  case 0x38: case 0x39: /* MSR */
    d->op = VM_OP_MSR; d->rn = (uint8_t)BITS(h1, 3, 0); d->imm = h2 & 0xff;
    d->sub = (uint8_t)BITS(h2, 11, 10);
    if (BIT(h1, 4) || BITS(h2, 9, 8) || d->rn == 13 || d->rn == 15) set_undef(d);
    else if (!f->v7m && d->sub != 2) set_undef(d);
    return;
  case 0x3a: /* hints (CPS.W is not in M-profile) */
    if (!f->v7m || BITS(h2, 10, 8)) { set_undef(d); return; }
    d->op = VM_OP_HINT;
    d->sub = (h2 & 0xff) <= 4 ? (uint8_t)(h2 & 0xff) : VM_HINT_NOP;
    return;
  case 0x3b: /* misc control */
    switch (BITS(h2, 7, 4)) {
    case 2: if (f->v7m) { d->op = VM_OP_CLREX; return; } break;
    case 4: d->op = VM_OP_BARRIER; d->sub = 0; return;
    case 5: d->op = VM_OP_BARRIER; d->sub = 1; return;
    case 6: d->op = VM_OP_BARRIER; d->sub = 2; return;
    }
    set_undef(d);
    return;
  case 0x3e: case 0x3f: /* MRS */
    d->op = VM_OP_MRS; d->rd = (uint8_t)BITS(h2, 11, 8); d->imm = h2 & 0xff;
    if (BIT(h1, 4) || d->rd == 13 || d->rd == 15) set_undef(d);
    return;
  }
  set_undef(d);
}

static void dec_ldst_single(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                            struct vm_insn *d)
{
  unsigned sgn = BIT(h1, 8), a = BIT(h1, 7), size = BITS(h1, 6, 5), l = BIT(h1, 4);
  unsigned rn = BITS(h1, 3, 0), rt = BITS(h2, 15, 12);
  (void)f;
  if (size == 3 || (sgn && (!l || size == 2))) { set_undef(d); return; }
  d->op = l ? VM_OP_LD : VM_OP_ST;
  d->sub = (uint8_t)((1u << size) | (sgn ? VM_SZ_SIGNED : 0));
  d->rd = (uint8_t)rt;
  d->rn = (uint8_t)rn;
  d->rm = VM_NOREG;
  if (rn == 15) {
    if (!l) { set_undef(d); return; }
    d->flags = VM_F_P | VM_F_LIT | (a ? VM_F_U : 0);
    d->imm = h2 & 0xfff;
  } else if (a) {
    d->flags = VM_F_P | VM_F_U;
    d->imm = h2 & 0xfff;
  } else if (BIT(h2, 11)) {
    unsigned p = BIT(h2, 10), u = BIT(h2, 9), w = BIT(h2, 8);
    if (!p && !w) { set_undef(d); return; }
    d->imm = h2 & 0xff;
    if (p && u && !w) { /* LDRT/STRT family: unprivileged access */
      d->flags = VM_F_P | VM_F_U;
      d->sub |= VM_SZ_UNPRIV;
    } else {
      d->flags = (uint8_t)((p ? VM_F_P : 0) | (u ? VM_F_U : 0) | (w ? VM_F_W : 0));
      if (w && rn == rt) { set_undef(d); return; }
    }
  } else if (!BITS(h2, 11, 6)) {
    d->flags = VM_F_P | VM_F_U;
    d->rm = (uint8_t)BITS(h2, 3, 0);
    d->sh_type = VM_SH_LSL;
    d->sh_n = (uint8_t)BITS(h2, 5, 4);
    if (d->rm == 13 || d->rm == 15) { set_undef(d); return; }
  } else {
    set_undef(d);
    return;
  }
  if (rt == 15 && l) {
    if (size != 2) { /* PLD, PLI, unallocated hints: no operation */
      d->op = VM_OP_HINT; d->sub = VM_HINT_NOP;
      return;
    }
    if ((d->flags & VM_F_W) == 0 && (d->sub & VM_SZ_UNPRIV)) set_undef(d);
  }
  if (!l && rt == 15) set_undef(d);
}

static void dec_dp_reg(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                       struct vm_insn *d)
{
  unsigned op1 = BITS(h1, 7, 4), op2 = BITS(h2, 7, 4), rn = BITS(h1, 3, 0);
  unsigned rd = BITS(h2, 11, 8), rm = BITS(h2, 3, 0);
  if (BITS(h2, 15, 12) != 15) { set_undef(d); return; }
  d->rd = (uint8_t)rd; d->rn = (uint8_t)rn; d->rm = (uint8_t)rm;
  if (op1 < 8 && op2 == 0) { /* LSL/LSR/ASR/ROR (register) */
    d->op = VM_OP_DP_RSR;
    d->sh_type = (uint8_t)(op1 >> 1);
    d->flags = (op1 & 1) ? VM_F_S : 0;
    return;
  }
  if (op1 < 8 && (op2 & 8)) { /* extend (and add) */
    d->sh_n = (uint8_t)(BITS(h2, 5, 4) * 8);
    switch (op1) {
    case 0: d->sub = VM_EXT_SXTH; break;
    case 1: d->sub = VM_EXT_UXTH; break;
    case 4: d->sub = VM_EXT_SXTB; break;
    case 5: d->sub = VM_EXT_UXTB; break;
    case 2: case 3: /* SXTB16/UXTB16 (+A) */
      if (f->dsp) d->op = VM_OP_DSP; else set_undef(d);
      return;
    default: set_undef(d); return;
    }
    if (BIT(h2, 6)) { set_undef(d); return; }
    if (rn != 15 && !f->dsp) { set_undef(d); return; } /* SXTAB etc. are ARMv7E-M */
    d->op = VM_OP_EXT;
    return;
  }
  if (op1 >= 8 && op2 < 8) { /* parallel add/subtract, signed and unsigned (A5.3.13/14) */
    if (f->dsp) d->op = VM_OP_DSP; else set_undef(d);
    return;
  }
  if ((op1 & 0xc) == 8 && (op2 & 0xc) == 8) { /* miscellaneous operations, A5.3.15 */
    unsigned a = op1 & 3, b = op2 & 3;
    if (a == 0 || (a == 2 && b == 0)) { /* QADD/QDADD/QSUB/QDSUB, SEL */
      if (f->dsp) d->op = VM_OP_DSP; else set_undef(d);
      return;
    }
    if (rn != rm) { set_undef(d); return; }
    if (a == 1) {
      static const uint8_t k[4] = {VM_OP_REV, VM_OP_REV16, VM_OP_RBIT, VM_OP_REVSH};
      d->op = k[b];
      return;
    }
    if (a == 3 && b == 0) { d->op = VM_OP_CLZ; return; }
  }
  set_undef(d);
}

static void dec_mul(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                    struct vm_insn *d)
{
  unsigned op1 = BITS(h1, 6, 4), op2 = BITS(h2, 5, 4), ra = BITS(h2, 15, 12);
  d->rn = (uint8_t)BITS(h1, 3, 0); d->rd = (uint8_t)BITS(h2, 11, 8);
  d->rm = (uint8_t)BITS(h2, 3, 0); d->ra = (uint8_t)ra;
  if (BITS(h2, 7, 6)) { set_undef(d); return; }
  if (op1 == 0) {
    if (op2 == 0) d->op = ra == 15 ? VM_OP_MUL : VM_OP_MLA;
    else if (op2 == 1) d->op = VM_OP_MLS;
    else set_undef(d);
    return;
  }
  if (op1 == 7 && op2 != 0) { set_undef(d); return; }
  if (f->dsp) d->op = VM_OP_DSP; else set_undef(d);
}

static void dec_long_mul(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                         struct vm_insn *d)
{
  unsigned op1 = BITS(h1, 6, 4), op2 = BITS(h2, 7, 4);
  d->rn = (uint8_t)BITS(h1, 3, 0); d->rd = (uint8_t)BITS(h2, 15, 12); /* RdLo (Rd for div) */
  d->ra = (uint8_t)BITS(h2, 11, 8);                                   /* RdHi */
  d->rm = (uint8_t)BITS(h2, 3, 0);
  switch (op1) {
  case 0: if (op2 == 0) { d->op = VM_OP_SMULL; return; } break;
  case 1: if (op2 == 15) { d->op = VM_OP_SDIV; d->rd = d->ra; return; } break;
  case 2: if (op2 == 0) { d->op = VM_OP_UMULL; return; } break;
  case 3: if (op2 == 15) { d->op = VM_OP_UDIV; d->rd = d->ra; return; } break;
  case 4:
    if (op2 == 0) { d->op = VM_OP_SMLAL; return; }
    if ((op2 & 0xc) == 8 || (op2 & 0xe) == 0xc) goto dsp; /* SMLALxy, SMLALD */
    break;
  case 5: if ((op2 & 0xe) == 0xc) goto dsp; break; /* SMLSLD */
  case 6:
    if (op2 == 0) { d->op = VM_OP_UMLAL; return; }
    if (op2 == 6) goto dsp; /* UMAAL */
    break;
  }
  set_undef(d);
  return;
dsp:
  if (f->dsp) d->op = VM_OP_DSP; else set_undef(d);
}

static void dec32(const struct vm_decode_features *f, uint16_t h1, uint16_t h2,
                  struct vm_insn *d)
{
  unsigned op1 = BITS(h1, 12, 11), op2 = BITS(h1, 10, 4), op = BIT(h2, 15);
  d->len = 4;
  d->raw = ((uint32_t)h1 << 16) | h2;
  d->rm = VM_NOREG;
  if (op1 == 2 && op) { /* branches and misc control: v6-M has BL, MSR, MRS, barriers, UDF */
    dec_branch_misc(f, h1, h2, d);
    return;
  }
  if ((op1 == 1 && (op2 & 0x40)) || (op1 == 3 && (op2 & 0x40))) { /* coprocessor */
    unsigned coproc = BITS(h2, 11, 8);
    if ((coproc & 0xe) == 0xa) d->op = VM_OP_FP;
    else d->op = f->v7m ? VM_OP_NOCP : VM_OP_UNDEF;
    return;
  }
  if (!f->v7m) { set_undef(d); return; }
  if (op1 == 1) {
    if ((op2 & 0x64) == 0x00) dec_ldst_multi(f, h1, h2, d);
    else if ((op2 & 0x64) == 0x04) dec_ldst_dual(f, h1, h2, d);
    else dec_dp_shifted(f, h1, h2, d);
    return;
  }
  if (op1 == 2) {
    if (op2 & 0x20) dec_dp_plain(f, h1, h2, d);
    else dec_dp_modimm(h1, h2, d);
    return;
  }
  /* op1 == 3 */
  if ((op2 & 0x71) == 0x00) { dec_ldst_single(f, h1, h2, d); return; }   /* store single */
  if ((op2 & 0x67) == 0x01 || (op2 & 0x67) == 0x03 || (op2 & 0x67) == 0x05) {
    dec_ldst_single(f, h1, h2, d); /* loads */
    return;
  }
  if ((op2 & 0x70) == 0x20) { dec_dp_reg(f, h1, h2, d); return; }
  if ((op2 & 0x78) == 0x30) { dec_mul(f, h1, h2, d); return; }
  if ((op2 & 0x78) == 0x38) { dec_long_mul(f, h1, h2, d); return; }
  set_undef(d);
}

void vm_decode(const struct vm_decode_features *f, uint16_t hw1, uint16_t hw2,
               struct vm_insn *out)
{
  memset(out, 0, sizeof *out);
  out->rm = VM_NOREG;
  out->cond = 14;
  if (vm_thumb_is32(hw1)) {
    dec32(f, hw1, hw2, out);
  } else {
    out->raw = hw1;
    dec16(f, hw1, out);
  }
  if (out->op == VM_OP_UNDEF)
    set_undef(out);
  else if (out->op == VM_OP_DP_I)
    out->op = (uint8_t)(VM_OP_DPI0 + out->sub);
  else if (out->op == VM_OP_DP_R)
    out->op = (uint8_t)(VM_OP_DPR0 + out->sub);
}
