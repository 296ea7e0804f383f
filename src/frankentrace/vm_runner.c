/* FrankenTrace on the VM for runner images (sonde/frankentrace_vm.h): the
 * target runner (target/cortexm/frankentrace) repeats the program itself,
 * one plan entry per boot. Either one VM runs the whole plan through
 * SYSRESETREQ (the .noinit state retained, as on silicon), or every
 * iteration gets its own VM, preloaded through the debug port with the
 * runner's state for that iteration and halted by VC_CORERESET at the reset
 * that ends it; iterations then run on threads. Either way each iteration's
 * SWO bytes are split and judged by runner_stitch.c and stitched in plan
 * order, so the trace does not depend on how it was run. */
#include "sonde/frankentrace_vm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ft_vm.h"
#include "ft_wire.h"
#include "sonde/sym.h"

#define STATE_MAGIC 0x46545354u /* "FTST": target/cortexm/frankentrace/ft_runner.h */
#define STATE_WORDS 5           /* magic, run id, iteration, plan length, checksum */
#define DEFAULT_MAX_CYCLES 10000000000ull

bool sonde_ft_vm_is_runner(const struct sonde_sym *sym, struct sonde_diag *diag)
{
  uint32_t a, sz = 0;
  if (!sym || sonde_sym_address(sym, "ft_preamble", &a, NULL) < 0) {
    sonde_diag_set(diag, SONDE_E_NOTFOUND, "no ft_preamble");
    return false;
  }
  if (sonde_sym_address(sym, "ft_st", &a, &sz) < 0 || sz < 4 * STATE_WORDS) {
    sonde_diag_set(diag, SONDE_E_NOTFOUND, "ft_preamble but no runner state ft_st (stripped?)");
    return false;
  }
  return true;
}

/* The runner's state checksum (FNV-1a of the first four words, ft_state_sum). */
static uint32_t state_sum(const uint32_t w[4])
{
  uint32_t h = 0x811C9DC5u;
  for (unsigned i = 0; i < 4; i++)
    h = (h ^ w[i]) * 0x01000193u;
  return h;
}

struct slot {
  struct sonde_ft_runner_iter it;
  bool have;
  struct sonde_ftw_iteration lsu; /* LSU iterations: the packets, copied */
  struct sonde_itm_packet *lsu_packets;
  unsigned runs;                  /* attempts made */
  int rc;
  char msg[400];
  uint64_t cycles, swo_bytes, flipped;
};

struct ctx {
  const struct sonde_ft_vm_runner_config *cfg;
  struct sonde_ft_runner_config rcfg;
  uint64_t clock_hz;
  uint32_t st_addr, run_id, total;
  struct slot *slots;
  unsigned attempts;
  bool chained;
  bool fw_config_read; /* the image exited without a plan: its ft_config */
  uint32_t fw_config[3];
};

/* The runner's configuration (ft_cfg points at it once ft_begin ran), read as
 * a debugger would after the image exited without running its plan. */
static void read_fw_config(struct ctx *x, struct sonde_vm *vm)
{
  uint32_t at, ptr;
  if (sonde_sym_address(x->cfg->sym, "ft_cfg", &at, NULL) == 0 &&
      sonde_vm_read_mem(vm, at, &ptr, 4) == 0 && ptr &&
      sonde_vm_read_mem(vm, ptr, x->fw_config, sizeof x->fw_config) == 0)
    x->fw_config_read = true;
}

static void slot_clear(struct slot *s)
{
  sonde_ft_runner_iter_free(&s->it);
  free(s->lsu_packets);
  s->lsu_packets = NULL;
  s->have = false;
}

struct take {
  struct ctx *x;
  int64_t only;        /* the iteration a preloaded VM ran (-1: any) */
  struct slot *slots;  /* indexed by iteration (only: slots[0] is it) */
  uint32_t count;      /* slots */
  int rc;
};

/* Splitter callback: judge the iteration, keep it in its slot. */
static int take_iteration(void *vctx, const struct sonde_ftw_iteration *it)
{
  struct take *t = vctx;
  uint32_t j = it->begin.iteration;
  if (t->only >= 0 && j != (uint64_t)t->only)
    return 0; /* not the one this VM ran: a corrupt record that passed its check */
  struct slot *s = t->only >= 0 ? &t->slots[0] : j < t->count ? &t->slots[j] : NULL;
  if (!s || s->have)
    return 0;
  int rc = sonde_ft_runner_judge(it, &t->x->rcfg, &s->it);
  if (rc < 0)
    return t->rc = rc;
  if (s->it.verdict == SONDE_FT_RUNNER_LSU) {
    s->lsu = *it;
    s->lsu_packets = malloc((it->count ? it->count : 1) * sizeof *it->packets);
    if (!s->lsu_packets)
      return t->rc = SONDE_E_NOMEM;
    memcpy(s->lsu_packets, it->packets, it->count * sizeof *it->packets);
    s->lsu.packets = s->lsu_packets;
  }
  s->have = true;
  return 0;
}

static int decode(struct take *t, const uint8_t *bytes, size_t len, struct sonde_diag *diag)
{
  struct sonde_ftw_splitter *sp = NULL;
  struct sonde_itm *dec = sonde_itm_new(NULL);
  int rc = dec ? sonde_ftw_splitter_new(take_iteration, t, &sp) : SONDE_E_NOMEM;
  if (!rc)
    rc = sonde_ft_runner_decode(sp, dec, bytes, len, diag);
  if (rc >= 0)
    rc = sonde_ftw_splitter_finish(sp, diag);
  if (rc < 0 && t->rc)
    rc = t->rc;
  sonde_ftw_splitter_free(sp);
  sonde_itm_free(dec);
  return rc < 0 ? rc : 0;
}

static int new_vm(const struct ctx *x, struct ft_wire *w, struct sonde_vm **out, char *msg,
                  size_t cap)
{
  const struct sonde_ft_vm_runner_config *cfg = x->cfg;
  struct ft_vm_open_args a = {cfg->machine, cfg->elf, cfg->elf_len, cfg->elf_name, cfg->no_jit};
  return ft_vm_open(&a, ft_wire_byte, w, out, msg, cap);
}

static uint64_t wire_seed(const struct ctx *x, uint32_t j, unsigned attempt)
{
  return ft_wire_mix(x->cfg->seed ^ ft_wire_mix(((uint64_t)j << 8) | attempt));
}

/* Iteration j on its own VM: preloaded with the state of iteration j (j = 0
 * boots cold, as the first iteration on silicon), halted at the reset that
 * ends it. */
static void run_one(struct ctx *x, uint32_t j, unsigned attempt, struct slot *s)
{
  const struct sonde_ft_vm_runner_config *cfg = x->cfg;
  struct ft_wire w;
  ft_wire_init(&w, x->clock_hz, cfg->bit_errors, wire_seed(x, j, attempt));
  struct sonde_vm *vm = NULL;
  s->runs++;
  if ((s->rc = new_vm(x, &w, &vm, s->msg, sizeof s->msg))) {
    ft_wire_free(&w);
    return;
  }
  sonde_vm_set_run_index(vm, j); /* the environment of boot j (a delay peripheral's jitter) */
  /* Stop at the reset that ends the iteration. Not by halting debug
   * (C_DEBUGEN + VC_CORERESET): with it a DWT watchpoint halts the core
   * instead of raising the DebugMonitor an invasive LSU iteration needs. */
  sonde_vm_set_stop_at_reset(vm, true);
  int rc = 0;
  if (j) {
    uint32_t st[STATE_WORDS] = {STATE_MAGIC, x->run_id, j, x->total, 0};
    st[4] = state_sum(st);
    rc = sonde_vm_write_mem(vm, x->st_addr, st, sizeof st);
  }
  struct sonde_vm_stop stop = {0};
  if (!rc)
    rc = sonde_vm_run(vm, cfg->max_cycles ? cfg->max_cycles : DEFAULT_MAX_CYCLES, &stop);
  struct sonde_vm_stats vs;
  sonde_vm_get_stats(vm, &vs);
  s->cycles += vs.cycles;
  if (!rc && !j && !x->total) { /* the cold boot: learn the plan from the state it left */
    uint32_t st[STATE_WORDS];
    rc = sonde_vm_read_mem(vm, x->st_addr, st, sizeof st);
    if (!rc && stop.reason == SONDE_VM_STOP_HALT &&
        (st[0] != STATE_MAGIC || st[4] != state_sum(st) || st[2] != 1 || !st[3])) {
      snprintf(s->msg, sizeof s->msg,
               "%s: after iteration 0 the runner state ft_st is not that of iteration 1 (magic "
               "0x%08x, iteration %u, plan %u)", cfg->elf_name, st[0], st[2], st[3]);
      rc = SONDE_E_STATE;
    }
    x->run_id = st[1];
    x->total = st[3];
  }
  if (!j && stop.reason == SONDE_VM_STOP_EXIT)
    read_fw_config(x, vm);
  sonde_vm_free(vm);
  if (!rc && stop.reason != SONDE_VM_STOP_HALT) {
    if (stop.reason == SONDE_VM_STOP_EXIT)
      snprintf(s->msg, sizeof s->msg,
               "%s: iteration %u exited (code %d) instead of resetting: the runner did not "
               "start it (ft_begin refused the configuration?)", cfg->elf_name, j, stop.exit_code);
    else
      snprintf(s->msg, sizeof s->msg,
               "%s: iteration %u did not end with the runner's reset (stop %d at pc 0x%08x after "
               "%llu cycles)", cfg->elf_name, j, (int)stop.reason, stop.pc,
               (unsigned long long)vs.cycles);
    rc = SONDE_E_STATE;
  }
  if (!rc)
    rc = ft_wire_finish(&w);
  s->swo_bytes += w.sent;
  s->flipped += w.flipped;
  if (!rc) {
    struct take t = {x, j, s, 1, 0};
    struct sonde_diag d;
    rc = decode(&t, w.buf, w.n, &d);
    if (rc)
      snprintf(s->msg, sizeof s->msg, "iteration %u: %s", j, d.msg);
  } else if (!s->msg[0]) {
    snprintf(s->msg, sizeof s->msg, "iteration %u: %s", j, sonde_strerror(rc));
  }
  ft_wire_free(&w);
  s->rc = rc;
}

/* Sound: on the VM every iteration runs to its reset, so one without its end
 * record (CUT) lost it on the wire, like a corrupt one. */
static bool usable(const struct slot *s)
{
  if (s->have && s->it.verdict == SONDE_FT_RUNNER_LSU) { /* judged by its packets (lsu_runs.c) */
    if (!s->lsu.has_end || s->lsu.wire_errors)
      return false;
    for (size_t i = 0; i < s->lsu.count; i++)
      if (s->lsu.packets[i].type == SONDE_ITM_SKIP &&
          s->lsu.packets[i].flags != SONDE_ITM_SKIP_TRUNCATED)
        return false;
    return true;
  }
  return s->have && s->it.verdict == SONDE_FT_RUNNER_OK;
}

/* Iteration j until it is sound on the wire or the attempts are used up. */
static void run_until_sound(struct ctx *x, uint32_t j, struct slot *s)
{
  while (s->runs < x->attempts) {
    slot_clear(s);
    run_one(x, j, s->runs, s);
    if (s->rc || usable(s))
      return;
  }
}

/* ---- on threads ---------------------------------------------------------- */

struct pool {
  struct ctx *x;
  uint32_t *todo, ntodo, next, done;
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

static void *worker(void *arg)
{
  struct pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    uint32_t i = p->next < p->ntodo ? p->next++ : UINT32_MAX;
    pthread_mutex_unlock(&p->mu);
    if (i == UINT32_MAX)
      return NULL;
    uint32_t j = p->todo[i];
    run_until_sound(p->x, j, &p->x->slots[j]);
    pthread_mutex_lock(&p->mu);
    p->done++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
}

static void run_pool(struct ctx *x, uint32_t *todo, uint32_t ntodo, uint32_t done0)
{
  const struct sonde_ft_vm_runner_config *cfg = x->cfg;
  struct pool p = {.x = x, .todo = todo, .ntodo = ntodo};
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  unsigned jobs = cfg->jobs ? cfg->jobs : 1;
  if (jobs > ntodo)
    jobs = ntodo ? ntodo : 1;
  pthread_t th[256];
  unsigned started = 0;
  for (unsigned k = 0; k < jobs && k < 256; k++)
    if (!pthread_create(&th[k], NULL, worker, &p))
      started++;
  if (!started)
    worker(&p);
  for (uint32_t seen = 0; started && seen < ntodo;) {
    pthread_mutex_lock(&p.mu);
    while (p.done == seen)
      pthread_cond_wait(&p.cv, &p.mu);
    seen = p.done;
    pthread_mutex_unlock(&p.mu);
    if (cfg->progress)
      cfg->progress(cfg->progress_ctx, done0 + seen, x->total);
  }
  for (unsigned k = 0; k < started; k++)
    pthread_join(th[k], NULL);
  pthread_mutex_destroy(&p.mu);
  pthread_cond_destroy(&p.cv);
}

/* ---- one VM through every SYSRESETREQ -------------------------------------- */

static int run_chained(struct ctx *x, struct sonde_ft_vm_runner_stats *stats,
                       struct sonde_diag *diag)
{
  const struct sonde_ft_vm_runner_config *cfg = x->cfg;
  struct ft_wire w;
  ft_wire_init(&w, x->clock_hz, cfg->bit_errors, ft_wire_mix(cfg->seed));
  struct sonde_vm *vm = NULL;
  char msg[400] = "";
  int rc = new_vm(x, &w, &vm, msg, sizeof msg);
  if (rc) {
    ft_wire_free(&w);
    return sonde_diag_set(diag, rc, "%s", msg);
  }
  struct sonde_vm_stop stop = {0};
  uint64_t limit = cfg->max_cycles ? cfg->max_cycles : DEFAULT_MAX_CYCLES;
  struct sonde_vm_stats vs;
  uint32_t st[STATE_WORDS] = {0};
  if (!cfg->progress) {
    rc = sonde_vm_run(vm, limit, &stop);
  } else {
    /* in slices, telling the iteration the runner's state (ft_st) is at,
     * read as a debugger would; the run is the same cycle for cycle */
    enum { SLICE = 1u << 22 };
    for (;;) {
      sonde_vm_get_stats(vm, &vs);
      uint64_t to = limit - vs.cycles > SLICE ? vs.cycles + SLICE : limit;
      rc = sonde_vm_run(vm, to, &stop);
      if (rc < 0 || stop.reason != SONDE_VM_STOP_CYCLE_LIMIT || to == limit)
        break;
      if (sonde_vm_read_mem(vm, x->st_addr, st, sizeof st) == 0 && st[0] == STATE_MAGIC &&
          st[2] <= st[3])
        cfg->progress(cfg->progress_ctx, st[2], st[3]);
    }
  }
  sonde_vm_get_stats(vm, &vs);
  if (!rc)
    rc = sonde_vm_read_mem(vm, x->st_addr, st, sizeof st);
  if (!rc && (st[0] != STATE_MAGIC || st[2] != st[3]))
    read_fw_config(x, vm);
  sonde_vm_free(vm);
  stats->vms = 1;
  stats->cycles = vs.cycles;
  stats->exit_code = (uint64_t)(int64_t)stop.exit_code;
  if (rc < 0 || stop.reason != SONDE_VM_STOP_EXIT) {
    ft_wire_free(&w);
    return sonde_diag_set(diag, rc < 0 ? rc : SONDE_E_STATE,
                          "%s: the runner image did not exit after its plan (stop %d at pc "
                          "0x%08x after %llu cycles)",
                          cfg->elf_name, (int)stop.reason, stop.pc,
                          (unsigned long long)vs.cycles);
  }
  if (st[0] != STATE_MAGIC || st[4] != state_sum(st) || !st[3] || st[2] != st[3]) {
    ft_wire_free(&w);
    return sonde_diag_set(diag, SONDE_E_STATE,
                          "%s: exited (code %d) with the runner state ft_st not at the end of "
                          "a plan (magic 0x%08x, iteration %u of %u): did ft_begin refuse the "
                          "configuration?",
                          cfg->elf_name, stop.exit_code, st[0], st[2], st[3]);
  }
  x->run_id = st[1];
  x->total = st[3];
  x->slots = calloc(x->total, sizeof *x->slots);
  rc = x->slots ? ft_wire_finish(&w) : SONDE_E_NOMEM;
  stats->swo_bytes = w.sent;
  stats->flipped_bits = w.flipped;
  if (!rc) {
    struct take t = {x, -1, x->slots, x->total, 0};
    rc = decode(&t, w.buf, w.n, diag);
  } else {
    sonde_diag_set(diag, rc, "%s", sonde_strerror(rc));
  }
  ft_wire_free(&w);
  if (rc)
    return rc;
  for (uint32_t j = 0; j < x->total; j++) {
    struct slot *s = &x->slots[j];
    s->runs = 1;
    if (!usable(s)) /* corrupt on the wire (or never seen): that iteration alone again */
      run_until_sound(x, j, s);
  }
  return 0;
}

/* ---- the whole ------------------------------------------------------------- */

static int stitch_slots(struct ctx *x, struct sonde_ft_trace **trace,
                        struct sonde_ft_runner_summary *sum, struct sonde_ft_runner **runner,
                        struct sonde_diag *diag)
{
  int rc = sonde_ft_runner_new(&x->rcfg, runner);
  if (rc < 0)
    return sonde_diag_set(diag, rc, "out of memory");
  for (uint32_t j = 0; j < x->total; j++) {
    struct slot *s = &x->slots[j];
    if (s->rc)
      return sonde_diag_set(diag, s->rc, "%s", s->msg);
    if (!s->have)
      continue; /* never seen whole (its begin record was lost): its phase is missing */
    if ((rc = sonde_ft_runner_add(*runner, &s->it, diag)) < 0)
      return rc;
  }
  if ((rc = sonde_ft_runner_finish(*runner, trace, sum, diag)) < 0)
    return rc;
  sonde_ft_trace_set_clock_hz(*trace, x->clock_hz);
  return 0;
}

/* A bit error inside a PC payload passes every wire check; the code check
 * finds the impossible transition it makes. The samples on either side of it
 * come from two phases: run their iterations again and keep what changed.
 * Returns 1 when something changed (stitch again), 0 when the re-runs agree
 * with what was there (then it is not the wire), or an error. */
static int rerun_suspects(struct ctx *x, const struct sonde_ft_runner_summary *sum)
{
  if (!sum->impossible || x->cfg->bit_errors <= 0 || !sum->n)
    return 0;
  uint64_t c = sum->first_impossible.cycle;
  uint32_t p[2] = {(uint32_t)((c ? c - 1 : 0) % sum->n), (uint32_t)(c % sum->n)};
  int changed = 0;
  for (uint32_t j = 0; j < x->total; j++) {
    struct slot *s = &x->slots[j];
    if (!s->have || s->it.verdict == SONDE_FT_RUNNER_LSU ||
        (s->it.begin.phase != p[0] && s->it.begin.phase != p[1]) || s->runs >= 2 * x->attempts)
      continue;
    struct slot fresh = {0};
    fresh.runs = s->runs;
    while (fresh.runs < 2 * x->attempts) {
      slot_clear(&fresh);
      run_one(x, j, fresh.runs, &fresh);
      if (fresh.rc || usable(&fresh))
        break;
    }
    if (fresh.rc) {
      int rc = fresh.rc;
      slot_clear(&fresh);
      return rc;
    }
    fresh.cycles += s->cycles;
    fresh.swo_bytes += s->swo_bytes;
    fresh.flipped += s->flipped;
    bool same = usable(&fresh) && fresh.it.samples.count == s->it.samples.count &&
                !memcmp(fresh.it.samples.v, s->it.samples.v,
                        s->it.samples.count * sizeof *s->it.samples.v);
    if (!usable(&fresh) || same) { /* keep the old samples, count the runs */
      s->runs = fresh.runs;
      s->cycles = fresh.cycles;
      s->swo_bytes = fresh.swo_bytes;
      s->flipped = fresh.flipped;
      slot_clear(&fresh);
      continue;
    }
    slot_clear(s);
    *s = fresh;
    changed = 1;
  }
  return changed;
}

static void count_stats(const struct ctx *x, struct sonde_ft_vm_runner_stats *stats)
{
  for (uint32_t j = 0; j < x->total; j++) {
    const struct slot *s = &x->slots[j];
    stats->vms += x->chained ? s->runs - 1 : s->runs; /* chained: the one VM ran it first */
    stats->reruns += s->runs > 1 ? s->runs - 1 : 0;
    stats->cycles += s->cycles;
    stats->swo_bytes += s->swo_bytes;
    stats->flipped_bits += s->flipped;
    if (!usable(s))
      stats->corrupt_left++;
  }
}

/* Stitch, re-run what the code check suspects, mark what cannot be trusted,
 * hand the LSU iterations over. */
static int finish(struct ctx *x, struct sonde_ft_trace **trace, struct sonde_ft_runner_summary *sum,
                  struct sonde_ft_vm_runner_stats *stats, struct sonde_ft_runner **runner,
                  struct sonde_diag *diag)
{
  const struct sonde_ft_vm_runner_config *cfg = x->cfg;
  int rc;
  for (unsigned round = 0;; round++) {
    if ((rc = stitch_slots(x, trace, sum, runner, diag)) < 0)
      return rc;
    if (round >= 16 || (rc = rerun_suspects(x, sum)) == 0)
      break;
    if (rc < 0)
      return sonde_diag_set(diag, rc, "re-run: %s", sonde_strerror(rc));
    sonde_ft_trace_free(*trace);
    *trace = NULL;
    sonde_ft_runner_free(*runner);
    *runner = NULL;
  }
  count_stats(x, stats);
  /* runner_finish marked every cycle from the first disagreement or
   * impossible transition (no cycle after it can be trusted) */
  stats->distrusted_from = sum->untrusted_from;
  for (uint32_t j = 0; cfg->lsu_iteration && j < x->total; j++) {
    struct slot *s = &x->slots[j];
    if (s->have && s->it.verdict == SONDE_FT_RUNNER_LSU &&
        (rc = cfg->lsu_iteration(cfg->lsu_ctx, &s->lsu)) < 0)
      return sonde_diag_set(diag, rc, "iteration %u: LSU: %s", j, sonde_strerror(rc));
  }
  return 0;
}

int sonde_ft_vm_runner_run(const struct sonde_ft_vm_runner_config *cfg,
                           struct sonde_ft_trace **trace, struct sonde_ft_trace **truth,
                           struct sonde_ft_runner_summary *sum,
                           struct sonde_ft_vm_runner_stats *stats, struct sonde_ft_runner **runner,
                           struct sonde_diag *diag)
{
  *trace = NULL;
  *runner = NULL;
  if (truth)
    *truth = NULL;
  memset(stats, 0, sizeof *stats);
  memset(sum, 0, sizeof *sum);
  struct sonde_diag why;
  if (!sonde_ft_vm_is_runner(cfg->sym, &why))
    return sonde_diag_set(diag, SONDE_E_ARG,
                          "%s: not a FrankenTrace runner image (%s): link "
                          "target/cortexm/frankentrace into it, or trace it unmodified with "
                          "--probe",
                          cfg->elf_name, why.msg);
  struct ctx x = {.cfg = cfg, .clock_hz = sonde_machine_clock_hz(cfg->machine),
                  .attempts = cfg->attempts ? cfg->attempts : 4};
  x.rcfg.sym = cfg->sym;
  sonde_sym_address(cfg->sym, "ft_st", &x.st_addr, NULL);
  uint32_t warm;
  sonde_sym_lookup(cfg->sym, x.st_addr, NULL, NULL); /* build the symbol index before threads */
  sonde_sym_address(cfg->sym, "ft_preamble", &warm, NULL);
  int rc;
  x.chained = cfg->jobs <= 1 && !cfg->preload;
  if (x.chained) {
    rc = run_chained(&x, stats, diag);
  } else {
    struct slot first = {0};
    run_until_sound(&x, 0, &first); /* the cold boot tells the plan */
    if (first.rc) {
      slot_clear(&first);
      stats->fw_config_read = x.fw_config_read;
      stats->fw_core_hz = x.fw_config[0];
      stats->fw_baud = x.fw_config[1];
      stats->fw_n = x.fw_config[2];
      return sonde_diag_set(diag, first.rc, "%s", first.msg);
    }
    if (!(x.slots = calloc(x.total, sizeof *x.slots))) {
      slot_clear(&first);
      return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
    }
    x.slots[0] = first;
    uint32_t *todo = malloc(x.total * sizeof *todo);
    if (!todo)
      rc = sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
    else {
      for (uint32_t j = 1; j < x.total; j++)
        todo[j - 1] = j;
      run_pool(&x, todo, x.total - 1, 1);
      free(todo);
      rc = 0;
    }
  }
  stats->plan = x.total;
  stats->run_id = x.run_id;
  stats->fw_config_read = x.fw_config_read;
  stats->fw_core_hz = x.fw_config[0];
  stats->fw_baud = x.fw_config[1];
  stats->fw_n = x.fw_config[2];
  if (!rc)
    rc = finish(&x, trace, sum, stats, runner, diag);
  if (!rc && cfg->ground_truth) {
    struct ft_vm_truth_args a = {cfg->machine, cfg->elf, cfg->elf_len, cfg->elf_name,
                                 cfg->max_cycles, true};
    uint64_t len;
    rc = ft_vm_truth(&a, truth, &len, diag);
  }
  for (uint32_t j = 0; x.slots && j < x.total; j++)
    slot_clear(&x.slots[j]);
  free(x.slots);
  if (rc) {
    sonde_ft_trace_free(*trace);
    *trace = NULL;
    sonde_ft_runner_free(*runner);
    *runner = NULL;
  }
  return rc;
}
