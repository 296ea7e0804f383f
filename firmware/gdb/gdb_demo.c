/* Firmware for the GDB server test (tests/cli/gdb_batch.sh): a loop gdb can
 * break in, step through and watch; main's return value (42) is the exit
 * code through semihosting (firmware/common/startup.c). Built at -O0 with -g
 * so every variable lives in memory where gdb can read it. */
#include <stdint.h>

volatile uint32_t counter; /* the watchpoint's target */
uint32_t result;

__attribute__((noinline)) static uint32_t square(uint32_t x)
{
  return x * x;
}

__attribute__((noinline)) uint32_t accumulate(uint32_t n)
{
  uint32_t sum = 0;
  for (uint32_t i = 1; i <= n; i++) {
    sum += square(i);
    counter = i;
  }
  return sum;
}

int main(void)
{
  result = accumulate(10); /* 1 + 4 + ... + 100 = 385 */
  return result == 385 ? 42 : 1;
}
