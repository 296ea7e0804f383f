/* Machine descriptions: the parsed form of the text format in docs/vm.md
 * ("Machines") and of the built-ins (machine.c, machine_builtin.c). Read by
 * vm.c when it builds a VM. */
#ifndef SONDE_VM_MACHINE_H
#define SONDE_VM_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "sonde/vm.h"
#include "tm.h"

#define VM_MACHINE_MAX_MEM 12
#define VM_MACHINE_MAX_PERIPH 8

enum vm_periph_type {
  VM_PERIPH_UART,
  VM_PERIPH_GPIO,
  VM_PERIPH_TIMER,
  VM_PERIPH_DELAY,
};

struct vm_machine_mem {
  char name[24];
  uint32_t base, size;
  unsigned wait_read, wait_write;
  uint32_t flags; /* VM_REGION_* */
};

struct vm_machine_periph {
  enum vm_periph_type type;
  uint32_t base;
  int irq;          /* -1: none */
  uint32_t baud;    /* uart: 0 = transmit instantly */
  char rx[128];     /* uart: bytes the RX register returns, then nothing */
  unsigned rx_len;
  uint32_t jitter;  /* delay: each operation takes up to this many cycles more */
  uint64_t seed;    /* delay: seed of the jitter (with the run index, periph_delay.c) */
};

struct sonde_machine {
  char name[64];
  enum sonde_vm_core core;
  uint64_t clock_hz;
  unsigned num_irqs, prio_bits;
  struct vm_machine_mem mem[VM_MACHINE_MAX_MEM];
  unsigned nmem;
  struct vm_machine_periph periph[VM_MACHINE_MAX_PERIPH];
  unsigned nperiph;
  /* Reserved for the debug blocks and power model (parsed, kept, not used yet). */
  uint32_t swo_baud;
  uint32_t reset_vtor; /* `vtor` (ARMv8-M: IMPLEMENTATION DEFINED, e.g. a secure code alias) */
  bool has_mtb;
  uint32_t mtb_base, mtb_size;
  uint32_t mtb_regs; /* MTB register block (`regs=`); 0: the core's default (dbg_mtb.c) */
  uint32_t mtbdwt_regs; /* M0+ MTBDWT block (`mtbdwt=`); 0: none (dbg_mtbdwt.c) */
  uint32_t power_run_ua, power_sleep_ua; /* microamps (power.c) */
  uint32_t power_periph_ua[4];           /* per enum vm_periph_type, while active */
  uint32_t power_mv;                     /* supply voltage, millivolts */
  /* Debug port (`debug-port`, jtag_dp.c): the TAP's IDCODE and the DP
   * architecture version (0: DPv0, no DPIDR; 1: DPv1, DPIDR at 0x0). 0 IDCODE:
   * the core's default. */
  uint32_t dp_idcode;
  uint8_t dp_version;
  /* `memsys` statements (machine_memsys.c): the timing model's memory
   * system; tm.on false: none declared, the executors' table timing. */
  struct vm_tm_cfg tm;
};

/* Parse one `memsys` line (t[0] = "memsys"); 0, or -1 with the message in err. */
int vm_machine_parse_memsys(struct sonde_machine *m, int n, char **t, char *err, size_t cap);

/* Text of the built-in machine `name`, or NULL (machine_builtin.c). */
const char *vm_machine_builtin_text(const char *name);

#endif
