/* For tests/cli/run_basic.sh: a fault inside the HardFault handler locks the
 * core up (ARMv7-M ARM B1.5.15). The first fault is a load from unmapped
 * memory (BusFault escalated to HardFault: BFAR = 0x30000000). */
#include "sonde_fw.h"

void HardFault_Handler(void)
{
  (void)*(volatile uint32_t *)0x30000004u; /* fault again: lockup */
}

int main(void)
{
  return (int)*(volatile uint32_t *)0x30000000u;
}
