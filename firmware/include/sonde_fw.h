/* Helpers for firmware that runs on Sonde's virtual Cortex-M (and on QEMU or
 * silicon with a debugger attached): ARM semihosting calls, the system
 * registers the examples use, and the .noinit attribute.
 *
 * Semihosting: "Semihosting for AArch32 and AArch64" (ARM IHI 0056), the
 * Thumb trap is BKPT 0xAB with the operation in r0 and the argument in r1. */
#ifndef SONDE_FW_H
#define SONDE_FW_H

#include <stdint.h>

#define SONDE_NOINIT __attribute__((section(".noinit")))

enum {
  SH_SYS_WRITEC = 0x03,
  SH_SYS_WRITE0 = 0x04,
  SH_SYS_WRITE = 0x05,
  SH_SYS_CLOCK = 0x10,
  SH_SYS_EXIT = 0x18,
  SH_SYS_EXIT_EXTENDED = 0x20,
  SH_ADP_STOPPED_APPLICATION_EXIT = 0x20026,
};

static inline uint32_t sh_call(uint32_t op, const void *arg)
{
  register uint32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static inline void sh_write0(const char *s) { sh_call(SH_SYS_WRITE0, s); }
static inline void sh_writec(char c) { sh_call(SH_SYS_WRITEC, &c); }

/* Exit the program with `code` (SYS_EXIT_EXTENDED). Never returns. */
__attribute__((noreturn)) void sonde_exit(int code);

/* System control space (ARMv7-M ARM B3.2). */
#define SONDE_REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR SONDE_REG(0xE000E010u)
#define SYST_RVR SONDE_REG(0xE000E014u)
#define SYST_CVR SONDE_REG(0xE000E018u)
#define SCB_ICSR SONDE_REG(0xE000ED04u)
#define SCB_VTOR SONDE_REG(0xE000ED08u)
#define SCB_AIRCR SONDE_REG(0xE000ED0Cu)
#define SCB_SCR SONDE_REG(0xE000ED10u)
#define SCB_CCR SONDE_REG(0xE000ED14u)
#define SCB_SHPR3 SONDE_REG(0xE000ED20u)
#define SCB_SHCSR SONDE_REG(0xE000ED24u)
#define SCB_CFSR SONDE_REG(0xE000ED28u)
#define SCB_HFSR SONDE_REG(0xE000ED2Cu)
#define SCB_BFAR SONDE_REG(0xE000ED38u)
#define SCB_CPACR SONDE_REG(0xE000ED88u)
#define NVIC_ISER(n) SONDE_REG(0xE000E100u + 4u * (n))
#define NVIC_ICER(n) SONDE_REG(0xE000E180u + 4u * (n))
#define NVIC_ISPR(n) SONDE_REG(0xE000E200u + 4u * (n))
#define NVIC_IPR_BYTE(n) (*(volatile uint8_t *)(0xE000E400u + (n)))

static inline void sonde_enable_irq(void) { __asm__ volatile("cpsie i" ::: "memory"); }
static inline void sonde_disable_irq(void) { __asm__ volatile("cpsid i" ::: "memory"); }
static inline void sonde_wfi(void) { __asm__ volatile("wfi" ::: "memory"); }

#endif
