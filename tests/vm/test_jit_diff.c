/* The block compiler (src/vm/jit_x64.c) against Unicorn and against the
 * VM's own other executors, on random programs.
 *
 * Each case is a loop of random instructions, mostly of the kinds the
 * compiler covers (data processing of every operand form and flag setting,
 * loads and stores of every addressing mode, some unaligned, PUSH/POP, LDM,
 * STM, forward B<c>/CBZ/CBNZ, BL to leaf functions that return with BX LR or
 * POP {pc}, multiplies, bit fields, extends, ADR, MOVW/MOVT), with some it
 * does not (IT blocks, divides, CLZ, LDRD/STRD, MRS) mixed in so that its
 * code is left and re-entered mid-block. The loop runs 1-6 times, then
 * branches to UREF_STOP.
 *
 * - Unicorn runs it from random registers, flags and data: the VM (compiled,
 *   the default) must end with the same r0-r14, N Z C V (and GE), data
 *   window and stack.
 * - The VM runs it three ways, stopped at the same pseudo-random cycle
 *   limits (1-40 cycles apart: inside blocks, on their edges): compiled,
 *   with the compiler off (the block executor interprets), and one
 *   instruction at a time (a retire hook: the ground-truth path). At every
 *   stop the cycle and instruction counts, r0-r15 and xPSR must be equal.
 *
 * - The same on an m3 with a memory system (the timing model's cycles): its
 *   block executor runs the model's variant and compiles nothing.
 *
 * SONDE_JIT_DIFF_CASES=N sets the number of cases per core (default 400). */
#include "check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"
#include "unicorn_ref.h"
#include "vm/machine.h"
#include "vm_state_util.h"

#if defined(__x86_64__) && defined(__linux__)
#define HAVE_JIT 1 /* the hosts src/vm/jit_x64.c compiles for (and CI runs on) */
#else
#define HAVE_JIT 0
#endif

#define CODE_AT 0x100u
#define STACK_TOP 0x20080000u
#define DATA_LO 0x20010000u
#define DATA_SIZE 0x10000u
#define DATA_MID (DATA_LO + DATA_SIZE / 2)
#define STACK_LO (STACK_TOP - 0x400u)
#define STACK_HI (STACK_TOP + 0x400u) /* SP-relative accesses reach above the top */
#define MAX_HW 4096

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}
static unsigned below(unsigned n) { return rnd() % n; }

/* ---- the program ---------------------------------------------------------------- */

/* One item: 1 to 5 instructions' halfwords (an IT block is one item); `skip` > 0: a forward branch
 * over the next `skip` items, encoded once the layout is known. */
struct item {
  uint16_t hw[12];
  unsigned n;    /* halfwords (up to five instructions) */
  unsigned skip; /* forward branch over this many items */
  unsigned kind; /* for skip: 0 B<c> (cond), 1 CBZ, 2 CBNZ */
  unsigned cond, rn;
  bool call;     /* BL to leaf `leaf` */
  unsigned leaf;
};

struct prog {
  struct item it[400];
  unsigned n;
  bool v6m, dsp, v8m;
};

static struct item *add(struct prog *p)
{
  struct item *i = &p->it[p->n++];
  memset(i, 0, sizeof *i);
  return i;
}

static void h16(struct prog *p, unsigned v)
{
  struct item *i = add(p);
  i->hw[0] = (uint16_t)v;
  i->n = 1;
}

static void h32(struct prog *p, unsigned a, unsigned b)
{
  struct item *i = add(p);
  i->hw[0] = (uint16_t)a;
  i->hw[1] = (uint16_t)b;
  i->n = 2;
}

/* Append an instruction to the last item (a pair a forward branch skips
 * whole: MOVS rX, #imm then a load/store offset by rX). */
static void join16(struct prog *p, unsigned v) { p->it[p->n - 1].hw[p->it[p->n - 1].n++] = (uint16_t)v; }
static void join32(struct prog *p, unsigned a, unsigned b)
{
  join16(p, a);
  join16(p, b);
}

/* Destinations random instructions may write: r6 (low base), r7 (the loop
 * counter), r8/r9 (bases), sp and lr are kept. */
static unsigned lo_dst(void) { return below(6); }                      /* r0-r5 */
static unsigned lo_src(void) { return below(8); }                      /* r0-r7 */
static unsigned hi_dst(void) { static const unsigned d[] = {0, 1, 2, 3, 4, 5, 10, 11, 12}; return d[below(9)]; }
static unsigned any_src(void) { return below(13); }                    /* r0-r12 */

/* A modified immediate (ThumbExpandImm): i:imm3:imm8 of every kind */
static unsigned mod_imm(void)
{
  unsigned imm12;
  switch (below(4)) {
  case 0: imm12 = below(256); break;                       /* 00000000 000000XY */
  case 1: imm12 = (1u + below(3)) << 8 | below(256); break; /* the replicated forms */
  default: imm12 = (8u + below(24)) << 7 | (below(128)); break; /* rotated, bit 7 set */
  }
  return (imm12 >> 11 & 1) << 26 | (imm12 >> 8 & 7) << 12 | (imm12 & 0xff);
}

static void gen_dp16(struct prog *p)
{
  const unsigned d = lo_dst(), n = lo_src(), m = lo_src();
  switch (below(8)) {
  case 0: h16(p, 0x2000 | d << 8 | below(256)); break;                   /* MOVS #imm8 */
  case 1: h16(p, (below(2) ? 0x1800 : 0x1a00) | m << 6 | n << 3 | d); break; /* ADDS/SUBS reg */
  case 2: h16(p, (below(2) ? 0x1c00 : 0x1e00) | below(8) << 6 | n << 3 | d); break; /* #imm3 */
  case 3: { /* CMP/ADDS/SUBS #imm8 */
    static const unsigned op[] = {0x2800, 0x3000, 0x3800};
    unsigned o = op[below(3)];
    h16(p, o | (o == 0x2800 ? n : d) << 8 | below(256));
    break;
  }
  case 4: { /* the register data-processing group (not MUL: gen_mul) */
    static const unsigned ops[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15};
    unsigned op = ops[below(15)];
    bool nowrite = op == 8 || op == 10 || op == 11;
    h16(p, 0x4000 | op << 6 | m << 3 | (nowrite ? n : d));
    break;
  }
  case 5: /* LSLS/LSRS/ASRS #imm5 */
    h16(p, below(3) << 11 | below(32) << 6 | m << 3 | d);
    break;
  case 6: /* MOV/ADD with high registers (no flags): ADD Rd, Rm reads Rd */
    if (p->v6m || below(2))
      h16(p, 0x4600 | any_src() << 3 | d); /* MOV rd, rm */
    else
      h16(p, 0x4400 | any_src() << 3 | d); /* ADD rd, rm */
    break;
  default: /* SXTH/SXTB/UXTH/UXTB */
    h16(p, 0xb200 | below(4) << 6 | m << 3 | d);
    break;
  }
}

static void gen_dp32(struct prog *p)
{
  static const unsigned ops[] = {0, 1, 2, 3, 4, 8, 10, 11, 13, 14};
  const unsigned op = ops[below(10)], s = below(2);
  unsigned d = hi_dst(), n = any_src();
  /* the compare forms: Rd = 15 with S (TST, TEQ, CMN, CMP) */
  if ((op == 0 || op == 4 || op == 8 || op == 13) && below(4) == 0) {
    if (below(2)) { /* immediate */
      unsigned imm = mod_imm();
      h32(p, 0xf000 | (imm >> 26 & 1) << 10 | op << 5 | 1 << 4 | n, (imm & 0x7fff) | 15u << 8);
    } else {
      h32(p, 0xea00 | op << 5 | 1 << 4 | n, below(8) << 12 | 15u << 8 | below(4) << 6 |
                                                  below(4) << 4 | any_src());
    }
    return;
  }
  /* MOV/MVN: ORR/ORN with Rn = 15 */
  if ((op == 2 || op == 3) && below(3) == 0)
    n = 15;
  if (below(2)) { /* modified immediate */
    unsigned imm = mod_imm();
    h32(p, 0xf000 | (imm >> 26 & 1) << 10 | op << 5 | s << 4 | n, (imm & 0x7fff) | d << 8);
  } else { /* shifted register: LSL LSR ASR ROR by 0-31 (ROR #0 is RRX) */
    unsigned sh = below(32), type = below(4);
    h32(p, 0xea00 | op << 5 | s << 4 | n,
        (sh >> 2) << 12 | d << 8 | (sh & 3) << 6 | type << 4 | any_src());
  }
}

static void gen_misc32(struct prog *p)
{
  const unsigned d = hi_dst();
  switch (below(7)) {
  case 0: case 1: { /* MOVW / MOVT */
    unsigned imm = rnd() & 0xffff;
    h32(p, (below(2) ? 0xf240 : 0xf2c0) | (imm >> 11 & 1) << 10 | imm >> 12,
        (imm >> 8 & 7) << 12 | d << 8 | (imm & 0xff));
    break;
  }
  case 2: { /* UBFX / SBFX */
    unsigned lsb = below(32), w = 1 + below(32 - lsb);
    h32(p, (below(2) ? 0xf3c0 : 0xf340) | any_src(),
        (lsb >> 2) << 12 | d << 8 | (lsb & 3) << 6 | (w - 1));
    break;
  }
  case 3: { /* SXTH/UXTH/SXTB/UXTB.W with rotation; the accumulating forms with DSP */
    static const unsigned op[] = {0xfa00, 0xfa10, 0xfa40, 0xfa50};
    unsigned n = p->dsp && below(2) ? any_src() : 15;
    h32(p, op[below(4)] | n, 0xf080 | d << 8 | below(4) << 4 | any_src());
    break;
  }
  case 4: /* MUL / MLA / MLS */
    switch (below(3)) {
    case 0: h32(p, 0xfb00 | any_src(), 0xf000 | d << 8 | any_src()); break;
    case 1: h32(p, 0xfb00 | any_src(), any_src() << 12 | d << 8 | any_src()); break;
    default: h32(p, 0xfb00 | any_src(), any_src() << 12 | d << 8 | 0x10 | any_src()); break;
    }
    break;
  case 5: /* ADR.W (add) */
    h32(p, 0xf20f | (below(2) << 10), below(8) << 12 | d << 8 | below(256));
    break;
  default: /* not compiled: UDIV/SDIV, CLZ, MRS APSR */
    switch (below(3)) {
    case 0: h32(p, (below(2) ? 0xfbb0 : 0xfb90) | any_src(), 0xf0f0 | d << 8 | any_src()); break;
    case 1: { unsigned m = any_src(); h32(p, 0xfab0 | m, 0xf080 | d << 8 | m); break; }
    default: h32(p, 0xf3ef, 0x8000 | d << 8); break;
    }
    break;
  }
}

/* Loads and stores through r6 (low), r8 and r9 (high) near DATA_MID. On
 * ARMv7-M word and halfword accesses may be unaligned (the compiled code
 * leaves those to exec_insn); writeback steps keep the bases aligned. */
static void gen_mem(struct prog *p)
{
  const unsigned t = lo_dst();
  const bool al = p->v6m;
  unsigned c = below(p->v6m ? 4 : 9);
  switch (c) {
  case 0: { /* 16-bit immediate: STR/LDR, STRB/LDRB, STRH/LDRH */
    static const unsigned op[] = {0x6000, 0x6800, 0x7000, 0x7800, 0x8000, 0x8800};
    h16(p, op[below(6)] | below(32) << 6 | 6u << 3 | t);
    break;
  }
  case 1: { /* 16-bit register offset: MOVS rX, #imm8 first */
    unsigned x = lo_dst();
    h16(p, 0x2000 | x << 8 | (al ? below(64) * 4 : below(256)));
    unsigned op = below(8);
    if (al && op != 2 && op != 3 && op != 6) /* words and halfwords aligned on v6-M */
      op = 4;
    join16(p, 0x5000 | op << 9 | x << 6 | 6u << 3 | (t == x ? (x + 1) % 6 : t));
    break;
  }
  case 2: /* SP-relative */
    h16(p, (below(2) ? 0x9000 : 0x9800) | t << 8 | below(32));
    break;
  case 3: /* literal */
    h16(p, 0x4800 | t << 8 | below(64));
    break;
  case 4: { /* T3: imm12 */
    static const unsigned op[] = {0xf8c0, 0xf8d0, 0xf880, 0xf890, 0xf8a0, 0xf8b0, 0xf990, 0xf9b0};
    h32(p, op[below(8)] | (below(2) ? 8 : 9), hi_dst() << 12 | below(2048));
    break;
  }
  case 5: case 6: { /* T4: negative offset, pre- or post-indexed with writeback */
    static const unsigned op[] = {0xf840, 0xf850, 0xf800, 0xf810, 0xf820, 0xf830, 0xf910, 0xf930};
    unsigned k = below(3), pu, imm = below(256);
    if (k == 0)
      pu = 4; /* P=1 U=0 W=0 */
    else
      pu = (k == 1 ? 5 : 1) | below(2) << 1, imm &= ~3u; /* pre/post, W=1, aligned step */
    unsigned rt = hi_dst(), rn = below(2) ? 8 : 9;
    h32(p, op[below(8)] | rn, rt << 12 | 1u << 11 | pu << 8 | imm);
    break;
  }
  case 7: { /* T2: register offset with LSL #0-3 */
    static const unsigned op[] = {0xf840, 0xf850, 0xf800, 0xf810, 0xf820, 0xf830, 0xf910, 0xf930};
    unsigned x = lo_dst(), t2 = hi_dst();
    h16(p, 0x2000 | x << 8 | below(256));
    join32(p, op[below(8)] | (below(2) ? 8 : 9), t2 << 12 | below(4) << 4 | x);
    break;
  }
  default: /* not compiled: LDRD/STRD, aligned, offset */
    h32(p, (below(2) ? 0xe9d0 : 0xe9c0) | 8, lo_dst() << 12 | (10 + below(3)) << 8 | below(64));
    break;
  }
}

/* LDM/STM through r8/r9 (IA/DB, with or without writeback, aligned) and
 * PUSH/POP of low registers and lr/pc pairs that balance. */
static void gen_multi(struct prog *p)
{
  unsigned list = 1 + below(0x3f); /* r0-r5 */
  if (p->v6m || below(2)) {
    h16(p, 0xb400 | list); /* PUSH {list}; one instruction; POP {list}: one item */
    gen_dp16(p);
    p->n--;
    join16(p, p->it[p->n].hw[0]);
    join16(p, 0xbc00 | list);
    return;
  }
  unsigned rn = below(2) ? 8 : 9, w = below(2);
  unsigned l2 = list | (below(2) ? 1u << 10 : 0) | (below(2) ? 1u << 12 : 0);
  if (__builtin_popcount(l2) < 2) /* LDM/STM.W of one register is UNPREDICTABLE */
    l2 |= 1u << 12;
  if (below(2)) { /* STMIA / STMDB */
    h32(p, (below(2) ? 0xe880 : 0xe900) | w << 5 | rn, l2);
  } else {        /* LDMIA / LDMDB */
    h32(p, (below(2) ? 0xe890 : 0xe910) | w << 5 | rn, l2);
  }
}

static void gen_branch(struct prog *p)
{
  struct item *i = add(p);
  i->skip = 1 + below(3);
  i->n = 1;
  if (!p->v6m && below(3) == 0) {
    i->kind = 1 + below(2);
    i->rn = lo_src();
  } else {
    i->kind = 0;
    i->cond = below(14);
  }
}

/* Merge items [from, p->n) into one (an IT block: a branch never lands inside) */
static void merge_from(struct prog *p, unsigned from)
{
  struct item *to = &p->it[from];
  for (unsigned i = from + 1; i < p->n; i++)
    for (unsigned k = 0; k < p->it[i].n; k++)
      to->hw[to->n++] = p->it[i].hw[k];
  p->n = from + 1;
}

/* IT, ITT, ITE, ... with 1-4 instructions: mostly data processing (16-bit
 * ones set no flags inside; 32-bit ones with S do), bit fields, MOVW/MOVT,
 * loads and stores (which compiled code runs in IT blocks on a machine with
 * a memory system, unaligned ones through exec_insn), sometimes one the
 * compiler leaves to exec_insn (MUL, UDIV...). */
static void gen_it(struct prog *p)
{
  if (p->v6m) {
    gen_dp16(p);
    return;
  }
  const unsigned len = 1 + below(4), fc = below(15); /* AL (14): all "then" */
  unsigned mask = 1u << (4 - len);
  for (unsigned j = 1; j < len; j++) {
    unsigned then = fc == 14 || below(2);
    mask |= ((then ? fc : fc ^ 1) & 1) << (4 - j);
  }
  const unsigned from = p->n;
  h16(p, 0xbf00 | fc << 4 | mask);
  for (unsigned j = 0; j < len; j++) {
    switch (below(10)) {
    case 0: case 1: case 2: gen_dp16(p); break;
    case 3: case 4: gen_dp32(p); break;
    case 5: case 6: gen_misc32(p); break;
    case 7: h16(p, 0x6800 | below(32) << 6 | 6u << 3 | lo_dst()); break; /* LDR */
    case 8: h16(p, 0x6000 | below(32) << 6 | 6u << 3 | lo_dst()); break; /* STR */
    default: /* LDR/STRH [r6, r7]: unaligned when r7 is odd (exec_insn's) */
      h16(p, (below(2) ? 0x5800 : 0x5200) | 7u << 6 | 6u << 3 | lo_dst());
      break;
    }
  }
  merge_from(p, from);
}

static void gen_insn(struct prog *p)
{
  unsigned k = below(p->v6m ? 10 : 16);
  if (p->v6m) {
    if (k < 5) gen_dp16(p);
    else if (k < 7) gen_mem(p);
    else if (k == 7) gen_multi(p);
    else if (k == 8) gen_branch(p);
    else { struct item *i = add(p); i->call = true; i->leaf = below(2); i->n = 2; }
    return;
  }
  if (k < 3) gen_dp16(p);
  else if (k < 6) gen_dp32(p);
  else if (k < 8) gen_misc32(p);
  else if (k < 11) gen_mem(p);
  else if (k == 11) gen_multi(p);
  else if (k == 12) gen_branch(p);
  else if (k == 13) gen_it(p);
  else { struct item *i = add(p); i->call = true; i->leaf = below(2); i->n = 2; }
}

/* BL / B.W (T4) from `from` to `to` */
static void enc_bl(uint16_t *hw, uint32_t from, uint32_t to, bool link)
{
  int32_t off = (int32_t)(to - (from + 4));
  uint32_t s = (uint32_t)off >> 31 & 1, i1 = (uint32_t)off >> 23 & 1, i2 = (uint32_t)off >> 22 & 1;
  uint32_t j1 = (!i1) ^ s, j2 = (!i2) ^ s;
  hw[0] = (uint16_t)(0xf000 | s << 10 | ((uint32_t)off >> 12 & 0x3ff));
  hw[1] = (uint16_t)((link ? 0xd000 : 0x9000) | j1 << 13 | j2 << 11 | ((uint32_t)off >> 1 & 0x7ff));
}

/* Lay the program out at CODE_AT: the loop body, SUBS r7 and the branch
 * back, BL to UREF_STOP, then leaf 0 (PUSH {r4, lr} ... POP {r4, pc}) and
 * leaf 1 (... BX LR), whose items follow the body's. Returns the halfwords
 * written. */
static unsigned layout(struct prog *p, unsigned body, uint16_t *out)
{
  uint32_t addr[400 + 1];
  uint32_t a = CODE_AT;
  for (unsigned i = 0; i < body; i++) {
    addr[i] = a;
    a += 2 * p->it[i].n;
  }
  addr[body] = a;
  const uint32_t loop_end = a; /* SUBS r7, #1; BEQ +0; B start; BL UREF_STOP */
  const uint32_t leaf0 = loop_end + 10;
  const unsigned nleaf = (p->n - body) / 2;
  uint32_t leaf1 = leaf0 + 2;
  for (unsigned i = body; i < body + nleaf; i++)
    leaf1 += 2 * p->it[i].n;
  leaf1 += 2;
  unsigned w = 0;
  for (unsigned i = 0; i < body; i++) {
    struct item *it = &p->it[i];
    if (it->skip) {
      unsigned to = i + 1 + it->skip;
      if (to > body)
        to = body;
      uint32_t off = addr[to] - (addr[i] + 4);
      if (it->kind == 0) {
        it->hw[0] = (uint16_t)(0xd000 | it->cond << 8 | (off >> 1 & 0xff));
      } else {
        it->hw[0] = (uint16_t)((it->kind == 1 ? 0xb100 : 0xb900) | (off >> 6 & 1) << 9 |
                               (off >> 1 & 0x1f) << 3 | it->rn);
      }
    } else if (it->call) {
      enc_bl(it->hw, addr[i], it->leaf ? leaf1 : leaf0, true);
    }
    for (unsigned k = 0; k < it->n; k++)
      out[w++] = it->hw[k];
  }
  out[w++] = 0x3f01; /* SUBS r7, #1 */
  out[w++] = 0xd000; /* BEQ to the BL */
  out[w++] = (uint16_t)(0xe000 | ((CODE_AT - (loop_end + 4 + 4)) >> 1 & 0x7ff)); /* B start */
  enc_bl(&out[w], loop_end + 6, UREF_STOP, true); /* BL: ARMv6-M has no B.W */
  w += 2;
  out[w++] = 0xb510; /* leaf 0: PUSH {r4, lr} */
  for (unsigned i = body; i < body + nleaf; i++)
    for (unsigned k = 0; k < p->it[i].n; k++)
      out[w++] = p->it[i].hw[k];
  out[w++] = 0xbd10; /* POP {r4, pc} */
  for (unsigned i = body + nleaf; i < p->n; i++)
    for (unsigned k = 0; k < p->it[i].n; k++)
      out[w++] = p->it[i].hw[k];
  out[w++] = 0x4770; /* BX LR */
  return w;
}

/* A leaf's instructions: data processing only (r4 may be written in leaf 0) */
static void gen_leaf(struct prog *p, unsigned n)
{
  for (unsigned i = 0; i < n; i++) {
    if (p->v6m || below(2))
      gen_dp16(p);
    else
      gen_dp32(p);
  }
}

/* ---- running -------------------------------------------------------------------- */

struct ctx {
  const char *name;
  enum uref_core ucore;
  struct uref *u;
  struct sonde_machine *m;
  struct sonde_machine *m_hooked; /* memsys: the same, its timing model without the memo */
  struct sonde_vm *vm[3]; /* compiled, interpreted blocks, one at a time */
  uint64_t retired;
  unsigned cases, mismatches, stops, faulted;
  uint64_t insns;
};

static uint32_t last_pc[8]; /* the one-at-a-time VM's last retired PCs, for messages */

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)cycle, (void)cycles;
  last_pc[*(uint64_t *)ctx % 8] = pc;
  ++*(uint64_t *)ctx;
}

/* The m3 with a memory system (docs/vm.md, "Memory-system timing"): the
 * timing model charges every instruction; the block executor runs its
 * variant (run_block_tm) and compiled code charges the model too (jit.h);
 * the one-at-a-time VM steps the model without its memo. */
static bool memsys;

static const char *machine_text(enum uref_core c)
{
  if (memsys)
    return MEMSYS_M3_MACHINE("jit-m3-memsys");
  switch (c) {
  case UREF_CORTEX_M0:
    return "machine jit-m0\ncore m0plus\nclock 48MHz\nnvic irqs=32 prio-bits=2\n"
           "memory flash 0x00000000 1024K access=rx wait=1\n"
           "memory sram 0x20000000 1024K access=rwx\n";
  case UREF_CORTEX_M4:
    return "machine jit-m4\ncore m4\nclock 48MHz\nnvic irqs=32 prio-bits=3\n"
           "memory flash 0x00000000 1024K access=rx wait=2\n"
           "memory sram 0x20000000 1024K access=rwx wait-write=1\n";
  case UREF_CORTEX_M33:
    return "machine jit-m33\ncore m33\nclock 48MHz\nnvic irqs=32 prio-bits=3\n"
           "memory flash 0x00000000 1024K access=rx\n"
           "memory sram 0x20000000 1024K access=rwx\n";
  default:
    return "machine jit-m3\ncore m3\nclock 48MHz\nnvic irqs=32 prio-bits=3\n"
           "memory flash 0x00000000 1024K access=rx\n"
           "memory sram 0x20000000 1024K access=rwx\n";
  }
}

static void dump(const uint16_t *code, unsigned n)
{
  fprintf(stderr, "  program at 0x%x:", CODE_AT);
  for (unsigned i = 0; i < n; i++)
    fprintf(stderr, "%s%04x", i % 16 ? " " : "\n    ", code[i]);
  fputc('\n', stderr);
}

/* Load the image and the state into VM k and set its executor. */
static void vm_setup(struct ctx *x, unsigned k, const uint16_t *code, unsigned n,
                     const uint32_t *r, uint32_t apsr, const uint8_t *data)
{
  struct sonde_vm *vm = x->vm[k];
  static uint8_t img[CODE_AT + 2 * MAX_HW];
  memset(img, 0, sizeof img);
  uint32_t vec[2] = {STACK_TOP, CODE_AT | 1};
  memcpy(img, vec, sizeof vec);
  memcpy(img + CODE_AT, code, 2 * n);
  const uint16_t spin = 0xe7fe; /* b . at UREF_STOP: the end */
  REQUIRE(sonde_vm_load_binary(vm, img, CODE_AT + 2 * n, 0) == 0);
  REQUIRE(sonde_vm_load_binary(vm, &spin, 2, UREF_STOP) == 0);
  REQUIRE(sonde_vm_reset(vm) == 0);
  REQUIRE(sonde_vm_write_mem(vm, DATA_LO, data, DATA_SIZE) == 0);
  static const uint8_t zero[STACK_HI - STACK_LO];
  REQUIRE(sonde_vm_write_mem(vm, STACK_LO, zero, sizeof zero) == 0);
  for (unsigned i = 0; i < 15; i++)
    sonde_vm_write_reg(vm, i, r[i]);
  sonde_vm_write_reg(vm, SONDE_VM_REG_XPSR, apsr | 1u << 24);
}

static bool run_case(struct ctx *x, bool v6m, bool dsp, bool v8m)
{
  static struct prog p;
  memset(&p, 0, sizeof p);
  p.v6m = v6m, p.dsp = dsp, p.v8m = v8m;
  const unsigned len = 4 + below(60);
  while (p.n < len && p.n < 300)
    gen_insn(&p);
  if (p.it[p.n - 1].skip) /* a forward branch needs something to skip */
    h16(&p, 0x46c0);        /* MOV r8, r8 */
  const unsigned body = p.n;
  gen_leaf(&p, below(5));
  gen_leaf(&p, below(5));
  if ((p.n - body) % 2) /* layout() splits the leaves evenly */
    gen_leaf(&p, 1);
  static uint16_t code[MAX_HW];
  memset(code, 0, sizeof code); /* what literal loads find beyond the code */
  const unsigned used = layout(&p, body, code), n = used + 1024;

  uint32_t r[16];
  for (unsigned i = 0; i < 16; i++)
    r[i] = below(4) ? rnd() : below(4) == 0 ? 0 : rnd() & 0xff;
  r[6] = DATA_MID;
  r[7] = 1 + below(6);
  r[8] = DATA_MID + 0x2000;
  r[9] = DATA_MID - 0x2000;
  r[13] = STACK_TOP - 0x200;
  r[14] = 0xfffffff0u | 1; /* never used as a return address */
  uint32_t apsr = rnd() & (dsp ? 0xf80f0000u : 0xf8000000u);
  if (v6m)
    apsr &= 0xf0000000u;
  static uint8_t data[DATA_SIZE];
  for (unsigned i = 0; i < DATA_SIZE; i++)
    data[i] = (uint8_t)rnd();

  /* Unicorn */
  struct uref_state st;
  memset(&st, 0, sizeof st);
  memcpy(st.r, r, sizeof r);
  st.apsr = apsr;
  static uint8_t zero[STACK_HI - STACK_LO];
  uref_write_mem(x->u, CODE_AT, code, 2 * n);
  uref_write_mem(x->u, DATA_LO, data, DATA_SIZE);
  uref_write_mem(x->u, STACK_LO, zero, sizeof zero);
  uref_set_state(x->u, &st);
  x->cases++;
  if (uref_run(x->u, CODE_AT, 200000) != 0) {
    x->faulted++; /* a program Unicorn cannot run through: skip it */
    if (getenv("SONDE_JIT_DIFF_VERBOSE")) {
      struct uref_state us;
      uref_get_state(x->u, &us);
      const unsigned at = (us.r[15] - CODE_AT) / 2;
      fprintf(stderr, "%s: unicorn: %s at %08x: %04x %04x\n", x->name, uref_error(x->u),
              us.r[15], at < used ? code[at] : 0, at + 1 < used ? code[at + 1] : 0);
    }
    return true;
  }
  struct uref_state ref;
  uref_get_state(x->u, &ref);
  if (ref.r[15] != UREF_STOP) {
    CHECK_FAIL_("%s: unicorn did not reach the end (pc %08x)", x->name, ref.r[15]);
    dump(code, used);
    return false;
  }

  /* the VM, three ways, stopped at the same cycle limits */
  uint64_t base[3], base_i[3];
  for (unsigned k = 0; k < 3; k++) {
    vm_setup(x, k, code, n, r, apsr, data);
    struct vm_snap s0;
    vm_snap_of(x->vm[k], &s0);
    base[k] = s0.cycles; /* a reset keeps the counters going */
    base_i[k] = s0.instructions;
  }
  x->retired = 0;
  uint64_t limit = 0;
  uint32_t seed = rnd();
  bool done = false, ok = true;
  while (!done && ok) {
    seed = seed * 1103515245u + 12345u;
    limit += 1 + (seed >> 16) % 40;
    struct vm_snap s[3];
    for (unsigned k = 0; k < 3; k++) {
      struct sonde_vm_stop stop;
      if (sonde_vm_run(x->vm[k], base[k] + limit, &stop) != 0) {
        CHECK_FAIL_("%s: sonde_vm_run failed", x->name);
        return false;
      }
      vm_snap_of(x->vm[k], &s[k]);
      s[k].cycles -= base[k];
      s[k].instructions -= base_i[k];
      if (stop.reason != SONDE_VM_STOP_CYCLE_LIMIT) {
        CHECK_FAIL_("%s: VM %u stopped (reason %d) at pc %08x, cfsr %08x hfsr %08x bfar %08x, "
                    "%llu instructions",
                    x->name, k, (int)stop.reason, s[k].r[15], stop.cfsr, stop.hfsr, stop.bfar,
                    (unsigned long long)s[k].instructions);
        ok = false;
      }
    }
    x->stops++;
    for (unsigned k = 0; k < 2 && ok; k++) {
      const struct vm_snap *a = &s[k], *b = &s[2];
      if (a->cycles != b->cycles || a->instructions != b->instructions ||
          memcmp(a->r, b->r, sizeof a->r)) {
        CHECK_FAIL_("%s: %s at cycle %llu, %llu instructions, pc %08x; one at a time at cycle "
                    "%llu, %llu instructions, pc %08x",
                    x->name, k ? "interpreted blocks" : "compiled", (unsigned long long)a->cycles,
                    (unsigned long long)a->instructions, a->r[15],
                    (unsigned long long)b->cycles, (unsigned long long)b->instructions,
                    b->r[15]);
        for (unsigned i = 0; i < 17; i++)
          if (a->r[i] != b->r[i])
            fprintf(stderr, "  r%u: 0x%08x vs 0x%08x\n", i, a->r[i], b->r[i]);
        ok = false;
      }
    }
    done = s[2].r[15] == UREF_STOP;
  }
  if (!ok) {
    fprintf(stderr, "  last retired (one at a time):");
    for (unsigned i = 0; i < 8; i++)
      fprintf(stderr, " %08x", last_pc[(x->retired + i) % 8]);
    fprintf(stderr, "\n  start: r0-r14");
    for (unsigned i = 0; i < 15; i++)
      fprintf(stderr, " %08x", r[i]);
    fprintf(stderr, " apsr %08x\n", apsr);
    dump(code, used);
    x->mismatches++;
    return false;
  }
  x->insns += x->retired;

  /* the compiled run against Unicorn */
  char why[128] = "";
  uint32_t v;
  for (unsigned i = 0; i < 15 && !why[0]; i++)
    if (sonde_vm_read_reg(x->vm[0], i, &v) == 0 && v != ref.r[i])
      snprintf(why, sizeof why, "r%u vm 0x%08x unicorn 0x%08x", i, v, ref.r[i]);
  const uint32_t amask = v6m ? 0xf0000000u : dsp ? 0xf80f0000u : 0xf8000000u;
  sonde_vm_read_reg(x->vm[0], SONDE_VM_REG_XPSR, &v);
  if (!why[0] && (v & amask) != (ref.apsr & amask))
    snprintf(why, sizeof why, "apsr vm 0x%08x unicorn 0x%08x", v & amask, ref.apsr & amask);
  static uint8_t a[DATA_SIZE], b[DATA_SIZE];
  for (unsigned w = 0; w < 2 && !why[0]; w++) {
    const uint32_t lo = w ? STACK_LO : DATA_LO, size = w ? STACK_HI - STACK_LO : DATA_SIZE;
    sonde_vm_read_mem(x->vm[0], lo, a, size);
    uref_read_mem(x->u, lo, b, size);
    for (uint32_t i = 0; i < size && !why[0]; i++)
      if (a[i] != b[i])
        snprintf(why, sizeof why, "mem 0x%08x vm 0x%02x unicorn 0x%02x", lo + i, a[i], b[i]);
  }
  if (why[0]) {
    CHECK_FAIL_("%s: compiled run differs from unicorn: %s", x->name, why);
    dump(code, used);
    x->mismatches++;
    return false;
  }
  return true;
}

static void run_core(const char *name, enum uref_core ucore, bool v6m, bool dsp, bool v8m)
{
  struct ctx x;
  memset(&x, 0, sizeof x);
  x.name = name;
  x.ucore = ucore;
  x.u = uref_new(ucore);
  REQUIRE(x.u);
  const char *mt = machine_text(ucore);
  REQUIRE(sonde_machine_parse(mt, strlen(mt), name, &x.m, NULL) == 0);
  /* with a memory system the hooked VM steps the timing model for every
   * instruction (no memo, tm_memo.c): the memo is checked against it */
  REQUIRE(sonde_machine_parse(mt, strlen(mt), name, &x.m_hooked, NULL) == 0);
  x.m_hooked->tm.memo_off = true;
  for (unsigned k = 0; k < 3; k++) {
    REQUIRE(sonde_vm_new(k == 2 ? x.m_hooked : x.m, &x.vm[k]) == 0);
    sonde_vm_set_jit(x.vm[k], k == 0);
  }
  struct sonde_vm_hooks h = {.ctx = &x.retired, .retire = on_retire};
  sonde_vm_set_hooks(x.vm[2], &h);
  unsigned cases = 400;
  const char *env = getenv("SONDE_JIT_DIFF_CASES");
  if (env)
    cases = (unsigned)strtoul(env, NULL, 10);
  for (unsigned i = 0; i < cases && x.mismatches < 3; i++)
    run_case(&x, v6m, dsp, v8m);
  /* the comparison was really compiled against interpreted */
  struct sonde_vm_stats st0, st1;
  sonde_vm_get_stats(x.vm[0], &st0);
  sonde_vm_get_stats(x.vm[1], &st1);
  if (HAVE_JIT) /* (with a memory system too: its code charges the timing model) */
    CHECK(st0.compiled_blocks > 0);
  CHECK_EQ_U(st1.compiled_blocks, 0);
  printf("%s: %u cases (%u skipped: unicorn faulted), %u stops compared, %llu instructions, "
         "%u mismatches\n",
         name, x.cases, x.faulted, x.stops, (unsigned long long)x.insns, x.mismatches);
  CHECK_EQ_U(x.mismatches, 0);
  CHECK(x.cases - x.faulted > x.cases / 2); /* most cases really ran */
  for (unsigned k = 0; k < 3; k++)
    sonde_vm_free(x.vm[k]);
  sonde_machine_free(x.m);
  sonde_machine_free(x.m_hooked);
  uref_free(x.u);
}

static void test_m3(void) { run_core("m3", UREF_CORTEX_M3, false, false, false); }
static void test_m4(void) { run_core("m4", UREF_CORTEX_M4, false, true, false); }
static void test_m33(void) { run_core("m33", UREF_CORTEX_M33, false, true, true); }
static void test_m0(void) { run_core("m0+", UREF_CORTEX_M0, true, false, false); }
static void test_m3_memsys(void)
{
  memsys = true;
  run_core("m3+memsys", UREF_CORTEX_M3, false, false, false);
  memsys = false;
}

/* The switches: on by default, off with sonde_vm_set_jit(vm, false) and with
 * SONDE_JIT=0 in the environment (read when a VM first runs); the same
 * results either way. */
static void test_switches(void)
{
  const char *mt = machine_text(UREF_CORTEX_M3);
  struct sonde_machine *m = NULL;
  REQUIRE(sonde_machine_parse(mt, strlen(mt), "m3", &m, NULL) == 0);
  /* movs r0, #100; loop: adds r1, r1, r0; subs r0, #1; bne loop; b . */
  static const uint16_t code[] = {0x2064, 0x1809, 0x3801, 0xd1fc, 0xe7fe};
  uint8_t img[CODE_AT + sizeof code];
  memset(img, 0, sizeof img);
  const uint32_t vec[2] = {STACK_TOP, CODE_AT | 1};
  memcpy(img, vec, sizeof vec);
  memcpy(img + CODE_AT, code, sizeof code);
  struct sonde_vm_stats st[3];
  uint32_t r1[3];
  for (unsigned k = 0; k < 3; k++) {
    struct sonde_vm *vm = NULL;
    if (k == 2)
      setenv("SONDE_JIT", "0", 1);
    REQUIRE(sonde_vm_new(m, &vm) == 0);
    if (k == 1)
      sonde_vm_set_jit(vm, false);
    REQUIRE(sonde_vm_load_binary(vm, img, sizeof img, 0) == 0);
    REQUIRE(sonde_vm_reset(vm) == 0);
    struct sonde_vm_stop stop;
    REQUIRE(sonde_vm_run(vm, 2000, &stop) == 0);
    CHECK_EQ_U(stop.reason, SONDE_VM_STOP_CYCLE_LIMIT);
    sonde_vm_get_stats(vm, &st[k]);
    sonde_vm_read_reg(vm, 1, &r1[k]);
    sonde_vm_free(vm);
    unsetenv("SONDE_JIT");
  }
  CHECK_EQ_U(r1[0], 5050u);
  for (unsigned k = 1; k < 3; k++) {
    CHECK_EQ_U(r1[k], r1[0]);
    CHECK_EQ_U(st[k].cycles, st[0].cycles);
    CHECK_EQ_U(st[k].instructions, st[0].instructions);
    CHECK_EQ_U(st[k].compiled_blocks, 0);
  }
  if (HAVE_JIT)
    CHECK(st[0].compiled_blocks >= 2); /* the loop and the b . */
  sonde_machine_free(m);
}

int main(void)
{
  RUN(test_switches);
  RUN(test_m3);
  RUN(test_m4);
  RUN(test_m33);
  RUN(test_m0);
  RUN(test_m3_memsys);
  return check_summary();
}
