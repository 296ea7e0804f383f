/* Instrumentation Trace Macrocell at 0xE0000000 (ARMv7-M ARM C1.7 "The
 * Instrumentation Trace Macrocell"; packet formats Appendix D4; Cortex-M3 TRM
 * DDI 0337 8.4 / Cortex-M4 TRM DDI 0439 8.4 for the ID registers and lock).
 *
 * Registers: STIM0-31 (0x000-0x07C; a read returns FIFOREADY in bit 0),
 * TER (0xE00), TPR (0xE40), TCR (0xE80), LAR (0xFB0), LSR (0xFB4), peripheral
 * and component IDs (0xFD0-0xFFC).
 *
 * Packets enter one output FIFO (dbg_swo.c) whole or not at all: a packet that
 * does not fit is lost and an Overflow packet (0x70) is owed, emitted before
 * the next packet that fits. With TSENA, a local timestamp follows every
 * packet (one emission: the packets of one DWT match go in together), so a
 * decoder dates every packet by the timestamp that follows it: LTS2 for
 * deltas 1-6, else LTS1 with TC = 0 (delta 0 included, for a second packet
 * in the same cycle); TC = 1, "timestamp delayed", when the timestamp itself
 * did not fit and follows a later packet.
 *
 * Global timestamps (D4.2.5 GTS1/GTS2, C1.7.6 ITM_TCR.GTSFREQ): the global
 * timestamp counter is modelled as the core cycle count since power-on,
 * VM_GTS_BITS (48) wide (docs/vm.md). GTSFREQ 01/10 request a GTS at every
 * change of counter bit 7/13 (every 128/8192 cycles, timed with the DWT's
 * system timer in dbg_dwt.c); 11 after every packet that found the output
 * FIFO empty. A GTS1 carries TS[25:0], compressed to the low-order bytes that
 * changed since the last GTS1; a full GTS1 and a GTS2 (TS[47:26]) go out
 * when the high-order bits changed since the last GTS2 (GTS1.Wrap = 1), and
 * for the first GTS after the ITM or GTSFREQ is enabled, after a sync packet,
 * and after a lost GTS. ClkCh is always 0 (the clock never changes). */
#include "dbg.h"
#include "vm_internal.h"

#define LAR_KEY 0xC5ACCE55u

bool vm_itm_enabled(const struct sonde_vm *vm)
{
  const struct vm_dbg *d = vm->dbg;
  return (d->demcr & VM_DEMCR_TRCENA) && (d->itm_tcr & ITM_TCR_ITMENA);
}

static unsigned fifo_free(struct sonde_vm *vm, uint64_t cycle)
{
  return VM_DBG_FIFO_BYTES - vm_swo_fifo_used(vm, cycle);
}

static unsigned prescale(const struct vm_dbg *d)
{
  static const unsigned p[4] = {1, 4, 16, 64};
  return p[(d->itm_tcr >> 8) & 3];
}

/* Local timestamp packet for `delta` (prescaled ticks) with timestamp control tc. */
static unsigned lts_encode(uint8_t *out, uint32_t delta, unsigned tc)
{
  if (tc == 0 && delta >= 1 && delta <= 6) {
    out[0] = (uint8_t)(delta << 4);
    return 1;
  }
  if (delta > 0x0FFFFFFFu)
    delta = 0x0FFFFFFFu; /* 28 bits at most (D4.2.4); documented clamp */
  unsigned n = 0;
  out[n++] = (uint8_t)(0xC0u | (tc << 4));
  do {
    uint8_t b = delta & 0x7F;
    delta >>= 7;
    out[n++] = (uint8_t)(b | (delta ? 0x80 : 0));
  } while (delta);
  return n;
}

/* Emit a timestamp for `cycle` if the counter moved; false if it did not fit. */
static bool emit_ts(struct sonde_vm *vm, uint64_t cycle, unsigned tc)
{
  struct vm_dbg *d = vm->dbg;
  unsigned ps = prescale(d);
  if (cycle < d->ts_last)
    cycle = d->ts_last; /* a packet stamped before the last timestamp (same instruction) */
  uint64_t ticks = (cycle - d->ts_last) / ps;
  uint8_t b[6];
  unsigned n = lts_encode(b, (uint32_t)(ticks > 0x0FFFFFFFu ? 0x0FFFFFFFu : ticks), tc);
  if (fifo_free(vm, cycle) < n)
    return false;
  vm_swo_push(vm, b, n, cycle);
  d->ts_last += ticks * ps;
  return true;
}

unsigned vm_itm_gtsfreq(const struct vm_dbg *d)
{
  return (d->itm_tcr >> ITM_TCR_GTSFREQ_SHIFT) & 3;
}

uint64_t vm_itm_next_gts(struct sonde_vm *vm)
{
  unsigned f = vm_itm_gtsfreq(vm->dbg);
  if (!vm_itm_enabled(vm) || (f != 1 && f != 2))
    return UINT64_MAX;
  uint64_t p = f == 1 ? 128 : 8192;
  return (vm->cpu.cycles / p + 1) * p;
}

void vm_itm_gts(struct sonde_vm *vm, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  if (!vm_itm_enabled(vm))
    return;
  uint64_t ts = cycle & ((1ull << VM_GTS_BITS) - 1);
  uint32_t lo = (uint32_t)ts & 0x3FFFFFFu, hi = (uint32_t)(ts >> 26);
  bool wrap = hi != d->gts_hi; /* TS[47:26] changed since the last GTS2 */
  bool full = d->gts_full || wrap;
  unsigned k = 4; /* GTS1 payload bytes */
  if (!full)
    for (k = 1; k < 4 && (lo >> (7 * k)) != (d->gts_lo >> (7 * k)); k++)
      ;
  uint8_t b[10];
  unsigned n = 0;
  b[n++] = 0x94;
  for (unsigned i = 0; i < k; i++) {
    uint8_t v = i < 3 ? (uint8_t)((lo >> (7 * i)) & 0x7F)
                      : (uint8_t)(((lo >> 21) & 0x1F) | (wrap ? 0x40 : 0));
    b[n++] = (uint8_t)(v | (i + 1 < k ? 0x80 : 0));
  }
  if (full) {
    b[n++] = 0xB4;
    for (unsigned i = 0; i < 4; i++)
      b[n++] = (uint8_t)(((hi >> (7 * i)) & 0x7F) | (i < 3 ? 0x80 : 0));
  }
  if (fifo_free(vm, cycle) < n + (d->overflow ? 1 : 0)) {
    d->overflow = true;
    d->packets_lost++;
    d->gts_full = true; /* the decoder's base is now unknown */
    return;
  }
  if (d->overflow) {
    static const uint8_t ovf = 0x70;
    vm_swo_push(vm, &ovf, 1, cycle);
    d->overflows++;
    d->overflow = false;
  }
  vm_swo_push(vm, b, n, cycle);
  d->gts_lo = lo;
  if (full) {
    d->gts_hi = hi;
    d->gts_full = false;
  }
  d->gts_sent++;
}

/* vm_itm_emit's other cases: the formatter, an overflow owed, GTSFREQ 11,
 * or no room. */
static __attribute__((noinline)) bool emit_general(struct sonde_vm *vm, const uint8_t *pkt,
                                                   unsigned len, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  bool idle = vm_itm_gtsfreq(d) == 3 && vm_swo_fifo_used(vm, cycle) == 0;
  unsigned need = len + (d->overflow ? 1 : 0);
  if (fifo_free(vm, cycle) < need) {
    d->overflow = true;
    d->packets_lost++;
    return false;
  }
  if (d->overflow) {
    static const uint8_t ovf = 0x70;
    vm_swo_push(vm, &ovf, 1, cycle);
    d->overflows++;
    d->overflow = false;
  }
  vm_swo_push(vm, pkt, len, cycle);
  if (d->itm_tcr & ITM_TCR_TSENA) {
    bool owed = d->ts_owed;
    d->ts_owed = !emit_ts(vm, cycle, owed ? 1 : 0);
  }
  if (idle) /* GTSFREQ 11: a GTS after a packet that found the FIFO empty */
    vm_itm_gts(vm, cycle);
  return true;
}


/* The bytes queued with a start cycle > cycle, without the formatter (the
 * ring is in start order: the ones that started leave from its head). */
VM_INLINE unsigned fifo_pop_plain(struct vm_dbg *d, uint64_t cycle)
{
  if (d->pin_free <= cycle) { /* every queued byte started before the pin went idle */
    vm_fifo_clear(d);
    return 0;
  }
  return vm_fifo_pop(d, cycle);
}

/* n bytes to the pin at `cycle`, into the FIFO as far as they fit (the
 * caller checked the room): to the SWO callback too when there is one. */
VM_INLINE void send_plain(struct sonde_vm *vm, const uint8_t *b, unsigned n, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  if (VM_UNLIKELY(d->swo_fn != NULL))
    vm_swo_push_plain(vm, b, n, cycle);
  else
    vm_swo_schedule(d, n, cycle, true);
}

/* emit_plain without an SWO callback (the bytes themselves go nowhere) and
 * with a timestamp, if any, for the packet's own cycle (ts_last <= cycle):
 * the packet and its timestamp in one go. What the steps of emit_plain
 * below do: pop the FIFO at `cycle`, queue the packet at the pin's next
 * slot, pop at `cycle` again (the packet's first byte leaves at once when
 * the pin was idle), queue the timestamp after it when it fits. */
VM_INLINE bool emit_plain_quiet(struct vm_dbg *d, unsigned len, uint64_t cycle)
{
  if (d->pin_free <= cycle)
    return vm_itm_emit_idle(d, len, cycle);
  const unsigned used = vm_fifo_pop(d, cycle);
  const uint64_t first = d->pin_free;
  if (VM_DBG_FIFO_BYTES - used < len)
    return false; /* the general path counts the loss */
  const uint32_t step = 10u * ((d->acpr & 0x1FFFu) + 1);
  const uint32_t tcr = d->itm_tcr;
  unsigned q = len; /* bytes to the pin from `first` on */
  bool ts = (tcr & ITM_TCR_TSENA) != 0;
  if (ts)
    q += vm_itm_ts_take(d, tcr, cycle, VM_DBG_FIFO_BYTES - (used + len - (first == cycle)));
  d->pin_free = first + (uint64_t)q * step;
  d->bytes_out += q;
  if (ts && first == cycle) /* the second pop: the first byte started */
    vm_fifo_queue(d, first + step, step, q - 1);
  else
    vm_fifo_queue(d, first, step, q);
  return true;
}

/* vm_itm_emit's common case (every PC sample takes it): no formatter, no
 * overflow owed, no GTSFREQ 11, room for the packet; the FIFO and pin
 * without the formatter's calls, and the timestamp's bytes only written
 * when the SWO callback takes them. The bytes, cycles and FIFO are those
 * of the general path below. */
VM_INLINE bool emit_plain(struct sonde_vm *vm, const uint8_t *pkt, unsigned len, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  if (VM_LIKELY(d->swo_fn == NULL) && d->ts_last <= cycle)
    return emit_plain_quiet(d, len, cycle);
  unsigned used = fifo_pop_plain(d, cycle);
  if (VM_DBG_FIFO_BYTES - used < len)
    return false; /* the general path counts the loss */
  send_plain(vm, pkt, len, cycle);
  const uint32_t tcr = d->itm_tcr;
  if (!(tcr & ITM_TCR_TSENA))
    return true;
  unsigned shift = 2 * ((tcr >> 8) & 3); /* TSPrescale 1, 4, 16, 64 */
  uint64_t at = cycle < d->ts_last ? d->ts_last : cycle;
  uint64_t ticks = (at - d->ts_last) >> shift;
  uint32_t delta = (uint32_t)(ticks > 0x0FFFFFFFu ? 0x0FFFFFFFu : ticks);
  unsigned tc = d->ts_owed ? 1 : 0;
  unsigned n = vm_lts_len(delta, tc);
  used = fifo_pop_plain(d, at);
  if (VM_DBG_FIFO_BYTES - used < n) {
    d->ts_owed = true;
    return true;
  }
  if (VM_UNLIKELY(d->swo_fn != NULL)) {
    uint8_t b[6];
    vm_swo_push_plain(vm, b, lts_encode(b, delta, tc), at);
  } else {
    vm_swo_schedule(d, n, at, true);
  }
  d->ts_last += ticks << shift;
  d->ts_owed = false;
  return true;
}

bool vm_itm_emit(struct sonde_vm *vm, const uint8_t *pkt, unsigned len, uint64_t cycle, bool hw)
{
  struct vm_dbg *d = vm->dbg;
  const uint32_t tcr = d->itm_tcr;
  if (vm_itm_off(d, tcr, hw))
    return false;
  if (VM_LIKELY(vm_itm_plain_case(d, tcr)) && emit_plain(vm, pkt, len, cycle))
    return true;
  return emit_general(vm, pkt, len, cycle);
}

bool vm_itm_emit_plain_busy(struct sonde_vm *vm, const uint8_t *pkt, unsigned len, uint64_t cycle)
{
  return emit_plain(vm, pkt, len, cycle);
}

void vm_itm_sync(struct sonde_vm *vm, uint64_t cycle)
{
  static const uint8_t sync[6] = {0, 0, 0, 0, 0, 0x80};
  struct vm_dbg *d = vm->dbg;
  if (!vm_itm_enabled(vm) || !(d->itm_tcr & ITM_TCR_SYNCENA))
    return;
  if (fifo_free(vm, cycle) >= sizeof sync) {
    vm_swo_push(vm, sync, sizeof sync, cycle);
    d->gts_full = true; /* full GTS1 + GTS2 after a sync (D4.2.5) */
  }
}

static uint32_t id_reg(uint32_t off)
{
  switch (off) {
  case 0xFD0: return 0x04; /* PID4 */
  case 0xFE0: return 0x01; /* PID0: part number 0x001 (ITM) */
  case 0xFE4: return 0xB0; /* PID1 */
  case 0xFE8: return 0x3B; /* PID2 */
  case 0xFEC: return 0x00; /* PID3 */
  case 0xFF0: return 0x0D; /* CID0..3: CoreSight component */
  case 0xFF4: return 0xE0;
  case 0xFF8: return 0x05;
  case 0xFFC: return 0xB1;
  }
  return 0;
}

static int itm_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                    uint32_t *value, bool debug)
{
  (void)ctx;
  (void)debug;
  struct vm_dbg *d = vm->dbg;
  uint32_t off = offset & ~3u, v = 0;
  if (off < 0x80) {
    /* FIFOREADY: the largest stimulus packet (5 bytes) fits. */
    v = vm_itm_enabled(vm) && fifo_free(vm, vm->cpu.cycles) >= 5 + (d->overflow ? 1 : 0);
  } else if (off == 0xE00) {
    v = d->itm_ter;
  } else if (off == 0xE40) {
    v = d->itm_tpr;
  } else if (off == 0xE80) {
    v = d->itm_tcr;
    if (vm_swo_fifo_used(vm, vm->cpu.cycles))
      v |= ITM_TCR_BUSY;
  } else if (off == 0xFB4) {
    v = 1u | (d->itm_unlocked ? 0 : 2u); /* SLI, SLK */
  } else {
    v = id_reg(off);
  }
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int itm_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                     uint32_t value, bool debug)
{
  (void)ctx;
  struct vm_dbg *d = vm->dbg;
  uint32_t off = offset & ~3u;
  if (off < 0x80) {
    unsigned port = off / 4;
    if (!(d->itm_ter & (1u << port)))
      return VM_BUS_OK;
    bool unpriv = vm->cpu.ipsr == 0 && (vm->cpu.control & 1);
    if (unpriv && (d->itm_tpr & (1u << (port / 8))))
      return VM_BUS_OK;
    /* Software source packet, D4.2.8: header A[4:0] << 3 | SS. */
    uint8_t p[5];
    p[0] = (uint8_t)((port << 3) | (size == 4 ? 3 : size));
    for (unsigned i = 0; i < size; i++)
      p[1 + i] = (uint8_t)(value >> (8 * i));
    vm_itm_emit(vm, p, 1 + size, vm->cpu.cycles, false);
    return VM_BUS_OK;
  }
  if (off == 0xFB0) {
    d->itm_unlocked = value == LAR_KEY;
    return VM_BUS_OK;
  }
  if (!debug && !d->itm_unlocked)
    return VM_BUS_OK; /* locked: software writes ignored */
  uint32_t shift = 8 * (offset & 3);
  uint32_t mask = (size == 4 ? 0xFFFFFFFFu : ((1u << (8 * size)) - 1)) << shift;
  value <<= shift;
  if (off == 0xE00) {
    d->itm_ter = (d->itm_ter & ~mask) | (value & mask);
  } else if (off == 0xE40) {
    d->itm_tpr = ((d->itm_tpr & ~mask) | (value & mask)) & 0xF;
  } else if (off == 0xE80) {
    uint32_t old = d->itm_tcr;
    uint32_t nv = ((old & ~mask) | (value & mask)) & 0x007F0F1Fu;
    d->itm_tcr = nv;
    /* The local timestamp counter restarts when timestamps are enabled. */
    /* The first global timestamp after enabling is a full one. */
    if ((nv & ITM_TCR_ITMENA) && ((nv >> ITM_TCR_GTSFREQ_SHIFT) & 3) &&
        (!(old & ITM_TCR_ITMENA) || !((old >> ITM_TCR_GTSFREQ_SHIFT) & 3)))
      d->gts_full = true;
    if ((nv & (ITM_TCR_ITMENA | ITM_TCR_TSENA)) == (ITM_TCR_ITMENA | ITM_TCR_TSENA) &&
        (old & (ITM_TCR_ITMENA | ITM_TCR_TSENA)) != (ITM_TCR_ITMENA | ITM_TCR_TSENA)) {
      d->ts_last = vm->cpu.cycles;
      d->ts_owed = false;
    }
    vm_dwt_schedule(vm);
  }
  return VM_BUS_OK;
}

const struct vm_device_ops vm_itm_ops = {"itm", itm_read, itm_write};
