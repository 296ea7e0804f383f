/* tband_port.h for ARMv7-M / ARMv8-M Mainline (Cortex-M3/M4/M7/M33),
 * bare metal or under an RTOS that leaves PRIMASK/BASEPRI to it.
 *
 * Timestamps: the DWT cycle counter (DWT_CYCCNT, ARMv7-M ARM C1.8), extended
 * to 64 bits in software (call some tracer function at least once per 2^32
 * cycles), converted to ns by a fixed-point multiply unless the clock
 * divides 1 GHz exactly, in which case raw cycles are traced with
 * ts_resolution_ns = 1e9 / clock.
 * Critical sections: PRIMASK (all configurable interrupts), or BASEPRI when
 * TBAND_CM_CRITICAL_BASEPRI is set to a priority value (interrupts at that
 * priority or higher-numbered stay out; more urgent ones stay live and must
 * not trace).
 * Streaming: an ITM stimulus port (TBAND_CM_STREAM_ITM_PORT, default 0) or a
 * UART (define TBAND_CM_STREAM_UART_PUTC(byte) to a blocking putc).
 *
 * Settings (define before including, e.g. in tband_config.h):
 *   TBAND_CM_CPU_HZ               core clock in Hz (required)
 *   TBAND_CM_CRITICAL_BASEPRI     e.g. (5 << 4); default: use PRIMASK
 *   TBAND_CM_STREAM_ITM_PORT      stimulus port 0..31 (default 0)
 *   TBAND_CM_STREAM_UART_PUTC(b)  stream through this instead of ITM
 *   TBAND_CM_CYCLES()             another 32-bit cycle source (default DWT_CYCCNT)
 *   TBAND_CM_TS_SHIFT             trace cycles >> this (coarser, cheaper) instead
 *                                 of ns; 2^shift cycles must be whole ns
 *   TBAND_CM_FAST_ASM             0: no hand-written fast path (default 1 where it
 *                                 applies: snapshot backend or streaming over ITM,
 *                                 PRIMASK, GCC/Clang; needs TBAND_CM_CYCLES() to be
 *                                 a register)
 * Call tband_cm_init() once at start-up (enables DWT_CYCCNT and, when
 * streaming over ITM, the stimulus port), then tband_init(). */
#ifndef TBAND_PORT_H
#define TBAND_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef TBAND_CM_CPU_HZ
#error "tband cortex-m port: define TBAND_CM_CPU_HZ (core clock in Hz)"
#endif

#define TBAND_CM_DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#ifndef TBAND_CM_CYCLES
#define TBAND_CM_CYCLES() TBAND_CM_DWT_CYCCNT
#endif
#ifndef TBAND_CM_STREAM_ITM_PORT
#define TBAND_CM_STREAM_ITM_PORT 0
#endif

void tband_cm_init(void);
bool tband_cm_stream(const uint8_t *buf, size_t len);
/* For tests and benchmarks: continue as if the counter had wrapped `wraps`
 * times since start-up (wraps x 2^32 cycles of uptime: e.g. 1 = 67 s at
 * 64 MHz, where ns timestamps take 5 varlen bytes). */
void tband_cm_set_wraps(uint32_t wraps);

#ifdef TBAND_CM_TS_SHIFT
/* Opt-in: trace cycles >> TBAND_CM_TS_SHIFT, one unit = 2^shift / f s, which
 * must be a whole number of ns (ts_resolution_ns is an integer). Cheaper than
 * the ns conversion (a shift instead of a multiply, and smaller varlen
 * timestamps), at a coarser resolution: 64 MHz with shift 3 = 125 ns. */
#if ((1000000000ull << (TBAND_CM_TS_SHIFT)) % (TBAND_CM_CPU_HZ)) != 0
#error "tband cortex-m port: 2^TBAND_CM_TS_SHIFT cycles must be a whole number of ns"
#endif
#define TBAND_CM_TS_IS_CYCLES 1
#define tband_portTIMESTAMP_RESOLUTION_NS ((1000000000ull << (TBAND_CM_TS_SHIFT)) / (TBAND_CM_CPU_HZ))
#elif (1000000000ull % (TBAND_CM_CPU_HZ)) == 0
#define TBAND_CM_TS_SHIFT 0
#define TBAND_CM_TS_IS_CYCLES 1
#define tband_portTIMESTAMP_RESOLUTION_NS (1000000000ull / (TBAND_CM_CPU_HZ))
#else
#define TBAND_CM_TS_IS_CYCLES 0
#define tband_portTIMESTAMP_RESOLUTION_NS (1)
/* smallest k <= 8 with 1e9 * 2^k a multiple of f (0: none, general path) */
#define TBAND_CM_NS_K_(k) (((1000000000ull << (k)) % (TBAND_CM_CPU_HZ)) == 0)
#if TBAND_CM_NS_K_(1)
#define TBAND_CM_NS_SHIFT 1
#elif TBAND_CM_NS_K_(2)
#define TBAND_CM_NS_SHIFT 2
#elif TBAND_CM_NS_K_(3)
#define TBAND_CM_NS_SHIFT 3
#elif TBAND_CM_NS_K_(4)
#define TBAND_CM_NS_SHIFT 4
#elif TBAND_CM_NS_K_(5)
#define TBAND_CM_NS_SHIFT 5
#elif TBAND_CM_NS_K_(6)
#define TBAND_CM_NS_SHIFT 6
#elif TBAND_CM_NS_K_(7)
#define TBAND_CM_NS_SHIFT 7
#elif TBAND_CM_NS_K_(8)
#define TBAND_CM_NS_SHIFT 8
#else
#define TBAND_CM_NS_SHIFT 0
#endif
#endif

/* Extension state: only touched inside the tracer's critical section (all
 * callers of tband_portTIMESTAMP() hold it), so no further locking. Inline:
 * it is on every event's path. */
struct tband_cm_ts {
  uint32_t last; /* the counter at the previous call */
  uint32_t high; /* its wraps: bits 32..63 of the cycle count */
};
extern struct tband_cm_ts tband_cm_ts; /* one object: one address on the hot path */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline uint64_t tband_cm_timestamp(void)
{
  uint32_t now = TBAND_CM_CYCLES();
  uint32_t high = tband_cm_ts.high;
  if (__builtin_expect(now < tband_cm_ts.last, 0))
    tband_cm_ts.high = ++high;
  tband_cm_ts.last = now;
#if TBAND_CM_TS_IS_CYCLES
  return ((uint64_t)high << 32 | now) >> (TBAND_CM_TS_SHIFT);
#elif TBAND_CM_NS_SHIFT
  /* f divides 1e9 * 2^k (64 MHz: k = 3, 125 ns per 8 cycles): exactly
   * ns = cyc * M >> k with M = 1e9 * 2^k / f < 2^32, one UMULL and one MUL
   * (correct while ns < 2^(64-k): centuries) */
  const uint32_t m = (uint32_t)((1000000000ull << TBAND_CM_NS_SHIFT) / (TBAND_CM_CPU_HZ));
  uint64_t p = (uint64_t)now * m + ((uint64_t)(high * m) << 32);
  return p >> TBAND_CM_NS_SHIFT;
#else
  /* ns = cyc * 1e9 / f, as cyc * M >> 32 with M = 2^32 * 1e9 / f split into
   * its integer part MI and fraction MF (M itself is over 32 bits, and cyc * M
   * would overflow 64 bits after a few seconds): multiplies instead of a
   * 64-bit division; at most 1 ns short per 2^32 cycles */
  const uint64_t m = ((uint64_t)1000000000u << 32) / (TBAND_CM_CPU_HZ);
  const uint32_t mi = (uint32_t)(m >> 32), mf = (uint32_t)m;
  uint64_t cyc = (uint64_t)high << 32 | now;
  return cyc * mi + (uint64_t)high * mf + ((uint64_t)now * mf >> 32);
#endif
}
#define tband_portTIMESTAMP() tband_cm_timestamp()

#if TBAND_CM_TS_IS_CYCLES || TBAND_CM_NS_SHIFT
/* The timestamp window of the fast path (tband_fast.h, tband_core.c): where
 * ts(cyc) = (cyc * M) >> K exactly (raw or shifted cycles: M = 1, K = the
 * shift; ns with f dividing 1e9 * 2^K: M = 1e9 * 2^K / f), a base cycle count
 * that is a multiple of 2^K gives
 *   ts(base + d) = ts(base) + ((d * M) >> K),
 * so while the 32-bit counter is less than `span` cycles past `base`, the
 * timestamp's low 28 bits are lo + ((d * M) >> K) and its bits 28 and up are
 * those of ts(base), which the fast path's cache holds: no 64-bit extension,
 * no multiply of the whole count, no cache check. `span` ends the window
 * where bit 28 would change (and keeps d * M below 2^32); 0 = no window. The
 * generic path (re)arms it (tband_cm_win_arm). Like the extension, it needs
 * an event at least once per 2^32 cycles. */
#define TBAND_CM_WIN 1
#if TBAND_CM_TS_IS_CYCLES
#define TBAND_CM_WIN_M 1u
#define TBAND_CM_WIN_K (TBAND_CM_TS_SHIFT)
#else
#define TBAND_CM_WIN_M ((uint32_t)((1000000000ull << TBAND_CM_NS_SHIFT) / (TBAND_CM_CPU_HZ)))
#define TBAND_CM_WIN_K (TBAND_CM_NS_SHIFT)
#endif
/* The hand-written Thumb-2 fast path (tband_cm_fast_asm.h, docs/tband.md
 * "Cost per event") for markers without a message, value markers and ISR
 * enter/exit: on ARMv7-M/ARMv8-M Mainline with GCC or Clang, the snapshot
 * backend or streaming over ITM, PRIMASK critical sections and the window
 * above (streaming over ITM: from tband_cm_init() on). It reads the cycle
 * counter through its address, so TBAND_CM_CYCLES() must be a memory-mapped
 * register (an lvalue); define TBAND_CM_FAST_ASM 0 otherwise, or to compare. */
#ifndef TBAND_CM_FAST_ASM
#if defined(__GNUC__) && defined(__thumb2__) && defined(__ARM_ARCH_PROFILE) &&           \
    __ARM_ARCH_PROFILE == 'M' && defined(__BYTE_ORDER__) &&                             \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(TBAND_CM_CRITICAL_BASEPRI) &&  \
    !(defined(tband_configFAST_PATH) && !tband_configFAST_PATH) &&                      \
    ((defined(tband_configUSE_BACKEND_SNAPSHOT) && tband_configUSE_BACKEND_SNAPSHOT) ||  \
     (defined(tband_configUSE_BACKEND_STREAMING) && tband_configUSE_BACKEND_STREAMING && \
      !defined(TBAND_CM_STREAM_UART_PUTC)))
#define TBAND_CM_FAST_ASM 1
#else
#define TBAND_CM_FAST_ASM 0
#endif
#endif
/* streaming over ITM: the assembly writes the frame to the stimulus port itself */
#if TBAND_CM_FAST_ASM && defined(tband_configUSE_BACKEND_STREAMING) &&                     \
    tband_configUSE_BACKEND_STREAMING
#define TBAND_CM_FAST_ITM 1
#else
#define TBAND_CM_FAST_ITM 0
#endif
#if TBAND_CM_FAST_ASM
/* the API functions it takes over are tband_c_<name> in tband_core.c, its fallback */
#define tband_portFAST_EVENTS 1
#endif

struct tband_cm_win {
  uint32_t base; /* counter value, a multiple of 2^K */
  uint32_t span; /* cycles from base the window covers */
  uint32_t lo;   /* ts(base) & 0x0FFFFFFF */
#if TBAND_CM_FAST_ASM
  uint32_t aspan; /* span, or 0 where the assembly path does not apply (ts < 2^28) */
  uint32_t n4;    /* the frame length of [id][ts][1-byte field] in the window */
  uint32_t m;                   /* TBAND_CM_WIN_M */
#endif
};
/* it lives in the tracer's per-core state, beside the fast path's other fields */
#define tband_portFAST_STATE struct tband_cm_win

/* The low 28 bits of the current timestamp, if the counter is in the window. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline bool tband_cm_ts_lo(const struct tband_cm_win *w, uint32_t *lo)
{
  uint32_t d = TBAND_CM_CYCLES() - w->base;
  if (__builtin_expect(d >= w->span, 0))
    return false;
  *lo = w->lo + ((d * TBAND_CM_WIN_M) >> TBAND_CM_WIN_K);
  return true;
}

/* After tband_cm_timestamp() (inside the critical section): open a window at
 * the counter value it read, unless the current window covers that already.
 * The caller has just brought the fast path's cache to that timestamp. */
static inline void tband_cm_win_arm(struct tband_cm_win *w)
{
  const uint32_t m = TBAND_CM_WIN_M;
  uint32_t now = tband_cm_ts.last;
  if (now - w->base < w->span)
    return;
  uint32_t base = now & ~((1u << TBAND_CM_WIN_K) - 1u);
  uint64_t ts = (((uint64_t)tband_cm_ts.high << 32 | base) >> TBAND_CM_WIN_K) * m;
  uint32_t lo = (uint32_t)ts & 0x0FFFFFFFu;
  uint64_t span = (((uint64_t)(0x10000000u - lo) << TBAND_CM_WIN_K) + m - 1u) / m;
  if (span > 0xFFFFFFFFu / m)
    span = 0xFFFFFFFFu / m; /* d * M stays below 2^32 */
  if (span > 0x80000000u)
    span = 0x80000000u;
  /* not past 2^56 (the fast encoders' range), and `now` itself inside (its
   * bits 28 and up, which the cache now holds, are those of the window) */
  if ((ts >> 56) != 0 || now - base >= span)
    span = 0;
  w->base = base;
  w->lo = lo;
  w->span = (uint32_t)span;
#if TBAND_CM_FAST_ASM
  {
    /* ts's varlen is the 4 low bytes and those of ts >> 28 (1-4 bytes) */
    uint32_t key = (uint32_t)(ts >> 28);
    uint32_t kn = key < (1u << 7) ? 1u : key < (1u << 14) ? 2u : key < (1u << 21) ? 3u : 4u;
    w->aspan = key ? (uint32_t)span : 0u;
    w->n4 = 4u + kn + 4u;
    w->m = m;
  }
#endif
}
#define tband_portTS_LO(w, lo) tband_cm_ts_lo((w), (lo))
#define tband_portTS_ARM(w) tband_cm_win_arm(w)
#endif
#define tband_portNUMBER_OF_CORES (1)
#define tband_portGET_CORE_ID() (0)

#ifdef TBAND_CM_CRITICAL_BASEPRI
#define tband_portENTER_CRITICAL_FROM_ANY()                                          \
  uint32_t tband_port_key;                                                           \
  __asm__ volatile("mrs %0, basepri\n msr basepri_max, %1"                           \
                   : "=&r"(tband_port_key)                                           \
                   : "r"((uint32_t)(TBAND_CM_CRITICAL_BASEPRI))                      \
                   : "memory")
#define tband_portEXIT_CRITICAL_FROM_ANY() \
  __asm__ volatile("msr basepri, %0" ::"r"(tband_port_key) : "memory")
#else
#define tband_portENTER_CRITICAL_FROM_ANY()                                          \
  uint32_t tband_port_key;                                                           \
  __asm__ volatile("mrs %0, primask\n cpsid i" : "=r"(tband_port_key)::"memory")
#define tband_portEXIT_CRITICAL_FROM_ANY() \
  __asm__ volatile("msr primask, %0" ::"r"(tband_port_key) : "memory")
#endif

#define tband_portBACKEND_STREAM_DATA(buf, len) tband_cm_stream((buf), (len))
#define tband_portNOINIT_SECTION ".noinit"

#endif
