/* Floating point (FPv4-SP, FPv5-SP additions) of the virtual Cortex-M against
 * Unicorn, plus hand-computed cases from the ARM ARM pseudocode for what
 * Unicorn cannot check (faults, cycle counts, transfer hooks) and where it
 * deviates (reported in the output and in docs/vm.md).
 *
 * Every FP instruction is run with edge operands (±0, denormals, limits,
 * infinities, quiet and signalling NaNs in each operand, halfway cases)
 * under each rounding mode with FZ and DN on and off, then with random
 * operands and FPSCR settings. SONDE_SOAK=N multiplies the random cases. */
#include "check.h"
#include "test_fpdsp_util.h"

#include "vm/fp_soft.h"

enum {
  F_SD = 1u << 0,   /* Sd: Vd hw2[15:12], D hw1[6] */
  F_SN = 1u << 1,   /* Sn: Vn hw1[3:0], N hw2[7] */
  F_SM = 1u << 2,   /* Sm: Vm hw2[3:0], M hw2[5] */
  F_RT = 1u << 3,   /* core Rt hw2[15:12] */
  F_RT2 = 1u << 4,  /* core Rt2 hw1[3:0] */
  F_IMM8 = 1u << 5, /* VMOV immediate: hw1[3:0], hw2[3:0] */
  F_FIX16 = 1u << 6, /* fixed-point imm5 (imm4 hw2[3:0], i hw2[5]) <= 16 */
  F_FIX32 = 1u << 7, /* imm5 any */
  F_DSC = 1u << 8,  /* scalar VMOV: Vd hw1[3:0], index hw1[5] */
  F_SM2 = 1u << 9,  /* Sm, Sm+1 pair: Vm:M < 31 */
  F_DM = 1u << 10,  /* Dm (hw2[3:0], M = 0) */
};

struct tmpl {
  char name[20];
  uint32_t insn;
  unsigned fields;
  bool v8;
};

static struct tmpl tmpls[160];
static unsigned ntmpls;

static void add(const char *name, uint32_t insn, unsigned fields, bool v8)
{
  struct tmpl *t = &tmpls[ntmpls++];
  snprintf(t->name, sizeof t->name, "%s", name);
  t->insn = insn;
  t->fields = fields;
  t->v8 = v8;
}

#define DNM (F_SD | F_SN | F_SM)
#define DM (F_SD | F_SM)

static void build_templates(void)
{
  /* A6.4 three-register: opc1 (hw1[7:4] without D) and op (hw2[6]). */
  static const struct { const char *n; unsigned opc1, op; } ar[] = {
    {"vmla", 0, 0}, {"vmls", 0, 1}, {"vnmls", 1, 0}, {"vnmla", 1, 1}, {"vmul", 2, 0},
    {"vnmul", 2, 1}, {"vadd", 3, 0}, {"vsub", 3, 1}, {"vdiv", 8, 0}, {"vfnms", 9, 0},
    {"vfnma", 9, 1}, {"vfma", 10, 0}, {"vfms", 10, 1},
  };
  for (unsigned i = 0; i < sizeof ar / sizeof ar[0]; i++)
    add(ar[i].n, 0xee000a00u | ar[i].opc1 << 20 | ar[i].op << 6, DNM, false);
  add("vmov.f32 #imm", 0xeeb00a00u, F_SD | F_IMM8, false);
  add("vmov sd,sm", 0xeeb00a40u, DM, false);
  add("vabs", 0xeeb00ac0u, DM, false);
  add("vneg", 0xeeb10a40u, DM, false);
  add("vsqrt", 0xeeb10ac0u, DM, false);
  add("vcvtb.f32.f16", 0xeeb20a40u, DM, false);
  add("vcvtt.f32.f16", 0xeeb20ac0u, DM, false);
  add("vcvtb.f16.f32", 0xeeb30a40u, DM, false);
  add("vcvtt.f16.f32", 0xeeb30ac0u, DM, false);
  add("vcmp", 0xeeb40a40u, DM, false);
  add("vcmpe", 0xeeb40ac0u, DM, false);
  add("vcmp #0", 0xeeb50a40u, F_SD, false);
  add("vcmpe #0", 0xeeb50ac0u, F_SD, false);
  add("vcvt.f32.u32", 0xeeb80a40u, DM, false);
  add("vcvt.f32.s32", 0xeeb80ac0u, DM, false);
  add("vcvtr.u32.f32", 0xeebc0a40u, DM, false);
  add("vcvt.u32.f32", 0xeebc0ac0u, DM, false);
  add("vcvtr.s32.f32", 0xeebd0a40u, DM, false);
  add("vcvt.s32.f32", 0xeebd0ac0u, DM, false);
  add("vcvt.f32.s16 #f", 0xeeba0a40u, F_SD | F_FIX16, false);
  add("vcvt.f32.u16 #f", 0xeebb0a40u, F_SD | F_FIX16, false);
  add("vcvt.f32.s32 #f", 0xeeba0ac0u, F_SD | F_FIX32, false);
  add("vcvt.f32.u32 #f", 0xeebb0ac0u, F_SD | F_FIX32, false);
  add("vcvt.s16.f32 #f", 0xeebe0a40u, F_SD | F_FIX16, false);
  add("vcvt.u16.f32 #f", 0xeebf0a40u, F_SD | F_FIX16, false);
  add("vcvt.s32.f32 #f", 0xeebe0ac0u, F_SD | F_FIX32, false);
  add("vcvt.u32.f32 #f", 0xeebf0ac0u, F_SD | F_FIX32, false);
  add("vmov sn,rt", 0xee000a10u, F_SN | F_RT, false);
  add("vmov rt,sn", 0xee100a10u, F_SN | F_RT, false);
  add("vmsr fpscr", 0xeee10a10u, F_RT, false);
  add("vmrs rt,fpscr", 0xeef10a10u, F_RT, false);
  add("vmrs apsr_nzcv", 0xeef1fa10u, 0, false);
  add("vmov.32 dd[x],rt", 0xee000b10u, F_DSC | F_RT, false);
  add("vmov.32 rt,dn[x]", 0xee100b10u, F_DSC | F_RT, false);
  add("vmov sm,sm1,rt,rt2", 0xec400a10u, F_SM2 | F_RT | F_RT2, false);
  add("vmov rt,rt2,sm,sm1", 0xec500a10u, F_SM2 | F_RT | F_RT2, false);
  add("vmov dm,rt,rt2", 0xec400b10u, F_DM | F_RT | F_RT2, false);
  add("vmov rt,rt2,dm", 0xec500b10u, F_DM | F_RT | F_RT2, false);
  /* FPv5 (ARMv8-M) */
  static const char *cc[4] = {"vseleq", "vselvs", "vselge", "vselgt"};
  for (unsigned i = 0; i < 4; i++)
    add(cc[i], 0xfe000a00u | i << 20, DNM, true);
  add("vmaxnm", 0xfe800a00u, DNM, true);
  add("vminnm", 0xfe800a40u, DNM, true);
  static const char *rm[4] = {"a", "n", "p", "m"};
  char nm[20];
  for (unsigned i = 0; i < 4; i++) {
    snprintf(nm, sizeof nm, "vrint%s", rm[i]);
    add(nm, 0xfeb80a40u | i << 16, DM, true);
    snprintf(nm, sizeof nm, "vcvt%s.u32", rm[i]);
    add(nm, 0xfebc0a40u | i << 16, DM, true);
    snprintf(nm, sizeof nm, "vcvt%s.s32", rm[i]);
    add(nm, 0xfebc0ac0u | i << 16, DM, true);
  }
  add("vrintr", 0xeeb60a40u, DM, true);
  add("vrintz", 0xeeb60ac0u, DM, true);
  add("vrintx", 0xeeb70a40u, DM, true);
}

static const uint32_t specials[] = {
  0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00400000, 0x00800000, 0x80800000,
  0x00800001, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001,
  0x7f800001, 0xffa00000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000, 0x40200000,
  0xc0200000, 0x4f000000, 0xcf000000, 0x4effffff, 0x4f800000, 0x4f7fffff, 0x3f7fffff,
  0x3f800001, 0x34000000, 0x0c000000, 0x73000000, 0x477fe000, 0x477ff000, 0x387fc000,
  0x33800000, 0x33000000, 0x46fffe00, 0xc7000000, 0x477fff00, 0x00fffffe, 0x7effffff,
};
#define NSPECIALS (sizeof specials / sizeof specials[0])

static uint32_t rand_fp(struct tu *t, const uint32_t *others)
{
  switch (tu_below(t, 6)) {
  case 0:
  case 1:
    return specials[tu_below(t, NSPECIALS)];
  case 2:
    return tu_rand(t);
  case 3: /* moderate exponents: ordinary arithmetic, rounding */
    return (tu_rand(t) & 0x807fffffu) | (uint32_t)(127 - 20 + tu_below(t, 40)) << 23;
  case 4: /* near another value: cancellation, equal compares */
    return others ? others[tu_below(t, 32)] + tu_below(t, 5) - 2 : tu_rand(t);
  default: /* tiny or huge: underflow, overflow, denormals */
    return (tu_rand(t) & 0x807fffffu) | (uint32_t)(tu_below(t, 2) ? tu_below(t, 28) : 228 + tu_below(t, 27)) << 23;
  }
}

/* FPSCR: random RMode/FZ/DN/AHP and flags and NZCV (writable bits only). */
static uint32_t rand_fpscr(struct tu *t)
{
  uint32_t f = tu_rand(t) & VM_FPSCR_WRITABLE;
  if (tu_below(t, 2))
    f &= ~0x9fu; /* often start with no cumulative flags, to see each one raised */
  return f;
}

static void random_state(struct tu *t, struct uref_state *st)
{
  memset(st, 0, sizeof *st);
  for (int i = 0; i < 32; i++)
    st->s[i] = rand_fp(t, i ? st->s : NULL);
  for (int i = 0; i < 15; i++)
    st->r[i] = tu_below(t, 2) ? tu_rand(t) : rand_fp(t, st->s);
  st->r[13] = UREF_RAM_BASE + 0x8000;
  st->apsr = tu_rand(t) & 0xf80f0000u;
  st->fpscr = rand_fpscr(t);
}

static unsigned rand_core(struct tu *t)
{
  unsigned r = tu_below(t, 14);
  return r == 13 ? 14 : r;
}

static uint32_t put_s(uint32_t insn, unsigned fld, unsigned s)
{
  switch (fld) {
  case F_SD: return insn | (s >> 1) << 12 | (s & 1) << 22;
  case F_SN: return insn | (s >> 1) << 16 | (s & 1) << 7;
  default: return insn | (s >> 1) | (s & 1) << 5;
  }
}

/* Fill the open fields; `regs` fixes d, n, m (else random). */
static uint32_t instantiate(struct tu *t, const struct tmpl *tp, const unsigned *regs)
{
  uint32_t insn = tp->insn;
  if (tp->fields & F_SD)
    insn = put_s(insn, F_SD, regs ? regs[0] : tu_below(t, 32));
  if (tp->fields & F_SN)
    insn = put_s(insn, F_SN, regs ? regs[1] : tu_below(t, 32));
  if (tp->fields & F_SM)
    insn = put_s(insn, F_SM, regs ? regs[2] : tu_below(t, 32));
  if (tp->fields & F_RT)
    insn |= rand_core(t) << 12;
  if (tp->fields & F_RT2) {
    unsigned t2;
    do
      t2 = rand_core(t);
    while (t2 == ((insn >> 12) & 15));
    insn |= t2 << 16;
  }
  if (tp->fields & F_IMM8) {
    unsigned imm8 = tu_below(t, 256);
    insn |= (imm8 >> 4) << 16 | (imm8 & 15);
  }
  if (tp->fields & (F_FIX16 | F_FIX32)) {
    unsigned imm5 = tu_below(t, tp->fields & F_FIX16 ? 17 : 32);
    insn |= (imm5 >> 1) | (imm5 & 1) << 5;
  }
  if (tp->fields & F_DSC)
    insn |= tu_below(t, 16) << 16 | tu_below(t, 2) << 21;
  if (tp->fields & F_SM2)
    insn = put_s(insn, F_SM, tu_below(t, 31));
  if (tp->fields & F_DM)
    insn |= tu_below(t, 16);
  return insn;
}

static struct tu T4, T33;
static unsigned long mismatches, deviations;

/* Known Unicorn (QEMU) deviations from the ARM ARM: returns a description
 * when the case is one of them, and then the VM is checked against the
 * pseudocode by hand elsewhere. */
static const char *unicorn_deviation(uint32_t insn, const struct uref_state *in)
{
  (void)insn;
  (void)in;
  return NULL;
}

static void one(struct tu *t, const struct tmpl *tp, uint32_t insn, const struct uref_state *in)
{
  struct uref_state ref, got;
  bool ref_ok;
  tu_renew(t, 1);
  int rc = tu_run(t, insn, true, in, &ref, &got, &ref_ok);
  char why[96];
  bool bad = !ref_ok || rc < 1 || tu_diff(&got, &ref, true, why, sizeof why);
  if (!bad)
    return;
  if (ref_ok && rc >= 1 && unicorn_deviation(insn, in)) {
    deviations++;
    return;
  }
  if (mismatches++ < 25) {
    if (!ref_ok || rc < 1)
      snprintf(why, sizeof why, "vm rc %d, unicorn %s", rc, ref_ok ? "ok" : uref_error(t->u));
    CHECK_FAIL_("%s 0x%08x fpscr=0x%08x: %s", tp->name, insn, in->fpscr, why);
  } else {
    check_cur_failed++;
  }
}

/* Every pair of special values in Sn/Sm (and the accumulator Sd), each pair
 * under one of the 16 RMode x FZ x DN combinations (unary operations: each
 * value under two), chosen so that every mode meets every special value. */
static void test_fp_edges(void)
{
  static const unsigned regs[3] = {4, 1, 2};
  for (unsigned k = 0; k < ntmpls; k++) {
    const struct tmpl *tp = &tmpls[k];
    struct tu *t = tp->v8 ? &T33 : &T4;
    bool binary = (tp->fields & F_SN) != 0;
    unsigned nb = binary ? NSPECIALS : 1;
    if (!(tp->fields & (F_SD | F_SM)) || (tp->fields & (F_RT | F_IMM8)))
      continue;
    for (unsigned a = 0; a < NSPECIALS; a++)
      for (unsigned b = 0; b < nb; b++)
        for (unsigned pass = 0; pass < (binary ? 1u : 2u); pass++) {
          struct uref_state st;
          random_state(t, &st);
          unsigned mode = (a * 7 + b * 3 + pass * 5 + k) % 16;
          st.fpscr = (st.fpscr & ~0x03c0009fu) | (mode & 3) << 22 | (mode >> 2) << 24;
          if (tu_below(t, 4) == 0)
            st.fpscr |= VM_FPSCR_AHP;
          st.s[1] = binary ? specials[a] : specials[(a + 11 * pass) % NSPECIALS];
          st.s[2] = binary ? specials[b] : specials[a];
          st.s[4] = specials[(a * 5 + b + pass) % NSPECIALS];
          one(t, tp, instantiate(t, tp, regs), &st);
        }
  }
}

static void test_fp_random(void)
{
  unsigned long n = tu_soak(8000);
  for (unsigned long i = 0; i < n; i++) {
    const struct tmpl *tp = &tmpls[tu_below(&T4, ntmpls)];
    struct tu *t = tp->v8 ? &T33 : &T4;
    struct uref_state st;
    random_state(t, &st);
    one(t, tp, instantiate(t, tp, NULL), &st);
  }
}

/* FPv4 instructions on the M33 engine too (FPv5 includes them). */
static void test_fp_random_m33(void)
{
  unsigned long n = tu_soak(2000);
  for (unsigned long i = 0; i < n; i++) {
    const struct tmpl *tp = &tmpls[tu_below(&T33, ntmpls)];
    struct uref_state st;
    random_state(&T33, &st);
    one(&T33, tp, instantiate(&T33, tp, NULL), &st);
  }
}

/* ---- loads and stores ---------------------------------------------------- */

#define MEMWIN 0x400u /* bytes compared around the base */

static uint8_t *vm_ram(struct tu *t)
{
  return vm_bus_find_region(&t->vm->bus, UREF_RAM_BASE)->mem;
}

static void mem_case(struct tu *t, const char *name, uint32_t insn, unsigned rn, uint32_t base)
{
  struct uref_state st, ref, got;
  tu_renew(t, 1);
  random_state(t, &st);
  st.r[rn] = base;
  uint8_t buf[2 * MEMWIN];
  for (unsigned i = 0; i < sizeof buf; i++)
    buf[i] = (uint8_t)tu_rand(t);
  uint32_t win = base - MEMWIN - UREF_RAM_BASE;
  memcpy(vm_ram(t) + win, buf, sizeof buf);
  uref_write_mem(t->u, UREF_RAM_BASE + win, buf, sizeof buf);
  bool ref_ok;
  int rc = tu_run(t, insn, true, &st, &ref, &got, &ref_ok);
  char why[96];
  uint8_t rbuf[2 * MEMWIN];
  uref_read_mem(t->u, UREF_RAM_BASE + win, rbuf, sizeof rbuf);
  bool bad = !ref_ok || rc < 1 || tu_diff(&got, &ref, true, why, sizeof why);
  if (!bad && memcmp(rbuf, vm_ram(t) + win, sizeof rbuf) != 0) {
    bad = true;
    snprintf(why, sizeof why, "memory differs");
  }
  if (!bad)
    return;
  if (mismatches++ < 25) {
    if (!ref_ok || rc < 1)
      snprintf(why, sizeof why, "vm rc %d, unicorn %s", rc, ref_ok ? "ok" : uref_error(t->u));
    CHECK_FAIL_("%s 0x%08x base 0x%08x: %s", name, insn, base, why);
  } else {
    check_cur_failed++;
  }
}

static void test_fp_loadstore(void)
{
  struct tu *t = &T4;
  unsigned long n = tu_soak(3000);
  for (unsigned long i = 0; i < n; i++) {
    unsigned rn = rand_core(t);
    uint32_t base = UREF_RAM_BASE + 0x4000 + 4 * tu_below(t, 64);
    bool dbl = tu_below(t, 2);
    unsigned kind = tu_below(t, 5), l = tu_below(t, 2), imm8 = tu_below(t, 256);
    unsigned vd = tu_below(t, 16), D = dbl ? 0 : tu_below(t, 2);
    uint32_t hw2 = vd << 12 | 0xa00u | (unsigned)dbl << 8;
    uint32_t hw1, insn;
    const char *name;
    switch (kind) {
    case 0: /* VLDR/VSTR, add or subtract */
    case 1:
      hw1 = 0xed00u | (kind == 0) << 7 | D << 6 | l << 4 | rn;
      insn = hw1 << 16 | hw2 | (imm8 & 0x3f);
      name = l ? "vldr" : "vstr";
      break;
    case 2: /* VLDMIA/VSTMIA, with or without writeback */
    case 3: {
      unsigned d = dbl ? vd : (vd << 1 | D);
      unsigned maxr = dbl ? 16 - d : 32 - d;
      unsigned regs = 1 + tu_below(t, maxr < 16 ? maxr : 16);
      hw1 = 0xec80u | D << 6 | (kind == 3) << 5 | l << 4 | rn;
      insn = hw1 << 16 | hw2 | (dbl ? 2 * regs : regs);
      name = l ? "vldmia" : "vstmia";
      break;
    }
    default: { /* VLDMDB!/VSTMDB! (VPUSH/VPOP forms with SP) */
      unsigned d = dbl ? vd : (vd << 1 | D);
      unsigned maxr = dbl ? 16 - d : 32 - d;
      unsigned regs = 1 + tu_below(t, maxr < 16 ? maxr : 16);
      hw1 = 0xed20u | D << 6 | l << 4 | rn;
      insn = hw1 << 16 | hw2 | (dbl ? 2 * regs : regs);
      name = l ? "vldmdb" : "vstmdb";
      break;
    }
    }
    mem_case(t, name, insn, rn, base);
  }
  /* VPUSH {s16-s31}, VPOP {d8-d15}, VLDR literal (PC-relative) */
  mem_case(t, "vpush", 0xed2d8a10u, 13, UREF_RAM_BASE + 0x8000);
  mem_case(t, "vpop", 0xecbd8b10u, 13, UREF_RAM_BASE + 0x8000);
}

/* ---- sequences through the whole VM -------------------------------------- */

/* Random straight-line programs of FP and DSP instructions, IT blocks with
 * conditional FP/DSP instructions, and VCMP + VMRS APSR_nzcv feeding the
 * conditions, run on the complete VM (decoder, IT state, routing into
 * vm_exec_fp/vm_exec_dsp) and on Unicorn until the PC reaches the end. */
static uint32_t rand_dsp(struct tu *t)
{
  static const unsigned op1s[6] = {0, 1, 2, 4, 5, 6};
  uint32_t rn = rand_core(t), rd = rand_core(t), rm = rand_core(t), ra = rand_core(t);
  uint32_t regs = rn << 16 | rd << 8 | rm;
  switch (tu_below(t, 6)) {
  case 0:
  case 1:
    return 0xfa80f000u | op1s[tu_below(t, 6)] << 20 | tu_below(t, 2) << 6 | tu_below(t, 3) << 4 |
           regs;
  case 2: return 0xfa80f080u | tu_below(t, 4) << 4 | regs;               /* QADD family */
  case 3: return 0xfaa0f080u | regs;                                      /* SEL */
  case 4: return 0xfb100000u | ra << 12 | tu_below(t, 4) << 4 | regs;     /* SMLA<x><y> */
  default: return 0xfb200000u | ra << 12 | tu_below(t, 2) << 4 | regs;   /* SMLAD(X) */
  }
}

static uint32_t rand_fp_insn(struct tu *t, bool v8)
{
  for (;;) {
    const struct tmpl *tp = &tmpls[tu_below(t, ntmpls)];
    if (tp->v8 && !v8)
      continue;
    if (tp->insn == 0xeef1fa10u) /* vmrs apsr_nzcv is added explicitly */
      continue;
    return instantiate(t, tp, NULL);
  }
}

static void seq_case(struct tu *t, struct sonde_vm *vm, bool v8, unsigned long *cases)
{
  uint16_t prog[96];
  unsigned n = 0, ninsn = 1; /* the final B.W */
  for (unsigned k = 0; k < 8; k++) {
    unsigned what = tu_below(t, 8);
    if (what == 0) { /* flags from an FP compare */
      uint32_t cmp = instantiate(t, &tmpls[ntmpls - 1], NULL);
      for (unsigned i = 0; i < ntmpls; i++)
        if (strcmp(tmpls[i].name, "vcmpe") == 0)
          cmp = instantiate(t, &tmpls[i], NULL);
      prog[n++] = (uint16_t)(cmp >> 16), prog[n++] = (uint16_t)cmp;
      prog[n++] = 0xeef1, prog[n++] = 0xfa10; /* vmrs APSR_nzcv, fpscr */
      ninsn += 2;
    } else if (what <= 2) { /* IT block of 1-4 FP/DSP instructions */
      unsigned len = 1 + tu_below(t, 4), cond = tu_below(t, 14), mask = 0;
      for (unsigned i = 1; i < len; i++)
        mask |= tu_below(t, 2) << (4 - i);
      mask |= 1u << (4 - len);
      prog[n++] = (uint16_t)(0xbf00 | cond << 4 | mask);
      ninsn += len;
      for (unsigned i = 0; i < len; i++) {
        uint32_t insn = tu_below(t, 3) == 0 ? rand_dsp(t)
                        : tu_below(t, 4) == 0 ? 0xeef1fa10u
                                              : rand_fp_insn(t, false);
        prog[n++] = (uint16_t)(insn >> 16), prog[n++] = (uint16_t)insn;
      }
    } else {
      uint32_t insn = tu_below(t, 3) == 0 ? rand_dsp(t) : rand_fp_insn(t, v8);
      prog[n++] = (uint16_t)(insn >> 16), prog[n++] = (uint16_t)insn;
      ninsn++;
    }
  }
  /* Every program ends with B.W to one fixed address, where the VM stops. */
  tu_renew(t, 50);
  uint32_t base = TU_SEQ_CODE + 256 * (t->seq_slot % TU_SEQ_SLOTS), end = TU_SEQ_END;
  int32_t off = (int32_t)(end - (base + 2 * n + 4));
  uint32_t sbit = off < 0, i1 = (off >> 23) & 1, i2 = (off >> 22) & 1;
  prog[n++] = (uint16_t)(0xf000 | sbit << 10 | ((off >> 12) & 0x3ff));
  prog[n++] = (uint16_t)(0x9000 | ((!i1) ^ sbit) << 13 | ((!i2) ^ sbit) << 11 | ((off >> 1) & 0x7ff));
  if (tu_seq_code(t, prog, n) != base)
    REQUIRE(false);
  struct uref_state st, ref;
  random_state(t, &st);
  uref_set_state(t->u, &st);
  /* An upper bound on the count (see uref_run); UREF_STOP ends the run. */
  bool ran = uref_run(t->u, base, ninsn + 8) == 0;
  uref_get_state(t->u, &ref);
  sonde_vm_write_mem(vm, base, prog, 2 * n);
  /* From reset each time (a previous case may have faulted): the vector
   * table gives SP and a harmless PC, then the test state is written. */
  uint32_t vectors[2] = {UREF_RAM_BASE + 0x8000, (TU_SEQ_CODE - 0x100) | 1};
  sonde_vm_write_mem(vm, 0, vectors, sizeof vectors);
  sonde_vm_reset(vm);
  /* CP10/CP11 full access, and an active FP context (CONTROL.FPCA) so that
   * the first FP instruction keeps the FPSCR set here, as in Unicorn. */
  uint32_t cpacr = 0xfu << 20;
  sonde_vm_write_mem(vm, 0xe000ed88u, &cpacr, 4);
  sonde_vm_write_reg(vm, SONDE_VM_REG_CONTROL, 4);
  for (unsigned i = 0; i < 15; i++)
    sonde_vm_write_reg(vm, i, st.r[i]);
  for (unsigned i = 0; i < 32; i++)
    sonde_vm_write_reg(vm, SONDE_VM_REG_S0 + i, st.s[i]);
  sonde_vm_write_reg(vm, SONDE_VM_REG_FPSCR, st.fpscr);
  sonde_vm_write_reg(vm, SONDE_VM_REG_XPSR, st.apsr | 1u << 24);
  sonde_vm_write_reg(vm, SONDE_VM_REG_PC, base);
  struct uref_state got;
  memset(&got, 0, sizeof got);
  for (unsigned steps = 0; steps < 64; steps++) {
    struct sonde_vm_stop stop;
    sonde_vm_read_reg(vm, SONDE_VM_REG_PC, &got.r[15]);
    if (got.r[15] == end)
      break;
    sonde_vm_step(vm, &stop);
  }
  for (unsigned i = 0; i < 15; i++)
    sonde_vm_read_reg(vm, i, &got.r[i]);
  for (unsigned i = 0; i < 32; i++)
    sonde_vm_read_reg(vm, SONDE_VM_REG_S0 + i, &got.s[i]);
  sonde_vm_read_reg(vm, SONDE_VM_REG_FPSCR, &got.fpscr);
  sonde_vm_read_reg(vm, SONDE_VM_REG_XPSR, &got.apsr);
  got.apsr &= 0xf80f0000u;
  (*cases)++;
  char why[96];
  bool bad = !ran || ref.r[15] != end || tu_diff(&got, &ref, true, why, sizeof why);
  if (!bad)
    return;
  if (!ran || ref.r[15] != end)
    snprintf(why, sizeof why, "unicorn: %s, pc 0x%x", ran ? "ok" : uref_error(t->u), ref.r[15]);
  if (mismatches++ < 25) {
    char code[400];
    size_t o = 0;
    for (unsigned i = 0; i < n && o + 6 < sizeof code; i++)
      o += (size_t)snprintf(code + o, sizeof code - o, "%04x ", prog[i]);
    CHECK_FAIL_("%s sequence [%s]: %s", v8 ? "m33" : "m4f", code, why);
  } else {
    check_cur_failed++;
  }
}

static unsigned long seq_cases;

static void test_fp_sequences(void)
{
  static const char *mach[2] = {"cm4f", "cm33"};
  for (unsigned v = 0; v < 2; v++) {
    struct sonde_machine *m = NULL;
    struct sonde_vm *vm = NULL;
    REQUIRE(sonde_machine_builtin(mach[v], &m) == 0);
    REQUIRE(sonde_vm_new(m, &vm) == 0);
    struct tu *t = v ? &T33 : &T4;
    unsigned long n = tu_soak(400);
    for (unsigned long i = 0; i < n; i++)
      seq_case(t, vm, v == 1, &seq_cases);
    sonde_vm_free(vm);
    sonde_machine_free(m);
  }
}

/* ---- hand-computed cases ----------------------------------------------- */

static uint32_t run_vm(struct tu *t, uint32_t insn, int *cycles)
{
  *cycles = vm_exec_fp(t->vm, insn);
  return t->vm->cpu.s[0];
}

static void test_fp_known(void)
{
  struct sonde_vm *vm = T4.vm;
  int cy;
  memset(&vm->cpu, 0, sizeof vm->cpu);
  /* vadd.f32 s0, s1, s2: 1 + 2^-24 rounds to even (1.0), inexact */
  vm->cpu.s[1] = 0x3f800000;
  vm->cpu.s[2] = 0x33800000;
  CHECK_EQ_U(run_vm(&T4, 0xee300a81u, &cy), 0x3f800000);
  CHECK_EQ_I(cy, 1);
  CHECK_EQ_U(vm->cpu.fpscr, VM_FPSCR_IXC);
  /* ... and toward +inf it rounds up */
  vm->cpu.fpscr = 1u << 22;
  CHECK_EQ_U(run_vm(&T4, 0xee300a81u, &cy), 0x3f800001);
  /* vdiv.f32 s0, s1, s2 with s2 = +0: +inf, DZC; 14 cycles */
  vm->cpu.fpscr = 0;
  vm->cpu.s[2] = 0;
  CHECK_EQ_U(run_vm(&T4, 0xee800a81u, &cy), 0x7f800000);
  CHECK_EQ_I(cy, 14);
  CHECK_EQ_U(vm->cpu.fpscr, VM_FPSCR_DZC);
  /* vmul of two min normals with FZ: flushed to +0, UFC only */
  vm->cpu.fpscr = VM_FPSCR_FZ;
  vm->cpu.s[1] = vm->cpu.s[2] = 0x00800000;
  CHECK_EQ_U(run_vm(&T4, 0xee200a81u, &cy), 0);
  CHECK_EQ_U(vm->cpu.fpscr, VM_FPSCR_FZ | VM_FPSCR_UFC);
  /* a denormal input with FZ: IDC */
  vm->cpu.fpscr = VM_FPSCR_FZ;
  vm->cpu.s[1] = 1;
  vm->cpu.s[2] = 0x3f800000;
  CHECK_EQ_U(run_vm(&T4, 0xee200a81u, &cy), 0);
  CHECK_EQ_U(vm->cpu.fpscr, VM_FPSCR_FZ | VM_FPSCR_IDC);
  /* sNaN in the second operand wins over a qNaN in the first */
  vm->cpu.fpscr = 0;
  vm->cpu.s[1] = 0x7fc00001;
  vm->cpu.s[2] = 0xff800002;
  CHECK_EQ_U(run_vm(&T4, 0xee300a81u, &cy), 0xffc00002);
  CHECK_EQ_U(vm->cpu.fpscr, VM_FPSCR_IOC);
  /* vmla: 3 cycles; vfma with a qNaN addend and 0 * inf: default NaN, IOC */
  vm->cpu.fpscr = 0;
  vm->cpu.s[0] = 0x7fc00005;
  vm->cpu.s[1] = 0;
  vm->cpu.s[2] = 0x7f800000;
  CHECK_EQ_U(run_vm(&T4, 0xeea00a81u, &cy), 0x7fc00000);
  CHECK_EQ_I(cy, 3);
  CHECK_EQ_U(vm->cpu.fpscr, VM_FPSCR_IOC);
  /* vcvt.s32.f32 of 2^31: saturates to INT_MAX, IOC */
  vm->cpu.fpscr = 0;
  vm->cpu.s[1] = 0x4f000000;
  CHECK_EQ_U(run_vm(&T4, 0xeebd0ae0u, &cy), 0x7fffffff); /* vcvt.s32.f32 s0, s1 */
  CHECK_EQ_U(vm->cpu.fpscr, VM_FPSCR_IOC);
  /* vcvtb.f16.f32 of 65520 with AHP: halfway between 65504 (0x7bff) and
   * 65536, which AHP can represent (exponent 31): 0x7c00, inexact. */
  vm->cpu.fpscr = VM_FPSCR_AHP;
  vm->cpu.s[0] = 0xabcd0000;
  vm->cpu.s[1] = 0x477ff000;
  CHECK_EQ_U(run_vm(&T4, 0xeeb30a60u, &cy), 0xabcd7c00); /* vcvtb.f16.f32 s0, s1 */
  CHECK_EQ_U(vm->cpu.fpscr, VM_FPSCR_AHP | VM_FPSCR_IXC);
  /* vldr s0, [pc, #8] at an address that is 2 mod 4: Align(PC + 4, 4) + 8;
   * 2 cycles. (Literal loads are not in the Unicorn comparison.) */
  uint8_t *ram = vm_bus_find_region(&vm->bus, UREF_RAM_BASE)->mem;
  memcpy(ram + 0x10c, "\x78\x56\x34\x12", 4);
  vm->cpu.r[15] = UREF_RAM_BASE + 0x102;
  CHECK_EQ_U(run_vm(&T4, 0xed9f0a02u, &cy), 0x12345678);
  CHECK_EQ_I(cy, 2);
  /* vldr d1, [pc, #-4] (.64: 3 cycles) loads s2, s3 */
  memcpy(ram + 0x100, "\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  CHECK_EQ_I(vm_exec_fp(vm, 0xed1f1b01u), 3);
  CHECK_EQ_U(vm->cpu.s[2], 1);
  CHECK_EQ_U(vm->cpu.s[3], 2);
  vm->cpu.r[15] = 0;
  /* vsqrt: 14 cycles, sqrt(2) correctly rounded */
  vm->cpu.fpscr = 0;
  vm->cpu.s[1] = 0x40000000;
  CHECK_EQ_U(run_vm(&T4, 0xeeb10ae0u, &cy), 0x3fb504f3);
  CHECK_EQ_I(cy, 14);
}

static unsigned ntransfers;
static uint32_t transfer_addr[8];

static void on_transfer(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, unsigned size,
                        uint32_t value, bool write)
{
  (void)ctx, (void)cycle, (void)pc, (void)value;
  if (ntransfers < 8 && size == 4 && write)
    transfer_addr[ntransfers] = addr;
  ntransfers++;
}

static void test_fp_faults_and_hooks(void)
{
  struct sonde_vm *vm = T4.vm;
  memset(&vm->cpu, 0, sizeof vm->cpu);
  /* FPU disabled in CPACR: NOCP, nothing executed */
  vm->sys.cpacr = 0;
  vm->sys.cfsr = 0;
  vm->cpu.s[1] = 0x3f800000;
  CHECK_EQ_I(vm_exec_fp(vm, 0xee300a81u), VM_EXT_FAULTED);
  CHECK_EQ_U(vm->cpu.s[0], 0);
  CHECK(vm->sys.cfsr & (1u << 19)); /* UFSR.NOCP */
  /* ... also for an undefined encoding in CP10 space */
  vm->sys.cfsr = 0;
  CHECK_EQ_I(vm_exec_fp(vm, 0xee300b81u), VM_EXT_FAULTED); /* vadd.f64 */
  CHECK(vm->sys.cfsr & (1u << 19));
  vm->sys.cpacr = 0xfu << 20;
  /* double precision arithmetic does not exist on FPv4-SP */
  CHECK_EQ_I(vm_exec_fp(vm, 0xee300b81u), VM_EXT_UNDEFINED);
  /* a core without FPU: NOCP */
  vm->has_fpu = false;
  vm->sys.cfsr = 0;
  CHECK_EQ_I(vm_exec_fp(vm, 0xee300a81u), VM_EXT_FAULTED);
  CHECK(vm->sys.cfsr & (1u << 19));
  vm->has_fpu = true;
  /* VLDR from an unaligned address: UNALIGNED UsageFault, s0 unchanged */
  vm->sys.cfsr = 0;
  vm->cpu.r[1] = UREF_RAM_BASE + 2;
  vm->cpu.s[0] = 0x12345678;
  CHECK_EQ_I(vm_exec_fp(vm, 0xed910a00u), VM_EXT_FAULTED); /* vldr s0, [r1] */
  CHECK(vm->sys.cfsr & (1u << 24));
  CHECK_EQ_U(vm->cpu.s[0], 0x12345678);
  /* VLDM running off mapped memory: BusFault, no register or base change */
  vm->sys.cfsr = 0;
  vm->cpu.r[1] = UREF_RAM_BASE + UREF_RAM_SIZE - 8;
  CHECK_EQ_I(vm_exec_fp(vm, 0xecb10a04u), VM_EXT_FAULTED); /* vldmia r1!, {s0-s3} */
  CHECK(vm->sys.cfsr & (1u << 9)); /* BFSR.PRECISERR */
  CHECK_EQ_U(vm->sys.bfar, UREF_RAM_BASE + UREF_RAM_SIZE);
  CHECK_EQ_U(vm->cpu.s[0], 0x12345678);
  CHECK_EQ_U(vm->cpu.r[1], UREF_RAM_BASE + UREF_RAM_SIZE - 8);
  /* VPUSH {s0-s2}: 1 + 3 cycles, three transfers reported in order */
  struct sonde_vm_hooks h;
  memset(&h, 0, sizeof h);
  h.transfer = on_transfer;
  vm->hooks = h;
  vm->hooked = true;
  vm->cpu.r[13] = UREF_RAM_BASE + 0x100;
  ntransfers = 0;
  CHECK_EQ_I(vm_exec_fp(vm, 0xed2d0a03u), 4);
  CHECK_EQ_U(vm->cpu.r[13], UREF_RAM_BASE + 0x100 - 12);
  CHECK_EQ_U(ntransfers, 3);
  CHECK_EQ_U(transfer_addr[0], UREF_RAM_BASE + 0x100 - 12);
  CHECK_EQ_U(transfer_addr[2], UREF_RAM_BASE + 0x100 - 4);
  vm->hooked = false;
  memset(&vm->hooks, 0, sizeof vm->hooks);
  /* FPv5 instructions are undefined on FPv4 (M4F) */
  CHECK_EQ_I(vm_exec_fp(vm, 0xfe800a00u), VM_EXT_UNDEFINED); /* vmaxnm */
  vm->sys.cfsr = 0;
}

int main(void)
{
  build_templates();
  if (!tu_init(&T4, UREF_CORTEX_M4, true, true, false) ||
      !tu_init(&T33, UREF_CORTEX_M33, true, true, true)) {
    fprintf(stderr, "cannot set up the VMs and Unicorn\n");
    return 1;
  }
  T33.rng = 0x33333333u;
  RUN(test_fp_known);
  RUN(test_fp_faults_and_hooks);
  RUN(test_fp_edges);
  RUN(test_fp_random);
  RUN(test_fp_random_m33);
  RUN(test_fp_loadstore);
  RUN(test_fp_sequences);
  printf("fp: %u encodings, %lu differential cases against Unicorn, %lu mismatches, "
         "%lu known Unicorn deviations checked by hand instead; %lu FP/DSP/IT sequences "
         "through the whole VM\n",
         ntmpls, T4.cases + T33.cases, mismatches, deviations, seq_cases);
  tu_free(&T4);
  tu_free(&T33);
  return check_summary();
}
