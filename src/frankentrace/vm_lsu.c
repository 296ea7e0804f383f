/* Noninvasive LSU traces of an unmodified image on the VM (paper 5.2, "noninvasive";
 * sonde/frankentrace_vm.h). As a debugger halted at reset would, the host
 * sets the trace blocks through the debug port for each (range, packet kind):
 * comparator 0 on the 64 KiB range emitting data address offsets, data values
 * or PCs, local timestamps on; no DebugMonitor, no delays, so the runs keep
 * the program's own timing and every timestamp is a true cycle. That makes
 * pairs unnecessary: one range per run (the fewest packets per run), and the
 * three kinds of a transfer meet at its cycle. What the ITM could not take
 * (an overflow) is lost: its window becomes a gap of that range, a transfer
 * not seen in all three kinds is counted there, and nothing is guessed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ft_vm.h"
#include "ft_wire.h"
#include "sonde/frankentrace_runner.h"
#include "sonde/frankentrace_vm.h"

#define DEFAULT_MAX_CYCLES 10000000000ull

struct ent {
  uint64_t cycle;
  bool exact;  /* dated by its own local timestamp */
  uint8_t size;
  bool write;
  uint32_t v;
};

struct gapw { /* transfers may be missing in (after, before) */
  uint64_t after, before;
};

struct lrun {
  uint32_t r16;
  unsigned kind;
  int rc;
  char msg[300];
  struct ent *e;
  size_t n, cap;
  struct gapw *g;
  size_t ng, gcap;
  uint64_t swo_bytes, overflows, cycles;
  int exit_code;
};

static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
  if (n < *cap)
    return 0;
  size_t c = *cap ? 2 * *cap : 256;
  void *q = realloc(*p, c * sz);
  if (!q)
    return SONDE_E_NOMEM;
  *p = q;
  *cap = c;
  return 0;
}

static int wr(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  return sonde_vm_write_mem(vm, addr, &v, 4);
}

/* The packets of one run: each data-trace packet is dated by the local
 * timestamp after it (the one for the latest packet); a packet whose own
 * timestamp did not fit is undated. Overflows open a gap window from the last
 * dated packet to the next. */
static int decode_run(struct lrun *r, const uint8_t *b, size_t len, uint64_t c0)
{
  static const uint8_t want[SONDE_FT_LSU_KINDS] = {SONDE_ITM_DT_ADDR, SONDE_ITM_DT_DATA,
                                                    SONDE_ITM_DT_PC};
  struct sonde_itm *dec = sonde_itm_new(NULL);
  if (!dec)
    return SONDE_E_NOMEM;
  struct sonde_itm_packet pk[256];
  size_t off = 0, pend0 = 0; /* entries [pend0, n) wait for their timestamp */
  uint64_t ts = 0, last = c0;
  bool open_gap = false;
  int rc = 0;
  for (bool end = false; !end && !rc;) {
    size_t used = 0, np;
    if (off < len) {
      np = sonde_itm_decode(dec, b + off, len - off, &used, pk, 256);
      off += used;
    } else {
      np = sonde_itm_finish(dec, pk, 256);
      end = true;
    }
    for (size_t i = 0; i < np && !rc; i++) {
      const struct sonde_itm_packet *q = &pk[i];
      if (q->type == want[r->kind] && q->port == 0) {
        if ((rc = grow((void **)&r->e, &r->cap, r->n, sizeof *r->e)))
          break;
        r->e[r->n++] = (struct ent){UINT64_MAX, false, q->size,
                                    (q->flags & SONDE_ITM_DT_WRITE) != 0, (uint32_t)q->value};
      } else if (q->type == SONDE_ITM_LTS) {
        ts += q->value;
        if (pend0 < r->n) {
          for (size_t k = pend0; k < r->n; k++)
            r->e[k].cycle = c0 + ts; /* at most: only the last one is exact */
          /* the timestamp is the latest packet's cycle (TC bit 1: that
           * packet itself was delayed, not dated exactly) */
          r->e[r->n - 1].exact = (q->flags & 0x02) == 0;
          last = c0 + ts;
          if (open_gap) {
            r->g[r->ng - 1].before = last;
            open_gap = false;
          }
          pend0 = r->n;
        }
      } else if (q->type == SONDE_ITM_OVERFLOW) {
        r->overflows++;
        if (!open_gap) {
          if ((rc = grow((void **)&r->g, &r->gcap, r->ng, sizeof *r->g)))
            break;
          r->g[r->ng++] = (struct gapw){last, UINT64_MAX};
          open_gap = true;
        }
      } else if (q->type == SONDE_ITM_SKIP && q->flags != SONDE_ITM_SKIP_TRUNCATED) {
        snprintf(r->msg, sizeof r->msg, "the ITM decoder lost %llu bytes at offset %llu",
                 (unsigned long long)q->value, (unsigned long long)q->offset);
        rc = SONDE_E_FORMAT;
      }
    }
  }
  sonde_itm_free(dec);
  return rc;
}

static const uint32_t kind_fn[SONDE_FT_LSU_KINDS] = {0x21u, 0x02u, 0x01u};

/* The pin, and how many packets the ITM had lost when its last byte went
 * out: losses after that never get their overflow packet (the program ended
 * first), which only the VM can tell. */
struct tap {
  struct ft_wire *w;
  struct sonde_vm *vm;
  uint64_t lost_last;
};

static int tap_byte(void *ctx, const struct sonde_vm_swo_byte *b)
{
  struct tap *t = ctx;
  if (t->vm) /* set once ft_vm_open returns; a reset sends no SWO */
    sonde_vm_swo_stats(t->vm, NULL, &t->lost_last, NULL);
  return ft_wire_byte(t->w, b);
}

static void run_one(const struct sonde_ft_vm_lsu_config *cfg, uint32_t run, struct lrun *r)
{
  uint64_t clock = sonde_machine_clock_hz(cfg->machine);
  struct ft_wire w;
  ft_wire_init(&w, clock, 0, 0);
  struct sonde_vm *vm = NULL;
  struct tap tap = {&w, NULL, 0};
  struct ft_vm_open_args oa = {cfg->machine, cfg->elf, cfg->elf_len, cfg->elf_name, cfg->no_jit};
  int rc = ft_vm_open(&oa, tap_byte, &tap, &vm, r->msg, sizeof r->msg);
  if (rc) {
    r->rc = rc;
    ft_wire_free(&w);
    return;
  }
  tap.vm = vm;
  sonde_vm_set_run_index(vm, run);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  uint64_t c0 = st.cycles;
  /* As a debugger halted at reset: trace on, SWO NRZ at the baud rate with
   * the formatter bypassed, the ITM with local timestamps forwarding DWT
   * packets, comparator 0 on the range (MASK 16: 64 KiB). */
  rc = wr(vm, 0xE000EDFCu, 1u << 24);                         /* DEMCR.TRCENA */
  rc = rc ? rc : wr(vm, 0xE0040004u, 1);                       /* TPIU_CSPSR: 1 bit */
  rc = rc ? rc : wr(vm, 0xE00400F0u, 2);                       /* TPIU_SPPR: NRZ */
  rc = rc ? rc : wr(vm, 0xE0040010u, (uint32_t)(clock / cfg->baud - 1)); /* TPIU_ACPR */
  rc = rc ? rc : wr(vm, 0xE0040304u, 0x100);                   /* TPIU_FFCR: bypass */
  rc = rc ? rc : wr(vm, 0xE0000FB0u, 0xC5ACCE55u);             /* ITM_LAR */
  rc = rc ? rc : wr(vm, 0xE0000E80u, (1u << 16) | (1u << 3) | (1u << 1) | 1u); /* ITM_TCR */
  rc = rc ? rc : wr(vm, 0xE0001020u, r->r16 << 16);            /* DWT_COMP0 */
  rc = rc ? rc : wr(vm, 0xE0001024u, 16);                      /* DWT_MASK0 */
  rc = rc ? rc : wr(vm, 0xE0001028u, kind_fn[r->kind]);        /* DWT_FUNCTION0 */
  if (rc) {
    snprintf(r->msg, sizeof r->msg, "debug port write failed: %s", sonde_strerror(rc));
    r->rc = rc;
    sonde_vm_free(vm);
    ft_wire_free(&w);
    return;
  }
  struct sonde_vm_stop stop;
  rc = sonde_vm_run(vm, cfg->max_cycles ? cfg->max_cycles : DEFAULT_MAX_CYCLES, &stop);
  sonde_vm_get_stats(vm, &st);
  r->cycles = st.cycles;
  r->exit_code = stop.exit_code;
  uint64_t lost_end = 0;
  sonde_vm_swo_stats(vm, NULL, &lost_end, NULL);
  sonde_vm_free(vm);
  if (rc < 0 || stop.reason != SONDE_VM_STOP_EXIT) {
    snprintf(r->msg, sizeof r->msg,
             "range 0x%04x, %s packets: the run did not end by exiting (stop %d at pc 0x%08x "
             "after %llu cycles): FrankenTrace needs a program that ends",
             r->r16, sonde_ft_lsu_kind_name(r->kind), (int)stop.reason, stop.pc,
             (unsigned long long)st.cycles);
    r->rc = rc < 0 ? rc : SONDE_E_STATE;
    ft_wire_free(&w);
    return;
  }
  if (!(rc = ft_wire_finish(&w)))
    rc = decode_run(r, w.buf, w.n, c0);
  if (!rc && lost_end > tap.lost_last) { /* lost at the end: up to the exit */
    uint64_t after = r->n ? r->e[r->n - 1].cycle : c0;
    if (r->ng && r->g[r->ng - 1].before == UINT64_MAX)
      r->g[r->ng - 1].before = UINT64_MAX; /* already open to the end */
    else if (!(rc = grow((void **)&r->g, &r->gcap, r->ng, sizeof *r->g)))
      r->g[r->ng++] = (struct gapw){after == UINT64_MAX ? c0 : after, UINT64_MAX};
    r->overflows++;
  }
  r->swo_bytes = w.sent;
  if (rc && !r->msg[0])
    snprintf(r->msg, sizeof r->msg, "%s", sonde_strerror(rc));
  r->rc = rc;
  ft_wire_free(&w);
}

struct pool {
  const struct sonde_ft_vm_lsu_config *cfg;
  struct lrun *runs;
  uint32_t n, next;
  pthread_mutex_t mu;
};

static void *worker(void *arg)
{
  struct pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    uint32_t i = p->next < p->n ? p->next++ : UINT32_MAX;
    pthread_mutex_unlock(&p->mu);
    if (i == UINT32_MAX)
      return NULL;
    run_one(p->cfg, i, &p->runs[i]);
  }
}

static int push_x(struct sonde_ft_xfer **x, size_t *n, size_t *cap, const struct sonde_ft_xfer *v)
{
  if (grow((void **)x, cap, *n, sizeof **x))
    return SONDE_E_NOMEM;
  (*x)[(*n)++] = *v;
  return 0;
}

/* Is cycle c inside one of the run's overflow windows? */
static bool in_gap(const struct lrun *r, uint64_t c)
{
  for (size_t i = 0; i < r->ng; i++)
    if (c > r->g[i].after && c < r->g[i].before)
      return true;
  return false;
}

static int by_after(const void *pa, const void *pb)
{
  const struct gapw *a = pa, *b = pb;
  return a->after < b->after ? -1 : a->after > b->after;
}

/* One range's three runs into transfers and gap rows. */
static int merge_range(const struct lrun *k3, uint32_t range, struct sonde_ft_xfer **x, size_t *n,
                       size_t *cap, struct sonde_ft_vm_lsu_stats *st)
{
  const struct lrun *A = &k3[0], *D = &k3[1], *P = &k3[2];
  uint32_t base = A->r16 << 16;
  bool clean = !A->overflows && !D->overflows && !P->overflows && A->n == D->n && A->n == P->n;
  /* gap rows: the overflow windows of the three kinds, overlapping ones merged */
  struct gapw *w = NULL;
  size_t nw = 0, wcap = 0;
  for (unsigned k = 0; k < SONDE_FT_LSU_KINDS; k++)
    for (size_t i = 0; i < k3[k].ng; i++) {
      if (grow((void **)&w, &wcap, nw, sizeof *w))
        return SONDE_E_NOMEM;
      w[nw].after = k3[k].g[i].after;
      w[nw++].before = k3[k].g[i].before == UINT64_MAX ? k3[k].cycles : k3[k].g[i].before;
    }
  if (nw) /* qsort(NULL, 0, ...) is undefined */
    qsort(w, nw, sizeof *w, by_after);
  for (size_t i = 0; i < nw;) {
    uint64_t from = w[i].after + 1, to = w[i].before;
    size_t e = i + 1;
    for (; e < nw && w[e].after + 1 < to; e++)
      to = w[e].before > to ? w[e].before : to;
    struct sonde_ft_xfer g = {.range = range, .pc = 0xFFFFFFFFu, .addr = base, .gap = true,
                              .value = (uint32_t)(to > from ? to - from : 1), .ts = from,
                              .cycle = from};
    if (push_x(x, n, cap, &g)) {
      free(w);
      return SONDE_E_NOMEM;
    }
    st->gaps++;
    i = e;
  }
  free(w);
  if (clean) { /* one to one, as in the invasive mode */
    for (size_t i = 0; i < A->n; i++) {
      const struct ent *a = &A->e[i], *d = &D->e[i], *p = &P->e[i];
      uint64_t c = a->exact ? a->cycle : d->exact ? d->cycle : p->cycle;
      if (!a->exact && !d->exact && !p->exact)
        st->undated++;
      struct sonde_ft_xfer t = {.range = range, .pc = p->v & ~1u, .addr = base | (a->v & 0xFFFF),
                                .value = d->v, .size = d->size, .write = d->write, .ts = c,
                                .cycle = c};
      if (push_x(x, n, cap, &t))
        return SONDE_E_NOMEM;
    }
    return 0;
  }
  /* Otherwise by cycle: a transfer is known when all three kinds have an
   * exactly dated packet at its cycle (the j-th at that cycle in each). */
  size_t i[3] = {0, 0, 0};
  for (;;) {
    uint64_t c = UINT64_MAX;
    for (unsigned k = 0; k < 3; k++)
      if (i[k] < k3[k].n && k3[k].e[i[k]].cycle < c)
        c = k3[k].e[i[k]].cycle;
    if (c == UINT64_MAX)
      break;
    size_t m[3];
    for (unsigned k = 0; k < 3; k++) {
      m[k] = 0;
      while (i[k] + m[k] < k3[k].n && k3[k].e[i[k] + m[k]].cycle == c)
        m[k]++;
    }
    size_t all = m[0] < m[1] ? m[0] : m[1];
    all = all < m[2] ? all : m[2];
    size_t most = m[0] > m[1] ? m[0] : m[1];
    most = most > m[2] ? most : m[2];
    bool exact = true;
    for (unsigned k = 0; k < 3; k++)
      for (size_t j = 0; j < m[k]; j++)
        exact = exact && k3[k].e[i[k] + j].exact;
    if (exact && all == most) {
      for (size_t j = 0; j < all; j++) {
        const struct ent *a = &A->e[i[0] + j], *d = &D->e[i[1] + j], *p = &P->e[i[2] + j];
        struct sonde_ft_xfer t = {.range = range, .pc = p->v & ~1u,
                                  .addr = base | (a->v & 0xFFFF), .value = d->v, .size = d->size,
                                  .write = d->write, .ts = c, .cycle = c};
        if (push_x(x, n, cap, &t))
          return SONDE_E_NOMEM;
      }
    } else {
      st->partial += most; /* seen in some kinds only, or not dated exactly */
      bool explained = false;
      for (unsigned k = 0; k < 3; k++)
        explained = explained || in_gap(&k3[k], c);
      if (!explained) { /* not inside an overflow window: mark it on its own */
        struct sonde_ft_xfer g = {.range = range, .pc = 0xFFFFFFFFu, .addr = base, .gap = true,
                                  .value = 1, .ts = c, .cycle = c};
        if (push_x(x, n, cap, &g))
          return SONDE_E_NOMEM;
        st->gaps++;
      }
    }
    for (unsigned k = 0; k < 3; k++)
      i[k] += m[k];
  }
  return 0;
}

static int by_cycle(const void *pa, const void *pb)
{
  const struct sonde_ft_xfer *a = pa, *b = pb;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  if (a->gap != b->gap)
    return a->gap ? -1 : 1; /* a gap before what it may hide */
  if (a->range != b->range)
    return a->range < b->range ? -1 : 1;
  return a->run < b->run ? -1 : a->run > b->run; /* run: the order within its range */
}

int sonde_ft_vm_lsu_check(const struct sonde_machine *machine, struct sonde_diag *diag)
{
  /* a DWT with a comparator and trace packets (ARMv6-M has neither) */
  struct sonde_vm *vm = NULL;
  uint32_t on = 1u << 24, ctrl = 0;
  int e = sonde_vm_new(machine, &vm);
  if (!e)
    e = sonde_vm_reset(vm);
  if (!e)
    e = sonde_vm_write_mem(vm, 0xE000EDFCu, &on, 4);
  if (!e)
    e = sonde_vm_read_mem(vm, 0xE0001000u, &ctrl, 4);
  sonde_vm_free(vm);
  if (e || (ctrl >> 28) == 0 || (ctrl & (1u << 27)))
    return sonde_diag_set(diag, SONDE_E_UNSUPPORTED,
                          "LSU: the machine's DWT has %s: data transfers cannot be traced (an "
                          "ARMv7-M/ARMv8-M core with DWT comparators and the ITM is needed)",
                          e ? "no registers (ARMv6-M?)"
                            : (ctrl >> 28) == 0 ? "no comparators" : "no trace packets (NOTRCPKT)");
  return 0;
}

int sonde_ft_vm_lsu_run(const struct sonde_ft_vm_lsu_config *cfg, struct sonde_ft_xfer **out,
                        size_t *count, struct sonde_ft_vm_lsu_stats *st, struct sonde_diag *diag)
{
  *out = NULL;
  *count = 0;
  memset(st, 0, sizeof *st);
  uint64_t clock = sonde_machine_clock_hz(cfg->machine);
  if (!cfg->nranges || cfg->nranges > SONDE_FT_LSU_MAX_RANGES)
    return sonde_diag_set(diag, SONDE_E_ARG, "1..%u ranges", SONDE_FT_LSU_MAX_RANGES);
  if (!cfg->baud || !clock || cfg->baud > clock || clock % cfg->baud || clock / cfg->baud > 8192)
    return sonde_diag_set(diag, SONDE_E_ARG,
                          "LSU: SWO %llu baud is not the %llu Hz core clock divided by 1..8192",
                          (unsigned long long)cfg->baud, (unsigned long long)clock);
  int e = sonde_ft_vm_lsu_check(cfg->machine, diag);
  if (e < 0)
    return e;
  uint32_t nr = cfg->nranges * SONDE_FT_LSU_KINDS;
  struct lrun *runs = calloc(nr, sizeof *runs);
  if (!runs)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  for (uint32_t i = 0; i < nr; i++) {
    runs[i].r16 = cfg->ranges[i / SONDE_FT_LSU_KINDS];
    runs[i].kind = i % SONDE_FT_LSU_KINDS;
  }
  struct pool p;
  memset(&p, 0, sizeof p);
  p.cfg = cfg;
  p.runs = runs;
  p.n = nr;
  pthread_mutex_init(&p.mu, NULL);
  unsigned jobs = cfg->jobs ? cfg->jobs : 1;
  pthread_t th[64];
  unsigned started = 0;
  for (unsigned k = 0; jobs > 1 && k < jobs && k < 64 && k < nr; k++)
    if (!pthread_create(&th[k], NULL, worker, &p))
      started++;
  if (!started)
    worker(&p);
  for (unsigned k = 0; k < started; k++)
    pthread_join(th[k], NULL);
  pthread_mutex_destroy(&p.mu);
  int rc = 0;
  size_t n = 0, cap = 0;
  struct sonde_ft_xfer *x = NULL;
  for (uint32_t i = 0; i < nr && !rc; i++) {
    st->runs++;
    st->swo_bytes += runs[i].swo_bytes;
    st->overflows += runs[i].overflows;
    st->cycles += runs[i].cycles;
    if (runs[i].rc)
      rc = sonde_diag_set(diag, runs[i].rc, "LSU run of range 0x%04x (%s packets): %s",
                          runs[i].r16, sonde_ft_lsu_kind_name(runs[i].kind), runs[i].msg);
    else if (i && runs[i].cycles != runs[0].cycles)
      rc = sonde_diag_set(diag, SONDE_E_FORMAT,
                          "LSU runs of different lengths (%llu and %llu cycles): the program is "
                          "not deterministic, its transfers cannot be joined by cycle",
                          (unsigned long long)runs[0].cycles, (unsigned long long)runs[i].cycles);
  }
  for (uint32_t r = 0; r < cfg->nranges && !rc; r++) {
    size_t from = n;
    rc = merge_range(&runs[r * SONDE_FT_LSU_KINDS], r, &x, &n, &cap, st);
    for (size_t k = from; k < n; k++)
      x[k].run = (uint32_t)(k - from); /* order within the range, for equal cycles */
    if (rc)
      sonde_diag_set(diag, rc, "out of memory");
  }
  for (uint32_t i = 0; i < nr; i++) {
    free(runs[i].e);
    free(runs[i].g);
  }
  free(runs);
  if (rc) {
    free(x);
    return rc;
  }
  if (n)
    qsort(x, n, sizeof *x, by_cycle);
  for (size_t k = 0; k < n; k++)
    st->transfers += !x[k].gap;
  *out = x;
  *count = n;
  return 0;
}
