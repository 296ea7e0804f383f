/* The deepest call chain of an MTB history (include/sonde/mtb.h): calls (BL,
 * BLX) and exception entries push a frame, returns (POP/LDM with pc, BX lr,
 * LDR pc) and exception returns pop one. A pop with no frame seen in the
 * window reveals a frame that was live when the window began: the function
 * returned from, and its caller (the return's destination). So a window that
 * only shows a recursion unwinding still says how deep it went. */
#include <stdlib.h>
#include <string.h>

#include "sonde/mtb.h"

enum { NONE, CALL, RETURN };

static int classify(struct sonde_sym *sym, uint32_t pc)
{
  struct sonde_sym_insn in;
  if (sonde_sym_disasm(sym, pc, &in) < 0)
    return NONE;
  const char *m = in.mnemonic, *o = in.operands;
  if (!strncmp(m, "bl", 2) && (m[2] == 0 || m[2] == 'x' || m[2] == '.'))
    return CALL;
  bool pc_dst = strstr(o, "pc") != NULL;
  if ((!strncmp(m, "pop", 3) || !strncmp(m, "ldm", 3)) && pc_dst)
    return RETURN;
  if (!strncmp(m, "bx", 2) && !strcmp(o, "lr"))
    return RETURN;
  if (!strncmp(m, "ldr", 3) && !strncmp(o, "pc,", 3))
    return RETURN;
  return NONE;
}

static uint32_t func_of(const struct sonde_sym *sym, uint32_t pc)
{
  struct sonde_sym_func f;
  return sonde_sym_lookup(sym, pc, &f, NULL) >= 0 ? f.start : pc;
}

struct vec {
  uint32_t *v;
  size_t n, cap;
};

static bool vpush(struct vec *a, uint32_t x)
{
  if (a->n == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 64;
    uint32_t *p = realloc(a->v, cap * sizeof *p);
    if (!p)
      return false;
    a->v = p;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return true;
}

int sonde_mtb_deepest_chain(const struct sonde_mtb_history *h, struct sonde_sym *sym,
                            struct sonde_mtb_chain *out)
{
  if (!h || !out)
    return SONDE_E_ARG;
  memset(out, 0, sizeof *out);
  size_t first = 0;
  while (first < h->n && h->ev[first].kind != SONDE_MTB_INSN)
    first++;
  if (first == h->n)
    return 0;
  /* pre: the frames live at the window's start, innermost first (the first
   * instruction's function, then the callers the pops reveal); known: frames
   * pushed inside the window. */
  struct vec pre = {0}, known = {0}, best = {0};
  bool ok = vpush(&pre, func_of(sym, h->ev[first].pc));
  size_t popped = 0;                /* pre frames popped so far */
  long depth = 0, best_depth = 0;   /* known.n - popped, relative to the start */
  size_t best_popped = 0;
  for (size_t i = first; ok && i < h->n; i++) {
    const struct sonde_mtb_event *e = &h->ev[i];
    int what = NONE;
    if (e->kind == SONDE_MTB_BRANCH)
      what = classify(sym, e->pc);
    else if (e->kind == SONDE_MTB_EXC_ENTRY)
      what = CALL;
    else if (e->kind == SONDE_MTB_EXC_RETURN)
      what = e->tail_chain ? NONE : RETURN;
    else if (e->kind == SONDE_MTB_SESSION || e->kind == SONDE_MTB_GAP)
      break; /* not contiguous: stop at the first break */
    if (what == CALL) {
      ok = vpush(&known, func_of(sym, e->dst));
    } else if (what == RETURN) {
      if (known.n) {
        known.n--;
      } else {
        popped++;
        if (popped == pre.n) /* reveals the caller */
          ok = vpush(&pre, func_of(sym, e->dst));
      }
    } else if (e->kind == SONDE_MTB_EXC_RETURN && e->tail_chain && known.n) {
      known.v[known.n - 1] = func_of(sym, e->dst);
    }
    depth = (long)known.n - (long)popped;
    if (depth > best_depth) {
      best_depth = depth;
      best_popped = popped;
      best.n = 0;
      for (size_t k = 0; ok && k < known.n; k++)
        ok = vpush(&best, known.v[k]);
    }
  }
  /* The chain at the deepest point, outermost first: the pre frames not yet
   * popped then (outermost revealed first), then the window's own frames. */
  struct vec chain = {0};
  for (size_t k = pre.n; ok && k-- > best_popped;)
    ok = vpush(&chain, pre.v[k]);
  for (size_t k = 0; ok && k < best.n; k++)
    ok = vpush(&chain, best.v[k]);
  free(pre.v);
  free(known.v);
  free(best.v);
  if (!ok) {
    free(chain.v);
    return SONDE_E_NOMEM;
  }
  out->fn = chain.v;
  out->n = chain.n;
  return 0;
}

void sonde_mtb_chain_free(struct sonde_mtb_chain *c)
{
  if (!c)
    return;
  free(c->fn);
  memset(c, 0, sizeof *c);
}
