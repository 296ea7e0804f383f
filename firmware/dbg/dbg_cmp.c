/* Test firmware for the DWT comparators beyond address matching
 * (tests/dbg/test_dbg.c, test_cycmatch / test_value_match), written with
 * target/cortexm/cm_trace.c as production code would:
 *   1. CYCMATCH (ARMv7-M ARM C1.8.4, DWT_FUNCTION0 C1.8.17): comparator 0
 *      against CYCCNT emits a PC sample packet at NMATCH chosen counts; the
 *      firmware polls MATCHED (cleared by the read) between them;
 *   2. CYCMATCH with a watchpoint debug event: DebugMonitor (DEMCR.MON_EN);
 *   3. data value matching on comparator 1 linked to address comparators 0
 *      and 2 (DATAVMATCH, DATAVADDR0/1, DATAVSIZE): watchpoints counted by
 *      the DebugMonitor handler;
 *   4. a watchpoint on an instruction address (comparator 3, FUNCTION 4).
 * Results go out on ITM stimulus port 1 as 32-bit words; exit code 0 unless
 * a register did not behave. */
#include "cm_trace.h"
#include "sonde_fw.h"

#ifndef ACPR
#define ACPR 0
#endif
#define NMATCH 8
#define SCB_DFSR SONDE_REG(0xE000ED30u)
#define DEMCR_MON_EN (1u << 16)
#define DFSR_DWTTRAP (1u << 2)
#define VALUE 0x5A5A1234u

volatile uint32_t a_var[2], b_var, c_var, sink;
volatile uint32_t mon_hits, mon_dwttrap;

void DebugMon_Handler(void)
{
  uint32_t dfsr = SCB_DFSR;
  if (dfsr & DFSR_DWTTRAP)
    mon_dwttrap++;
  SCB_DFSR = dfsr; /* write-one-to-clear */
  mon_hits++;
}

__attribute__((noinline)) static void watched_fn(void)
{
  sink++;
}

static void report(uint32_t v)
{
  while (!(CM_ITM_STIM(1) & 1)) /* FIFOREADY */
    ;
  CM_ITM_STIM(1) = v;
}

int main(void)
{
  cm_tpiu_swo(ACPR, 1);
  cm_itm_setup(0xFFFFFFFFu, 1, 0, 1);
  CM_DWT_CTRL |= CM_DWT_CTRL_CYCCNTENA;
  CM_DWT_CYCCNT = 0;

  /* 1. A PC sample at CYCCNT = now + 400 + 61 i. */
  uint32_t acc = 1;
  for (uint32_t i = 0; i < NMATCH; i++) {
    cm_dwt_cycle_match(CM_DWT_CYCCNT + 400u + 61u * i, 0x1);
    uint32_t spins = 0;
    while (!cm_dwt_matched(0)) {
      acc = acc * 1103515245u + 12345u;
      spins++;
    }
    if (cm_dwt_matched(0))
      return 3; /* MATCHED must clear on read */
    report(spins);
  }
  sink = acc;

  /* 2. A watchpoint debug event at CYCCNT = now + 300. */
  CM_DEMCR |= DEMCR_MON_EN;
  mon_hits = mon_dwttrap = 0;
  cm_dwt_cycle_match(CM_DWT_CYCCNT + 300u, 0x4);
  while (mon_hits == 0)
    acc++;
  CM_DWT_FUNCTION(0) = 0;
  report(mon_dwttrap);
  sink = acc;

  /* 3. Data value watchpoints linked to address comparators 0 (a_var[0]) and
   * 2 (c_var); comparator 0 and 2 only provide addresses (FUNCTION 0). */
  cm_dwt_data_trace(0, &a_var[0], 2, 0);
  cm_dwt_data_trace(2, &c_var, 2, 0);
  uint32_t h;
  /* writes of VALUE to a_var[0] only */
  if (cm_dwt_value_match(VALUE, 4, 0, 1, 0x6) != 0)
    return 4;
  h = mon_hits;
  a_var[0] = VALUE; /* hit */
  b_var = VALUE;    /* not linked */
  a_var[0] = 7;     /* other value */
  c_var = VALUE;    /* not linked (yet) */
  sink = a_var[0];  /* a read */
  a_var[0] = VALUE; /* hit */
  report(mon_hits - h);
  /* second link: c_var too */
  if (cm_dwt_value_match(VALUE, 4, 0, 2, 0x6) != 0)
    return 5;
  h = mon_hits;
  c_var = VALUE; /* hit */
  b_var = VALUE; /* not linked */
  report(mon_hits - h);
  /* unlinked: any address */
  if (cm_dwt_value_match(VALUE, 4, 1, 1, 0x6) != 0)
    return 6;
  h = mon_hits;
  b_var = VALUE; /* hit */
  report(mon_hits - h);
  /* byte value 0x34 on a_var[0], read or write */
  if (cm_dwt_value_match(0x34, 1, 0, 1, 0x7) != 0)
    return 7;
  h = mon_hits;
  *(volatile uint8_t *)&a_var[0] = 0x34; /* hit: byte write */
  sink = a_var[0];                       /* hit: word read, byte lane 0 is 0x34 */
  a_var[1] = 0x34343434u;                /* outside comparator 0's word */
  report(mon_hits - h);
  /* halfword 0x1234 on a_var[0], reads only */
  if (cm_dwt_value_match(0x1234, 2, 0, 1, 0x5) != 0)
    return 8;
  h = mon_hits;
  a_var[0] = 0x00001234u; /* a write: no */
  sink = a_var[0];        /* hit */
  report(mon_hits - h);
  CM_DWT_FUNCTION(1) = 0;
  /* 4. A watchpoint on the PC of watched_fn (comparator 3, FUNCTION 4). */
  cm_dwt_data_trace(3, (const volatile void *)((uint32_t)watched_fn & ~1u), 0, 0x4);
  h = mon_hits;
  watched_fn();
  watched_fn();
  report(mon_hits - h);
  CM_DWT_FUNCTION(3) = 0;
  report(mon_dwttrap);
  return 0;
}
