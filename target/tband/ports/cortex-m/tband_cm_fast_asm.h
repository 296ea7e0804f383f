/* tband_cm_fast_asm.h: the Cortex-M port's hand-written fast path (docs/tband.md,
 * "Cost per event"), kept apart from the port's C. Included once, by
 * tband_port_cortexm.c, after tband_internal.h; not for other files. */
#ifndef TBAND_CM_FAST_ASM_H
#define TBAND_CM_FAST_ASM_H

#include <stddef.h>

#if defined(TBAND_CM_FAST_ASM) && TBAND_CM_FAST_ASM
/* The fast path in Thumb-2 for the events [id][ts][one-byte field]: markers
 * without a message, ISR enter and exit (docs/tband.md, "Cost per event").
 * The same frames as tband_fast_lo1 into the snapshot buffer, with the state
 * in one object (tband_cores[0]) and everything in r0-r3 and r12, so that
 * nothing is saved; a timestamp below 2^28 (1-4 bytes) has a short path.
 * Whatever it does not take (a message, an id outside 1..127, interrupts
 * already masked, the counter outside the window, a timestamp of 0 or of
 * 2^56 and more, not recording or nearly full) goes to the C version,
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
/* R = R * M, the counter's cycles since base into timestamp units (r2
 * scratch) */
#if TBAND_CM_TS_IS_CYCLES
#define TBAND_CM_ASM_MUL(R) "" /* M = 1 */
#else
#if ((1000000000ull << TBAND_CM_NS_SHIFT) / (TBAND_CM_CPU_HZ)) < 256
/* 16-bit, so that the branches reach */
#define TBAND_CM_ASM_MUL(R) "  movs  r2, %[m]\n  mul   " R ", " R ", r2\n"
#else /* a 16-bit load where MOVW (32-bit) would put the fallbacks out of reach */
#define TBAND_CM_ASM_MUL(R) "  ldr   r2, [r3, %[o_m]]\n  mul   " R ", " R ", r2\n"
#endif
#endif
/* V (< 2^28) spread into septets, one per byte, in place: bits 7-13 to 8-14,
 * 14-20 to 16-22, 21-27 to 24-30, the bytes' top bits clear; T scratch. LSR
 * is "lsrs" or "lsr": the flags are dead after every use, so it only picks
 * the encoding (LSRS of low registers has a 16-bit one, LSR outside an IT
 * block only a 32-bit one), as each site had it. */
#define TBAND_CM_ASM_SPREAD(V, T, LSR)                                                 \
  "  " LSR " " T ", " V ", #7\n"                                                       \
  "  add   " V ", " V ", " T ", lsl #7\n"                                              \
  "  " LSR " " T ", " V ", #15\n"                                                      \
  "  add   " V ", " V ", " T ", lsl #15\n"                                             \
  "  " LSR " " T ", " V ", #23\n"                                                      \
  "  add   " V ", " V ", " T ", lsl #23\n"
/* The drop-report countdown after a stored frame (as tband_stored): at zero
 * to label L, TBAND_CM_ASM_REPORT_DUE(L), which reports, still masked, and
 * returns to the caller with interrupts on. r2 scratch, r3 = &tband_cores[0]
 * (operand o_cd). */
#define TBAND_CM_ASM_COUNTDOWN(L)                                                      \
  "  ldr   r2, [r3, %[o_cd]]\n"                                                        \
  "  subs  r2, #1\n"                                                                   \
  "  str   r2, [r3, %[o_cd]]\n"                                                        \
  "  beq   " L "f\n"
#define TBAND_CM_ASM_REPORT_DUE(L)                                                     \
  L ":push  {r3, lr}\n" /* the dropped-event report (periodic, or after a drop) */     \
  "  movs  r0, #0\n"                                                                   \
  "  bl    tband_report_due\n"                                                         \
  "  pop   {r3, lr}\n"                                                                 \
  "  cpsie i\n"                                                                        \
  "  bx    lr\n"
#if tband_configTRACE_DROP_CNT_EVERY > 0 && !TBAND_CM_FAST_ITM
#define TBAND_CM_ASM_COUNT TBAND_CM_ASM_COUNTDOWN("7")
#define TBAND_CM_ASM_REPORT TBAND_CM_ASM_REPORT_DUE("7")
#else
/* none periodic, and none pending while recording (tband_trigger_snapshot);
 * streaming over ITM, tband_cm_itm_frame counts every frame */
#define TBAND_CM_ASM_COUNT ""
#define TBAND_CM_ASM_REPORT ""
#endif

/* The frame is at [start, r12); commit it. Snapshot: the new write pointer.
 * Streaming over ITM: tband_cm_itm_frame (below) writes it to the stimulus
 * port, counts it and returns to the caller. START is an instruction that
 * puts the frame's start into r1. */
#if TBAND_CM_FAST_ITM
#define TBAND_CM_ASM_COMMIT(START) START "  b     tband_cm_itm_frame\n"
/* the ends of the short path (frame end in r4) and of the value marker (frame
 * at r2, end in r12), which saved registers: the commit before the POP where
 * that pipelines (snapshot), after it where the ITM routine takes over */
#define TBAND_CM_ASM_END_SHORT "  mov   r12, r4\n  pop   {r4, r5}\n  b     tband_cm_itm_frame\n"
#define TBAND_CM_ASM_END_VAL "  pop   {r4}\n  mov   r1, r2\n  b     tband_cm_itm_frame\n"
#else
#define TBAND_CM_ASM_COMMIT(START) "  str   r12, [r3, %[o_wp]]\n"
#define TBAND_CM_ASM_END_SHORT "  str   r4, [r3, %[o_wp]]\n  pop   {r4, r5}\n"
#define TBAND_CM_ASM_END_VAL "  str   r12, [r3, %[o_wp]]\n  pop   {r4}\n"
#endif

/* The body; MSG(x) is x for the functions whose r1 is a message that must be
 * empty, NOMSG(x) for the others. */
#define TBAND_CM_ASM_FAST1(MSG, NOMSG, CFN, HDR)                                       \
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
      TBAND_CM_ASM_MUL("r12")                                                          \
      "  add   r1, r1, r12" TBAND_CM_ASM_SHIFT "\n" /* ts & 0x0FFFFFFF */              \
      TBAND_CM_ASM_SPREAD("r1", "r2", "lsrs") /* its septets, one per byte */          \
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
      TBAND_CM_ASM_COMMIT("  sub   r1, r12, r2\n")                                   \
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
      TBAND_CM_ASM_MUL("r12")                                                          \
      "  add   r12, r1, r12" TBAND_CM_ASM_SHIFT "\n"                                   \
      TBAND_CM_ASM_SPREAD("r12", "r2", "lsr")                                          \
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
      TBAND_CM_ASM_END_SHORT /* (r1: the frame's start) */                            \
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
/* The value marker, [id][ts][id][val][0] with val as the format's
 * sign-magnitude varlen (m = 2|v| + sign, 1-4 bytes: |v| < 2^27), the same
 * frame as tband_fast_lo2. r0 id, r2:r3 the value (AAPCS: an even pair; r1 is
 * unused); r4 is saved, the rest as above. A value of 0 (m = 0) is the
 * frame's only zero byte: it becomes the 0x01 code of the empty last COBS
 * block and the header's code is one less. The fallback gets r2:r3 back
 * from m where the critical section used them. */
#define TBAND_CM_ASM_VAL(CFN, HDR)                                                     \
  __asm__ volatile(                                                                    \
      "  mrs   r12, primask\n"                                                         \
      "  sub   r1, r0, #1\n"                                                           \
      "  orr   r1, r1, r12, lsl #31\n"                                                 \
      "  cmp   r1, #127\n"                                                             \
      "  bhs   9f\n" /* id 0 or > 127, or interrupts masked */                         \
      "  asr   r12, r2, #31\n"                                                         \
      "  cmp   r3, r12\n"                                                              \
      "  bne   9f\n" /* not a 32-bit value */                                          \
      "  eor   r1, r2, r12\n"                                                          \
      "  sub   r1, r1, r12\n" /* |v| */                                                \
      "  cmp   r1, #0x08000000\n"                                                      \
      "  bhs   9f\n" /* |v| >= 2^27: five bytes */                                     \
      "  rsb   r1, r12, r1, lsl #1\n" /* m = 2|v| + sign */                            \
      "  push  {r4}\n"                                                                 \
      "  cpsid i\n"                                                                    \
      "  ldr   r3, =%c[hot]\n"                                                         \
      "  ldr   r2, [r3, %[o_wp]]\n"                                                    \
      "  ldr   r4, [r3, %[o_wlim]]\n"                                                  \
      "  cmp   r2, r4\n"                                                               \
      "  bhs   8f\n" /* not recording, or nearly full */                               \
      "  ldr   r4, =%c[cnt]\n"                                                         \
      "  ldr   r2, [r3, %[o_base]]\n"                                                  \
      "  ldr   r4, [r4]\n" /* the counter, inside the critical section */              \
      "  subs  r4, r4, r2\n"                                                           \
      "  ldr   r2, [r3, %[o_aspan]]\n"                                                 \
      "  cmp   r4, r2\n"                                                               \
      "  bhs   5f\n" /* outside the window, or a short timestamp */                    \
      TBAND_CM_ASM_MUL("r4")                                                           \
      "  ldr   r2, [r3, %[o_lo]]\n"                                                    \
      "  add   r4, r2, r4" TBAND_CM_ASM_SHIFT "\n" /* ts & 0x0FFFFFFF */               \
      TBAND_CM_ASM_SPREAD("r4", "r2", "lsr")                                           \
      "  orr   r4, r4, #0x80808080\n"                                                  \
      "  ldr   r2, [r3, %[o_wp]]\n"                                                    \
      "  ldr   r12, [r3, %[o_n4]]\n"                                                   \
      "  str   r4, [r2, #2]\n"                                                         \
      "  ldr   r4, [r3, %[o_hw]]\n"                                                    \
      "  str   r4, [r2, #6]\n"                                                         \
      "3:add   r12, r2, r12\n" /* wp + n4: the id at -2, m from -1 */                  \
      "  strb  r0, [r12, #-2]\n"                                                       \
      TBAND_CM_ASM_SPREAD("r1", "r4", "lsr") /* m's septets */                         \
      "  orr   r4, r1, #1\n"                                                           \
      "  clz   r4, r4\n"                                                               \
      "  and   r4, r4, #24\n" /* 8 x its unused top bytes */                           \
      "  movw  r0, #0x8080\n"                                                          \
      "  movt  r0, #0x80\n"                                                            \
      "  lsr   r0, r0, r4\n"                                                           \
      "  orr   r1, r1, r0\n" /* continuation bits */                                   \
      "  clz   r0, r1\n"                                                               \
      "  lsr   r0, r0, #5\n" /* m = 0 */                                               \
      "  orr   r1, r1, r0\n" /* ... as 0x01 */                                         \
      "  str   r1, [r12, #-1]\n" /* m, then zeros (the delimiter when m < 4 bytes) */  \
      "  movs  r1, #0\n"                                                               \
      "  strb  r1, [r12, #3]\n" /* the delimiter after 4 bytes (else past the end) */  \
      "  add   r12, r12, #4\n"                                                         \
      "  sub   r12, r12, r4, lsr #3\n" /* the new write pointer: wp + n4 + m bytes */  \
      "  sub   r4, r12, r2\n"                                                          \
      "  sub   r4, r4, r0\n"                                                           \
      "  addw  r4, r4, %[hdr]\n" /* COBS code (length - 1, one less for m = 0), id */  \
      "  strh  r4, [r2]\n"                                                             \
      TBAND_CM_ASM_END_VAL                                                             \
      TBAND_CM_ASM_COUNT                                                               \
      "  cpsie i\n"                                                                    \
      "  bx    lr\n"                                                                   \
      /* a timestamp below 2^28: 1-4 bytes (CLZ), n4 = their number + 4 */            \
      "5:ldr   r2, [r3, %[o_span]]\n"                                                  \
      "  cmp   r4, r2\n"                                                               \
      "  bhs   8f\n" /* outside the window */                                          \
      TBAND_CM_ASM_MUL("r4")                                                           \
      "  ldr   r2, [r3, %[o_lo]]\n"                                                    \
      "  add   r4, r2, r4" TBAND_CM_ASM_SHIFT "\n"                                     \
      TBAND_CM_ASM_SPREAD("r4", "r2", "lsr")                                           \
      "  cmp   r4, #0\n"                                                               \
      "  beq   8f\n" /* ts 0: the generic encoder */                                   \
      "  clz   r2, r4\n"                                                               \
      "  and   r2, r2, #24\n"                                                          \
      "  movw  r12, #0x8080\n"                                                         \
      "  movt  r12, #0x80\n"                                                           \
      "  lsr   r12, r12, r2\n"                                                         \
      "  orr   r4, r4, r12\n"                                                          \
      "  rsb   r12, r2, #64\n"                                                         \
      "  lsr   r12, r12, #3\n" /* n4 = 8 - unused bytes */                             \
      "  ldr   r2, [r3, %[o_wp]]\n"                                                    \
      "  str   r4, [r2, #2]\n"                                                         \
      "  b     3b\n"                                                                   \
      TBAND_CM_ASM_REPORT                                                              \
      "8:cpsie i\n"                                                                    \
      "  pop   {r4}\n"                                                                 \
      "  lsrs  r2, r1, #1\n" /* v from m: |v|, the sign into C */                      \
      "  it    cs\n"                                                                   \
      "  rsbcs r2, r2, #0\n"                                                           \
      "  asr   r3, r2, #31\n"                                                          \
      "9:b     " CFN "\n"                                                              \
      "  .ltorg\n"                                                                     \
      :                                                                                \
      : [hot] "i"(tband_cores), [cnt] "i"(&(TBAND_CM_CYCLES())),                       \
        [o_base] "i"(TBAND_CM_OFF(port.base)), [o_lo] "i"(TBAND_CM_OFF(port.lo)),      \
        [o_span] "i"(TBAND_CM_OFF(port.span)), [o_m] "i"(TBAND_CM_OFF(port.m)),        \
        [o_aspan] "i"(TBAND_CM_OFF(port.aspan)),                                       \
        [o_wp] "i"(TBAND_CM_OFF(wp)), [o_wlim] "i"(TBAND_CM_OFF(wlim)),                \
        [o_n4] "i"(TBAND_CM_OFF(port.n4)), [o_hw] "i"(TBAND_CM_OFF(tsc.hw)),           \
        [o_cd] "i"(TBAND_CM_OFF(countdown)), [m] "i"(TBAND_CM_WIN_M),                  \
        [k] "i"(TBAND_CM_WIN_K), [hdr] "i"(HDR))

#if TBAND_CM_FAST_ITM
/* Streaming over ITM: the frame at [r1, r12) (r1 word aligned) to stimulus
 * port TBAND_CM_STREAM_ITM_PORT: whole words, then a halfword and a byte for
 * the rest (tband_cm_stream() writes the rest byte by byte: the same payload
 * in fewer packets), each after the FIFO says ready; then the drop-report
 * countdown, then back to the event function's caller with interrupts on.
 * ITM or the port disabled: the frame is dropped and counted, as
 * tband_cm_stream() and tband_dropped() do. r3 = &tband_cores[0]. */
__attribute__((naked, used)) void tband_cm_itm_frame(void)
{
  __asm__ volatile(
      "  ldr   r2, =0xE0000E80\n" /* TCR */
      "  ldr   r0, =0xE0000E00\n" /* TER */
      "  ldr   r2, [r2]\n"
      "  ldr   r0, [r0]\n"
      "  lsls  r2, r2, #31\n" /* ITMENA */
      "  beq   7f\n"
      "  lsls  r0, r0, %[terbit]\n"
      "  bpl   7f\n"
      "  ldr   r2, =%c[stim]\n"
      "  sub   r12, r12, r1\n" /* the frame's length, 5..16 */
      "1:ldr   r0, [r2]\n"     /* FIFO ready? */
      "  lsls  r0, r0, #31\n"
      "  beq   1b\n"
      "  ldr   r0, [r1]\n"
      "  str   r0, [r2]\n"
      "  cmp   r12, #8\n"
      "  blo   5f\n"
      "2:ldr   r0, [r2]\n"
      "  lsls  r0, r0, #31\n"
      "  beq   2b\n"
      "  ldr   r0, [r1, #4]\n"
      "  str   r0, [r2]\n"
      "  cmp   r12, #12\n"
      "  blo   5f\n"
      "3:ldr   r0, [r2]\n"
      "  lsls  r0, r0, #31\n"
      "  beq   3b\n"
      "  ldr   r0, [r1, #8]\n"
      "  str   r0, [r2]\n"
      "  cmp   r12, #16\n"
      "  blo   5f\n"
      "9:ldr   r0, [r2]\n"
      "  lsls  r0, r0, #31\n"
      "  beq   9b\n"
      "  ldr   r0, [r1, #12]\n"
      "  str   r0, [r2]\n"
      "5:ands  r0, r12, #3\n" /* the last 1-3 bytes: a halfword, a byte */
      "  beq   4f\n"
      "  bic   r12, r12, #3\n"
      "  add   r1, r1, r12\n"
      "  cmp   r0, #2\n"
      "  blo   11f\n"
      "10:ldr  r12, [r2]\n"
      "  lsls  r12, r12, #31\n"
      "  beq   10b\n"
      "  ldrh  r12, [r1], #2\n"
      "  strh  r12, [r2]\n"
      "  cmp   r0, #3\n"
      "  bne   4f\n"
      "11:ldr  r12, [r2]\n"
      "  lsls  r12, r12, #31\n"
      "  beq   11b\n"
      "  ldrb  r12, [r1]\n"
      "  strb  r12, [r2]\n"
      "4:" TBAND_CM_ASM_COUNTDOWN("6") /* stored: the countdown */
      "  cpsie i\n"
      "  bx    lr\n"
      TBAND_CM_ASM_REPORT_DUE("6")
      "7:ldr   r0, [r3, %[o_dropped]]\n" /* dropped: counted, reported next time */
      "  adds  r0, #1\n"
      "  str   r0, [r3, %[o_dropped]]\n"
      "  movs  r0, #1\n"
      "  strb  r0, [r3, %[o_pending]]\n"
      "  str   r0, [r3, %[o_cd]]\n"
      "  cpsie i\n"
      "  bx    lr\n"
      "  .ltorg\n"
      :
      : [stim] "i"(0xE0000000u + 4u * (TBAND_CM_STREAM_ITM_PORT)),
        [terbit] "i"(31 - (TBAND_CM_STREAM_ITM_PORT)), [o_cd] "i"(TBAND_CM_OFF(countdown)),
        [o_dropped] "i"(TBAND_CM_OFF(dropped)), [o_pending] "i"(TBAND_CM_OFF(report_pending)));
}
#endif

#define TBAND_CM_UNUSED __attribute__((unused)) /* read by the assembly */
#define TBAND_CM_MSG_YES(x) x
#define TBAND_CM_MSG_NO(x) ""

/* one function: nothing but the asm statement (Clang allows no other statement in
 * a naked function); its event id goes into the header constant */
#define TBAND_CM_FAST1_FN(NAME, PARAMS, MSG, NOMSG)                                    \
  void tband_c_##NAME PARAMS;                                                          \
  __attribute__((naked)) void tband_##NAME PARAMS                                      \
  {                                                                                    \
    TBAND_CM_ASM_FAST1(MSG, NOMSG, "tband_c_" #NAME, (TBAND_EVT_##NAME##_ID << 8) - 1); \
  }
#if tband_configMARKER_TRACE_ENABLE
#define TBAND_CM_ARGS2 (uint32_t id TBAND_CM_UNUSED, const char *msg TBAND_CM_UNUSED)
#define TBAND_CM_ARGS1 (uint32_t id TBAND_CM_UNUSED)
TBAND_CM_FAST1_FN(evtmarker, TBAND_CM_ARGS2, TBAND_CM_MSG_YES, TBAND_CM_MSG_NO)
TBAND_CM_FAST1_FN(evtmarker_begin, TBAND_CM_ARGS2, TBAND_CM_MSG_YES, TBAND_CM_MSG_NO)
TBAND_CM_FAST1_FN(evtmarker_end, TBAND_CM_ARGS1, TBAND_CM_MSG_NO, TBAND_CM_MSG_YES)
void tband_c_valmarker(uint32_t id, int64_t val);
__attribute__((naked)) void tband_valmarker(uint32_t id TBAND_CM_UNUSED,
                                            int64_t val TBAND_CM_UNUSED)
{
  TBAND_CM_ASM_VAL("tband_c_valmarker", (TBAND_EVT_valmarker_ID << 8) - 1);
}
#endif
#if tband_configISR_TRACE_ENABLE
TBAND_CM_FAST1_FN(isr_enter, TBAND_CM_ARGS1, TBAND_CM_MSG_NO, TBAND_CM_MSG_YES)
TBAND_CM_FAST1_FN(isr_exit, TBAND_CM_ARGS1, TBAND_CM_MSG_NO, TBAND_CM_MSG_YES)
#endif
#endif

#endif
