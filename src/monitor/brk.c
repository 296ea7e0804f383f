/* Breakpoint mode (monitor.h; AVEKSHA section 3.2): FPB comparators (ARMv7-M
 * ARM C1.11; ARMv8-M's version 2 layout when FP_CTRL.REV = 1) halt the core;
 * the monitor reads the PC and the cycle counter, steps over the breakpoint
 * (comparator off, one instruction, comparator on, as debuggers do) and
 * resumes. Each event records how long the core stood still on the host's
 * clock; the perturbation inside the target (cycles it ran differently) is
 * the difference with an unmonitored run (docs/monitor.md). */
#include "monitor_internal.h"

#include <stdlib.h>
#include <string.h>

#define FP_KEY_ENABLE 3u
#define VM_DEFAULT_MAX_CYCLES 10000000000ull

static uint32_t fp_comp_value(uint32_t addr, bool v2)
{
  if (v2)
    return (addr & ~1u) | 1u;
  return (addr & 0x1FFFFFFCu) | ((addr & 2) ? 0x80000000u : 0x40000000u) | 1u;
}

int sonde_mon_break(struct sonde_mon_link *l, const uint32_t *addrs, unsigned n,
                    const struct sonde_mon_bp_opts *opts, struct sonde_mon_bp_result *res)
{
  struct sonde_mon_bp_opts def;
  memset(&def, 0, sizeof def);
  const struct sonde_mon_bp_opts *o = opts ? opts : &def;
  memset(res, 0, sizeof *res);
  size_t cap = 0;
  int rc = sonde_mon_halt(l);
  uint32_t ctrl = 0;
  if (rc == 0)
    rc = sonde_mon_read32(l, SONDE_MON_FP_CTRL, &ctrl);
  if (rc < 0)
    return res->error = rc;
  unsigned ncode = ((ctrl >> 4) & 0xF) | (((ctrl >> 12) & 0x7) << 4);
  bool v2 = (ctrl >> 28) == 1;
  if (n > ncode)
    return res->error = sonde_diag_set(&l->diag, SONDE_E_LIMIT,
                                       "%s: %u breakpoints, but the FPB has %u code comparators",
                                       l->name, n, ncode);
  rc = mon_enable_cyccnt(l);
  if (rc == 0)
    rc = sonde_mon_write32(l, SONDE_MON_FP_CTRL, FP_KEY_ENABLE);
  for (unsigned i = 0; i < n && rc == 0; i++)
    rc = sonde_mon_write32(l, SONDE_MON_FP_COMP(i), fp_comp_value(addrs[i], v2));
  if (rc == 0)
    rc = sonde_mon_resume(l);
  uint64_t t0 = mon_now_ns();
  uint64_t start = 0;
  if (l->kind == SONDE_MON_LINK_VM)
    sonde_mon_cycles(l, &start);
  uint64_t budget = o->max_cycles ? o->max_cycles : VM_DEFAULT_MAX_CYCLES;
  unsigned ms = o->max_ms ? o->max_ms : 1000;
  uint64_t deadline = t0 + (uint64_t)ms * 1000000u; /* probes: the whole session */
  while (rc == 0) {
    uint64_t now = 0;
    if (l->kind == SONDE_MON_LINK_VM) {
      sonde_mon_cycles(l, &now);
      if (now - start >= budget)
        break;
    }
    uint64_t hnow = mon_now_ns();
    if (l->kind != SONDE_MON_LINK_VM && hnow >= deadline) {
      rc = sonde_mon_halt(l);
      break;
    }
    unsigned left = l->kind == SONDE_MON_LINK_VM ? ms : (unsigned)((deadline - hnow) / 1000000u) + 1;
    int st = sonde_mon_wait(l, budget - (now - start), left);
    if (st < 0) {
      rc = st;
      break;
    }
    if (st == SONDE_MON_EXITED) {
      res->exited = true;
      res->exit_code = l->exit_code;
      break;
    }
    if (st == SONDE_MON_RUNNING) {
      if (l->kind != SONDE_MON_LINK_VM)
        rc = sonde_mon_halt(l);
      break;
    }
    uint64_t th = mon_now_ns();
    uint32_t pc;
    uint64_t cyc;
    if ((rc = sonde_mon_read_pc(l, &pc)) < 0 || (rc = sonde_mon_cycles(l, &cyc)) < 0)
      break;
    unsigned k = 0;
    while (k < n && (addrs[k] & ~1u) != (pc & ~1u))
      k++;
    if (k == n) { /* halted for another reason (a BKPT in the code, a halt request) */
      rc = sonde_diag_set(&l->diag, SONDE_E_STATE, "%s: the core halted at 0x%08x, not at a "
                          "breakpoint", l->name, (unsigned)pc);
      break;
    }
    rc = sonde_mon_write32(l, SONDE_MON_FP_COMP(k), 0);
    if (rc == 0)
      rc = sonde_mon_step(l);
    if (rc == 0 && l->exited) {
      res->exited = true;
      res->exit_code = l->exit_code;
    }
    if (rc == 0 && !res->exited)
      rc = sonde_mon_write32(l, SONDE_MON_FP_COMP(k), fp_comp_value(addrs[k], v2));
    if (rc == 0 && !res->exited)
      rc = sonde_mon_resume(l);
    if (mon_grow((void **)&res->events, &cap, res->nevents, sizeof *res->events) < 0) {
      rc = SONDE_E_NOMEM;
      break;
    }
    struct sonde_mon_bp_event *e = &res->events[res->nevents++];
    e->cycle = cyc;
    e->addr = pc & ~1u;
    e->bp = k;
    e->halt_ns = mon_now_ns() - th;
    if (res->exited || (o->max_events && res->nevents >= o->max_events))
      break;
  }
  /* leave no breakpoint behind (a later session would stop at it); a probe's
   * core is left halted */
  if (l->kind != SONDE_MON_LINK_VM && !res->exited && !l->exited) {
    int hrc = sonde_mon_halt(l);
    if (rc == 0 && hrc < 0)
      rc = hrc;
  }
  for (unsigned i = 0; i < n && !res->exited && !l->exited; i++) {
    int wrc = sonde_mon_write32(l, SONDE_MON_FP_COMP(i), 0);
    if (rc == 0 && wrc < 0)
      rc = wrc;
  }
  res->host_ns = mon_now_ns() - t0;
  uint64_t end = 0;
  if (l->kind == SONDE_MON_LINK_VM && sonde_mon_cycles(l, &end) == 0)
    res->total_cycles = end;
  uint64_t halt = 0;
  for (size_t i = 0; i < res->nevents; i++)
    halt += res->events[i].halt_ns;
  res->halt_ns_per_event = res->nevents ? (double)halt / (double)res->nevents : 0;
  res->error = rc;
  return rc;
}

void sonde_mon_bp_result_free(struct sonde_mon_bp_result *res)
{
  if (!res)
    return;
  free(res->events);
  res->events = NULL;
  res->nevents = 0;
}
