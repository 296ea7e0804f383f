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

#if TBAND_CM_WIN
static struct tband_cm_win win;

/* The fast path's window (tband_cm_ts_lo): armed at a timestamp, every
 * counter value inside it gives the exact low 28 bits with the same bits 28
 * and up; the window ends where those change (or at its caps). */
static int window_ok(uint32_t high, uint32_t now, uint32_t step)
{
  tband_cm_ts.high = high;
  tband_cm_ts.last = now;
  fake_cycles = now;
  uint64_t ts = tband_cm_timestamp();
  win.span = 0;
  tband_cm_win_arm(&win);
  uint32_t base = win.base, span = win.span;
  if (span == 0) /* allowed only past 2^56, or when a 2^28 boundary lies in [base, now] */
    return (ts >> 56) != 0 || (expect((uint64_t)high << 32 | base) >> 28) != (ts >> 28);
  if (now - base >= span || base > now || (base & ((1u << TBAND_CM_WIN_K) - 1)))
    return 0;
  uint64_t cyc0 = ((uint64_t)high << 32 | base);
  for (uint64_t d = 0; d < span; d += step) {
    for (int e = 0; e < 2; e++) {
      uint32_t dd = e ? span - 1 - (uint32_t)(d % span) : (uint32_t)d;
      uint32_t lo;
      fake_cycles = base + dd;
      if (!tband_cm_ts_lo(&win, &lo))
        return 0;
      uint64_t want = expect(cyc0 + dd);
      if (lo != (uint32_t)(want & 0x0FFFFFFFu) || (want >> 28) != (ts >> 28)) {
        printf("window at %u:%u, d %u: lo %u, want %llu\n", high, now, dd, lo,
               (unsigned long long)want);
        return 0;
      }
    }
  }
  fake_cycles = base + span;
  uint32_t lo;
  if (tband_cm_ts_lo(&win, &lo)) /* the first cycle past the window is outside */
    return 0;
  /* maximal unless capped: at base + span bits 28 and up changed */
  if (span < 0xFFFFFFFFu / TBAND_CM_WIN_M && span < 0x80000000u &&
      (expect(cyc0 + span) >> 28) == (ts >> 28))
    return 0;
  return 1;
}

static void test_window(void)
{
  static const uint32_t highs[] = {0, 1, 7, 0xFFFF};
  static const uint32_t lows[] = {0, 1, 8, 0x0FFFFFF0u, 0x7FFFFFFFu, 0xFFFFFFF8u, 0xFFFFFFFFu};
  for (unsigned h = 0; h < sizeof highs / sizeof highs[0]; h++)
    for (unsigned l = 0; l < sizeof lows / sizeof lows[0]; l++)
      CHECK(window_ok(highs[h], lows[l], 99991));
  uint32_t x = 777;
  for (int i = 0; i < 300; i++) {
    x = x * 1664525u + 1013904223u;
    uint32_t hi = x >> 20;
    x = x * 1664525u + 1013904223u;
    CHECK(window_ok(hi, x, 1000003));
  }
  /* a counter wrap inside the window: the timestamp runs on */
  tband_cm_ts.high = 3;
  tband_cm_ts.last = 0xFFFFFF00u;
  fake_cycles = 0xFFFFFF00u;
  (void)tband_cm_timestamp();
  win.span = 0;
  tband_cm_win_arm(&win);
  if (win.span > 0x200u) {
    uint32_t lo;
    fake_cycles = 0x100u; /* 0x200 cycles later, past the wrap */
    CHECK(tband_cm_ts_lo(&win, &lo));
    CHECK_EQ_U(lo, (uint32_t)(expect((4ull << 32) | 0x100u) & 0x0FFFFFFFu));
  }
}
#endif

int main(void)
{
  RUN(test_values);
  RUN(test_wrap);
#if TBAND_CM_WIN
  RUN(test_window);
#endif
  return check_summary();
}
