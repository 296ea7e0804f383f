/* Exception test: a fault inside the HardFault handler locks the core up
 * (ARMv7-M ARM B1.5.15); the host sees SONDE_VM_STOP_LOCKUP at 0xEFFFFFFE. */
#include "exc_common.h"

void HardFault_Handler(void)
{
  out("in hardfault\n");
  __asm__ volatile("udf #1");
}

int main(void)
{
  out("start\n");
  __asm__ volatile("udf #0");
  out("not reached\n");
  return 1;
}
