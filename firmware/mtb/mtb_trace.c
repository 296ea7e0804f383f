/* Test firmware for the MTB (tests/mtb/test_mtb.c): enables the MTB with
 * target/cortexm/mtb.c like production code, runs branches, calls, a PendSV
 * and SysTick interrupts, then stops the MTB and exits. The test compares
 * the buffer with the VM's ground truth.
 *
 * Build-time configuration (firmware/mtb.cmake):
 *   MTB_SIZE   buffer bytes (power of two)
 *   WATERMARK  byte offset for FLOW (0: none), FLOWBITS its AUTOSTOP/AUTOHALT
 *   LOOPS      workload rounds; USE_MTB 0 leaves the MTB off (benchmark) */
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
#ifndef LOOPS
#define LOOPS 24 /* workload rounds (the benchmark images use more) */
#endif
#ifndef USE_MTB
#define USE_MTB 1
#endif

volatile uint32_t ticks, pends, sink;

#ifndef NEST_MODE
#define NEST_MODE 0 /* 1: PendSV pended in SysTick preempts it; 2: tail-chains after it */
#endif

void SysTick_Handler(void)
{
  ticks++;
  if (NEST_MODE && ticks % 3 == 0)
    SCB_ICSR = 1u << 28; /* PENDSVSET */
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

#if TSTART_TEST
/* Trace sessions set by comparators (MTB TSTART/TSTOP, mtb_enable_window():
 * the core DWT on the M33, the MTBDWT on the M0+): tracing starts at
 * traced_start and stops at traced_stop, WINDOWS times; with TSTART_IRQ
 * SysTick interrupts both inside and outside the sessions. */
#ifndef WINDOWS
#define WINDOWS 1
#endif
#ifndef TSTART_IRQ
#define TSTART_IRQ 0
#endif
#ifndef TSTART_FOREVER
#define TSTART_FOREVER 0 /* 1: sessions forever (tests/cli/mtb_fetch.sh halts it) */
#endif
__attribute__((noinline)) void traced_start(void)
{
  sink++;
}

__attribute__((noinline)) void traced_stop(void)
{
  sink--;
}

int main(void)
{
  if (TSTART_IRQ) {
    SYST_RVR = 150;
    SYST_CVR = 0;
    SYST_CSR = 7; /* enable, interrupt, core clock */
  }
  if (mtb_enable_window(MTB_SIZE, (uint32_t)traced_start, (uint32_t)traced_stop) != 0)
    return 2;
  uint32_t acc = 1;
  for (uint32_t w = 0; TSTART_FOREVER || w < WINDOWS; w++) {
    for (uint32_t i = 0; i < 6; i++)
      acc = step(acc, i); /* not traced */
    traced_start();
    for (uint32_t i = 0; i < 6 + w % 8; i++)
      acc = step(acc, i); /* traced */
    traced_stop();
  }
  for (uint32_t i = 0; i < 6; i++)
    acc = step(acc, i); /* not traced */
  SYST_CSR = 0;
  mtb_disable();
  sink = acc;
  return 0;
}
#else
int main(void)
{
  SYST_RVR = 150;
  SYST_CVR = 0;
  if (NEST_MODE == 1) /* SHPR3: SysTick low, PendSV high priority */
    SONDE_REG(0xE000ED20u) = 0x80u << 24;
  else if (NEST_MODE == 2) /* SysTick high, PendSV low */
    SONDE_REG(0xE000ED20u) = 0x80u << 16;
  if (USE_MTB && mtb_enable(MTB_SIZE, WATERMARK, FLOWBITS) != 0)
    return 2;
  SYST_CSR = 7; /* enable, interrupt, core clock */
  uint32_t acc = 1;
  for (uint32_t i = 0; i < LOOPS; i++) {
    acc = step(acc, i);
    if (i == 5)
      SCB_ICSR = 1u << 28; /* PENDSVSET */
  }
  SYST_CSR = 0;
  mtb_disable();
  sink = acc;
  return 0;
}
#endif
