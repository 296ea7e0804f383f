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
#include <stdlib.h>

#include "dbg.h"
#include "vm_internal.h"

static uint32_t bit_cycles(const struct vm_dbg *d)
{
  return (d->acpr & 0x1FFFu) + 1;
}

unsigned vm_swo_fifo_used(struct sonde_vm *vm, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  while (d->fifo_n && d->fifo_start[d->fifo_head] <= cycle) {
    d->fifo_head = (d->fifo_head + 1) % VM_DBG_FIFO_BYTES;
    d->fifo_n--;
  }
  return d->fifo_n;
}

void vm_swo_push(struct sonde_vm *vm, const uint8_t *b, unsigned n, uint64_t cycle)
{
  struct vm_dbg *d = vm->dbg;
  uint32_t bc = bit_cycles(d);
  uint8_t proto = d->sppr == 1 ? SONDE_VM_SWO_MANCHESTER : SONDE_VM_SWO_NRZ;
  for (unsigned i = 0; i < n; i++) {
    uint64_t start = cycle > d->pin_free ? cycle : d->pin_free;
    d->pin_free = start + 10ull * bc;
    if (d->fifo_n < VM_DBG_FIFO_BYTES) {
      d->fifo_start[(d->fifo_head + d->fifo_n) % VM_DBG_FIFO_BYTES] = start;
      d->fifo_n++;
    }
    d->bytes_out++;
    if (d->swo_fn && !d->swo_error) {
      struct sonde_vm_swo_byte sb = {start, d->pin_free, bc, b[i], proto};
      int rc = d->swo_fn(d->swo_ctx, &sb);
      if (rc < 0) {
        d->swo_error = rc;
        sonde_diag_set(&vm->diag, rc, "SWO output callback failed");
        vm_request_stop(vm, SONDE_VM_STOP_ERROR);
      }
    }
  }
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

/* Level of the pin at `cycle` inside byte b's frame. */
static uint8_t level(const struct sonde_vm_swo_byte *b, uint64_t cycle)
{
  uint64_t rel = cycle - b->start_cycle;
  unsigned bit = (unsigned)(rel / b->bit_cycles);
  if (b->protocol == SONDE_VM_SWO_MANCHESTER) {
    if (bit >= 9)
      return 0;
    unsigned v = bit == 0 ? 1 : (b->byte >> (bit - 1)) & 1;
    bool first_half = 2 * (rel % b->bit_cycles) < b->bit_cycles;
    return (uint8_t)(first_half ? v : !v);
  }
  if (bit == 0)
    return 0;
  if (bit >= 9)
    return 1;
  return (uint8_t)((b->byte >> (bit - 1)) & 1);
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
