/* Exception test: two timed interrupts whose periods share no factor, so
 * that one falls at every offset from the other: SysTick every 301 cycles at
 * low priority (its handler long enough to be preempted) and the demo timer
 * (IRQ1) every 997 cycles at high priority. The timer's match then comes
 * before SysTick's wrap, at the same cycle, during SysTick's stacking (late
 * arrival, taken first with SysTick left pending), during its handler
 * (nesting) and after it. The timer handler classifies what it sees: 'L'
 * SysTick pending and not active, 'N' SysTick active, 'P' neither; when
 * nested it pends PendSV (priority between the two), which must wait for
 * the timer handler's return (the execution priority is the highest active
 * group priority, B1.5.4). The SysTick handler consumes the event register
 * its entry set (WFE), and the main loop waits for an event now and then:
 * the return sets the register again, so the first WFE after it does not
 * sleep (B1.5.18). Run by
 * tests/vm/test_exc_quiet.c, the exception path's quiet way against its
 * general way (exception.c); ARMv7-M ARM B1.5.12.
 * EQUAL_PRIO 1: SysTick and the timer at one group priority, so neither may
 * preempt the other (B1.5.4): a timer falling due in SysTick's handler waits
 * for its return and tail-chains, and the other way round. */
#include "exc_common.h"

#define SCB_ICSR SONDE_REG(0xE000ED04u)
#define SCB_SHCSR SONDE_REG(0xE000ED24u)
#define ICSR_PENDSTSET (1u << 26)
#define ICSR_PENDSVSET (1u << 28)
#define NVIC_IABR0 SONDE_REG(0xE000E300u)
#define SHCSR_SYSTICKACT (1u << 11)

#ifndef EQUAL_PRIO
#define EQUAL_PRIO 0
#endif

static volatile uint32_t ticks, timer_irqs, late, nested, plain, pendsvs, preempted, ticks_nested;

void PendSV_Handler(void)
{
  pendsvs++;
  if (NVIC_IABR0 & (1u << VM_TIMER0_IRQ))
    preempted++;
}

void SysTick_Handler(void)
{
  ticks++;
  if (NVIC_IABR0 & (1u << VM_TIMER0_IRQ))
    ticks_nested++; /* SysTick preempted the timer's handler */
  __asm__ volatile("wfe" ::: "memory");
  for (volatile int i = 0; i < 6; i++)
    ;
}

void IRQ1_Handler(void)
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH;
  timer_irqs++;
  if (SCB_SHCSR & SHCSR_SYSTICKACT) {
    nested++;
    SCB_ICSR = ICSR_PENDSVSET;
  }
  else if (SCB_ICSR & ICSR_PENDSTSET)
    late++;
  else
    plain++;
}

int main(void)
{
  SHPR_BYTE(15) = 0xC0;
  SHPR_BYTE(14) = 0x80;
  nvic_prio(1, EQUAL_PRIO ? 0xC0 : 0x00);
  NVIC_ISER(0) = 1u << VM_TIMER0_IRQ;
  SYST_RVR = 301 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7;
  VM_TIMER_LOAD = 997;
  VM_TIMER_CTRL = VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE | VM_TIMER_CTRL_PERIODIC;
  uint32_t work = 0, n = 0;
  while (timer_irqs < 2000) {
    work += work * 3 + 1;
    if ((++n & 7) == 0)
      __asm__ volatile("wfe" ::: "memory");
  }
  SYST_CSR = 0;
  VM_TIMER_CTRL = 0;
  out_kv("ticks", ticks);
  out_kv("timer", timer_irqs);
  out_kv("late", late);
  out_kv("nested", nested);
  out_kv("plain", plain);
  out_kv("pendsv", pendsvs);
  out_kv("pendsv preempting the timer", preempted);
  out_kv("SysTick preempting the timer", ticks_nested);
  check(!ticks_nested, "SysTick never preempts the timer");
  if (EQUAL_PRIO) {
    check(!nested && !pendsvs, "the timer never preempts SysTick at its priority");
    check(late > 0 && plain > 0, "the timer due in SysTick's entry or handler, and not");
  } else {
    check(late > 0 && nested > 0 && plain > 0, "every case seen");
    check(pendsvs == nested && !preempted, "PendSV after the timer handler");
  }
  return exc_failures;
}
