/* Exception test: SysTick every 1000 cycles, the core sleeping in WFI in
 * between; COUNTFLAG reads. The host side checks that the interrupts are
 * exactly 1000 cycles apart. ARMv7-M ARM B3.3. */
#include "exc_common.h"

static volatile uint32_t ticks, flag_first, flag_second;

void SysTick_Handler(void)
{
  ticks++;
  if (ticks == 3) {
    flag_first = (SYST_CSR >> 16) & 1;
    flag_second = (SYST_CSR >> 16) & 1;
  }
}

int main(void)
{
  SYST_RVR = 1000 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7; /* core clock, interrupt, enable */
  while (ticks < 10)
    sonde_wfi();
  SYST_CSR = 0;
  out_kv("ticks", ticks);
  out_kv("countflag first read", flag_first);
  out_kv("countflag second read", flag_second);
  check(flag_first == 1 && flag_second == 0, "COUNTFLAG clears on read");
  uint32_t calib = SONDE_REG(0xE000E01Cu);
  out("calib ");
  out_hex(calib);
  out("\n");
  return exc_failures;
}
