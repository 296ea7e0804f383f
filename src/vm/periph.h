/* The demo peripherals of the virtual Cortex-M (periph_*.c): a UART, a GPIO
 * (LED) port, a timer with an interrupt and a delay peripheral. Register maps
 * in firmware/include/vm_periph.h and docs/vm.md ("Peripherals"). */
#ifndef SONDE_VM_PERIPH_H
#define SONDE_VM_PERIPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sonde_vm;
struct vm_machine_periph;

/* Every peripheral instance starts with this header (vm->periph[i]). */
struct vm_periph {
  int type; /* enum vm_periph_type */
  void (*reset)(struct sonde_vm *vm, struct vm_periph *p);
  /* Optional: the host says which run of a series this is (sonde_vm_set_run_index). */
  void (*set_run)(struct vm_periph *p, uint32_t run);
};

/* Create the peripheral `cfg` describes, map it on the bus, register it in
 * vm->periph[] (freed by sonde_vm_free with free()). */
int vm_periph_create(struct sonde_vm *vm, const struct vm_machine_periph *cfg);
void vm_periph_reset_all(struct sonde_vm *vm);

int vm_uart_new(struct sonde_vm *vm, const struct vm_machine_periph *cfg, struct vm_periph **out);
int vm_gpio_new(struct sonde_vm *vm, const struct vm_machine_periph *cfg, struct vm_periph **out);
int vm_timer_new(struct sonde_vm *vm, const struct vm_machine_periph *cfg, struct vm_periph **out);
int vm_delay_new(struct sonde_vm *vm, const struct vm_machine_periph *cfg, struct vm_periph **out);

/* GPIO output changes, in order, for tests and demos. */
struct vm_gpio_change {
  uint64_t cycle;
  uint32_t value; /* OUT after the change */
};
/* The first GPIO's recorded changes (at most VM_GPIO_LOG_MAX; *dropped counts
 * the rest). Returns the number in *out, or 0 if there is no GPIO. */
#define VM_GPIO_LOG_MAX 4096
size_t vm_gpio_changes(const struct sonde_vm *vm, const struct vm_gpio_change **out,
                       uint64_t *dropped);

#endif
