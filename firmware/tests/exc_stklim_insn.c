/* Exception test (ARMv8-M Mainline): stack limit violations by instructions.
 * Each case runs one instruction that would move SP below the active limit
 * (MSPLIM in Thread mode on the MSP, PSPLIM on the PSP): PUSH, SUB SP,
 * STR with pre-indexed writeback, STRD with writeback, VPUSH, MOV SP. It must
 * raise a UsageFault with CFSR.STKOF before it writes anything: the stacked
 * PC is the instruction, SP is unchanged and the memory below the limit keeps
 * its pattern. The handler steps over the instruction and returns. Two more
 * cases end exactly at the limit and must not fault. ARMv8-M ARM (DDI 0553)
 * "Stack limit checks"; the checks are the ones QEMU makes (the new SP, or
 * the lowest address of a multiple store, before any access). */
#include "exc_common.h"

#define PATTERN 0xA5A5A5A5u
#define CPACR SONDE_REG(0xE000ED88u)

/* area[0..255]: the stacks under test (limit at area[128]); area[256..511]:
 * Thread mode's own stack while it runs on the PSP. */
static uint32_t area[512] __attribute__((aligned(8)));
volatile uint32_t faults, fault_pc, fault_cfsr, fault_sp;

/* The faulting instructions, each at a global label (Thumb: bit 0 clear). */
extern char stk_push[], stk_sub[], stk_str[], stk_strd[], stk_mov[], stk_vpush[];

/* The handler uses no stack (only the stacked r0-r3, r12), so that the frame
 * is the only thing below the test SP: record the fault, clear CFSR, step
 * the stacked PC over the 16- or 32-bit instruction, return. */
__attribute__((naked)) void UsageFault_Handler(void)
{
  __asm__ volatile("tst lr, #4\n\t"
                   "ite eq\n\t"
                   "mrseq r0, msp\n\t"
                   "mrsne r0, psp\n\t"
                   "ldr r1, =faults\n\t"
                   "ldr r2, [r1]\n\t"
                   "adds r2, #1\n\t"
                   "str r2, [r1]\n\t"
                   "ldr r2, [r0, #24]\n\t"
                   "ldr r1, =fault_pc\n\t"
                   "str r2, [r1]\n\t"
                   "ldr r1, =0xE000ED28\n\t"
                   "ldr r3, [r1]\n\t"
                   "str r3, [r1]\n\t"
                   "ldr r1, =fault_cfsr\n\t"
                   "str r3, [r1]\n\t"
                   "tst lr, #16\n\t" /* EXC_RETURN.FType: 0 = extended frame */
                   "ite eq\n\t"
                   "addeq r3, r0, #104\n\t"
                   "addne r3, r0, #32\n\t"
                   "ldr r1, =fault_sp\n\t"
                   "str r3, [r1]\n\t"
                   "ldrh r3, [r2]\n\t"
                   "lsrs r3, r3, #11\n\t"
                   "cmp r3, #0x1D\n\t"
                   "ite hs\n\t"
                   "addhs r2, r2, #4\n\t"
                   "addlo r2, r2, #2\n\t"
                   "str r2, [r0, #24]\n\t"
                   "bx lr\n\t"
                   ".ltorg");
}

/* Run the instruction at `insn` (one of the stk_* blocks below) with SP =
 * `sp`; returns SP afterwards. */
static uint32_t run_case(uint32_t sp, int which)
{
  uint32_t after;
  __asm__ volatile(".fpu fpv5-sp-d16\n\t"
                   "mov r12, sp\n\t"
                   "mov sp, %1\n\t"
                   "cmp %2, #0\n\t"
                   "beq 0f\n\t"
                   "cmp %2, #1\n\t"
                   "beq 1f\n\t"
                   "cmp %2, #2\n\t"
                   "beq 2f\n\t"
                   "cmp %2, #3\n\t"
                   "beq 3f\n\t"
                   "cmp %2, #4\n\t"
                   "beq 4f\n\t"
                   "b 5f\n"
                   "0:\n\t.global stk_push\nstk_push:\n\tpush {r0-r11}\n\t"
                   "b 9f\n"
                   "1:\n\t.global stk_sub\nstk_sub:\n\tsub sp, sp, #128\n\t"
                   "b 9f\n"
                   "2:\n\t.global stk_str\nstk_str:\n\tstr r0, [sp, #-64]!\n\t"
                   "b 9f\n"
                   "3:\n\t.global stk_strd\nstk_strd:\n\tstrd r0, r1, [sp, #-72]!\n\t"
                   "b 9f\n"
                   "4:\n\tsub r3, sp, #96\n\t"
                   ".global stk_mov\nstk_mov:\n\tmov sp, r3\n\t"
                   "b 9f\n"
                   "5:\n\t.global stk_vpush\nstk_vpush:\n\tvpush {d0-d15}\n"
                   "9:\n\t"
                   "mov %0, sp\n\t"
                   "mov sp, r12"
                   : "=r"(after)
                   : "r"(sp), "r"(which)
                   : "r3", "r12", "memory");
  return after;
}

static const char *const names[] = {"push", "sub", "str", "strd", "mov", "vpush"};

static void cases(const char *stk, uint32_t limit)
{
  char *const insn[] = {stk_push, stk_sub, stk_str, stk_strd, stk_mov, stk_vpush};
  for (int k = 0; k < 6; k++) {
    for (unsigned i = 0; i < 256; i++)
      area[i] = PATTERN;
    /* room for the exception frame: 32 bytes, or 104 after VPUSH made the FP
     * context active (ExecuteFPCheck runs before the limit check) */
    uint32_t frame = k == 5 ? 104 : 32;
    uint32_t sp = limit + (k == 5 ? 120 : 40);
    uint32_t n0 = faults;
    uint32_t after = run_case(sp, k);
    out(stk);
    out(" ");
    out(names[k]);
    out_kv(" faults", faults - n0);
    check(faults - n0 == 1, "one UsageFault");
    check(fault_cfsr == (1u << 20), "CFSR is STKOF alone");
    check((fault_pc & ~1u) == ((uint32_t)insn[k] & ~1u), "stacked PC is the instruction");
    check(fault_sp == sp, "the SP the instruction saw");
    check(after == sp, "SP unchanged");
    int untouched = 1;
    for (unsigned i = 0; i < 256; i++) /* the frame sits at sp-frame..sp */
      if ((uint32_t)&area[i] < sp - frame || (uint32_t)&area[i] >= sp)
        untouched &= area[i] == PATTERN;
    check(untouched, "nothing written outside the exception frame");
  }
  /* VPUSH set CONTROL.FPCA (an FP instruction ran): clear it, so the next
   * exceptions push basic frames again. */
  uint32_t ctl;
  __asm__ volatile("mrs %0, control\n\tbic %0, %0, #4\n\tmsr control, %0\n\tisb"
                   : "=&r"(ctl)::"memory");
  /* Exactly at the limit: PUSH of 12 registers from limit + 48, and SUB SP
   * from limit + 128: no fault. */
  uint32_t n0 = faults;
  uint32_t a1 = run_case(limit + 48, 0);
  uint32_t a2 = run_case(limit + 128, 1);
  check(faults == n0, "no fault at the limit");
  check(a1 == limit && a2 == limit, "SP reaches the limit");
  out(stk);
  out_kv(" at-limit faults", faults - n0);
}

int main(void)
{
  SCB_SHCSR |= 1u << 18; /* UsageFault enabled */
  CPACR |= 0xFu << 20;   /* CP10/CP11: the FPU for VPUSH */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  uint32_t limit = (uint32_t)&area[128];
  /* Thread mode on the MSP: MSPLIM in the middle of `stack`; the handler
   * runs on the MSP as well, above the limit. */
  uint32_t old_msplim;
  __asm__ volatile("mrs %0, msplim\n\tmsr msplim, %1" : "=&r"(old_msplim) : "r"(limit) : "memory");
  cases("msp", limit);
  __asm__ volatile("msr msplim, %0" ::"r"(old_msplim) : "memory");
  /* Thread mode on the PSP (CONTROL.SPSEL = 1, its stack area[256..511])
   * with PSPLIM; the handler runs on the MSP (no limit). */
  __asm__ volatile("msr psplim, %0\n\tmsr psp, %1\n\tmovs r0, #2\n\tmsr control, r0\n\tisb"
                   :
                   : "r"(limit), "r"((uint32_t)&area[512])
                   : "r0", "memory");
  cases("psp", limit);
  out_kv("faults", faults);
  sonde_exit(exc_failures); /* main's frame is on the MSP, now inactive: no return */
  return 1;
}
