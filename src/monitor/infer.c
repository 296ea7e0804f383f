/* Executions and nesting from PC-polling changes and the static call graph
 * (monitor.h; AVEKSHA section 4.4, Figures 13-14). A stack of open
 * executions; for a change to g with f on top:
 *   g on the stack          return(s) to g
 *   f calls g               a call: push g
 *   g is a handler          a preemption: push g
 *   some caller below f calls g   f returned unseen, then the call: pop, push
 *   f calls x, x calls g    x ran unseen between two polls: push x (inferred), g
 *   otherwise               unexplained: the stack restarts at g
 * Open executions end at the next change that pops them or at end_cycle. */
#include "monitor_internal.h"

#include <stdlib.h>
#include <string.h>

struct ist {
  struct sonde_mon_infer *out;
  size_t cap;
  size_t *stack; /* indices into out->execs */
  size_t depth, scap;
  int err;
};

static void push(struct ist *s, int32_t f, uint64_t t, bool inferred)
{
  struct sonde_mon_infer *o = s->out;
  if (s->err)
    return;
  if (mon_grow((void **)&o->execs, &s->cap, o->nexecs, sizeof *o->execs) < 0 ||
      mon_grow((void **)&s->stack, &s->scap, s->depth, sizeof *s->stack) < 0) {
    s->err = SONDE_E_NOMEM;
    return;
  }
  struct sonde_mon_exec *e = &o->execs[o->nexecs];
  e->func = f;
  e->depth = (uint32_t)s->depth;
  e->start = e->end = t;
  e->inferred = inferred;
  s->stack[s->depth++] = o->nexecs++;
}

static void pop_to(struct ist *s, size_t depth, uint64_t t)
{
  while (s->depth > depth)
    s->out->execs[s->stack[--s->depth]].end = t;
}

static int32_t top(const struct ist *s)
{
  return s->depth ? s->out->execs[s->stack[s->depth - 1]].func : -1;
}

/* A function x with f -> x -> g, or -1. */
static long via(const struct sonde_mon_ftab *ft, int32_t f, int32_t g)
{
  if (f < 0 || g < 0)
    return -1;
  uint64_t lo = (uint64_t)(uint32_t)f << 32;
  size_t a = 0, b = ft->nedges;
  while (a < b) {
    size_t m = (a + b) / 2;
    if (ft->edges[m] < lo)
      a = m + 1;
    else
      b = m;
  }
  for (size_t i = a; i < ft->nedges && (ft->edges[i] >> 32) == (uint32_t)f; i++) {
    size_t x = (size_t)(uint32_t)ft->edges[i];
    if (sonde_mon_ftab_calls(ft, x, (size_t)g))
      return (long)x;
  }
  return -1;
}

int sonde_mon_infer_run(const struct sonde_mon_ftab *ft, const struct sonde_mon_change *ch,
                        size_t n, uint64_t end_cycle, struct sonde_mon_infer *out)
{
  memset(out, 0, sizeof *out);
  struct ist s;
  memset(&s, 0, sizeof s);
  s.out = out;
  for (size_t i = 0; i < n && !s.err; i++) {
    int32_t g = ch[i].func;
    uint64_t t = ch[i].cycle;
    int32_t f = top(&s);
    if (!s.depth) {
      push(&s, g, t, false);
      continue;
    }
    if (g == f)
      continue;
    size_t k = s.depth;
    while (k > 0 && out->execs[s.stack[k - 1]].func != g)
      k--;
    if (k > 0) { /* g is on the stack */
      pop_to(&s, k, t);
      out->returns++;
      continue;
    }
    if (f >= 0 && g >= 0 && sonde_mon_ftab_calls(ft, (size_t)f, (size_t)g)) {
      push(&s, g, t, false);
      out->calls++;
      continue;
    }
    if (g >= 0 && ft->f[g].handler) {
      push(&s, g, t, false);
      out->preemptions++;
      continue;
    }
    size_t d = s.depth - 1;
    while (d > 0) {
      int32_t c = out->execs[s.stack[d - 1]].func;
      if (c >= 0 && g >= 0 && sonde_mon_ftab_calls(ft, (size_t)c, (size_t)g))
        break;
      d--;
    }
    if (d > 0) { /* returned unseen to the caller at depth d-1, which called g */
      pop_to(&s, d, t);
      push(&s, g, t, false);
      out->returns++;
      out->calls++;
      continue;
    }
    long x = via(ft, f, g);
    if (x >= 0) {
      push(&s, (int32_t)x, t, true);
      push(&s, g, t, false);
      out->inferred++;
      out->calls += 2;
      continue;
    }
    pop_to(&s, 0, t);
    push(&s, g, t, false);
    out->unexplained++;
  }
  pop_to(&s, 0, end_cycle);
  free(s.stack);
  if (s.err) {
    sonde_mon_infer_free(out);
    return s.err;
  }
  return 0;
}

void sonde_mon_infer_free(struct sonde_mon_infer *inf)
{
  if (!inf)
    return;
  free(inf->execs);
  inf->execs = NULL;
  inf->nexecs = 0;
}
