/* Halting debug, DebugMonitor and the FPB of the virtual Cortex-M
 * (src/vm/dbg_halt.c, dbg_fpb.c): FPB breakpoints (version 1 and 2 layouts),
 * DHCSR halt and step (C_STEP with and without C_MASKINTS), DCRSR/DCRDR
 * register transfer, DebugMonitor entry at its priority with DFSR bits and
 * escalation to HardFault, MON_PEND, vector catch, host breakpoints.
 * ARMv7-M ARM C1.2-C1.6, C1.11; ARMv8-M ARM D1.2 (FPB v2). */
#include "check.h"

#include "vm/vm_internal.h"

#define DHCSR 0xE000EDF0u
#define DCRSR 0xE000EDF4u
#define DCRDR 0xE000EDF8u
#define DEMCR 0xE000EDFCu
#define DFSR 0xE000ED30u
#define HFSR 0xE000ED2Cu
#define FP_CTRL 0xE0002000u
#define FP_COMP0 0xE0002008u
#define KEY 0xA05F0000u

static struct sonde_machine *machine;

/* Code at 0x100: movs r0,#1; adds r0,#1 x4; b . ; the handler of exception n
 * at 0x1000 + 0x10*n is `b .`. UDF #0 at 0x200. */
static struct sonde_vm *make_vm(const char *name)
{
  sonde_machine_free(machine);
  machine = NULL;
  if (sonde_machine_builtin(name, &machine) != 0)
    return NULL;
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(machine, &vm) != 0)
    return NULL;
  uint32_t vt[64];
  vt[0] = 0x20001000;
  vt[1] = 0x101;
  for (unsigned i = 2; i < 64; i++)
    vt[i] = (0x1000 + 0x10 * i) | 1;
  sonde_vm_write_mem(vm, 0, vt, sizeof vt);
  static const uint16_t code[] = {0x2001, 0x3001, 0x3001, 0x3001, 0x3001, 0xE7FE};
  sonde_vm_write_mem(vm, 0x100, code, sizeof code);
  uint16_t udf = 0xDE00, loop = 0xE7FE;
  sonde_vm_write_mem(vm, 0x200, &udf, 2);
  for (unsigned i = 2; i < 64; i++)
    sonde_vm_write_mem(vm, 0x1000 + 0x10 * i, &loop, 2);
  sonde_vm_reset(vm);
  return vm;
}

static uint32_t rd(struct sonde_vm *vm, uint32_t addr)
{
  uint32_t v = 0xDEADBEEF;
  CHECK_EQ_I(sonde_vm_read_mem(vm, addr, &v, 4), 0);
  return v;
}

static void wr(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  CHECK_EQ_I(sonde_vm_write_mem(vm, addr, &v, 4), 0);
}

static uint32_t reg(struct sonde_vm *vm, unsigned r)
{
  uint32_t v = 0;
  sonde_vm_read_reg(vm, r, &v);
  return v;
}

static struct sonde_vm_stop run(struct sonde_vm *vm, uint64_t cycles)
{
  struct sonde_vm_stop s;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  sonde_vm_run(vm, st.cycles + cycles, &s);
  return s;
}

static void test_fpb_v1(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  CHECK_EQ_U(rd(vm, FP_CTRL), 0x260); /* NUM_CODE 6, NUM_LIT 2, disabled */
  wr(vm, FP_CTRL, 3);                 /* KEY | ENABLE */
  CHECK_EQ_U(rd(vm, FP_CTRL), 0x261);
  wr(vm, FP_CTRL, 0);                 /* without KEY: ignored */
  CHECK_EQ_U(rd(vm, FP_CTRL), 0x261);
  wr(vm, DHCSR, KEY | 1);             /* C_DEBUGEN */
  wr(vm, FP_COMP0, 0x104 | (2u << 30) | 1); /* upper halfword of 0x104: 0x106 */
  struct sonde_vm_stop s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 15), 0x106);
  CHECK_EQ_U(reg(vm, 0), 3); /* movs, adds, adds executed; 0x106 not */
  CHECK_EQ_U(rd(vm, DFSR), 2); /* BKPT */
  CHECK_EQ_U(rd(vm, DHCSR) & 0x000F0003u, 0x00030003u); /* S_HALT S_REGRDY C_HALT C_DEBUGEN */
  /* resuming with the comparator still set halts again at once (C1.11) */
  vm_dbgh_set_halted(vm, false);
  s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 15), 0x106);
  /* DCRSR/DCRDR while halted */
  wr(vm, DCRSR, 0); /* read r0 */
  CHECK_EQ_U(rd(vm, DCRDR), 3);
  wr(vm, DCRDR, 0x1234);
  wr(vm, DCRSR, (1u << 16) | 1); /* write r1 */
  CHECK_EQ_U(reg(vm, 1), 0x1234);
  wr(vm, DCRSR, 15);
  CHECK_EQ_U(rd(vm, DCRDR), 0x106);
  wr(vm, DCRSR, 16); /* xPSR: T bit */
  CHECK_EQ_U(rd(vm, DCRDR), 0x01000000);
  /* clear the comparator and resume */
  wr(vm, FP_COMP0, 0);
  wr(vm, DFSR, 0x1F);
  vm_dbgh_set_halted(vm, false);
  s = run(vm, 100);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_CYCLE_LIMIT);
  CHECK_EQ_U(reg(vm, 0), 5);
  CHECK_EQ_U(reg(vm, 15), 0x10A);
  CHECK_EQ_U(rd(vm, DFSR), 0);
  sonde_vm_free(vm);
}

static void test_fpb_v2_m33_and_host_bp(void)
{
  struct sonde_vm *vm = make_vm("cm33");
  REQUIRE(vm);
  wr(vm, FP_CTRL, 3);
  CHECK_EQ_U(rd(vm, FP_CTRL), 0x10000081u); /* REV 1, NUM_CODE 8, ENABLE */
  wr(vm, DHCSR, KEY | 1);
  wr(vm, FP_COMP0 + 4, 0x104 | 1); /* comparator 1: BPADDR | BE */
  struct sonde_vm_stop s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 15), 0x104);
  CHECK_EQ_U(reg(vm, 0), 2);
  wr(vm, FP_COMP0 + 4, 0);
  /* a host breakpoint: invisible to the target (no FPB comparator used) */
  CHECK_EQ_I(vm_dbgh_host_bp(vm, 0x108, true), 0);
  CHECK_EQ_U(rd(vm, FP_COMP0), 0);
  vm_dbgh_set_halted(vm, false);
  s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 15), 0x108);
  CHECK_EQ_U(reg(vm, 0), 4);
  CHECK_EQ_I(vm_dbgh_host_bp(vm, 0x108, false), 0);
  /* Z1-style: the debugger programs a free FPB comparator */
  CHECK_EQ_I(vm_dbgh_fpb_bp(vm, 0x10A, true), 0);
  CHECK_EQ_U(rd(vm, FP_COMP0), 0x10B);
  vm_dbgh_set_halted(vm, false);
  s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 15), 0x10A);
  sonde_vm_free(vm);
}

static void test_halt_and_step(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  wr(vm, DHCSR, KEY | 3); /* C_DEBUGEN | C_HALT: halts before the first instruction */
  struct sonde_vm_stop s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_HALT);
  CHECK_EQ_U(reg(vm, 15), 0x100);
  CHECK_EQ_U(rd(vm, DFSR), 1); /* HALTED */
  /* pend SysTick; step with C_MASKINTS: it is not taken */
  wr(vm, 0xE000ED04, 1u << 26);
  wr(vm, DHCSR, KEY | 0xD); /* C_DEBUGEN | C_STEP | C_MASKINTS */
  s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_HALT);
  CHECK_EQ_U(reg(vm, 15), 0x102);
  CHECK_EQ_U(reg(vm, 16) & 0x1FF, 0);
  s = run(vm, 1000); /* C_HALT is set again after a step: stays halted */
  CHECK_EQ_U(reg(vm, 15), 0x102);
  wr(vm, DHCSR, KEY | 0xD);
  s = run(vm, 1000);
  CHECK_EQ_U(reg(vm, 15), 0x104);
  CHECK_EQ_U(reg(vm, 0), 2);
  /* step without C_MASKINTS: the pending SysTick is taken, the core halts
   * on the handler's first instruction */
  wr(vm, DHCSR, KEY | 0x5);
  s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_HALT);
  CHECK_EQ_U(reg(vm, 16) & 0x1FF, 15);
  CHECK_EQ_U(reg(vm, 15), 0x10F0);
  /* the library step with interrupts masked */
  CHECK_EQ_I(vm_dbgh_step(vm, true, &s), 0);
  CHECK_EQ_U(reg(vm, 15), 0x10F0); /* b . */
  sonde_vm_free(vm);
}

static void test_debug_monitor(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  wr(vm, DEMCR, 1u << 16);            /* MON_EN, no halting debug */
  wr(vm, 0xE000ED20, 0x40);           /* SHPR3: DebugMonitor priority 0x40 */
  wr(vm, FP_CTRL, 3);
  wr(vm, FP_COMP0, 0x104 | (1u << 30) | 1);
  struct sonde_vm_stop s = run(vm, 200);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_CYCLE_LIMIT);
  CHECK_EQ_U(reg(vm, 16) & 0x1FF, 12); /* in DebugMonitor */
  CHECK_EQ_U(reg(vm, 15), 0x10C0);
  CHECK_EQ_U(rd(vm, DFSR), 2);
  CHECK_EQ_U(rd(vm, reg(vm, 13) + 24), 0x104); /* stacked PC: the breakpoint */
  CHECK_EQ_U(rd(vm, 0xE000ED24) & (1u << 8), 1u << 8); /* SHCSR.MONITORACT */
  sonde_vm_free(vm);

  /* BASEPRI above the monitor's priority: the BKPT escalates to HardFault */
  vm = make_vm("cm3");
  REQUIRE(vm);
  wr(vm, DEMCR, 1u << 16);
  wr(vm, 0xE000ED20, 0x40);
  sonde_vm_write_reg(vm, SONDE_VM_REG_BASEPRI, 0x20);
  wr(vm, FP_CTRL, 3);
  wr(vm, FP_COMP0, 0x104 | (1u << 30) | 1);
  s = run(vm, 200);
  CHECK_EQ_U(reg(vm, 16) & 0x1FF, 3);
  CHECK_EQ_U(rd(vm, HFSR), 0x80000000u); /* DEBUGEVT */
  CHECK_EQ_U(rd(vm, DFSR), 2);
  sonde_vm_free(vm);

  /* MON_PEND pends the monitor by software */
  vm = make_vm("cm3");
  REQUIRE(vm);
  wr(vm, DEMCR, (1u << 16) | (1u << 17));
  CHECK_EQ_U(rd(vm, DEMCR), 0x30000u);
  s = run(vm, 100);
  CHECK_EQ_U(reg(vm, 16) & 0x1FF, 12);
  CHECK_EQ_U(rd(vm, DEMCR), 0x10000u); /* MON_PEND cleared on entry */
  sonde_vm_free(vm);
}

static void test_vector_catch(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  wr(vm, DHCSR, KEY | 1);
  wr(vm, DEMCR, 1u << 10); /* VC_HARDERR */
  sonde_vm_write_reg(vm, SONDE_VM_REG_PC, 0x200); /* UDF: UsageFault -> HardFault */
  struct sonde_vm_stop s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 16) & 0x1FF, 3);
  CHECK_EQ_U(reg(vm, 15), 0x1030);
  CHECK_EQ_U(rd(vm, DFSR), 8); /* VCATCH */
  sonde_vm_free(vm);

  /* VC_CORERESET: a system reset (AIRCR.SYSRESETREQ) halts on the reset
   * vector's first instruction; the debug registers survive the reset */
  vm = make_vm("cm3");
  REQUIRE(vm);
  wr(vm, DHCSR, KEY | 1);
  wr(vm, DEMCR, 1u << 0);
  s = run(vm, 10); /* run a little, away from the reset vector */
  CHECK_EQ_U(reg(vm, 15), 0x10A);
  wr(vm, 0xE000ED0C, 0x05FA0004);
  s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 15), 0x100);
  CHECK_EQ_U(reg(vm, 0), 0);
  CHECK_EQ_U(rd(vm, DFSR), 8);
  CHECK_EQ_U(rd(vm, DEMCR), 1);
  sonde_vm_free(vm);
}

static void test_bkpt_default(void)
{
  /* No debugger configured: a BKPT stops the run (the host is the debugger). */
  struct sonde_vm *vm = make_vm("cm0plus");
  REQUIRE(vm);
  uint16_t bkpt = 0xBE05;
  sonde_vm_write_mem(vm, 0x104, &bkpt, 2);
  struct sonde_vm_stop s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 15), 0x104);
  CHECK_EQ_U(rd(vm, FP_CTRL), 0x40); /* BPU: 4 comparators */
  sonde_vm_free(vm);
}

static void test_dwt_watchpoint(void)
{
  /* DWT comparator 0, FUNCTION 6 (write watchpoint) on 0x20000100: with
   * C_DEBUGEN the core halts after the store, DFSR.DWTTRAP (C1.8.5). */
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  static const uint16_t code[] = {0x4902, 0x2007, 0x6008, 0x6808, 0x6008, 0xE7FE,
                                  0x0100, 0x2000}; /* ldr r1,=0x20000100; movs r0,#7;
                                                      str r0,[r1]; ldr r0,[r1]; str; b . */
  sonde_vm_write_mem(vm, 0x100, code, sizeof code);
  wr(vm, DEMCR, 1u << 24); /* TRCENA */
  wr(vm, DHCSR, KEY | 1);
  wr(vm, 0xE0001020, 0x20000100); /* DWT_COMP0 */
  wr(vm, 0xE0001024, 0);          /* DWT_MASK0 */
  wr(vm, 0xE0001028, 6);          /* DWT_FUNCTION0: write */
  struct sonde_vm_stop s = run(vm, 1000);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(reg(vm, 15), 0x106); /* after the first str */
  CHECK_EQ_U(rd(vm, DFSR), 4);    /* DWTTRAP */
  CHECK_EQ_U(rd(vm, 0x20000100), 7);
  sonde_vm_free(vm);
}

int main(void)
{
  RUN(test_fpb_v1);
  RUN(test_fpb_v2_m33_and_host_bp);
  RUN(test_halt_and_step);
  RUN(test_debug_monitor);
  RUN(test_vector_catch);
  RUN(test_bkpt_default);
  RUN(test_dwt_watchpoint);
  sonde_machine_free(machine);
  return check_summary();
}
