/* Exception test: three interrupt sources falling due together, for the
 * cases where timers fire during another exception's stacking (late
 * arrival, ARMv7-M ARM B1.5.12) and at the stacking's last cycle.
 *   SysTick  every 301 cycles, lowest priority (0xC0);
 *   IRQ1     the demo timer, every 997 cycles, priority 0x40: due at every
 *            offset from SysTick's wrap (997 and 301 share no factor), so
 *            now and then during SysTick's stacking, where it arrives late
 *            and is taken first;
 *   IRQ2     the delay peripheral, highest priority (0x00), restarted by
 *            every SysTick handler to complete k cycles after the next wrap,
 *            k swept over 0..12 (13 is prime to both periods;
 *            later ones would outlast the next handler, which restarts it).
 * So some SysTick entries see the timer due during their stacking and the
 * delay due at once after, right at the stacking's end: the timer's handler
 * is entered and the delay preempts it before its first instruction (the
 * delay handler finds IRQ1_Handler's first address stacked); fired one
 * cycle early it would have been a late arrival itself. The same firmware
 * runs through the VM's direct, quiet and general exception paths in
 * tests/vm/test_exc_quiet.c, which must agree cycle for cycle. */
#include "exc_common.h"

#define SCB_SHPR3 SONDE_REG(0xE000ED20u)
#define NVIC_IABR0 SONDE_REG(0xE000E300u)
#define SCB_ICSR SONDE_REG(0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)

static volatile uint32_t ticks, timer_irqs, timer_late, delays, at_timer_entry, in_timer,
    systick_pending;

void IRQ1_Handler(void);

void SysTick_Handler(void)
{
  static uint32_t k;
  k = k + 5 >= 13 ? k + 5 - 13 : k + 5;
  /* CVR + 1: the cycles to the next wrap, less what this takes */
  VM_DELAY_CYCLES = SYST_CVR + 1 + k;
  VM_DELAY_START = 1;
  ticks++;
}

void IRQ1_Handler(void)
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH;
  timer_irqs++;
  if (SCB_ICSR & ICSR_PENDSTSET)
    timer_late++;
}

/* The delay's handler, given the return address its entry stacked. */
__attribute__((used)) static void delay_irq(uint32_t stacked_pc)
{
  delays++;
  if (stacked_pc == ((uint32_t)&IRQ1_Handler & ~1u))
    at_timer_entry++;
#if !defined(__ARM_ARCH_6M__) /* ARMv6-M has no active bits to read */
  if (NVIC_IABR0 & (1u << VM_TIMER0_IRQ))
    in_timer++;
#endif
  if (SCB_ICSR & ICSR_PENDSTSET)
    systick_pending++;
}

/* The frame is on the MSP (main runs on it): its return address at +24. */
__attribute__((naked)) void IRQ2_Handler(void)
{
  __asm volatile("mrs r0, msp\n\t"
                 "ldr r0, [r0, #24]\n\t"
                 "ldr r1, =delay_irq\n\t"
                 "bx r1\n\t"
                 ".ltorg");
}

int main(void)
{
  SCB_SHPR3 = 0xC0u << 24; /* word access: ARMv6-M has no byte access here */
  nvic_prio(VM_TIMER0_IRQ, 0x40);
  nvic_prio(VM_DELAY_IRQ, 0x00);
  NVIC_ISER(0) = (1u << VM_TIMER0_IRQ) | (1u << VM_DELAY_IRQ);
  VM_DELAY_CTRL = 1;
  SYST_RVR = 301 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7;
  VM_TIMER_LOAD = 997;
  VM_TIMER_CTRL = VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE | VM_TIMER_CTRL_PERIODIC;
  uint32_t work = 0;
  while (timer_irqs < 1500)
    work += work * 3 + 1;
  SYST_CSR = 0;
  VM_TIMER_CTRL = 0;
  VM_DELAY_CTRL = 0;
  out_kv("ticks", ticks);
  out_kv("timer", timer_irqs);
  out_kv("timer late over SysTick", timer_late);
  out_kv("delay", delays);
  out_kv("delay at the timer handler's first instruction", at_timer_entry);
  out_kv("delay in the timer handler", in_timer);
  out_kv("delay with SysTick pending", systick_pending);
#if !defined(__ARM_ARCH_6M__)
  check(in_timer > 0, "the delay preempting the timer's handler");
#endif
  /* (a SysTick handler the timer's held back restarts the delay before it
   * completes) */
  check(delays <= ticks && delays >= ticks - ticks / 32, "a delay per SysTick, nearly");
  check(timer_late > 0 && at_timer_entry > 0 && systick_pending > 0,
        "every case seen");
  return exc_failures;
}
