/* About 1,000,000 cycles of mixed work (ALU loops, loads/stores, calls, a
 * SysTick interrupt every 5000 cycles) for bench/ft_run_bench.c. */
#include <stdint.h>

#include "sonde_fw.h"

static volatile uint32_t ticks;
static uint32_t buf[256];

void SysTick_Handler(void)
{
  ticks++;
}

__attribute__((noinline)) static uint32_t mix(uint32_t x, uint32_t i)
{
  return (x ^ (x << 5)) + i * 2654435761u;
}

int main(void)
{
  SYST_RVR = 5000 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7;
  uint32_t x = 1;
  for (uint32_t r = 0; r < ROUNDS; r++)
    for (uint32_t i = 0; i < 256; i++) {
      x = mix(x, i);
      buf[(x >> 3) & 255] += x;
    }
  SYST_CSR = 0;
  return (int)(x & 0) + (ticks == 0);
}
