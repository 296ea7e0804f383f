/* Exception test: late arrival. The timer (IRQ1, priority 0) is started N
 * cycles before IRQ0 (priority 0x80) is pended, for N = 1..40. The timer
 * handler classifies what it sees: 'P' IRQ0 not pended yet (the match came
 * first), 'L' IRQ0 pending but not active (the timer arrived while IRQ0 was
 * being stacked, or at the same boundary: taken first), 'N' IRQ0 active (the
 * timer preempted IRQ0's handler, which waits for it). ARMv7-M ARM
 * B1.5.12. */
#include "exc_common.h"

static volatile char seen;
static char classes[41];

/* Long enough for the timer to preempt it whenever it has not yet fired. */
void IRQ0_Handler(void)
{
  while (seen == '?')
    ;
}

void IRQ1_Handler(void)
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH;
  VM_TIMER_CTRL = 0;
  if (NVIC_IABR(0) & 1)
    seen = 'N';
  else if (NVIC_ISPR(0) & 1)
    seen = 'L';
  else
    seen = 'P';
}

int main(void)
{
  NVIC_ISER(0) = 3;
  nvic_prio(0, 0x80);
  nvic_prio(1, 0x00);
  volatile uint32_t *ctrl = &VM_TIMER_CTRL, *stir = &NVIC_STIR;
  for (uint32_t n = 1; n <= 40; n++) {
    seen = '?';
    VM_TIMER_LOAD = n;
    __asm__ volatile("str %2, [%0]\n\t"
                     "str %3, [%1]\n\t"
                     "dsb\n\tisb\n" ::"r"(ctrl), "r"(stir),
                     "r"(VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE), "r"(0)
                     : "memory");
    while (seen == '?')
      ;
    classes[n - 1] = seen;
  }
  classes[40] = 0;
  out("classes ");
  out(classes);
  out("\n");
  return exc_failures;
}
