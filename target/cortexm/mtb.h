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
#define MTB_POSITION_WRAP (1u << 2)
#define MTB_FLOW_AUTOSTOP (1u << 0)
#define MTB_FLOW_AUTOHALT (1u << 1)

/* Start tracing into a circular buffer of `size` bytes (a power of two >= 16)
 * at MTB->BASE. `watermark` (a byte offset, 0: none) with `flow_bits`
 * (MTB_FLOW_AUTOSTOP / MTB_FLOW_AUTOHALT) stops or halts when the write
 * pointer reaches it. The buffer is cleared first. Returns 0, or -1 for a bad
 * size. */
int mtb_enable(size_t size, uint32_t watermark, uint32_t flow_bits);
/* Stop tracing (keeps POSITION, so the buffer can be read out). */
void mtb_disable(void);
/* Copy up to `max` packets, oldest first, into out[2*i] (source word) and
 * out[2*i+1] (destination word). Returns the number of packets. */
size_t mtb_read(uint32_t *out, size_t max);


/* ---- post-mortem bundle (docs/formats.md "MTB post-mortem bundle") -------
 * Layout v1, little-endian: a 128-byte header (magic "SMTB", version,
 * sizes, MTB registers, EXC_RETURN, the stacked frame, CFSR/HFSR/MMFAR/BFAR/
 * SHCSR on ARMv8-M, IPSR, a 20-byte build id), the trace buffer (its whole
 * circle, 2^(MASK+4) bytes), a slice of the stack from the stacked frame
 * up, and a CRC-32 (IEEE) of everything before it. Size:
 * MTB_BUNDLE_SIZE(buffer bytes, stack bytes). */
#define MTB_BUNDLE_HEADER 128u
#define MTB_BUNDLE_SIZE(buf, stack) (MTB_BUNDLE_HEADER + (buf) + (stack) + 4u)

/* Write a bundle into out (cap bytes): stops the MTB first if it still runs.
 * frame: the stacked exception frame (r0..xpsr), exc_return: LR on handler
 * entry, stack_bytes: how much stack to keep from the frame up (clamped to
 * what fits), build_id: 20 bytes or NULL. Returns the bundle's size, or 0
 * when cap is too small for even the header and the buffer. Uses no stack
 * beyond a few words, calls nothing, so it is safe in a HardFault handler
 * after a stack overflow. */
size_t mtb_bundle_write(void *out, size_t cap, const uint32_t *frame, uint32_t exc_return,
                        size_t stack_bytes, const uint8_t *build_id);

/* On the next boot: the size of the valid bundle in buf (magic, version,
 * size within cap, CRC), or 0 when none is waiting. */
size_t mtb_bundle_check(const void *buf, size_t cap);

/* MTB_FAULT_HANDLER(HardFault_Handler, my_fault): a naked handler that
 * passes the stacked frame (MSP or PSP per EXC_RETURN bit 2) and EXC_RETURN
 * to void my_fault(uint32_t *frame, uint32_t exc_return), touching no stack
 * on the way (Thumb-1 instructions, so M0+ and M33 alike). */
#define MTB_FAULT_HANDLER(name, fn)                                                   \
  __attribute__((naked)) void name(void)                                            \
  {                                                                                 \
    __asm__ volatile("movs r0, #4\n"                                                \
                     "mov r1, lr\n"                                                 \
                     "tst r0, r1\n"                                                 \
                     "beq 1f\n"                                                     \
                     "mrs r0, psp\n"                                                \
                     "b 2f\n"                                                       \
                     "1: mrs r0, msp\n"                                             \
                     "2: ldr r2, =" #fn "\n"                                        \
                     "bx r2\n"                                                      \
                     ".ltorg\n");                                                   \
  }

#endif
