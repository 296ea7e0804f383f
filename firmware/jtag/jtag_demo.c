/* Firmware for the JTAG/OpenOCD tests (tests/cli/jtag_openocd.sh): a loop
 * that counts forever, so a debugger can read `counter` while the core runs,
 * halt, step, break in tick() and watch `watched`, until it writes a non-zero
 * value into `stop_request`: main returns that value, the exit code through
 * semihosting (firmware/common/startup.c). -O0 -g: every variable in memory. */
#include <stdint.h>

volatile uint32_t counter;      /* n after the n-th call of tick() */
volatile uint32_t stop_request; /* the debugger writes the exit code here */
volatile uint32_t watched;      /* written every 256th tick: a watchpoint's target */

__attribute__((noinline)) void tick(uint32_t n)
{
  counter = n;
  if ((n & 0xFF) == 0)
    watched = n >> 8;
}

int main(void)
{
  uint32_t n = 0;
  while (!stop_request)
    tick(++n);
  return (int)stop_request;
}
