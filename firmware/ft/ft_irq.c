/* A second program traced by the FrankenTrace runner: exceptions first.
 * Software-pended interrupts at three priorities (preemption, then
 * tail-chaining of what became pending meanwhile), SVC pending PendSV (which
 * tail-chains after it), a state machine stepped through a table of function
 * pointers, and SysTick preempting a CPU-bound loop. main() starts the
 * iteration first; the runner resets the chip at the end of each one. */
#include <stdint.h>

#include "ft_runner.h"
#include "sonde_fw.h"

#ifndef FT_N
#define FT_N 256
#endif
#ifndef FT_BAUD
#define FT_BAUD 16000000
#endif

static volatile uint32_t log_word, ticks, svcs, pendsvs;

static void mark(uint32_t v) { log_word = log_word * 31u + v; }

void IRQ10_Handler(void) /* low: pends the high one (preempts), then the middle one */
{
  mark(10);
  NVIC_ISPR(0) = 1u << 11;
  __asm volatile("dsb\n isb" ::: "memory");
  NVIC_ISPR(0) = 1u << 12;
  __asm volatile("dsb\n isb" ::: "memory");
  mark(100);
}
void IRQ11_Handler(void) { mark(11); } /* high */
void IRQ12_Handler(void) { mark(12); } /* middle: tail-chains after IRQ10 */

void SVC_Handler(void)
{
  svcs++;
  SCB_ICSR = 1u << 28; /* PENDSVSET: tail-chains after this handler */
}
void PendSV_Handler(void) { pendsvs++; }
void SysTick_Handler(void) { ticks++; }

static uint32_t st_idle(uint32_t x) { return x + 1; }
static uint32_t st_work(uint32_t x) { return x * 3 + 1; }
static uint32_t st_done(uint32_t x) { return x >> 1; }
static uint32_t (*const steps[3])(uint32_t) = {st_idle, st_work, st_done};

#ifdef FT_LSU
/* With the LSU plan (ft_lsu_irq): flash and SRAM, invasive. SysTick is left
 * out: an interrupt from a timer lands elsewhere under DebugMonitor delays. */
static const uint16_t lsu_ranges[] = {0x0000, 0x2000};
FT_DEBUGMON_VECTOR
#endif
static const struct ft_config cfg = {
    .core_hz = 48000000, .swo_baud = FT_BAUD, .n = FT_N, .repeats = 3,
    .run_id = 0x1A2B, .fw_id = 0xF7000002u,
#ifdef FT_LSU
    .ranges = lsu_ranges, .nranges = 2, .lsu_delay = 1,
#endif
};

int main(void)
{
  int rc = ft_begin(&cfg);
  if (rc > 1)
    return 10 + rc;
#ifdef FT_LSU
  ft_lower_priorities(16, 0x20); /* SVC, PendSV below DebugMonitor too */
#endif
  NVIC_IPR_BYTE(10) = 0xC0;
  NVIC_IPR_BYTE(11) = 0x40;
  NVIC_IPR_BYTE(12) = 0x80;
  NVIC_ISER(0) = 7u << 10;
  for (unsigned round = 0; round < 3; round++) {
    NVIC_ISPR(0) = 1u << 10;
    __asm volatile("dsb\n isb" ::: "memory");
    __asm volatile("svc #0" ::: "memory");
  }
  uint32_t x = 5;
  for (uint32_t i = 0; i < 60; i++)
    x = steps[x % 3](x) ^ i;
#ifndef FT_LSU
  SYST_RVR = 300 - 1; /* SysTick every 300 cycles over a CPU-bound loop */
  SYST_CVR = 0;
  SYST_CSR = 7;
#endif
  for (volatile uint32_t i = 0; i < 200; i++)
    x += i;
  SYST_CSR = 0;
  NVIC_ICER(0) = 7u << 10;
  ft_end(); /* does not return while iterations remain */
  return (x + log_word + ticks + svcs + pendsvs) == 0;
}
