/* A reference Cortex-M for differential tests: a thin layer over Unicorn
 * (libunicorn 2.x, QEMU's ARM core) in Thumb M-class mode. Test-only; never
 * linked into libsonde.
 *
 * Memory: a code window [UREF_CODE_BASE, +UREF_CODE_SIZE) and a RAM window
 * [UREF_RAM_BASE, +UREF_RAM_SIZE), both readable, writable and executable;
 * uref_map() adds more. No NVIC/SCB is modelled: an instruction that would
 * raise an exception (undefined, unmapped access, SVC...) ends uref_run() with
 * an error instead.
 *
 * Typical use (one instruction at a time):
 *   struct uref *u = uref_new(UREF_CORTEX_M4);
 *   uint16_t code[] = {0xfa81, 0xf012};               // qadd8 r0, r1, r2
 *   uref_write_code(u, UREF_CODE_BASE, code, 2);
 *   struct uref_state st = {0}; st.r[1] = ...; uref_set_state(u, &st);
 *   if (uref_run(u, UREF_CODE_BASE, 1) == 0) uref_get_state(u, &st);
 *   uref_free(u);
 *
 * Known differences from silicon that callers must allow for are listed in
 * docs/vm.md ("Unicorn as a reference"). */
#ifndef SONDE_TEST_UNICORN_REF_H
#define SONDE_TEST_UNICORN_REF_H

#include <stddef.h>
#include <stdint.h>

#define UREF_CODE_BASE 0x00000000u
#define UREF_CODE_SIZE 0x00100000u
/* Executing this address (a NOP) ends uref_run() early, successfully, with
 * the PC there: end test programs with a branch to it. */
#define UREF_STOP (UREF_CODE_BASE + 0x000f8000u)
#define UREF_RAM_BASE 0x20000000u
#define UREF_RAM_SIZE 0x00100000u

enum uref_core {
  UREF_CORTEX_M0,  /* ARMv6-M */
  UREF_CORTEX_M3,  /* ARMv7-M */
  UREF_CORTEX_M4,  /* ARMv7E-M with DSP and FPv4-SP (the FPU is enabled) */
  UREF_CORTEX_M33, /* ARMv8-M Mainline with DSP and FPv5-SP */
};

/* The state a test compares. `apsr` uses the xPSR layout: N Z C V Q in bits
 * 31..27, GE in 19..16 (GE only on cores with the DSP extension). r[15] is the
 * PC: uref_get_state() returns the address of the next instruction. */
struct uref_state {
  uint32_t r[16];
  uint32_t apsr;
  uint32_t s[32];
  uint32_t fpscr;
};

struct uref;

/* A new engine with the code and RAM windows mapped (zeroed), all registers
 * zero. Returns NULL if Unicorn cannot create it (message on stderr). */
struct uref *uref_new(enum uref_core core);
void uref_free(struct uref *u); /* NULL is fine */

/* Map another zeroed window (base and size multiples of 4 KiB). 0 or -1. */
int uref_map(struct uref *u, uint32_t base, uint32_t size);
/* Write or read memory. Writes drop Unicorn's translated code for the range,
 * so rewriting code at the same address is safe. 0 or -1 (unmapped). */
int uref_write_mem(struct uref *u, uint32_t addr, const void *data, size_t len);
int uref_read_mem(struct uref *u, uint32_t addr, void *data, size_t len);
/* Write without dropping translated code: only for addresses Unicorn has not
 * executed since the last uref_flush_code(). Unicorn 2.0.1 can crash after a
 * very large number (~10^6) of ranged invalidations (uref_write_mem at the
 * same address, Unicorn issue #1946), so long differential runs write each
 * new instruction to a fresh address this way and flush rarely. */
int uref_write_mem_fresh(struct uref *u, uint32_t addr, const void *data, size_t len);
/* Drop all translated code of the code window. */
void uref_flush_code(struct uref *u);
/* Write `n` halfwords of Thumb code (hw1 first for 32-bit encodings). */
int uref_write_code(struct uref *u, uint32_t addr, const uint16_t *hw, size_t n);

/* Set every register in `st` except r[15] (the PC is given to uref_run). */
void uref_set_state(struct uref *u, const struct uref_state *st);
void uref_get_state(struct uref *u, struct uref_state *st);

/* Run exactly `count` instructions starting at `pc` (Thumb bit implied), or
 * fewer if UREF_STOP is reached. Unicorn does not count IT instructions, and
 * switching to an uncounted run (`until` address) would flush its translated
 * code, so always give a count (an upper bound is fine with UREF_STOP).
 * Returns 0, or -1 if Unicorn stopped with an error (uref_error() says which:
 * an exception such as UNDEFINED, an unmapped or protected access...). */
int uref_run(struct uref *u, uint32_t pc, unsigned count);
const char *uref_error(const struct uref *u);

/* The underlying uc_engine (a `uc_engine *`), for anything not covered here. */
void *uref_engine(struct uref *u);

#endif
