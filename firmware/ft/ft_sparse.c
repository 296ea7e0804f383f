/* An unmodified program for noninvasive LSU tracing (`sonde frankentrace run
 * --probe --lsu`): SRAM and GPIO transfers a few hundred cycles apart (work in
 * registers between them) and SysTick interrupts that log to SRAM and toggle
 * a pin. At the core clock's baud the SWO carries every packet; at a lower
 * baud the ITM overflows and transfers are lost (tests/cli/frankentrace_lsu.sh).
 * No runner: the probe sets the trace blocks through the debug port. */
#include <stdint.h>

#include "sonde_fw.h"
#include "vm_periph.h"

static volatile uint32_t ticks, log_[16];
static uint32_t table[32];
static uint16_t halves[32];

void SysTick_Handler(void)
{
  uint32_t t = ticks;
  log_[t & 15] = SYST_CVR;
  ticks = t + 1;
  VM_GPIO_TOGGLE = 1u << 2;
}

static uint32_t work(uint32_t x, uint32_t n) /* registers only */
{
  for (uint32_t i = 0; i < n; i++)
    x = (x << 3) ^ (x >> 5) ^ i;
  return x;
}

int main(void)
{
  SYST_RVR = 2000 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7;
  uint32_t x = 1;
  for (uint32_t i = 0; i < 32; i++) {
    x = work(x, 40);
    table[i] = x;              /* SRAM write */
    VM_GPIO_OUT = x & 0xFF;    /* peripheral write */
    x = work(x, 40);
    x ^= table[(i * 7) & 31];  /* SRAM read */
    halves[i] = (uint16_t)x;   /* halfword */
    x += VM_GPIO_IN;           /* peripheral read */
  }
  SYST_CSR = 0;
  return (int)(x & 1) + (ticks == 0);
}
