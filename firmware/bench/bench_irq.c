/* Interrupt-heavy benchmark firmware: the same rounds as bench_cpu.c while
 * SysTick interrupts every 300 cycles and the demo timer (IRQ 1) every 1000,
 * so a large share of the run is exception entry, handlers and returns. */
#include "bench_work.h"
#include "sonde_fw.h"
#include "vm_periph.h"

volatile uint32_t bench_result, systicks, timer_irqs;

void SysTick_Handler(void) { systicks++; }

void IRQ1_Handler(void)
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH;
  timer_irqs++;
}

int main(void)
{
  SYST_RVR = 300 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7;
  VM_TIMER_LOAD = 1000;
  VM_TIMER_CTRL = VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE | VM_TIMER_CTRL_PERIODIC;
  NVIC_ISER(0) = 1u << VM_TIMER0_IRQ;
  uint32_t r = 0;
  for (uint32_t round = 0; round < BENCH_ROUNDS; round++)
    r += bw_round(round);
  SYST_CSR = 0;
  VM_TIMER_CTRL = 0;
  bench_result = r;
  return 0;
}
