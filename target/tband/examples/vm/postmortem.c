/* Post-mortem demo for Sonde's virtual Cortex-M: the first boot traces into
 * the post-mortem ring (in .noinit), then executes an undefined instruction;
 * the HardFault handler traces the fault and resets the system
 * (AIRCR.SYSRESETREQ). SRAM survives the reset, so the second boot finds the
 * ring, traces pm_boot and dumps the ring (oldest complete event first) over
 * the UART. The host must see the newest events before the fault, the fault
 * itself, then the reboot.
 *   sonde run --machine cm3 --uart pm.bin build/firmware/tband_vm_postmortem.elf
 *   sonde tband dump pm.bin */
#include "sonde_fw.h"
#include "tband.h"

#define EVENTS 100

void HardFault_Handler(void)
{
  tband_evtmarker(2, "hardfault");
  SCB_AIRCR = 0x05FA0004u; /* VECTKEY | SYSRESETREQ */
  for (;;) {
  }
}

static uint8_t dump[tband_configBACKEND_POST_MORTEM_BUF_SIZE];

int main(void)
{
  tband_vm_init();
  tband_init();
  if (tband_postmortem_boot_cnt() == 0) {
    tband_evtmarker_name(1, "phase");
    for (int i = 0; i < EVENTS; i++)
      tband_valmarker(1, i);
    tband_evtmarker(1, "crash now");
    __asm__ volatile("udf #0"); /* UsageFault, escalated to HardFault */
  }
  tband_valmarker(2, (int64_t)tband_postmortem_boot_cnt());
  size_t n = tband_postmortem_read(0, dump, sizeof dump);
  for (size_t i = 0; i < n; i++)
    TBAND_CM_STREAM_UART_PUTC(dump[i]);
  sonde_exit(0);
}
