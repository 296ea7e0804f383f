/* The timing model's memo (tm_memo.c): its layout, and the replay of a
 * memoized step inline for the block executor (vm_internal.h,
 * vm_exec_tm_charge_fast). Internal to src/vm. */
#ifndef SONDE_VM_TM_MEMO_H
#define SONDE_VM_TM_MEMO_H

#include "tm.h"

#define VM_TM_MEMO_SETS 2048u /* runs, two per set */
#define VM_TM_MEMO_LEN 16u    /* steps in a run at most */
#define VM_TM_MEMO_KEYW 18u   /* words of a state that key it */

/* The model's state at a cycle `now`, canonical and relative to it:
 *  k[0]  the PC of the step that starts there (a run's key; 0 after a step)
 *  k[1]  fa                 k[2]  qbase (0 with an empty queue: unused)
 *  k[3]  lb_line            k[4]  last_cline
 *  k[5]  f_issue - now (exact)
 *  k[6]  max(port_free, lo + 1) - now, k[7] the same of sbus_free,
 *  k[8]  max(wb_until, lo) - now, where lo = min(f_issue, now - 3): no
 *        later address phase is before lo (f_issue only grows but at a
 *        redirect, which sets it to a later now - 3; data phases start at
 *        now or later), so below these values the model cannot tell them
 *        apart (0, "never", included)
 *  k[9]  qn | last_miss << 8 | mode << 16 | fold_it << 24
 *  k[10..17] the queued words' ready cycles, oldest first, max(qt, now - 2)
 *        - now (the model adds 2 and compares with now + 1 or later, or
 *        asks "<= now - 2"); 0 beyond qn
 *  k[18] prev_ls | prev_ld_rd << 8: not part of the key (nothing reads them)
 * Relative values are 32-bit two's complement. */
struct vm_tm_memo_state {
  uint32_t k[VM_TM_MEMO_KEYW + 1];
};

enum { VM_TM_ACC_NONE, VM_TM_ACC_PLAIN, VM_TM_ACC_EXACT, VM_TM_ACC_NO };

struct vm_tm_memo_step {
  uint32_t pc, next, addr; /* addr: the first data address (VM_TM_ACC_EXACT) */
  uint16_t cycles;
  uint16_t ex;         /* executed | extra << 8 (vm_tm_memo_ex) */
  uint8_t acc, nw, wr; /* ACC_*, data words, stores */
  struct vm_tm_memo_state after;
};

static inline uint16_t vm_tm_memo_ex(bool executed, uint8_t extra)
{
  return (uint16_t)(executed | extra << 8);
}

struct vm_tm_memo_run {
  struct vm_tm_memo_state key;
  uint32_t gen;   /* valid while it equals the memo's */
  uint32_t stamp; /* last use (the set's older run is replaced) */
  uint32_t ver;   /* counts recordings into this slot */
  uint8_t n, nlines;
  uint32_t lines[8]; /* cache lines its lookups hit */
  uint64_t epoch;    /* tm->tag_epoch when they were last seen there */
  /* the run that started from this one's last state (its key is that
   * state), while its ver is link_ver: no lookup needed (two: the two ways
   * of a conditional branch or IT block that ends a run) */
  struct vm_tm_memo_run *link[2]; /* the last two, the latest first */
  uint32_t link_ver[2];
  /* the run that started at step fork_at of this one, the last time a
   * replay of this one stopped matching there, while its ver is fork_ver:
   * its key is the state before that step (a branch that went the other
   * way: no restore, no lookup) */
  struct vm_tm_memo_run *fork;
  uint32_t fork_ver;
  uint8_t fork_at;
  struct vm_tm_memo_step step[VM_TM_MEMO_LEN];
};

struct vm_tm_memo {
  struct vm_tm_memo_run *run; /* VM_TM_MEMO_SETS x 2 */
  uint32_t gen, tick;
  /* replaying: step s of cur is next; s = end: the state is the run's
   * last (not loaded yet: the next step may follow its link) */
  struct vm_tm_memo_run *cur;
  const struct vm_tm_memo_step *s, *end;
  struct vm_tm_memo_run *rec; /* recording */
  uint32_t lo, hi;      /* code the runs since the last flush read */
};

/* nw words from addr on the system bus at its default latency, none of them
 * the cache control register when stored: any such address times the same. */
static inline bool vm_tm_memo_plain(const struct vm_tm *tm, uint32_t addr, unsigned nw, bool wr)
{
  const uint32_t last = addr + 4 * (nw - 1);
  if (addr < 0x20000000u || last < addr)
    return false;
  if ((tm->lat_g[addr >> 29] >> ((addr >> 24) & 31) & 1) ||
      (tm->lat_g[last >> 29] >> ((last >> 24) & 31) & 1))
    return false;
  return !(wr && tm->cfg.cache && tm->cfg.cache_ctl - addr < 4u * nw);
}

static inline bool vm_tm_memo_matches_ex(const struct vm_tm *tm, const struct vm_tm_memo_step *s,
                                         uint32_t pc, uint32_t next, uint16_t ex, uint32_t addr)
{
  if (s->pc != pc || s->next != next || s->ex != ex)
    return false;
  if (s->acc == VM_TM_ACC_PLAIN)
    return vm_tm_memo_plain(tm, addr, s->nw, s->wr);
  return s->acc != VM_TM_ACC_EXACT || s->addr == addr;
}

static inline bool vm_tm_memo_matches(const struct vm_tm *tm, const struct vm_tm_memo_step *s,
                           const struct vm_tm_insn *in)
{
  return vm_tm_memo_matches_ex(tm, s, in->pc, in->next_pc,
                               vm_tm_memo_ex(in->executed, in->extra), in->addr);
}

/* After vm_tm_memo_replay failed for an executed step without extra
 * cycles: when the replay stopped matching inside its run and the run's
 * fork (the way it went the last time it went otherwise there) matches,
 * go on replaying the fork, as vm_tm_step would, and return its first
 * step's cycles; else -1, nothing changed (tm_memo.c). */
int vm_tm_memo_fork(struct vm_tm *tm, uint32_t pc, uint32_t next, uint32_t addr);

/* The step at pc going to next (executed or not, its operand-dependent
 * cycles, first data address addr) when it is the next step of a replay or
 * the first of the run linked to the one that ended: its cycles; else -1
 * (vm_tm_step). */
static inline int vm_tm_memo_replay(struct vm_tm *tm, uint32_t pc, uint32_t next, bool executed,
                                    uint8_t extra, uint32_t addr)
{
  struct vm_tm_memo *m = tm->memo;
  if (__builtin_expect(!m || !m->cur, 0))
    return -1;
  const uint16_t ex = vm_tm_memo_ex(executed, extra);
  const struct vm_tm_memo_step *s = m->s;
  if (s == m->end) { /* on to the run linked to this one */
    const struct vm_tm_memo_run *r = m->cur;
    unsigned k = 0;
    struct vm_tm_memo_run *l = r->link[0];
    if (!l || l->step[0].next != next || l->step[0].ex != ex)
      l = r->link[k = 1];
    if (!l || l->ver != r->link_ver[k] || l->gen != m->gen || l->epoch != tm->tag_epoch)
      return -1;
    s = &l->step[0];
    if (s->pc != pc || s->next != next || s->ex != ex)
      return -1;
    m->cur = l;
    m->end = &l->step[l->n];
  } else if (s->pc != pc || s->next != next || s->ex != ex) {
    return -1;
  }
  if (s->acc == VM_TM_ACC_PLAIN ? !vm_tm_memo_plain(tm, addr, s->nw, s->wr)
                                : s->acc == VM_TM_ACC_EXACT && s->addr != addr) {
    m->s = s; /* (a hop to a linked run: replaying stops before its first step) */
    return -1;
  }
  m->s = s + 1;
  tm->now += s->cycles;
  tm->dpc = next;
  return s->cycles;
}

#endif
