/* The Sonde demo firmware (`make demo`): a bare-metal main loop on the
 * virtual Cortex-M3 that does a little of everything the tools trace —
 * function calls (CRC, sort, a fixed-point filter), a SysTick interrupt that
 * blinks the LED, sleeping in WFI between rounds, and text on the UART —
 * then exits through semihosting. Peripherals: firmware/include/vm_periph.h
 * (UART at 0x400F0000, GPIO at 0x400F1000 on every built-in machine). */
#include <stdint.h>

#include "sonde_fw.h"
#if SWO_PROFILE
#include "cm_trace.h" /* target/cortexm: DWT/ITM/TPIU set-up as on a chip */
#endif

#define UART_DATA SONDE_REG(0x400F0000u)
#define UART_STATUS SONDE_REG(0x400F0004u) /* bit0 TXE */
#define GPIO_TOGGLE SONDE_REG(0x400F100Cu)

#define ROUNDS 6
#define SYSTICK_PERIOD_CYCLES 20000u

static volatile uint32_t ticks;

void SysTick_Handler(void)
{
  ticks++;
  if (ticks % 8 == 0)
    GPIO_TOGGLE = 1; /* the LED */
}

static void uart_putc(char c)
{
  while (!(UART_STATUS & 1u))
    ;
  UART_DATA = (uint8_t)c;
}

static void uart_puts(const char *s)
{
  while (*s)
    uart_putc(*s++);
}

static void uart_hex(uint32_t v)
{
  for (int i = 28; i >= 0; i -= 4)
    uart_putc("0123456789abcdef"[(v >> i) & 0xF]);
}

static void uart_udec(uint32_t v)
{
  char buf[11];
  int n = 0;
  do {
    buf[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n)
    uart_putc(buf[--n]);
}

static void uart_dec(int32_t v)
{
  if (v < 0)
    uart_putc('-');
  uart_udec(v < 0 ? 0u - (uint32_t)v : (uint32_t)v);
}

static uint8_t data[256];
static int16_t samples[64];

__attribute__((noinline)) static uint32_t crc32(const uint8_t *p, unsigned n)
{
  uint32_t crc = 0xFFFFFFFFu;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

__attribute__((noinline)) static void sort(int16_t *v, unsigned n)
{
  for (unsigned i = 1; i < n; i++) {
    int16_t x = v[i];
    unsigned j = i;
    while (j > 0 && v[j - 1] > x) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
}

/* 8-tap moving-average filter in Q15, summed over the block. */
__attribute__((noinline)) static int32_t filter(const int16_t *x, unsigned n)
{
  int32_t sum = 0;
  for (unsigned i = 7; i < n; i++) {
    int32_t acc = 0;
    for (unsigned k = 0; k < 8; k++)
      acc += x[i - k] * 4096;
    sum += acc >> 15;
  }
  return sum;
}

__attribute__((noinline)) static void fill(uint32_t seed)
{
  for (unsigned i = 0; i < sizeof data; i++) {
    seed = seed * 1664525u + 1013904223u;
    data[i] = (uint8_t)(seed >> 24);
  }
  for (unsigned i = 0; i < 64; i++)
    samples[i] = (int16_t)(data[i] << 7) - 16384;
}

int main(void)
{
  uart_puts("sonde demo: CRC, sort and filter on a virtual Cortex-M3\n");
#if SWO_PROFILE
  /* What a debugger (or the firmware itself) sets up to profile over the SWO
   * pin: 12 Mbaud NRZ at 48 MHz, local timestamps, exception trace, and a PC
   * sample every 1024 cycles (DWT_CTRL[12:0] = 0x1201: CYCTAP, POSTPRESET 0). */
  cm_tpiu_swo(3, 1);
  cm_itm_setup(1u, 1, 0, 1);
  cm_dwt_exception_trace(1);
  cm_dwt_pc_sampling(0x1201u, 0);
#endif
  SYST_RVR = SYSTICK_PERIOD_CYCLES - 1;
  SYST_CVR = 0;
  SYST_CSR = 7; /* processor clock, interrupt, enable */
  for (uint32_t round = 1; round <= ROUNDS; round++) {
    fill(round);
    uint32_t c = crc32(data, sizeof data);
    int32_t f = filter(samples, 64);
    sort(samples, 64);
    uart_puts("round ");
    uart_udec(round);
    uart_puts(": crc32 ");
    uart_hex(c);
    uart_puts(", filter ");
    uart_dec(f);
    uart_puts(", min ");
    uart_dec(samples[0]);
    uart_puts(", max ");
    uart_dec(samples[63]);
    uart_puts(", ticks ");
    uart_udec(ticks);
    uart_putc('\n');
    /* sleep until the next two SysTick interrupts */
    uint32_t t = ticks;
    while (ticks < t + 2)
      sonde_wfi();
  }
  SYST_CSR = 0;
  uart_puts("done after ");
  uart_udec(ticks);
  uart_puts(" SysTick interrupts\n");
  return 0;
}
