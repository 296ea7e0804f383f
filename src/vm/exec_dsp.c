/* ARMv7E-M DSP extension instructions of the virtual Cortex-M.
 *
 * Semantics: ARMv7-M Architecture Reference Manual (DDI 0403E), A7.7 (the
 * per-instruction pseudocode) and the encoding tables A5.3.3 (SSAT16/USAT16),
 * A5.3.11 (PKHBT/PKHTB), A5.3.12-A5.3.15 (parallel add/sub, extend-and-add,
 * QADD family, SEL), A5.3.16 (halfword/dual multiplies, SMMxx, USAD8) and
 * A5.3.17 (SMLALxy, SMLALD, SMLSLD, UMAAL).
 * Timing: Cortex-M4 TRM (DDI 0439B) table 3-1: every DSP instruction,
 * including the 64-bit multiply-accumulates, issues in one cycle.
 *
 * Registers 13 and 15 as operands are UNPREDICTABLE for all of these
 * (BadReg); the VM treats them as UNDEFINED, as do RdHi == RdLo in the long
 * multiply-accumulates. See exec_ext.h for the calling contract. */
#include "exec_ext.h"
#include "vm_internal.h"

#define APSR_Q (1u << 27)
#define APSR_GE_SHIFT 16

static inline bool bad_reg(unsigned r)
{
  return r == 13 || r == 15;
}

static inline int32_t sx16(uint32_t v)
{
  return (int32_t)(int16_t)(uint16_t)v;
}

static inline int32_t sx8(uint32_t v)
{
  return (int32_t)(int8_t)(uint8_t)v;
}

static inline uint32_t ror32(uint32_t v, unsigned n)
{
  return n ? (v >> n) | (v << (32 - n)) : v;
}

/* SignedSatQ(x, n) of the ARM ARM (A2.2.1): clamp to n bits. */
static inline int32_t ssat(int64_t x, unsigned n, bool *sat)
{
  int64_t hi = ((int64_t)1 << (n - 1)) - 1, lo = -((int64_t)1 << (n - 1));
  if (x > hi) {
    *sat = true;
    return (int32_t)hi;
  }
  if (x < lo) {
    *sat = true;
    return (int32_t)lo;
  }
  return (int32_t)x;
}

/* UnsignedSatQ(x, n). */
static inline uint32_t usat(int64_t x, unsigned n, bool *sat)
{
  int64_t hi = ((int64_t)1 << n) - 1;
  if (x > hi) {
    *sat = true;
    return (uint32_t)hi;
  }
  if (x < 0) {
    *sat = true;
    return 0;
  }
  return (uint32_t)x;
}

static inline void set_q(struct sonde_vm *vm, bool sat)
{
  if (sat)
    vm->cpu.apsr |= APSR_Q;
}

/* Parallel add/subtract, A5.3.13/A5.3.14: op1 = hw1[6:4] picks the lane
 * operations, `kind` = hw2[5:4] (0 modular with GE, 1 saturating, 2 halving),
 * `uns` = hw2[6]. */
static int exec_parallel(struct sonde_vm *vm, uint32_t insn)
{
  unsigned op1 = (insn >> 20) & 7, kind = (insn >> 4) & 3;
  bool uns = (insn >> 6) & 1;
  unsigned n = (insn >> 16) & 15, d = (insn >> 8) & 15, m = insn & 15;
  if (kind == 3 || op1 == 3 || op1 == 7 || bad_reg(n) || bad_reg(d) || bad_reg(m))
    return VM_EXT_UNDEFINED;
  uint32_t a = vm->cpu.r[n], b = vm->cpu.r[m];
  int32_t v[4];
  bool sub[4];
  unsigned lanes, w;
  if (op1 == 0 || op1 == 4) { /* ADD8, SUB8 */
    lanes = 4;
    w = 8;
    for (unsigned i = 0; i < 4; i++) {
      int32_t x = uns ? (int32_t)((a >> (8 * i)) & 0xff) : sx8(a >> (8 * i));
      int32_t y = uns ? (int32_t)((b >> (8 * i)) & 0xff) : sx8(b >> (8 * i));
      sub[i] = op1 == 4;
      v[i] = sub[i] ? x - y : x + y;
    }
  } else {
    lanes = 2;
    w = 16;
    int32_t alo = uns ? (int32_t)(a & 0xffff) : sx16(a);
    int32_t ahi = uns ? (int32_t)(a >> 16) : sx16(a >> 16);
    int32_t blo = uns ? (int32_t)(b & 0xffff) : sx16(b);
    int32_t bhi = uns ? (int32_t)(b >> 16) : sx16(b >> 16);
    switch (op1) {
    case 1: /* ADD16 */
      v[0] = alo + blo, sub[0] = false;
      v[1] = ahi + bhi, sub[1] = false;
      break;
    case 2: /* ASX: add high, subtract low, with exchange */
      v[0] = alo - bhi, sub[0] = true;
      v[1] = ahi + blo, sub[1] = false;
      break;
    case 5: /* SUB16 */
      v[0] = alo - blo, sub[0] = true;
      v[1] = ahi - bhi, sub[1] = true;
      break;
    default: /* 6, SAX */
      v[0] = alo + bhi, sub[0] = false;
      v[1] = ahi - blo, sub[1] = true;
      break;
    }
  }
  uint32_t res = 0, ge = 0, mask = (1u << w) - 1, gebits = w == 8 ? 1 : 3;
  bool sat = false;
  for (unsigned i = 0; i < lanes; i++) {
    uint32_t r;
    if (kind == 0) {
      r = (uint32_t)v[i] & mask;
      bool g = uns && !sub[i] ? v[i] >= (int32_t)(mask + 1) : v[i] >= 0;
      if (g)
        ge |= gebits << (i * (w / 8));
    } else if (kind == 1) {
      r = (uns ? usat(v[i], w, &sat) : (uint32_t)ssat(v[i], w, &sat)) & mask;
    } else {
      r = (uint32_t)(v[i] >> 1) & mask;
    }
    res |= r << (i * w);
  }
  vm->cpu.r[d] = res;
  if (kind == 0)
    vm->cpu.apsr = (vm->cpu.apsr & ~(0xfu << APSR_GE_SHIFT)) | (ge << APSR_GE_SHIFT);
  return 1;
}

/* QADD, QDADD, QSUB, QDSUB (op2 = hw2[5:4]) and SEL (hw1[5:4] = 10). */
static int exec_misc(struct sonde_vm *vm, uint32_t insn)
{
  unsigned op1 = (insn >> 20) & 3, op2 = (insn >> 4) & 3;
  unsigned n = (insn >> 16) & 15, d = (insn >> 8) & 15, m = insn & 15;
  if (bad_reg(n) || bad_reg(d) || bad_reg(m))
    return VM_EXT_UNDEFINED;
  if (op1 == 0) {
    bool sat = false;
    int64_t x = (int32_t)vm->cpu.r[m], y = (int32_t)vm->cpu.r[n];
    if (op2 & 1) /* QDADD, QDSUB: Rn doubled with saturation first */
      y = ssat(2 * y, 32, &sat);
    int32_t r = ssat(op2 & 2 ? x - y : x + y, 32, &sat);
    vm->cpu.r[d] = (uint32_t)r;
    set_q(vm, sat);
    return 1;
  }
  if (op1 == 2 && op2 == 0) { /* SEL */
    uint32_t ge = (vm->cpu.apsr >> APSR_GE_SHIFT) & 15, r = 0;
    for (unsigned i = 0; i < 4; i++) {
      uint32_t byte = 0xffu << (8 * i);
      r |= ((ge >> i) & 1 ? vm->cpu.r[n] : vm->cpu.r[m]) & byte;
    }
    vm->cpu.r[d] = r;
    return 1;
  }
  return VM_EXT_UNDEFINED;
}

/* SXTAB16/UXTAB16 (and SXTB16/UXTB16 when Rn = 15), A5.3.12 op1 01x. */
static int exec_xtab16(struct sonde_vm *vm, uint32_t insn)
{
  bool uns = (insn >> 20) & 1;
  unsigned n = (insn >> 16) & 15, d = (insn >> 8) & 15, m = insn & 15;
  unsigned rot = ((insn >> 4) & 3) * 8;
  if (((insn >> 6) & 1) || bad_reg(d) || bad_reg(m) || n == 13)
    return VM_EXT_UNDEFINED;
  uint32_t x = ror32(vm->cpu.r[m], rot);
  uint32_t lo = uns ? (x & 0xff) : (uint32_t)sx8(x);
  uint32_t hi = uns ? ((x >> 16) & 0xff) : (uint32_t)sx8(x >> 16);
  if (n != 15) {
    lo += vm->cpu.r[n];
    hi += vm->cpu.r[n] >> 16;
  }
  vm->cpu.r[d] = (lo & 0xffff) | (hi << 16);
  return 1;
}

/* SSAT16/USAT16, A5.3.3 (hw1 = 11110x11 x010 Rn with imm3:imm2 = 0). */
static int exec_sat16(struct sonde_vm *vm, uint32_t insn)
{
  bool uns = (insn >> 23) & 1;
  unsigned n = (insn >> 16) & 15, d = (insn >> 8) & 15, sat_imm = insn & 15;
  if ((insn & 0x04000000u) || (insn & 0x70c0u) || (insn & 0x30u) || bad_reg(n) || bad_reg(d))
    return VM_EXT_UNDEFINED;
  bool sat = false;
  uint32_t x = vm->cpu.r[n], r;
  if (uns) {
    r = (usat(sx16(x), sat_imm, &sat) & 0xffff) | usat(sx16(x >> 16), sat_imm, &sat) << 16;
  } else {
    r = ((uint32_t)ssat(sx16(x), sat_imm + 1, &sat) & 0xffff) |
        (uint32_t)ssat(sx16(x >> 16), sat_imm + 1, &sat) << 16;
  }
  vm->cpu.r[d] = r;
  set_q(vm, sat);
  return 1;
}

/* PKHBT/PKHTB, A5.3.11 op 0110 (S = 0). */
static int exec_pkh(struct sonde_vm *vm, uint32_t insn)
{
  unsigned n = (insn >> 16) & 15, d = (insn >> 8) & 15, m = insn & 15;
  unsigned imm5 = ((insn >> 10) & 0x1c) | ((insn >> 6) & 3);
  bool tb = (insn >> 5) & 1;
  if ((insn & 0x00100010u) || (insn & 0x8000u) || bad_reg(n) || bad_reg(d) || bad_reg(m))
    return VM_EXT_UNDEFINED;
  uint32_t rn = vm->cpu.r[n], rm = vm->cpu.r[m];
  if (tb) { /* ASR #imm5, imm5 = 0 meaning 32 */
    uint32_t op2 = (uint32_t)((int32_t)rm >> (imm5 ? imm5 : 31));
    vm->cpu.r[d] = (rn & 0xffff0000u) | (op2 & 0xffff);
  } else {
    uint32_t op2 = rm << imm5;
    vm->cpu.r[d] = (op2 & 0xffff0000u) | (rn & 0xffff);
  }
  return 1;
}

/* A5.3.16: 32-bit multiplies with a 32-bit result (the DSP ones). */
static int exec_mul32(struct sonde_vm *vm, uint32_t insn)
{
  unsigned op1 = (insn >> 20) & 7, op2 = (insn >> 4) & 3;
  unsigned n = (insn >> 16) & 15, a = (insn >> 12) & 15, d = (insn >> 8) & 15, m = insn & 15;
  if (bad_reg(n) || bad_reg(d) || bad_reg(m) || a == 13)
    return VM_EXT_UNDEFINED;
  uint32_t rn = vm->cpu.r[n], rm = vm->cpu.r[m];
  bool acc = a != 15;
  int64_t ra = acc ? (int32_t)vm->cpu.r[a] : 0;
  switch (op1) {
  case 1: { /* SMLA<x><y> / SMUL<x><y>: N = hw2[5], M = hw2[4] */
    int64_t x = op2 & 2 ? sx16(rn >> 16) : sx16(rn);
    int64_t y = op2 & 1 ? sx16(rm >> 16) : sx16(rm);
    int64_t r = x * y + ra;
    vm->cpu.r[d] = (uint32_t)r;
    set_q(vm, r != (int32_t)r);
    return 1;
  }
  case 2: /* SMLAD(X) / SMUAD(X) */
  case 4: { /* SMLSD(X) / SMUSD(X) */
    if (op2 & 2)
      return VM_EXT_UNDEFINED;
    uint32_t y = op2 & 1 ? ror32(rm, 16) : rm;
    int64_t p1 = (int64_t)sx16(rn) * sx16(y), p2 = (int64_t)sx16(rn >> 16) * sx16(y >> 16);
    int64_t r = (op1 == 2 ? p1 + p2 : p1 - p2) + ra;
    vm->cpu.r[d] = (uint32_t)r;
    set_q(vm, r != (int32_t)r);
    return 1;
  }
  case 3: { /* SMLAW<y> / SMULW<y>: M = hw2[4] */
    if (op2 & 2)
      return VM_EXT_UNDEFINED;
    int64_t y = op2 & 1 ? sx16(rm >> 16) : sx16(rm);
    int64_t r = (int64_t)(int32_t)rn * y + ra * 65536;
    int64_t top = r >> 16; /* the result is bits 47:16 */
    vm->cpu.r[d] = (uint32_t)top;
    set_q(vm, top != (int32_t)top);
    return 1;
  }
  case 5: /* SMMLA(R) / SMMUL(R) */
  case 6: { /* SMMLS(R) */
    if (op2 & 2 || (op1 == 6 && !acc))
      return VM_EXT_UNDEFINED;
    /* Only bits 63:32 of the (wider) exact result are kept, so modular
     * 64-bit arithmetic gives them exactly. */
    uint64_t prod = (uint64_t)((int64_t)(int32_t)rn * (int32_t)rm);
    uint64_t r = (uint64_t)ra << 32;
    r = op1 == 5 ? r + prod : r - prod;
    if (op2 & 1)
      r += 0x80000000u;
    vm->cpu.r[d] = (uint32_t)(r >> 32);
    return 1;
  }
  case 7: { /* USAD8 / USADA8 */
    if (op2 != 0)
      return VM_EXT_UNDEFINED;
    uint32_t s = 0;
    for (unsigned i = 0; i < 32; i += 8) {
      int32_t x = (int32_t)((rn >> i) & 0xff) - (int32_t)((rm >> i) & 0xff);
      s += (uint32_t)(x < 0 ? -x : x);
    }
    vm->cpu.r[d] = s + (uint32_t)ra;
    return 1;
  }
  default:
    return VM_EXT_UNDEFINED; /* MUL/MLA/MLS are the core decoder's */
  }
}

/* A5.3.17: SMLAL<x><y>, SMLALD(X), SMLSLD(X), UMAAL. */
static int exec_mul64(struct sonde_vm *vm, uint32_t insn)
{
  unsigned op1 = (insn >> 20) & 7, op2 = (insn >> 4) & 15;
  unsigned n = (insn >> 16) & 15, lo = (insn >> 12) & 15, hi = (insn >> 8) & 15, m = insn & 15;
  if (bad_reg(n) || bad_reg(lo) || bad_reg(hi) || bad_reg(m) || lo == hi)
    return VM_EXT_UNDEFINED;
  uint32_t rn = vm->cpu.r[n], rm = vm->cpu.r[m];
  uint64_t acc = ((uint64_t)vm->cpu.r[hi] << 32) | vm->cpu.r[lo], r;
  if (op1 == 4 && (op2 & 0xc) == 0x8) { /* SMLAL<x><y> */
    int64_t x = op2 & 2 ? sx16(rn >> 16) : sx16(rn);
    int64_t y = op2 & 1 ? sx16(rm >> 16) : sx16(rm);
    r = acc + (uint64_t)(x * y);
  } else if ((op1 == 4 || op1 == 5) && (op2 & 0xe) == 0xc) { /* SMLALD(X), SMLSLD(X) */
    uint32_t y = op2 & 1 ? ror32(rm, 16) : rm;
    int64_t p1 = (int64_t)sx16(rn) * sx16(y), p2 = (int64_t)sx16(rn >> 16) * sx16(y >> 16);
    r = acc + (uint64_t)(op1 == 4 ? p1 + p2 : p1 - p2);
  } else if (op1 == 6 && op2 == 6) { /* UMAAL */
    r = (uint64_t)rn * rm + vm->cpu.r[hi] + vm->cpu.r[lo];
  } else {
    return VM_EXT_UNDEFINED; /* SMULL/UMULL/SMLAL/UMLAL/SDIV/UDIV are the core's */
  }
  vm->cpu.r[lo] = (uint32_t)r;
  vm->cpu.r[hi] = (uint32_t)(r >> 32);
  return 1;
}

int vm_exec_dsp(struct sonde_vm *vm, uint32_t insn)
{
  if (!vm->has_dsp)
    return VM_EXT_UNDEFINED;
  uint32_t hw1 = insn >> 16;
  if ((hw1 & 0xff00) == 0xfa00) { /* data processing (register), A5.3.12 */
    if ((insn & 0xf000) != 0xf000)
      return VM_EXT_UNDEFINED;
    unsigned op1 = (hw1 >> 4) & 15, op2 = (insn >> 4) & 15;
    if ((op1 & 8) && (op2 & 8) == 0)
      return exec_parallel(vm, insn);
    if ((op1 & 0xc) == 8 && (op2 & 0xc) == 8)
      return exec_misc(vm, insn);
    if ((op1 & 0xe) == 2 && (op2 & 8))
      return exec_xtab16(vm, insn);
    return VM_EXT_UNDEFINED;
  }
  if ((hw1 & 0xff80) == 0xfb00) /* multiply, A5.3.16 */
    return (insn & 0xc0) ? VM_EXT_UNDEFINED : exec_mul32(vm, insn);
  if ((hw1 & 0xff80) == 0xfb80) /* long multiply, A5.3.17 */
    return exec_mul64(vm, insn);
  if ((hw1 & 0xfb70) == 0xf320 && (insn & 0x8000) == 0) /* SSAT16/USAT16 */
    return exec_sat16(vm, insn);
  if ((hw1 & 0xffe0) == 0xeac0) /* PKHBT/PKHTB */
    return exec_pkh(vm, insn);
  return VM_EXT_UNDEFINED;
}
