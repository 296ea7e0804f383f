/* Shared by the CPU tests (test_cpu*.c): a hand-built VM with a code window
 * and a RAM window at the addresses unicorn_ref.h uses, so the same code and
 * data can run on both. */
#ifndef SONDE_TEST_CPU_UTIL_H
#define SONDE_TEST_CPU_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vm/nvic.h"
#include "vm/vm_internal.h"

#define TC_CODE_BASE 0x00000000u
#define TC_CODE_SIZE 0x00100000u
#define TC_RAM_BASE 0x20000000u
#define TC_RAM_SIZE 0x00100000u

/* A VM with the given core's feature gates; code is executable and writable
 * (so tests can rewrite it), RAM is plain. event_cycle = UINT64_MAX so
 * vm_cpu_step never services the system side unless attention is raised. */
static inline struct sonde_vm *tc_vm_new(enum sonde_vm_core core)
{
  struct sonde_vm *vm = calloc(1, sizeof *vm);
  if (!vm)
    return NULL;
  vm_bus_init(&vm->bus);
  if (vm_bus_add_region(&vm->bus, "code", TC_CODE_BASE, TC_CODE_SIZE, 0, 0, VM_REGION_EXEC) ||
      vm_bus_add_region(&vm->bus, "ram", TC_RAM_BASE, TC_RAM_SIZE, 0, 0, VM_REGION_EXEC)) {
    vm_bus_free(&vm->bus);
    free(vm);
    return NULL;
  }
  vm->core = core;
  vm_features_init(vm); /* the gates and what the exception path derives from them */
  vm->sys.prio_bits = 3;
  vm->sys.num_irqs = 32;
  vm_nvic_prigroup_changed(vm); /* the group-priority mask a reset sets (nvic.h) */
  vm->event_cycle = UINT64_MAX;
  vm->max_cycles = UINT64_MAX;
  vm_cpu_reset(vm);
  vm->cpu.epsr = 1u << 24;
  return vm;
}

static inline void tc_vm_free(struct sonde_vm *vm)
{
  if (!vm)
    return;
  vm_bus_free(&vm->bus);
  free(vm);
}

/* Write halfwords of code at addr (drops cached decodes). */
static inline void tc_code(struct sonde_vm *vm, uint32_t addr, const uint16_t *hw, size_t n)
{
  vm_bus_load(&vm->bus, addr, hw, (uint32_t)(n * 2), NULL);
  vm_cpu_code_written(vm, addr, (unsigned)(n * 2));
}

/* Execute one instruction; true if it retired (did not fault). */
static inline bool tc_step(struct sonde_vm *vm)
{
  uint64_t n = vm->cpu.instret;
  vm_cpu_step(vm);
  return vm->cpu.instret == n + 1;
}

static inline uint8_t *tc_ram(struct sonde_vm *vm)
{
  return vm->bus.region[1].mem;
}

#endif
