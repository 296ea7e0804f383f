/* Test firmware of the debug-port monitor (src/monitor, tests/monitor): a
 * small node that does what AVEKSHA watches — nested function calls with a
 * fixed order (as the paper's local2Global, Figure 13), a state machine whose
 * state variable is written at every transition, reads of a peripheral (the
 * delay peripheral's STATUS and the GPIO input), user markers (`mov r11, r11`),
 * a timer interrupt, the LED (GPIO) and sleeping in WFI — then exits through
 * semihosting. BURST=1 adds a burst of state writes faster than the SWO pin
 * drains (watchpoint-mode losses). */
#include <stdint.h>

#include "sonde_fw.h"
#include "vm_periph.h"

#define MARK() __asm volatile("mov r11, r11")
#ifndef ROUNDS
#define ROUNDS 8
#endif

enum { ST_IDLE = 1, ST_SENSE = 2, ST_SEND = 3, ST_SLEEP = 4 };
volatile uint32_t mon_state;
volatile uint32_t mon_ticks;
volatile uint32_t mon_sink;

void IRQ1_Handler(void) /* TIMER0 */
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH;
  mon_ticks++;
}

__attribute__((noinline, noipa)) static void set_state(uint32_t s)
{
  mon_state = s;
}

__attribute__((noinline, noipa)) static uint32_t mul32(uint32_t a, uint32_t b)
{
  return a * b + (a >> 3);
}

__attribute__((noinline, noipa)) static uint32_t div32(uint32_t a, uint32_t b)
{
  uint32_t q = 0;
  while (a >= b) {
    a -= b;
    q++;
  }
  return q;
}

__attribute__((noinline, noipa)) static uint32_t to_global(uint32_t local)
{
  /* a fixed call order, as local2Global's */
  uint32_t x = mul32(local, 3);
  x = div32(x, 7);
  return mul32(x, 5);
}

__attribute__((noinline, noipa)) static uint32_t sense(void)
{
  set_state(ST_SENSE);
  MARK();
  VM_DELAY_CYCLES = 300;
  VM_DELAY_START = 1;
  while (!(VM_DELAY_STATUS & VM_DELAY_STATUS_READY))
    ;
  return VM_DELAY_DONE + VM_GPIO_IN;
}

__attribute__((noinline, noipa)) static void send(uint32_t v)
{
  set_state(ST_SEND);
  VM_GPIO_SET = 1; /* LED on while sending */
  for (int i = 0; i < 40; i++)
    mon_sink += to_global(v + (uint32_t)i);
  VM_GPIO_CLR = 1;
}

__attribute__((noinline, noipa)) static void nap(void)
{
  set_state(ST_SLEEP);
  VM_TIMER_LOAD = 2000;
  VM_TIMER_CTRL = VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE;
  uint32_t t = mon_ticks;
  while (mon_ticks == t)
    __asm volatile("wfi");
}

#if BURST
__attribute__((noinline, noipa)) static void burst(void)
{
  for (uint32_t i = 0; i < 64; i++)
    mon_state = 100 + i; /* faster than the SWO pin drains */
}
#endif

int main(void)
{
  NVIC_ISER(0) = 1u << VM_TIMER0_IRQ;
  for (int r = 0; r < ROUNDS; r++) {
    set_state(ST_IDLE);
    MARK();
    uint32_t v = sense();
    send(v);
    nap();
  }
#if BURST
  burst();
#endif
  set_state(ST_IDLE);
  return 0;
}
