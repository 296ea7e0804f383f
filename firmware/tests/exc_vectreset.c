/* Exception test: AIRCR.VECTRESET (ARMv7-M, B3.2.6) is a local reset of the
 * processor: the core, NVIC, SCB and SysTick reset, while the peripherals and
 * all memory keep their state (here the GPIO output port and a .bss word the
 * startup code then zeroes again). SYSRESETREQ afterwards resets the GPIO
 * port too. Boots: 1 sets things up and requests VECTRESET, 2 checks and
 * requests SYSRESETREQ, 3 checks the system reset. */
#include "exc_common.h"
#include "vm_periph.h"

static SONDE_NOINIT uint32_t magic, boots;

int main(void)
{
  if (magic != 0xC0FFEE01u) {
    magic = 0xC0FFEE01u;
    boots = 0;
  }
  boots++;
  out_kv("boot", boots);
  if (boots == 1) {
    VM_GPIO_OUT = 0x5Au;
    NVIC_ISER(0) = 1u << 1;
    SYST_RVR = 999u;
    SYST_CSR = 1u; /* enabled, no interrupt */
    SCB_AIRCR = 0x05FA0001u; /* VECTRESET */
    dsb_isb();
    for (;;)
      ;
  }
  if (boots == 2) {
    check(VM_GPIO_OUT == 0x5Au, "GPIO kept across VECTRESET");
    check(NVIC_ISER(0) == 0, "NVIC reset by VECTRESET");
    check((SYST_CSR & 1u) == 0 && SYST_RVR == 0, "SysTick reset by VECTRESET");
    SCB_AIRCR = 0x05FA0004u; /* SYSRESETREQ */
    dsb_isb();
    for (;;)
      ;
  }
  check(VM_GPIO_OUT == 0, "GPIO reset by SYSRESETREQ");
  return exc_failures;
}
