/* The debug and trace blocks of the virtual Cortex-M: DWT, ITM, TPIU and the
 * SWO pin (dbg_dwt.c, dbg_itm.c, dbg_tpiu.c, dbg_swo.c). Internal interface.
 *
 * Specs: ARMv7-M ARM (DDI 0403E) C1.6 ITM, C1.8 DWT, C1.10 TPIU, C1.6.2
 * DEMCR, Appendix D4 (ITM and DWT packets); Cortex-M3 TRM (DDI 0337) ch. 8
 * and Cortex-M4 TRM (DDI 0439) ch. 8 (DWT/ITM/TPIU implementation details).
 *
 * Data path (docs/vm.md "Debug and trace blocks"):
 *
 *   stimulus writes ---+
 *   DWT packets -------+--> vm_itm_emit() --> output FIFO (VM_DBG_FIFO_BYTES)
 *   (PC sample, exc,       (+ LTS timestamp,      |  a byte leaves the FIFO when its
 *    data trace, evcnt)     overflow, sync)        v  start bit begins on the pin
 *                                             SWO pin: (ACPR+1) cycles per bit,
 *                                             10 bit times per byte -> host callback
 *
 * The pin schedule is computed when a byte enters the FIFO (the FIFO drains in
 * order at a fixed rate), so each byte's start/end cycles are known at once and
 * the FIFO occupancy at cycle t is the number of bytes whose start is > t.
 *
 * Per-instruction work (data comparators, event counters, a pending PC sample)
 * runs from the CPU's hooked path: vm->dbg_observe makes vm->hooked true. PC
 * sampling and sync packets are timed with a system timer (vm->event_cycle),
 * so the fast path keeps running between samples. */
#ifndef SONDE_VM_DBG_H
#define SONDE_VM_DBG_H

#include <stdbool.h>
#include <stdint.h>

#include "sonde/vm.h"

struct sonde_vm;

#define VM_DWT_BASE 0xE0001000u
#define VM_ITM_BASE 0xE0000000u
#define VM_TPIU_BASE 0xE0040000u
#define VM_DBG_FIFO_BYTES 16u /* ITM+TPIU output FIFO depth (docs/vm.md) */
#define VM_DWT_NUMCOMP 4u

/* DEMCR bits (ARMv7-M C1.6.5) */
#define VM_DEMCR_TRCENA (1u << 24)

/* DWT_CTRL bits (C1.8.7) */
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_POSTPRESET_SHIFT 1
#define DWT_CTRL_POSTINIT_SHIFT 5
#define DWT_CTRL_CYCTAP (1u << 9)
#define DWT_CTRL_SYNCTAP_SHIFT 10
#define DWT_CTRL_PCSAMPLENA (1u << 12)
#define DWT_CTRL_EXCTRCENA (1u << 16)
#define DWT_CTRL_CPIEVTENA (1u << 17)
#define DWT_CTRL_EXCEVTENA (1u << 18)
#define DWT_CTRL_SLEEPEVTENA (1u << 19)
#define DWT_CTRL_LSUEVTENA (1u << 20)
#define DWT_CTRL_FOLDEVTENA (1u << 21)
#define DWT_CTRL_CYCEVTENA (1u << 22)

/* DWT_FUNCTIONn bits (C1.8.17) */
#define DWT_FUNC_CYCMATCH (1u << 7)
#define DWT_FUNC_DATAVMATCH (1u << 8)
#define DWT_FUNC_LNK1ENA (1u << 9)
#define DWT_FUNC_MATCHED (1u << 24)

/* ITM_TCR bits (C1.7.6 / C1.6) */
#define ITM_TCR_ITMENA (1u << 0)
#define ITM_TCR_TSENA (1u << 1)
#define ITM_TCR_SYNCENA (1u << 2)
#define ITM_TCR_TXENA (1u << 3)
#define ITM_TCR_SWOENA (1u << 4)
#define ITM_TCR_BUSY (1u << 23)
#define ITM_TCR_GTSFREQ_SHIFT 10
#define VM_GTS_BITS 48u /* global timestamp width (GTS2 with 4 payload bytes) */

struct vm_dbg {
  uint32_t demcr;
  /* ---- DWT ---- */
  uint32_t dwt_ctrl;          /* writable bits; POSTCNT is kept in postcnt */
  uint32_t cyccnt_at_base;    /* CYCCNT value at cycle cyc_base (while counting) */
  uint64_t cyc_base;
  bool cyc_running;           /* CYCCNTENA && TRCENA */
  uint8_t postcnt;
  uint64_t next_ev;           /* cycle of the next sampling event (UINT64_MAX: none) */
  uint64_t next_sync;         /* cycle of the next SYNCTAP event */
  int timer;                  /* vm_sys timer id */
  bool sample_pending;        /* a PC sample due when the VM had not passed its cycle */
  uint64_t sample_cycle;      /* ... due at this cycle */
  uint64_t next_cmp;          /* cycle of comparator 0's next CYCMATCH (UINT64_MAX: none) */
  bool cmp_pending;           /* the same for a CYCMATCH PC sample */
  uint64_t cmp_cycle;         /* ... due at this cycle */
  bool pend_prev;             /* when they became pending: an instruction had run, */
  uint32_t pend_prev_pc;      /* ... this one (cpu.exec_pc) */
  uint8_t cpicnt, exccnt, sleepcnt, lsucnt, foldcnt;
  uint64_t sleep_seen;        /* vm->sys.sleep_cycles at the last retire */
  uint32_t comp[VM_DWT_NUMCOMP], mask[VM_DWT_NUMCOMP], function[VM_DWT_NUMCOMP];
  bool data_trace;            /* some comparator has a data function */
  /* ---- ITM ---- */
  uint32_t itm_ter, itm_tpr, itm_tcr;
  bool itm_unlocked;
  uint64_t ts_last;           /* cycle of the last local timestamp (prescaled base) */
  bool overflow;              /* a packet was lost; an overflow packet is owed */
  bool ts_owed;               /* emit a timestamp after the next packet (TC delayed) */
  /* global timestamps (dbg_itm.c): the counter is the core cycle count, 48 bits */
  uint64_t next_gts;          /* cycle of the next GTSFREQ 01/10 request (UINT64_MAX: none) */
  uint32_t gts_lo;            /* TS[25:0] of the last GTS1 sent */
  uint32_t gts_hi;            /* TS[47:26] of the last GTS2 sent */
  bool gts_full;              /* the next GTS is a full GTS1 + GTS2 (after enable, sync, loss) */
  uint64_t gts_sent;          /* GTS1 packets sent */
  /* ---- TPIU ---- */
  uint32_t acpr, sppr, ffcr, cspsr;
  /* ---- SWO pin and FIFO ---- */
  /* The queued bytes' start cycles, in queue order, as a ring of runs: the
   * bytes of a packet start one after the other (vm_swo_schedule), so a run
   * {first, step, n} holds n bytes starting at first + i x step; formatted
   * bytes wait for their frame with first = UINT64_MAX, step 0. At most
   * VM_DBG_FIFO_BYTES bytes, hence runs. */
  struct vm_fifo_run {
    uint64_t first;
    uint32_t step, n;
  } fifo_run[VM_DBG_FIFO_BYTES];
  unsigned fifo_head, fifo_runs; /* first run (ring index), runs queued */
  unsigned fifo_n;               /* bytes queued */
  uint64_t pin_free;          /* cycle the pin finishes its last scheduled byte */
  /* ---- TPIU formatter (FFCR.EnFCont; dbg_swo.c) ---- */
  uint8_t fmt_frame[16];      /* frame being built: 15 slots + aux byte */
  unsigned fmt_pos;           /* next free slot 0..15 (15: full) */
  unsigned fmt_pending;       /* source bytes in the frame (their FIFO slot awaits it) */
  int fmt_id;                 /* trace ID of the last slot (-1: none stated yet) */
  unsigned fmt_frames;        /* frames sent since the last full sync */
  uint64_t fmt_last;          /* cycle of the newest source byte in the frame */
  int fmt_timer;              /* vm_sys timer: sends a partial frame once the pin idles */
  uint64_t bytes_out, packets_lost, overflows;
  sonde_vm_swo_fn swo_fn;
  void *swo_ctx;
  int swo_error;
};

/* Creation (vm.c calls vm_dbg_create after vm_sys_init). */
int vm_dbg_create(struct sonde_vm *vm);
void vm_dbg_free(struct sonde_vm *vm);
/* System reset: the debug blocks keep their state (reset by power-on only). */
void vm_dbg_reset(struct sonde_vm *vm, bool power_on);

/* Observers called by the CPU (hooked path, when vm->dbg_observe) and the
 * exception model (always, when vm->dbg). */
void vm_dbg_transfer(struct sonde_vm *vm, uint32_t pc, uint32_t addr, unsigned size,
                     uint32_t value, bool write, uint64_t cycle);
void vm_dbg_retire(struct sonde_vm *vm, uint32_t pc, uint64_t start, uint32_t cycles,
                   unsigned ntransfers);
void vm_dbg_exception(struct sonde_vm *vm, enum sonde_vm_exc_event ev, unsigned exc);
/* The core sleeps on after the timers due now fired (exception.c): a PC
 * sample pending at this cycle is the sleep form. */
void vm_dbg_asleep(struct sonde_vm *vm);
/* The run stops (exit, lockup, halt: no service follows): the PC samples
 * due before the current cycle, whose timers would fire one cycle later. */
void vm_dbg_settle(struct sonde_vm *vm);
/* Recompute vm->dbg_observe and vm->hooked (after a register write). */
void vm_dbg_update_observe(struct sonde_vm *vm);

/* DWT (dbg_dwt.c) */
extern const struct vm_device_ops vm_dwt_ops;
uint32_t vm_dwt_cyccnt(const struct sonde_vm *vm);
void vm_dwt_schedule(struct sonde_vm *vm);
/* The DWT's timer (vm_dbg.timer) due, with no other timer due (the
 * service, exception.c): when it is for one periodic PC sample and nothing
 * else (no sample pending, no other DWT/ITM event due) and the packet takes
 * the ITM's common case (vm_itm_emit_plain), take it and return the cycle
 * the timer is due next, for the caller to re-arm it; else return 0, having
 * done nothing (the timer's `fire` then does the general work). A sample
 * changes no NVIC state. */
uint64_t vm_dwt_sample_plain(struct sonde_vm *vm);

/* ITM (dbg_itm.c): queue one packet (hardware source or stimulus) generated
 * at `cycle`. Returns false when it was dropped (FIFO full: overflow). */
extern const struct vm_device_ops vm_itm_ops;
bool vm_itm_emit(struct sonde_vm *vm, const uint8_t *pkt, unsigned len, uint64_t cycle,
                 bool hw);
void vm_itm_sync(struct sonde_vm *vm, uint64_t cycle);
/* Global timestamps (ARMv7-M D4.2.5): GTSFREQ (ITM_TCR[11:10]) and the cycle
 * of the next periodic request; emit a GTS1 (+ GTS2) for `cycle`. */
unsigned vm_itm_gtsfreq(const struct vm_dbg *d);
uint64_t vm_itm_next_gts(struct sonde_vm *vm);
void vm_itm_gts(struct sonde_vm *vm, uint64_t cycle);
bool vm_itm_enabled(const struct sonde_vm *vm);

/* TPIU (dbg_tpiu.c) */
extern const struct vm_device_ops vm_tpiu_ops;
/* SCS debug registers (DEMCR etc.), installed as vm->sys.debug_ops. */
extern const struct vm_device_ops vm_dbg_scs_ops;

/* SWO pin and FIFO (dbg_swo.c) */
unsigned vm_swo_fifo_used(struct sonde_vm *vm, uint64_t cycle);
/* Queue bytes at `cycle` (caller checked the space). */
void vm_swo_push(struct sonde_vm *vm, const uint8_t *b, unsigned n, uint64_t cycle);
/* vm_swo_push without the formatter (FFCR.EnFCont clear, no frame pending):
 * the bytes go to the pin; returns the first one's start cycle. */
uint64_t vm_swo_push_plain(struct sonde_vm *vm, const uint8_t *b, unsigned n, uint64_t cycle);

/* Queue n bytes, byte i starting at first + i x step (n <= the room left):
 * they join the last run when they follow it. */
static inline void vm_fifo_queue(struct vm_dbg *d, uint64_t first, uint32_t step, unsigned n)
{
  if (!n)
    return;
  if (d->fifo_runs) {
    struct vm_fifo_run *r =
        &d->fifo_run[(d->fifo_head + d->fifo_runs - 1) % VM_DBG_FIFO_BYTES];
    if (r->step == step && r->first + (uint64_t)r->n * step == first) {
      r->n += n;
      d->fifo_n += n;
      return;
    }
  }
  struct vm_fifo_run *r = &d->fifo_run[(d->fifo_head + d->fifo_runs) % VM_DBG_FIFO_BYTES];
  r->first = first;
  r->step = step;
  r->n = n;
  d->fifo_runs++;
  d->fifo_n += n;
}

/* Bytes leave the FIFO from its head while their start cycle is <= `cycle`
 * (the first one later stops it, as the ring of single bytes did). Returns
 * the bytes left. */
static inline unsigned vm_fifo_pop(struct vm_dbg *d, uint64_t cycle)
{
  while (d->fifo_runs) {
    struct vm_fifo_run *r = &d->fifo_run[d->fifo_head];
    if (r->first > cycle)
      break;
    uint64_t last = r->first + (uint64_t)(r->n - 1) * r->step;
    if (last > cycle) { /* part of the run started (step > 0 here) */
      uint64_t k = (cycle - r->first) / r->step + 1;
      r->first += k * r->step;
      r->n -= (uint32_t)k;
      d->fifo_n -= (unsigned)k;
      break;
    }
    d->fifo_n -= r->n;
    d->fifo_head = (d->fifo_head + 1) % VM_DBG_FIFO_BYTES;
    d->fifo_runs--;
  }
  return d->fifo_n;
}

/* Empty the FIFO (every queued byte started). */
static inline void vm_fifo_clear(struct vm_dbg *d)
{
  d->fifo_head = (d->fifo_head + d->fifo_runs) % VM_DBG_FIFO_BYTES;
  d->fifo_runs = 0;
  d->fifo_n = 0;
}

/* The pin's schedule for n bytes, the first not before `cycle` (the pin
 * drains at a fixed rate: byte i starts at first + i x 10 bit times);
 * `queue`: they also enter the output FIFO until their start bit (as many
 * as fit). Returns the first one's start cycle. The bytes themselves go to
 * the SWO callback (dbg_swo.c pin_send). */
static inline uint64_t vm_swo_schedule(struct vm_dbg *d, unsigned n, uint64_t cycle, bool queue)
{
  const uint32_t step = 10u * ((d->acpr & 0x1FFFu) + 1);
  const uint64_t first = cycle > d->pin_free ? cycle : d->pin_free;
  if (queue) {
    unsigned k = VM_DBG_FIFO_BYTES - d->fifo_n;
    vm_fifo_queue(d, first, step, k > n ? n : k);
  }
  d->pin_free = first + (uint64_t)n * step;
  d->bytes_out += n;
  return first;
}
/* The formatter's idle timer (vm_sys timer callback), and re-arming it after a
 * system reset disarmed every timer. */
void vm_swo_timer_fire(struct sonde_vm *vm, void *ctx);
void vm_swo_rearm(struct sonde_vm *vm);
#define VM_TPIU_SYNC_FRAMES 8u /* formatter: a full sync before every 8th frame */
#define TPIU_FFCR_ENFCONT (1u << 1)


/* ---- the ITM's common case inline (dbg_itm.c), for the DWT's PC samples ---- */

/* The ITM takes no packet (from this source) now. */
static inline bool vm_itm_off(const struct vm_dbg *d, uint32_t tcr, bool hw)
{
  return !(d->demcr & VM_DEMCR_TRCENA) || !(tcr & ITM_TCR_ITMENA) ||
         (hw && !(tcr & ITM_TCR_TXENA));
}

/* dbg_itm.c emit_plain's case: no formatter, no overflow owed, no GTSFREQ 11. */
static inline bool vm_itm_plain_case(const struct vm_dbg *d, uint32_t tcr)
{
  return !(d->ffcr & TPIU_FFCR_ENFCONT) && !d->fmt_pending && !d->overflow &&
         ((tcr >> ITM_TCR_GTSFREQ_SHIFT) & 3) != 3;
}

/* The length of the packet lts_encode() writes. */
static inline unsigned vm_lts_len(uint32_t delta, unsigned tc)
{
  if (tc == 0 && delta - 1 < 6)
    return 1;
  return 2u + (delta >= 1u << 7) + (delta >= 1u << 14) + (delta >= 1u << 21);
}

/* The local timestamp after a packet at `cycle` (ITM_TCR.TSENA), with
 * `room` bytes left for it in the FIFO: its length, ts_last moved on; 0
 * when it does not fit (owed: TC = 1 after the next packet). */
static inline unsigned vm_itm_ts_take(struct vm_dbg *d, uint32_t tcr, uint64_t cycle,
                                      unsigned room)
{
  unsigned shift = 2 * ((tcr >> 8) & 3); /* TSPrescale 1, 4, 16, 64 */
  uint64_t ticks = (cycle - d->ts_last) >> shift;
  uint32_t delta = (uint32_t)(ticks > 0x0FFFFFFFu ? 0x0FFFFFFFu : ticks);
  unsigned n = vm_lts_len(delta, d->ts_owed ? 1 : 0);
  if (room < n) {
    d->ts_owed = true;
    return 0;
  }
  d->ts_last += ticks << shift;
  d->ts_owed = false;
  return n;
}

/* emit_plain_quiet (dbg_itm.c) when the pin is idle at `cycle` (pin_free <=
 * cycle: every queued byte has started, the FIFO empties): the packet's
 * first byte starts at `cycle` and leaves the FIFO at once, the rest and
 * the timestamp queue behind it. Its steps with used 0 and first cycle. */
static inline __attribute__((always_inline)) bool
vm_itm_emit_idle(struct vm_dbg *d, unsigned len, uint64_t cycle)
{
  vm_fifo_clear(d);
  if (VM_DBG_FIFO_BYTES < len)
    return false; /* the general path counts the loss */
  const uint32_t step = 10u * ((d->acpr & 0x1FFFu) + 1);
  const uint32_t tcr = d->itm_tcr;
  unsigned q = len;
  if (!(tcr & ITM_TCR_TSENA)) {
    d->pin_free = cycle + (uint64_t)q * step;
    d->bytes_out += q;
    vm_fifo_queue(d, cycle, step, q);
    return true;
  }
  q += vm_itm_ts_take(d, tcr, cycle, VM_DBG_FIFO_BYTES - (len - 1));
  d->pin_free = cycle + (uint64_t)q * step;
  d->bytes_out += q;
  vm_fifo_queue(d, cycle + step, step, q - 1);
  return true;
}

/* dbg_itm.c emit_plain (what vm_itm_emit_plain leaves out of line). */
bool vm_itm_emit_plain_busy(struct sonde_vm *vm, const uint8_t *pkt, unsigned len, uint64_t cycle);

/* vm_itm_emit's common case alone (no formatter, overflow or GTSFREQ 11,
 * room in the FIFO), for the ITM `d` of vm: true when the packet is queued,
 * or dropped because the ITM is off (as vm_itm_emit drops it); false,
 * having queued nothing, when vm_itm_emit's general path is needed. */
static inline bool vm_itm_emit_plain(struct sonde_vm *vm, struct vm_dbg *d, const uint8_t *pkt,
                                     unsigned len, uint64_t cycle, bool hw)
{
  const uint32_t tcr = d->itm_tcr;
  if (vm_itm_off(d, tcr, hw))
    return true;
  if (!vm_itm_plain_case(d, tcr))
    return false;
  /* emit_plain's first case (emit_plain_quiet) with the pin idle: most PC
   * samples, which come further apart than their bytes take on the pin */
  if (d->swo_fn == NULL && d->ts_last <= cycle && d->pin_free <= cycle)
    return vm_itm_emit_idle(d, len, cycle);
  return vm_itm_emit_plain_busy(vm, pkt, len, cycle);
}

#endif
