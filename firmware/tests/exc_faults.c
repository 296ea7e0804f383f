/* Exception test: every synchronous fault the VM raises, with the exception
 * taken and its CFSR/HFSR/BFAR bits; escalation to HardFault when the fault
 * handler is disabled (HFSR.FORCED) or cannot preempt. Each fault happens in
 * a small leaf function; the handler records the status registers, clears
 * them and resumes at the function's return address (stacked LR).
 * ARMv7-M ARM B1.5.14, B3.2.15-B3.2.18. */
#include "exc_common.h"

static volatile uint32_t f_exc, f_cfsr, f_hfsr, f_bfar, f_pc, f_count;

/* Returns 1 when the handler must return with 0xFFFFFFF9 instead: after an
 * INVPC, the fault handler runs on the frame of the exception whose return
 * failed (nothing was stacked for the fault; LR holds 0xF0000000 +
 * EXC_RETURN<27:0>), so returning to Thread mode resumes the code IRQ0
 * interrupted. */
__attribute__((used)) static uint32_t fault_c(uint32_t *frame, uint32_t lr)
{
  f_exc = get_ipsr() & 0x1FF;
  if (SCB_CFSR & (1u << 18)) {
    f_cfsr = SCB_CFSR;
    f_hfsr = SCB_HFSR;
    f_pc = lr;
    f_count++;
    SCB_CFSR = f_cfsr;
    SCB_HFSR = f_hfsr;
    return 1;
  }
  f_cfsr = SCB_CFSR;
  f_hfsr = SCB_HFSR;
  f_bfar = SCB_BFAR;
  f_pc = frame[6];
  f_count++;
  SCB_CFSR = f_cfsr; /* write one to clear */
  SCB_HFSR = f_hfsr;
  frame[6] = frame[5] & ~1u;
  frame[7] |= 1u << 24; /* Thumb (INVSTATE cleared it) */
  return 0;
}

#define FAULT_ENTRY(name)                                                             \
  __attribute__((naked)) void name(void)                                              \
  {                                                                                   \
    __asm__ volatile("tst lr, #4\n\tite eq\n\tmrseq r0, msp\n\tmrsne r0, psp\n\t"       \
                     "mov r1, lr\n\tpush {r4, lr}\n\tbl fault_c\n\tpop {r4, lr}\n\t"      \
                     "cmp r0, #0\n\tit ne\n\tmvnne lr, #6\n\tbx lr\n");                    \
  }
FAULT_ENTRY(HardFault_Handler)
FAULT_ENTRY(BusFault_Handler)
FAULT_ENTRY(UsageFault_Handler)
FAULT_ENTRY(MemManage_Handler)

/* The faulting leaf functions (LR holds the caller's return address). */
__attribute__((naked, noinline)) static void do_udf(void)
{
  __asm__ volatile("udf #0\n\tbx lr");
}
__attribute__((naked, noinline)) static void do_invstate(void)
{
  __asm__ volatile("adr r0, 1f\n\tbx r0\n\t.align 2\n1:\tbx lr");
}
__attribute__((naked, noinline)) static void do_unaligned(void)
{
  __asm__ volatile("ldr r1, =0x20000001\n\tldr r0, [r1]\n\tbx lr\n\t.ltorg");
}
__attribute__((naked, noinline)) static void do_div0(void)
{
  __asm__ volatile("movs r1, #0\n\tmovs r0, #7\n\tsdiv r0, r0, r1\n\tbx lr");
}
__attribute__((naked, noinline)) static void do_precise(void)
{
  __asm__ volatile("ldr r1, =0x30000000\n\tldr r0, [r1]\n\tbx lr\n\t.ltorg");
}
__attribute__((naked, noinline)) static void do_store_rom(void)
{
  /* The last words of the 512 KiB flash: unused by the image (on boards
   * where flash is writable RAM, as QEMU's mps2, nothing breaks). */
  __asm__ volatile("ldr r1, =0x0007fff0\n\tstr r0, [r1]\n\tbx lr\n\t.ltorg");
}
__attribute__((naked, noinline)) static void do_ibus(void)
{
  __asm__ volatile("push {lr}\n\tldr r0, =0x30000001\n\tblx r0\n\tpop {pc}\n\t.ltorg");
}
#if !defined(__ARM_FP)
__attribute__((naked, noinline)) static void do_nocp(void)
{
  __asm__ volatile(".inst.w 0xee000a10\n\tbx lr"); /* vmov s0, r0 */
}
#endif

/* An exception return with an invalid EXC_RETURN from IRQ0. */
__attribute__((naked)) void IRQ0_Handler(void)
{
  __asm__ volatile("ldr r0, =0xfffffff5\n\tbx r0\n\t.ltorg");
}

static void report(const char *name, uint32_t exc, uint32_t cfsr, uint32_t hfsr)
{
  out(name);
  out(": exc ");
  out_dec(f_exc);
  out(" cfsr ");
  out_hex(f_cfsr);
  out(" hfsr ");
  out_hex(f_hfsr);
  out("\n");
  check(f_exc == exc && f_cfsr == cfsr && f_hfsr == hfsr, name);
  f_exc = f_cfsr = f_hfsr = 0;
}

int main(void)
{
  /* Fault handlers enabled, at priority 0 (above everything else). */
  SCB_SHCSR = 7u << 16;
  SCB_CCR |= (1u << 3) | (1u << 4); /* UNALIGN_TRP, DIV_0_TRP */

  do_udf();
  report("undefinstr", 6, 1u << 16, 0);
  do_invstate();
  report("invstate", 6, 1u << 17, 0);
  do_unaligned();
  report("unaligned", 6, 1u << 24, 0);
  do_div0();
  report("divbyzero", 6, 1u << 25, 0);
#if !defined(__ARM_FP)
  do_nocp();
  report("nocp", 6, 1u << 19, 0);
#endif
  do_precise();
  check(f_bfar == 0x30000000u, "BFAR of the precise bus error");
  report("preciserr", 5, (1u << 9) | (1u << 15), 0);
  do_store_rom();
  check(f_bfar == 0x0007FFF0u, "BFAR of the store to flash");
  report("store to flash", 5, (1u << 9) | (1u << 15), 0);
  do_ibus();
  check(f_pc == 0x30000000u, "stacked PC of the instruction bus error");
  report("ibuserr", 5, 1u << 8, 0);

  /* INVPC: IRQ0 returns with 0xFFFFFFF5; the UsageFault handler returns to
   * Thread mode in IRQ0's place. */
  NVIC_ISER(0) = 1;
  nvic_prio(0, 0x80);
  NVIC_ISPR(0) = 1;
  dsb_isb();
  check(f_pc == 0xFFFFFFF5u, "LR in the INVPC handler");
  check(NVIC_IABR(0) == 0, "IRQ0 no longer active");
  report("invpc", 6, 1u << 18, 0);

  /* Disabled UsageFault: escalates to HardFault, FORCED. */
  SCB_SHCSR = 0;
  do_udf();
  report("forced", 3, 1u << 16, 1u << 30);
  /* Enabled, but its priority does not preempt the current one: a fault
   * with BASEPRI masking it escalates too. */
  SCB_SHCSR = 7u << 16;
  SHPR_BYTE(6) = 0x80;
  __asm__ volatile("msr basepri, %0\n\tisb" ::"r"(0x80u));
  do_div0();
  __asm__ volatile("msr basepri, %0\n\tisb" ::"r"(0u));
  report("masked", 3, 1u << 25, 1u << 30);
  out_kv("faults", f_count);
  check(f_count == 11 - (0
#if defined(__ARM_FP)
                         + 1
#endif
                         ),
        "fault count");
  return exc_failures;
}
