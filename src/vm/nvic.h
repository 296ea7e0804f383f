/* Internal interface of the NVIC and exception-priority logic (nvic.c), used
 * by exception.c and scb.c. ARMv7-M ARM B1.5.4, B3.4. */
#ifndef SONDE_VM_NVIC_H
#define SONDE_VM_NVIC_H

#include <stdbool.h>
#include <stdint.h>

struct sonde_vm;

bool vm_nvic_is_pending(const struct sonde_vm *vm, unsigned exc);
bool vm_nvic_is_active(const struct sonde_vm *vm, unsigned exc);
bool vm_nvic_is_enabled(const struct sonde_vm *vm, unsigned exc);
void vm_nvic_set_pending(struct sonde_vm *vm, unsigned exc, bool pending);
void vm_nvic_set_active(struct sonde_vm *vm, unsigned exc, bool active);
unsigned vm_nvic_num_exc(const struct sonde_vm *vm);
int vm_nvic_priority(const struct sonde_vm *vm, unsigned exc);
int vm_nvic_group_priority(const struct sonde_vm *vm, int prio);
uint8_t vm_nvic_prio_mask(const struct sonde_vm *vm);
int vm_nvic_execution_priority(const struct sonde_vm *vm, bool ignore_primask);
/* Cached (sys.h, hp_valid): hence the non-const vm. */
unsigned vm_nvic_highest_pending(struct sonde_vm *vm, int *prio);
unsigned vm_nvic_takeable(struct sonde_vm *vm);
unsigned vm_nvic_takeable_masked(const struct sonde_vm *vm);
/* Exception entry: `exc` stops pending and becomes active. */
void vm_nvic_activate(struct sonde_vm *vm, unsigned exc);
/* Exception return: `exc` is no longer active; an IRQ whose level-sensitive
 * line is still high pends again. */
void vm_nvic_deactivate(struct sonde_vm *vm, unsigned exc);
/* NVIC registers at 0xE000E000 + off; false if `off` is not an NVIC register. */
bool vm_nvic_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value);
bool vm_nvic_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask);

/* exception.c: recompute the VM_ATTN_EXCEPTION request after any change to
 * pending/enabled/priority/mask state. */
void vm_exc_update(struct sonde_vm *vm);

/* scb.c / systick.c register blocks. */
bool vm_scb_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value);
bool vm_scb_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask);
bool vm_systick_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value, bool debug);
bool vm_systick_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask);
void vm_systick_reset(struct sonde_vm *vm);
int vm_systick_init(struct sonde_vm *vm);

#endif
