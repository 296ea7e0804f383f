/* DSP extension (ARMv7-M ARM A7.7) of the virtual Cortex-M against Unicorn:
 * every DSP instruction with edge operands (saturation limits, INT_MIN, GE
 * combinations, register aliasing) and random operands. SONDE_SOAK=N runs N
 * times as many random cases. */
#include "check.h"
#include "test_fpdsp_util.h"

/* Operand fields an encoding template leaves open. */
enum {
  F_RN = 1u << 0,   /* hw1[3:0] */
  F_RD = 1u << 1,   /* hw2[11:8] */
  F_RM = 1u << 2,   /* hw2[3:0] */
  F_RA = 1u << 3,   /* hw2[15:12], accumulator (never 15: that is the non-acc form) */
  F_LOHI = 1u << 4, /* hw2[15:12] RdLo, hw2[11:8] RdHi, distinct */
  F_SAT = 1u << 5,  /* hw2[3:0] saturate immediate */
  F_IMM5 = 1u << 6, /* PKH shift: hw2[14:12], hw2[7:6] */
  F_ROT = 1u << 7,  /* hw2[5:4] rotation */
};

struct tmpl {
  char name[16];
  uint32_t insn;
  unsigned fields;
};

static struct tmpl tmpls[128];
static unsigned ntmpls;

static void add(const char *name, uint32_t insn, unsigned fields)
{
  struct tmpl *t = &tmpls[ntmpls++];
  snprintf(t->name, sizeof t->name, "%s", name);
  t->insn = insn;
  t->fields = fields;
}

static void build_templates(void)
{
  static const char *lane[8] = {"add8", "add16", "asx", NULL, "sub8", "sub16", "sax", NULL};
  static const char *pre[2][3] = {{"s", "q", "sh"}, {"u", "uq", "uh"}};
  char nm[16];
  for (unsigned u = 0; u < 2; u++)
    for (unsigned k = 0; k < 3; k++)
      for (unsigned op1 = 0; op1 < 8; op1++) {
        if (!lane[op1])
          continue;
        snprintf(nm, sizeof nm, "%s%s", pre[u][k], lane[op1]);
        add(nm, 0xfa80f000u | op1 << 20 | u << 6 | k << 4, F_RN | F_RD | F_RM);
      }
  static const char *q[4] = {"qadd", "qdadd", "qsub", "qdsub"};
  for (unsigned op2 = 0; op2 < 4; op2++)
    add(q[op2], 0xfa80f080u | op2 << 4, F_RN | F_RD | F_RM);
  add("sel", 0xfaa0f080u, F_RN | F_RD | F_RM);
  add("sxtab16", 0xfa20f080u, F_RN | F_RD | F_RM | F_ROT);
  add("uxtab16", 0xfa30f080u, F_RN | F_RD | F_RM | F_ROT);
  add("sxtb16", 0xfa2ff080u, F_RD | F_RM | F_ROT);
  add("uxtb16", 0xfa3ff080u, F_RD | F_RM | F_ROT);
  add("ssat16", 0xf3200000u, F_RN | F_RD | F_SAT);
  add("usat16", 0xf3a00000u, F_RN | F_RD | F_SAT);
  add("pkhbt", 0xeac00000u, F_RN | F_RD | F_RM | F_IMM5);
  add("pkhtb", 0xeac00020u, F_RN | F_RD | F_RM | F_IMM5);
  static const char *xy[4] = {"bb", "bt", "tb", "tt"};
  for (unsigned nm2 = 0; nm2 < 4; nm2++) {
    snprintf(nm, sizeof nm, "smla%s", xy[nm2]);
    add(nm, 0xfb100000u | nm2 << 4, F_RN | F_RD | F_RM | F_RA);
    snprintf(nm, sizeof nm, "smul%s", xy[nm2]);
    add(nm, 0xfb10f000u | nm2 << 4, F_RN | F_RD | F_RM);
    snprintf(nm, sizeof nm, "smlal%s", xy[nm2]);
    add(nm, 0xfbc00080u | nm2 << 4, F_RN | F_RM | F_LOHI);
  }
  for (unsigned x = 0; x < 2; x++) {
    const char *s = x ? "x" : "";
    const char *r = x ? "r" : "";
    snprintf(nm, sizeof nm, "smlad%s", s), add(nm, 0xfb200000u | x << 4, F_RN | F_RD | F_RM | F_RA);
    snprintf(nm, sizeof nm, "smuad%s", s), add(nm, 0xfb20f000u | x << 4, F_RN | F_RD | F_RM);
    snprintf(nm, sizeof nm, "smlsd%s", s), add(nm, 0xfb400000u | x << 4, F_RN | F_RD | F_RM | F_RA);
    snprintf(nm, sizeof nm, "smusd%s", s), add(nm, 0xfb40f000u | x << 4, F_RN | F_RD | F_RM);
    snprintf(nm, sizeof nm, "smlaw%s", x ? "t" : "b");
    add(nm, 0xfb300000u | x << 4, F_RN | F_RD | F_RM | F_RA);
    snprintf(nm, sizeof nm, "smulw%s", x ? "t" : "b");
    add(nm, 0xfb30f000u | x << 4, F_RN | F_RD | F_RM);
    snprintf(nm, sizeof nm, "smmla%s", r), add(nm, 0xfb500000u | x << 4, F_RN | F_RD | F_RM | F_RA);
    snprintf(nm, sizeof nm, "smmul%s", r), add(nm, 0xfb50f000u | x << 4, F_RN | F_RD | F_RM);
    snprintf(nm, sizeof nm, "smmls%s", r), add(nm, 0xfb600000u | x << 4, F_RN | F_RD | F_RM | F_RA);
    snprintf(nm, sizeof nm, "smlald%s", s), add(nm, 0xfbc000c0u | x << 4, F_RN | F_RM | F_LOHI);
    snprintf(nm, sizeof nm, "smlsld%s", s), add(nm, 0xfbd000c0u | x << 4, F_RN | F_RM | F_LOHI);
  }
  add("usad8", 0xfb70f000u, F_RN | F_RD | F_RM);
  add("usada8", 0xfb700000u, F_RN | F_RD | F_RM | F_RA);
  add("umaal", 0xfbe00060u, F_RN | F_RM | F_LOHI);
}

static const uint32_t edges[] = {
  0x00000000, 0x00000001, 0x7fffffff, 0x80000000, 0xffffffff, 0x00007fff, 0x00008000,
  0x7fff8000, 0x80007fff, 0x80008000, 0x7fff7fff, 0xffff0001, 0x7f7f7f7f, 0x80808080,
  0x807f01ff, 0x40004000, 0xc000c000, 0x3fffffff,
};
#define NEDGES (sizeof edges / sizeof edges[0])

static unsigned rand_reg(struct tu *t)
{
  unsigned r = tu_below(t, 14);
  return r == 13 ? 14 : r;
}

static uint32_t rand_val(struct tu *t)
{
  switch (tu_below(t, 4)) {
  case 0:
    return edges[tu_below(t, NEDGES)];
  case 1: /* lanes near limits */
    return edges[tu_below(t, NEDGES)] ^ (tu_rand(t) & 0x01010101u);
  default:
    return tu_rand(t);
  }
}

/* Fill the template's open fields. Registers are random (aliasing allowed)
 * unless `fixed`, which gives r1 (n), r2 (m), r3 (d), r4 (a/lo), r5 (hi). */
static uint32_t instantiate(struct tu *t, const struct tmpl *tp, bool fixed)
{
  uint32_t insn = tp->insn;
  if (tp->fields & F_RN)
    insn |= (fixed ? 1u : rand_reg(t)) << 16;
  if (tp->fields & F_RM)
    insn |= fixed ? 2u : rand_reg(t);
  if (tp->fields & F_RD)
    insn |= (fixed ? 3u : rand_reg(t)) << 8;
  if (tp->fields & F_RA)
    insn |= (fixed ? 4u : rand_reg(t)) << 12;
  if (tp->fields & F_LOHI) {
    unsigned lo = fixed ? 4u : rand_reg(t), hi;
    do
      hi = fixed ? 5u : rand_reg(t);
    while (hi == lo);
    insn |= lo << 12 | hi << 8;
  }
  if (tp->fields & F_SAT)
    insn |= tu_below(t, 16);
  if (tp->fields & F_IMM5) {
    unsigned imm5 = tu_below(t, 4) == 0 ? 0 : tu_below(t, 32);
    insn |= (imm5 >> 2) << 12 | (imm5 & 3) << 6;
  }
  if (tp->fields & F_ROT)
    insn |= tu_below(t, 4) << 4;
  return insn;
}

static unsigned long mismatches, deviations;

/* Unicorn 2.0.1 (QEMU 5.0) checks SMLAD/SMLADX overflow twice: after adding
 * the two products and after adding Ra. The ARM ARM (A7.7.124) sets Q only
 * when the complete sum does not fit in 32 bits. The two differ when both
 * products are 2^30 (all four halfwords 0x8000) and Ra < 0: QEMU sets Q for
 * the intermediate 2^31, the architecture does not. For such a case return
 * the architecturally expected state: Unicorn's, with Q computed by hand. */
static bool unicorn_smlad_deviation(uint32_t insn, const struct uref_state *in,
                                    const struct uref_state *ref, struct uref_state *expect)
{
  unsigned a = (insn >> 12) & 15;
  if ((insn & 0xfff000e0u) != 0xfb200000u || a == 15)
    return false;
  uint32_t rn = in->r[(insn >> 16) & 15], rm = in->r[insn & 15];
  if (rn != 0x80008000u || rm != 0x80008000u)
    return false;
  int64_t full = ((int64_t)1 << 31) + (int32_t)in->r[a];
  *expect = *ref;
  expect->apsr = (in->apsr & (1u << 27)) | (ref->apsr & ~(1u << 27));
  if (full != (int32_t)full)
    expect->apsr |= 1u << 27;
  return true;
}

static void one(struct tu *t, const struct tmpl *tp, uint32_t insn, const struct uref_state *in)
{
  struct uref_state ref, got;
  bool ref_ok;
  tu_renew(t, 1);
  int rc = tu_run(t, insn, false, in, &ref, &got, &ref_ok);
  char why[96];
  if (!ref_ok || rc != 1 || tu_diff(&got, &ref, false, why, sizeof why)) {
    struct uref_state expect;
    if (ref_ok && rc == 1 && unicorn_smlad_deviation(insn, in, &ref, &expect)) {
      if (deviations++ == 0)
        printf("note: Unicorn deviates from the ARM ARM on SMLAD Q (intermediate overflow, "
               "%s 0x%08x); checked against the pseudocode instead\n", tp->name, insn);
      if (tu_diff(&got, &expect, false, why, sizeof why))
        CHECK_FAIL_("%s 0x%08x (hand-checked): %s", tp->name, insn, why);
      return;
    }
    if (mismatches++ < 20) {
      if (!ref_ok || rc != 1)
        snprintf(why, sizeof why, "vm rc %d, unicorn %s", rc, ref_ok ? "ok" : uref_error(t->u));
      CHECK_FAIL_("%s 0x%08x r1=0x%08x r2=0x%08x r4=0x%08x r5=0x%08x apsr=0x%08x: %s", tp->name,
                  insn, in->r[1], in->r[2], in->r[4], in->r[5], in->apsr, why);
    } else {
      check_cur_failed++;
    }
  }
}

static struct tu T;

static void random_state(struct tu *t, struct uref_state *st)
{
  memset(st, 0, sizeof *st);
  for (int i = 0; i < 15; i++)
    st->r[i] = rand_val(t);
  st->r[13] = UREF_RAM_BASE + 0x8000;
  st->apsr = tu_rand(t) & 0xf80f0000u;
}

/* Edge operands: every pair of edge values in Rn/Rm (r1/r2), with the
 * accumulator registers at edge values too, and random flags/GE. */
static void test_dsp_edges(void)
{
  for (unsigned i = 0; i < ntmpls; i++) {
    const struct tmpl *tp = &tmpls[i];
    for (unsigned a = 0; a < NEDGES; a++)
      for (unsigned b = 0; b < NEDGES; b++) {
        struct uref_state st;
        random_state(&T, &st);
        st.r[1] = edges[a];
        st.r[2] = edges[b];
        st.r[4] = edges[(a + b) % NEDGES];
        st.r[5] = edges[(a * 7 + b) % NEDGES];
        one(&T, tp, instantiate(&T, tp, true), &st);
      }
  }
}

/* The SMLAD Q case where Unicorn deviates, every run (see above). */
static void test_dsp_smlad_deviation(void)
{
  for (unsigned i = 0; i < ntmpls; i++)
    if (strcmp(tmpls[i].name, "smlad") == 0 || strcmp(tmpls[i].name, "smladx") == 0) {
      struct uref_state st;
      random_state(&T, &st);
      st.r[1] = st.r[2] = 0x80008000u;
      st.r[4] = 0xffffffffu;
      st.apsr &= ~(1u << 27);
      one(&T, &tmpls[i], instantiate(&T, &tmpls[i], true), &st);
    }
  CHECK(deviations >= 2);
}

static void test_dsp_random(void)
{
  unsigned long n = tu_soak(5000);
  for (unsigned long i = 0; i < n; i++) {
    const struct tmpl *tp = &tmpls[tu_below(&T, ntmpls)];
    struct uref_state st;
    random_state(&T, &st);
    one(&T, tp, instantiate(&T, tp, false), &st);
  }
}

/* The Unicorn harness itself: known results, rewriting code in place. */
static void test_harness(void)
{
  struct uref *u = T.u;
  struct uref_state st = {0};
  st.r[1] = 0x7f7f7f7f;
  st.r[2] = 0x01807f01;
  st.apsr = 0xf80f0000;
  uref_set_state(u, &st);
  uref_get_state(u, &st);
  CHECK_EQ_U(st.apsr, 0xf80f0000);
  uint16_t qadd8[] = {0xfa81, 0xf012}; /* qadd8 r0, r1, r2 */
  REQUIRE(uref_write_code(u, UREF_CODE_BASE, qadd8, 2) == 0);
  REQUIRE(uref_run(u, UREF_CODE_BASE, 1) == 0);
  uref_get_state(u, &st);
  CHECK_EQ_U(st.r[0], 0x7fff7f7f);
  CHECK_EQ_U(st.r[15], UREF_CODE_BASE + 4);
  uint16_t sadd8[] = {0xfa81, 0xf002}; /* sadd8 r0, r1, r2 */
  REQUIRE(uref_write_code(u, UREF_CODE_BASE, sadd8, 2) == 0);
  REQUIRE(uref_run(u, UREF_CODE_BASE, 1) == 0);
  uref_get_state(u, &st);
  CHECK_EQ_U(st.r[0], 0x80fffe80);
  CHECK_EQ_U(st.apsr & 0x000f0000, 0x000b0000); /* GE set where a byte sum >= 0 */
}

/* Hand-computed values from the ARM ARM pseudocode, independent of Unicorn. */
static void test_dsp_known(void)
{
  struct sonde_vm *vm = T.vm;
  memset(&vm->cpu, 0, sizeof vm->cpu);
  vm->cpu.r[1] = 0x7fffffff;
  vm->cpu.r[2] = 1;
  CHECK_EQ_I(vm_exec_dsp(vm, 0xfa82f381u), 1); /* qadd r3, r1, r2 */
  CHECK_EQ_U(vm->cpu.r[3], 0x7fffffff);
  CHECK_EQ_U(vm->cpu.apsr, 1u << 27); /* Q */
  vm->cpu.apsr = 0;
  vm->cpu.r[1] = 0x80008000; /* smuad r3, r1, r1: 2 * 2^30 overflows */
  CHECK_EQ_I(vm_exec_dsp(vm, 0xfb21f301u), 1);
  CHECK_EQ_U(vm->cpu.r[3], 0x80000000);
  CHECK_EQ_U(vm->cpu.apsr, 1u << 27);
  /* smlad r3, r1, r1, r4 with r1 = 0x80008000, r4 = -1: 2^31 - 1 fits, so
   * no Q (ARM ARM A7.7.124; Unicorn 2.0.1 sets Q here) */
  vm->cpu.apsr = 0;
  vm->cpu.r[4] = 0xffffffff;
  CHECK_EQ_I(vm_exec_dsp(vm, 0xfb214301u), 1);
  CHECK_EQ_U(vm->cpu.r[3], 0x7fffffff);
  CHECK_EQ_U(vm->cpu.apsr, 0);
  vm->cpu.apsr = 0; /* usub8 r3, r1, r2 with r1 = 0x00ff0180, r2 = 0x01fe0180 */
  vm->cpu.r[1] = 0x00ff0180;
  vm->cpu.r[2] = 0x01fe0180;
  CHECK_EQ_I(vm_exec_dsp(vm, 0xfac1f342u), 1);
  CHECK_EQ_U(vm->cpu.r[3], 0xff010000);
  CHECK_EQ_U(vm->cpu.apsr, 0x00070000); /* GE3 clear: 0x00 - 0x01 < 0 */
  vm->has_dsp = false; /* a core without the extension */
  CHECK_EQ_I(vm_exec_dsp(vm, 0xfac1f342u), VM_EXT_UNDEFINED);
  vm->has_dsp = true;
}

int main(void)
{
  build_templates();
  if (!tu_init(&T, UREF_CORTEX_M4, true, true, false)) {
    fprintf(stderr, "cannot set up the VM and Unicorn\n");
    return 1;
  }
  RUN(test_harness);
  RUN(test_dsp_known);
  RUN(test_dsp_edges);
  RUN(test_dsp_smlad_deviation);
  RUN(test_dsp_random);
  printf("dsp: %u encodings, %lu differential cases against Unicorn, %lu mismatches, "
         "%lu known Unicorn deviations (SMLAD Q) checked by hand instead\n",
         ntmpls, T.cases, mismatches, deviations);
  tu_free(&T);
  return check_summary();
}
