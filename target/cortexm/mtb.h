/* Micro Trace Buffer driver for Cortex-M33 and Cortex-M0+ (production-style).
 *
 * Registers per the ARM CoreSight MTB-M0+ TRM (DDI 0486B) 3.3 and the
 * Cortex-M33 TRM MTB chapter: POSITION, MASTER, FLOW, BASE (+ TSTART, TSTOP,
 * SECURE on the M33). The trace buffer is SRAM at MTB_BASE; each packet is
 * two words: source|A-bit, destination|S-bit.
 *
 * Define MTB_SFR_BASE before including to override the register block address
 * (default: 0xE0043000 on ARMv8-M, 0xF0000000 on ARMv6-M as on Kinetis KL). */
#ifndef SONDE_TARGET_MTB_H
#define SONDE_TARGET_MTB_H

#include <stddef.h>
#include <stdint.h>

#ifndef MTB_SFR_BASE
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8M_BASE__)
#define MTB_SFR_BASE 0xE0043000u
#else
#define MTB_SFR_BASE 0xF0000000u
#endif
#endif

typedef struct {
  volatile uint32_t POSITION; /* 0x000 POINTER[31:3], WRAP[2] */
  volatile uint32_t MASTER;   /* 0x004 EN[31], HALTREQ[9], TSTOPEN[6], TSTARTEN[5], MASK[4:0] */
  volatile uint32_t FLOW;     /* 0x008 WATERMARK[31:3], AUTOHALT[1], AUTOSTOP[0] */
  volatile const uint32_t BASE; /* 0x00C trace buffer address (read-only) */
  volatile uint32_t TSTART;   /* 0x010 (M33) */
  volatile uint32_t TSTOP;    /* 0x014 (M33) */
  volatile uint32_t SECURE;   /* 0x018 (M33) */
} mtb_regs_t;

#define MTB ((mtb_regs_t *)MTB_SFR_BASE)
#define MTB_MASTER_EN (1u << 31)
#define MTB_MASTER_TSTOPEN (1u << 6)
#define MTB_MASTER_TSTARTEN (1u << 5)
#define MTB_POSITION_WRAP (1u << 2)
#define MTB_FLOW_AUTOSTOP (1u << 0)
#define MTB_FLOW_AUTOHALT (1u << 1)

/* Cortex-M0+: the MTB's TSTART/TSTOP inputs are driven by the chip. NXP
 * Kinetis KL/KE/KW and MCX parts have the MTBDWT (reference manual chapter
 * "Micro Trace Buffer", MTB_DWT): two comparators whose matches pulse
 * TSTART or TSTOP per TBCTRL.ACOMPn. Define MTBDWT_BASE to move it; parts
 * without one (LPC800: SYSCON EXTTRACECMD, SAM D: event system) need their
 * own trigger code. */
#ifndef MTBDWT_BASE
#define MTBDWT_BASE 0xF0001000u
#endif
typedef struct {
  volatile const uint32_t CTRL; /* 0x000 NUMCMP[31:28] (read-only) */
  uint32_t reserved0[7];
  struct {
    volatile uint32_t COMP; /* 0x020 + 16n: the address to match */
    volatile uint32_t MASK; /* 0x024 + 16n: MASK[4:0] low address bits ignored */
    volatile uint32_t FCT;  /* 0x028 + 16n: FUNCTION[3:0], MATCHED[24] (read clears) */
    uint32_t reserved;
  } CMP[2];
  uint32_t reserved1[112];
  volatile uint32_t TBCTRL; /* 0x200 ACOMPn[n]: 1 = match starts, 0 = stops */
} mtbdwt_regs_t;
#define MTBDWT ((mtbdwt_regs_t *)MTBDWT_BASE)
#define MTBDWT_FCT_IFETCH 4u /* FUNCTION: instruction fetch */
#define MTBDWT_FCT_MATCHED (1u << 24)

/* Start tracing into a circular buffer of `size` bytes (a power of two >= 16)
 * at MTB->BASE. `watermark` (a byte offset, 0: none) with `flow_bits`
 * (MTB_FLOW_AUTOSTOP / MTB_FLOW_AUTOHALT) stops or halts when the write
 * pointer reaches it. The buffer is cleared first. Returns 0, or -1 for a bad
 * size. */
int mtb_enable(size_t size, uint32_t watermark, uint32_t flow_bits);
/* Trace sessions between two instructions (MTB TSTART/TSTOP): tracing is
 * off until the core executes the instruction at start_pc, and stops when it
 * executes the one at stop_pc (0: never), as often as the program passes
 * them; each start begins a session whose first packet has the S-bit. The
 * start instruction's own branch is recorded, the stop's is not. Addresses
 * may be function pointers (the Thumb bit is dropped); the match is exact
 * (MASK 0). The start/stop sources: on ARMv8-M core DWT comparators 0 and 1
 * (DEMCR.TRCENA is set; MTB TSTART/TSTOP select them), on ARMv6-M the MTBDWT
 * at MTBDWT_BASE (comparator 0 starts, 1 stops). The buffer of `size` bytes
 * (a power of two >= 16) is cleared first. Returns 0, or -1 for a bad size. */
int mtb_enable_window(size_t size, uint32_t start_pc, uint32_t stop_pc);
/* Stop tracing (keeps POSITION, so the buffer can be read out); also clears
 * MASTER.TSTARTEN, so a start address passed later cannot restart it. */
void mtb_disable(void);
/* Copy up to `max` packets, oldest first, into out[2*i] (source word) and
 * out[2*i+1] (destination word). Returns the number of packets. */
size_t mtb_read(uint32_t *out, size_t max);


/* ---- post-mortem bundle (docs/formats.md "MTB post-mortem bundle") -------
 * Layout v2, little-endian: a 320-byte header (magic "SMTB", version 2,
 * sizes, MTB registers, EXC_RETURN, the stacked frame, CFSR/HFSR/MMFAR/BFAR/
 * SHCSR on ARMv7-M/ARMv8-M, IPSR, the image's GNU build id, flags, r4-r11,
 * MSP/PSP/CONTROL, MSPLIM/PSPLIM on ARMv8-M, FPSCR and S0-S31 when the core
 * has an enabled FPU), the trace buffer (its whole circle, 2^(MASK+4)
 * bytes), a slice of the stack from the stacked frame up, and a CRC-32
 * (IEEE) of everything before it. Size: MTB_BUNDLE_SIZE(buffer bytes, stack
 * bytes): 324 + buffer + stack. */
#define MTB_BUNDLE_VERSION 2u
#define MTB_BUNDLE_HEADER 320u
#define MTB_BUNDLE_SIZE(buf, stack) (MTB_BUNDLE_HEADER + (buf) + (stack) + 4u)

/* Registers the stacked frame does not hold, saved by MTB_FAULT_HANDLER's
 * shim before any C code runs (offsets are used by its assembly). */
typedef struct {
  uint32_t flags;     /* 0: MTB_REGS_* below */
  uint32_t r4_r11[8]; /* 4 */
  uint32_t msp, psp;  /* 36, 40: on handler entry (after stacking) */
  uint32_t fpscr;     /* 44 */
  uint32_t s[32];     /* 48: S0..S31 */
  uint32_t msplim;    /* 176 (ARMv8-M Mainline) */
  uint32_t psplim;    /* 180 */
} mtb_fault_regs_t;
#define MTB_REGS_CORE (1u << 0)  /* r4_r11, msp, psp valid */
#define MTB_REGS_FPU (1u << 1)   /* s[] and fpscr valid (FPU present and enabled) */
#define MTB_REGS_SPLIM (1u << 2) /* msplim/psplim valid */
extern mtb_fault_regs_t mtb_fault_regs;

/* The image's own GNU build id, from the note the linker places at the
 * symbol __build_id_note (link with -Wl,--build-id; firmware/ld/sections.ld
 * keeps `.note.gnu.build-id` in flash): *len bytes (20 for the default
 * SHA-1), or NULL when the image has none. */
const uint8_t *mtb_build_id(unsigned *len);

/* Write a bundle into out (cap bytes, word-aligned): stops the MTB first if
 * it still runs. frame: the stacked exception frame (r0..xpsr), exc_return:
 * LR on handler entry, regs: what the shim saved (NULL: not known),
 * stack_bytes: how much stack to keep from the frame up (clamped to what
 * fits). The build id comes from mtb_build_id(). Returns the bundle's size,
 * or 0 when cap is too small for even the header and the buffer. Uses no
 * stack beyond a few words, calls nothing but mtb_build_id(), so it is safe
 * in a HardFault handler after a stack overflow. */
size_t mtb_bundle_write(void *out, size_t cap, const uint32_t *frame, uint32_t exc_return,
                        const mtb_fault_regs_t *regs, size_t stack_bytes);

/* On the next boot: the size of the valid bundle in buf (magic, version,
 * size within cap, CRC), or 0 when none is waiting. */
size_t mtb_bundle_check(const void *buf, size_t cap);

/* On the next boot: when a valid bundle is waiting in buf, hand it to
 * send(data, len, ctx) (a UART, flash or radio writer; called once with the
 * whole bundle), then mark it sent (magic cleared) so that it is reported
 * once. Returns the size sent, 0 when none was waiting. */
size_t mtb_bundle_send(void *buf, size_t cap, void (*send)(const void *data, size_t len, void *ctx),
                       void *ctx);

/* FPU state (ARMv7E-M / ARMv8-M Mainline built with an FPU): saved only when
 * CPACR grants CP10/CP11, so a core whose FPU is off takes no NOCP fault. */
#if defined(__ARM_FP) && (defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_7EM__))
#define MTB__SAVE_FPU                                                                 \
  "ldr r2, =0xE000ED88\n" /* CPACR */                                               \
  "ldr r2, [r2]\n"                                                                  \
  "lsrs r2, r2, #20\n"                                                              \
  "movs r3, #15\n"                                                                  \
  "ands r2, r3\n"                                                                   \
  "cmp r2, #15\n"                                                                   \
  "bne 3f\n"                                                                        \
  "add r2, r0, #48\n"                                                               \
  "vstmia r2, {s0-s31}\n"                                                           \
  "vmrs r3, fpscr\n"                                                                \
  "str r3, [r0, #44]\n"                                                             \
  "adds r1, #2\n"                                                                   \
  "3:\n"
#else
#define MTB__SAVE_FPU ""
#endif
/* ARMv8-M Mainline: keep MSPLIM/PSPLIM, then lift MSPLIM so that the handler
 * can run after a stack-limit fault (STKOF) left MSP at the limit. */
#if defined(__ARM_ARCH_8M_MAIN__)
#define MTB__SAVE_SPLIM                                                               \
  "mrs r2, msplim\n"                                                                \
  "str r2, [r0, #176]\n"                                                            \
  "mrs r2, psplim\n"                                                                \
  "str r2, [r0, #180]\n"                                                            \
  "movs r2, #0\n"                                                                   \
  "msr msplim, r2\n"                                                                \
  "adds r1, #4\n"
#else
#define MTB__SAVE_SPLIM ""
#endif

/* The address of MASTER, for MTB_FAULT_HANDLER's assembly. */
extern volatile uint32_t *const mtb_master_reg;

/* MTB_FAULT_HANDLER(HardFault_Handler, my_fault): a naked handler that first
 * stops the MTB (MASTER.EN cleared: the buffer ends at the fault), saves
 * r4-r11 (and the FPU registers, the stack limits) into mtb_fault_regs, then
 * passes the stacked frame (MSP or PSP per EXC_RETURN bit 2), EXC_RETURN and
 * &mtb_fault_regs to void my_fault(uint32_t *frame, uint32_t exc_return,
 * const mtb_fault_regs_t *regs), touching no stack on the way (Thumb-1
 * instructions, so M0+ and M33 alike; r4-r11 keep their values). */
#define MTB_FAULT_HANDLER(name, fn)                                                   \
  __attribute__((naked)) void name(void)                                            \
  {                                                                                 \
    __asm__ volatile(".syntax unified\n"                                          \
                     "ldr r0, =mtb_master_reg\n" /* stop the MTB first */           \
                     "ldr r0, [r0]\n"                                               \
                     "ldr r1, [r0]\n"                                               \
                     "lsls r1, r1, #1\n" /* EN */                                    \
                     "lsrs r1, r1, #1\n"                                            \
                     "movs r2, #32\n" /* TSTARTEN: no restart by a start address */   \
                     "bics r1, r2\n"                                                \
                     "str r1, [r0]\n"                                               \
                     "ldr r0, =mtb_fault_regs\n"                                    \
                     "adds r0, #4\n"                                                \
                     "stmia r0!, {r4-r7}\n"                                         \
                     "mov r4, r8\n"                                                 \
                     "mov r5, r9\n"                                                 \
                     "mov r6, r10\n"                                                \
                     "mov r7, r11\n"                                                \
                     "stmia r0!, {r4-r7}\n"                                         \
                     "subs r0, #32\n"                                               \
                     "ldmia r0!, {r4-r7}\n"                                         \
                     "subs r0, #20\n"                                               \
                     "mrs r2, msp\n"                                               \
                     "str r2, [r0, #36]\n"                                          \
                     "mrs r2, psp\n"                                               \
                     "str r2, [r0, #40]\n"                                          \
                     "movs r1, #1\n" MTB__SAVE_FPU MTB__SAVE_SPLIM                  \
                     "str r1, [r0]\n"                                               \
                     "movs r0, #4\n"                                                \
                     "mov r1, lr\n"                                                 \
                     "tst r0, r1\n"                                                 \
                     "beq 1f\n"                                                     \
                     "mrs r0, psp\n"                                                \
                     "b 2f\n"                                                       \
                     "1: mrs r0, msp\n"                                             \
                     "2: ldr r2, =mtb_fault_regs\n"                                 \
                     "ldr r3, =" #fn "\n"                                           \
                     "bx r3\n"                                                      \
                     ".ltorg\n");                                                   \
  }

#endif
