/* A runner image that works for about a million cycles per iteration, for
 * bench_frankentrace_run --runner (issue 15's goal: a verified trace of a
 * 1,000,000-cycle program at N = 512). A checksum over a table, calls
 * through function pointers, and a SysTick interrupt every 5000 cycles. */
#include <stdint.h>

#include "ft_runner.h"
#include "sonde_fw.h"

static volatile uint32_t ticks;
static uint32_t table[256];

void SysTick_Handler(void) { ticks++; }

static uint32_t rot(uint32_t x) { return (x << 5) | (x >> 27); }
static uint32_t mix(uint32_t x) { return x * 0x9E3779B1u; }
static uint32_t (*const ops[2])(uint32_t) = {rot, mix};

static const struct ft_config cfg = {
    .core_hz = 48000000, .swo_baud = 8000000, .n = 512, .repeats = 2,
    .run_id = 0xB00F, .fw_id = 0xF7000003u};

int main(void)
{
  int rc = ft_begin(&cfg);
  if (rc > 1)
    return 10 + rc;
  SYST_RVR = 5000 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7;
  uint32_t h = 1;
  for (uint32_t i = 0; i < 256; i++)
    table[i] = i * 2654435761u;
  for (uint32_t round = 0; round < 660; round++)
    for (uint32_t i = 0; i < 256; i += 4)
      h = ops[(h >> 3) & 1](h ^ table[i]) + table[(h + i) & 255];
  SYST_CSR = 0;
  ft_end();
  return h == 0;
}
