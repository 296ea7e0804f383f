/* For tests/cli/run_basic.sh: firmware that never exits (the cycle limit stops it). */
#include "sonde_fw.h"

volatile uint32_t counter;

int main(void)
{
  for (;;)
    counter++;
}
