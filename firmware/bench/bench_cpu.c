/* CPU-bound benchmark firmware: rounds of bench_work.h, no interrupts. */
#include "bench_work.h"

volatile uint32_t bench_result;

int main(void)
{
  uint32_t r = 0;
  for (uint32_t round = 0; round < BENCH_ROUNDS; round++)
    r += bw_round(round);
  bench_result = r;
  return 0;
}
