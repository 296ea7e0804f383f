/* Exception test: the VM's demo peripherals and sleep. The timer interrupts
 * every 5000 cycles while the core sleeps in WFI; then SCR.SLEEPONEXIT keeps
 * the core asleep between interrupts without returning to main; the delay
 * peripheral completes a busy-wait; the UART prints; the LED toggles.
 * ARMv7-M ARM B1.5.17 (sleep), docs/vm.md (Peripherals). */
#include "exc_common.h"

static volatile uint32_t timer_irqs, main_wakeups;

void IRQ1_Handler(void)
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH; /* drop the level */
  VM_GPIO_TOGGLE = 1;
  timer_irqs++;
  if (timer_irqs == 8)
    SCB_SCR &= ~2u; /* SLEEPONEXIT off: return to main */
}

static void uart_puts(const char *s)
{
  for (; *s; s++) {
    while (!(VM_UART_STATUS(VM_UART0_BASE) & VM_UART_STATUS_TXE))
      ;
    VM_UART_DATA(VM_UART0_BASE) = (uint8_t)*s;
  }
}

int main(void)
{
  uart_puts("uart hello\n");
  NVIC_ISER(0) = 1u << VM_TIMER0_IRQ;
  VM_TIMER_LOAD = 5000;
  VM_TIMER_CTRL = VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE | VM_TIMER_CTRL_PERIODIC;
  while (timer_irqs < 4) {
    sonde_wfi();
    main_wakeups++;
  }
  /* Sleep-on-exit: the handler returns straight to sleep until it clears
   * SLEEPONEXIT, so main wakes once more. */
  SCB_SCR |= 2u;
  sonde_wfi();
  main_wakeups++;
  VM_TIMER_CTRL = 0;
  out_kv("timer irqs", timer_irqs);
  out_kv("main wakeups", main_wakeups);
  check(timer_irqs == 8 && main_wakeups == 5, "sleep-on-exit");

  /* Delay peripheral: READY 300 cycles after START. */
  VM_DELAY_CYCLES = 300;
  VM_DELAY_START = 1;
  uint32_t polls = 0;
  while (!(VM_DELAY_STATUS & VM_DELAY_STATUS_READY))
    polls++;
  out_kv("delay done", VM_DELAY_DONE);
  check(polls > 10 && VM_DELAY_DONE == 1, "delay");
  out_kv("gpio", VM_GPIO_OUT);
  return exc_failures;
}
