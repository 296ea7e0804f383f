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

void tband_cm_init(void)
{
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
#if defined(TBAND_CM_FAST_ASM) && TBAND_CM_FAST_ASM
/* The fast path in Thumb-2 for the events [id][ts][one-byte field]: markers
 * without a message, ISR enter and exit (docs/tband.md, "Cost per event").
 * The same frames as tband_fast_lo1 into the snapshot buffer, with the state
 * in one object (tband_cores[0]) and everything in r0-r3 and r12, so that
 * nothing is saved. Whatever it does not take (a message, an id outside
 * 1..127, interrupts already masked, the counter outside the window or a
 * timestamp below 2^28, not recording or nearly full) goes to the C version,
 * tband_c_<name>, with the arguments as they came, which decides again.
 *
 *   r0 id (the last field), r1 message; r3 &tband_cores[0]; r1, r2, r12
 *   scratch (low registers where it keeps the code short: CBZ/CBNZ reach
 *   only 126 bytes, and the fallbacks follow the common path)
 *   ts low word = spread(lo + ((cnt - base) * M >> K)) | 0x80808080
 *   frame: [n4 - 1][evt][ts low word][cached high bytes][id][0]
 *
 * Naked functions with only constant ("i") operands, as FreeRTOS's Cortex-M
 * ports write their handlers. Interrupts are masked with CPSID/CPSIE, which
 * is why callers with PRIMASK set take the C version. */
#define TBAND_CM_OFF(f) offsetof(struct tband_core_state, f)
#if TBAND_CM_WIN_K > 0
#define TBAND_CM_ASM_SHIFT ", lsr %[k]"
#else
#define TBAND_CM_ASM_SHIFT ""
#endif
#if TBAND_CM_TS_IS_CYCLES
#define TBAND_CM_ASM_MUL "" /* M = 1 */
#else
#if ((1000000000ull << TBAND_CM_NS_SHIFT) / (TBAND_CM_CPU_HZ)) < 256
#define TBAND_CM_ASM_MUL "  movs  r2, %[m]\n  mul   r12, r12, r2\n" /* 16-bit: the branches reach */
#else /* a 16-bit load where MOVW (32-bit) would put the fallbacks out of reach */
#define TBAND_CM_ASM_MUL "  ldr   r2, [r3, %[o_m]]\n  mul   r12, r12, r2\n"
#endif
#endif
#if tband_configTRACE_DROP_CNT_EVERY > 0
#define TBAND_CM_ASM_COUNT                                                             \
  "  ldr   r2, [r3, %[o_cd]]\n"                                                        \
  "  subs  r2, #1\n"                                                                   \
  "  str   r2, [r3, %[o_cd]]\n"                                                        \
  "  beq   7f\n"
#define TBAND_CM_ASM_REPORT                                                            \
  "7:push  {r3, lr}\n" /* the periodic dropped-event report, still masked */           \
  "  movs  r0, #0\n"                                                                   \
  "  bl    tband_report_due\n"                                                         \
  "  pop   {r3, lr}\n"                                                                 \
  "  cpsie i\n"                                                                        \
  "  bx    lr\n"
#else
/* none periodic, and none pending while recording (tband_trigger_snapshot) */
#define TBAND_CM_ASM_COUNT ""
#define TBAND_CM_ASM_REPORT ""
#endif

/* The body; MSG(x) is x for the functions whose r1 is a message that must be
 * empty, NOMSG(x) for the others. */
#define TBAND_CM_ASM_FAST1(MSG, NOMSG, CFN, HDR)                                                   \
  __asm__ volatile(                                                                    \
      "  cbz   r0, 9f\n" /* id 0: the last field would be a zero byte */              \
      MSG("  cbz   r1, 9f\n") /* NULL message */                                       \
      "  mrs   r2, primask\n"                                                          \
      "  orr   r2, r2, r0, lsr #7\n"                                                   \
      "  cbnz  r2, 9f\n" /* interrupts masked, or id > 127 (not one byte) */           \
      "  cpsid i\n"                                                                    \
      "  ldr   r3, =%c[hot]\n"                                                         \
      "  ldr   r12, =%c[cnt]\n" /* (a constant: valid before the first window) */     \
      /* a load between the address and the counter read: it pipelines */            \
      MSG("  ldrb  r2, [r1]\n")                                                        \
      NOMSG("  ldr   r2, [r3, %[o_base]]\n")                                           \
      "  ldr   r12, [r12]\n" /* the counter, inside the critical section */            \
      MSG("  cbnz  r2, 6f\n") /* a message */                                          \
      MSG("  ldr   r2, [r3, %[o_base]]\n")                                             \
      "  ldr   r1, [r3, %[o_lo]]\n"                                                    \
      "  subs  r12, r12, r2\n"                                                         \
      "  ldr   r2, [r3, %[o_aspan]]\n"                                                 \
      "  cmp   r12, r2\n"                                                              \
      "  bhs   5f\n" /* outside the window, or a short timestamp */                    \
      TBAND_CM_ASM_MUL                                                                 \
      "  add   r1, r1, r12" TBAND_CM_ASM_SHIFT "\n" /* ts & 0x0FFFFFFF */              \
      "  lsrs  r2, r1, #7\n" /* its septets, one per byte */                           \
      "  add   r1, r1, r2, lsl #7\n"                                                   \
      "  lsrs  r2, r1, #15\n"                                                          \
      "  add   r1, r1, r2, lsl #15\n"                                                  \
      "  lsrs  r2, r1, #23\n"                                                          \
      "  add   r1, r1, r2, lsl #23\n"                                                  \
      "  orr   r1, r1, #0x80808080\n"                                                  \
      "  ldr   r12, [r3, %[o_wp]]\n"                                                   \
      "  ldr   r2, [r3, %[o_wlim]]\n"                                                  \
      "  cmp   r12, r2\n"                                                              \
      "  bhs   8f\n" /* not recording, or nearly full */                               \
      "  ldr   r2, [r3, %[o_n4]]\n"                                                    \
      "  str   r1, [r12, #2]\n"                                                        \
      "  ldr   r1, [r3, %[o_hw]]\n"                                                    \
      "  str   r1, [r12, #6]\n"                                                        \
      "  addw  r1, r2, %[hdr]\n" /* COBS code n4 - 1, event id */                      \
      "  strh  r1, [r12]\n"                                                            \
      "  add   r12, r2\n"                                                              \
      "  strh  r0, [r12, #-2]\n" /* the id, the delimiter */                           \
      "  str   r12, [r3, %[o_wp]]\n"                                                   \
      TBAND_CM_ASM_COUNT                                                               \
      "  cpsie i\n"                                                                    \
      "  bx    lr\n"                                                                   \
      /* to the C version (close: CBZ/CBNZ reach 126 bytes) */                         \
      "6:cpsie i\n"                                                                    \
      "9:b     " CFN "\n"                                                              \
      "8:cpsie i\n"                                                                    \
      MSG("  movs  r1, #0\n") /* the message was empty: NULL says the same */          \
      "  b     " CFN "\n"                                                              \
      /* a timestamp below 2^28 (the first 2^28 units after start-up): the \
       * window holds (span), the ts takes 1-4 bytes, their number from CLZ */        \
      "5:ldr   r2, [r3, %[o_span]]\n"                                                  \
      "  cmp   r12, r2\n"                                                              \
      "  bhs   8b\n" /* outside the window */                                          \
      TBAND_CM_ASM_MUL                                                                 \
      "  add   r12, r1, r12" TBAND_CM_ASM_SHIFT "\n"                                   \
      "  lsr   r2, r12, #7\n"                                                          \
      "  add   r12, r12, r2, lsl #7\n"                                                 \
      "  lsr   r2, r12, #15\n"                                                         \
      "  add   r12, r12, r2, lsl #15\n"                                                \
      "  lsr   r2, r12, #23\n"                                                         \
      "  add   r12, r12, r2, lsl #23\n"                                                \
      "  cmp   r12, #0\n"                                                              \
      "  beq   8b\n" /* ts 0: the generic encoder */                                   \
      "  push  {r4, r5}\n"                                                             \
      "  clz   r2, r12\n"                                                              \
      "  and   r2, r2, #24\n" /* 8 x the unused top bytes */                           \
      "  movw  r4, #0x8080\n"                                                          \
      "  movt  r4, #0x80\n"                                                            \
      "  lsr   r4, r4, r2\n"                                                           \
      "  orr   r12, r12, r4\n" /* continuation bits */                                 \
      "  ldr   r1, [r3, %[o_wp]]\n"                                                    \
      "  ldr   r4, [r3, %[o_wlim]]\n"                                                  \
      "  cmp   r1, r4\n"                                                               \
      "  bhs   4f\n"                                                                   \
      "  rsb   r5, r2, #64\n"                                                          \
      "  lsr   r5, r5, #3\n" /* the frame length n + 4 = 8 - unused bytes */           \
      "  str   r12, [r1, #2]\n"                                                        \
      "  add   r4, r1, r5\n"                                                           \
      "  strh  r0, [r4, #-2]\n"                                                        \
      "  addw  r12, r5, %[hdr]\n"                                                      \
      "  strh  r12, [r1]\n"                                                            \
      "  str   r4, [r3, %[o_wp]]\n"                                                    \
      "  pop   {r4, r5}\n"                                                             \
      TBAND_CM_ASM_COUNT                                                               \
      "  cpsie i\n"                                                                    \
      "  bx    lr\n"                                                                   \
      "4:pop   {r4, r5}\n"                                                             \
      "  b     8b\n"                                                                   \
      TBAND_CM_ASM_REPORT                                                              \
      "  .ltorg\n"                                                                     \
      :                                                                                \
      : [hot] "i"(tband_cores), [cnt] "i"(&(TBAND_CM_CYCLES())),                       \
        [o_base] "i"(TBAND_CM_OFF(port.base)), [o_lo] "i"(TBAND_CM_OFF(port.lo)),      \
        [o_span] "i"(TBAND_CM_OFF(port.span)), [o_m] "i"(TBAND_CM_OFF(port.m)),        \
        [o_aspan] "i"(TBAND_CM_OFF(port.aspan)), [o_wp] "i"(TBAND_CM_OFF(wp)),         \
        [o_wlim] "i"(TBAND_CM_OFF(wlim)), [o_n4] "i"(TBAND_CM_OFF(port.n4)),           \
        [o_hw] "i"(TBAND_CM_OFF(tsc.hw)), [o_cd] "i"(TBAND_CM_OFF(countdown)),         \
        [m] "i"(TBAND_CM_WIN_M), [k] "i"(TBAND_CM_WIN_K), [hdr] "i"(HDR))
#define TBAND_CM_UNUSED __attribute__((unused)) /* read by the assembly */
#define TBAND_CM_MSG_YES(x) x
#define TBAND_CM_MSG_NO(x) ""

/* one function: nothing but the asm statement (Clang allows no other statement in
 * a naked function); its event id goes into the header constant */
#define TBAND_CM_FAST1_FN(NAME, PARAMS, MSG, NOMSG)                                            \
  void tband_c_##NAME PARAMS;                                                          \
  __attribute__((naked)) void tband_##NAME PARAMS                                      \
  {                                                                                    \
    TBAND_CM_ASM_FAST1(MSG, NOMSG, "tband_c_" #NAME, (TBAND_EVT_##NAME##_ID << 8) - 1);       \
  }
#if tband_configMARKER_TRACE_ENABLE
#define TBAND_CM_ARGS2 (uint32_t id TBAND_CM_UNUSED, const char *msg TBAND_CM_UNUSED)
#define TBAND_CM_ARGS1 (uint32_t id TBAND_CM_UNUSED)
TBAND_CM_FAST1_FN(evtmarker, TBAND_CM_ARGS2, TBAND_CM_MSG_YES, TBAND_CM_MSG_NO)
TBAND_CM_FAST1_FN(evtmarker_begin, TBAND_CM_ARGS2, TBAND_CM_MSG_YES, TBAND_CM_MSG_NO)
TBAND_CM_FAST1_FN(evtmarker_end, TBAND_CM_ARGS1, TBAND_CM_MSG_NO, TBAND_CM_MSG_YES)
#endif
#if tband_configISR_TRACE_ENABLE
TBAND_CM_FAST1_FN(isr_enter, TBAND_CM_ARGS1, TBAND_CM_MSG_NO, TBAND_CM_MSG_YES)
TBAND_CM_FAST1_FN(isr_exit, TBAND_CM_ARGS1, TBAND_CM_MSG_NO, TBAND_CM_MSG_YES)
#endif
#endif
#endif
