/* Test firmware for "the PC at cycle T" (tests/dbg/test_dbg_pcat.c): code
 * whose cycles are not all alike, so that a PC sample can fall inside an
 * instruction, a stall, an exception entry, return or tail-chain, or a
 * sleep. It does not touch the trace blocks: the test sets DWT, ITM and TPIU
 * through the debug port (as a probe would) before the first instruction.
 *
 *   - divides (UDIV/SDIV, 2-12 cycles), LDM/STM, PUSH/POP, long multiplies;
 *   - loads and stores to SLOW (a memory the test's machine gives 40 wait
 *     states, like the CC2650's peripheral bus) and a busy-wait on the
 *     delay peripheral;
 *   - TIMER0 interrupts (priority 2) that pend PendSV (lowest): a
 *     tail-chain; the delay peripheral's interrupt (priority 0) preempting
 *     the timer handler: nesting; SysTick;
 *   - WFI, woken by SysTick and TIMER0;
 *   - blocks ending with B, BL and BX whose cycles are known exactly.
 * Exit code 0 when every handler ran. */
#include "sonde_fw.h"
#include "vm_periph.h"

#ifndef ROUNDS
#define ROUNDS 4
#endif
#define SLOW ((volatile uint32_t *)0x30000000u)

volatile uint32_t timer_hits, pendsv_hits, delay_hits, systick_hits, sink;
static uint32_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};

void SysTick_Handler(void)
{
  systick_hits++;
}

void PendSV_Handler(void)
{
  pendsv_hits++;
  SLOW[1] = pendsv_hits; /* a stalled store in a tail-chained handler */
}

void IRQ1_Handler(void) /* TIMER0: nested by DELAY, tail-chains into PendSV */
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH;
  timer_hits++;
  if (timer_hits & 1) {
    VM_DELAY_CYCLES = 30;
    VM_DELAY_START = 1; /* its interrupt preempts this handler */
    while (!(VM_DELAY_STATUS & VM_DELAY_STATUS_READY))
      ;
  }
  SCB_ICSR = 1u << 28; /* PENDSVSET */
}

void IRQ2_Handler(void) /* DELAY, priority 0 */
{
  delay_hits++;
  sink += SLOW[0];
}

__attribute__((noinline)) static uint32_t mixed(uint32_t x)
{
  uint32_t q, r, lo, hi, d = sink | 3;
  __asm__ volatile("udiv %0, %4, %5\n\t"
                   "sdiv %1, %4, %5\n\t"
                   "umull %2, %3, %4, %5\n\t"
                   : "=&r"(q), "=&r"(r), "=&r"(lo), "=&r"(hi)
                   : "r"(x), "r"(d)
                   : "memory");
  __asm__ volatile("ldm %0, {r4, r5, r6, r7}\n\t"
                   "stm %0, {r4, r5, r6, r7}\n\t"
                   :
                   : "r"(buf)
                   : "r4", "r5", "r6", "r7", "memory");
  uint32_t s = SLOW[0]; /* 40 wait states */
  SLOW[0] = s + q;
  return q + r + lo + hi + s + (x / (r | 1));
}

/* Blocks ending with B, BL and BX, at the length limit and before a UDIV
 * (which the block executor leaves to exec_insn), without memory accesses:
 * their cycle bounds are tight, so an event may fall in the last
 * instruction of a block run whole (src/vm/block.c). */
__attribute__((naked, noinline)) static uint32_t tight(__attribute__((unused)) uint32_t n)
{
  __asm__ volatile("push {r4, lr}\n\t"
                   "mov r4, r0\n\t"
                   "movs r1, #0\n"
                   "1:\n\t"
                   "adds r1, r1, #3\n\t"
                   "b 2f\n"
                   "2:\n\t"
                   "eors r1, r1, r4\n\t"
                   "bl 3f\n\t"
                   ".rept 40\n\t" /* a block at its length limit, then one before UDIV */
                   "add r1, r1, r4\n\t"
                   ".endr\n\t"
                   "udiv r2, r1, r4\n\t"
                   "add r1, r1, r2\n\t"
                   "subs r4, r4, #1\n\t"
                   "bne 1b\n\t"
                   "b 4f\n"
                   "3:\n\t"
                   "add r1, r1, r1, lsl #1\n\t"
                   "bx lr\n"
                   "4:\n\t"
                   "mov r0, r1\n\t"
                   "pop {r4, pc}\n");
}

int main(void)
{
  SLOW[0] = 7;
  NVIC_IPR_BYTE(VM_TIMER0_IRQ) = 0x40;
  NVIC_IPR_BYTE(VM_DELAY_IRQ) = 0x00;
  SCB_SHPR3 = (0xE0u << 16) | (0x20u << 24); /* PendSV lowest, SysTick above the timer */
  NVIC_ISER(0) = (1u << VM_TIMER0_IRQ) | (1u << VM_DELAY_IRQ);
  VM_DELAY_CTRL = 1;
  SYST_RVR = 1999;
  SYST_CVR = 0;
  SYST_CSR = 7;
  uint32_t acc = 0x1234567u;
  for (int round = 0; round < ROUNDS; round++) {
    for (uint32_t i = 1; i < 40; i++)
      acc += mixed(acc ^ (i * 2654435761u));
    acc += tight(150);
    VM_TIMER_LOAD = 700;
    VM_TIMER_CTRL = VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE; /* one-shot */
    uint32_t h = timer_hits;
    while (timer_hits == h)
      sonde_wfi(); /* woken by SysTick or TIMER0 */
    VM_TIMER_CTRL = 0;
  }
  SYST_CSR = 0;
  sink = acc;
  sonde_exit(timer_hits == ROUNDS && pendsv_hits == ROUNDS && delay_hits == (ROUNDS + 1) / 2 &&
                     systick_hits > 0
                 ? 0
                 : 1);
}
