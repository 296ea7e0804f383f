/* The timing model's memo (tm.h): the model's answers for runs of steps,
 * replayed instead of modelled when they repeat, with not one cycle
 * different (docs/vm.md, "Memory-system timing").
 *
 * A run is the steps from where the last one ended to the next branch (a
 * taken one, a conditional one, an IT) or VM_TM_MEMO_LEN steps. It is keyed by the
 * model's state at its start, relative to `now` and canonical (struct
 * vm_tm_memo_state, tm_memo.h): the model compares cycles only with each other, so two states
 * whose words are equal time every future step the same. A run replays while
 * each step's facts match the recorded ones: its PC, where it went, executed
 * or not, its operand-dependent cycles, and the class of its data accesses
 * (system-bus words with the default latency, else the exact address). Each
 * recorded step keeps the state after it, so a replay that stops matching
 * (or anyone else looking at the model: vm_tm_memo_sync) restores the state
 * of the step it stopped at; at the run's end the last state is restored.
 *
 * What a state does not hold: the cache tags. A run is recorded only when
 * every cache lookup in it hit (a miss changes the tags and the round-robin
 * pointer), noting the lines; it replays only while they are all there
 * (hits change nothing). The code the steps read (their halfwords, the next
 * instruction's) is taken as fixed: a write to it forgets every run
 * (vm_tm_memo_code_written, from the bus's code-write watch).
 *
 * Invariants: at most one of cur (replaying) and rec (recording) is set; a
 * run being recorded has gen 0, so no lookup finds it. */
#include <stdlib.h>
#include <string.h>

#include "sonde/common.h"
#include "tm_memo.h"

#define MIN_NOW 1024u   /* the model's 0-means-never cycles are long gone */
#define REL_MAX (1 << 30)
/* counts for tuning: build with -DTM_MEMO_STATS, run with TMSTAT set */
#ifdef TM_MEMO_STATS
#include <stdio.h>
static unsigned long long st_rep, st_rec, st_start, st_hit, st_div, st_abort, st_nosave;
#define STAT(X) (X)
#else
#define STAT(X) ((void)0)
#endif

int vm_tm_memo_new(struct vm_tm *tm)
{
  struct vm_tm_memo *m = calloc(1, sizeof *m);
  if (!m)
    return SONDE_E_NOMEM;
  m->run = calloc(2 * VM_TM_MEMO_SETS, sizeof *m->run); /* pages touched as runs are recorded */
  if (!m->run) {
    free(m);
    return SONDE_E_NOMEM;
  }
  m->gen = 1;
  m->lo = UINT32_MAX;
  tm->memo = m;
  return 0;
}

void vm_tm_memo_free(struct vm_tm *tm)
{
  if (!tm->memo)
    return;
#ifdef TM_MEMO_STATS
  if (getenv("TMSTAT"))
    fprintf(stderr, "memo: replayed %llu recorded %llu starts %llu found %llu diverged %llu aborted %llu unkeyed %llu\n",
            st_rep, st_rec, st_start, st_hit, st_div, st_abort, st_nosave);
#endif
  free(tm->memo->run);
  free(tm->memo);
  tm->memo = NULL;
  tm->rec_on = false;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

static bool rel(uint64_t t, uint64_t now, uint32_t *out)
{
  int64_t d = (int64_t)(t - now);
  if (d <= -REL_MAX || d >= REL_MAX)
    return false;
  *out = (uint32_t)(int32_t)d;
  return true;
}

/* The state at tm->now, before the step at pc; false when it cannot be
 * memoized (too early, or a cycle too far from now). */
static bool save(const struct vm_tm *tm, struct vm_tm_memo_state *s, uint32_t pc)
{
  const uint64_t now = tm->now;
  if (now < MIN_NOW)
    return false;
  const uint64_t lo = tm->f_issue < now - 3 ? tm->f_issue : now - 3;
  s->k[0] = pc;
  s->k[1] = tm->fa;
  s->k[2] = tm->qn ? tm->qbase : 0;
  s->k[3] = tm->lb_line;
  s->k[4] = tm->last_cline;
  if (!rel(tm->f_issue, now, &s->k[5]) || !rel(max64(tm->port_free, lo + 1), now, &s->k[6]) ||
      !rel(max64(tm->sbus_free, lo + 1), now, &s->k[7]) ||
      !rel(max64(tm->wb_until, lo), now, &s->k[8]))
    return false;
  s->k[9] = tm->qn | (uint32_t)tm->last_miss << 8 | (uint32_t)tm->mode << 16 |
            (uint32_t)tm->fold_it << 24;
  for (unsigned i = 0; i < 8; i++)
    s->k[10 + i] = 0;
  for (unsigned i = 0; i < tm->qn; i++)
    if (!rel(max64(tm->qt[((tm->qbase >> 2) + i) & 7], now - 2), now, &s->k[10 + i]))
      return false;
  s->k[18] = tm->prev_ls | (uint32_t)tm->prev_ld_rd << 8;
  return true;
}

static uint64_t abs_at(uint64_t now, uint32_t r)
{
  return now + (uint64_t)(int64_t)(int32_t)r;
}

/* Restore a saved state at tm->now (now and dpc stay). */
static void load(struct vm_tm *tm, const struct vm_tm_memo_state *s)
{
  const uint64_t now = tm->now;
  tm->fa = s->k[1];
  tm->qbase = s->k[2];
  tm->lb_line = s->k[3];
  tm->last_cline = s->k[4];
  tm->f_issue = abs_at(now, s->k[5]);
  tm->port_free = abs_at(now, s->k[6]);
  tm->sbus_free = abs_at(now, s->k[7]);
  tm->wb_until = abs_at(now, s->k[8]);
  tm->qn = s->k[9] & 0xFF;
  tm->last_miss = (s->k[9] >> 8) & 1;
  tm->mode = (uint8_t)(s->k[9] >> 16);
  tm->cache_on = tm->cfg.cache && tm->mode == 1;
  tm->fold_it = (s->k[9] >> 24) & 1;
  for (unsigned i = 0; i < tm->qn; i++)
    tm->qt[((tm->qbase >> 2) + i) & 7] = abs_at(now, s->k[10 + i]);
  tm->prev_ls = s->k[18] & 1;
  tm->prev_ld_rd = (uint8_t)(s->k[18] >> 8);
}

/* Data words of an executed instruction as vm_tm_step_model accesses them. */
static unsigned access_words(const struct vm_insn *d, bool *wr)
{
  *wr = false;
  switch (d->op) {
  case VM_OP_ST: case VM_OP_STREX: case VM_OP_STL: case VM_OP_STLEX:
    *wr = true;
    return 1;
  case VM_OP_LD: case VM_OP_LDREX: case VM_OP_LDA: case VM_OP_LDAEX:
  case VM_OP_TBB: case VM_OP_TBH:
    return 1;
  case VM_OP_STM:
    *wr = true;
    return (unsigned)__builtin_popcount(d->imm);
  case VM_OP_LDM:
    return (unsigned)__builtin_popcount(d->imm);
  case VM_OP_STRD:
    *wr = true;
    return 2;
  case VM_OP_LDRD:
    return 2;
  default:
    return 0;
  }
}

/* A replay stops before step i: the state after step i - 1. */
static void materialize(struct vm_tm *tm)
{
  struct vm_tm_memo *m = tm->memo;
  load(tm, m->s > m->cur->step ? &m->s[-1].after : &m->cur->key);
  m->cur = NULL;
}

static void end_recording(struct vm_tm *tm, bool keep)
{
  struct vm_tm_memo *m = tm->memo;
  struct vm_tm_memo_run *r = m->rec;
  m->rec = NULL;
  tm->rec_on = false;
  if (!keep || !r->n)
    return;
  r->nlines = tm->rec_nlines;
  memcpy(r->lines, tm->rec_lines, sizeof r->lines);
  r->epoch = tm->tag_epoch; /* no lookup missed since they hit */
  r->gen = m->gen;
}

void vm_tm_memo_sync(struct vm_tm *tm)
{
  struct vm_tm_memo *m = tm->memo;
  if (m->cur)
    materialize(tm);
  if (m->rec)
    end_recording(tm, true);
}

void vm_tm_memo_code_written(struct vm_tm *tm, uint32_t addr, unsigned size)
{
  struct vm_tm_memo *m = tm->memo;
  if (!m || addr >= m->hi || (uint64_t)addr + size <= m->lo)
    return;
  if (m->cur)
    materialize(tm);
  if (m->rec)
    end_recording(tm, false); /* it read the old code */
  if (++m->gen == 0)
    m->gen = 1; /* (after 4 G flushes a stale run could match again: clear them) */
  if (m->gen == 1)
    memset(m->run, 0, 2 * VM_TM_MEMO_SETS * sizeof *m->run);
  m->lo = UINT32_MAX;
  m->hi = 0;
}

static unsigned record(struct vm_tm *tm, const struct vm_tm_insn *in)
{
  struct vm_tm_memo *m = tm->memo;
  struct vm_tm_memo_run *r = m->rec;
  bool wr = false;
  unsigned nw = in->executed ? access_words(in->d, &wr) : 0;
  uint8_t acc = VM_TM_ACC_NONE;
  if (nw) {
    if (vm_tm_memo_plain(tm, in->addr, nw, wr))
      acc = VM_TM_ACC_PLAIN;
    else if (wr && tm->cfg.cache && tm->cfg.cache_ctl - in->addr < 4u * nw)
      acc = VM_TM_ACC_NO; /* the cache's mode changes: not memoized */
    else
      acc = VM_TM_ACC_EXACT;
  }
  if (acc == VM_TM_ACC_NO) {
    end_recording(tm, true);
    return vm_tm_step_model(tm, in);
  }
  unsigned cycles = vm_tm_step_model(tm, in);
  STAT(st_rec++);
  struct vm_tm_memo_step *s = &r->step[r->n];
  if (tm->rec_bad || cycles > 0xFFFF || !save(tm, &s->after, 0)) {
    STAT(st_abort++);
    end_recording(tm, false);
    return cycles;
  }
  s->pc = in->pc;
  s->next = in->next_pc;
  s->addr = in->addr;
  s->cycles = (uint16_t)cycles;
  s->ex = vm_tm_memo_ex(in->executed, in->extra);
  s->acc = acc;
  s->nw = (uint8_t)nw;
  s->wr = wr;
  r->n++;
  /* the code it read: its halfwords and the one after, and the next
   * instruction's */
  const uint32_t a = in->pc < in->next_pc ? in->pc : in->next_pc;
  const uint32_t b = in->pc + 6 > in->next_pc + 4 ? in->pc + 6 : in->next_pc + 4;
  if (a < m->lo)
    m->lo = a;
  if (b > m->hi)
    m->hi = b < a ? UINT32_MAX : b;
  const uint8_t op = in->d->op;
  if (r->n == VM_TM_MEMO_LEN || in->next_pc != in->pc + in->d->len || op == VM_OP_CBZ ||
      op == VM_OP_CBNZ || op == VM_OP_IT || (op == VM_OP_B && in->d->cond != 14))
    end_recording(tm, true);
  return cycles;
}

static inline bool lines_there(const struct vm_tm *tm, struct vm_tm_memo_run *r)
{
  if (r->epoch == tm->tag_epoch)
    return true;
  for (unsigned i = 0; i < r->nlines; i++)
    if (!vm_tm_cache_has(tm, r->lines[i]))
      return false;
  r->epoch = tm->tag_epoch;
  return true;
}

static void set_link(struct vm_tm_memo_run *from, struct vm_tm_memo_run *r)
{
  if (from->link[0] == r && from->link_ver[0] == r->ver)
    return;
  from->link[1] = from->link[0];
  from->link_ver[1] = from->link_ver[0];
  from->link[0] = r;
  from->link_ver[0] = r->ver;
}

/* The fork of `from` at step `at` is r (see struct vm_tm_memo_run). */
static void set_fork(struct vm_tm_memo_run *from, unsigned at, struct vm_tm_memo_run *r)
{
  from->fork = r;
  from->fork_ver = r->ver;
  from->fork_at = (uint8_t)at;
}

/* No run going: find one for this state and step, or record one; `from`:
 * the run that just ended in this state (it links to the one found);
 * `div`: the run whose replay stopped matching at its step div_at, in
 * this state (its fork is the one found). */
static unsigned start(struct vm_tm *tm, const struct vm_tm_insn *in, struct vm_tm_memo_run *from,
                      struct vm_tm_memo_run *div, unsigned div_at)
{
  struct vm_tm_memo *m = tm->memo;
  struct vm_tm_memo_state key;
  STAT(st_start++);
  if (!save(tm, &key, in->pc)) {
    STAT(st_nosave++);
    return vm_tm_step_model(tm, in);
  }
  uint32_t h = 0;
  for (unsigned i = 0; i < 11; i++)
    h = (h ^ key.k[i]) * 0x9E3779B1u;
  struct vm_tm_memo_run *set = &m->run[2 * ((h >> 16) & (VM_TM_MEMO_SETS - 1))];
  m->tick++;
  for (unsigned w = 0; w < 2; w++) {
    struct vm_tm_memo_run *r = &set[w];
    if (r->gen == m->gen && !memcmp(r->key.k, key.k, VM_TM_MEMO_KEYW * sizeof key.k[0]) &&
        vm_tm_memo_matches(tm, &r->step[0], in) && lines_there(tm, r)) {
      r->stamp = m->tick;
      STAT(st_hit++);
      if (from)
        set_link(from, r);
      if (div)
        set_fork(div, div_at, r);
      const struct vm_tm_memo_step *s = &r->step[0];
      tm->now += s->cycles;
      tm->dpc = in->next_pc;
      m->cur = r;
      m->s = &r->step[1];
      m->end = &r->step[r->n];
      return s->cycles;
    }
  }
  struct vm_tm_memo_run *r = set[0].gen != m->gen                 ? &set[0]
                       : set[1].gen != m->gen               ? &set[1]
                       : (int32_t)(set[0].stamp - set[1].stamp) < 0 ? &set[0]
                                                             : &set[1];
  r->gen = 0;
  r->ver++;
  r->link[0] = r->link[1] = NULL;
  r->fork = NULL;
  r->stamp = m->tick;
  r->key = key;
  r->n = 0;
  if (from && from != r) /* (from's slot taken for this run: its link would claim
                          * that this run's key is its own last state) */
    set_link(from, r);
  if (div && div != r) /* (the same: as for from) */
    set_fork(div, div_at, r);
  m->rec = r;
  tm->rec_on = true;
  tm->rec_bad = false;
  tm->rec_nlines = 0;
  return record(tm, in);
}

static __attribute__((noinline)) unsigned step_slow(struct vm_tm *tm, const struct vm_tm_insn *in)
{
  struct vm_tm_memo *m = tm->memo;
  if (!m)
    return vm_tm_step_model(tm, in);
  struct vm_tm_memo_run *from = NULL, *div = NULL;
  unsigned div_at = 0;
  if (m->cur) {
    struct vm_tm_memo_run *r = m->cur;
    if (m->s == m->end) { /* at the end of r: on to the run that came next last time */
      from = r;
      for (unsigned k = 0; k < 2; k++) {
        struct vm_tm_memo_run *l = r->link[k];
        if (l && l->ver == r->link_ver[k] && l->gen == m->gen &&
            vm_tm_memo_matches(tm, &l->step[0], in) && lines_there(tm, l)) {
          l->stamp = m->tick;
          m->cur = r = l;
          m->s = &l->step[0];
          m->end = &l->step[l->n];
          from = NULL;
          break;
        }
      }
    }
    if (!from) {
      const struct vm_tm_memo_step *s = m->s;
      if (vm_tm_memo_matches(tm, s, in)) {
        STAT(st_rep++);
        tm->now += s->cycles;
        tm->dpc = in->next_pc;
        m->s++;
        return s->cycles;
      }
      STAT(st_div++);
      /* where it went the last time it went otherwise here: the fork */
      div = r;
      div_at = (unsigned)(s - r->step);
      struct vm_tm_memo_run *f = r->fork;
      if (f && r->fork_at == div_at && f->ver == r->fork_ver && f->gen == m->gen &&
          vm_tm_memo_matches(tm, &f->step[0], in) && lines_there(tm, f)) {
        f->stamp = m->tick;
        m->cur = f;
        m->s = &f->step[1];
        m->end = &f->step[f->n];
        tm->now += f->step[0].cycles;
        tm->dpc = in->next_pc;
        return f->step[0].cycles;
      }
    }
    materialize(tm);
  }
  if (m->rec)
    return record(tm, in);
  return start(tm, in, from, div, div_at);
}

int vm_tm_memo_fork(struct vm_tm *tm, uint32_t pc, uint32_t next, uint32_t addr)
{
  /* step_slow's case of a replay that stopped matching inside its run
   * (vm_tm_memo_replay, which failed there, left the state as it was or
   * hopped to the linked run it failed in) when the fork matches, in its
   * order; any other case is left to step_slow with nothing changed
   * (lines_there changes a run only when it returns true) */
  struct vm_tm_memo *m = tm->memo;
  if (!m || !m->cur || m->s == m->end)
    return -1;
  struct vm_tm_memo_run *r = m->cur;
  const uint16_t ex = vm_tm_memo_ex(true, 0);
  if (vm_tm_memo_matches_ex(tm, m->s, pc, next, ex, addr)) /* (a replay: step_slow's) */
    return -1;
  struct vm_tm_memo_run *f = r->fork;
  if (!f || r->fork_at != (unsigned)(m->s - r->step) || f->ver != r->fork_ver ||
      f->gen != m->gen || !vm_tm_memo_matches_ex(tm, &f->step[0], pc, next, ex, addr) ||
      !lines_there(tm, f))
    return -1;
  STAT(st_div++);
  f->stamp = m->tick;
  m->cur = f;
  m->s = &f->step[1];
  m->end = &f->step[f->n];
  tm->now += f->step[0].cycles;
  tm->dpc = next;
  return f->step[0].cycles;
}

unsigned vm_tm_step(struct vm_tm *tm, const struct vm_tm_insn *in)
{
  const int c = vm_tm_memo_replay(tm, in->pc, in->next_pc, in->executed, in->extra, in->addr);
  return c >= 0 ? (unsigned)c : step_slow(tm, in);
}
