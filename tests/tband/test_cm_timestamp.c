/* The Cortex-M port's timestamp (target/tband/ports/cortex-m/tband_port.h)
 * compiled for the host with a fake cycle counter: the 32->64-bit extension
 * and the cycles->ns conversion against exact 128-bit arithmetic, for the
 * clock given by TBAND_CM_CPU_HZ (and TBAND_CM_TS_SHIFT when set). The
 * multiply-shift path (f divides 1e9 * 2^k) must be exact, as must raw and
 * shifted cycles; the general fixed-point path is within 1 ns per 2^32
 * cycles. */
#include <stdint.h>
#include <stdio.h>

#include "check.h"

static uint32_t fake_cycles;
#define TBAND_CM_CYCLES() fake_cycles
#include "tband_port.h"

struct tband_cm_ts tband_cm_ts;

static uint64_t expect(uint64_t cyc)
{
#ifdef TBAND_CM_TS_SHIFT
  return cyc >> TBAND_CM_TS_SHIFT;
#else
  return (uint64_t)((unsigned __int128)cyc * 1000000000u / (TBAND_CM_CPU_HZ));
#endif
}

/* exact, or (general fixed-point path) at most high + 1 ns short */
static int ok(uint64_t got, uint64_t cyc)
{
  uint64_t e = expect(cyc);
#if TBAND_CM_TS_IS_CYCLES || TBAND_CM_NS_SHIFT
  if (got != e)
#else
  if (!(got <= e && e - got <= (cyc >> 32) + 1u))
#endif
  {
    printf("cycles %llu: got %llu, expected %llu\n", (unsigned long long)cyc,
           (unsigned long long)got, (unsigned long long)e);
    return 0;
  }
  return 1;
}

static void at(uint32_t high, uint32_t now)
{
  tband_cm_ts.high = high;
  tband_cm_ts.last = 0;
  fake_cycles = now;
  CHECK(ok(tband_cm_timestamp(), (uint64_t)high << 32 | now));
}

static void test_values(void)
{
  static const uint32_t lows[] = {0, 1, 7, 8, 63, 64, 999, 1000000, 0x7FFFFFFFu, 0xFFFFFFF8u,
                                  0xFFFFFFFFu};
  static const uint32_t highs[] = {0, 1, 2, 0xFFFF, 0x00FFFFFFu};
  for (unsigned h = 0; h < sizeof highs / sizeof highs[0]; h++)
    for (unsigned l = 0; l < sizeof lows / sizeof lows[0]; l++)
      at(highs[h], lows[l]);
  uint32_t x = 12345;
  for (int i = 0; i < 100000; i++) { /* pseudo-random, high below 2^24 */
    x = x * 1664525u + 1013904223u;
    uint32_t hi = x >> 8;
    x = x * 1664525u + 1013904223u;
    at(hi, x);
  }
}

static void test_wrap(void)
{
  /* the counter wraps: the high word counts it */
  tband_cm_ts.high = 0;
  tband_cm_ts.last = 0;
  fake_cycles = 0xFFFFFFF0u;
  uint64_t a = tband_cm_timestamp();
  fake_cycles = 0x10u;
  uint64_t b = tband_cm_timestamp();
  CHECK_EQ_U(tband_cm_ts.high, 1);
  CHECK(ok(a, 0xFFFFFFF0u));
  CHECK(ok(b, 0x100000010ull));
  CHECK(b > a);
}

int main(void)
{
  RUN(test_values);
  RUN(test_wrap);
  return check_summary();
}
