/* Firmware for the QEMU comparison (tests/firmware/qemu_compare.sh): the same
 * image runs on QEMU (mps2-an385/an386, one instruction per translation block,
 * exec log) and on the VM (--trace-pc), and the two instruction address
 * sequences must be identical. So it uses nothing whose timing or host side
 * differs between the two: no timers, no newlib stdio (rdimon probes
 * semihosting features differently on each); only deterministic exceptions
 * (SVC, PendSV set by software) and semihosting SYS_WRITE0 / SYS_EXIT_EXTENDED. */
#include <stdint.h>
#include <string.h>

#include "sonde_fw.h"

static volatile uint32_t svc_count, pendsv_count;

void SVC_Handler(void) { svc_count++; }
void PendSV_Handler(void) { pendsv_count += 2; }

static char line[64];

static void put_hex(const char *label, uint32_t v)
{
  size_t n = strlen(label);
  memcpy(line, label, n);
  line[n++] = ' ';
  for (int i = 28; i >= 0; i -= 4)
    line[n++] = "0123456789abcdef"[(v >> i) & 0xF];
  line[n++] = '\n';
  line[n] = 0;
  sh_write0(line);
}

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

static int32_t v[48];

__attribute__((noinline)) static void shell_sort(int32_t *a, int n)
{
  for (int gap = n / 2; gap > 0; gap /= 2)
    for (int i = gap; i < n; i++) {
      int32_t x = a[i];
      int j = i;
      for (; j >= gap && a[j - gap] > x; j -= gap)
        a[j] = a[j - gap];
      a[j] = x;
    }
}

__attribute__((noinline)) static uint64_t mix64(uint64_t x, uint64_t y)
{
  return x * y + x / (y | 1) + (x >> (y & 31));
}

#if defined(__ARM_FP)
__attribute__((noinline)) static float fdot(const int32_t *a, int n)
{
  float s = 0.0f;
  for (int i = 0; i < n; i++)
    s = s * 0.5f + (float)a[i] / 7.0f;
  return s;
}
#endif

int main(void)
{
  uint8_t buf[200];
  uint32_t seed = 7;
  for (unsigned i = 0; i < sizeof buf; i++) {
    seed = seed * 1103515245u + 12345u;
    buf[i] = (uint8_t)(seed >> 16);
  }
  for (int i = 0; i < 48; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (int32_t)seed >> 8;
  }
  put_hex("crc", crc32(buf, sizeof buf));
  shell_sort(v, 48);
  put_hex("sorted", (uint32_t)v[0] ^ (uint32_t)v[47]);
  uint64_t m = mix64(0x123456789abcdefull, seed);
  put_hex("mix", (uint32_t)(m >> 32) ^ (uint32_t)m);
  for (int i = 0; i < 3; i++) {
    __asm__ volatile("svc 0" ::: "memory");
    /* Pend PendSV with interrupts masked: where a pended exception is taken
     * after the write is not fixed by the architecture (QEMU varies), but it
     * must be taken right after the CPSIE that unmasks it. */
    sonde_disable_irq();
    SCB_ICSR = 1u << 28; /* PENDSVSET */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    sonde_enable_irq();
  }
  put_hex("exceptions", svc_count << 16 | pendsv_count);
#if defined(__ARM_FP)
  float f = fdot(v, 48);
  uint32_t fb;
  memcpy(&fb, &f, 4);
  put_hex("float", fb);
#endif
  return 0;
}
