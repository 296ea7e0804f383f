/* Shared by the firmware test programs (firmware/tests/fw_*.c). Each program
 * is built twice: for the virtual Cortex-M (arm-none-eabi-gcc, newlib-nano,
 * output through semihosting) and for the host (-DSONDE_HOST). The host
 * build's stdout is the expected output of the firmware (tests/firmware/).
 * Only exact arithmetic is printed: integers, and float/double results as
 * IEEE bit patterns of correctly rounded operations (+ - * / sqrt,
 * conversions), both sides built with -ffp-contract=off. */
#ifndef FWTEST_H
#define FWTEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A small deterministic generator (xorshift32) for test data. */
static inline uint32_t fw_rand(uint32_t *s)
{
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

/* Keep the compiler from folding a computation at compile time. */
#define FW_OPAQUE(v) (*(volatile __typeof__(v) *)&(v))

static inline void fw_print_u64(const char *label, uint64_t v)
{
  printf("%s %08" PRIx32 "%08" PRIx32 "\n", label, (uint32_t)(v >> 32), (uint32_t)v);
}

#endif
