/* Bare-metal tracer demo for Sonde's virtual Cortex-M: event markers (spans
 * and instants), a value marker and the SysTick interrupt, streamed over the
 * UART (default) or recorded into a snapshot and dumped over the UART at the
 * end (TBAND_DEMO_SNAPSHOT). At the end it traces what it did (jobs done,
 * interrupts taken) as value markers 90/91, so the host can check the trace
 * against the firmware's own counts. With TBAND_DEMO_BENCH it instead times
 * the tracer itself with the cycle counter and traces the cycles per event
 * (x 100), at start-up (value markers 100-102) and as after a minute of
 * uptime (103-105).
 *
 *   sonde run --machine cm3 --uart trace.bin build/firmware/tband_vm_stream.elf
 *   sonde tband conv --mode bare-metal -o demo.perfetto-trace trace.bin */
#include "sonde_fw.h"
#include "tband.h"
#ifdef TBAND_DEMO_NULL
#include "tband_encode.h" /* result() frames its figures itself */
#endif
#ifdef TBAND_VM_STREAM_ITM
#include "cm_trace.h" /* target/cortexm: TPIU/SWO setup */
#endif

#define JOBS 40
#define ISR_SYSTICK 15 /* exception number */

static volatile uint32_t isr_count;

void SysTick_Handler(void)
{
  tband_isr_enter(ISR_SYSTICK);
  isr_count++;
  tband_isr_exit(ISR_SYSTICK);
}

static void uart_write(const uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    while (!(TBAND_VM_REG(TBAND_VM_UART0_BASE + 0x04u) & 1u)) { /* TXE */
    }
    TBAND_VM_REG(TBAND_VM_UART0_BASE + 0x00u) = p[i];
  }
}

static __attribute__((unused)) uint32_t work(uint32_t x)
{
  for (int i = 0; i < 50; i++)
    x = x * 1664525u + 1013904223u;
  return x;
}

#ifdef TBAND_DEMO_BENCH
/* A result, cycles x 100, as value marker `id`. Into the trace, except with
 * the null backend (TBAND_DEMO_NULL: the tracer's own cost, no transport),
 * which keeps nothing: there the frame goes straight to the UART. */
static void result(uint32_t id, int64_t v)
{
#ifdef TBAND_DEMO_NULL
  uint8_t b[TBAND_EVT_valmarker_MAXLEN];
  uart_write(b, tband_encode_valmarker(b, 0, id, v));
#else
  tband_valmarker(id, v);
#endif
}

/* cycles of n calls of `stmt`, minus the same loop empty */
#define TIME_N(n, stmt)                                     \
  ({                                                        \
    uint32_t t0_ = TBAND_CM_CYCLES();                       \
    for (int i_ = 0; i_ < (n); i_++) {                      \
      stmt;                                                 \
      __asm__ volatile("" ::: "memory");                    \
    }                                                       \
    uint32_t t1_ = TBAND_CM_CYCLES();                       \
    for (int i_ = 0; i_ < (n); i_++)                        \
      __asm__ volatile("" ::: "memory");                    \
    uint32_t t2_ = TBAND_CM_CYCLES();                       \
    (int64_t)((t1_ - t0_) - (t2_ - t1_)) * 100 / (n);       \
  })
#endif

int main(void)
{
  tband_vm_init();
#ifdef TBAND_VM_STREAM_ITM
  cm_tpiu_swo(0, 1);          /* SWO at the full trace clock, NRZ, no formatter */
  cm_itm_setup(1u, 0, 0, 0);  /* stimulus port 0 only, no timestamps/sync/hw packets */
#endif
#if defined(TBAND_VM_STREAM_ITM) || defined(TBAND_VM_USE_DWT)
  tband_cm_init();            /* DWT_CYCCNT on, ITM port 0 enabled */
#endif
  tband_init();
#ifdef TBAND_DEMO_SNAPSHOT
  tband_trigger_snapshot();
#endif
#if defined(TBAND_DEMO_WINDOW) && defined(TBAND_VM_USE_DWT)
  /* The fast path's timestamp window (tband_port.h) across its edges: the
   * cycle counter starts just before it wraps, and pairs of a fast event
   * (marker 1, no message) and a generic one (marker 2 with a message, which
   * re-arms the window) follow each other at growing distances, over more
   * than two 2^28 ns windows (tests/cli/tband_vm.sh: time never goes back,
   * and each pair is at most a few microseconds apart). */
  TBAND_CM_DWT_CYCCNT = 0xFFF00000u;
  uint32_t x = 1;
  for (uint32_t j = 0; j < 300; j++) {
    for (uint32_t k = 0; k < 40 + j * 7; k++)
      x = work(x);
    tband_evtmarker(1, "");
    tband_evtmarker(2, "g");
    if (j % 3 == 0)
      tband_isr_enter(3);
  }
  tband_valmarker(92, (int64_t)tband_cm_ts.high); /* 1: the counter wrapped */
  isr_count = x; /* keeps the work */
#elif defined(TBAND_DEMO_ASMCHECK) && defined(TBAND_VM_USE_DWT)
  /* The one-field events (the Cortex-M port's assembly path where it
   * applies) in every timestamp length: 1-4 bytes after start-up, 5-8 with
   * the counter's wrap count set, and past 2^56 (generic encoder), with ids
   * 0..200, NULL and non-empty messages, value markers at the edges of
   * their encodings, counter jumps across windows, and at the end a full
   * buffer. Before each
   * one, a value marker that only the generic encoder takes (value >= 2^27)
   * says what follows: 2^28 + kind * 256 + id (tests/cli/tband_vm.sh checks
   * the event, its order and its timestamp against it). */
  static const uint32_t phase_cnt[] = {0x100u, 0x10000000u, 0, 0, 0, 0};
  /* value marker values: the edges of 1-4 varlen bytes (sign-magnitude), 0,
   * the fast path's limit |v| < 2^27 and beyond (12345: random) */
  static const int64_t vals[] = {0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, 1048575,
                                 -1048576, 134217727, -134217727, 134217728, -134217728,
                                 2147483647, -2147483647 - 1, (int64_t)1 << 40, 12345};
  static const uint32_t phase_wraps[] = {0, 0, 1, 0x400u, 0x80000u, 0x200000u};
  uint32_t x = 12345;
#ifndef TBAND_DEMO_ASMCHECK_PHASES
#define TBAND_DEMO_ASMCHECK_PHASES 6 /* 5: end before 2^56, fill on the fast path */
#endif
  for (unsigned ph = 0; ph < TBAND_DEMO_ASMCHECK_PHASES; ph++) {
    uint32_t wraps = phase_wraps[ph];
    if (ph > 1 && wraps <= tband_cm_ts.high) /* time must not go back */
      wraps = tband_cm_ts.high + 1;
    TBAND_CM_DWT_CYCCNT = phase_cnt[ph];
    tband_cm_set_wraps(wraps);
    for (unsigned j = 0; j < 150; j++) {
      x = x * 1664525u + 1013904223u;
      uint32_t kind = (x >> 8) % 8, id = (x >> 16) & 127u;
      if ((x & 0x1Fu) == 3)
        id = (x & 0x40u) ? 0u : 128u + ((x >> 24) & 63u); /* not one byte: C */
      if (ph > 0 && (x & 0x0Fu) == 5) /* jump: up to 2^27 cycles, across windows */
        TBAND_CM_DWT_CYCCNT = TBAND_CM_DWT_CYCCNT + ((x >> 5) & 0x07FFFFFFu);
      int64_t v = 0;
      if (kind == 7) { /* a value marker: its value announced too, + 2^40 */
        v = vals[(x >> 3) % (sizeof vals / sizeof vals[0])];
        if (v == 12345)
          v = (int32_t)(x * 2654435761u) >> ((x >> 27) & 31u); /* any width */
        tband_valmarker(201, v + ((int64_t)1 << 40));
      }
      tband_valmarker(200, (int64_t)((1u << 28) + kind * 256u + id));
      switch (kind) {
      case 0: tband_evtmarker(id, ""); break;
      case 1: tband_evtmarker(id, 0); break;
      case 2: tband_evtmarker_begin(id, ""); break;
      case 3: tband_evtmarker_end(id); break;
      case 4: tband_isr_enter(id); break;
      case 5: tband_isr_exit(id); break;
      case 6: tband_evtmarker(id, "m"); break;
      default: tband_valmarker(id, v); break;
      }
    }
  }
#ifdef TBAND_DEMO_SNAPSHOT
  /* then fill the buffer: the last frame must still be whole */
  while (!tband_snapshot_full())
    tband_isr_enter(7);
#else
  tband_isr_enter(7); /* (the same last event as with the snapshot) */
  /* ITM port 0 off (no debugger listening): three events dropped and
   * counted; on again, the next event is followed by the count */
  volatile uint32_t *ter = (volatile uint32_t *)0xE0000E00u;
  *ter &= ~1u;
  tband_evtmarker(3, "");
  tband_isr_enter(3);
  tband_valmarker(3, 5);
  *ter |= 1u;
  tband_isr_exit(7);
#endif
#elif defined(TBAND_DEMO_BENCH)
  /* cycles x 100 per event, traced as value markers 100.. */
  int64_t marker = TIME_N(200, tband_evtmarker(1, ""));
  int64_t valmarker = TIME_N(200, tband_valmarker(2, 12345));
  int64_t isr = TIME_N(200, tband_isr_enter(3));
  /* the same after the cycle counter wrapped once (67 s of uptime at
   * 64 MHz): timestamps of 5+ varlen bytes, as in any but the first 0.27 s
   * of a ns clock (docs/benchmarks.md) */
  tband_cm_set_wraps(1);
#ifdef TBAND_DEMO_SNAPSHOT
  tband_reset_snapshot(); /* room for the second round (8 KiB buffer) */
  tband_trigger_snapshot();
#endif
  int64_t marker_up = TIME_N(200, tband_evtmarker(1, ""));
  int64_t valmarker_up = TIME_N(200, tband_valmarker(2, 12345));
  int64_t isr_up = TIME_N(200, tband_isr_enter(3));
  result(100, marker);
  result(101, valmarker);
  result(102, isr);
  result(103, marker_up);
  result(104, valmarker_up);
  result(105, isr_up);
#elif !defined(TBAND_DEMO_WINDOW) && !defined(TBAND_DEMO_ASMCHECK)
  tband_evtmarker_name(1, "job");
  tband_evtmarker_name(2, "tick seen");
  tband_valmarker_name(1, "result");
  tband_isr_name(ISR_SYSTICK, "SysTick");
#ifdef TBAND_CM_CRITICAL_BASEPRI
  /* BASEPRI only masks interrupts at its level or below: SysTick must be there */
  SCB_SHPR3 = (SCB_SHPR3 & 0x00FFFFFFu) | (0xE0u << 24);
#endif
  SYST_RVR = 1500 - 1; /* an interrupt every 1500 cycles */
  SYST_CVR = 0;
  SYST_CSR = 7;        /* processor clock, interrupt, enable */
  uint32_t x = 1, seen = 0;
  for (uint32_t j = 0; j < JOBS; j++) {
    tband_evtmarker_begin(1, "job");
    x = work(x);
    tband_valmarker(1, (int64_t)j);
    tband_evtmarker_end(1);
    if (isr_count != seen) {
      seen = isr_count;
      tband_evtmarker(2, "");
    }
  }
  SYST_CSR = 0;
  tband_valmarker(90, JOBS);
  tband_valmarker(91, (int64_t)isr_count);
#endif
#ifdef TBAND_DEMO_SNAPSHOT
  size_t len;
  const uint8_t *m = tband_get_metadata_buf(&len);
  uart_write(m, len);
  const uint8_t *s = tband_get_core_snapshot_buf(0, &len);
  uart_write(s, len);
#else
  (void)uart_write;
#endif
  sonde_exit(0);
}
