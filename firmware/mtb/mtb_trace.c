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
#define NEST_MODE 0 /* 1: PendSV pended in SysTick preempts it; 2: tail-chains after it;
                       3: the demo timer preempts SysTick before its first instruction */
#endif

void SysTick_Handler(void)
{
  ticks++;
  if ((NEST_MODE == 1 || NEST_MODE == 2) && ticks % 3 == 0)
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
#elif NEST_MODE == 3
/* Preempted at entry: the demo timer's interrupt (priority 0) falls due on
 * the very cycle SysTick's entry (priority 0x80) ends, so it is taken before
 * SysTick_Handler's first instruction, and its entry packet's source is
 * SysTick_Handler (the address SysTick's entry left the core at). SysTick's
 * period (151) and the timer's (97) are coprime: every phase comes round.
 * The run stops the MTB at the first such entry whose SysTick packet went
 * into the circle's last slot (NEST_SLOW_SLOT 1: the MTB's full packet path,
 * src/vm/dbg_mtb.c) or into any other slot (0: the in-line path, mtb.h). */
#include "vm_periph.h"
#ifndef NEST_SLOW_SLOT
#define NEST_SLOW_SLOT 0
#endif
volatile uint32_t nested_at_entry;

/* ret: the return address in the timer's frame; pos: MTB POSITION right
 * after the timer's entry packet (SysTick's is the one before it). */
__attribute__((used)) void timer_irq(uint32_t ret, uint32_t pos)
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH;
  if ((ret & ~1u) != ((uint32_t)&SysTick_Handler & ~1u))
    return;
  uint32_t slot = ((pos & ~7u) - 16u) & (MTB_SIZE - 1u);
  if ((slot == MTB_SIZE - 8u) == NEST_SLOW_SLOT) {
    mtb_disable();
    nested_at_entry = 1;
  }
}

/* No stack use and no branch before POSITION is read. */
__attribute__((naked)) void IRQ1_Handler(void)
{
  __asm volatile("ldr r0, [sp, #24]\n\t"
                 "ldr r1, 1f\n\t"
                 "ldr r1, [r1]\n\t"
                 "b timer_irq\n\t"
                 ".p2align 2\n"
                 "1: .word %c0\n" ::"i"(MTB_SFR_BASE));
}

int main(void)
{
  SYST_RVR = 150;
  SYST_CVR = 0;
  SCB_SHPR3 = 0x80u << 24; /* SysTick below the timer's IRQ (0) */
  if (mtb_enable(MTB_SIZE, 0, 0) != 0)
    return 2;
  VM_TIMER_LOAD = 97;
  VM_TIMER_CTRL = VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE | VM_TIMER_CTRL_PERIODIC;
  NVIC_ISER(0) = 1u << VM_TIMER0_IRQ;
  SYST_CSR = 7;
  uint32_t acc = 1;
  for (uint32_t i = 0; !nested_at_entry && i < LOOPS; i++)
    acc = step(acc, i);
  SYST_CSR = 0;
  VM_TIMER_CTRL = 0;
  mtb_disable();
  sink = acc;
  return nested_at_entry ? 0 : 3;
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
