/* Data Watchpoint and Trace unit at 0xE0001000 (ARMv7-M ARM C1.8 "The Data
 * Watchpoint and Trace unit": C1.8.2 PC sampling, C1.8.3 event counters,
 * C1.8.4 comparators, C1.8.6 register summary; packets D4.3; Cortex-M3 TRM
 * DDI 0337 8.3 / Cortex-M4 TRM DDI 0439 8.3: four comparators, comparator 0
 * can match CYCCNT, comparator 1 data values). Also DEMCR (C1.6.5) through
 * the SCS debug-register window, and creation of all debug blocks.
 *
 * Timing of the cycle counter and its taps (docs/vm.md):
 *   CYCCNT(t) = cyccnt_at_base + (t - cyc_base) while CYCCNTENA and TRCENA.
 *   A POSTCNT tap is every change of CYCCNT[6] (CYCTAP = 0) or CYCCNT[10]
 *   (CYCTAP = 1), i.e. every 64 or 1024 cycles. At a tap POSTCNT decrements,
 *   or, when it is 0, reloads from POSTPRESET and raises the sampling event:
 *   a PC sample (PCSAMPLENA) or a CYC event-counter packet (CYCEVTENA). The
 *   interval is therefore (POSTPRESET+1) x (64 or 1024) cycles and the first
 *   event is at tap POSTINIT+1 after the counter starts.
 *   Only the next event's cycle (next_ev) is kept; POSTCNT is derived from it.
 *
 * Which PC a sample carries (docs/vm.md; the rule of sonde_pcsample_of() in
 * include/sonde/trace.h, from the VM's state in pc_at.c): a sampling event
 * at cycle T emits what occupies cycle T in the ground-truth PC trace: the
 * address of the instruction whose cycles contain T; the sleep form
 * (0x15 0x00) when the core sleeps at T; during an exception entry, return
 * or tail-chain the address of the last instruction that started before T
 * (the PC sampling register holds the last instruction that entered
 * Execute). The packet is dated T. The VM serves the event at the first
 * instruction boundary at or after T; exactly at T, what occupies T (the
 * next instruction, an exception entry, sleep) is not known yet, so the
 * sample waits (sample_pending) until the next instruction retires, an
 * exception event, or the core sleeps on. DWT_PCSR reads by a debugger
 * follow the same rule for the last cycle that has passed. */
#include <stdlib.h>

#include "dbg.h"
#include "pc_at.h"
#include "vm_internal.h"

#define PKT_EVCNT 0x05u
#define PKT_EXC 0x0Eu
#define PKT_PC 0x17u
#define PKT_PC_SLEEP 0x15u

static bool trcena(const struct vm_dbg *d)
{
  return (d->demcr & VM_DEMCR_TRCENA) != 0;
}

uint32_t vm_dwt_cyccnt(const struct sonde_vm *vm)
{
  const struct vm_dbg *d = vm->dbg;
  if (!d->cyc_running)
    return d->cyccnt_at_base;
  return d->cyccnt_at_base + (uint32_t)(vm->cpu.cycles - d->cyc_base);
}

static unsigned tap_shift(const struct vm_dbg *d)
{
  return (d->dwt_ctrl & DWT_CTRL_CYCTAP) ? 10 : 6;
}

static bool sampling(const struct vm_dbg *d)
{
  return d->cyc_running && (d->dwt_ctrl & (DWT_CTRL_PCSAMPLENA | DWT_CTRL_CYCEVTENA));
}

/* First cycle > now at which CYCCNT crosses a multiple of 2^shift. */
static uint64_t next_crossing(const struct sonde_vm *vm, unsigned shift, uint64_t now)
{
  uint32_t v = vm_dwt_cyccnt(vm);
  uint64_t p = 1ull << shift;
  uint64_t to = p - (v & (p - 1));
  (void)now;
  return vm->cpu.cycles + to;
}

/* POSTCNT now: the taps left before the next event, minus one. */
static unsigned postcnt_now(const struct sonde_vm *vm)
{
  const struct vm_dbg *d = vm->dbg;
  if (!sampling(d) || d->next_ev == UINT64_MAX)
    return d->postcnt;
  uint64_t p = 1ull << tap_shift(d), now = vm->cpu.cycles;
  if (d->next_ev <= now)
    return 0;
  uint64_t k = (d->next_ev - now + p - 1) / p;
  return (unsigned)(k - 1) & 0xF;
}

/* A PC sample due at t is taken once the VM is past t (timer due t + 1):
 * the executors stop at the first instruction boundary at or after their
 * event, so the instruction that occupies t has then run (or the sleep or
 * exception entry that does is under way) and the sample is decided at once
 * (vm_pc_at). Due at t itself, a boundary exactly at t would leave it open
 * until the next instruction retires (sample_pending, the hooked path).
 * lag_ev/lag_cmp: 1 for the PC-sample events, 0 for the others. */
static unsigned lag_ev(const struct vm_dbg *d)
{
  return (d->dwt_ctrl & DWT_CTRL_PCSAMPLENA) ? 1u : 0u;
}

static unsigned lag_cmp(const struct vm_dbg *d)
{
  return (d->function[0] & 0xF) == 1 ? 1u : 0u;
}

static uint64_t next_due(const struct vm_dbg *d)
{
  uint64_t ev = d->next_ev == UINT64_MAX ? UINT64_MAX : d->next_ev + lag_ev(d);
  uint64_t cmp = d->next_cmp == UINT64_MAX ? UINT64_MAX : d->next_cmp + lag_cmp(d);
  uint64_t m = ev < d->next_sync ? ev : d->next_sync;
  m = m < cmp ? m : cmp;
  return m < d->next_gts ? m : d->next_gts;
}

static void arm_timer(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  vm_sys_timer_set(vm, d->timer, next_due(d));
}

/* Comparator 0 with CYCMATCH (C1.8.4 "Cycle count matching", C1.8.17):
 * a match is the cycle at which CYCCNT reaches COMP0 with MASK0's low bits
 * cleared (MASK0 = 0: CYCCNT == COMP0); the counter must be running.
 * Returns UINT64_MAX when no match can come. A value CYCCNT holds now is
 * next reached 2^32 cycles later (the counter wraps). */
static uint64_t next_cycmatch(const struct sonde_vm *vm)
{
  const struct vm_dbg *d = vm->dbg;
  uint32_t fn = d->function[0];
  if (!d->cyc_running || !(fn & DWT_FUNC_CYCMATCH) || !(fn & 0xF))
    return UINT64_MAX;
  uint32_t m = d->mask[0] & 0x1F;
  uint32_t target = d->comp[0] & ~(uint32_t)((1ull << m) - 1);
  uint64_t delta = (uint32_t)(target - vm_dwt_cyccnt(vm));
  return vm->cpu.cycles + (delta ? delta : 1ull << 32);
}

/* Recompute the event schedule from the current state (postcnt holds POSTCNT). */
void vm_dwt_schedule(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  d->next_ev = UINT64_MAX;
  d->next_sync = UINT64_MAX;
  if (sampling(d))
    d->next_ev = next_crossing(vm, tap_shift(d), vm->cpu.cycles) +
                 ((uint64_t)d->postcnt << tap_shift(d));
  unsigned st = (d->dwt_ctrl >> DWT_CTRL_SYNCTAP_SHIFT) & 3;
  if (d->cyc_running && st && (d->itm_tcr & ITM_TCR_SYNCENA))
    d->next_sync = next_crossing(vm, 22 + 2 * st, vm->cpu.cycles);
  d->next_cmp = next_cycmatch(vm);
  d->next_gts = vm_itm_next_gts(vm); /* ITM global timestamps (dbg_itm.c) */
  arm_timer(vm);
  vm_dbg_update_observe(vm);
}

/* The packet of a PC sample (D4.3.3): the address, the sleep form, or none
 * (no instruction has run yet). */
static void emit_sample(struct sonde_vm *vm, const struct sonde_pcsample *s)
{
  if (s->kind == SONDE_PCSAMPLE_SLEEP) {
    static const uint8_t sl[2] = {PKT_PC_SLEEP, 0};
    vm_itm_emit(vm, sl, 2, s->cycle, true);
  } else if (s->kind == SONDE_PCSAMPLE_PC) {
    uint32_t pc = s->pc;
    uint8_t p[5] = {PKT_PC, (uint8_t)pc, (uint8_t)(pc >> 8), (uint8_t)(pc >> 16),
                    (uint8_t)(pc >> 24)};
    vm_itm_emit(vm, p, 5, s->cycle, true);
  }
}

/* Emit the pending samples, earliest first, as `at` says for each cycle. */
static void flush_pending(struct sonde_vm *vm, void (*at)(struct sonde_vm *, uint64_t, void *,
                                                          struct sonde_pcsample *),
                          void *ctx, uint64_t upto)
{
  struct vm_dbg *d = vm->dbg;
  for (;;) {
    bool smp = d->sample_pending && d->sample_cycle <= upto;
    bool cmp = d->cmp_pending && d->cmp_cycle <= upto;
    if (!smp && !cmp)
      break;
    bool take_cmp = cmp && (!smp || d->cmp_cycle < d->sample_cycle);
    uint64_t t = take_cmp ? d->cmp_cycle : d->sample_cycle;
    if (take_cmp)
      d->cmp_pending = false;
    else
      d->sample_pending = false;
    struct sonde_pcsample s;
    at(vm, t, ctx, &s);
    emit_sample(vm, &s);
  }
}

/* A pending sample at t, no instruction having started since it became
 * pending: sleep, or the instruction that was last then. */
static void in_gap(struct sonde_vm *vm, uint64_t t, void *ctx, struct sonde_pcsample *out)
{
  (void)ctx;
  vm_pc_in_gap(vm, t, vm->dbg->pend_prev, vm->dbg->pend_prev_pc, out);
}

/* The pending samples the VM has passed (cycles > t), before anything later
 * is emitted. */
static void flush_passed(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  if ((d->sample_pending || d->cmp_pending) && vm->cpu.cycles)
    flush_pending(vm, in_gap, NULL, vm->cpu.cycles - 1);
}

/* A PC sample (periodic or CYCMATCH) due at t, served at cycles >= t (or
 * inside an exception entry, before cycles reaches t). */
static void take_sample(struct sonde_vm *vm, uint64_t t, bool cmp)
{
  struct vm_dbg *d = vm->dbg;
  struct sonde_pcsample s;
  if (vm_pc_at(vm, t, &s)) { /* the VM stopped at the first boundary after t */
    emit_sample(vm, &s);
    return;
  }
  bool *pend = cmp ? &d->cmp_pending : &d->sample_pending;
  if (*pend)
    return; /* one of each kind at a time (events are >= 64 cycles apart) */
  if (!d->sample_pending && !d->cmp_pending) {
    d->pend_prev = vm->cpu.exec_pc != VM_EXEC_NONE;
    d->pend_prev_pc = vm->cpu.exec_pc;
  }
  *pend = true;
  *(cmp ? &d->cmp_cycle : &d->sample_cycle) = t;
}

/* The packet of a PC sample through vm_itm_emit_plain: false, having
 * queued nothing, when it needs vm_itm_emit's general path. */
static inline bool emit_sample_plain(struct sonde_vm *vm, const struct sonde_pcsample *s)
{
  if (s->kind == SONDE_PCSAMPLE_SLEEP) {
    static const uint8_t sl[2] = {PKT_PC_SLEEP, 0};
    return vm_itm_emit_plain(vm, vm->dbg, sl, 2, s->cycle, true);
  }
  if (s->kind == SONDE_PCSAMPLE_PC) {
    uint32_t pc = s->pc;
    uint8_t p[5] = {PKT_PC, (uint8_t)pc, (uint8_t)(pc >> 8), (uint8_t)(pc >> 16),
                    (uint8_t)(pc >> 24)};
    return vm_itm_emit_plain(vm, vm->dbg, p, 5, s->cycle, true);
  }
  return true;
}

/* The DWT timer's common case: one periodic PC sample due before now (the
 * VM is past it, so vm_pc_at decides it at once), no sample pending, no
 * other event due. What the general loops below do for it: its packet
 * (through emit_sample, or only when `plain` takes it: emit_sample_plain)
 * and the timer's next due, returned for the caller to re-arm it. Returns
 * 0, having done nothing, in any other case. */
static inline uint64_t one_sample(struct sonde_vm *vm, struct vm_dbg *d, bool plain)
{
  const uint32_t ctrl = d->dwt_ctrl;
  const uint64_t now = vm->cpu.cycles, t = d->next_ev;
  if (!(ctrl & DWT_CTRL_PCSAMPLENA) || d->sample_pending || d->cmp_pending || t >= now)
    return 0;
  const uint64_t interval = (uint64_t)(((ctrl >> DWT_CTRL_POSTPRESET_SHIFT) & 0xF) + 1)
                            << tap_shift(d);
  const unsigned lc = lag_cmp(d);
  if (t + interval < now || d->next_sync <= now || d->next_gts <= now ||
      d->next_cmp < now + 1 - lc)
    return 0;
  struct sonde_pcsample s;
  vm_pc_at(vm, t, &s); /* t < now: decided */
  if (!plain)
    emit_sample(vm, &s);
  else if (!emit_sample_plain(vm, &s))
    return 0;
  d->next_ev = t + interval;
  uint64_t due = d->next_ev + 1;
  if (d->next_sync < due)
    due = d->next_sync;
  if (d->next_cmp != UINT64_MAX && d->next_cmp + lc < due)
    due = d->next_cmp + lc;
  if (d->next_gts < due)
    due = d->next_gts;
  return due;
}

/* timer_fire's common case (one_sample), re-armed at once (the timer
 * fires from fire_timers: vm_sys_timer_rearm). */
static inline bool fire_one_sample(struct sonde_vm *vm, struct vm_dbg *d)
{
  if (!vm->sys.firing)
    return false;
  const uint64_t due = one_sample(vm, d, false);
  if (!due)
    return false;
  vm_sys_timer_rearm(&vm->sys, (unsigned)d->timer, due);
  return true;
}

uint64_t vm_dwt_sample_plain(struct sonde_vm *vm)
{
  return one_sample(vm, vm->dbg, true);
}

/* The DWT's timer: the events due (timer_fire), in general. */
static __attribute__((noinline)) void fire_events(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  /* The exception model may fire timers due inside an exception entry, before
   * cpu.cycles reaches them: handle at least the event that is due. */
  uint64_t now = vm->cpu.cycles, due = next_due(d);
  if (due > now)
    now = due;
  const bool pending = d->sample_pending || d->cmp_pending;
  flush_passed(vm);
  while (d->next_ev < now + 1 - lag_ev(d)) { /* PC samples: due before now */
    uint64_t t = d->next_ev;
    if (d->dwt_ctrl & DWT_CTRL_PCSAMPLENA) {
      take_sample(vm, t, false);
    } else {
      uint8_t p[2] = {PKT_EVCNT, 0x20}; /* CYC */
      vm_itm_emit(vm, p, 2, t, true);
    }
    uint64_t interval = (uint64_t)(((d->dwt_ctrl >> DWT_CTRL_POSTPRESET_SHIFT) & 0xF) + 1)
                        << tap_shift(d);
    d->next_ev += interval;
  }
  while (d->next_sync <= now) {
    vm_itm_sync(vm, d->next_sync);
    unsigned st = (d->dwt_ctrl >> DWT_CTRL_SYNCTAP_SHIFT) & 3;
    d->next_sync += 1ull << (22 + 2 * st);
  }
  while (d->next_cmp < now + 1 - lag_cmp(d)) {
    uint64_t t = d->next_cmp;
    d->function[0] |= DWT_FUNC_MATCHED;
    switch (d->function[0] & 0xF) {
    case 1: /* PC sample packet (D4.3.3), taken like a periodic sample */
      take_sample(vm, t, true);
      break;
    case 4: /* watchpoint debug event (C1.8.5): halt or DebugMonitor */
      vm_dbgh_watchpoint(vm);
      break;
    default: /* 8: CMPMATCH[0] to an ETM (none here): MATCHED only */
      break;
    }
    d->next_cmp += 1ull << 32;
  }
  while (d->next_gts <= now) {
    vm_itm_gts(vm, d->next_gts);
    d->next_gts += vm_itm_gtsfreq(d) == 1 ? 128 : 8192;
  }
  arm_timer(vm);
  if (pending || d->sample_pending || d->cmp_pending) /* nothing else here changes it */
    vm_dbg_update_observe(vm);
}

static void timer_fire(struct sonde_vm *vm, void *ctx)
{
  (void)ctx;
  if (VM_LIKELY(fire_one_sample(vm, vm->dbg)))
    return;
  fire_events(vm);
}

/* PC samples due before now that their timer (due one cycle later) has not
 * taken yet: at an exception event, before its packet, so that packets stay
 * in the order of their cycles (a sample in the last cycle of an entry). */
static void take_passed_samples(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  uint64_t now = vm->cpu.cycles;
  bool took = false;
  if (d->dwt_ctrl & DWT_CTRL_PCSAMPLENA) {
    uint64_t interval = (uint64_t)(((d->dwt_ctrl >> DWT_CTRL_POSTPRESET_SHIFT) & 0xF) + 1)
                        << tap_shift(d);
    for (; d->next_ev < now; d->next_ev += interval, took = true)
      take_sample(vm, d->next_ev, false);
  }
  if (lag_cmp(d))
    for (; d->next_cmp < now; d->next_cmp += 1ull << 32, took = true) {
      d->function[0] |= DWT_FUNC_MATCHED;
      take_sample(vm, d->next_cmp, true);
    }
  if (took)
    arm_timer(vm);
}

void vm_dbg_settle(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  if (d && trcena(d) && (d->next_ev < vm->cpu.cycles || d->next_cmp < vm->cpu.cycles)) {
    take_passed_samples(vm);
    vm_dbg_update_observe(vm);
  }
}

/* ---- observers ------------------------------------------------------------ */

void vm_dbg_update_observe(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  bool obs = trcena(d) &&
             (d->sample_pending || d->cmp_pending || d->data_trace ||
              (d->dwt_ctrl & (DWT_CTRL_CPIEVTENA | DWT_CTRL_SLEEPEVTENA | DWT_CTRL_LSUEVTENA |
                              DWT_CTRL_FOLDEVTENA)));
  vm->dbg_observe = obs;
  vm_update_hooked(vm, vm->mtb_observe);
}

/* Add n to an 8-bit event counter; on wrap, emit its event-counter packet. */
static void count(struct sonde_vm *vm, uint8_t *ctr, uint32_t n, uint32_t enbit, uint8_t evbit,
                  uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  if (!(d->dwt_ctrl & enbit) || !n)
    return;
  uint32_t v = *ctr + n;
  *ctr = (uint8_t)v;
  if (v > 0xFF) {
    uint8_t p[2] = {PKT_EVCNT, evbit};
    vm_itm_emit(vm, p, 2, cycle, true);
  }
}

/* Data-trace packets (D4.3.4): PC value (discriminator 8+2n), address offset
 * (9+2n), data value (16+2n+WnR), appended to buf; returns the new length. */
static unsigned dt_pc(uint8_t *b, unsigned n, unsigned c, uint32_t pc)
{
  b[n++] = (uint8_t)(0x47u + 0x10u * c);
  for (unsigned i = 0; i < 4; i++)
    b[n++] = (uint8_t)(pc >> (8 * i));
  return n;
}

static unsigned dt_addr(uint8_t *b, unsigned n, unsigned c, uint32_t addr)
{
  b[n++] = (uint8_t)(0x4Eu + 0x10u * c);
  b[n++] = (uint8_t)addr;
  b[n++] = (uint8_t)(addr >> 8);
  return n;
}

static unsigned dt_data(uint8_t *b, unsigned n, unsigned c, uint32_t value, unsigned size,
                        bool write)
{
  b[n++] = (uint8_t)(0x84u + 0x10u * c + (write ? 8u : 0u) + (size == 4 ? 3u : size));
  for (unsigned i = 0; i < size; i++)
    b[n++] = (uint8_t)(value >> (8 * i));
  return n;
}

/* Does the access [addr, addr+size) touch comparator c's masked address range? */
static bool addr_match(const struct vm_dbg *d, unsigned c, uint32_t addr, unsigned size)
{
  uint32_t mbits = d->mask[c] & 0x1F;
  uint32_t lo = d->comp[c] & ~((uint32_t)((1ull << mbits) - 1));
  uint64_t hi = (uint64_t)lo + (1ull << mbits); /* exclusive */
  return (uint64_t)addr + size > lo && addr < hi;
}

/* Data value matching (C1.8.4, DWT_FUNCTION C1.8.17) on comparator c: each
 * DATAVSIZE-aligned unit (byte, halfword or word) inside the access is
 * compared with COMPn's low DATAVSIZE bytes (software replicates a byte or
 * halfword across COMPn, so any lane compares alike). Linked: when
 * DATAVADDR0 names another comparator, only units inside its address range
 * count, or (LNK1ENA, DATAVADDR1 naming another comparator too) inside
 * either linked range. DATAVADDR0 = DATAVADDR1 = c: any address. */
static bool value_match(const struct vm_dbg *d, unsigned c, uint32_t addr, unsigned size,
                        uint32_t value)
{
  uint32_t fn = d->function[c];
  unsigned vs = 1u << ((fn >> 10) & 3);
  if (vs > 4 || size < vs)
    return false;
  unsigned l0 = (fn >> 12) & 0xF, l1 = (fn >> 16) & 0xF;
  bool link0 = l0 != c && l0 < VM_DWT_NUMCOMP;
  bool link1 = (fn & DWT_FUNC_LNK1ENA) && l1 != c && l1 < VM_DWT_NUMCOMP;
  uint32_t m = vs == 4 ? 0xFFFFFFFFu : (1u << (8 * vs)) - 1;
  for (unsigned off = 0; off + vs <= size; off += vs) {
    uint32_t a = addr + off;
    if ((a & (vs - 1)) != 0)
      continue; /* an unaligned unit is not compared */
    if ((link0 || link1) && !((link0 && addr_match(d, l0, a, vs)) ||
                              (link1 && addr_match(d, l1, a, vs))))
      continue;
    if (((value >> (8 * off)) & m) == (d->comp[c] & m))
      return true;
  }
  return false;
}

/* The action of a data value match (Table C1-14 with DATAVMATCH = 1):
 * 5/6/7 watchpoint debug event on read/write/either, 9/10/11 CMPMATCH
 * (to an ETM: MATCHED only); the other encodings are reserved (MATCHED
 * only here). */
static void value_action(struct sonde_vm *vm, unsigned c, uint32_t f, bool write)
{
  struct vm_dbg *d = vm->dbg;
  unsigned rw = f & 3; /* 1 read, 2 write, 3 either */
  if ((f == 5 || f == 6 || f == 7 || f == 9 || f == 10 || f == 11) &&
      !(rw == 3 || (rw == 2) == write))
    return;
  d->function[c] |= DWT_FUNC_MATCHED;
  if (f >= 5 && f <= 7)
    vm_dbgh_watchpoint(vm); /* DFSR.DWTTRAP (dbg_halt.c) */
}

void vm_dbg_transfer(struct sonde_vm *vm, uint32_t pc, uint32_t addr, unsigned size,
                     uint32_t value, bool write, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  if (!d) { /* ARMv6-M: only an MTBDWT data comparator observes (dbg_mtbdwt.c) */
    vm_mtbdwt_transfer(vm, addr, size, value, write);
    return;
  }
  if (!d->data_trace || !trcena(d))
    return;
  for (unsigned c = 0; c < VM_DWT_NUMCOMP; c++) {
    uint32_t fn = d->function[c], f = fn & 0xF;
    if (f == 0 || f == 4 || f == 8 || (fn & DWT_FUNC_CYCMATCH))
      continue; /* off, PC match, cycle match (timed: timer_fire) */
    if (fn & DWT_FUNC_DATAVMATCH) {
      if (value_match(d, c, addr, size, value))
        value_action(vm, c, f, write);
      continue;
    }
    if (!addr_match(d, c, addr, size))
      continue;
    d->function[c] |= DWT_FUNC_MATCHED;
    bool er = (fn >> 5) & 1;
    bool want_pc = false, want_addr = false, want_data = false;
    switch (f) {
    case 1: want_pc = !er; want_addr = er; break;
    case 2: want_addr = er; want_data = true; break;
    case 3: want_pc = !er; want_addr = er; want_data = true; break;
    case 0xC: case 0xD:
      if ((f == 0xD) != write)
        continue;
      want_addr = er; want_data = !er; break;
    case 0xE: case 0xF:
      if ((f == 0xF) != write)
        continue;
      want_pc = !er; want_addr = er; want_data = true; break;
    case 5: case 6: case 7: /* watchpoint debug event (C1.8.5): halt or DebugMonitor */
      if (f == 7 || (f == 6) == write)
        vm_dbgh_watchpoint(vm); /* DFSR.DWTTRAP (dbg_halt.c) */
      continue;
    default: continue; /* 9-11 ETM triggers: MATCHED only */
    }
    /* The packets of one match enter the FIFO together (one timestamp). */
    uint8_t b[13];
    unsigned n = 0;
    if (want_pc)
      n = dt_pc(b, n, c, pc);
    if (want_addr)
      n = dt_addr(b, n, c, addr);
    if (want_data)
      n = dt_data(b, n, c, value, size, write);
    vm_itm_emit(vm, b, n, cycle, true);
  }
}

struct retired {
  uint32_t pc;
  uint64_t start;
};

/* A pending sample at t, served at the retire of the next instruction. */
static void at_retire(struct sonde_vm *vm, uint64_t t, void *ctx, struct sonde_pcsample *out)
{
  const struct retired *r = ctx;
  if (t >= r->start) {
    out->cycle = t;
    out->kind = SONDE_PCSAMPLE_PC;
    out->pc = r->pc;
  } else {
    in_gap(vm, t, NULL, out);
  }
}

/* A pending sample at t <= now, the core sleeping on at now: sleep unless t
 * fell before the sleep began. */
static void asleep_at(struct sonde_vm *vm, uint64_t t, void *ctx, struct sonde_pcsample *out)
{
  (void)ctx;
  if (t >= vm->sys.sleep_from) {
    out->cycle = t;
    out->kind = SONDE_PCSAMPLE_SLEEP;
    out->pc = 0;
  } else {
    in_gap(vm, t, NULL, out);
  }
}

void vm_dbg_asleep(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  if (!d || !(d->sample_pending || d->cmp_pending))
    return;
  flush_pending(vm, asleep_at, NULL, vm->cpu.cycles);
  vm_dbg_update_observe(vm);
}

void vm_dbg_retire(struct sonde_vm *vm, uint32_t pc, uint64_t start, uint32_t cycles,
                   unsigned ntransfers)
{
  struct vm_dbg *d = vm->dbg;
  if (!d)
    return; /* ARMv6-M: dbg_observe is the MTBDWT's (vm_dbg_transfer) */
  if (d->sample_pending || d->cmp_pending) {
    /* Samples due before this instruction ended: its own cycles show it,
     * the gap before it what was there. */
    struct retired r = {pc, start};
    flush_pending(vm, at_retire, &r, UINT64_MAX);
    vm_dbg_update_observe(vm);
  }
  uint64_t end = start + cycles;
  if (cycles > 1) {
    if (ntransfers)
      count(vm, &d->lsucnt, cycles - 1, DWT_CTRL_LSUEVTENA, 0x08, end);
    else
      count(vm, &d->cpicnt, cycles - 1, DWT_CTRL_CPIEVTENA, 0x01, end);
  }
  uint64_t sl = vm->sys.sleep_cycles;
  if (sl != d->sleep_seen) {
    count(vm, &d->sleepcnt, (uint32_t)(sl - d->sleep_seen), DWT_CTRL_SLEEPEVTENA, 0x04, start);
    d->sleep_seen = sl;
  }
  for (unsigned c = 0; c < VM_DWT_NUMCOMP; c++) {
    uint32_t f = d->function[c] & 0xF;
    if ((f == 4 || f == 8) && !(d->function[c] & DWT_FUNC_CYCMATCH)) {
      uint32_t m = ~((uint32_t)((1ull << (d->mask[c] & 0x1F)) - 1));
      if ((pc & m) == (d->comp[c] & m)) {
        d->function[c] |= DWT_FUNC_MATCHED;
        if (f == 4) /* watchpoint on PC match: the event follows the instruction */
          vm_dbgh_watchpoint(vm);
      }
    }
  }
}

void vm_dbg_exception(struct sonde_vm *vm, enum sonde_vm_exc_event ev, unsigned exc)
{
  struct vm_dbg *d = vm->dbg;
  if (!trcena(d))
    return;
  if (d->sample_pending || d->cmp_pending) { /* due inside the entry or return just done */
    flush_passed(vm);
    vm_dbg_update_observe(vm);
  }
  if (d->next_ev < vm->cpu.cycles || d->next_cmp < vm->cpu.cycles)
    take_passed_samples(vm);
  uint64_t now = vm->cpu.cycles;
  if (ev == SONDE_VM_EXC_ENTER)
    count(vm, &d->exccnt, vm_exc_entry_cycles(vm), DWT_CTRL_EXCEVTENA, 0x02, now);
  if (!(d->dwt_ctrl & DWT_CTRL_EXCTRCENA))
    return;
  uint8_t p[3] = {PKT_EXC, (uint8_t)exc, (uint8_t)(((exc >> 8) & 1) | ((unsigned)ev << 4))};
  vm_itm_emit(vm, p, 3, now, true);
}

/* ---- registers ------------------------------------------------------------ */

static uint32_t ctrl_read(const struct sonde_vm *vm)
{
  const struct vm_dbg *d = vm->dbg;
  return (VM_DWT_NUMCOMP << 28) | (d->dwt_ctrl & ~(0xFu << DWT_CTRL_POSTINIT_SHIFT)) |
         (postcnt_now(vm) << DWT_CTRL_POSTINIT_SHIFT);
}

/* DWT_PCSR (ARMv7-M C1.8.2; ARMv6-M C1.7.2: 0xFFFFFFFF in Debug state or
 * when no recently executed address is available). A core read comes from
 * the reading instruction itself, which occupies the cycle; a debugger's
 * read between two runs samples the last cycle that has passed by the rule
 * of the PC samples (its sleep form has no PCSR value: the address of the
 * instruction before the sleep, the last to enter Execute). */
static uint32_t pcsr(const struct sonde_vm *vm, bool debug)
{
  if (!debug)
    return vm->cpu.r[15];
  if ((vm->dbgh && vm->dbgh->halted) || !vm->cpu.cycles)
    return 0xFFFFFFFFu;
  struct sonde_pcsample s;
  if (!vm_pc_at(vm, vm->cpu.cycles - 1, &s)) /* the last instruction started before */
    return 0xFFFFFFFFu;
  if (s.kind == SONDE_PCSAMPLE_SLEEP)
    return vm->cpu.exec_pc; /* VM_EXEC_NONE is 0xFFFFFFFF */
  return s.kind == SONDE_PCSAMPLE_PC ? s.pc : 0xFFFFFFFFu;
}

static uint32_t dwt_reg_read(struct sonde_vm *vm, uint32_t off, bool debug)
{
  struct vm_dbg *d = vm->dbg;
  switch (off) {
  case 0x000: return ctrl_read(vm);
  case 0x004: return vm_dwt_cyccnt(vm);
  case 0x008: return d->cpicnt;
  case 0x00C: return d->exccnt;
  case 0x010: return d->sleepcnt;
  case 0x014: return d->lsucnt;
  case 0x018: return d->foldcnt;
  case 0x01C: return pcsr(vm, debug);
  case 0xFD0: return 0x04;
  case 0xFE0: return 0x02; /* PID0: DWT part 0x002 */
  case 0xFE4: return 0xB0;
  case 0xFE8: return 0x3B;
  case 0xFF0: return 0x0D;
  case 0xFF4: return 0xE0;
  case 0xFF8: return 0x05;
  case 0xFFC: return 0xB1;
  }
  if (off >= 0x20 && off < 0x20 + 16 * VM_DWT_NUMCOMP) {
    unsigned c = (off - 0x20) / 16;
    switch (off & 0xF) {
    case 0x0: return d->comp[c];
    case 0x4: return d->mask[c];
    case 0x8: {
      uint32_t v = d->function[c];
      /* MATCHED clears on any read (C1.8.17), a debugger's too: that is how
       * a probe drains comparator matches (src/monitor watch.c). */
      (void)debug;
      d->function[c] &= ~(1u << 24);
      return v;
    }
    }
  }
  return 0;
}

/* Comparators that need every instruction observed (address and value
 * matches); a CYCMATCH comparator is timed and needs none. */
static void recompute_data_trace(struct vm_dbg *d)
{
  d->data_trace = false;
  for (unsigned c = 0; c < VM_DWT_NUMCOMP; c++)
    if ((d->function[c] & 0xF) && !(d->function[c] & DWT_FUNC_CYCMATCH))
      d->data_trace = true;
}

static void start_stop_cyccnt(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  bool run = trcena(d) && (d->dwt_ctrl & DWT_CTRL_CYCCNTENA);
  if (run == d->cyc_running)
    return;
  d->cyccnt_at_base = vm_dwt_cyccnt(vm);
  d->cyc_base = vm->cpu.cycles;
  d->cyc_running = run;
}

/* A write that may change the sampling schedule (DWT registers, DEMCR): the
 * PC samples due up to now are taken first. One due at this very cycle
 * shows what occupies it: the writing instruction (a core write; cpu.r[15]
 * is its address), or for a debugger's write between runs the sleep or the
 * next instruction. */
static void take_before_write(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  uint64_t now = vm->cpu.cycles;
  bool smp = (d->dwt_ctrl & DWT_CTRL_PCSAMPLENA) && d->next_ev <= now;
  bool cmp = lag_cmp(d) && d->next_cmp <= now;
  if (!smp && !cmp)
    return;
  flush_passed(vm);
  take_passed_samples(vm);
  struct sonde_pcsample s = {now, vm->cpu.sleeping ? SONDE_PCSAMPLE_SLEEP : SONDE_PCSAMPLE_PC,
                             vm->cpu.sleeping ? 0 : vm->cpu.r[15]};
  if ((d->dwt_ctrl & DWT_CTRL_PCSAMPLENA) && d->next_ev == now) {
    emit_sample(vm, &s);
    d->next_ev += (uint64_t)(((d->dwt_ctrl >> DWT_CTRL_POSTPRESET_SHIFT) & 0xF) + 1)
                  << tap_shift(d);
  }
  if (lag_cmp(d) && d->next_cmp == now) {
    d->function[0] |= DWT_FUNC_MATCHED;
    emit_sample(vm, &s);
    d->next_cmp += 1ull << 32;
  }
  arm_timer(vm);
}

static void dwt_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t v)
{
  take_before_write(vm);
  struct vm_dbg *d = vm->dbg;
  if (off == 0x000) {
    bool was = sampling(d);
    d->postcnt = (uint8_t)postcnt_now(vm);
    uint32_t old = d->dwt_ctrl;
    d->dwt_ctrl = v & 0x007F1FFFu;
    /* POSTINIT is written only while no sampling event source is on. */
    if (!(old & (DWT_CTRL_PCSAMPLENA | DWT_CTRL_CYCEVTENA)))
      d->postcnt = (uint8_t)((v >> DWT_CTRL_POSTINIT_SHIFT) & 0xF);
    (void)was;
    /* Enabling an event counter clears it (C1.8.6). */
    if ((v & ~old) & DWT_CTRL_CPIEVTENA) d->cpicnt = 0;
    if ((v & ~old) & DWT_CTRL_EXCEVTENA) d->exccnt = 0;
    if ((v & ~old) & DWT_CTRL_SLEEPEVTENA) d->sleepcnt = 0;
    if ((v & ~old) & DWT_CTRL_LSUEVTENA) d->lsucnt = 0;
    if ((v & ~old) & DWT_CTRL_FOLDEVTENA) d->foldcnt = 0;
    d->sleep_seen = vm->sys.sleep_cycles;
    start_stop_cyccnt(vm);
  } else if (off == 0x004) {
    d->postcnt = (uint8_t)postcnt_now(vm);
    d->cyccnt_at_base = v;
    d->cyc_base = vm->cpu.cycles;
  } else if (off >= 0x008 && off <= 0x018) {
    uint8_t *ctr[] = {&d->cpicnt, &d->exccnt, &d->sleepcnt, &d->lsucnt, &d->foldcnt};
    *ctr[(off - 8) / 4] = (uint8_t)v;
    return;
  } else if (off >= 0x20 && off < 0x20 + 16 * VM_DWT_NUMCOMP) {
    unsigned c = (off - 0x20) / 16;
    d->postcnt = (uint8_t)postcnt_now(vm); /* the reschedule below starts from it */
    switch (off & 0xF) {
    case 0x0: d->comp[c] = v; break;
    case 0x4: d->mask[c] = v & 0x1F; break;
    case 0x8:
      /* FUNCTION[3:0], EMITRANGE, CYCMATCH (comparator 0 only), DATAVMATCH
       * (comparator 1 only), DATAVSIZE, DATAVADDR0/1 (M3/M4 TRM); LNK1ENA is
       * read-only, 1 on comparator 1 (a second linked address is supported). */
      d->function[c] = (d->function[c] & DWT_FUNC_MATCHED) |
                       (v & (0x000FFDAFu & ~(c == 0 ? 0 : DWT_FUNC_CYCMATCH) &
                             ~(c == 1 ? 0 : DWT_FUNC_DATAVMATCH))) |
                       (c == 1 ? DWT_FUNC_LNK1ENA : 0);
      recompute_data_trace(d);
      break;
    }
  } else {
    return;
  }
  vm_dwt_schedule(vm);
}

static int dwt_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                    uint32_t *value, bool debug)
{
  (void)ctx;
  uint32_t v = dwt_reg_read(vm, offset & ~3u, debug) >> (8 * (offset & 3));
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int dwt_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                     uint32_t value, bool debug)
{
  (void)ctx;
  (void)debug;
  uint32_t off = offset & ~3u;
  if (size != 4) { /* sub-word writes merge into the current value */
    uint32_t shift = 8 * (offset & 3), m = ((1u << (8 * size)) - 1) << shift;
    uint32_t cur = dwt_reg_read(vm, off, true);
    value = (cur & ~m) | ((value << shift) & m);
  }
  dwt_reg_write(vm, off, value);
  return VM_BUS_OK;
}

const struct vm_device_ops vm_dwt_ops = {"dwt", dwt_read, dwt_write};

/* ---- DEMCR and the other SCS debug registers (0xE000EDF0..) ---------------- */

static int scs_dbg_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                        uint32_t *value, bool debug)
{
  (void)ctx;
  (void)debug;
  uint32_t v = (offset & ~3u) == 0xDFC ? vm->dbg->demcr : 0;
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int scs_dbg_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                         uint32_t value, bool debug)
{
  (void)ctx;
  (void)debug;
  if ((offset & ~3u) != 0xDFC)
    return VM_BUS_OK; /* DHCSR/DCRSR/DCRDR: issue 3 item 5 */
  struct vm_dbg *d = vm->dbg;
  take_before_write(vm);
  uint32_t shift = 8 * (offset & 3);
  uint32_t mask = (size == 4 ? 0xFFFFFFFFu : ((1u << (8 * size)) - 1)) << shift;
  d->demcr = ((d->demcr & ~mask) | ((value << shift) & mask)) & 0x010F07F1u;
  start_stop_cyccnt(vm);
  vm_dwt_schedule(vm);
  return VM_BUS_OK;
}

const struct vm_device_ops vm_dbg_scs_ops = {"debug-scs", scs_dbg_read, scs_dbg_write};

/* ---- creation -------------------------------------------------------------- */

static void power_on_state(struct vm_dbg *d)
{
  int timer = d->timer, fmt_timer = d->fmt_timer;
  sonde_vm_swo_fn fn = d->swo_fn;
  void *ctx = d->swo_ctx;
  memset(d, 0, sizeof *d);
  d->timer = timer;
  d->fmt_timer = fmt_timer;
  d->swo_fn = fn;
  d->swo_ctx = ctx;
  d->next_ev = d->next_sync = d->next_cmp = d->next_gts = UINT64_MAX;
  d->sppr = 1;     /* TPIU reset values (C1.10): Manchester, */
  d->ffcr = 0x102; /* formatter on, */
  d->cspsr = 1;    /* port size 1 */
  d->fmt_id = -1;  /* formatter: no trace ID stated yet */
}

int vm_dbg_create(struct sonde_vm *vm)
{
  if (!vm->has_v7m)
    return 0; /* ARMv6-M (Cortex-M0+): no ITM, no DWT trace */
  struct vm_dbg *d = calloc(1, sizeof *d);
  if (!d)
    return SONDE_E_NOMEM;
  vm->dbg = d;
  d->timer = vm_sys_timer_add(vm, timer_fire, NULL);
  d->fmt_timer = vm_sys_timer_add(vm, vm_swo_timer_fire, NULL);
  power_on_state(d);
  int rc = d->timer < 0 || d->fmt_timer < 0 ? SONDE_E_NOMEM : 0;
  if (rc == 0)
    rc = vm_bus_add_device(&vm->bus, VM_ITM_BASE, 0x1000, &vm_itm_ops, NULL);
  if (rc == 0)
    rc = vm_bus_add_device(&vm->bus, VM_DWT_BASE, 0x1000, &vm_dwt_ops, NULL);
  if (rc == 0)
    rc = vm_bus_add_device(&vm->bus, VM_TPIU_BASE, 0x1000, &vm_tpiu_ops, NULL);
  vm->sys.debug_ops = &vm_dbg_scs_ops;
  vm->sys.debug_ctx = d;
  return rc;
}

void vm_dbg_free(struct sonde_vm *vm)
{
  free(vm->dbg);
  vm->dbg = NULL;
}

void vm_dbg_reset(struct sonde_vm *vm, bool power_on)
{
  struct vm_dbg *d = vm->dbg;
  if (vm->dbgh && !power_on)
    vm->dbgh->reset_st = true; /* DHCSR.S_RESET_ST (dbg_halt.c) */
  if (!d)
    return;
  if (power_on) {
    power_on_state(d);
    vm->dbg_observe = false;
  }
  /* A system reset disarmed every timer: re-arm ours. The schedule stays:
   * recomputing it from now would drop an event due at this very cycle,
   * whose timer fires after the reset. */
  if (power_on) {
    d->postcnt = (uint8_t)postcnt_now(vm);
    vm_dwt_schedule(vm);
  } else {
    arm_timer(vm);
  }
  vm_swo_rearm(vm);
}
