/* Exception test (ARMv8-M Mainline): a stack limit violation during exception
 * entry. Thread mode runs on the PSP with PSPLIM 16 bytes below it, so the
 * 32-byte frame of an SVC would cross the limit: nothing is pushed, PSP
 * becomes PSPLIM, and a UsageFault with CFSR.STKOF is taken (its priority is
 * above SVCall's, so it arrives late and runs first). The frame can not be
 * returned to, so the UsageFault handler checks and exits. ARMv8-M ARM
 * (DDI 0553) "Stack limit checks". */
#include "exc_common.h"

#define PATTERN 0xA5A5A5A5u
static uint32_t pstack[64] __attribute__((aligned(8)));

void UsageFault_Handler(void)
{
  uint32_t psp, psplim;
  __asm__ volatile("mrs %0, psp\n\tmrs %1, psplim" : "=r"(psp), "=r"(psplim));
  out_kv("cfsr", SCB_CFSR);
  check(SCB_CFSR == (1u << 20), "CFSR is STKOF alone");
  check(psp == psplim, "PSP set to PSPLIM");
  check(psp == (uint32_t)&pstack[60], "PSPLIM value");
  int untouched = 1;
  for (unsigned i = 0; i < 64; i++)
    untouched &= pstack[i] == PATTERN;
  check(untouched, "nothing pushed below or above the limit");
  check((SCB_SHCSR & (1u << 15)) != 0, "SVCall pending behind the UsageFault");
  sonde_exit(exc_failures);
}

void SVC_Handler(void)
{
  check(0, "SVC taken before the UsageFault");
  sonde_exit(1);
}

int main(void)
{
  for (unsigned i = 0; i < 64; i++)
    pstack[i] = PATTERN;
  SCB_SHCSR |= 1u << 18;   /* UsageFault enabled */
  SHPR_BYTE(6) = 0x00;     /* UsageFault above */
  SHPR_BYTE(11) = 0x80;    /* SVCall */
  uint32_t top = (uint32_t)&pstack[64];
  uint32_t limit = (uint32_t)&pstack[60]; /* 16 bytes below the top */
  __asm__ volatile("msr psplim, %0\n\tmsr psp, %1\n\tmovs r0, #2\n\tmsr control, r0\n\tisb\n\t"
                   "svc #0\n\tb ."
                   :
                   : "r"(limit), "r"(top)
                   : "r0", "memory");
  return 1;
}
