/* Cortex-M port of the tracer (see tband_port.h beside it): 64-bit
 * timestamps from a 32-bit cycle counter, and streaming over ITM or a UART.
 * Registers: ARMv7-M ARM C1.6 (DEMCR), C1.7 (ITM), C1.8 (DWT). */
#include "tband_internal.h"

#include <stddef.h>

#if tband_configENABLE

#define TBAND_CM_DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define TBAND_CM_DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define TBAND_CM_ITM_STIM32(n) (*(volatile uint32_t *)(0xE0000000u + 4u * (n)))
#define TBAND_CM_ITM_STIM8(n) (*(volatile uint8_t *)(0xE0000000u + 4u * (n)))
#define TBAND_CM_ITM_TER (*(volatile uint32_t *)0xE0000E00u)
#define TBAND_CM_ITM_TCR (*(volatile uint32_t *)0xE0000E80u)
#define TBAND_CM_ITM_LAR (*(volatile uint32_t *)0xE0000FB0u)

struct tband_cm_ts tband_cm_ts; /* see tband_cm_timestamp() in tband_port.h */

void tband_cm_set_wraps(uint32_t wraps)
{
  tband_portENTER_CRITICAL_FROM_ANY();
  tband_cm_ts.high = wraps;
  tband_cm_ts.last = TBAND_CM_CYCLES(); /* (the counter may have been set too) */
#if TBAND_CM_WIN
  tband_cores[0].port.span = 0; /* the window was for the old count */
#endif
  tband_portEXIT_CRITICAL_FROM_ANY();
}

#if defined(TBAND_CM_FAST_ITM) && TBAND_CM_FAST_ITM
/* Streaming over ITM, the assembly builds each frame here (the snapshot's
 * write pointer and limit point at it) and writes it to the stimulus port. */
static uint8_t tband_cm_frame[24] __attribute__((aligned(4)));
#endif

void tband_cm_init(void)
{
#if defined(TBAND_CM_FAST_ITM) && TBAND_CM_FAST_ITM
  tband_cores[0].wp = tband_cm_frame;
  tband_cores[0].wlim = tband_cm_frame + 1; /* always room: the assembly path is on */
#endif
  TBAND_CM_DEMCR |= 1u << 24;    /* TRCENA: DWT and ITM on */
  TBAND_CM_DWT_CTRL |= 1u;       /* CYCCNTENA */
#if tband_configUSE_BACKEND_STREAMING && !defined(TBAND_CM_STREAM_UART_PUTC)
  TBAND_CM_ITM_LAR = 0xC5ACCE55u; /* unlock, where a lock exists */
  TBAND_CM_ITM_TCR |= 1u;         /* ITMENA */
  TBAND_CM_ITM_TER |= 1u << TBAND_CM_STREAM_ITM_PORT;
#endif
}

bool tband_cm_stream(const uint8_t *buf, size_t len)
{
#ifdef TBAND_CM_STREAM_UART_PUTC
  for (size_t i = 0; i < len; i++)
    TBAND_CM_STREAM_UART_PUTC(buf[i]);
  return false;
#else
  /* ITM off or port disabled (no debugger listening): drop, and count it */
  if (!(TBAND_CM_ITM_TCR & 1u) || !(TBAND_CM_ITM_TER & (1u << TBAND_CM_STREAM_ITM_PORT)))
    return true;
  size_t i = 0;
  /* whole words where possible: one stimulus write carries four bytes */
  for (; i + 4 <= len; i += 4) {
    while (!(TBAND_CM_ITM_STIM32(TBAND_CM_STREAM_ITM_PORT) & 1u)) {
    }
    TBAND_CM_ITM_STIM32(TBAND_CM_STREAM_ITM_PORT) =
        (uint32_t)buf[i] | (uint32_t)buf[i + 1] << 8 | (uint32_t)buf[i + 2] << 16 |
        (uint32_t)buf[i + 3] << 24;
  }
  for (; i < len; i++) {
    while (!(TBAND_CM_ITM_STIM32(TBAND_CM_STREAM_ITM_PORT) & 1u)) {
    }
    TBAND_CM_ITM_STIM8(TBAND_CM_STREAM_ITM_PORT) = buf[i];
  }
  return false;
#endif
}
/* the hand-written fast path, where it applies (TBAND_CM_FAST_ASM) */
#include "tband_cm_fast_asm.h"
#endif
