/* Demo UART: a transmit data register whose bytes go to the VM's output
 * (stream SONDE_VM_STREAM_UART0 + index), an optional receive buffer from the
 * machine description, and a level-sensitive interrupt for TX-empty and
 * RX-not-empty. With baud=0 a byte leaves at once; with a baud rate the
 * transmitter is busy for 10 bit times (start, 8 data, stop) per byte.
 *
 *   0x00 DATA    W: transmit byte; R: next received byte (0 when none)
 *   0x04 STATUS  R: bit0 TXE (can accept a byte), bit1 RXNE, bit3 OVR (W1C:
 *                a byte written while busy was dropped)
 *   0x08 CTRL    RW: bit0 TXEIE, bit1 RXNEIE (interrupt enables)
 */
#include <stdlib.h>

#include "machine.h"
#include "periph.h"
#include "vm_internal.h"

struct uart {
  struct vm_periph hdr;
  int irq;
  int stream;
  uint32_t ctrl, status_ovr;
  uint64_t busy_until; /* cycle at which the transmitter is free again */
  uint64_t byte_cycles;
  int timer;
  unsigned index; /* in vm->periph[], for the power model */
  const char *rx;
  unsigned rx_len, rx_pos;
};

static bool txe(const struct sonde_vm *vm, const struct uart *u)
{
  return vm->cpu.cycles >= u->busy_until;
}

static void update_irq(struct sonde_vm *vm, struct uart *u)
{
  if (u->irq < 0)
    return;
  bool level = ((u->ctrl & 1) && txe(vm, u)) || ((u->ctrl & 2) && u->rx_pos < u->rx_len);
  vm_irq_set_level(vm, (unsigned)u->irq, level);
}

static void tx_done(struct sonde_vm *vm, void *ctx)
{
  struct uart *u = ctx;
  if (u->irq >= 0)
    vm_irq_set_level(vm, (unsigned)u->irq,
                     (u->ctrl & 1) || ((u->ctrl & 2) && u->rx_pos < u->rx_len));
}

static int uart_read(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size,
                     uint32_t *value, bool debug)
{
  struct uart *u = ctx;
  (void)size;
  switch (off & ~3u) {
  case 0x00:
    if (u->rx_pos < u->rx_len) {
      *value = (uint8_t)u->rx[u->rx_pos];
      if (!debug) {
        u->rx_pos++;
        update_irq(vm, u);
      }
    } else {
      *value = 0;
    }
    break;
  case 0x04:
    *value = (txe(vm, u) ? 1u : 0) | (u->rx_pos < u->rx_len ? 2u : 0) | u->status_ovr;
    break;
  case 0x08: *value = u->ctrl; break;
  default: *value = 0; break;
  }
  return VM_BUS_OK;
}

static int uart_write(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size,
                      uint32_t value, bool debug)
{
  struct uart *u = ctx;
  (void)size;
  (void)debug;
  switch (off & ~3u) {
  case 0x00: {
    if (!txe(vm, u)) {
      u->status_ovr = 8;
      break;
    }
    uint8_t b = (uint8_t)value;
    if (vm_output(vm, u->stream, &b, 1) < 0) {
      vm_request_stop(vm, SONDE_VM_STOP_ERROR);
      break;
    }
    if (u->byte_cycles) {
      u->busy_until = vm->cpu.cycles + u->byte_cycles;
      vm_sys_timer_set(vm, u->timer, u->busy_until);
      vm_power_active(vm, u->index, vm->cpu.cycles, u->busy_until); /* power.c */
    }
    update_irq(vm, u);
    break;
  }
  case 0x04:
    u->status_ovr &= ~(value & 8);
    break;
  case 0x08:
    u->ctrl = value & 3;
    update_irq(vm, u);
    break;
  default: break;
  }
  return VM_BUS_OK;
}

static const struct vm_device_ops uart_ops = {"uart", uart_read, uart_write};

static void uart_reset(struct sonde_vm *vm, struct vm_periph *p)
{
  struct uart *u = (struct uart *)p;
  u->ctrl = 0;
  u->status_ovr = 0;
  u->busy_until = 0;
  u->rx_pos = 0;
  vm_sys_timer_set(vm, u->timer, UINT64_MAX);
  vm_power_idle(vm, u->index, vm->cpu.cycles); /* power.c */
  if (u->irq >= 0)
    vm_irq_set_level(vm, (unsigned)u->irq, false);
}

int vm_uart_new(struct sonde_vm *vm, const struct vm_machine_periph *cfg, struct vm_periph **out)
{
  struct uart *u = calloc(1, sizeof *u);
  if (!u)
    return SONDE_E_NOMEM;
  *out = &u->hdr;
  u->hdr.reset = uart_reset;
  u->irq = cfg->irq;
  unsigned index = 0;
  for (unsigned i = 0; i < vm->nperiph; i++)
    if (((struct vm_periph *)vm->periph[i])->type == VM_PERIPH_UART)
      index++;
  u->stream = SONDE_VM_STREAM_UART0 + (int)index;
  uint64_t hz = sonde_machine_clock_hz(vm->machine);
  if (cfg->baud)
    u->byte_cycles = (10 * hz + cfg->baud - 1) / cfg->baud;
  u->index = vm->nperiph; /* periph_common.c appends this one next */
  u->rx = cfg->rx;
  u->rx_len = cfg->rx_len;
  u->timer = vm_sys_timer_add(vm, tx_done, u);
  if (u->timer < 0)
    return SONDE_E_LIMIT;
  return vm_bus_add_device(&vm->bus, cfg->base, 0x1000, &uart_ops, u);
}
