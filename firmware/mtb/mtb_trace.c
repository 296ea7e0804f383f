/* Test firmware for the MTB (tests/mtb/test_mtb.c): enables the MTB with
 * target/cortexm/mtb.c like production code, runs branches, calls, a PendSV
 * and SysTick interrupts, then stops the MTB and exits. The test compares
 * the buffer with the VM's ground truth.
 *
 * Build-time configuration (firmware/mtb.cmake):
 *   MTB_SIZE   buffer bytes (power of two)
 *   WATERMARK  byte offset for FLOW (0: none), FLOWBITS its AUTOSTOP/AUTOHALT */
#include "mtb.h"
#include "sonde_fw.h"

#ifndef MTB_SIZE
#define MTB_SIZE 4096
#endif
#ifndef WATERMARK
#define WATERMARK 0
#endif
#ifndef FLOWBITS
#define FLOWBITS 0
#endif

volatile uint32_t ticks, pends, sink;

void SysTick_Handler(void)
{
  ticks++;
}

void PendSV_Handler(void)
{
  pends++;
}

__attribute__((noinline)) static uint32_t step(uint32_t acc, uint32_t i)
{
  acc = acc * 1103515245u + 12345u;
  if (acc & 0x100)
    acc ^= acc >> 7;
  return acc + i;
}

int main(void)
{
  SYST_RVR = 150;
  SYST_CVR = 0;
  if (mtb_enable(MTB_SIZE, WATERMARK, FLOWBITS) != 0)
    return 2;
  SYST_CSR = 7; /* enable, interrupt, core clock */
  uint32_t acc = 1;
  for (uint32_t i = 0; i < 24; i++) {
    acc = step(acc, i);
    if (i == 5)
      SCB_ICSR = 1u << 28; /* PENDSVSET */
  }
  SYST_CSR = 0;
  mtb_disable();
  sink = acc;
  return 0;
}
