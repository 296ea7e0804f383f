/* Test firmware for ITM global timestamps (tests/dbg/test_dbg.c, test_gts):
 * target/cortexm/cm_trace.c sets up the TPIU (NRZ, ACPR 0) and the ITM like
 * production code, then
 *   1. GTSFREQ = 01 (a GTS about every 128 cycles) during a busy loop;
 *   2. GTSFREQ = 11 (a GTS after a packet that finds the FIFO empty): spaced
 *      and back-to-back stimulus writes on port 2;
 *   3. GTSFREQ = 10 (about every 8192 cycles) with sync packets every 2^24
 *      cycles (DWT_CTRL.SYNCTAP = 1, ITM_TCR.SYNCENA) while sleeping past
 *      2^26 cycles, so TS[47:26] changes (GTS1.Wrap + GTS2).
 * Port 2 carries phase markers. SHORT=1 stops after phase 2 (tests/cli/dbg_gts.sh). */
#include "cm_trace.h"
#include "sonde_fw.h"

#ifndef ACPR
#define ACPR 0
#endif

volatile uint32_t sink, ticks;

void SysTick_Handler(void)
{
  ticks++;
}

static void busy(uint32_t n)
{
  uint32_t acc = 1;
  for (uint32_t i = 0; i < n; i++)
    acc = acc * 1103515245u + 12345u;
  sink = acc;
}

int main(void)
{
  cm_tpiu_swo(ACPR, 1);
  cm_itm_setup(0xFFFFFFFFu, 0, 0, 1);
  /* 1 */
  cm_itm_global_timestamps(1);
  busy(600);
  cm_itm_global_timestamps(0);
  busy(100); /* the FIFO drains */
  /* 2 */
  cm_itm_global_timestamps(3);
  for (uint32_t i = 0; i < 6; i++) {
    CM_ITM_STIM(2) = 0x100u + i;
    if (i & 1)
      CM_ITM_STIM(2) = 0x200u + i; /* back to back: the FIFO is not empty */
    busy(40);
  }
  cm_itm_global_timestamps(0);
  busy(100);
#if !SHORT
  /* 3 */
  CM_DWT_CTRL = (CM_DWT_CTRL & ~(3u << 10)) | (1u << 10) | CM_DWT_CTRL_CYCCNTENA;
  CM_ITM_TCR |= CM_ITM_TCR_SYNCENA;
  cm_itm_global_timestamps(2);
  SYST_RVR = 0xFFFFFFu;
  SYST_CVR = 0;
  SYST_CSR = 7;
  while (ticks < 5)
    sonde_wfi();
  SYST_CSR = 0;
  cm_itm_global_timestamps(0);
#endif
  CM_ITM_STIM(2) = 0xE0Du;
  while (CM_ITM_TCR & (1u << 23)) /* BUSY: let the FIFO drain */
    ;
  return 0;
}
