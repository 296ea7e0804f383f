/* Watchpoint mode (monitor.h; AVEKSHA section 3.3) on the DWT's comparators
 * (ARMv7-M ARM C1.8.17, DWT_FUNCTIONn):
 *   function entry, marker   COMP = address, MASK 0, FUNCTION 8 (PC match:
 *                            MATCHED only; ARMv7-M emits no packet for it)
 *   read in a range          COMP = base, MASK = log2(size), FUNCTION 0xC
 *                            (data trace: a value packet on a read)
 *   write to a variable      COMP = address, MASK = log2(size), FUNCTION 0xD
 *                            (a value packet on a write)
 * Value packets only (5 bytes, not 10 with the PC): twice the event rate
 * before the 16-byte FIFO overflows; events then carry pc = 0.
 * Data trace leaves through the ITM and the SWO pin (vm: the VM's pin, decoded
 * with src/itm); the FIFO overflows when events come faster than the pin
 * drains, and the ITM says so with an overflow packet (the VM also counts the
 * packets it dropped, exactly). MATCHED bits (clear on read) are drained over
 * the link every C cycles (vm) or as fast as the link allows: one event per
 * comparator per drain at most, which is this mode's rate limit for PC
 * triggers, as the 8-entry buffer is AVEKSHA's. */
#include "monitor_internal.h"

#include <stdlib.h>
#include <string.h>

#include "sonde/itm.h"

#define VM_DEFAULT_MAX_CYCLES 10000000000ull
#define DEFAULT_DRAIN 100u
#define NCOMP 4u
#define TRCENA (1u << 24)
#define MATCHED (1u << 24)
#define ITM_LAR 0xE0000FB0u
#define ITM_TCR 0xE0000E80u
#define ITM_TER 0xE0000E00u
#define TPIU_SPPR 0xE00400F0u
#define TPIU_ACPR 0xE0040010u
#define TPIU_FFCR 0xE0040304u
#define RING 64u

struct wctx {
  struct sonde_mon_watch_result *res;
  size_t cap;
  const struct sonde_mon_trigger *trig;
  unsigned ntrig;
  int comp_trig[NCOMP];   /* trigger index of each comparator, -1 */
  struct sonde_itm *itm;
  uint64_t offset;        /* SWO bytes seen */
  uint64_t ring[RING];    /* start cycle of recent bytes, by offset */
  uint32_t last_pc[NCOMP];
  uint64_t last_pc_cycle[NCOMP];
  int err;
};

static void add_event(struct wctx *w, uint64_t cycle, unsigned trig, uint32_t pc, uint32_t value)
{
  struct sonde_mon_watch_result *r = w->res;
  if (w->err)
    return;
  if (mon_grow((void **)&r->events, &w->cap, r->nevents, sizeof *r->events) < 0) {
    w->err = SONDE_E_NOMEM;
    return;
  }
  struct sonde_mon_event *e = &r->events[r->nevents++];
  e->cycle = cycle;
  e->trigger = trig;
  e->pc = pc;
  e->value = value;
}

static void on_packet(struct wctx *w, const struct sonde_itm_packet *p)
{
  if (p->type == SONDE_ITM_OVERFLOW) {
    w->res->overflows++;
    return;
  }
  unsigned c = p->port;
  if (c >= NCOMP || w->comp_trig[c] < 0)
    return;
  uint64_t cyc = w->ring[p->offset % RING];
  if (p->type == SONDE_ITM_DT_PC) {
    w->last_pc[c] = (uint32_t)p->value;
    w->last_pc_cycle[c] = cyc;
  } else if (p->type == SONDE_ITM_DT_DATA) {
    /* a PC packet of the same match, if any, came just before */
    add_event(w, w->last_pc_cycle[c] ? w->last_pc_cycle[c] : cyc, (unsigned)w->comp_trig[c],
              w->last_pc_cycle[c] ? w->last_pc[c] : 0, (uint32_t)p->value);
    w->last_pc_cycle[c] = 0;
  }
}

static int on_swo(void *ctx, const struct sonde_vm_swo_byte *b)
{
  struct wctx *w = ctx;
  struct sonde_itm_packet pk[4];
  size_t used;
  w->ring[w->offset % RING] = b->start_cycle;
  w->offset++;
  size_t n = sonde_itm_decode(w->itm, &b->byte, 1, &used, pk, 4);
  for (size_t i = 0; i < n; i++)
    on_packet(w, &pk[i]);
  return 0;
}

static unsigned log2_size(uint32_t size)
{
  unsigned k = 0;
  while (k < 31 && (1u << k) < size)
    k++;
  return k;
}

/* Program comparator c for trigger t. */
static int program(struct sonde_mon_link *l, unsigned c, const struct sonde_mon_trigger *t)
{
  uint32_t fn, mask = 0;
  switch (t->kind) {
  case SONDE_MON_TRIG_FUNC_ENTRY:
  case SONDE_MON_TRIG_MARKER: fn = 8; break;
  case SONDE_MON_TRIG_READ_RANGE: fn = 0xC; mask = log2_size(t->size); break;
  case SONDE_MON_TRIG_WRITE_VAR: fn = 0xD; mask = log2_size(t->size); break;
  default:
    return sonde_diag_set(&l->diag, SONDE_E_ARG, "trigger '%s': unknown kind", t->name);
  }
  if (mask && (t->addr & ((1u << mask) - 1)))
    return sonde_diag_set(&l->diag, SONDE_E_ARG,
                          "trigger '%s': 0x%08x is not aligned to its size %u (a DWT mask covers "
                          "a power-of-two aligned range)",
                          t->name, (unsigned)t->addr, (unsigned)t->size);
  int rc = sonde_mon_write32(l, SONDE_MON_DWT_FUNCTION(c), 0);
  if (rc == 0)
    rc = sonde_mon_write32(l, SONDE_MON_DWT_COMP(c), t->addr & ~(t->kind <= 1 ? 1u : 0u));
  if (rc == 0)
    rc = sonde_mon_write32(l, SONDE_MON_DWT_MASK(c), mask);
  if (rc == 0)
    rc = sonde_mon_write32(l, SONDE_MON_DWT_FUNCTION(c), fn);
  return rc;
}

static bool is_pc_trigger(const struct sonde_mon_trigger *t)
{
  return t->kind == SONDE_MON_TRIG_FUNC_ENTRY || t->kind == SONDE_MON_TRIG_MARKER;
}

/* Read the MATCHED bits (clears them) and log what they say. */
static int drain(struct sonde_mon_link *l, struct wctx *w, bool all, uint64_t cycle)
{
  w->res->drains++;
  for (unsigned c = 0; c < w->ntrig; c++) {
    const struct sonde_mon_trigger *t = &w->trig[c];
    if (!all && !is_pc_trigger(t))
      continue;
    uint32_t f;
    int rc = sonde_mon_read32(l, SONDE_MON_DWT_FUNCTION(c), &f);
    if (rc < 0)
      return rc;
    if (!(f & MATCHED))
      continue;
    uint32_t value = 0;
    if (t->kind == SONDE_MON_TRIG_WRITE_VAR && (rc = sonde_mon_read32(l, t->addr & ~3u, &value)) < 0)
      return rc;
    add_event(w, cycle, c, is_pc_trigger(t) ? t->addr : 0, value);
  }
  return 0;
}

static int cmp_event(const void *a, const void *b)
{
  const struct sonde_mon_event *x = a, *y = b;
  return x->cycle < y->cycle ? -1 : x->cycle > y->cycle ? 1 : (int)x->trigger - (int)y->trigger;
}

int sonde_mon_watch(struct sonde_mon_link *l, const struct sonde_mon_trigger *trig, unsigned ntrig,
                    const struct sonde_mon_watch_opts *opts, struct sonde_mon_watch_result *res)
{
  struct sonde_mon_watch_opts def;
  memset(&def, 0, sizeof def);
  const struct sonde_mon_watch_opts *o = opts ? opts : &def;
  memset(res, 0, sizeof *res);
  if (ntrig > NCOMP)
    return res->error = sonde_diag_set(&l->diag, SONDE_E_LIMIT,
                                       "%u triggers, but the DWT has %u comparators", ntrig, NCOMP);
  struct wctx w;
  memset(&w, 0, sizeof w);
  w.res = res;
  w.trig = trig;
  w.ntrig = ntrig;
  for (unsigned c = 0; c < NCOMP; c++)
    w.comp_trig[c] = c < ntrig ? (int)c : -1;
  bool vm = l->kind == SONDE_MON_LINK_VM;
  bool itm = vm && !o->drain_only;
  bool halting = !l->reads_running;
  int rc = halting ? sonde_mon_halt(l) : 0;
  uint32_t demcr = 0;
  if (rc == 0)
    rc = sonde_mon_read32(l, SONDE_MON_DEMCR, &demcr);
  if (rc == 0)
    rc = sonde_mon_write32(l, SONDE_MON_DEMCR, demcr | TRCENA);
  if (rc == 0)
    rc = mon_enable_cyccnt(l);
  uint32_t ctrl = 0;
  if (rc == 0)
    rc = sonde_mon_read32(l, SONDE_MON_DWT_CTRL, &ctrl);
  if (rc == 0 && ntrig > (ctrl >> 28))
    rc = sonde_diag_set(&l->diag, SONDE_E_LIMIT, "%s: %u triggers, but the DWT has %u comparators",
                        l->name, ntrig, (unsigned)(ctrl >> 28));
  for (unsigned c = 0; c < ntrig && rc == 0; c++)
    rc = program(l, c, &trig[c]);
  if (rc == 0 && !vm && !halting)
    rc = mon_run_if_halted(l);
  if (rc == 0 && itm) {
    /* ITM on, DWT packets forwarded (TXENA), NRZ SWO without the formatter */
    rc = sonde_mon_write32(l, ITM_LAR, 0xC5ACCE55u);
    if (rc == 0)
      rc = sonde_mon_write32(l, ITM_TCR, 0x0001000Du); /* TraceBusID 1, TXENA, SYNCENA, ITMENA */
    if (rc == 0)
      rc = sonde_mon_write32(l, TPIU_SPPR, 2);
    if (rc == 0)
      rc = sonde_mon_write32(l, TPIU_ACPR, o->swo_acpr);
    if (rc == 0)
      rc = sonde_mon_write32(l, TPIU_FFCR, 0x100);
    if (rc == 0 && !(w.itm = sonde_itm_new(NULL)))
      rc = SONDE_E_NOMEM;
    if (rc == 0)
      sonde_vm_set_swo(l->vm, on_swo, &w);
  }
  if (rc < 0)
    goto out;
  uint64_t t0 = mon_now_ns();
  if (vm) {
    uint64_t every = o->drain_every ? o->drain_every : DEFAULT_DRAIN;
    uint64_t budget = o->max_cycles ? o->max_cycles : VM_DEFAULT_MAX_CYCLES, start = 0, now = 0;
    sonde_mon_cycles(l, &start);
    bool any_drain = false;
    for (unsigned c = 0; c < ntrig; c++)
      any_drain |= is_pc_trigger(&trig[c]) || !itm;
    for (;;) {
      sonde_mon_cycles(l, &now);
      if (now - start >= budget)
        break;
      uint64_t step = any_drain ? every : budget - (now - start);
      int st = sonde_mon_wait(l, step < budget - (now - start) ? step : budget - (now - start), 0);
      if (st < 0) {
        rc = st;
        break;
      }
      sonde_mon_cycles(l, &now);
      if (any_drain && (rc = drain(l, &w, !itm, now)) < 0)
        break;
      if (st == SONDE_MON_EXITED) {
        res->exited = true;
        res->exit_code = l->exit_code;
        break;
      }
      if (st == SONDE_MON_HALTED) {
        rc = sonde_diag_set(&l->diag, SONDE_E_STATE, "vm: the core halted during watchpoint mode");
        break;
      }
    }
    if (itm) {
      sonde_vm_swo_flush(l->vm);
      struct sonde_itm_packet pk[4];
      size_t n = sonde_itm_finish(w.itm, pk, 4);
      for (size_t i = 0; i < n; i++)
        on_packet(&w, &pk[i]);
      uint64_t bytes, lost, ovf;
      sonde_vm_swo_stats(l->vm, &bytes, &lost, &ovf);
      res->lost = lost;
      sonde_vm_set_swo(l->vm, NULL, NULL);
    }
  } else {
    unsigned ms = o->max_ms ? o->max_ms : 1000;
    uint64_t deadline = t0 + (uint64_t)ms * 1000000u;
    if (halting && (rc = sonde_mon_resume(l)) < 0)
      goto out;
    while (mon_now_ns() < deadline) {
      uint64_t cyc = 0;
      if (halting) {
        if ((rc = sonde_mon_halt(l)) < 0)
          break;
        if (l->exited) {
          res->exited = true;
          res->exit_code = l->exit_code;
          break;
        }
      }
      if ((rc = sonde_mon_cycles(l, &cyc)) < 0 || (rc = drain(l, &w, true, cyc)) < 0)
        break;
      if (halting && (rc = sonde_mon_resume(l)) < 0)
        break;
    }
  }
  res->host_ns = mon_now_ns() - t0;
  res->drains_per_host_s = res->host_ns ? (double)res->drains * 1e9 / (double)res->host_ns : 0;
out:
  sonde_itm_free(w.itm);
  if (!rc && w.err)
    rc = w.err;
  if (res->nevents)
    qsort(res->events, res->nevents, sizeof *res->events, cmp_event);
  res->error = rc;
  return rc;
}

void sonde_mon_watch_result_free(struct sonde_mon_watch_result *res)
{
  if (!res)
    return;
  free(res->events);
  res->events = NULL;
  res->nevents = 0;
}

/* Scan [lo, hi) as Thumb code from lo: 32-bit instructions are skipped whole,
 * so their halves are never taken for markers. */
static long scan(sonde_mon_read_fn read, void *ctx, uint32_t lo, uint32_t hi, uint32_t *addrs,
                 size_t cap, long n)
{
  uint8_t buf[1024 + 2];
  uint32_t a = lo & ~1u;
  while (a + 2 <= hi) {
    size_t len = hi - a < 1024 ? hi - a : 1024;
    len &= ~(size_t)1;
    if (read(ctx, a, buf, len) != 0)
      break;
    size_t i = 0;
    while (i + 2 <= len) {
      uint16_t hw = (uint16_t)(buf[i] | buf[i + 1] << 8);
      if (hw == SONDE_MON_MARKER_INSN) {
        if ((size_t)n < cap)
          addrs[n] = a + (uint32_t)i;
        n++;
      }
      i += ((hw >> 11) >= 0x1D) ? 4 : 2;
    }
    a += (uint32_t)i; /* past a 32-bit instruction straddling the piece, too */
  }
  return n;
}

long sonde_mon_find_markers(sonde_mon_read_fn read, void *ctx, const struct sonde_mon_ftab *ft,
                            uint32_t lo, uint32_t hi, uint32_t *addrs, size_t cap)
{
  if (!ft)
    return scan(read, ctx, lo, hi, addrs, cap, 0);
  long n = 0;
  for (size_t i = 0; i < ft->n; i++) {
    const struct sonde_mon_func *f = &ft->f[i];
    uint32_t a = f->start > lo ? f->start : lo, b = f->end < hi ? f->end : hi;
    if (a < b)
      n = scan(read, ctx, a, b, addrs, cap, n);
  }
  return n;
}
