/* Power model of the virtual Cortex-M (power.c, docs/vm.md "Power model").
 * Event-driven: the state (running or asleep, which peripherals are active)
 * changes only at a few places (the sleep loop in exception.c, a UART byte),
 * and the charge is integrated between changes from the cycle count, so the
 * instruction fast path never touches it. Currents are in microamps; charge in
 * microamp-cycles (exact integers). */
#ifndef SONDE_VM_POWER_H
#define SONDE_VM_POWER_H

#include <stdbool.h>
#include <stdint.h>

#include "sonde/vm.h"

#define VM_POWER_MAX_PERIPH 8

struct vm_power {
  uint32_t run_ua, sleep_ua;
  uint32_t periph_ua[VM_POWER_MAX_PERIPH];      /* extra current while active */
  uint64_t active_until[VM_POWER_MAX_PERIPH];   /* active in [.., until); 0 = idle */
  bool sleeping;
  uint32_t current_ua;  /* current since `last` */
  uint64_t last;        /* cycle integrated up to */
  uint64_t charge;      /* microamp-cycles in [0, last) */
  sonde_vm_power_fn fn;
  void *ctx;
};

struct sonde_vm;
void vm_power_init(struct sonde_vm *vm);
/* Integrate up to cycle `t` (ends of peripheral activity on the way). */
void vm_power_advance(struct vm_power *p, uint64_t t);
/* The core sleeps during cycles [from, to). */
void vm_power_sleep(struct sonde_vm *vm, uint64_t from, uint64_t to);
/* Peripheral `index` (vm->periph[]) is active during cycles [from, to)
 * (to = UINT64_MAX: until vm_power_idle). */
void vm_power_active(struct sonde_vm *vm, unsigned index, uint64_t from, uint64_t to);
/* Peripheral `index` stops being active at cycle `at`. */
void vm_power_idle(struct sonde_vm *vm, unsigned index, uint64_t at);

#endif
