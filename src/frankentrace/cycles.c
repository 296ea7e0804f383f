/* `sonde cycles compare`: the VM's timing model (src/vm/tm.h) driven by a
 * recorded PC trace (and LSU trace), instruction by instruction, against the
 * trace's own durations. See include/sonde/cycles.h. */
#include "sonde/cycles.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm/decode.h"
#include "vm/machine.h"
#include "vm/tm.h"
#include "cycles_regs.h"

enum cls { C_ALU, C_LOAD, C_STORE, C_LDM, C_BR_TAKEN, C_BR_NOT, C_CALL, C_MUL, C_OTHER };
static const char *const cls_names[SONDE_CYCLES_CLASSES] = {
    "data processing", "load",      "store", "ldm/stm/push/pop", "branch taken",
    "branch not taken", "bl/bx/blx", "mul/div", "other"};
static const char *const mode_names[SONDE_CYCLES_MODES] = {"vims gpram (line buffer)", "vims cache",
                                                           "no cache", "vims off (line buffer)"};

/* One instruction of the trace: a run of cycles with one PC. */
struct run {
  uint64_t cycle, n;
  uint32_t pc;
  bool complete;  /* both neighbours are instructions right next to it */
  bool left_out;  /* near an impossible transition, an exception, ... */
  uint8_t why;    /* 1 impossible, 2 exception, 3 incomplete, 4 no code, 5 operands unknown */
};

/* Per-PC data addresses from the LSU trace, in the order of the PC's
 * executions (one run of the capture: the one with the most transfers of it). */
struct pcaddr {
  uint32_t pc;
  uint32_t *addr, *val;
  size_t n, cap, next;
  uint32_t run;
  bool used;
  unsigned words, left; /* words per execution (LDM/STM...), words left of this one */
};

struct lsu_map {
  struct pcaddr *e;
  size_t cap; /* power of two, open addressing */
};

static struct pcaddr *lsu_slot(struct lsu_map *m, uint32_t pc, bool add)
{
  size_t i = (pc * 2654435761u) & (m->cap - 1);
  while (m->e[i].used) {
    if (m->e[i].pc == pc)
      return &m->e[i];
    i = (i + 1) & (m->cap - 1);
  }
  if (!add)
    return NULL;
  m->e[i].pc = pc;
  m->e[i].used = true;
  return &m->e[i];
}

static bool decode_at(struct sonde_sym *sym, uint32_t pc, struct vm_insn *d);

static int lsu_build(struct lsu_map *m, const struct sonde_ft_xfer *x, size_t n,
                     struct sonde_sym *sym)
{
  m->cap = 1024;
  while (m->cap < 4 * n + 16 && m->cap < (1u << 22))
    m->cap *= 2;
  m->e = calloc(m->cap, sizeof *m->e);
  if (!m->e)
    return SONDE_E_NOMEM;
  for (size_t i = 0; i < n; i++) {
    if (x[i].gap || x[i].pc == 0xFFFFFFFFu)
      continue;
    struct pcaddr *p = lsu_slot(m, x[i].pc, true);
    if (!p->addr) {
      struct vm_insn d;
      p->words = 1;
      if (decode_at(sym, x[i].pc, &d)) {
        if (d.op == VM_OP_LDM || d.op == VM_OP_STM)
          p->words = (unsigned)__builtin_popcount(d.imm);
        else if (d.op == VM_OP_LDRD || d.op == VM_OP_STRD)
          p->words = 2;
      }
      p->cap = 16;
      p->addr = malloc(p->cap * sizeof *p->addr);
      p->val = malloc(p->cap * sizeof *p->val);
      if (!p->addr || !p->val)
        return SONDE_E_NOMEM;
      p->run = x[i].run;
    }
    /* the first run of the capture that has this PC: its executions in order */
    if (x[i].run != p->run)
      continue;
    if (p->left) { /* another word of the same execution: keep the lowest address */
      p->left--;
      if (x[i].addr < p->addr[p->n - 1])
        p->addr[p->n - 1] = x[i].addr;
      continue;
    }
    p->left = p->words ? p->words - 1 : 0;
    if (p->n == p->cap) {
      p->cap *= 2;
      uint32_t *a = realloc(p->addr, p->cap * sizeof *p->addr);
      if (a)
        p->addr = a;
      uint32_t *v = realloc(p->val, p->cap * sizeof *p->val);
      if (v)
        p->val = v;
      if (!a || !v)
        return SONDE_E_NOMEM;
    }
    p->addr[p->n] = x[i].addr;
    p->val[p->n] = x[i].value;
    p->n++;
  }
  return 0;
}

static void lsu_free(struct lsu_map *m)
{
  if (!m->e)
    return;
  for (size_t i = 0; i < m->cap; i++) {
    free(m->e[i].addr);
    free(m->e[i].val);
  }
  free(m->e);
}

static uint16_t sym_read16(void *ctx, uint32_t addr)
{
  uint16_t hw = 0;
  if (sonde_sym_read(ctx, addr, &hw, 2))
    return 0;
  return hw;
}

static bool decode_at(struct sonde_sym *sym, uint32_t pc, struct vm_insn *d)
{
  static const struct vm_decode_features f = {true, false, false, false};
  uint16_t hw[2] = {0, 0};
  if (sonde_sym_read(sym, pc, &hw[0], 2))
    return false;
  if (vm_thumb_is32(hw[0]) && sonde_sym_read(sym, pc + 2, &hw[1], 2))
    return false;
  vm_decode(&f, hw[0], hw[1], d);
  return d->op != VM_OP_UNDEF;
}

static enum cls classify(const struct vm_insn *d, bool taken)
{
  switch (d->op) {
  case VM_OP_LD: case VM_OP_LDREX: case VM_OP_LDA: case VM_OP_LDAEX: case VM_OP_LDRD:
  case VM_OP_TBB: case VM_OP_TBH:
    return C_LOAD;
  case VM_OP_ST: case VM_OP_STREX: case VM_OP_STL: case VM_OP_STLEX: case VM_OP_STRD:
    return C_STORE;
  case VM_OP_LDM: case VM_OP_STM:
    return C_LDM;
  case VM_OP_B: case VM_OP_CBZ: case VM_OP_CBNZ:
    return taken ? C_BR_TAKEN : C_BR_NOT;
  case VM_OP_BL: case VM_OP_BX: case VM_OP_BLX:
    return C_CALL;
  case VM_OP_MUL: case VM_OP_MLA: case VM_OP_MLS: case VM_OP_UMULL: case VM_OP_SMULL:
  case VM_OP_UMLAL: case VM_OP_SMLAL: case VM_OP_SDIV: case VM_OP_UDIV:
    return C_MUL;
  default:
    if (d->op >= VM_OP_DPI0 || d->op == VM_OP_DP_RSR || d->op == VM_OP_ADR ||
        d->op == VM_OP_MOVT || (d->op >= VM_OP_SSAT && d->op <= VM_OP_EXT))
      return C_ALU;
    return C_OTHER;
  }
}

/* Direct branch target, or 0. */
static uint32_t direct_target(const struct vm_insn *d, uint32_t pc)
{
  if (d->op == VM_OP_B || d->op == VM_OP_BL || d->op == VM_OP_CBZ || d->op == VM_OP_CBNZ)
    return pc + 4 + d->imm;
  return 0;
}

static void read_vectors(struct sonde_sym *sym, uint32_t *vec, unsigned *n)
{
  static const char *const names[] = {"gVectors", "g_pfnVectors", "__isr_vector", "__Vectors",
                                      "vector_table", "_vectors", "vectors", "isr_vector"};
  uint32_t base = 0, size = 0;
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (sonde_sym_address(sym, names[i], &base, &size) == 0)
      break;
  unsigned cnt = size >= 8 ? size / 4 : 256;
  if (cnt > 256)
    cnt = 256;
  *n = 0;
  for (unsigned i = 1; i < cnt; i++) {
    uint32_t w;
    if (sonde_sym_read(sym, base + 4 * i, &w, 4) != 0)
      break;
    if ((w & 1) && sonde_sym_name(sym, w & ~1u, NULL))
      vec[(*n)++] = w & ~1u;
  }
}

static bool in_list(const uint32_t *v, unsigned n, uint32_t x)
{
  for (unsigned i = 0; i < n; i++)
    if (v[i] == x)
      return true;
  return false;
}

static void add(struct sonde_cycles_group *g, uint64_t obs, unsigned pred)
{
  g->compared++;
  g->exact += obs == pred;
  g->obs += obs;
  g->pred += pred;
}

static int cmp_func(const void *a, const void *b)
{
  const struct sonde_cycles_group *x = a, *y = b;
  return x->obs < y->obs ? 1 : x->obs > y->obs ? -1 : strcmp(x->name, y->name);
}

/* The LSU trace's transfer for the next execution of the load/store at pc. */
static bool lsu_next(struct lsu_map *m, uint32_t pc, uint32_t *addr, uint32_t *val)
{
  struct pcaddr *p = m->e ? lsu_slot(m, pc, false) : NULL;
  if (!p || p->next >= p->n)
    return false;
  *addr = p->addr[p->next];
  *val = p->val[p->next];
  p->next++;
  return true;
}

/* After runs[i] was interrupted (an exception, lost cycles), the first of
 * `a` and `b` the trace comes back to after a break in it: where the
 * interrupted conditional branch went (b when not found). */
static uint32_t resumed_at(const struct run *runs, size_t nr, size_t i, uint32_t a, uint32_t b)
{
  for (size_t k = i + 1; k < nr && k < i + 4096; k++) {
    bool after_break = runs[k].cycle != runs[k - 1].cycle + runs[k - 1].n || k == i + 1;
    if (after_break && (runs[k].pc == a || runs[k].pc == b))
      return runs[k].pc;
  }
  return b;
}

int sonde_cycles_compare(const struct sonde_cycles_opts *o, struct sonde_cycles_result *r,
                         struct sonde_diag *diag)
{
  memset(r, 0, sizeof *r);
  if (!o->machine || !o->sym || !o->trace)
    return sonde_diag_set(diag, SONDE_E_ARG, "cycles compare needs a machine, an ELF and a trace");
  if (!o->machine->tm.on)
    return sonde_diag_set(diag, SONDE_E_ARG,
                          "machine '%s' declares no memory system (no 'memsys' lines): there is "
                          "no timing model to compare",
                          o->machine->name);
  unsigned margin = o->margin ? o->margin : 8;
  /* 1. the runs */
  size_t nr = 0, cap = 1024;
  struct run *runs = malloc(cap * sizeof *runs);
  if (!runs)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  bool prev_pc = false;
  while (sonde_ft_trace_next_span(o->trace, &pos, &sp)) {
    if (sp.cell.state != SONDE_FT_PC) {
      if (nr && prev_pc)
        runs[nr - 1].complete = false;
      prev_pc = false;
      continue;
    }
    if (nr == cap) {
      cap *= 2;
      struct run *nrn = realloc(runs, cap * sizeof *runs);
      if (!nrn) {
        free(runs);
        return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
      }
      runs = nrn;
    }
    runs[nr] = (struct run){sp.cycle, sp.cycles, sp.cell.pc, prev_pc, false, 0};
    nr++;
    prev_pc = true;
  }
  if (nr)
    runs[nr - 1].complete = false;
  r->instructions = nr;
  /* 2. impossible transitions: leave out `margin` instructions around each */
  struct sonde_ft_check_result chk;
  int rc = sonde_ft_check(o->trace, o->sym, 1u << 20, &chk, diag);
  if (rc) {
    free(runs);
    return rc;
  }
  r->impossible = chk.impossible;
  for (size_t b = 0; b < chk.bad_count; b++) {
    size_t lo = 0, hi = nr;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (runs[mid].cycle < chk.bad[b].cycle)
        lo = mid + 1;
      else
        hi = mid;
    }
    size_t from = lo > margin ? lo - margin : 0, to = lo + margin < nr ? lo + margin : nr;
    for (size_t i = from; i < to; i++)
      if (!runs[i].left_out) {
        runs[i].left_out = true;
        runs[i].why = 1;
      }
    if (r->nwhere < SONDE_CYCLES_MAX_WHERE) {
      r->where[r->nwhere].cycle = chk.bad[b].cycle;
      r->where[r->nwhere].from = chk.bad[b].from;
      r->where[r->nwhere].to = chk.bad[b].to;
      snprintf(r->where[r->nwhere].why, sizeof r->where[0].why, "%s", chk.bad[b].why);
      r->nwhere++;
    }
  }
  sonde_ft_check_result_free(&chk);
  /* 3. the model */
  struct lsu_map lm = {0};
  /* an LSU trace whose transfers carry cycles of this trace (Sonde's) is
   * matched by cycle; FrankenTrace's (per-run timestamps) by order */
  bool timed = o->nlsu > 0;
  for (size_t k = 0; k < o->nlsu && timed; k++)
    timed = o->lsu[k].gap || o->lsu[k].cycle != UINT64_MAX;
  size_t lp = 0;
  if (o->lsu && !timed && (rc = lsu_build(&lm, o->lsu, o->nlsu, o->sym))) {
    free(runs);
    lsu_free(&lm);
    return sonde_diag_set(diag, rc, "out of memory");
  }
  struct vm_tm tm;
  if ((rc = vm_tm_init(&tm, &o->machine->tm, nr ? runs[0].pc : 0))) {
    free(runs);
    lsu_free(&lm);
    return sonde_diag_set(diag, rc, "out of memory");
  }
  tm.read16 = sym_read16;
  tm.read_ctx = o->sym;
  uint32_t vec[256];
  unsigned nvec;
  read_vectors(o->sym, vec, &nvec);
  static struct ft_regs regs; /* 40 KiB: not on the stack */
  memset(&regs, 0, sizeof regs);
  uint32_t sp0 = 0;
  if (sonde_sym_read(o->sym, 0, &sp0, 4) == 0 && sp0)
    ft_regs_set_sp(&regs, sp0); /* the initial MSP: only its consistency matters */
  struct {
    uint32_t v[16];
    uint16_t known;
  } saved[16];
  unsigned nsaved = 0;
  uint32_t exc_ret[16][2]; /* where an interrupted instruction went on: next or its target */
  unsigned nexc = 0;
  size_t nfunc = sonde_sym_func_count(o->sym);
  struct sonde_cycles_group *fg = calloc(nfunc + 1, sizeof *fg);
  /* per function and mode: for the two dominant loops */
  uint64_t (*fm)[SONDE_CYCLES_MODES][2] = calloc(nfunc + 1, sizeof *fm);
  unsigned *pred = calloc(nr + 1, sizeof *pred);
  uint8_t *pmode = calloc(nr + 1, 1);
  uint8_t *pcls = calloc(nr + 1, 1);
  long *pfunc = calloc(nr + 1, sizeof *pfunc);
  uint32_t *paddr = calloc(nr + 1, sizeof *paddr);
  if (!fg || !fm || !pred || !pmode || !pcls || !pfunc || !paddr) {
    rc = sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < nr; i++) {
    struct run *ru = &runs[i];
    struct vm_insn d;
    pfunc[i] = sonde_sym_lookup(o->sym, ru->pc, NULL, NULL);
    if (pfunc[i] < 0)
      pfunc[i] = (long)nfunc;
    if (!decode_at(o->sym, ru->pc, &d)) {
      ru->left_out = true;
      ru->why = ru->why ? ru->why : 4;
      if (i + 1 < nr)
        vm_tm_redirect(&tm, runs[i + 1].pc, (unsigned)ru->n);
      ft_regs_clobber_call(&regs); /* a ROM routine (AAPCS) */
      continue;
    }
    bool have_next = i + 1 < nr && runs[i + 1].cycle == ru->cycle + ru->n;
    uint32_t next = i + 1 < nr ? runs[i + 1].pc : ru->pc + d.len;
    uint32_t target = direct_target(&d, ru->pc);
    bool seq = next == ru->pc + d.len || next == ru->pc + d.len + 2;
    bool exc_entry = have_next && !seq && next != target && in_list(vec, nvec, next);
    bool exc_return = have_next && !seq && !exc_entry && nexc &&
                      (exc_ret[nexc - 1][0] == next || exc_ret[nexc - 1][1] == next);
    /* where it went: the next run's PC, unless an exception (or lost
     * cycles) came between: then its own successor, as far as the code
     * says (an unconditional branch's target, else the next instruction) */
    uint32_t went = next;
    if (exc_entry || !have_next) {
      went = target && (d.op == VM_OP_BL || (d.op == VM_OP_B && d.cond == 14)) ? target
                                                                                : ru->pc + d.len;
      if (target && went != target) /* a conditional branch: where the code came back to */
        went = resumed_at(runs, nr, i, target, ru->pc + d.len);
    }
    struct vm_tm_insn in = {&d, ru->pc, went, true, 0, 0, 0, 0};
    bool mem = d.op == VM_OP_LD || d.op == VM_OP_ST || d.op == VM_OP_LDM || d.op == VM_OP_STM ||
               d.op == VM_OP_LDRD || d.op == VM_OP_STRD || d.op == VM_OP_LDREX ||
               d.op == VM_OP_STREX || d.op == VM_OP_TBB || d.op == VM_OP_TBH;
    uint32_t la = 0, lv = 0, ea = 0;
    bool have_lsu = false;
    if (timed && mem) {
      /* an LSU trace with cycles (sonde run --trace-lsu): this execution's
       * first transfer, or none: a conditional one that did not execute */
      while (lp < o->nlsu && (o->lsu[lp].gap || o->lsu[lp].cycle < ru->cycle))
        lp++;
      if (lp < o->nlsu && o->lsu[lp].cycle < ru->cycle + ru->n && o->lsu[lp].pc == ru->pc) {
        have_lsu = true;
        la = o->lsu[lp].addr;
        lv = o->lsu[lp].value;
      } else {
        in.executed = false;
      }
    } else if (mem && !(d.flags & VM_F_LIT)) {
      have_lsu = lsu_next(&lm, ru->pc, &la, &lv);
    }
    uint32_t stval = 0;
    bool kst = (d.op == VM_OP_ST || d.op == VM_OP_STM) && d.op == VM_OP_ST &&
               d.rd < 15 && (regs.known >> d.rd & 1);
    if (kst)
      stval = regs.v[d.rd];
    int extra = ft_regs_extra(&regs, &d);
    if (extra > 0)
      in.extra = (uint8_t)extra;
    if (extra < 0 && !ru->left_out) { /* operand-dependent cycles, operands unknown */
      ru->left_out = true;
      ru->why = 5;
    }
    bool kaddr = in.executed && ft_regs_step(&regs, o->sym, &d, ru->pc, have_lsu, la, lv, &ea);
    if (mem) {
      in.naccess = 1;
      in.addr = kaddr ? ea : 0x20000000u; /* unknown: taken as SRAM (stack, data) */
      in.wdata = have_lsu ? lv : stval;
      paddr[i] = kaddr ? ea : 1;
      r->addr_known += kaddr;
      r->addr_total++;
    }
    pmode[i] = tm.cfg.cache ? tm.mode : 2;
    pcls[i] = (uint8_t)classify(&d, !seq);
    pred[i] = vm_tm_step(&tm, &in);
    if (exc_entry) {
      if (nexc < 16) {
        exc_ret[nexc][0] = ru->pc + d.len;
        exc_ret[nexc][1] = target ? target : ru->pc + d.len;
        nexc++;
      }
      vm_tm_redirect(&tm, next, 12);
      /* the handler runs with other registers; the interrupted code gets
       * its own back at the return */
      if (nsaved < 16) {
        memcpy(saved[nsaved].v, regs.v, sizeof regs.v);
        saved[nsaved].known = regs.known;
        nsaved++;
      }
      uint32_t nsp = regs.v[13] - 32;
      bool ksp = regs.known >> 13 & 1;
      ft_regs_clear(&regs);
      if (ksp)
        ft_regs_set_sp(&regs, nsp);
    }
    if (exc_return) {
      nexc--;
      if (nsaved) {
        nsaved--;
        memcpy(regs.v, saved[nsaved].v, sizeof regs.v);
        regs.known = saved[nsaved].known;
      } else {
        ft_regs_clear(&regs);
      }
    }
    if (exc_entry || exc_return) {
      for (size_t k = i; k <= i + 1 && k < nr; k++)
        if (!runs[k].left_out) {
          runs[k].left_out = true;
          runs[k].why = 2;
        }
    }
    if (!have_next || !ru->complete) {
      if (!ru->left_out) {
        ru->left_out = true;
        ru->why = 3;
      }
      if (i + 1 < nr && !have_next) { /* resynchronise after lost cycles */
        vm_tm_redirect(&tm, runs[i + 1].pc, 0);
        /* the instruction after them (cut too) and the one after it still
         * depend on what the trace could not show: where an interrupted
         * indirect branch went, what the lost cycles fetched */
        if (i + 2 < nr && !runs[i + 2].left_out) {
          runs[i + 2].left_out = true;
          runs[i + 2].why = 3;
        }
      }
      /* lost cycles inside one function (a sampling gap) change nothing we
       * can know of; across functions, a call may have happened */
      if (!have_next && i + 1 < nr &&
          sonde_sym_lookup(o->sym, runs[i + 1].pc, NULL, NULL) != pfunc[i])
        ft_regs_clobber_call(&regs);
    }
  }
  /* 4. statistics */
  for (size_t i = 0; i < nr; i++) {
    struct run *ru = &runs[i];
    if (o->dump) {
      char name[96];
      sonde_sym_format(o->sym, ru->pc, name, sizeof name);
      fprintf(o->dump, "%llu,0x%08x,%s,%s,%s,%llu,%u,%d,", (unsigned long long)ru->cycle, ru->pc,
              name, cls_names[pcls[i]], mode_names[pmode[i]], (unsigned long long)ru->n, pred[i],
              ru->left_out ? ru->why : 0);
      if (paddr[i] == 1)
        fprintf(o->dump, "unknown\n");
      else if (paddr[i] || pcls[i] == C_LOAD || pcls[i] == C_STORE || pcls[i] == C_LDM)
        fprintf(o->dump, "0x%08x\n", paddr[i]);
      else
        fprintf(o->dump, "\n");
    }
    if (ru->left_out) {
      r->left_impossible += ru->why == 1;
      r->left_exception += ru->why == 2;
      r->left_incomplete += ru->why == 3;
      r->left_no_code += ru->why == 4;
      r->left_operands += ru->why == 5;
      continue;
    }
    add(&r->all, ru->n, pred[i]);
    add(&r->cls[pcls[i]], ru->n, pred[i]);
    add(&r->mode[pmode[i]], ru->n, pred[i]);
    add(&fg[pfunc[i]], ru->n, pred[i]);
    fm[pfunc[i]][pmode[i]][0]++;
    fm[pfunc[i]][pmode[i]][1] += ru->n == pred[i];
  }
  for (int c = 0; c < SONDE_CYCLES_CLASSES; c++)
    snprintf(r->cls[c].name, sizeof r->cls[c].name, "%s", cls_names[c]);
  for (int c = 0; c < SONDE_CYCLES_MODES; c++)
    snprintf(r->mode[c].name, sizeof r->mode[c].name, "%s", mode_names[c]);
  /* the two (function, mode) pairs with the most instructions */
  long lf[2] = {-1, -1};
  int lmo[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    uint64_t best = 0;
    for (size_t f = 0; f <= nfunc; f++)
      for (int mo = 0; mo < SONDE_CYCLES_MODES; mo++)
        if (fm[f][mo][0] > best && !(k == 1 && (long)f == lf[0] && mo == lmo[0])) {
          best = fm[f][mo][0];
          lf[k] = (long)f;
          lmo[k] = mo;
        }
    if (lf[k] >= 0) {
      struct sonde_sym_func sf;
      const char *nm = lf[k] < (long)nfunc && sonde_sym_func_at(o->sym, (size_t)lf[k], &sf) == 0
                           ? sf.name
                           : "?";
      snprintf(r->loops[k], sizeof r->loops[k], "%s in %s", nm, mode_names[lmo[k]]);
    }
  }
  for (size_t i = 0; i < nr; i++) {
    if (runs[i].left_out)
      continue;
    bool loop = false;
    for (int k = 0; k < 2; k++)
      loop |= pfunc[i] == lf[k] && pmode[i] == lmo[k];
    if (!loop)
      add(&r->outside, runs[i].n, pred[i]);
  }
  snprintf(r->all.name, sizeof r->all.name, "all");
  snprintf(r->outside.name, sizeof r->outside.name, "outside the two loops");
  /* per function */
  size_t nf = 0;
  for (size_t f = 0; f <= nfunc; f++) {
    if (!fg[f].compared)
      continue;
    struct sonde_sym_func sf;
    snprintf(fg[f].name, sizeof fg[f].name, "%s",
             f < nfunc && sonde_sym_func_at(o->sym, f, &sf) == 0 ? sf.name : "(no function)");
    fg[nf++] = fg[f];
    double err = fg[f].obs ? fabs((double)fg[f].pred - (double)fg[f].obs) / (double)fg[f].obs : 0;
    if (fg[f].obs >= 1000 && err > r->worst_func_err) {
      r->worst_func_err = err;
      snprintf(r->worst_func, sizeof r->worst_func, "%s", fg[f].name);
    }
  }
  qsort(fg, nf, sizeof *fg, cmp_func);
  r->func = fg;
  r->nfunc = nf;
  fg = NULL;
  rc = 0;
out:
  free(fg);
  free(fm);
  free(pred);
  free(pmode);
  free(pcls);
  free(pfunc);
  free(paddr);
  free(runs);
  vm_tm_free(&tm);
  lsu_free(&lm);
  return rc;
}

void sonde_cycles_result_free(struct sonde_cycles_result *r)
{
  if (!r)
    return;
  free(r->func);
  r->func = NULL;
  r->nfunc = 0;
}
