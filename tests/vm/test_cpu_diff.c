/* Differential tests of the CPU core (decode.c, exec.c) against Unicorn:
 * every encoding class the decoder knows, with random operands, flags,
 * shifts, conditions, IT blocks and loads/stores into a RAM window; registers
 * r0-r15, APSR and the RAM window are compared after every instruction (IT
 * blocks: after the block). Cortex-M3, M4 and M0+ (ARMv6-M) models.
 *
 * SONDE_SOAK=N runs N times as many random cases. Encodings whose result the
 * architecture leaves UNPREDICTABLE are not generated. Known Unicorn
 * deviations are listed in docs/vm.md and skipped with a printed reason. */
#include <stdio.h>

#include "check.h"
#include "test_cpu_util.h"
#include "unicorn_ref.h"

#include <unicorn/unicorn.h>

#define CODE_AT 0x00040000u /* instructions under test */
#define DATA_LO 0x20010000u /* the compared RAM window */
#define DATA_SIZE 0x2000u
#define DATA_MID (DATA_LO + DATA_SIZE / 2)

static uint64_t rng = 0x5eedc0deull;
static uint64_t rnd64(void)
{
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static uint32_t rnd(void) { return (uint32_t)(rnd64() >> 32); }
static unsigned below(unsigned n) { return (unsigned)(rnd64() % n); }

static unsigned long soak(unsigned long base)
{
  const char *s = getenv("SONDE_SOAK");
  long k = s ? atol(s) : 0;
  return k > 1 ? base * (unsigned long)k : base;
}

/* An interesting 32-bit operand: edges and random values. */
static uint32_t operand(void)
{
  static const uint32_t edge[] = {0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe,
                                  0x7fff, 0x8000, 0xffff, 0x10000, 0xff, 0x80, 31, 32, 33};
  switch (below(4)) {
  case 0: return edge[below(sizeof edge / sizeof edge[0])];
  case 1: return rnd() >> below(32);
  default: return rnd();
  }
}

/* ---- encoding generators -------------------------------------------------- */

/* A generated case: up to 8 halfwords, how many instructions, and register
 * roles the generator fixed (others get random operands). */
struct gen {
  uint16_t hw[16];
  unsigned nhw, ninsn;
  int fixed[16]; /* 1: value in val[] */
  uint32_t val[16];
  bool mem;      /* touches RAM */
};

static unsigned lo(void) { return below(8); }
static unsigned reg(void) { return below(13); } /* r0-r12 */

static void put16(struct gen *g, uint32_t h) { g->hw[g->nhw++] = (uint16_t)h; g->ninsn++; }
static void put32(struct gen *g, uint32_t w)
{
  g->hw[g->nhw++] = (uint16_t)(w >> 16);
  g->hw[g->nhw++] = (uint16_t)w;
  g->ninsn++;
}
static void fix(struct gen *g, unsigned r, uint32_t v) { g->fixed[r] = 1; g->val[r] = v; }
/* A base register pointing into the RAM window, `align` aligned. */
static void base_reg(struct gen *g, unsigned r, unsigned align)
{
  uint32_t a = DATA_MID + (uint32_t)((int32_t)below(1024) - 512);
  fix(g, r, a & ~(align - 1));
  g->mem = true;
}

/* 16-bit data processing (A5.2.1, A5.2.2, A5.2.3). */
static void g16_dp(struct gen *g)
{
  switch (below(8)) {
  case 0: put16(g, (below(3) << 11) | (rnd() & 0x7ff)); break;      /* shift imm */
  case 1: put16(g, 0x1800 | (rnd() & 0x7ff)); break;                 /* add/sub reg/imm3 */
  case 2: put16(g, 0x2000 | (rnd() & 0x1fff)); break;                /* mov/cmp/add/sub imm8 */
  case 3: case 4: put16(g, 0x4000 | (rnd() & 0x3ff)); break;        /* ALU ops incl. MUL */
  case 5: { /* ADD/CMP/MOV high registers (no PC/SP as operand here) */
    unsigned op = below(3), d = reg(), m = reg();
    if (op == 1 && d < 8 && m < 8) d += 8 > 12 ? 0 : 8; /* CMP T2 needs a high register */
    if (op == 1 && d > 12) d = 12;
    put16(g, 0x4400 | (op << 8) | ((d & 8) << 4) | (m << 3) | (d & 7));
    break;
  }
  case 6: { /* SXTH/SXTB/UXTH/UXTB, REV/REV16/REVSH */
    if (below(2)) put16(g, 0xb200 | (rnd() & 0xff));
    else {
      static const unsigned k[3] = {0, 1, 3};
      put16(g, 0xba00 | (k[below(3)] << 6) | (rnd() & 0x3f));
    }
    break;
  }
  default: /* ADR, ADD Rd,SP,#imm, ADD/SUB SP,#imm */
    switch (below(3)) {
    case 0: put16(g, 0xa000 | (rnd() & 0x7ff)); break;
    case 1: fix(g, 13, DATA_MID); put16(g, 0xa800 | (rnd() & 0x7ff)); break;
    default: fix(g, 13, DATA_MID); put16(g, 0xb000 | (rnd() & 0xff)); break;
    }
  }
}

/* 16-bit loads/stores (A5.2.4) and LDM/STM/PUSH/POP. */
static void g16_mem(struct gen *g, bool v6m)
{
  unsigned align = v6m ? 4 : 1;
  switch (below(7)) {
  case 0: { /* register offset */
    unsigned op = below(8), t = lo(), n = lo(), m = lo();
    while (m == n) m = lo();
    base_reg(g, n, v6m ? 4 : 1);
    fix(g, m, v6m ? below(64) * 4 : below(256));
    put16(g, 0x5000 | (op << 9) | (m << 6) | (n << 3) | t);
    break;
  }
  case 1: case 2: { /* imm5 word/byte/halfword */
    static const uint16_t base[3] = {0x6000, 0x7000, 0x8000};
    unsigned k = below(3), t = lo(), n = lo();
    base_reg(g, n, v6m ? 4 : align);
    put16(g, base[k] | (below(2) << 11) | ((rnd() & 0x1f) << 6) | (n << 3) | t);
    break;
  }
  case 3: /* SP-relative */
    base_reg(g, 13, 4);
    put16(g, 0x9000 | (rnd() & 0xfff));
    break;
  case 4: /* LDR literal (reads the code window) */
    put16(g, 0x4800 | (rnd() & 0x7ff));
    break;
  case 5: { /* PUSH/POP (no PC) */
    base_reg(g, 13, 4);
    unsigned list = rnd() & 0x1ff;
    if (!(list & 0xff) && !(list & 0x100)) list |= 1;
    if (below(2)) put16(g, 0xb400 | list);
    else put16(g, 0xbc00 | (list & 0xff) | ((list & 0xff) ? 0 : 1));
    break;
  }
  default: { /* STM/LDM */
    unsigned n = lo(), list = rnd() & 0xff, l = below(2);
    if (!l) list &= ~(1u << n);
    if (!list) list = n == 0 ? 2 : 1;
    base_reg(g, n, 4);
    put16(g, 0xc000 | (l << 11) | (n << 8) | list);
    break;
  }
  }
}

/* 16-bit branches: B<c>, B, CBZ/CBNZ (v7-M). */
static void g16_branch(struct gen *g, bool v6m)
{
  switch (below(v6m ? 2 : 3)) {
  case 0: put16(g, 0xd000 | (below(14) << 8) | (rnd() & 0xff)); break;
  case 1: put16(g, 0xe000 | (rnd() & 0x7ff)); break;
  default: {
    unsigned n = lo();
    if (below(2)) fix(g, n, 0);
    put16(g, 0xb100 | (below(2) << 11) | (below(2) << 9) | (rnd() & 0xf8) | n);
  }
  }
}

static const unsigned dp_ops[] = {0, 1, 2, 3, 4, 8, 10, 11, 13, 14};

/* Data processing (modified immediate) and (shifted register), A5.3.1/A5.3.11. */
static void g32_dp(struct gen *g)
{
  unsigned op = dp_ops[below(10)], s = below(2), n = reg(), d = reg();
  if ((op == 2 || op == 3) && below(3) == 0) n = 15; /* MOV/MVN */
  if (s && (op == 0 || op == 4 || op == 8 || op == 13) && below(3) == 0) d = 15; /* TST.. */
  if (below(2)) {
    put32(g, 0xf0000000u | (below(2) << 26) | (op << 21) | (s << 20) | (n << 16) |
                 ((rnd() & 0x7) << 12) | (d << 8) | (rnd() & 0xff));
  } else {
    put32(g, 0xea000000u | (op << 21) | (s << 20) | (n << 16) | ((rnd() & 0x7) << 12) |
                 (d << 8) | ((rnd() & 0xf) << 4) | reg());
  }
}

/* Plain binary immediate, A5.3.3. */
static void g32_plain(struct gen *g)
{
  unsigned n = reg(), d = reg(), imm3 = below(8), imm2 = below(4), imm8 = rnd() & 0xff;
  unsigned i = below(2);
  switch (below(8)) {
  case 0: /* ADDW/SUBW, ADR */
    if (below(4) == 0) n = 15;
    put32(g, 0xf2000000u | (i << 26) | (below(2) ? 0x00a00000u : 0) | (n << 16) | (imm3 << 12) | (d << 8) | imm8);
    break;
  case 1: /* MOVW/MOVT */
    put32(g, 0xf2400000u | (i << 26) | (below(2) << 23) | ((rnd() & 15) << 16) | (imm3 << 12) |
                 (d << 8) | imm8);
    break;
  case 2: case 3: { /* SSAT/USAT (not the 16-bit forms) */
    unsigned u = below(2), sh = below(2), sat = below(32);
    if (sh && !imm3 && !imm2) imm2 = 1;
    put32(g, 0xf3000000u | (u << 23) | (sh << 21) | (n << 16) | (imm3 << 12) | (d << 8) |
                 (imm2 << 6) | sat);
    break;
  }
  case 4: case 5: { /* SBFX/UBFX */
    unsigned lsb = (imm3 << 2) | imm2, w = 1 + below(32 - lsb);
    put32(g, 0xf3400000u | (below(2) << 23) | (n << 16) | (imm3 << 12) | (d << 8) | (imm2 << 6) |
                 (w - 1));
    break;
  }
  default: { /* BFI/BFC */
    unsigned lsb = (imm3 << 2) | imm2, msb = lsb + below(32 - lsb);
    if (below(4) == 0) n = 15;
    put32(g, 0xf3600000u | (n << 16) | (imm3 << 12) | (d << 8) | (imm2 << 6) | msb);
  }
  }
}

/* Data processing (register), A5.3.12: shifts by register, extends, misc. */
static void g32_reg(struct gen *g, bool dsp)
{
  unsigned n = reg(), d = reg(), m = reg();
  switch (below(3)) {
  case 0: put32(g, 0xfa00f000u | (below(8) << 20) | (n << 16) | (d << 8) | m); break;
  case 1: { /* SXTH UXTH SXTB UXTB (+A on DSP cores) */
    static const unsigned op1[4] = {0, 1, 4, 5};
    if (!dsp || below(2)) n = 15;
    put32(g, 0xfa00f080u | (op1[below(4)] << 20) | (n << 16) | (d << 8) | (below(4) << 4) | m);
    break;
  }
  default: { /* REV REV16 RBIT REVSH CLZ */
    unsigned k = below(5);
    if (k < 4) put32(g, 0xfa90f080u | (m << 16) | (d << 8) | (k << 4) | m);
    else put32(g, 0xfab0f080u | (m << 16) | (d << 8) | m);
  }
  }
}

/* Multiplies and divides, A5.3.16/A5.3.17. */
static void g32_mul(struct gen *g)
{
  unsigned n = reg(), d = reg(), m = reg(), a = reg();
  switch (below(3)) {
  case 0: /* MUL MLA MLS */
    if (below(3) == 0) put32(g, 0xfb00f000u | (n << 16) | (d << 8) | m);
    else put32(g, 0xfb000000u | (n << 16) | (a << 12) | (d << 8) | (below(2) << 4) | m);
    break;
  case 1: { /* SMULL UMULL SMLAL UMLAL */
    static const unsigned op1[4] = {0, 2, 4, 6};
    while (a == d) a = reg();
    put32(g, 0xfb800000u | (op1[below(4)] << 20) | (n << 16) | (d << 12) | (a << 8) | m);
    break;
  }
  default: /* SDIV UDIV */
    if (below(8) == 0) fix(g, m, 0);
    put32(g, 0xfb90f0f0u | (below(2) << 21) | (n << 16) | (d << 8) | m);
  }
}

/* Load/store single (A5.3.7-A5.3.10), all addressing modes. */
static void g32_ldst(struct gen *g)
{
  static const unsigned kinds[] = {0x00, 0x01, 0x02, 0x10, 0x11}; /* sign:size: B H W SB SH */
  unsigned k = kinds[below(5)], l = below(2), t = reg(), n = reg();
  if (k & 0x10) l = 1;
  unsigned h1 = 0xf800 | ((k & 0x10) << 4) | ((k & 3) << 5) | (l << 4);
  while (n == t) n = reg();
  switch (below(5)) {
  case 0: /* imm12 */
    base_reg(g, n, 1);
    put32(g, ((uint32_t)(h1 | 0x80 | n) << 16) | (t << 12) | (rnd() & 0x3ff));
    break;
  case 1: case 2: { /* imm8 with P/U/W */
    unsigned p = below(2), u = below(2), w = p ? below(2) : 1;
    base_reg(g, n, 1);
    put32(g, ((uint32_t)(h1 | n) << 16) | (t << 12) | 0x800 | (p << 10) | (u << 9) | (w << 8) |
                 (rnd() & 0xff));
    break;
  }
  case 3: { /* register offset */
    unsigned m = reg();
    while (m == n) m = reg();
    base_reg(g, n, 1);
    fix(g, m, below(256));
    put32(g, ((uint32_t)(h1 | n) << 16) | (t << 12) | (below(4) << 4) | m);
    break;
  }
  default: /* literal */
    if (!l) { base_reg(g, n, 1); put32(g, ((uint32_t)(h1 | 0x80 | n) << 16) | (t << 12) | (rnd() & 0x3ff)); break; }
    put32(g, ((uint32_t)(h1 | 0xf) << 16) | (below(2) << 23) | (t << 12) | (rnd() & 0x3ff));
  }
}

/* LDM/STM (A5.3.5), LDRD/STRD (A5.3.6), exclusives, TBB/TBH. */
static void g32_multi(struct gen *g)
{
  unsigned n = reg();
  switch (below(5)) {
  case 0: { /* LDM/STM IA/DB */
    unsigned l = below(2), w = below(2), db = below(2);
    unsigned list = rnd() & 0x1fff;
    list &= ~(1u << n);
    if (l && below(2)) list |= 1u << 14;
    while (__builtin_popcount(list) < 2) list |= 1u << below(13), list &= ~(1u << n);
    base_reg(g, n, 4);
    put32(g, (db ? 0xe9000000u : 0xe8800000u) | (w << 21) | (l << 20) | (n << 16) | list);
    break;
  }
  case 1: { /* LDRD/STRD imm */
    unsigned t = reg(), t2 = reg(), p = below(2), u = below(2), w = p ? below(2) : 1, l = below(2);
    while (t2 == t) t2 = reg();
    while (n == t || n == t2) n = reg();
    base_reg(g, n, 4);
    put32(g, 0xe8400000u | (p << 24) | (u << 23) | (w << 21) | (l << 20) | (n << 16) | (t << 12) |
                 (t2 << 8) | (rnd() & 0x3f));
    break;
  }
  case 2: { /* LDREX + STREX pair to the same address */
    unsigned t = reg(), d = reg(), imm = below(64);
    while (n == t) n = reg();
    while (d == n || d == t) d = reg();
    base_reg(g, n, 4);
    unsigned sz = below(3);
    if (sz == 2) {
      put32(g, 0xe8500f00u | (n << 16) | (t << 12) | imm);
      put32(g, 0xe8400000u | (n << 16) | (t << 12) | (d << 8) | imm);
    } else {
      put32(g, 0xe8d00f4fu | (n << 16) | (t << 12) | (sz << 4));
      put32(g, 0xe8c00f40u | (n << 16) | (t << 12) | (sz << 4) | d);
    }
    break;
  }
  case 3: { /* STREX without a monitor: fails with status 1 */
    unsigned t = reg(), d = reg();
    while (d == n || d == t) d = reg();
    base_reg(g, n, 4);
    put32(g, 0xf3bf8f2fu); /* CLREX */
    put32(g, 0xe8400000u | (n << 16) | (t << 12) | (d << 8));
    break;
  }
  default: { /* TBB/TBH through a RAM table */
    unsigned m = reg();
    while (m == n) m = reg();
    base_reg(g, n, 2);
    fix(g, m, below(64));
    put32(g, 0xe8d0f000u | (n << 16) | (below(2) << 4) | m);
  }
  }
}

/* 32-bit branches, MRS/MSR APSR, hints and barriers. */
static void g32_branch_misc(struct gen *g)
{
  uint32_t s = below(2), j1 = below(2), j2 = below(2);
  switch (below(6)) {
  case 0: /* B T3, target kept inside the code window: S = J1 = J2 */
    j1 = j2 = s;
    put32(g, 0xf0008000u | (s << 26) | (below(14) << 22) | ((rnd() & 0x3f) << 16) | (j1 << 13) |
                 (j2 << 11) | (rnd() & 0x7ff));
    break;
  case 1: case 2: { /* B T4, BL: keep the target inside the code window (|offset| < 256 KiB) */
    uint32_t imm10 = s ? 0x3c0 | (rnd() & 0x3f) : (rnd() & 0x3f);
    /* I1 = I2 = S for small offsets: J = !(I ^ S) = 1 */
    put32(g, 0xf0009000u | (below(2) << 14) | (s << 26) | (imm10 << 16) | (1u << 13) | (1u << 11) |
                 (rnd() & 0x7ff));
    break;
  }
  case 3: /* MSR APSR_nzcvq, Rn ; MRS Rd, APSR */
    if (below(2)) put32(g, 0xf3808800u | (reg() << 16));
    else put32(g, 0xf3ef8000u | (reg() << 8));
    break;
  case 4: { /* NOP.W, YIELD.W, SEV? no: only NOP/YIELD, and barriers, CLREX */
    /* YIELD is not generated: Unicorn ends emulation on it (docs/vm.md) */
    static const uint32_t k[] = {0xf3af8000u, 0xf3bf8f4fu, 0xf3bf8f5fu, 0xf3bf8f6fu, 0xf3bf8f2fu};
    put32(g, k[below(5)]);
    break;
  }
  default: /* BX / BLX register with an odd (Thumb) target inside the code window */
    {
      unsigned m = reg();
      fix(g, m, (CODE_AT + 0x100 + below(256) * 2) | 1);
      put16(g, 0x4700 | (below(2) << 7) | (m << 3));
    }
  }
}

/* DSP-extension encodings (routed to exec_dsp.c): checks the routing. */
static void g32_dsp(struct gen *g)
{
  unsigned n = reg(), d = reg(), m = reg(), a = reg();
  switch (below(9)) {
  case 0: /* parallel add/sub, signed and unsigned, plain/saturating/halving */
    put32(g, 0xfa80f000u | (below(8) << 20) | (n << 16) | (d << 8) | (below(7) << 4) | m);
    if ((g->hw[g->nhw - 2] & 0x70) == 0x30 || (g->hw[g->nhw - 2] & 0x70) == 0x70)
      g->hw[g->nhw - 2] &= (uint16_t)~0x20; /* op1 x11 is unallocated: use x01 */
    if ((g->hw[g->nhw - 1] & 0x30) == 0x30)
      g->hw[g->nhw - 1] &= (uint16_t)~0x10;
    break;
  case 1: put32(g, 0xfa80f080u | (below(4) << 4) | (n << 16) | (d << 8) | m); break; /* QADD.. */
  case 2: put32(g, 0xfaa0f080u | (n << 16) | (d << 8) | m); break;                  /* SEL */
  case 3: /* SXTB16/UXTB16 (+A) */
    put32(g, 0xfa20f080u | (below(2) << 20) | ((below(2) ? n : 15) << 16) | (d << 8) |
                 (below(4) << 4) | m);
    break;
  case 4: /* SMLAxy / SMULxy */
    put32(g, 0xfb100000u | (n << 16) | ((below(2) ? a : 15) << 12) | (d << 8) | (below(4) << 4) | m);
    break;
  case 5: /* SMLAD/SMUAD, SMLSD/SMUSD, SMMLA/SMMUL */
    put32(g, 0xfb000000u | ((2 + below(2) * 2 + (below(3) == 0)) << 20) | (n << 16) |
                 ((below(2) ? a : 15) << 12) | (d << 8) | (below(2) << 4) | m);
    break;
  case 6: { /* SMLALxy, UMAAL */
    while (a == d) a = reg();
    if (below(2)) put32(g, 0xfbc00080u | (n << 16) | (d << 12) | (a << 8) | (below(4) << 4) | m);
    else put32(g, 0xfbe00060u | (n << 16) | (d << 12) | (a << 8) | m);
    break;
  }
  case 7: /* PKHBT/PKHTB */
    put32(g, 0xeac00000u | (n << 16) | (below(8) << 12) | (d << 8) | (below(4) << 6) |
                 (below(2) << 5) | m);
    break;
  default: /* SSAT16/USAT16 */
    put32(g, 0xf3200000u | (below(2) << 23) | (n << 16) | (d << 8) | below(16));
  }
}

/* ARMv8-M Mainline: load-acquire / store-release (exclusive and plain). */
static void g32_v8m(struct gen *g)
{
  unsigned n = reg(), t = reg(), d = reg();
  while (t == n) t = reg();
  while (d == n || d == t) d = reg();
  unsigned sz = below(3); /* B H W */
  base_reg(g, n, 4);
  switch (below(3)) {
  case 0: put32(g, 0xe8d00f8fu | (n << 16) | (t << 12) | (sz << 4)); break; /* LDA(B/H) */
  case 1: put32(g, 0xe8c00f8fu | (n << 16) | (t << 12) | (sz << 4)); break; /* STL(B/H) */
  default: /* LDAEX + STLEX */
    put32(g, 0xe8d00fcfu | (n << 16) | (t << 12) | (sz << 4));
    put32(g, 0xe8c00fc0u | (n << 16) | (t << 12) | (sz << 4) | d);
  }
}

/* An IT block: IT plus 1-4 conditional data-processing instructions. */
static void g_it(struct gen *g)
{
  unsigned fc = below(14), n = 1 + below(4), mask;
  unsigned bits = 0;
  for (unsigned i = 1; i < n; i++)
    bits |= below(2) << (4 - i);
  mask = bits | (1u << (4 - n));
  /* the mask bits are relative to firstcond[0] */
  for (unsigned i = 1; i < n; i++)
    if (fc & 1) mask ^= 0; /* bits as generated: T/E random either way */
  put16(g, 0xbf00 | (fc << 4) | (mask & 0xf));
  unsigned ninsn = g->ninsn;
  for (unsigned i = 0; i < n; i++) {
    unsigned saved = g->ninsn;
    switch (below(4)) {
    case 0: g16_dp(g); break;
    case 1: g32_dp(g); break;
    case 2: g32_plain(g); break;
    default: g32_reg(g, false); break;
    }
    (void)saved;
  }
  (void)ninsn;
}

/* ---- running a case on both --------------------------------------------- */

struct ctx {
  struct sonde_vm *vm;
  struct uref *u;
  enum sonde_vm_core core;
  const char *name;
  unsigned long cases, insns, mismatches, both_faulted, skipped;
  uint8_t data[DATA_SIZE];
  uint8_t code_fill[0x800];
};

static void dump_case(const struct gen *g)
{
  fprintf(stderr, "  code:");
  for (unsigned i = 0; i < g->nhw; i++)
    fprintf(stderr, " %04x", g->hw[i]);
  fprintf(stderr, "\n");
}

static void reset_sys(struct sonde_vm *vm)
{
  vm->attention = 0;
  memset(vm->sys.nvic_pending, 0, sizeof vm->sys.nvic_pending);
  memset(vm->sys.nvic_active, 0, sizeof vm->sys.nvic_active);
  vm_sys_nvic_changed(&vm->sys);
  vm->sys.cfsr = vm->sys.hfsr = 0;
  vm->cpu.locked_up = false;
  vm->cpu.sleeping = false;
}

/* Returns false on a mismatch. `per_insn`: compare after every instruction. */
static bool run_case(struct ctx *x, struct gen *g, bool per_insn)
{
  struct sonde_vm *vm = x->vm;
  struct uref_state st;
  memset(&st, 0, sizeof st);
  for (unsigned r = 0; r < 13; r++)
    st.r[r] = g->fixed[r] ? g->val[r] : operand();
  st.r[13] = g->fixed[13] ? g->val[13] : (DATA_MID + 0x1000) & ~3u;
  st.r[14] = operand();
  st.apsr = rnd() & (x->core == SONDE_VM_CORE_M3 || x->core == SONDE_VM_CORE_M0PLUS
                         ? 0xf8000000u
                         : 0xf80f0000u);
  if (x->core == SONDE_VM_CORE_M0PLUS)
    st.apsr &= 0xf0000000u;
  /* memory: random data window, code window filled around the code */
  for (unsigned i = 0; i < DATA_SIZE; i++)
    x->data[i] = (uint8_t)rnd();
  /* plain uc_mem_write: no code lives in the data window */
  uc_mem_write((uc_engine *)uref_engine(x->u), DATA_LO, x->data, DATA_SIZE);
  memcpy(tc_ram(vm) + (DATA_LO - TC_RAM_BASE), x->data, DATA_SIZE);
  /* literal loads reach 1 KiB (+4) beyond the code; the rest stays as is */
  uint16_t code[0x220];
  for (unsigned i = 0; i < 0x220; i++)
    code[i] = (uint16_t)rnd();
  memcpy(code, g->hw, g->nhw * 2);
  uc_mem_write((uc_engine *)uref_engine(x->u), CODE_AT, code, sizeof code);
  uc_ctl_remove_cache((uc_engine *)uref_engine(x->u), CODE_AT, CODE_AT + sizeof code);
  tc_code(vm, CODE_AT, code, 0x220);

  uref_set_state(x->u, &st);
  memcpy(vm->cpu.r, st.r, sizeof st.r);
  vm->cpu.r[15] = CODE_AT;
  vm->cpu.apsr = st.apsr;
  vm->cpu.epsr = 1u << 24;
  vm->cpu.itstate = 0;
  vm->cpu.excl_valid = false;
  reset_sys(vm);
  x->cases++;

  bool has_it = (g->hw[0] & 0xff00) == 0xbf00 && (g->hw[0] & 0xf);
  unsigned steps = per_insn && !has_it ? 1 : g->ninsn;
  uint32_t upc = CODE_AT;
  unsigned done = 0;
  while (done < g->ninsn) {
    int urc;
    if (has_it) { /* Unicorn's instruction count skips condition-failed ones: run to the end */
      /* a non-zero count keeps Unicorn from flushing its translations */
      uc_err e = uc_emu_start((uc_engine *)uref_engine(x->u), upc | 1, CODE_AT + g->nhw * 2, 0, 64);
      urc = e == UC_ERR_OK ? 0 : -1;
    } else {
      urc = uref_run(x->u, upc, steps);
    }
    struct uref_state ref;
    uref_get_state(x->u, &ref);
    bool vm_ok = true;
    for (unsigned i = 0; i < steps && vm_ok; i++)
      vm_ok = tc_step(vm);
    done += steps;
    x->insns += steps;
    if (urc != 0) {
      if (!vm_ok) {
        if (getenv("SONDE_CPU_DIFF_VERBOSE")) {
          fprintf(stderr, "%s: both faulted (%s, cfsr 0x%08x)\n", x->name, uref_error(x->u),
                  vm->sys.cfsr);
          dump_case(g);
        }
        x->both_faulted++;
        return true;
      }
      fprintf(stderr, "%s: unicorn stopped (%s), the VM did not\n", x->name, uref_error(x->u));
      dump_case(g);
      x->mismatches++;
      return false;
    }
    if (!vm_ok) {
      fprintf(stderr, "%s: the VM faulted (cfsr 0x%08x), unicorn did not\n", x->name,
              vm->sys.cfsr);
      dump_case(g);
      x->mismatches++;
      return false;
    }
    char why[96] = "";
    for (unsigned r = 0; r < 16 && !why[0]; r++)
      if (vm->cpu.r[r] != ref.r[r])
        snprintf(why, sizeof why, "r%u vm 0x%08x ref 0x%08x", r, vm->cpu.r[r], ref.r[r]);
    uint32_t amask = x->core == SONDE_VM_CORE_M3 || x->core == SONDE_VM_CORE_M0PLUS ? 0xf8000000u
                                                                                    : 0xf80f0000u;
    if (!why[0] && (vm->cpu.apsr & amask) != (ref.apsr & amask))
      snprintf(why, sizeof why, "apsr vm 0x%08x ref 0x%08x", vm->cpu.apsr, ref.apsr);
    if (!why[0] && g->mem) {
      static uint8_t udata[DATA_SIZE];
      uref_read_mem(x->u, DATA_LO, udata, DATA_SIZE);
      const uint8_t *vdata = tc_ram(vm) + (DATA_LO - TC_RAM_BASE);
      for (unsigned i = 0; i < DATA_SIZE && !why[0]; i++)
        if (udata[i] != vdata[i])
          snprintf(why, sizeof why, "mem 0x%08x vm 0x%02x ref 0x%02x", DATA_LO + i, vdata[i],
                   udata[i]);
    }
    if (why[0]) {
      fprintf(stderr, "%s: after %u insn(s): %s\n", x->name, done, why);
      dump_case(g);
      x->mismatches++;
      return false;
    }
    upc = ref.r[15];
  }
  return true;
}

static void gen_case(struct gen *g, enum sonde_vm_core core, unsigned cls)
{
  memset(g, 0, sizeof *g);
  bool v6m = core == SONDE_VM_CORE_M0PLUS;
  bool dsp = core != SONDE_VM_CORE_M3 && !v6m;
  (void)dsp;
  if (v6m) {
    switch (cls % 3) {
    case 0: g16_dp(g); break;
    case 1: g16_mem(g, true); break;
    default: g16_branch(g, true); break;
    }
    return;
  }
  switch (cls % 12) {
  case 0: g16_dp(g); break;
  case 1: g16_mem(g, false); break;
  case 2: g16_branch(g, false); break;
  case 3: case 4: g32_dp(g); break;
  case 5: g32_plain(g); break;
  case 6: g32_reg(g, dsp); break;
  case 7: g32_mul(g); break;
  case 8: g32_ldst(g); break;
  case 9: g32_multi(g); break;
  case 10: g32_branch_misc(g); break;
  default:
    if (core == SONDE_VM_CORE_M33 && below(3) == 0) g32_v8m(g);
    else if (dsp && below(3) == 0) g32_dsp(g);
    else g_it(g);
    break;
  }
}

static void run_core(enum sonde_vm_core core, enum uref_core ucore, const char *name,
                     unsigned long n)
{
  struct ctx *x = calloc(1, sizeof *x);
  REQUIRE(x);
  x->vm = tc_vm_new(core);
  x->u = uref_new(ucore);
  x->core = core;
  x->name = name;
  REQUIRE(x->vm && x->u);
  unsigned long shown = 0;
  for (unsigned long i = 0; i < n; i++) {
    struct gen g;
    gen_case(&g, core, (unsigned)i);
    /* a sequence of several instructions every 4th case */
    if (i % 4 == 3 && !((g.hw[0] & 0xff00) == 0xbf00)) {
      struct gen g2;
      gen_case(&g2, core, (unsigned)(i / 4 * 7 + 1));
      bool branch = false;
      for (unsigned k = 0; k < g.nhw; k++)
        if ((g.hw[k] & 0xf000) == 0xd000 || (g.hw[k] & 0xf800) == 0xe000 ||
            (g.hw[k] & 0xf500) == 0xb100 || (g.hw[k] & 0xff00) == 0x4700 ||
            (g.hw[k] & 0xf800) == 0xf000 || (g.hw[k] & 0xfff0) == 0xe8d0)
          branch = true;
      /* Unicorn's ARMv6-M model does not fault unaligned accesses (docs/vm.md),
       * so ARMv6-M sequences never feed a computed address to a load/store */
      if (core == SONDE_VM_CORE_M0PLUS && g2.mem)
        branch = true;
      /* the first instruction may overwrite the second's address register */
      for (unsigned r = 0; r < 16; r++)
        if (g2.fixed[r])
          branch = true;
      if (!branch && g.nhw + g2.nhw <= 16 && !((g2.hw[0] & 0xff00) == 0xbf00)) {
        for (unsigned r = 0; r < 16; r++)
          if (g2.fixed[r] && !g.fixed[r]) { g.fixed[r] = 1; g.val[r] = g2.val[r]; }
          else if (g2.fixed[r] && g.fixed[r]) { g2.fixed[r] = 0; }
        memcpy(g.hw + g.nhw, g2.hw, g2.nhw * 2);
        g.nhw += g2.nhw;
        g.ninsn += g2.ninsn;
        g.mem |= g2.mem;
      }
    }
    if (!run_case(x, &g, true) && ++shown > 20)
      break;
  }
  printf("%s: %lu cases, %lu instructions, %lu both faulted, %lu mismatches\n", name, x->cases,
         x->insns, x->both_faulted, x->mismatches);
  CHECK_EQ_U(x->mismatches, 0);
  tc_vm_free(x->vm);
  uref_free(x->u);
  free(x);
}

static void test_m3_random(void) { run_core(SONDE_VM_CORE_M3, UREF_CORTEX_M3, "m3", soak(16000)); }
static void test_m4_random(void) { run_core(SONDE_VM_CORE_M4, UREF_CORTEX_M4, "m4", soak(8000)); }
static void test_m33_random(void) { run_core(SONDE_VM_CORE_M33, UREF_CORTEX_M33, "m33", soak(4000)); }
static void test_m0_random(void) { run_core(SONDE_VM_CORE_M0PLUS, UREF_CORTEX_M0, "m0+", soak(6000)); }

int main(void)
{
  RUN(test_m3_random);
  RUN(test_m4_random);
  RUN(test_m33_random);
  RUN(test_m0_random);
  return check_summary();
}
