/* Exception test: preemption by priority, no preemption at equal priority,
 * tail-chaining of what became pending meanwhile, and (ARMv7-M) PRIGROUP
 * turning priorities into subpriorities. Handlers log a letter each; the
 * expected orders are derived in the comments. ARMv7-M ARM B1.5.4. */
#include "exc_common.h"

static volatile char order[16];
static volatile unsigned n;
static volatile uint32_t iabr_in_irq1, icsr_in_irq1, icsr_in_irq3;

static void mark(char c)
{
  if (n < sizeof order - 1)
    order[n++] = c;
}

void IRQ0_Handler(void)
{
  mark('A');
  NVIC_ISPR(0) = 1u << 1; /* IRQ1 */
  dsb_isb();
  mark('a');
  NVIC_ISPR(0) = 1u << 3; /* IRQ3 */
  dsb_isb();
  mark('b');
}

void IRQ1_Handler(void)
{
  mark('1');
  iabr_in_irq1 = NVIC_IABR(0);
  icsr_in_irq1 = SCB_ICSR;
  NVIC_ISPR(0) = 1u << 2; /* IRQ2 */
  dsb_isb();
  mark('x');
}

void IRQ2_Handler(void) { mark('2'); }

void IRQ3_Handler(void)
{
  mark('3');
  icsr_in_irq3 = SCB_ICSR;
}

static void run_round(const char *name, const char *expect)
{
  n = 0;
  NVIC_ISPR(0) = 1u << 0;
  dsb_isb();
  order[n] = 0;
  out(name);
  out(" ");
  out((const char *)order);
  out("\n");
  unsigned i = 0;
  while (expect[i] && expect[i] == order[i])
    i++;
  check(expect[i] == 0 && order[i] == 0, name);
}

int main(void)
{
  NVIC_ISER(0) = 0xF;
  /* IRQ0 low, IRQ1 high, IRQ2 middle, IRQ3 equal to IRQ0. IRQ1 preempts
   * IRQ0; IRQ2, pended in IRQ1, waits, then tail-chains into IRQ0's
   * context before IRQ0 resumes (0x80 beats 0xC0); IRQ3 waits for IRQ0 to
   * finish and tail-chains to Thread mode. */
  nvic_prio(0, 0xC0);
  nvic_prio(1, 0x40);
  nvic_prio(2, 0x80);
  nvic_prio(3, 0xC0);
  run_round("priorities", "A1x2ab3");
#if !defined(__ARM_ARCH_6M__)
  check(iabr_in_irq1 == 3, "IABR in IRQ1");
  check((icsr_in_irq1 & 0x1FF) == 17, "ICSR.VECTACTIVE in IRQ1");
  check(!(icsr_in_irq1 & (1u << 11)), "ICSR.RETTOBASE clear in IRQ1");
  check((icsr_in_irq3 & (1u << 11)) != 0, "ICSR.RETTOBASE set in IRQ3");
  /* PRIGROUP 6: only bit 7 is group priority, so all four are in group 0
   * and nothing preempts; pending ones run by subpriority: 1 (0x00),
   * 2 (0x20), 3 (0x40). */
  SCB_AIRCR = 0x05FA0000u | (6u << 8);
  nvic_prio(0, 0x40);
  nvic_prio(1, 0x00);
  nvic_prio(2, 0x20);
  nvic_prio(3, 0x40);
  run_round("subpriorities", "Aab1x23");
  SCB_AIRCR = 0x05FA0000u;
#endif
  return exc_failures;
}
