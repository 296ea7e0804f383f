/* Test firmware for the debug and trace blocks (tests/dbg/test_dbg.c): sets up
 * TPIU/ITM/DWT through target/cortexm/cm_trace.c exactly as on a chip, then
 * runs a workload with SysTick interrupts and WFI.
 *
 * Build-time configuration (firmware/dbg.cmake):
 *   ACPR      TPIU prescaler (SWO baud = 48 MHz / (ACPR + 1) on cc2650)
 *   CTRL13    DWT_CTRL[12:0] for PC sampling (0: off)
 *   EXC       exception trace on
 *   DT        data-trace comparators on `watched`
 *   PRINTF    ITM printf lines on port 0
 *   FORMATTER leave the TPIU formatter on (FFCR = 0x102, its reset value)
 *   REPS      workload rounds
 *   USE_MTB   also trace into the MTB (target/cortexm/mtb.c; cm33 machine) */
#include "cm_trace.h"
#include "sonde_fw.h"
#if USE_MTB
#include "mtb.h"
#endif

#ifndef ACPR
#define ACPR 1
#endif
#ifndef CTRL13
#define CTRL13 0
#endif
#ifndef REPS
#define REPS 6 /* workload rounds (the benchmark images use more) */
#endif

volatile uint32_t ticks;
volatile uint32_t watched[4];
volatile uint32_t sink;

void SysTick_Handler(void)
{
  ticks++;
}

#if !PRINTF
static uint32_t work(uint32_t n)
{
  uint32_t acc = 0x12345678u;
  for (uint32_t i = 0; i < n; i++) {
    acc = acc * 1103515245u + 12345u;
    if (acc & 0x100)
      acc ^= acc >> 7;
    if ((i & 63) == 0)
      watched[0] = acc; /* traced by comparator 0: address offset + data */
    else if ((i & 63) == 32)
      watched[1] = i * 3u; /* traced by comparator 1: PC + data value */
    sink = watched[0] + i;
  }
  return acc;
}
#endif

int main(void)
{
  cm_tpiu_swo(ACPR, 1);
#if FORMATTER
  CM_TPIU_FFCR = 0x102; /* continuous formatting: 16-byte frames on the pin */
#endif
  cm_itm_setup(0xFFFFFFFFu, 1, 0, 1);
#if EXC
  cm_dwt_exception_trace(1);
#endif
#if DT
  cm_dwt_data_trace(0, &watched[0], 2, 0x2Fu); /* writes: address offset + data */
  cm_dwt_data_trace(1, &watched[1], 2, 0x3u);  /* PC + data R/W */
#endif
  SYST_RVR = 2999;
  SYST_CVR = 0;
  SYST_CSR = 7;
#if USE_MTB
  if (mtb_enable(4096, 0, 0) != 0)
    return 2;
#endif
#if CTRL13
  cm_dwt_pc_sampling(CTRL13, 0);
#endif
#if PRINTF
  for (int i = 0; i < 20; i++)
    cm_itm_printf(0, "line %d: 0x%08x %s\n", i, (unsigned)(i * 0x1234567), i & 1 ? "odd" : "even");
#else
  for (int r = 0; r < REPS; r++) {
    sink = work(2000);
    sonde_wfi(); /* sleeps until the next SysTick */
  }
#endif
  SYST_CSR = 0;
  CM_DWT_CTRL = 0;
#if USE_MTB
  mtb_disable();
#endif
  return (int)(ticks == 0);
}
