/* A program traced by the FrankenTrace runner linked into it
 * (target/cortexm/frankentrace): tight loops, calls through function
 * pointers, SysTick interrupts (tail-chaining with the timer's), a busy-wait
 * on the delay peripheral, and WFI until the timer's interrupt. main() starts
 * the iteration first; the runner resets the chip at the end of each one.
 * Built with FT_UNMODIFIED the same program has no runner (ft_plain: for
 * `frankentrace run --probe`, which traces it from reset to its exit). */
#include <stdint.h>

#ifndef FT_UNMODIFIED
#include "ft_runner.h"
#endif
#include "sonde_fw.h"
#include "vm_periph.h"

#ifndef FT_N
#define FT_N 512
#endif
#ifndef FT_BAUD
#define FT_BAUD 8000000
#endif
#ifndef FT_REPEATS
#define FT_REPEATS 2
#endif

static volatile uint32_t ticks, timer_hits;
#ifdef NONDET
/* Deliberate nondeterminism: the delay operation's length changes from run
 * to run (a boot counter the reset does not clear), as a peripheral with a
 * free-running clock would. */
__attribute__((section(".noinit"))) static uint32_t boots;
#endif

void SysTick_Handler(void)
{
  ticks++;
}

void IRQ1_Handler(void) /* TIMER0 */
{
  VM_TIMER_STATUS = VM_TIMER_STATUS_MATCH;
  timer_hits++;
}

static uint32_t add3(uint32_t x) { return x + 3; }
static uint32_t mul5(uint32_t x) { return x * 5; }
static uint32_t xor7(uint32_t x) { return x ^ 7; }
static uint32_t (*const ops[3])(uint32_t) = {add3, mul5, xor7};

#ifndef FT_UNMODIFIED
static const struct ft_config cfg = {
    .core_hz = 48000000, .swo_baud = FT_BAUD, .n = FT_N, .repeats = FT_REPEATS,
    .run_id = 0x5EED, .fw_id = 0xF7000001u};
#endif

int main(void)
{
#ifndef FT_UNMODIFIED
  int rc = ft_begin(&cfg);
  if (rc > 1)
    return 10 + rc; /* the configuration cannot work */
#endif
  uint32_t acc = 1;
  for (uint32_t i = 0; i < 200; i++) /* tight loop + indirect calls */
    acc = ops[i % 3](acc);
  SYST_RVR = 700 - 1; /* SysTick every 700 cycles */
  SYST_CVR = 0;
  SYST_CSR = 7;
#ifdef NONDET
  VM_DELAY_CYCLES = 900 + 40 * (++boots % 3);
#else
  VM_DELAY_CYCLES = 900; /* busy-wait on the delay peripheral */
#endif
  VM_DELAY_START = 1;
  while (!(VM_DELAY_STATUS & VM_DELAY_STATUS_READY))
    ;
  NVIC_ISER(0) = 1u << VM_TIMER0_IRQ;
  VM_TIMER_LOAD = 1500;
  VM_TIMER_CTRL = VM_TIMER_CTRL_EN | VM_TIMER_CTRL_IE;
  while (!timer_hits) /* sleep until the timer */
    __asm volatile("wfi");
  SYST_CSR = 0;
  VM_TIMER_CTRL = 0;
  for (volatile uint32_t i = 0; i < 50; i++)
    acc += i;
#ifndef FT_UNMODIFIED
  ft_end(); /* does not return while iterations remain */
#endif
  return acc == 0; /* the run after the plan: untraced, exits */
}
