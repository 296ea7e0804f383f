/* Shared by the exception test firmwares (firmware/tests/exc_*.c), which run
 * on the VM from tests/vm/test_exc.c. Output goes through semihosting
 * SYS_WRITE0 with small formatters (no newlib printf), so the tests need only
 * a handful of instructions to be right before they can say what happened.
 * Each program prints what it observed and returns the number of failed
 * checks (its exit code). */
#ifndef EXC_COMMON_H
#define EXC_COMMON_H

#include <stdint.h>

#include "sonde_fw.h"
#include "vm_periph.h"

#define NVIC_ICPR(n) SONDE_REG(0xE000E280u + 4u * (n))
#define NVIC_IABR(n) SONDE_REG(0xE000E300u + 4u * (n))
#define NVIC_STIR SONDE_REG(0xE000EF00u)
#define SCB_SHPR1 SONDE_REG(0xE000ED18u)
#define SCB_SHPR2 SONDE_REG(0xE000ED1Cu)
#define SCB_MMFAR SONDE_REG(0xE000ED34u)
#define SCB_FPCCR SONDE_REG(0xE000EF34u)
#define SCB_FPCAR SONDE_REG(0xE000EF38u)
#define SHPR_BYTE(exc) (*(volatile uint8_t *)(0xE000ED18u + (exc) - 4u))

static int exc_failures;

static inline void out(const char *s) { sh_write0(s); }

static inline void out_hex(uint32_t v)
{
  char b[9];
  for (int i = 0; i < 8; i++)
    b[i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 0xF];
  b[8] = 0;
  sh_write0(b);
}

static inline void out_dec(uint32_t v)
{
  char b[11];
  int i = 10;
  b[i] = 0;
  do {
    b[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  sh_write0(b + i);
}

/* Print "name value\n" (decimal). */
static inline void out_kv(const char *name, uint32_t v)
{
  out(name);
  out(" ");
  out_dec(v);
  out("\n");
}

static inline void check(int ok, const char *what)
{
  if (!ok) {
    exc_failures++;
    out("FAIL ");
    out(what);
    out("\n");
  }
}

static inline void nvic_prio(unsigned irq, uint8_t prio)
{
#if defined(__ARM_ARCH_6M__)
  /* ARMv6-M: IPR is word-accessible only. */
  volatile uint32_t *ipr = (volatile uint32_t *)(0xE000E400u + (irq & ~3u));
  unsigned sh = 8 * (irq & 3);
  *ipr = (*ipr & ~(0xFFu << sh)) | ((uint32_t)prio << sh);
#else
  NVIC_IPR_BYTE(irq) = prio;
#endif
}

static inline void dsb_isb(void) { __asm__ volatile("dsb\n\tisb" ::: "memory"); }

static inline uint32_t get_ipsr(void)
{
  uint32_t v;
  __asm__ volatile("mrs %0, ipsr" : "=r"(v));
  return v;
}

#endif
