/* Directed tests of the CPU core: faults (UNDEFINSTR, INVSTATE, UNALIGNED,
 * DIVBYZERO, PRECISERR, IBUSERR, NOCP), ARMv6-M gating, IT blocks across an
 * xPSR save/restore, the exclusive monitor, special registers, hooks,
 * self-modifying code, and the cycle model (exact counts per the Cortex-M3/M4
 * TRM tables as documented in docs/vm.md "CPU and cycle model"). */
#include "check.h"
#include "test_cpu_util.h"

#define CODE 0x00001000u
#define RAM 0x20000100u

#define CFSR_UNDEFINSTR (1u << 16)
#define CFSR_INVSTATE (1u << 17)
#define CFSR_NOCP (1u << 19)
#define CFSR_UNALIGNED (1u << 24)
#define CFSR_DIVBYZERO (1u << 25)
#define CFSR_IBUSERR (1u << 8)
#define CFSR_PRECISERR (1u << 9)
#define CFSR_BFARVALID (1u << 15)

static struct sonde_vm *setup(enum sonde_vm_core core, const uint16_t *code, size_t n)
{
  struct sonde_vm *vm = tc_vm_new(core);
  if (!vm)
    return NULL;
  tc_code(vm, CODE, code, n);
  vm->cpu.r[15] = CODE;
  vm->cpu.r[13] = 0x20008000u;
  vm->sys.ccr = 0;
  return vm;
}

/* Run one instruction expecting a fault with the given CFSR bits. */
static void expect_fault(enum sonde_vm_core core, const uint16_t *code, size_t n, uint32_t r1,
                         uint32_t cfsr_bits, const char *what)
{
  struct sonde_vm *vm = setup(core, code, n);
  REQUIRE(vm);
  vm->cpu.r[1] = r1;
  vm->cpu.r[2] = 0;
  bool ok = tc_step(vm);
  if (ok)
    fprintf(stderr, "  %s: retired, expected a fault\n", what);
  CHECK(!ok);
  CHECK_EQ_U(vm->cpu.r[15], CODE);
  CHECK_EQ_U(vm->cpu.instret, 0);
  if (cfsr_bits)
    CHECK_EQ_U(vm->sys.cfsr & cfsr_bits, cfsr_bits);
  tc_vm_free(vm);
}

static void test_faults(void)
{
  static const uint16_t udf[] = {0xde00};
  expect_fault(SONDE_VM_CORE_M3, udf, 1, 0, CFSR_UNDEFINSTR, "udf");
  static const uint16_t qadd[] = {0xfa82, 0xf081}; /* DSP: undefined on M3 */
  expect_fault(SONDE_VM_CORE_M3, qadd, 2, 0, CFSR_UNDEFINSTR, "qadd on m3");
  static const uint16_t sxtab[] = {0xfa41, 0xf082}; /* SXTAB is ARMv7E-M */
  expect_fault(SONDE_VM_CORE_M3, sxtab, 2, 0, CFSR_UNDEFINSTR, "sxtab on m3");
  static const uint16_t mcr[] = {0xee00, 0x0010}; /* MCR p0: no coprocessor 0 */
  expect_fault(SONDE_VM_CORE_M3, mcr, 2, 0, CFSR_NOCP, "mcr p0");
  static const uint16_t addw[] = {0xeb00, 0x0000}; /* ADD.W: not ARMv6-M */
  expect_fault(SONDE_VM_CORE_M0PLUS, addw, 2, 0, 0, "add.w on m0+");
  static const uint16_t cbz[] = {0xb100}; /* CBZ: not ARMv6-M */
  expect_fault(SONDE_VM_CORE_M0PLUS, cbz, 1, 0, 0, "cbz on m0+");
  static const uint16_t ldr[] = {0x6808}; /* LDR r0, [r1] */
  expect_fault(SONDE_VM_CORE_M0PLUS, ldr, 1, RAM + 1, 0, "unaligned ldr on m0+");
  static const uint16_t ldm[] = {0xe891, 0x000c}; /* LDM r1, {r2, r3} */
  expect_fault(SONDE_VM_CORE_M3, ldm, 2, RAM + 2, CFSR_UNALIGNED, "unaligned ldm");
  static const uint16_t ldrd[] = {0xe9d1, 0x2300}; /* LDRD r2, r3, [r1] */
  expect_fault(SONDE_VM_CORE_M3, ldrd, 2, RAM + 2, CFSR_UNALIGNED, "unaligned ldrd");
  static const uint16_t ldrex[] = {0xe851, 0x0f00}; /* LDREX r0, [r1] */
  expect_fault(SONDE_VM_CORE_M3, ldrex, 2, RAM + 2, CFSR_UNALIGNED, "unaligned ldrex");
  expect_fault(SONDE_VM_CORE_M3, ldr, 1, 0x50000000u, CFSR_PRECISERR | CFSR_BFARVALID,
               "ldr unmapped");

  /* unaligned LDR is fine on ARMv7-M unless CCR.UNALIGN_TRP */
  struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, ldr, 1);
  REQUIRE(vm);
  memcpy(tc_ram(vm) + 0x101, "\x11\x22\x33\x44", 4);
  vm->cpu.r[1] = RAM + 1;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[0], 0x44332211u);
  vm->cpu.r[15] = CODE;
  vm->sys.ccr = 1u << 3;
  CHECK(!tc_step(vm));
  CHECK(vm->sys.cfsr & CFSR_UNALIGNED);
  CHECK_EQ_U(vm->sys.bfar, 0);
  tc_vm_free(vm);

  /* BusFault address */
  vm = setup(SONDE_VM_CORE_M3, ldr, 1);
  REQUIRE(vm);
  vm->cpu.r[1] = 0x50000010u;
  CHECK(!tc_step(vm));
  CHECK_EQ_U(vm->sys.bfar, 0x50000010u);
  tc_vm_free(vm);

  /* divide by zero: 0, or DIVBYZERO with CCR.DIV_0_TRP */
  static const uint16_t udiv[] = {0xfbb1, 0xf0f2}; /* UDIV r0, r1, r2 */
  vm = setup(SONDE_VM_CORE_M3, udiv, 2);
  REQUIRE(vm);
  vm->cpu.r[0] = 7;
  vm->cpu.r[1] = 100;
  vm->cpu.r[2] = 0;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[0], 0);
  tc_vm_free(vm);
}

static void test_div0_trap(void)
{
  static const uint16_t sdiv[] = {0xfb91, 0xf0f2}; /* SDIV r0, r1, r2 */
  struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, sdiv, 2);
  REQUIRE(vm);
  vm->sys.ccr = 1u << 4;
  vm->cpu.r[1] = 5;
  vm->cpu.r[2] = 0;
  CHECK(!tc_step(vm));
  CHECK(vm->sys.cfsr & CFSR_DIVBYZERO);
  tc_vm_free(vm);
  /* INT_MIN / -1 = INT_MIN */
  vm = setup(SONDE_VM_CORE_M3, sdiv, 2);
  REQUIRE(vm);
  vm->cpu.r[1] = 0x80000000u;
  vm->cpu.r[2] = 0xffffffffu;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[0], 0x80000000u);
  tc_vm_free(vm);
}

static void test_interworking(void)
{
  /* BX r0 with bit 0 clear: the branch completes, the next instruction faults INVSTATE */
  static const uint16_t code[] = {0x4700, 0xbf00, 0xbf00};
  struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, code, 3);
  REQUIRE(vm);
  vm->cpu.r[0] = CODE + 4;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[15], CODE + 4);
  CHECK(!tc_step(vm));
  CHECK(vm->sys.cfsr & CFSR_INVSTATE);
  CHECK_EQ_U(vm_cpu_get_xpsr(vm) & (1u << 24), 0);
  tc_vm_free(vm);

  /* fetch from unmapped memory: IBUSERR */
  vm = setup(SONDE_VM_CORE_M3, code, 3);
  REQUIRE(vm);
  vm->cpu.r[0] = 0x60000001u;
  CHECK(tc_step(vm));
  CHECK(!tc_step(vm));
  CHECK(vm->sys.cfsr & CFSR_IBUSERR);
  tc_vm_free(vm);

  /* BLX r1 sets LR to the return address with bit 0 */
  static const uint16_t blx[] = {0x4788, 0xbf00, 0xbf00};
  vm = setup(SONDE_VM_CORE_M3, blx, 3);
  REQUIRE(vm);
  vm->cpu.r[1] = (CODE + 4) | 1;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[14], (CODE + 2) | 1);
  CHECK_EQ_U(vm->cpu.r[15], CODE + 4);
  CHECK(tc_step(vm));
  tc_vm_free(vm);
}

static void test_it_block(void)
{
  /* ITTE EQ; MOVEQ r0,#1; MOVEQ r1,#2; MOVNE r2,#3; MOVS r3,#4 (sets flags outside IT) */
  static const uint16_t code[] = {0xbf06, 0x2001, 0x2102, 0x2203, 0x2304};
  for (int z = 0; z < 2; z++) {
    struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, code, 5);
    REQUIRE(vm);
    vm->cpu.apsr = z ? (1u << 30) : 0;
    for (int i = 0; i < 4; i++)
      CHECK(tc_step(vm));
    CHECK_EQ_U(vm->cpu.r[0], z ? 1 : 0);
    CHECK_EQ_U(vm->cpu.r[1], z ? 2 : 0);
    CHECK_EQ_U(vm->cpu.r[2], z ? 0 : 3);
    CHECK_EQ_U(vm->cpu.apsr, z ? (1u << 30) : 0); /* MOV in IT sets no flags */
    CHECK_EQ_U(vm_cpu_get_xpsr(vm) & 0x0600fc00u, 0);
    CHECK(tc_step(vm));
    CHECK_EQ_U(vm->cpu.r[3], 4);
    CHECK_EQ_U(vm->cpu.apsr, 0); /* MOVS outside: N=0 Z=0 */
    CHECK_EQ_U(vm->cpu.instret, 5);
    tc_vm_free(vm);
  }
  /* an exception between IT instructions: ITSTATE travels through the xPSR */
  struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, code, 5);
  REQUIRE(vm);
  vm->cpu.apsr = 0; /* NE */
  CHECK(tc_step(vm)); /* IT */
  CHECK(tc_step(vm)); /* MOVEQ r0 (skipped) */
  uint32_t xpsr = vm_cpu_get_xpsr(vm);
  CHECK((xpsr & 0x0600fc00u) != 0);
  vm_cpu_set_xpsr(vm, (1u << 24)); /* "handler" runs with IT clear */
  vm->cpu.r[1] = 0;
  vm_cpu_set_xpsr(vm, xpsr); /* "return" */
  CHECK(tc_step(vm)); /* MOVEQ r1 (skipped) */
  CHECK(tc_step(vm)); /* MOVNE r2 */
  CHECK_EQ_U(vm->cpu.r[1], 0);
  CHECK_EQ_U(vm->cpu.r[2], 3);
  CHECK_EQ_U(vm_cpu_get_xpsr(vm) & 0x0600fc00u, 0);
  tc_vm_free(vm);
}

static void test_exclusive(void)
{
  /* LDREX r0,[r1]; STREX r2,r3,[r1]; STREX r2,r3,[r1] (monitor now closed) */
  static const uint16_t code[] = {0xe851, 0x0f00, 0xe841, 0x3200, 0xe841, 0x3200};
  struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, code, 6);
  REQUIRE(vm);
  vm->cpu.r[1] = RAM;
  vm->cpu.r[3] = 0xabcdef01u;
  CHECK(tc_step(vm));
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[2], 0);
  CHECK_EQ_U(tc_ram(vm)[0x100], 0x01);
  vm->cpu.r[3] = 0x55;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[2], 1);
  CHECK_EQ_U(tc_ram(vm)[0x100], 0x01);
  /* cleared by an exception entry/return (vm_cpu_clear_exclusive) */
  vm->cpu.r[15] = CODE;
  CHECK(tc_step(vm));
  vm_cpu_clear_exclusive(vm);
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[2], 1);
  tc_vm_free(vm);
}

static void test_sysregs(void)
{
  static const uint16_t code[] = {
    0xf380, 0x8811, /* MSR BASEPRI, r0 */
    0xf3ef, 0x8111, /* MRS r1, BASEPRI */
    0xf380, 0x8812, /* MSR BASEPRI_MAX, r0 (lower value: ignored when higher) */
    0xb672,         /* CPSID i */
    0xf3ef, 0x8210, /* MRS r2, PRIMASK */
    0xf380, 0x8809, /* MSR PSP, r0 */
    0xf383, 0x8814, /* MSR CONTROL, r3 (SPSEL) */
    0xf3ef, 0x8403, /* MRS r4, xPSR */
  };
  struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, code, sizeof code / 2);
  REQUIRE(vm);
  vm->cpu.r[0] = 0x4f; /* 3 priority bits: 0x40 */
  CHECK(tc_step(vm));
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[1], 0x40);
  vm->cpu.r[0] = 0x60;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.basepri, 0x40);
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.primask, 1);
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[2], 1);
  vm->cpu.r[0] = 0x20004000u;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[13], 0x20008000u);
  vm->cpu.r[3] = 2;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[13], 0x20004000u); /* PSP now active */
  CHECK_EQ_U(vm_cpu_get_sp(vm, false), 0x20008000u);
  vm->cpu.apsr = 0xa0000000u;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[4], 0xa0000000u); /* EPSR reads as zero */
  tc_vm_free(vm);

  /* unprivileged Thread mode cannot write PRIMASK */
  static const uint16_t un[] = {0xf380, 0x8810}; /* MSR PRIMASK, r0 */
  vm = setup(SONDE_VM_CORE_M3, un, 2);
  REQUIRE(vm);
  vm_cpu_set_control(vm, 1);
  vm->cpu.r[0] = 1;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.primask, 0);
  tc_vm_free(vm);
}

/* Self-modifying code in RAM: the decode cache must see the store. */
static void test_smc(void)
{
  struct sonde_vm *vm = tc_vm_new(SONDE_VM_CORE_M3);
  REQUIRE(vm);
  /* at RAM: MOVS r0,#1 ; STRH r2,[r1] ; B back to RAM */
  static const uint16_t code[] = {0x2001, 0x800a, 0xe7fc};
  vm_bus_load(&vm->bus, RAM, code, sizeof code, NULL);
  vm->cpu.r[15] = RAM;
  vm->cpu.r[1] = RAM;
  vm->cpu.r[2] = 0x2007; /* MOVS r0,#7 */
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[0], 1);
  CHECK(tc_step(vm)); /* rewrites the first instruction */
  CHECK(tc_step(vm)); /* B */
  CHECK_EQ_U(vm->cpu.r[15], RAM);
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.r[0], 7);
  tc_vm_free(vm);
}

/* ---- hooks ------------------------------------------------------------------ */

struct rec {
  unsigned nret, ntx;
  uint32_t pc[8];
  uint64_t cyc[8];
  uint32_t dur[8];
  uint64_t tcyc[8];
  uint32_t taddr[8], tval[8];
  bool twrite[8];
};

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  struct rec *r = ctx;
  if (r->nret < 8) {
    r->pc[r->nret] = pc;
    r->cyc[r->nret] = cycle;
    r->dur[r->nret] = cycles;
  }
  r->nret++;
}

static void on_transfer(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, unsigned size,
                        uint32_t value, bool write)
{
  struct rec *r = ctx;
  (void)pc;
  (void)size;
  if (r->ntx < 8) {
    r->tcyc[r->ntx] = cycle;
    r->taddr[r->ntx] = addr;
    r->tval[r->ntx] = value;
    r->twrite[r->ntx] = write;
  }
  r->ntx++;
}

static void test_hooks(void)
{
  /* STR r0,[r1]; LDR r2,[r1]; PUSH {r0,r1} */
  static const uint16_t code[] = {0x6008, 0x680a, 0xb403};
  struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, code, 3);
  REQUIRE(vm);
  struct rec r;
  memset(&r, 0, sizeof r);
  vm->hooks.ctx = &r;
  vm->hooks.retire = on_retire;
  vm->hooks.transfer = on_transfer;
  vm->hooked = true;
  vm->cpu.r[0] = 0x12345678u;
  vm->cpu.r[1] = RAM;
  for (int i = 0; i < 3; i++)
    CHECK(tc_step(vm));
  CHECK_EQ_U(r.nret, 3);
  CHECK_EQ_U(r.pc[0], CODE);
  CHECK_EQ_U(r.pc[2], CODE + 4);
  CHECK_EQ_U(r.cyc[0], 0);
  CHECK_EQ_U(r.dur[0], 2);
  CHECK_EQ_U(r.cyc[1], 2);
  CHECK_EQ_U(r.dur[1], 1); /* pipelined after the STR */
  CHECK_EQ_U(r.cyc[2], 3);
  CHECK_EQ_U(r.dur[2], 3); /* PUSH: 1 + N */
  CHECK_EQ_U(r.ntx, 4);
  CHECK(r.twrite[0]);
  CHECK_EQ_U(r.taddr[0], RAM);
  CHECK_EQ_U(r.tcyc[0], 1);
  CHECK(!r.twrite[1]);
  CHECK_EQ_U(r.tval[1], 0x12345678u);
  CHECK_EQ_U(r.tcyc[1], 2); /* clamped to the instruction's only cycle */
  CHECK_EQ_U(r.taddr[2], 0x20008000u - 8);
  CHECK_EQ_U(r.tcyc[2], 4);
  CHECK_EQ_U(r.tcyc[3], 5);
  CHECK_EQ_U(vm->cpu.cycles, 6);
  tc_vm_free(vm);
}

/* ---- cycle model ------------------------------------------------------------ */

/* Run n instructions and return the cycles they took. */
static uint64_t cycles_of(enum sonde_vm_core core, const uint16_t *code, size_t nhw, unsigned n,
                          const uint32_t *regs)
{
  struct sonde_vm *vm = setup(core, code, nhw);
  if (!vm)
    return 0;
  if (regs)
    for (int i = 0; i < 13; i++)
      vm->cpu.r[i] = regs[i];
  for (unsigned i = 0; i < n; i++)
    if (!tc_step(vm)) {
      fprintf(stderr, "  cycles_of: instruction %u faulted\n", i);
      tc_vm_free(vm);
      return 0;
    }
  uint64_t c = vm->cpu.cycles;
  CHECK_EQ_U(vm->cpu.instret, n);
  tc_vm_free(vm);
  return c;
}

static void test_cycles(void)
{
  uint32_t regs[13] = {0};
  regs[1] = RAM;
  regs[3] = RAM + 8;
  regs[4] = RAM;
  /* data processing: 1 each */
  static const uint16_t alu[] = {0x2001, 0x1c40, 0x4348}; /* MOVS, ADDS, MULS */
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, alu, 3, 3, regs), 3);
  /* B taken: 1 + P (P = 2); B<c> not taken: 1 */
  static const uint16_t b[] = {0xe000, 0xbf00, 0xd000}; /* B +0 ; (NOP) ; BEQ (Z=0) */
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, b, 3, 2, regs), 3 + 1);
  /* loads: 2, a neighbouring independent load pipelines to 1, a dependent one not */
  static const uint16_t ld2[] = {0x6808, 0x681a}; /* LDR r0,[r1]; LDR r2,[r3] */
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, ld2, 2, 2, regs), 3);
  static const uint16_t lddep[] = {0x6808, 0x6802}; /* LDR r0,[r1]; LDR r2,[r0] */
  uint32_t r2[13] = {0};
  r2[1] = RAM;
  memcpy(r2, regs, sizeof r2);
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, lddep, 2, 2, r2) , 4);
  /* STR with register offset: nothing pipelines after it */
  static const uint16_t strreg[] = {0x5088, 0x681a}; /* STR r0,[r1,r2]; LDR r2,[r3] */
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, strreg, 2, 2, regs), 4);
  /* no pipelining on Cortex-M0+ */
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M0PLUS, ld2, 2, 2, regs), 4);
  /* LDM 1+N, PUSH 1+N, POP with PC 1+N+P */
  static const uint16_t ldm[] = {0xcc0f}; /* LDM r4!, {r0-r3} */
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, ldm, 1, 1, regs), 5);
  static const uint16_t pushpop[] = {0xb510, 0xbd10}; /* PUSH {r4,lr}; POP {r4,pc} */
  {
    struct sonde_vm *vm = setup(SONDE_VM_CORE_M3, pushpop, 2);
    REQUIRE(vm);
    vm->cpu.r[14] = (CODE + 0x100) | 1;
    CHECK(tc_step(vm));
    CHECK_EQ_U(vm->cpu.cycles, 3);
    CHECK(tc_step(vm));
    CHECK_EQ_U(vm->cpu.cycles, 3 + 5);
    CHECK_EQ_U(vm->cpu.r[15], CODE + 0x100);
    tc_vm_free(vm);
  }
  /* multiplies: MLA 2; UMULL 3..5 on M3 by operand size, 1 on M4 */
  static const uint16_t mla[] = {0xfb01, 0x3002};
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, mla, 2, 1, regs), 2);
  static const uint16_t umull[] = {0xfba2, 0x0103}; /* UMULL r0, r1, r2, r3 */
  uint32_t m[13] = {0};
  m[2] = 100;
  m[3] = 200;
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, umull, 2, 1, m), 3);
  m[2] = 0x12345678u;
  m[3] = 0x9abcdef0u;
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, umull, 2, 1, m), 5);
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M4, umull, 2, 1, m), 1);
  /* divide: 2 when the quotient is 0, else 3 + quotient bits / 4 */
  static const uint16_t udiv[] = {0xfbb1, 0xf0f2}; /* UDIV r0, r1, r2 */
  uint32_t d[13] = {0};
  d[1] = 1;
  d[2] = 7;
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, udiv, 2, 1, d), 2);
  d[1] = 100;
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, udiv, 2, 1, d), 4);
  d[1] = 0xffffffffu;
  d[2] = 1;
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, udiv, 2, 1, d), 11);
  /* BL: 1 + P on M3, 3 on M0+ */
  static const uint16_t bl[] = {0xf000, 0xf800};
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, bl, 2, 1, regs), 3);
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M0PLUS, bl, 2, 1, regs), 3);
  /* conditional instruction failing in an IT block: 1 */
  static const uint16_t it[] = {0xbf08, 0x6808}; /* IT EQ; LDREQ (Z=0) */
  CHECK_EQ_U(cycles_of(SONDE_VM_CORE_M3, it, 2, 2, regs), 2);
}

/* Wait states: data accesses add the region's, a refill adds the target's. */
static void test_wait_states(void)
{
  struct sonde_vm *vm = calloc(1, sizeof *vm);
  REQUIRE(vm);
  vm_bus_init(&vm->bus);
  REQUIRE(vm_bus_add_region(&vm->bus, "flash", 0, 0x10000, 2, 2,
                            VM_REGION_EXEC | VM_REGION_READONLY) == 0);
  REQUIRE(vm_bus_add_region(&vm->bus, "sram", 0x20000000u, 0x10000, 0, 0, VM_REGION_EXEC) == 0);
  vm->core = SONDE_VM_CORE_M3;
  vm->has_v7m = true;
  vm_nvic_prigroup_changed(vm); /* the group-priority mask a reset sets (nvic.h) */
  vm->event_cycle = UINT64_MAX;
  vm_cpu_reset(vm);
  /* LDR r0,[pc,#0] (literal in flash: 2 + 2) ; B +0 (1 + 2 + 2) ; NOP ; NOP */
  static const uint16_t code[] = {0x4800, 0xe000, 0xbf00, 0xbf00, 0xbf00};
  vm_bus_load(&vm->bus, 0x100, code, sizeof code, NULL);
  vm->cpu.r[15] = 0x100;
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.cycles, 4);
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.cycles, 4 + 5);
  CHECK_EQ_U(vm->cpu.r[15], 0x106);
  CHECK(tc_step(vm));
  CHECK_EQ_U(vm->cpu.cycles, 10);
  tc_vm_free(vm);
}

int main(void)
{
  RUN(test_faults);
  RUN(test_div0_trap);
  RUN(test_interworking);
  RUN(test_it_block);
  RUN(test_exclusive);
  RUN(test_sysregs);
  RUN(test_smc);
  RUN(test_hooks);
  RUN(test_cycles);
  RUN(test_wait_states);
  return check_summary();
}
