/* tband_port.h for Sonde's virtual Cortex-M (docs/vm.md): the Cortex-M port
 * with the VM's demo peripherals. By default the cycle source is TIMER0 run
 * as a free-running 32-bit cycle counter (tband_vm_init starts it) and
 * streaming goes to UART0 (`sonde run --uart FILE` records it);
 * TBAND_VM_USE_DWT selects DWT_CYCCNT and TBAND_VM_STREAM_ITM ITM port 0
 * (`sonde run --swo FILE`), as on silicon (call tband_cm_init() then).
 *   TBAND_CM_CPU_HZ   the machine's clock (cm3: 48 MHz, cm4f: 64 MHz), required */
#ifndef TBAND_VM_PORT_H
#define TBAND_VM_PORT_H

#include <stdint.h>

#define TBAND_VM_TIMER0_BASE 0x400F2000u
#define TBAND_VM_UART0_BASE 0x400F0000u
#define TBAND_VM_REG(a) (*(volatile uint32_t *)(a))

#ifndef TBAND_VM_USE_DWT
#define TBAND_CM_CYCLES() TBAND_VM_REG(TBAND_VM_TIMER0_BASE + 0x08u)
#endif
#ifndef TBAND_VM_STREAM_ITM
#define TBAND_CM_STREAM_UART_PUTC(b)                                     \
  do {                                                                   \
    while (!(TBAND_VM_REG(TBAND_VM_UART0_BASE + 0x04u) & 1u)) {          \
    }                                                                    \
    TBAND_VM_REG(TBAND_VM_UART0_BASE + 0x00u) = (b);                     \
  } while (0)
#endif

/* Start the cycle source and the port; call before tband_init(). */
static inline void tband_vm_init(void)
{
#ifndef TBAND_VM_USE_DWT
  TBAND_VM_REG(TBAND_VM_TIMER0_BASE + 0x04u) = 0xFFFFFFFFu; /* LOAD */
  TBAND_VM_REG(TBAND_VM_TIMER0_BASE + 0x00u) = 1u | 4u;      /* EN | PERIODIC */
#endif
}

#include "../cortex-m/tband_port.h"

#endif
