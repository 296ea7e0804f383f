/* PC-polling mode (monitor.h; AVEKSHA section 3.4): read the PC while the core
 * runs, look the function up, log only when it changes.
 *
 * VM link: a probe clocked with the core (AVEKSHA clocks the MSP430 from its
 * FPGA for the same reason). The PC at cycle T is the instruction occupying
 * T; a cycle no instruction occupies (sleep, exception entry and return) keeps
 * the instruction before it, as the ground-truth reader does. Polls happen at
 * phase + k*C; the VM's retire hook places them, so polling every cycle costs
 * one range check per instruction, not one lookup per cycle.
 * OpenOCD link: CYCCNT..PCSR read in one block (7 words), so each sample has
 * the cycle it was taken at; the core never stops.
 * GDB link (halting): halt, read CYCCNT and the PC, resume. */
#include "monitor_internal.h"

#include <stdlib.h>
#include <string.h>

#include "sonde/trace.h"

#define VM_DEFAULT_MAX_CYCLES 10000000000ull
#define DEFAULT_MS 1000u
#define TRCENA (1u << 24)
#define CYCCNTENA 1u

struct poller {
  const struct sonde_mon_ftab *ft;
  struct sonde_mon_pc_result *res;
  size_t cap;
  long func;          /* function of the last sample (-2: none yet) */
  uint32_t lo, hi;    /* its range: pcs inside need no lookup */
  uint64_t last_change;
  int err;
};

static void poller_init(struct poller *p, const struct sonde_mon_ftab *ft,
                        struct sonde_mon_pc_result *res)
{
  memset(res, 0, sizeof *res);
  memset(p, 0, sizeof *p);
  p->ft = ft;
  p->res = res;
  p->func = -2;
  res->min_dwell_cycles = UINT64_MAX;
}

static void log_change(struct poller *p, uint64_t cycle, uint32_t pc, long f)
{
  struct sonde_mon_pc_result *r = p->res;
  if (p->err)
    return;
  if (mon_grow((void **)&r->changes, &p->cap, r->nchanges, sizeof *r->changes) < 0) {
    p->err = SONDE_E_NOMEM;
    return;
  }
  if (r->nchanges && cycle - p->last_change < r->min_dwell_cycles)
    r->min_dwell_cycles = cycle - p->last_change;
  r->changes[r->nchanges].cycle = cycle;
  r->changes[r->nchanges].pc = pc;
  r->changes[r->nchanges].func = (int32_t)f;
  r->nchanges++;
  p->last_change = cycle;
  p->func = f;
  if (f >= 0) {
    const struct sonde_mon_func *fn = sonde_mon_ftab_at(p->ft, (size_t)f);
    p->lo = fn->start;
    p->hi = fn->end;
  } else {
    p->lo = p->hi = 0;
  }
}

/* One sample: the PC at `cycle`. */
static inline void sample(struct poller *p, uint64_t cycle, uint32_t pc)
{
  pc &= ~1u;
  if (pc >= p->lo && pc < p->hi)
    return;
  long f = sonde_mon_ftab_lookup(p->ft, pc);
  if (f != p->func || p->func == -2)
    log_change(p, cycle, pc, f);
  else if (f < 0) {
    p->lo = p->hi = 0;
  }
}

/* ---- VM: polls placed by the retire hook ------------------------------------ */

struct vmpoll {
  struct poller p;
  uint64_t every, next;  /* next poll cycle */
  uint32_t prev_pc;      /* last retired instruction ... */
  uint64_t prev_end;     /* ... and the cycle it ended */
  bool have_prev;
  uint64_t polls;
  uint64_t max_polls;
  struct sonde_vm *vm;
};

static void vm_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  struct vmpoll *v = ctx;
  uint64_t end = cycle + cycles;
  if (v->next < cycle) {
    /* polls in the gap before this instruction see the one before */
    uint64_t n = (cycle - v->next + v->every - 1) / v->every;
    if (v->have_prev)
      sample(&v->p, v->next, v->prev_pc);
    v->polls += n;
    v->next += n * v->every;
  }
  if (v->next < end) {
    uint64_t n = (end - v->next + v->every - 1) / v->every;
    sample(&v->p, v->next, pc);
    v->polls += n;
    v->next += n * v->every;
  }
  v->prev_pc = pc;
  v->prev_end = end;
  v->have_prev = true;
  if (v->max_polls && v->polls >= v->max_polls)
    sonde_vm_halt(v->vm);
}

static int poll_vm(struct sonde_mon_link *l, const struct sonde_mon_pc_opts *o,
                   struct sonde_mon_pc_result *res, struct poller *pp)
{
  struct vmpoll v;
  memset(&v, 0, sizeof v);
  v.p = *pp;
  v.every = o->every_cycles ? o->every_cycles : 1;
  v.vm = l->vm;
  v.max_polls = o->max_polls;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(l->vm, &st);
  v.next = o->phase > st.cycles ? o->phase : st.cycles;
  res->first_cycle = v.next;
  struct sonde_vm_hooks h;
  memset(&h, 0, sizeof h);
  h.ctx = &v;
  h.retire = vm_retire;
  sonde_vm_set_hooks(l->vm, &h);
  uint64_t max = o->max_cycles ? o->max_cycles : VM_DEFAULT_MAX_CYCLES;
  uint64_t limit = max > UINT64_MAX - st.cycles ? UINT64_MAX : st.cycles + max;
  uint64_t t0 = mon_now_ns();
  struct sonde_vm_stop s;
  int rc = sonde_vm_run(l->vm, limit, &s);
  res->host_ns = mon_now_ns() - t0;
  sonde_vm_set_hooks(l->vm, NULL);
  *pp = v.p;
  res->polls = v.polls;
  res->last_cycle = v.polls ? v.next - v.every : res->first_cycle;
  if (rc < 0)
    return sonde_diag_set(&l->diag, rc, "vm: run: %s", sonde_vm_error_detail(l->vm));
  if (s.reason == SONDE_VM_STOP_EXIT) {
    res->exited = true;
    res->exit_code = s.exit_code;
    l->exited = true;
    l->exit_code = s.exit_code;
  } else if (s.reason == SONDE_VM_STOP_LOCKUP) {
    return sonde_diag_set(&l->diag, SONDE_E_FAULT, "vm: the core locked up at pc 0x%08x",
                          (unsigned)s.pc);
  }
  return 0;
}

/* ---- VM, sparse: the VM's "PC at cycle T" ------------------------------------ */

/* sonde_vm_pc_at_cycle() runs the fast path up to each poll: for sparse polls
 * cheaper than the retire hook on every instruction (docs/benchmarks.md).
 * Same rule as the hooked path: a sleep keeps the function of the instruction
 * before it (sonde_vm_pc_at_cycle says only "sleep"; DWT_PCSR names it). */
static int poll_vm_sparse(struct sonde_mon_link *l, const struct sonde_mon_pc_opts *o,
                          struct sonde_mon_pc_result *res, struct poller *p)
{
  uint64_t every = o->every_cycles;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(l->vm, &st);
  uint64_t t = o->phase > st.cycles ? o->phase : st.cycles;
  uint64_t max = o->max_cycles ? o->max_cycles : VM_DEFAULT_MAX_CYCLES;
  uint64_t limit = max > UINT64_MAX - st.cycles ? UINT64_MAX : st.cycles + max;
  res->first_cycle = t;
  uint64_t t0 = mon_now_ns();
  int rc = 0;
  for (; t < limit && !(o->max_polls && res->polls >= o->max_polls); t += every) {
    struct sonde_pcsample ps;
    struct sonde_vm_stop s;
    rc = sonde_vm_pc_at_cycle(l->vm, t, &ps, &s);
    if (rc == SONDE_E_AGAIN) {
      rc = 0;
      if (s.reason == SONDE_VM_STOP_EXIT) {
        res->exited = true;
        res->exit_code = s.exit_code;
        l->exited = true;
        l->exit_code = s.exit_code;
      } else if (s.reason == SONDE_VM_STOP_LOCKUP) {
        rc = sonde_diag_set(&l->diag, SONDE_E_FAULT, "vm: the core locked up at pc 0x%08x",
                            (unsigned)s.pc);
      } else {
        rc = sonde_diag_set(&l->diag, SONDE_E_STATE, "vm: the core halted at pc 0x%08x",
                            (unsigned)s.pc);
      }
      break;
    }
    if (rc < 0) {
      rc = sonde_diag_set(&l->diag, rc, "vm: the PC at cycle %llu: %s", (unsigned long long)t,
                          sonde_strerror(rc));
      break;
    }
    res->polls++;
    res->last_cycle = t;
    if (ps.kind == SONDE_PCSAMPLE_PC) {
      sample(p, t, ps.pc);
    } else if (ps.kind == SONDE_PCSAMPLE_SLEEP) {
      /* the VM stopped inside the sleep: DWT_PCSR then reads the instruction
       * before it (docs/vm.md), whose function the sleep keeps */
      uint32_t pcsr;
      if (sonde_vm_read_mem(l->vm, SONDE_MON_DWT_PCSR, &pcsr, 4) == 0 && pcsr != 0xFFFFFFFFu)
        sample(p, t, pcsr);
    } else {
      res->unsampled++;
    }
  }
  res->host_ns = mon_now_ns() - t0;
  return rc;
}

/* ---- probes ---------------------------------------------------------------------- */

/* DEMCR.TRCENA and DWT_CTRL.CYCCNTENA so that CYCCNT counts (read-modify-write). */
int mon_enable_cyccnt(struct sonde_mon_link *l)
{
  uint32_t v;
  int rc = sonde_mon_read32(l, SONDE_MON_DEMCR, &v);
  if (rc == 0 && !(v & TRCENA))
    rc = sonde_mon_write32(l, SONDE_MON_DEMCR, v | TRCENA);
  if (rc == 0)
    rc = sonde_mon_read32(l, SONDE_MON_DWT_CTRL, &v);
  if (rc == 0 && !(v & CYCCNTENA))
    rc = sonde_mon_write32(l, SONDE_MON_DWT_CTRL, v | CYCCNTENA);
  return rc;
}

int mon_run_if_halted(struct sonde_mon_link *l)
{
  int st = sonde_mon_wait(l, 0, 0);
  if (st == SONDE_MON_HALTED)
    return sonde_mon_resume(l);
  return st < 0 ? st : 0;
}

static int poll_probe(struct sonde_mon_link *l, const struct sonde_mon_pc_opts *o,
                      struct sonde_mon_pc_result *res, struct poller *p)
{
  bool halting = !l->reads_running;
  int rc = 0;
  if (halting && (rc = sonde_mon_halt(l)) < 0)
    return rc;
  if ((rc = mon_enable_cyccnt(l)) < 0)
    return rc;
  if ((rc = halting ? sonde_mon_resume(l) : mon_run_if_halted(l)) < 0)
    return rc;
  uint64_t ms = o->max_ms ? o->max_ms : DEFAULT_MS;
  uint64_t t0 = mon_now_ns(), deadline = t0 + ms * 1000000u;
  uint64_t first = UINT64_MAX, last = 0;
  while (!p->err) {
    uint64_t cyc;
    uint32_t pc;
    if (halting) {
      if ((rc = sonde_mon_halt(l)) < 0)
        break;
      if (l->exited) {
        res->exited = true;
        res->exit_code = l->exit_code;
        break;
      }
      if ((rc = sonde_mon_cycles(l, &cyc)) < 0 || (rc = sonde_mon_read_pc(l, &pc)) < 0 ||
          (rc = sonde_mon_resume(l)) < 0)
        break;
    } else {
      uint32_t w[7];
      if ((rc = sonde_mon_read_words(l, SONDE_MON_DWT_CYCCNT, w, 7)) < 0)
        break;
      cyc = mon_cyc_extend(l, w[0]);
      pc = w[6];
      if (pc == 0xFFFFFFFFu) { /* PCSR: the core is halted or cannot be sampled */
        res->polls++;
        res->unsampled++;
        goto next;
      }
    }
    if (first == UINT64_MAX)
      first = cyc;
    last = cyc;
    sample(p, cyc, pc);
    res->polls++;
  next:
    if ((o->max_polls && res->polls >= o->max_polls) || mon_now_ns() >= deadline ||
        (o->max_cycles && first != UINT64_MAX && last - first >= o->max_cycles))
      break;
  }
  res->host_ns = mon_now_ns() - t0;
  res->first_cycle = first == UINT64_MAX ? 0 : first;
  res->last_cycle = last;
  return rc;
}

int sonde_mon_pc_poll(struct sonde_mon_link *l, const struct sonde_mon_ftab *ft,
                      const struct sonde_mon_pc_opts *opts, struct sonde_mon_pc_result *res)
{
  struct sonde_mon_pc_opts def;
  memset(&def, 0, sizeof def);
  const struct sonde_mon_pc_opts *o = opts ? opts : &def;
  struct poller p;
  poller_init(&p, ft, res);
  int rc;
  if (l->kind != SONDE_MON_LINK_VM)
    rc = poll_probe(l, o, res, &p);
  else if (o->every_cycles >= SONDE_MON_SPARSE_CYCLES && !o->hooked)
    rc = poll_vm_sparse(l, o, res, &p);
  else
    rc = poll_vm(l, o, res, &p);
  if (!rc && p.err)
    rc = p.err;
  if (res->min_dwell_cycles == UINT64_MAX)
    res->min_dwell_cycles = 0;
  res->polls_per_host_s = res->host_ns ? (double)res->polls * 1e9 / (double)res->host_ns : 0;
  res->mean_poll_cycles = res->polls > 1 ? (double)(res->last_cycle - res->first_cycle) /
                                               (double)(res->polls - 1)
                                         : 0;
  res->error = rc;
  return rc;
}

void sonde_mon_pc_result_free(struct sonde_mon_pc_result *res)
{
  if (!res)
    return;
  free(res->changes);
  res->changes = NULL;
  res->nchanges = 0;
}
