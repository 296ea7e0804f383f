/* A program traced by the FrankenTrace runner with its LSU plan: data
 * transfers in three 64 KiB ranges, flash (constant tables and literal
 * pools, 0x0000), SRAM (.data/.bss, 0x2000) and the demo peripherals (GPIO,
 * 0x400F), bytes, halfwords, words and LDRD/STRD, interleaved with
 * software-pended interrupts (one preempting another) and SVC, and a
 * critical section: through BASEPRI (ft_critical_enter), which DebugMonitor
 * still preempts, or with -DFT_PRIMASK through PRIMASK, which it cannot (its
 * transfers then come faster than the SWO drains: an ITM overflow, which the
 * host reports). Interrupts are pended by the program itself, so where they
 * land does not depend on the DebugMonitor delays (paper 5.2: timer-driven
 * code would not be deterministic under them). */
#include <stdint.h>

#include "ft_runner.h"
#include "sonde_fw.h"
#include "vm_periph.h"

#ifndef FT_N
#define FT_N 128
#endif
#ifndef FT_BAUD
#define FT_BAUD 48000000
#endif
#ifndef FT_ROUNDS
#define FT_ROUNDS 5 /* ft_lsu_bench: more (bench/bench_frankentrace_lsu.sh) */
#endif

#ifdef FT_ONE_RANGE /* ft_lsu_one: the peripherals alone (a "pair" of one range) */
static const uint16_t lsu_ranges[] = {0x400F};
#else
static const uint16_t lsu_ranges[] = {0x0000, 0x2000, 0x400F};
#endif
static const struct ft_config cfg = {
    .core_hz = 48000000, .swo_baud = FT_BAUD, .n = FT_N, .repeats = 2,
    .run_id = 0x15A0, .fw_id = 0xF7000010u,
    .ranges = lsu_ranges, .nranges = sizeof lsu_ranges / sizeof lsu_ranges[0], .lsu_delay = 1};

#ifndef FT_NO_MONITOR /* ft_lsu_nomon: forgotten, for the host's error message */
FT_DEBUGMON_VECTOR
#endif

static const uint8_t sbox[16] = {7, 12, 1, 14, 3, 8, 15, 0, 9, 4, 11, 6, 13, 2, 5, 10};
static const uint16_t steps16[4] = {0x1234, 0x0F0F, 0xBEEF, 0x7777};

static volatile uint32_t ring[8];
static volatile uint32_t head, tail, nested;
static uint8_t bytes[24];
static uint16_t halves[12];
static volatile uint64_t wide;

void IRQ4_Handler(void) /* high: preempts IRQ3 */
{
  nested++;
  VM_GPIO_SET = 1u << 9;
}

void IRQ3_Handler(void) /* low: logs the pins, pends IRQ4 */
{
  uint32_t h = head;
  ring[h & 7] = VM_GPIO_OUT;
  NVIC_ISPR(0) = 1u << 4;
  __asm volatile("dsb\n isb" ::: "memory");
  head = h + 1;
  VM_GPIO_TOGGLE = 1u << 4;
}

void SVC_Handler(void)
{
  wide += 0x100000003ull; /* LDRD/STRD */
  VM_GPIO_CLR = 1u << 9;
}

static uint32_t section(uint32_t acc)
{
#ifdef FT_PRIMASK
  __asm volatile("cpsid i" ::: "memory");
#else
  uint32_t saved = ft_critical_enter();
#endif
  /* back-to-back transfers: without DebugMonitor they overrun the ITM */
  acc += ring[0] + ring[1] + ring[2] + ring[3] + ring[4] + ring[5];
  tail = tail + 1;
  VM_GPIO_OUT = acc & 0xFF;
#ifdef FT_PRIMASK
  __asm volatile("cpsie i" ::: "memory");
#else
  ft_critical_exit(saved);
#endif
  return acc;
}

int main(void)
{
  int rc = ft_begin(&cfg);
  if (rc > 1)
    return 10 + rc; /* the configuration cannot work */
  ft_lower_priorities(8, 0x40);
  NVIC_IPR_BYTE(3) = 0xA0;
  NVIC_IPR_BYTE(4) = 0x60;
  NVIC_ISER(0) = (1u << 3) | (1u << 4);
  for (uint32_t i = 0; i < 24; i++) /* flash bytes -> SRAM bytes */
    bytes[i] = sbox[(i * 7) & 15];
  for (uint32_t i = 0; i < 12; i++) /* halfwords */
    halves[i] = (uint16_t)(steps16[i & 3] + bytes[i]);
  uint32_t acc = 0;
  for (uint32_t round = 0; round < FT_ROUNDS; round++) {
    VM_GPIO_OUT = round;
    NVIC_ISPR(0) = 1u << 3; /* IRQ3 now, IRQ4 inside it */
    __asm volatile("dsb\n isb" ::: "memory");
    acc = section(acc + halves[round % 12]);
    __asm volatile("svc #0" ::: "memory");
    acc ^= (uint32_t)wide;
  }
  acc += VM_GPIO_IN + nested;
  NVIC_ICER(0) = (1u << 3) | (1u << 4);
  ft_end(); /* does not return while iterations remain */
  return acc == 0;
}
