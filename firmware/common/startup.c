/* Startup code of every Sonde firmware image: the vector table, the reset
 * handler and default exception handlers (ARMv7-M ARM B1.5.3 "The vector
 * table", B1.5.6 "Exception entry behavior").
 *
 * Reset_Handler: enable the FPU when the image uses it (CPACR, before any
 * FP instruction), copy .data from flash, zero .bss (.noinit is left alone,
 * so it survives a system reset with SRAM retained), open the semihosting
 * console when linked with rdimon, run constructors, call main(), and exit
 * with main's return value through semihosting SYS_EXIT_EXTENDED.
 *
 * Every handler is weak: define e.g. `void SysTick_Handler(void)` or
 * `void IRQ3_Handler(void)` in the firmware to override it. An unexpected
 * exception prints its number through semihosting and exits with 128 + number. */
#include <stdint.h>
#include <string.h>

#include "sonde_fw.h"

extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _estack[];
int main(void);
void __libc_init_array(void);
#ifdef SONDE_FW_SEMIHOSTING
#include <stdio.h>
void initialise_monitor_handles(void);
#endif

void Reset_Handler(void);
void Default_Handler(void);

#define WEAK_ALIAS __attribute__((weak, alias("Default_Handler")))
void NMI_Handler(void) WEAK_ALIAS;
void HardFault_Handler(void) WEAK_ALIAS;
void MemManage_Handler(void) WEAK_ALIAS;
void BusFault_Handler(void) WEAK_ALIAS;
void UsageFault_Handler(void) WEAK_ALIAS;
void SVC_Handler(void) WEAK_ALIAS;
void DebugMon_Handler(void) WEAK_ALIAS;
void PendSV_Handler(void) WEAK_ALIAS;
void SysTick_Handler(void) WEAK_ALIAS;
/* IRQ0..IRQ63 (the most any built-in machine has). */
#define IRQS(X)                                                                        \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)  \
  X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29)  \
  X(30) X(31) X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43)  \
  X(44) X(45) X(46) X(47) X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57)  \
  X(58) X(59) X(60) X(61) X(62) X(63)
#define NUM_IRQS 64
#define DECLARE_IRQ(n) void IRQ##n##_Handler(void) WEAK_ALIAS;
IRQS(DECLARE_IRQ)

typedef void (*vector_fn)(void);

/* 16 system vectors + 64 external interrupts. */
#define IRQ_VECTOR(n) IRQ##n##_Handler,
__attribute__((section(".vectors"), used)) const vector_fn sonde_vectors[16 + NUM_IRQS] = {
    (vector_fn)(uintptr_t)_estack, Reset_Handler, NMI_Handler, HardFault_Handler,
    MemManage_Handler, BusFault_Handler, UsageFault_Handler, 0, 0, 0, 0, SVC_Handler,
    DebugMon_Handler, 0, PendSV_Handler, SysTick_Handler,
    IRQS(IRQ_VECTOR)
};

void sonde_exit(int code)
{
  uint32_t block[2] = {SH_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
  for (;;)
    sh_call(SH_SYS_EXIT_EXTENDED, block);
}

/* Plain loops, not memcpy/memset: the C library may not be usable yet. */
__attribute__((noreturn)) void Reset_Handler(void)
{
#if defined(__ARM_FP)
  SCB_CPACR |= 0xFu << 20; /* CP10, CP11 full access */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
  volatile uint32_t *src = _sidata, *dst = _sdata;
  while (dst < _edata)
    *dst++ = *src++;
  for (dst = _sbss; dst < _ebss;)
    *dst++ = 0;
#ifdef SONDE_FW_SEMIHOSTING
  initialise_monitor_handles();
#endif
  __libc_init_array();
  int rc = main();
#ifdef SONDE_FW_SEMIHOSTING
  fflush(NULL); /* buffered stdio output before leaving */
#endif
  sonde_exit(rc);
}

/* newlib's __libc_init_array calls _init (crti.o is not linked: -nostartfiles). */
void _init(void) {}
void _fini(void) {}

static char *put_hex8(char *p, uint32_t v)
{
  for (int i = 28; i >= 0; i -= 4)
    *p++ = "0123456789abcdef"[(v >> i) & 0xF];
  return p;
}

/* Report the exception with the PC it interrupted (from the stacked frame)
 * and, for a fault on ARMv7-M and later, the fault status registers; then
 * exit with 128 + its number. */
__attribute__((used, noreturn)) static void default_handler_c(const uint32_t *frame)
{
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  ipsr &= 0x1FF;
  char msg[128] = "sonde_fw: unhandled exception 000";
  char *p = msg + 30;
  *p++ = (char)('0' + ipsr / 100);
  *p++ = (char)('0' + ipsr / 10 % 10);
  *p++ = (char)('0' + ipsr % 10);
  static const char pc[] = " at pc 0x";
  memcpy(p, pc, sizeof pc - 1);
  p = put_hex8(p + sizeof pc - 1, frame[6]);
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__)
  if (ipsr >= 3 && ipsr <= 6) {
    static const char cfsr[] = ", CFSR 0x", hfsr[] = ", HFSR 0x", bfar[] = ", BFAR 0x";
    memcpy(p, cfsr, sizeof cfsr - 1);
    p = put_hex8(p + sizeof cfsr - 1, SCB_CFSR);
    memcpy(p, hfsr, sizeof hfsr - 1);
    p = put_hex8(p + sizeof hfsr - 1, SCB_HFSR);
    memcpy(p, bfar, sizeof bfar - 1);
    p = put_hex8(p + sizeof bfar - 1, SCB_BFAR);
  }
#endif
  *p++ = '\n';
  *p = 0;
  sh_write0(msg);
  sonde_exit((int)(128 + ipsr));
}

/* The frame is on the stack EXC_RETURN bit 2 names (ARMv6-M-compatible code). */
__attribute__((naked)) void Default_Handler(void)
{
  __asm__ volatile("movs r0, #4\n\t"
                   "mov r1, lr\n\t"
                   "tst r0, r1\n\t"
                   "beq 1f\n\t"
                   "mrs r0, psp\n\t"
                   "b 2f\n"
                   "1:\tmrs r0, msp\n"
                   "2:\tldr r1, =default_handler_c\n\t"
                   "bx r1\n\t"
                   ".ltorg");
}
