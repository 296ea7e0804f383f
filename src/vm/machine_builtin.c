/* The built-in machines, written in the machine text format (docs/vm.md) so
 * that `sonde` can print them as examples and they go through the same
 * parser as user files. The demo peripherals sit at the same addresses on
 * every machine (firmware/include/vm_periph.h), in a range no built-in uses. */
#include <string.h>

#include "machine.h"

#define DEMO_PERIPHERALS                    \
  "peripheral uart  0x400F0000 irq=0\n"     \
  "peripheral gpio  0x400F1000\n"           \
  "peripheral timer 0x400F2000 irq=1\n"     \
  "peripheral delay 0x400F3000 irq=2\n"

static const struct {
  const char *name;
  const char *text;
} builtins[] = {
  {"cm3",
   "# Generic Cortex-M3 (r2p1) microcontroller.\n"
   "machine cm3\n"
   "core m3\n"
   "clock 48MHz\n"
   "nvic irqs=64 prio-bits=3\n"
   "memory flash 0x00000000 512K access=rx\n"
   "memory sram  0x20000000 128K access=rwx retain\n"
   DEMO_PERIPHERALS
   "swo-baud 2000000\n"
   "# Illustrative currents (assumed, typical of a 48 MHz M3 MCU at 3.3 V).\n"
   "power run=5000 sleep=1200 uart=150 timer=100 voltage=3300\n"},
  {"cc2650",
   "# TI CC2650 (SimpleLink CC26xx): Cortex-M3 at 48 MHz, timed by the\n"
   "# memory-system model (memsys lines below). The TI peripherals are not\n"
   "# modelled; the demo peripherals are.\n"
   "machine cc2650\n"
   "core m3\n"
   "clock 48MHz\n"
   "nvic irqs=34 prio-bits=3\n"
   "memory flash 0x00000000 128K access=rx\n"
   "memory gpram 0x11000000 8K access=rwx retain\n"
   "memory sram  0x20000000 20K access=rwx retain\n"
   DEMO_PERIPHERALS
   "swo-baud 4000000\n"
   "# Memory-system timing (docs/vm.md): flash with 2 wait states behind the\n"
   "# VIMS's 64-bit line buffer; the VIMS cache (8 KB, 4-way, 64-bit lines,\n"
   "# a tag-lookup cycle unless the next line was prefetched), in cache mode\n"
   "# after reset, switched by VIMS_CTL; one port for fetch and flash data.\n"
   "memsys flash 0x00000000 128K wait=2 line=8\n"
   "memsys cache ctl=0x40034004 size=8K ways=4 line=8 tag=1 prefetch=1 mode=1\n"
   "memsys fetch depth=3\n"
   "memsys write-buffer 1\n"
   "memsys sram read=1 write=1\n"
   "# Data-phase cycles of the slow regions (measured on a CC2650's loads,\n"
   "# docs/vm.md): RF core registers, PRCM, the AON and AUX domains behind\n"
   "# their bridge, the flash configuration areas; other peripherals 2.\n"
   "# Writes are posted (the bridges buffer them).\n"
   "memsys latency 0x21000000 0x10000 read=2 write=6\n"
   "memsys latency 0x40040000 0x10000 read=4 write=2\n"
   "memsys latency 0x40080000 0x10000 read=12 write=2\n"
   "# AON_RTC:SUBSEC reads the value latched by the read of SEC (SWCU117 16.4).\n"
   "memsys latency 0x4009200C 4 read=1 write=2\n"
   "memsys latency 0x40090000 0x30000 read=12 write=2\n"
   "memsys latency 0x400C0000 0x40000 read=20 write=2\n"
   "memsys latency 0x40000000 0x100000 read=2 write=2\n"
   "memsys latency 0x50000000 0x10000 read=9 write=2\n"
   "# Illustrative currents from the CC2650 datasheet (SWRS158, 3.0 V): active\n"
   "# 61 uA/MHz + 1.45 mA = 4378 uA at 48 MHz; idle (CPU off) 550 uA; UART\n"
   "# ~167 uA and GP timer ~113 uA extra (peripheral current table).\n"
   "power run=4378 sleep=550 uart=167 timer=113 voltage=3000\n"},
  {"cm4f",
   "# Generic Cortex-M4F (r0p1) with FPv4-SP.\n"
   "machine cm4f\n"
   "core m4f\n"
   "clock 64MHz\n"
   "nvic irqs=64 prio-bits=4\n"
   "memory flash 0x00000000 1M access=rx\n"
   "memory sram  0x20000000 256K access=rwx retain\n"
   DEMO_PERIPHERALS
   "swo-baud 2000000\n"
   "# Illustrative currents (assumed: ~100 uA/MHz at 64 MHz, 3.3 V).\n"
   "power run=6400 sleep=1500 uart=150 timer=100 voltage=3300\n"},
  {"cm33",
   "# Generic Cortex-M33 (no TrustZone) with DSP, FPv5-SP and an MTB.\n"
   "machine cm33\n"
   "core m33\n"
   "clock 64MHz\n"
   "nvic irqs=64 prio-bits=3\n"
   "memory flash 0x00000000 1M access=rx\n"
   "memory sram  0x20000000 256K access=rwx retain\n"
   DEMO_PERIPHERALS
   "swo-baud 2000000\n"
   "mtb 0x20040000 4K\n"
   "# Illustrative currents (assumed: ~50 uA/MHz at 64 MHz, 1.8 V).\n"
   "power run=3200 sleep=800 uart=100 timer=60 voltage=1800\n"},
  {"cm0plus",
   "# Generic Cortex-M0+ with an MTB and, as on Kinetis KL, its MTBDWT (TSTART/TSTOP).\n"
   "machine cm0plus\n"
   "core m0plus\n"
   "clock 48MHz\n"
   "nvic irqs=32 prio-bits=2\n"
   "memory flash 0x00000000 256K access=rx\n"
   "memory sram  0x20000000 32K access=rwx retain\n"
   DEMO_PERIPHERALS
   "mtb 0x20008000 4K mtbdwt=0xF0001000\n"
   "# Illustrative currents (assumed: ~40 uA/MHz at 48 MHz, 3.3 V).\n"
   "power run=1920 sleep=500 uart=100 timer=60 voltage=3300\n"},
};

const char *vm_machine_builtin_text(const char *name)
{
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (strcmp(builtins[i].name, name) == 0)
      return builtins[i].text;
  return NULL;
}
