/* Register map of the demo peripherals of Sonde's virtual Cortex-M, for
 * firmware. Every built-in machine (cm3, cc2650, cm4f, cm33, cm0plus) maps
 * them at the addresses below; a machine file may place them elsewhere
 * (docs/vm.md, "Machines" and "Peripherals"). All registers are 32 bits;
 * "cycles" are core clock cycles.
 *
 *   UART0  0x400F0000  IRQ 0   TX to the host (stream UART0), optional RX
 *   GPIO   0x400F1000  -       LED/output port; every change is recorded
 *   TIMER0 0x400F2000  IRQ 1   up-counter, match interrupt every LOAD cycles
 *   DELAY  0x400F3000  IRQ 2   READY goes to 1 DELAY cycles after START
 */
#ifndef SONDE_VM_PERIPH_H_TARGET
#define SONDE_VM_PERIPH_H_TARGET

#include <stdint.h>

#define VM_PERIPH_REG(a) (*(volatile uint32_t *)(a))

/* ---- UART ---------------------------------------------------------------- */
#define VM_UART0_BASE 0x400F0000u
#define VM_UART0_IRQ 0
#define VM_UART_DATA(b) VM_PERIPH_REG((b) + 0x00u)   /* W: send byte; R: next RX byte (0: none) */
#define VM_UART_STATUS(b) VM_PERIPH_REG((b) + 0x04u) /* R; OVR is write-1-to-clear */
#define VM_UART_CTRL(b) VM_PERIPH_REG((b) + 0x08u)   /* RW: interrupt enables */
#define VM_UART_STATUS_TXE (1u << 0)  /* transmitter can take a byte */
#define VM_UART_STATUS_RXNE (1u << 1) /* a received byte is waiting */
#define VM_UART_STATUS_OVR (1u << 3)  /* a byte written while busy was dropped */
#define VM_UART_CTRL_TXEIE (1u << 0)  /* interrupt while TXE (level) */
#define VM_UART_CTRL_RXNEIE (1u << 1) /* interrupt while RXNE (level) */

/* ---- GPIO ---------------------------------------------------------------- */
#define VM_GPIO_BASE 0x400F1000u
#define VM_GPIO_OUT VM_PERIPH_REG(VM_GPIO_BASE + 0x00u)    /* RW output pins */
#define VM_GPIO_SET VM_PERIPH_REG(VM_GPIO_BASE + 0x04u)    /* W: OUT |= v */
#define VM_GPIO_CLR VM_PERIPH_REG(VM_GPIO_BASE + 0x08u)    /* W: OUT &= ~v */
#define VM_GPIO_TOGGLE VM_PERIPH_REG(VM_GPIO_BASE + 0x0Cu) /* W: OUT ^= v */
#define VM_GPIO_IN VM_PERIPH_REG(VM_GPIO_BASE + 0x10u)     /* R: input pins (0) */

/* ---- TIMER --------------------------------------------------------------- */
#define VM_TIMER0_BASE 0x400F2000u
#define VM_TIMER0_IRQ 1
#define VM_TIMER_CTRL VM_PERIPH_REG(VM_TIMER0_BASE + 0x00u)   /* RW */
#define VM_TIMER_LOAD VM_PERIPH_REG(VM_TIMER0_BASE + 0x04u)   /* RW: period in cycles */
#define VM_TIMER_COUNT VM_PERIPH_REG(VM_TIMER0_BASE + 0x08u)  /* R: cycles into the period */
#define VM_TIMER_STATUS VM_PERIPH_REG(VM_TIMER0_BASE + 0x0Cu) /* R/W1C */
#define VM_TIMER_CTRL_EN (1u << 0)
#define VM_TIMER_CTRL_IE (1u << 1)       /* interrupt while MATCH (level) */
#define VM_TIMER_CTRL_PERIODIC (1u << 2) /* restart after a match (else one-shot) */
#define VM_TIMER_STATUS_MATCH (1u << 0)

/* ---- DELAY --------------------------------------------------------------- */
#define VM_DELAY_BASE 0x400F3000u
#define VM_DELAY_IRQ 2
#define VM_DELAY_CYCLES VM_PERIPH_REG(VM_DELAY_BASE + 0x00u) /* RW: operation length */
#define VM_DELAY_START VM_PERIPH_REG(VM_DELAY_BASE + 0x04u)  /* W: start an operation */
#define VM_DELAY_STATUS VM_PERIPH_REG(VM_DELAY_BASE + 0x08u) /* R: bit0 READY */
#define VM_DELAY_CTRL VM_PERIPH_REG(VM_DELAY_BASE + 0x0Cu)   /* RW: bit0 IE (pulse on done) */
#define VM_DELAY_DONE VM_PERIPH_REG(VM_DELAY_BASE + 0x10u)   /* R: completed operations */
#define VM_DELAY_STATUS_READY (1u << 0)

#endif
