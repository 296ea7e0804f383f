/* Post-mortem capture on a real fault (tests/mtb/test_mtb_decode.c, docs/mtb.md):
 * the MTB traces a workload with SysTick interrupts, then culprit() loads
 * from an address where nothing answers. The BusFault escalates to
 * HardFault (ARMv6-M: HardFault directly); the handler, installed with
 * MTB_FAULT_HANDLER, writes a post-mortem bundle with target/cortexm/mtb.c
 * into .noinit and exits with code 3 (RESET_TEST: resets, and the next
 * boot finds the bundle with mtb_bundle_check() and exits with code 4). */
#include "mtb.h"
#include "sonde_fw.h"

#ifndef BAD_ADDR
#define BAD_ADDR 0xCFFFFFF0u
#endif

/* The bundle: header + 1 KiB circle + 64 bytes of stack + CRC. */
uint32_t mtb_bundle[MTB_BUNDLE_SIZE(1024, 64) / 4] SONDE_NOINIT;
volatile uint32_t ticks, sink;

void SysTick_Handler(void)
{
  ticks++;
}

#ifndef HANG_TEST
#define HANG_TEST 0 /* 1: spin after the capture, for `sonde mtb fetch` */
#endif
#ifndef RESET_TEST
#define RESET_TEST 0 /* 1: reset after the capture; the next boot finds the bundle */
#endif

void on_fault(uint32_t *frame, uint32_t exc_return)
{
  mtb_bundle_write(mtb_bundle, sizeof mtb_bundle, frame, exc_return, 64, 0);
  if (HANG_TEST) /* wait for a debugger (sonde mtb fetch) */
    for (;;)
      ;
  if (RESET_TEST) {
    SCB_AIRCR = 0x05FA0004u; /* VECTKEY | SYSRESETREQ */
    for (;;)
      ;
  }
  sonde_exit(3);
}

MTB_FAULT_HANDLER(HardFault_Handler, on_fault)

__attribute__((noinline)) static uint32_t step(uint32_t acc, uint32_t i)
{
  acc = acc * 1103515245u + 12345u;
  if (acc & 0x100)
    acc ^= acc >> 7;
  return acc + i;
}

/* The bug: reads through a pointer it was handed. */
__attribute__((noinline)) uint32_t culprit(const volatile uint32_t *p, uint32_t acc)
{
  return *p + acc;
}

#ifndef FAULT_KIND
#define FAULT_KIND 0 /* 0: bad load, 1: wild function pointer, 2: corrupted return address */
#endif

typedef void (*handler_fn)(void);
/* A table of callbacks; index 3 was never filled in. */
handler_fn callbacks[4] = {0, 0, 0, (handler_fn)0x1FFF0001u};

/* Bug 1: calls a callback it did not check. */
__attribute__((noinline)) void dispatch(unsigned i)
{
  callbacks[i]();
}

/* Bug 2: overwrites its own saved return address (as a stack buffer
 * overflow would), then returns through it. */
__attribute__((naked, noinline)) void smash(void)
{
  __asm__ volatile("push {r4, lr}\n"
                   "ldr r4, =0x1FFF0001\n"
                   "str r4, [sp, #4]\n"
                   "pop {r4, pc}\n"
                   ".ltorg\n");
}

int main(void)
{
  if (RESET_TEST && mtb_bundle_check(mtb_bundle, sizeof mtb_bundle))
    sonde_exit(4); /* a bundle from before the reset is waiting: send it, here: stop */
  SYST_RVR = 150;
  SYST_CVR = 0;
  if (mtb_enable(1024, 0, 0) != 0)
    return 2;
  SYST_CSR = 7;
  uint32_t acc = 1;
  for (uint32_t i = 0; i < 40; i++)
    acc = step(acc, i);
  if (FAULT_KIND == 1)
    dispatch(3);
  else if (FAULT_KIND == 2)
    smash();
  else
    acc = culprit((const volatile uint32_t *)BAD_ADDR, acc);
  sink = acc;
  return 0;
}
