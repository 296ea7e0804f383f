/* Exception test: masking by BASEPRI, BASEPRI_MAX, PRIMASK and FAULTMASK;
 * a pending interrupt is taken right after the mask drops. ARMv7-M ARM
 * B1.4.3, B5.2.3 (MSR). */
#include "exc_common.h"

static volatile char order[16];
static volatile unsigned n;

static void mark(char c)
{
  if (n < sizeof order - 1)
    order[n++] = c;
}

void IRQ0_Handler(void) { mark('0'); }
void IRQ1_Handler(void) { mark('1'); }
void IRQ2_Handler(void) { mark('2'); }

static void set_basepri(uint32_t v) { __asm__ volatile("msr basepri, %0\n\tisb" ::"r"(v) : "memory"); }
static void set_basepri_max(uint32_t v)
{
  __asm__ volatile("msr basepri_max, %0\n\tisb" ::"r"(v) : "memory");
}
static uint32_t get_basepri(void)
{
  uint32_t v;
  __asm__ volatile("mrs %0, basepri" : "=r"(v));
  return v;
}

static void expect(const char *name, const char *want)
{
  order[n] = 0;
  out(name);
  out(" ");
  out((const char *)order);
  out("\n");
  unsigned i = 0;
  while (want[i] && want[i] == order[i])
    i++;
  check(want[i] == 0 && order[i] == 0, name);
  n = 0;
}

int main(void)
{
  NVIC_ISER(0) = 7;
  nvic_prio(0, 0x40);
  nvic_prio(1, 0x80);
  nvic_prio(2, 0xC0);
  set_basepri(0x80); /* masks 0x80 and 0xC0 */
  NVIC_ISPR(0) = 7;
  dsb_isb();
  expect("basepri=0x80", "0");
  set_basepri_max(0xC0); /* lower priority: no change */
  check(get_basepri() == 0x80, "BASEPRI_MAX ignored a lower value");
  set_basepri_max(0x40); /* higher: taken */
  check(get_basepri() == 0x40, "BASEPRI_MAX raised the mask");
  set_basepri(0);
  expect("basepri=0", "12");

  __asm__ volatile("cpsid i" ::: "memory");
  NVIC_ISPR(0) = 1;
  dsb_isb();
  expect("primask", "");
  __asm__ volatile("cpsie i\n\tisb" ::: "memory");
  expect("primask cleared", "0");

  __asm__ volatile("cpsid f" ::: "memory");
  NVIC_ISPR(0) = 6;
  dsb_isb();
  expect("faultmask", "");
  __asm__ volatile("cpsie f\n\tisb" ::: "memory");
  expect("faultmask cleared", "12");
  return exc_failures;
}
