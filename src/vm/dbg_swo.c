/* The output FIFO and the SWO pin of the virtual Cortex-M, and the pin as
 * logic-analyzer samples.
 *
 * TPIU pin protocols (ARMv7-M ARM C1.10.3, CoreSight TPIU DDI 0314 "Serial
 * wire output"): NRZ (TPIU_SPPR = 2) is UART 8N1, idle HIGH; Manchester
 * (TPIU_SPPR = 1) is a start bit (logic 1) and 8 data bits LSB first, logic 1 =
 * HIGH then LOW, logic 0 = LOW then HIGH, idle LOW. The pin's bit time is
 * ACPR+1 cycles of TRACECLKIN, which is the core clock here. Each byte takes 10
 * bit times on the pin in both protocols (NRZ: start, 8 data, stop; Manchester:
 * start, 8 data, one idle bit so that every byte is its own Manchester packet).
 *
 * FIFO model (docs/vm.md): VM_DBG_FIFO_BYTES bytes between the ITM and the
 * pin. A byte leaves the FIFO when its start bit begins. Since the pin drains
 * in order at a fixed rate, a byte's pin slot is known when it is queued:
 * start = max(queued cycle, end of the previous byte). */
#include <stdint.h>
#include <stdlib.h>

#include "dbg.h"
#include "vm_internal.h"

static uint32_t bit_cycles(const struct vm_dbg *d)
{
  return (d->acpr & 0x1FFFu) + 1;
}

static void fifo_add(struct vm_dbg *d, uint64_t start)
{
  if (d->fifo_n < VM_DBG_FIFO_BYTES)
    vm_fifo_queue(d, start, 0, 1);
}

/* The last n queued bytes start at `start` (a frame carrying them starts). */
static void fifo_retime_tail(struct vm_dbg *d, unsigned n, uint64_t start)
{
  for (unsigned left = n; left;) {
    struct vm_fifo_run *r =
        &d->fifo_run[(d->fifo_head + d->fifo_runs - 1) % VM_DBG_FIFO_BYTES];
    unsigned k = r->n < left ? r->n : left;
    r->n -= k;
    d->fifo_n -= k;
    left -= k;
    if (!r->n)
      d->fifo_runs--;
  }
  vm_fifo_queue(d, start, 0, n);
}

_Static_assert((VM_DBG_FIFO_BYTES & (VM_DBG_FIFO_BYTES - 1)) == 0, "the FIFO ring is a power of two");

/* Send n bytes to the pin, the first not before `cycle`; returns the start
 * cycle of the first. `queue`: each byte also enters the output FIFO until
 * its start bit (unformatted output; the formatter queues its own). The
 * pin drains at a fixed rate, so byte i starts at first + i x 10 bit times
 * (every packet's bytes; PC samples make this the hot path). */
static uint64_t pin_send(struct sonde_vm *vm, const uint8_t *b, unsigned n, uint64_t cycle,
                         bool queue)
{
  struct vm_dbg *d = vm->dbg;
  const uint32_t bc = bit_cycles(d);
  const uint64_t step = 10ull * bc;
  const uint64_t first = vm_swo_schedule(d, n, cycle, queue);
  if (d->swo_fn && !d->swo_error) {
    uint8_t proto = d->sppr == 1 ? SONDE_VM_SWO_MANCHESTER : SONDE_VM_SWO_NRZ;
    for (unsigned i = 0; i < n; i++) {
      struct sonde_vm_swo_byte sb = {first + i * step, first + (i + 1) * step, bc, b[i], proto,
                                     0, 0};
      int rc = d->swo_fn(d->swo_ctx, &sb);
      if (rc < 0) {
        d->swo_error = rc;
        sonde_diag_set(&vm->diag, rc, "SWO output callback failed");
        vm_request_stop(vm, SONDE_VM_STOP_ERROR);
        break;
      }
    }
  }
  return first;
}

/* ---- TPIU formatter (CoreSight Architecture Spec IHI 0029, "Trace
 * formatter"; docs/vm.md) ----
 * 16-byte frames: slots 0..14 carry data, byte 15 the aux bits. An even slot
 * holds an ID change ((ID << 1) | 1) or a data byte with its bit 0 moved to aux
 * bit slot/2; odd slots hold whole data bytes. A full sync FF FF FF 7F goes
 * out before the first frame and before every VM_TPIU_SYNC_FRAMES-th frame.
 * The only source is the ITM, with ID ITM_TCR.TraceBusID. A partial frame is
 * completed (ID change to the null ID 0, zero filler) and sent when the pin
 * has nothing else to send and no further trace byte arrives in that cycle. */

static void fmt_slot(struct vm_dbg *d, uint8_t v, bool is_id, bool aux_old)
{
  unsigned k = d->fmt_pos;
  if (k & 1) {
    d->fmt_frame[k] = v;
  } else {
    d->fmt_frame[k] = is_id ? v : (uint8_t)(v & 0xFE);
    uint8_t bit = is_id ? (uint8_t)aux_old : (uint8_t)(v & 1);
    d->fmt_frame[15] = (uint8_t)((d->fmt_frame[15] & ~(1u << (k / 2))) | (bit << (k / 2)));
  }
  d->fmt_pos++;
}

/* Record an ID change at the next slot. At an odd slot the data byte of the
 * even slot before it moves into the odd slot and the even slot becomes the
 * ID change with aux = 1 ("the next byte keeps the old ID"). */
static void fmt_id(struct vm_dbg *d, int id)
{
  uint8_t ib = (uint8_t)((id << 1) | 1);
  if (d->fmt_pos & 1) {
    unsigned k = d->fmt_pos - 1;
    uint8_t data = (uint8_t)(d->fmt_frame[k] | ((d->fmt_frame[15] >> (k / 2)) & 1));
    d->fmt_pos = k;
    fmt_slot(d, ib, true, true);
    fmt_slot(d, data, false, false);
  } else {
    fmt_slot(d, ib, true, false);
  }
  d->fmt_id = id;
}

/* Send the frame (with a full sync first when due) no earlier than `cycle`;
 * the source bytes it carries leave the FIFO when it starts. */
static void fmt_send(struct sonde_vm *vm, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  static const uint8_t fsync[4] = {0xFF, 0xFF, 0xFF, 0x7F};
  if (d->fmt_frames % VM_TPIU_SYNC_FRAMES == 0) {
    pin_send(vm, fsync, 4, cycle, false);
    d->fmt_frames = 0;
  }
  d->fmt_frames++;
  uint64_t start = pin_send(vm, d->fmt_frame, 16, cycle, false);
  fifo_retime_tail(d, d->fmt_pending > d->fifo_n ? d->fifo_n : d->fmt_pending, start);
  d->fmt_pending = 0;
  d->fmt_pos = 0;
  for (unsigned i = 0; i < 16; i++)
    d->fmt_frame[i] = 0;
}

/* The idle rule: a partial frame goes out at max(pin free, its last byte)
 * once a later cycle is reached (lazy, so bytes of the same cycle join it). */
static void fmt_idle(struct sonde_vm *vm, uint64_t cycle, bool force)
{
  struct vm_dbg *d = vm->dbg;
  if (!d->fmt_pending)
    return;
  uint64_t t = d->pin_free > d->fmt_last ? d->pin_free : d->fmt_last;
  if (!force && t >= cycle)
    return;
  if (d->fmt_pos < 15 && d->fmt_id != 0)
    fmt_id(d, 0);
  while (d->fmt_pos < 15)
    fmt_slot(d, 0, false, false);
  fmt_send(vm, t);
  vm_swo_rearm(vm);
}

/* Arm the idle timer for the first cycle after the pin and the frame's last
 * byte, or disarm it when no frame is pending. */
void vm_swo_rearm(struct sonde_vm *vm)
{
  struct vm_dbg *d = vm->dbg;
  uint64_t t = d->pin_free > d->fmt_last ? d->pin_free : d->fmt_last;
  vm_sys_timer_set(vm, d->fmt_timer, d->fmt_pending ? t + 1 : UINT64_MAX);
}

void vm_swo_timer_fire(struct sonde_vm *vm, void *ctx)
{
  (void)ctx;
  struct vm_dbg *d = vm->dbg;
  uint64_t t = d->pin_free > d->fmt_last ? d->pin_free : d->fmt_last;
  /* timers may fire inside an exception entry, before cpu.cycles reaches them */
  fmt_idle(vm, vm->cpu.cycles > t ? vm->cpu.cycles : t + 1, false);
  vm_swo_rearm(vm);
}

static void fmt_push(struct sonde_vm *vm, const uint8_t *b, unsigned n, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  int id = (int)((d->itm_tcr >> 16) & 0x7F);
  for (unsigned i = 0; i < n; i++) {
    if (d->fmt_id != id) {
      fmt_id(d, id);
      if (d->fmt_pos == 15)
        fmt_send(vm, cycle);
    }
    fifo_add(d, UINT64_MAX); /* leaves when its frame starts (fmt_send) */
    fmt_slot(d, b[i], false, false);
    d->fmt_pending++;
    d->fmt_last = cycle;
    if (d->fmt_pos == 15)
      fmt_send(vm, cycle);
  }
  vm_swo_rearm(vm);
}

void sonde_vm_swo_flush(struct sonde_vm *vm)
{
  if (vm && vm->dbg)
    fmt_idle(vm, 0, true);
}

unsigned vm_swo_fifo_used(struct sonde_vm *vm, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  if (d->fmt_pending)
    fmt_idle(vm, cycle, false);
  return vm_fifo_pop(d, cycle);
}

uint64_t vm_swo_push_plain(struct sonde_vm *vm, const uint8_t *b, unsigned n, uint64_t cycle)
{
  return pin_send(vm, b, n, cycle, true);
}

void vm_swo_push(struct sonde_vm *vm, const uint8_t *b, unsigned n, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  if (d->fmt_pending)
    fmt_idle(vm, cycle, false);
  bool fmt = (d->ffcr & TPIU_FFCR_ENFCONT) != 0;
  if (!fmt && d->fmt_pending)
    fmt_idle(vm, cycle, true); /* formatter switched off: finish its frame */
  if (fmt) {
    fmt_push(vm, b, n, cycle);
    return;
  }
  pin_send(vm, b, n, cycle, true);
}

void sonde_vm_set_swo(struct sonde_vm *vm, sonde_vm_swo_fn fn, void *ctx)
{
  if (!vm || !vm->dbg)
    return;
  vm->dbg->swo_fn = fn;
  vm->dbg->swo_ctx = ctx;
  vm->dbg->swo_error = 0;
}

void sonde_vm_swo_stats(const struct sonde_vm *vm, uint64_t *bytes, uint64_t *lost,
                        uint64_t *overflows)
{
  const struct vm_dbg *d = vm ? vm->dbg : NULL;
  if (bytes)
    *bytes = d ? d->bytes_out : 0;
  if (lost)
    *lost = d ? d->packets_lost : 0;
  if (overflows)
    *overflows = d ? d->overflows : 0;
}

/* ---- logic-analyzer samples ------------------------------------------------ */

struct sonde_vm_swo_sampler {
  uint64_t clock_hz, rate_hz;
  uint64_t next;      /* index of the next sample to write */
  uint8_t idle;       /* idle level of the last protocol seen */
  uint8_t buf[4096];
  size_t n;
};

int sonde_vm_swo_sampler_new(uint64_t clock_hz, uint64_t rate_hz,
                             struct sonde_vm_swo_sampler **out)
{
  if (!out || !clock_hz || !rate_hz)
    return SONDE_E_ARG;
  struct sonde_vm_swo_sampler *s = calloc(1, sizeof *s);
  if (!s)
    return SONDE_E_NOMEM;
  s->clock_hz = clock_hz;
  s->rate_hz = rate_hz;
  s->idle = 1;
  *out = s;
  return 0;
}

void sonde_vm_swo_sampler_free(struct sonde_vm_swo_sampler *s)
{
  free(s);
}

/* Cycle of sample k, and the first sample at or after a cycle (exact integer
 * arithmetic: 128-bit intermediate). */
static uint64_t sample_cycle(const struct sonde_vm_swo_sampler *s, uint64_t k)
{
  return (uint64_t)((unsigned __int128)k * s->clock_hz / s->rate_hz);
}

static int put(struct sonde_vm_swo_sampler *s, uint8_t v, sonde_vm_write_fn w, void *ctx)
{
  s->buf[s->n++] = v;
  s->next++;
  if (s->n == sizeof s->buf) {
    int rc = w(ctx, 0, s->buf, s->n);
    s->n = 0;
    return rc;
  }
  return 0;
}

static int flush(struct sonde_vm_swo_sampler *s, sonde_vm_write_fn w, void *ctx)
{
  int rc = s->n ? w(ctx, 0, s->buf, s->n) : 0;
  s->n = 0;
  return rc;
}

/* Level of the pin at `cycle` inside byte b's frame. The bit time is
 * bit_cycles scaled by (1 + skew_ppm / 10^6), in exact integer arithmetic, so
 * an injected baud error need not be a whole number of cycles. */
static uint8_t level(const struct sonde_vm_swo_byte *b, uint64_t cycle)
{
  uint64_t rel = (cycle - b->start_cycle) * 1000000u;
  uint64_t len = (uint64_t)b->bit_cycles * (uint64_t)(1000000 + (int64_t)b->skew_ppm);
  unsigned bit = (unsigned)(rel / len);
  unsigned v;
  if (b->protocol == SONDE_VM_SWO_MANCHESTER) {
    if (bit >= 9)
      return 0;
    v = bit == 0 ? 1 : (b->byte >> (bit - 1)) & 1;
    if (2 * (rel % len) >= len) /* second half of the bit: the inverse */
      v = !v;
  } else {
    v = bit == 0 ? 0 : bit >= 9 ? 1 : (b->byte >> (bit - 1)) & 1;
  }
  if (bit < 10 && (b->flip >> bit) & 1)
    v = !v;
  return (uint8_t)v;
}

int sonde_vm_swo_sampler_feed(struct sonde_vm_swo_sampler *s, const struct sonde_vm_swo_byte *b,
                              sonde_vm_write_fn write, void *ctx)
{
  if (!s || !b || !write || !b->bit_cycles)
    return SONDE_E_ARG;
  int rc = 0;
  s->idle = b->protocol == SONDE_VM_SWO_MANCHESTER ? 0 : 1;
  for (uint64_t c; rc == 0 && (c = sample_cycle(s, s->next)) < b->end_cycle;)
    rc = put(s, c < b->start_cycle ? s->idle : level(b, c), write, ctx);
  return rc;
}

int sonde_vm_swo_sampler_finish(struct sonde_vm_swo_sampler *s, uint64_t end_cycle,
                                sonde_vm_write_fn write, void *ctx)
{
  if (!s || !write)
    return SONDE_E_ARG;
  int rc = 0;
  while (rc == 0 && sample_cycle(s, s->next) < end_cycle)
    rc = put(s, s->idle, write, ctx);
  if (rc == 0)
    rc = flush(s, write, ctx);
  return rc;
}
