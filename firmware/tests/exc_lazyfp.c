/* Exception test (Cortex-M4F): lazy FP context preservation. Thread code
 * holds values in s0-s15 (CONTROL.FPCA set), IRQ0 is taken with an extended
 * frame (EXC_RETURN 0xFFFFFFE9) but the FP registers are not stacked:
 * FPCCR.LSPACT is set and FPCAR points at the reserved space. The handler's
 * first FP instruction saves them there; the return restores them.
 * ARMv7-M ARM B1.5.7, B3.2.20. */
#include "exc_common.h"

static uint32_t thread_vals[16], handler_vals[16], back[16];
static volatile uint32_t exc_return, sp_at_entry, fpccr_before, fpcar, fpccr_after,
    saved_ok;

__attribute__((used)) static void irq_c(uint32_t lr, uint32_t sp)
{
  exc_return = lr;
  sp_at_entry = sp;
  fpccr_before = SCB_FPCCR;
  fpcar = SCB_FPCAR;
  __asm__ volatile("vldmia %0, {s0-s15}" ::"r"(handler_vals)
                   : "memory", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
                     "s10", "s11", "s12", "s13", "s14", "s15");
  fpccr_after = SCB_FPCCR;
  const uint32_t *saved = (const uint32_t *)(uintptr_t)fpcar;
  saved_ok = 1;
  for (int i = 0; i < 16; i++)
    if (saved[i] != thread_vals[i])
      saved_ok = 0;
}

__attribute__((naked)) void IRQ0_Handler(void)
{
  __asm__ volatile("mov r0, lr\n\tmov r1, sp\n\tpush {r4, lr}\n\tbl irq_c\n\tpop {r4, pc}\n");
}

int main(void)
{
  for (int i = 0; i < 16; i++) {
    thread_vals[i] = 0x3F800000u + (uint32_t)i * 0x10000u;
    handler_vals[i] = 0xC0000000u + (uint32_t)i;
  }
  NVIC_ISER(0) = 1;
  __asm__ volatile("vldmia %0, {s0-s15}\n\t"
                   "str %2, [%1]\n\t"
                   "dsb\n\tisb\n\t"
                   "vstmia %3, {s0-s15}\n" ::"r"(thread_vals),
                   "r"(&NVIC_ISPR(0)), "r"(1), "r"(back)
                   : "memory", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10",
                     "s11", "s12", "s13", "s14", "s15");
  out("exc_return ");
  out_hex(exc_return);
  out("\nfpccr before ");
  out_hex(fpccr_before);
  out("\nfpccr after ");
  out_hex(fpccr_after);
  out("\n");
  check(exc_return == 0xFFFFFFE9u, "extended frame EXC_RETURN");
  check(fpcar == sp_at_entry + 0x20, "FPCAR = frame + 0x20");
  check(saved_ok, "lazy save wrote the thread's s0-s15 at FPCAR");
  int same = 1;
  for (int i = 0; i < 16; i++)
    if (back[i] != thread_vals[i])
      same = 0;
  check(same, "thread s0-s15 intact after the return");
  return exc_failures;
}
