/* Exception test: AIRCR.SYSRESETREQ resets the system but SRAM keeps its
 * contents, so a `.noinit` boot counter counts the boots while .bss is
 * zeroed again by the startup code each time. ARMv7-M ARM B3.2.6. */
#include "exc_common.h"

static SONDE_NOINIT uint32_t magic, boots;
static uint32_t bss_word;

int main(void)
{
  if (magic != 0xC0FFEE00u) {
    magic = 0xC0FFEE00u;
    boots = 0;
  }
  boots++;
  check(bss_word == 0, ".bss zero after reset");
  bss_word = 1;
  out_kv("boot", boots);
  if (boots < 3) {
    SCB_AIRCR = 0x05FA0004u; /* SYSRESETREQ */
    dsb_isb();
    for (;;)
      ;
  }
  return exc_failures;
}
