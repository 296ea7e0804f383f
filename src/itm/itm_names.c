/* Names for ITM packet types (the `type` values of `sonde itm --format json`,
 * docs/formats.md) and Cortex-M exception numbers (ARMv7-M ARM B1.5.2,
 * "Exception number definition"; ARMv8-M adds SecureFault = 7). */
#include <stdio.h>

#include "sonde/itm.h"

const char *sonde_itm_type_name(unsigned type)
{
  static const char *const names[SONDE_ITM_TYPE_COUNT] = {
      [SONDE_ITM_SYNC] = "sync",         [SONDE_ITM_OVERFLOW] = "overflow",
      [SONDE_ITM_SW] = "sw",             [SONDE_ITM_LTS] = "lts",
      [SONDE_ITM_GTS] = "gts",           [SONDE_ITM_PAGE] = "page",
      [SONDE_ITM_EXT] = "ext",           [SONDE_ITM_PC] = "pc",
      [SONDE_ITM_PC_SLEEP] = "pc_sleep", [SONDE_ITM_EXC] = "exc",
      [SONDE_ITM_EVCNT] = "evcnt",       [SONDE_ITM_DT_PC] = "dt_pc",
      [SONDE_ITM_DT_MATCH] = "dt_match", [SONDE_ITM_DT_ADDR] = "dt_addr",
      [SONDE_ITM_DT_DATA] = "dt_data",   [SONDE_ITM_HW] = "hw",
      [SONDE_ITM_SKIP] = "skip",
  };
  if (type >= SONDE_ITM_TYPE_COUNT || !names[type])
    return "?";
  return names[type];
}

const char *sonde_itm_exception_name(unsigned number, char *buf, size_t cap)
{
  static const char *const fixed[16] = {
      "Thread", "Reset",    "NMI",          "HardFault",    "MemManage", "BusFault",
      "UsageFault", "SecureFault", NULL, NULL, NULL, "SVCall", "DebugMonitor", NULL,
      "PendSV", "SysTick",
  };
  if (number < 16) {
    if (fixed[number])
      return fixed[number];
    if (buf && cap)
      snprintf(buf, cap, "Reserved%u", number);
    return buf ? buf : "Reserved";
  }
  if (buf && cap)
    snprintf(buf, cap, "IRQ%u", number - 16);
  return buf ? buf : "IRQ";
}
