/* FrankenTrace on the virtual Cortex-M, probe mode (sonde/frankentrace_vm.h):
 * per phase a fresh VM, the trace blocks set through the debug port before the
 * first instruction, the SWO bytes of the whole run decoded with src/itm, each
 * PC sample placed by the local timestamp that follows it, and the stitcher
 * fed in phase order whatever the number of threads. */
#include "sonde/frankentrace_vm.h"

#include <pthread.h>
#include "sonde/sym.h"
#include <stdlib.h>
#include <string.h>

#include "ft_vm.h"
#include "ft_wire.h"
#include "sonde/itm.h"
#include "sonde/vm.h"

#define DEMCR 0xE000EDFCu
#define DWT_CTRL 0xE0001000u
#define DWT_CYCCNT 0xE0001004u
#define ITM_LAR 0xE0000FB0u
#define ITM_TCR 0xE0000E80u
#define TPIU_CSPSR 0xE0040004u
#define TPIU_ACPR 0xE0040010u
#define TPIU_SPPR 0xE00400F0u
#define TPIU_FFCR 0xE0040304u

#define DEFAULT_MAX_CYCLES 10000000000ull

uint32_t sonde_ft_dwt_ctrl_for(uint32_t n)
{
  /* PCSAMPLENA, CYCTAP, POSTPRESET, CYCCNTENA (ARMv7-M C1.8.7) */
  if (n >= 64 && n <= 1024 && n % 64 == 0)
    return (1u << 12) | ((n / 64 - 1) << 1) | 1u;
  if (n >= 1024 && n <= 16384 && n % 1024 == 0)
    return (1u << 12) | (1u << 9) | ((n / 1024 - 1) << 1) | 1u;
  return 0;
}

unsigned sonde_ft_bytes_per_sample(uint32_t n)
{
  unsigned ts = 1; /* LTS1 header, then 7 bits of the delta per byte */
  for (uint32_t v = n; v; v >>= 7)
    ts++;
  return 5 + ts;
}

uint32_t sonde_ft_smallest_n(uint64_t clock_hz, uint64_t baud, uint32_t min_n)
{
  if (!clock_hz || !baud || baud > clock_hz)
    return 0;
  for (uint32_t n = 64; n <= 16384; n += n < 1024 ? 64 : 1024) {
    if (n < min_n || !sonde_ft_dwt_ctrl_for(n))
      continue;
    /* cycles the line needs for one sample; the ITM's FIFO takes the jitter
     * (the paper's Table 2 runs 8 Mbaud at 48 MHz with N = 512: 480 cycles) */
    uint64_t need = ((uint64_t)sonde_ft_bytes_per_sample(n) * 10 * clock_hz + baud - 1) / baud;
    if (need <= n)
      return n;
  }
  return 0;
}

/* ---- one iteration ---------------------------------------------------------- */

struct iter {
  uint32_t phase, id;
  /* results */
  int rc;
  char msg[200];
  uint64_t run_cycles;
  int exit_code;
  uint64_t k0;          /* sample index of samples[0] */
  uint32_t *samples;    /* k0, k0+1, ...: PC, SLEEP or LOST */
  size_t n, cap;
  bool bad;             /* timestamps off the plan */
  bool corrupt;         /* the wire corrupted it: run again, or discarded */
  unsigned attempts;    /* runs made */
  uint64_t outside;     /* PC samples outside the ELF's code */
  uint64_t swo_bytes, pc_packets, sleep_packets, overflow_packets, skipped, lost, flipped;
  uint64_t framing;     /* frames the line decoder dropped */
  /* capture */
  uint8_t *swo;
  size_t swo_n;
};

struct plan {
  const struct sonde_ft_vm_config *cfg;
  uint64_t clock_hz;
  uint32_t acpr;
};

static int quiet(void *ctx, int stream, const void *buf, size_t len)
{
  (void)ctx, (void)stream, (void)buf, (void)len;
  return 0;
}

static int wr(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  return sonde_vm_write_mem(vm, addr, &v, 4);
}

static int push_sample(struct iter *it, uint32_t v)
{
  if (it->n == it->cap) {
    size_t nc = it->cap ? 2 * it->cap : 4096;
    uint32_t *ns = realloc(it->samples, nc * sizeof *ns);
    if (!ns)
      return SONDE_E_NOMEM;
    it->samples = ns;
    it->cap = nc;
  }
  it->samples[it->n++] = v;
  return 0;
}

/* Cycles from the configuration (c0) to the first sample, in 1..N, so that
 * the first sample lands on c0 + d = phase (mod N); and the CYCCNT/POSTINIT
 * that give it: the first tap is (p - CYCCNT % p) cycles away, each further
 * POSTINIT one p more (p = 64 or 1024). */
static uint64_t phase_setup(uint32_t n, uint32_t phase, uint64_t c0, uint32_t *cyccnt,
                            uint32_t *postinit)
{
  uint32_t p = n <= 1024 ? 64 : 1024;
  uint64_t d = (phase + n - c0 % n) % n;
  if (!d)
    d = n;
  *postinit = (uint32_t)((d - 1) / p);
  uint32_t a = (uint32_t)(d - (uint64_t)*postinit * p); /* 1..p */
  *cyccnt = (p - a) & (p - 1);
  return d;
}

/* Turn the SWO bytes into samples k0, k0+1, ...: each PC sample packet is
 * dated by the local timestamp that follows it (the ITM counter starts when
 * the configuration enables it, at c0). A sample whose date is not on the
 * plan (c0 + d + k*N) marks the iteration bad; a k with no packet is LOST. */
static void decode_iteration(struct iter *it, const struct plan *pl, uint64_t c0, uint64_t d)
{
  uint32_t n = pl->cfg->n;
  struct sonde_itm *dec = sonde_itm_new(NULL);
  if (!dec) {
    it->rc = SONDE_E_NOMEM;
    return;
  }
  uint64_t first = c0 + d; /* cycle of sample k_first */
  it->k0 = (first - it->phase) / n;
  uint64_t next_k = 0;      /* relative to k0 */
  uint64_t ts = 0;          /* cycles since c0, from the LTS deltas */
  bool pending = false, exact = true;
  uint32_t pending_v = 0;
  struct sonde_itm_packet pk[256];
  size_t off = 0;
  for (bool end = false; !end && !it->rc;) {
    size_t used = 0, np;
    if (off < it->swo_n) {
      np = sonde_itm_decode(dec, it->swo + off, it->swo_n - off, &used, pk, 256);
      off += used;
    } else {
      np = sonde_itm_finish(dec, pk, 256);
      end = true;
    }
    for (size_t i = 0; i < np && !it->rc; i++) {
      const struct sonde_itm_packet *q = &pk[i];
      switch (q->type) {
      case SONDE_ITM_PC:
      case SONDE_ITM_PC_SLEEP:
        if (pending) { /* two samples with no timestamp between them: cannot date it */
          it->bad = true;
        }
        pending = true;
        pending_v = q->type == SONDE_ITM_PC ? (uint32_t)q->value & ~1u : SONDE_FT_SAMPLE_SLEEP;
        if (q->type == SONDE_ITM_PC)
          it->pc_packets++;
        else
          it->sleep_packets++;
        break;
      case SONDE_ITM_LTS:
        ts += q->value;
        if (q->flags & 0x03) /* TC != 0: the timestamp was delayed, not exact */
          exact = false;
        if (pending) {
          pending = false;
          uint64_t at = c0 + ts;
          if (at < first || (at - first) % n) {
            if (exact)
              it->bad = true;
            /* inexact: take it as the next due sample */
            at = first + next_k * n;
          }
          uint64_t k = (at - first) / n;
          if (k < next_k) {
            it->bad = true;
            break;
          }
          for (; next_k < k; next_k++) {
            it->lost++;
            if (push_sample(it, SONDE_FT_SAMPLE_LOST))
              it->rc = SONDE_E_NOMEM;
          }
          if (push_sample(it, pending_v))
            it->rc = SONDE_E_NOMEM;
          next_k++;
          exact = true;
        }
        break;
      case SONDE_ITM_OVERFLOW:
        it->overflow_packets++;
        break;
      case SONDE_ITM_SKIP:
        it->skipped += q->value;
        break;
      default:
        break;
      }
    }
  }
  if (pending) /* the last sample's timestamp never came: the next due one */
    push_sample(it, pending_v);
  sonde_itm_free(dec);
}

/* One run of phase it->phase (attempt it->attempts): its own bit errors,
 * its own run index (the environment of run it->id). */
static void run_iteration(struct iter *it, const struct plan *pl)
{
  const struct sonde_ft_vm_config *cfg = pl->cfg;
  it->n = 0;
  it->bad = it->corrupt = false;
  it->outside = it->swo_bytes = it->pc_packets = it->sleep_packets = 0;
  it->overflow_packets = it->skipped = it->lost = it->framing = 0;
  struct ft_wire w;
  ft_wire_init(&w, pl->clock_hz, cfg->bit_errors,
               ft_wire_mix(cfg->seed ^ ft_wire_mix(((uint64_t)it->id << 8) | it->attempts)));
  it->attempts++;
  struct sonde_vm *vm = NULL;
  struct ft_vm_open_args oa = {cfg->machine, cfg->elf, cfg->elf_len, cfg->elf_name, cfg->no_jit};
  int rc = ft_vm_open(&oa, ft_wire_byte, &w, &vm, it->msg, sizeof it->msg);
  if (rc) {
    it->rc = rc;
    ft_wire_free(&w);
    return;
  }
  sonde_vm_set_run_index(vm, it->id);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  uint64_t c0 = st.cycles;
  uint32_t cyccnt, postinit;
  uint64_t d = phase_setup(cfg->n, it->phase, c0, &cyccnt, &postinit);
  uint32_t ctrl = sonde_ft_dwt_ctrl_for(cfg->n);
  /* As a debugger halted at reset: trace on, SWO NRZ at the baud rate with
   * the formatter bypassed, ITM with local timestamps forwarding DWT packets,
   * then the counter and its tap phase, and sampling on last. */
  rc = wr(vm, DEMCR, 1u << 24);
  rc = rc ? rc : wr(vm, TPIU_CSPSR, 1);
  rc = rc ? rc : wr(vm, TPIU_SPPR, 2);
  rc = rc ? rc : wr(vm, TPIU_ACPR, pl->acpr);
  rc = rc ? rc : wr(vm, TPIU_FFCR, 0x100);
  rc = rc ? rc : wr(vm, ITM_LAR, 0xC5ACCE55u);
  rc = rc ? rc : wr(vm, ITM_TCR, (1u << 16) | (1u << 3) | (1u << 1) | 1u);
  rc = rc ? rc : wr(vm, DWT_CYCCNT, cyccnt);
  uint32_t base = (ctrl & ~(1u << 12)) | (postinit << 5);
  rc = rc ? rc : wr(vm, DWT_CTRL, base);
  rc = rc ? rc : wr(vm, DWT_CTRL, base | (1u << 12));
  if (rc) {
    snprintf(it->msg, sizeof it->msg, "debug port write failed: %s", sonde_strerror(rc));
    it->rc = rc;
    sonde_vm_free(vm);
    ft_wire_free(&w);
    return;
  }
  struct sonde_vm_stop stop;
  uint64_t limit = cfg->max_cycles ? cfg->max_cycles : DEFAULT_MAX_CYCLES;
  rc = sonde_vm_run(vm, limit, &stop);
  sonde_vm_get_stats(vm, &st);
  it->run_cycles = st.cycles;
  it->exit_code = stop.exit_code;
  sonde_vm_free(vm);
  if (rc < 0 || stop.reason != SONDE_VM_STOP_EXIT) {
    snprintf(it->msg, sizeof it->msg,
             "phase %u: the run did not end by exiting (stop %d at pc 0x%08x after %llu cycles): "
             "FrankenTrace needs a program that ends",
             it->phase, (int)stop.reason, stop.pc, (unsigned long long)st.cycles);
    it->rc = rc < 0 ? rc : SONDE_E_STATE;
    ft_wire_free(&w);
    return;
  }
  if ((rc = ft_wire_finish(&w))) {
    snprintf(it->msg, sizeof it->msg, "phase %u: SWO wire: %s", it->phase, sonde_strerror(rc));
    it->rc = rc;
    ft_wire_free(&w);
    return;
  }
  it->swo_bytes = w.sent;
  it->flipped += w.flipped;
  it->framing = w.framing;
  it->swo = w.buf;
  it->swo_n = w.n;
  decode_iteration(it, pl, c0, d);
  ft_wire_free(&w); /* frees it->swo */
  it->swo = NULL;
  it->swo_n = 0;
  /* What the wire checks see: dates off the plan, decoder losses, samples
   * lost without an overflow packet, PCs outside the code. */
  for (size_t i = 0; cfg->sym && i < it->n; i++)
    if (!(it->samples[i] & 1) && sonde_sym_lookup(cfg->sym, it->samples[i], NULL, NULL) < 0)
      it->outside++;
  it->corrupt = it->bad || it->skipped || (it->lost && !it->overflow_packets) || it->outside ||
                it->framing;
}

/* Run it until the wire leaves it sound or the attempts are used up. */
static void run_until_sound(struct iter *it, const struct plan *pl)
{
  unsigned attempts = pl->cfg->attempts ? pl->cfg->attempts : 4;
  do
    run_iteration(it, pl);
  while (!it->rc && it->corrupt && it->attempts < attempts);
}

/* ---- ground truth: the DWT-visible trace of a hooked run ------------------- */

struct truth {
  struct sonde_ft_trace *t;
  struct sonde_vm *vm;
  uint64_t end;          /* first cycle not yet in t */
  bool have_prev;
  uint32_t prev_pc;
  uint64_t sleep_seen;
  int rc;
};

/* The cycles [t->end, upto) between two instructions: first the sleep (the
 * VM's sleep statistic grew by that much), then exception spans, which a DWT
 * sample shows as the instruction before them. */
static void truth_gap(struct truth *t, uint64_t upto)
{
  if (upto <= t->end || t->rc)
    return;
  uint64_t gap = upto - t->end;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(t->vm, &st);
  uint64_t sl = st.sleep_cycles - t->sleep_seen;
  t->sleep_seen = st.sleep_cycles;
  if (sl > gap)
    sl = gap;
  if (sl)
    t->rc = sonde_ft_trace_append(t->t, (struct sonde_ft_cell){0, SONDE_FT_SLEEP}, sl);
  if (gap > sl && !t->rc) {
    struct sonde_ft_cell c = t->have_prev ? (struct sonde_ft_cell){t->prev_pc, SONDE_FT_PC}
                                          : (struct sonde_ft_cell){0, SONDE_FT_HALTED};
    t->rc = sonde_ft_trace_append(t->t, c, gap - sl);
  }
  t->end = upto;
}

static void truth_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  struct truth *t = ctx;
  truth_gap(t, cycle);
  if (!t->rc && cycle >= t->end)
    t->rc = sonde_ft_trace_append(t->t, (struct sonde_ft_cell){pc, SONDE_FT_PC}, cycles);
  t->end = cycle + cycles;
  t->have_prev = true;
  t->prev_pc = pc;
}

int ft_vm_truth(const struct ft_vm_truth_args *a, struct sonde_ft_trace **out, uint64_t *len,
                struct sonde_diag *diag)
{
  struct truth t = {0};
  int rc = sonde_ft_trace_new(0, &t.t);
  if (rc)
    return sonde_diag_set(diag, rc, "out of memory");
  rc = sonde_vm_new(a->machine, &t.vm);
  if (!rc)
    rc = sonde_vm_load_elf(t.vm, a->elf, a->elf_len, a->elf_name);
  if (rc) {
    sonde_diag_set(diag, rc, "%s: %s", a->elf_name,
                   t.vm ? sonde_vm_error_detail(t.vm) : sonde_strerror(rc));
    sonde_vm_free(t.vm);
    sonde_ft_trace_free(t.t);
    return rc;
  }
  sonde_vm_set_output(t.vm, quiet, NULL);
  struct sonde_vm_hooks h = {.ctx = &t, .retire = truth_retire};
  sonde_vm_set_hooks(t.vm, &h);
  sonde_vm_reset(t.vm);
  if (a->stop_at_reset) /* one runner iteration: halt where the next one would start */
    rc = ft_vm_catch_reset(t.vm);
  struct sonde_vm_stop stop = {0};
  if (!rc)
    rc = sonde_vm_run(t.vm, a->max_cycles ? a->max_cycles : DEFAULT_MAX_CYCLES, &stop);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(t.vm, &st);
  truth_gap(&t, st.cycles);
  sonde_vm_free(t.vm);
  if (rc >= 0 && t.rc)
    rc = t.rc;
  bool ended = stop.reason == SONDE_VM_STOP_EXIT ||
               (a->stop_at_reset && stop.reason == SONDE_VM_STOP_BREAKPOINT);
  if (rc < 0 || !ended) {
    sonde_ft_trace_free(t.t);
    return sonde_diag_set(diag, rc < 0 ? rc : SONDE_E_STATE,
                          "%s: the ground-truth run did not end by %s", a->elf_name,
                          a->stop_at_reset ? "resetting" : "exiting");
  }
  sonde_ft_trace_set_clock_hz(t.t, sonde_machine_clock_hz(a->machine));
  *out = t.t;
  *len = st.cycles;
  return 0;
}

int ft_vm_catch_reset(struct sonde_vm *vm)
{
  uint32_t dhcsr = 0xA05F0001u, demcr = 1u; /* C_DEBUGEN; VC_CORERESET */
  int rc = sonde_vm_write_mem(vm, 0xE000EDF0u, &dhcsr, 4);
  return rc ? rc : sonde_vm_write_mem(vm, DEMCR, &demcr, 4);
}

static int ground_truth(const struct plan *pl, struct sonde_ft_trace **out, uint64_t *len,
                        struct sonde_diag *diag)
{
  const struct sonde_ft_vm_config *cfg = pl->cfg;
  struct ft_vm_truth_args a = {cfg->machine, cfg->elf, cfg->elf_len, cfg->elf_name,
                               cfg->max_cycles, false};
  return ft_vm_truth(&a, out, len, diag);
}

/* ---- stitching, and what the code check says ----------------------------- */

/* Every run in plan order; a run the wire left corrupt is discarded (its
 * phase unsampled unless a repeat has it); each run's own length goes in, so
 * runs of different lengths are a LENGTH conflict (nondeterminism). */
static int stitch_all(const struct plan *pl, struct iter *its, uint32_t total,
                      struct sonde_ft_stitch **st, struct sonde_ft_trace **trace,
                      struct sonde_ft_report *rep, struct sonde_diag *diag)
{
  struct sonde_ft_stitch_config sc = {.n = pl->cfg->n, .origin = 0, .length = 0};
  int rc = sonde_ft_stitch_new(&sc, st, diag);
  for (uint32_t i = 0; i < total && !rc; i++) {
    struct iter *it = &its[i];
    struct sonde_ft_iter *fi;
    rc = sonde_ft_iter_begin(*st, it->phase, it->id, &fi);
    if (rc) {
      sonde_diag_set(diag, rc, "%s", sonde_ft_stitch_error_detail(*st));
      break;
    }
    if (it->corrupt) { /* its dates or PCs do not fit: trust none of it */
      sonde_ft_iter_discard(fi);
      continue;
    }
    if (it->n)
      rc = sonde_ft_iter_feed(fi, it->k0, it->samples, it->n);
    struct sonde_ft_iter_end_info ei = {.complete = true, .length = it->run_cycles};
    if (!rc)
      rc = sonde_ft_iter_end(fi, &ei, NULL);
    else
      sonde_ft_iter_discard(fi);
    if (rc)
      sonde_diag_set(diag, rc, "phase %u: %s", it->phase, sonde_ft_stitch_error_detail(*st));
  }
  if (!rc && (rc = sonde_ft_stitch_finish(*st, trace, rep)))
    sonde_diag_set(diag, rc, "%s", sonde_ft_stitch_error_detail(*st));
  return rc;
}

/* The cycle before the first impossible transition in the code (UINT64_MAX:
 * none, or no ELF to check against). */
static uint64_t first_impossible(const struct plan *pl, const struct sonde_ft_trace *t)
{
  struct sonde_ft_check_result chk;
  struct sonde_diag d;
  if (!pl->cfg->sym || sonde_ft_check(t, pl->cfg->sym, 1, &chk, &d) < 0)
    return UINT64_MAX;
  uint64_t c = chk.impossible && chk.bad_count ? chk.bad[0].cycle : UINT64_MAX;
  sonde_ft_check_result_free(&chk);
  return c == UINT64_MAX ? c : c ? c - 1 : 0;
}

/* A bit error inside a PC payload passes the wire checks; the code check
 * finds the impossible transition it makes. Run the phases on either side of
 * it again and keep what changed: 1 (stitch again), 0 (nothing changed: not
 * the wire), or an error. */
static int rerun_suspects(const struct plan *pl, struct iter *its, uint32_t total,
                          const struct sonde_ft_trace *t, const struct sonde_ft_report *rep,
                          struct sonde_ft_vm_stats *stats)
{
  (void)stats;
  if (pl->cfg->bit_errors <= 0 || rep->conflict_count)
    return 0;
  uint64_t c = first_impossible(pl, t);
  if (c == UINT64_MAX)
    return 0;
  uint32_t n = pl->cfg->n, p[2] = {(uint32_t)(c % n), (uint32_t)((c + 1) % n)};
  unsigned limit = 2 * (pl->cfg->attempts ? pl->cfg->attempts : 4);
  int changed = 0;
  for (uint32_t i = 0; i < total; i++) {
    struct iter *it = &its[i];
    if ((it->phase != p[0] && it->phase != p[1]) || it->attempts >= limit)
      continue;
    uint32_t *old = it->samples;
    size_t old_n = it->n;
    uint64_t old_k0 = it->k0;
    it->samples = NULL;
    it->n = it->cap = 0;
    do
      run_iteration(it, pl);
    while (!it->rc && it->corrupt && it->attempts < limit);
    if (it->rc) {
      free(old);
      return it->rc;
    }
    if (it->corrupt || old_n != it->n || old_k0 != it->k0 ||
        memcmp(old, it->samples, old_n * sizeof *old))
      changed = 1;
    free(old);
  }
  return changed;
}

/* A LENGTH conflict says that runs a and b went apart, not where (its cycle
 * is the shorter one's end). Run b's environment (its run index) again at
 * a's phase and compare the two sample by sample: the first k where they
 * differ (or where one has ended) is the first sampled cycle of the
 * divergence, the same evidence a SAMPLES conflict gives. UINT64_MAX when
 * there is no LENGTH conflict or the re-run is unusable; <0 never (a failed
 * re-run only leaves it unlocated). */
static uint64_t locate_length(const struct plan *pl, const struct iter *its, uint32_t total,
                              const struct sonde_ft_report *rep, struct sonde_ft_vm_stats *stats)
{
  const struct sonde_ft_conflict *c = NULL;
  for (size_t i = 0; i < rep->conflict_count && !c; i++)
    if (rep->conflicts[i].kind == SONDE_FT_CONFLICT_LENGTH)
      c = &rep->conflicts[i];
  if (!c || c->iter_a >= total || c->iter_b >= total || its[c->iter_a].corrupt)
    return UINT64_MAX;
  const struct iter *a = &its[c->iter_a];
  struct iter b = {.id = its[c->iter_b].id, .phase = a->phase};
  run_until_sound(&b, pl);
  uint64_t at = UINT64_MAX;
  if (!b.rc && !b.corrupt) {
    uint64_t k0 = a->k0 < b.k0 ? a->k0 : b.k0;
    uint64_t end_a = a->k0 + a->n, end_b = b.k0 + b.n;
    uint64_t end = end_a > end_b ? end_a : end_b;
    for (uint64_t k = k0; k < end && at == UINT64_MAX; k++) {
      bool in_a = k >= a->k0 && k < end_a, in_b = k >= b.k0 && k < end_b;
      uint32_t va = in_a ? a->samples[k - a->k0] : 0, vb = in_b ? b.samples[k - b.k0] : 0;
      if (in_a && in_b && (va == SONDE_FT_SAMPLE_LOST || vb == SONDE_FT_SAMPLE_LOST))
        continue;
      if (in_a != in_b || va != vb)
        at = k * pl->cfg->n + a->phase;
    }
    if (at == UINT64_MAX) /* the same samples: they differ after the shorter one's last */
      at = c->first_cycle;
    stats->length_runs[0] = c->iter_a;
    stats->length_runs[1] = c->iter_b;
  }
  stats->flipped_bits += b.flipped; /* not a re-run: an extra run asked by the conflict */
  free(b.samples);
  return at;
}

/* ---- the plan, on threads ---------------------------------------------------- */

struct pool {
  const struct plan *pl;
  struct iter *its;
  uint32_t total, next, done;
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

static void *worker(void *arg)
{
  struct pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    uint32_t i = p->next < p->total ? p->next++ : UINT32_MAX;
    pthread_mutex_unlock(&p->mu);
    if (i == UINT32_MAX)
      return NULL;
    run_until_sound(&p->its[i], p->pl);
    pthread_mutex_lock(&p->mu);
    p->done++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
}

struct sonde_ft_vm_state {
  struct sonde_ft_stitch *st;
};

void sonde_ft_vm_free_state(struct sonde_ft_vm_state *s)
{
  if (!s)
    return;
  sonde_ft_stitch_free(s->st);
  free(s);
}

int sonde_ft_vm_run(const struct sonde_ft_vm_config *cfg, struct sonde_ft_trace **trace,
                    struct sonde_ft_trace **truth, struct sonde_ft_report *report,
                    struct sonde_ft_vm_stats *stats, struct sonde_ft_vm_state **state,
                    struct sonde_diag *diag)
{
  struct sonde_diag tmp;
  if (!diag)
    diag = &tmp;
  *trace = NULL;
  if (truth)
    *truth = NULL;
  if (state)
    *state = NULL;
  struct sonde_ft_vm_stats zs;
  if (!stats)
    stats = &zs;
  memset(stats, 0, sizeof *stats);
  struct plan pl = {cfg, sonde_machine_clock_hz(cfg->machine), 0};
  stats->distrusted_from = UINT64_MAX;
  stats->length_first_difference = UINT64_MAX;
  if (cfg->sym) { /* build the symbol index before the threads look things up */
    uint32_t a;
    sonde_sym_lookup(cfg->sym, 0, NULL, NULL);
    sonde_sym_address(cfg->sym, "main", &a, NULL);
  }
  if (!sonde_ft_dwt_ctrl_for(cfg->n))
    return sonde_diag_set(diag, SONDE_E_ARG,
                          "N = %u: the DWT samples every (POSTPRESET+1) x 64 cycles up to 1024, "
                          "or x 1024 up to 16384 (N = 64, 128, ..., 1024, 2048, ..., 16384)",
                          cfg->n);
  if (!cfg->baud || !pl.clock_hz || cfg->baud > pl.clock_hz || pl.clock_hz % cfg->baud ||
      pl.clock_hz / cfg->baud > 8192)
    return sonde_diag_set(diag, SONDE_E_ARG,
                          "SWO baud %llu: the TPIU divides the %llu Hz clock by an integer "
                          "1..8192 (ACPR + 1)",
                          (unsigned long long)cfg->baud, (unsigned long long)pl.clock_hz);
  pl.acpr = (uint32_t)(pl.clock_hz / cfg->baud - 1);
  uint32_t smallest = sonde_ft_smallest_n(pl.clock_hz, cfg->baud, 0);
  if (!smallest || cfg->n < smallest) {
    if (!smallest)
      return sonde_diag_set(diag, SONDE_E_ARG,
                            "SWO at %llu baud is too slow for PC sampling at %llu Hz even at "
                            "N = 16384: raise the baud rate",
                            (unsigned long long)cfg->baud, (unsigned long long)pl.clock_hz);
    return sonde_diag_set(diag, SONDE_E_ARG,
                          "N = %u is too small for SWO at %llu baud: a sample (%u bytes with its "
                          "timestamp) takes %llu cycles on the line; the smallest N that works "
                          "is %u",
                          cfg->n, (unsigned long long)cfg->baud,
                          sonde_ft_bytes_per_sample(cfg->n),
                          (unsigned long long)(sonde_ft_bytes_per_sample(cfg->n) * 10ull *
                                               pl.clock_hz / cfg->baud),
                          smallest);
  }
  uint64_t truth_len = 0;
  struct sonde_ft_trace *gt = NULL;
  if (cfg->ground_truth) {
    int rc = ground_truth(&pl, &gt, &truth_len, diag);
    if (rc)
      return rc;
  }

  uint32_t repeat = cfg->repeat > cfg->n ? cfg->n : cfg->repeat;
  uint32_t total = cfg->n + repeat;
  struct iter *its = calloc(total, sizeof *its);
  if (!its) {
    sonde_ft_trace_free(gt);
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  }
  for (uint32_t i = 0; i < total; i++) {
    its[i].id = i;
    its[i].phase = i < cfg->n ? i : i - cfg->n; /* repeats: phases 0.. again */
  }
  struct pool pool = {.pl = &pl, .its = its, .total = total};
  pthread_mutex_init(&pool.mu, NULL);
  pthread_cond_init(&pool.cv, NULL);
  unsigned jobs = cfg->jobs ? cfg->jobs : 1;
  if (jobs > total)
    jobs = total;
  pthread_t *th = calloc(jobs, sizeof *th);
  unsigned started = 0;
  for (unsigned j = 0; th && j < jobs; j++)
    if (!pthread_create(&th[j], NULL, worker, &pool))
      started++;
  if (!started) /* no thread at all: run here */
    worker(&pool);
  for (uint32_t seen = 0; started && seen < total;) {
    pthread_mutex_lock(&pool.mu);
    while (pool.done == seen)
      pthread_cond_wait(&pool.cv, &pool.mu);
    seen = pool.done;
    pthread_mutex_unlock(&pool.mu);
    if (cfg->progress)
      cfg->progress(cfg->progress_ctx, seen, total);
  }
  for (unsigned j = 0; j < started; j++)
    pthread_join(th[j], NULL);
  free(th);
  pthread_mutex_destroy(&pool.mu);
  pthread_cond_destroy(&pool.cv);

  /* Stitch in plan order: the result never depends on the threads. */
  int rc = 0;
  struct sonde_ft_stitch *st = NULL;
  for (uint32_t i = 0; i < total && !rc; i++)
    if (its[i].rc)
      rc = sonde_diag_set(diag, its[i].rc, "%s", its[i].msg);
  if (!rc && gt && truth_len != its[0].run_cycles)
    rc = sonde_diag_set(diag, SONDE_E_STATE,
                        "the ground-truth run took %llu cycles, the traced runs %llu: the trace "
                        "blocks changed the timing",
                        (unsigned long long)truth_len, (unsigned long long)its[0].run_cycles);
  struct sonde_ft_report rep;
  for (unsigned round = 0; !rc; round++) {
    rc = stitch_all(&pl, its, total, &st, trace, &rep, diag);
    if (rc || round >= 16)
      break;
    int changed = rerun_suspects(&pl, its, total, *trace, &rep, stats);
    if (changed <= 0) {
      rc = changed < 0 ? sonde_diag_set(diag, changed, "re-run: %s", sonde_strerror(changed)) : 0;
      break;
    }
    sonde_ft_trace_free(*trace);
    *trace = NULL;
    sonde_ft_stitch_free(st);
    st = NULL;
  }
  if (!rc) {
    for (uint32_t i = 0; i < total; i++) {
      struct iter *it = &its[i];
      stats->swo_bytes += it->swo_bytes;
      stats->pc_packets += it->pc_packets;
      stats->sleep_packets += it->sleep_packets;
      stats->overflow_packets += it->overflow_packets;
      stats->skipped_bytes += it->skipped;
      stats->flipped_bits += it->flipped;
      stats->reruns += it->attempts - 1;
      if (it->corrupt)
        stats->bad_iterations++;
      else
        stats->lost_samples += it->lost;
    }
    stats->iterations = total;
    stats->run_cycles = its[0].run_cycles;
    stats->exit_code = (uint64_t)(int64_t)its[0].exit_code;
    if (report)
      *report = rep;
    sonde_ft_trace_set_clock_hz(*trace, pl.clock_hz);
    /* From one interval before the first sign of runs that went apart (a
     * disagreement, an impossible transition, a located length difference)
     * no cycle is trusted (sonde_ft_untrusted_from says why the interval). */
    uint64_t bad = first_impossible(&pl, *trace); /* the cycle before it */
    uint64_t from = sonde_ft_untrusted_from(&rep, bad == UINT64_MAX ? bad : bad + 1, cfg->n,
                                            rep.origin);
    uint64_t len_at = locate_length(&pl, its, total, &rep, stats);
    stats->length_first_difference = len_at;
    if (len_at != UINT64_MAX) { /* the same margin as for any other first sign */
      uint64_t f = len_at >= rep.origin + cfg->n ? len_at - cfg->n : rep.origin;
      if (f < from)
        from = f;
    }
    stats->distrusted_from = from;
    if (from != UINT64_MAX && (rc = sonde_ft_distrust_from(trace, from)) < 0)
      sonde_diag_set(diag, rc, "out of memory");
    else if (from != UINT64_MAX && report) /* the counts of what is emitted */
      sonde_ft_trace_count(*trace, &report->counts);
  }
  for (uint32_t i = 0; i < total; i++)
    free(its[i].samples);
  free(its);
  if (rc) {
    sonde_ft_trace_free(*trace);
    *trace = NULL;
    sonde_ft_stitch_free(st);
    sonde_ft_trace_free(gt);
    return rc;
  }
  if (state) {
    *state = calloc(1, sizeof **state);
    if (*state)
      (*state)->st = st;
    else
      sonde_ft_stitch_free(st);
  } else {
    sonde_ft_stitch_free(st);
  }
  if (truth)
    *truth = gt;
  else
    sonde_ft_trace_free(gt);
  return 0;
}
