/* The timing model's pipeline (tm.h): the fetch unit, Decode and Execute of
 * a Cortex-M3, one executed instruction at a time.
 *
 * Clock: tm->now is the cycle in which the current instruction entered
 * Execute. A fetch whose address phase is in cycle a has its data phase from
 * a + 1 for as many cycles as the memory needs (vm_tm_code_access); its data
 * is there at the end of the last one, the instruction in it can be decoded
 * in the next cycle and enter Execute in the one after (Cortex-M3 TRM
 * (DDI 0337) 1.2.1: three-stage pipeline; 2.4 "Prefetch Unit": a three-word
 * fetch buffer; 3.3.1 Table 3-1 and its notes for the execute cycles:
 * a single load is 2 cycles, 1 when pipelined after another load or store, a
 * store's data phase goes to the write buffer, LDM/STM 1 + N, a taken branch
 * 1 + P). Fetches are issued lazily but in address order and at the cycle
 * they would have been: before a data access of the code memory (data has
 * priority on the shared port) and before a redirect (fetches already on the
 * bus are not cancelled: they hold the port). */
#include "tm.h"

#include <stdlib.h>
#include <string.h>

#include "sonde/common.h"

static uint64_t max64(uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

int vm_tm_init(struct vm_tm *tm, const struct vm_tm_cfg *cfg, uint32_t reset_pc)
{
  memset(tm, 0, sizeof *tm);
  tm->cfg = *cfg;
  if (!tm->cfg.fetch_depth)
    tm->cfg.fetch_depth = 3;
  if (tm->cfg.fetch_depth > 8)
    tm->cfg.fetch_depth = 8;
  if (!tm->cfg.sram_read)
    tm->cfg.sram_read = 1;
  if (!tm->cfg.sram_write)
    tm->cfg.sram_write = 1;
  if (tm->cfg.cache) {
    if (!tm->cfg.cache_line || !tm->cfg.cache_ways)
      tm->cfg.cache = false;
    else {
      tm->csets = tm->cfg.cache_size / tm->cfg.cache_line / tm->cfg.cache_ways;
      while (tm->csets & (tm->csets - 1)) /* a power of two: index by mask */
        tm->csets &= tm->csets - 1;
      if (!tm->csets)
        tm->csets = 1;
      tm->cline_shift = (unsigned)__builtin_ctz(tm->cfg.cache_line);
      tm->ctag = calloc((size_t)tm->csets * tm->cfg.cache_ways, sizeof *tm->ctag);
      tm->cnext = calloc(tm->csets, 1);
      if (!tm->ctag || !tm->cnext) {
        vm_tm_free(tm);
        return SONDE_E_NOMEM;
      }
    }
  }
  /* granules vm_tm_sys_access() must look up: those a latency region
   * touches, and the bit-band aliases (they map elsewhere) */
  static const uint8_t alias[] = {0x22, 0x23, 0x42, 0x43};
  for (unsigned i = 0; i < 4; i++)
    tm->lat_g[alias[i] >> 5] |= 1u << (alias[i] & 31);
  for (unsigned i = 0; i < tm->cfg.nlat && i < VM_TM_MAX_LAT; i++) {
    const struct vm_tm_lat *r = &tm->cfg.lat[i];
    if (!r->size)
      continue;
    uint64_t last = (uint64_t)r->base + r->size - 1;
    if (last > 0xFFFFFFFFu) { /* wraps past 4 GB (as the lookup's compare does): all */
      memset(tm->lat_g, 0xFF, sizeof tm->lat_g);
      continue;
    }
    for (unsigned g = r->base >> 24; g <= (unsigned)(last >> 24); g++)
      tm->lat_g[g >> 5] |= 1u << (g & 31);
  }
  tm->mode = tm->cfg.cache_mode;
  tm->cache_on = tm->cfg.cache && tm->mode == 1;
  tm->lb_mask = tm->cfg.flash_line ? ~(uint32_t)(tm->cfg.flash_line - 1) : 0;
  tm->cl_mask = tm->cfg.cache ? ~(uint32_t)(tm->cfg.cache_line - 1) : 0;
  tm->lb_line = 1;
  tm->last_cline = 1;
  tm->prev_ld_rd = VM_NOREG;
  vm_tm_redirect_model(tm, reset_pc, 0);
  if (!tm->cfg.memo_off)
    vm_tm_memo_new(tm); /* without it (out of memory) every step is modelled */
  return 0;
}

void vm_tm_free(struct vm_tm *tm)
{
  vm_tm_memo_free(tm);
  free(tm->ctag);
  free(tm->cnext);
  tm->ctag = NULL;
  tm->cnext = NULL;
}

/* Issue the next sequential fetch if its address phase can be in a cycle
 * <= t. Returns false when it cannot (queue full or later). */
static bool fetch_one(struct vm_tm *tm, uint64_t t)
{
  if (tm->qn >= tm->cfg.fetch_depth)
    return false;
  uint32_t w = tm->fa;
  bool code = vm_tm_on_port(w);
  uint64_t a = max64(tm->f_issue, code && tm->port_free ? tm->port_free - 1 : 0);
  if (a > t)
    return false;
  uint64_t end;
  if (code) {
    unsigned l = vm_tm_is_code(tm, w) ? vm_tm_code_access(tm, w, false)
                                      : vm_tm_sys_access(tm, w, false);
    end = a + l;
    tm->port_free = end + 1;
  } else {
    unsigned l = vm_tm_sys_access(tm, w, false);
    uint64_t start = max64(a + 1, tm->sbus_free);
    end = start + l - 1;
    tm->sbus_free = end + 1;
  }
  if (!tm->qn)
    tm->qbase = w;
  tm->qt[(w >> 2) & 7] = end;
  tm->qn++;
  tm->fa = w + 4;
  tm->f_issue = a + 1;
  return true;
}

static void fetch_until(struct vm_tm *tm, uint64_t t)
{
  while (fetch_one(tm, t))
    ;
}

/* Cycle at whose end the word at w is there (fetching it, and what precedes
 * it, as early as the queue allows). */
static uint64_t word_ready_slow(struct vm_tm *tm, uint32_t w)
{
  for (;;) {
    if (tm->qn && w - tm->qbase < 4u * tm->qn)
      return tm->qt[(w >> 2) & 7];
    if (tm->fa > w || w - tm->fa > 64) { /* not on the sequential path: refetch */
      tm->qn = 0;
      tm->fa = w;
    }
    if (!fetch_one(tm, UINT64_MAX)) {
      /* queue full of words before w: the oldest leaves when Decode takes it */
      tm->qbase += 4;
      tm->qn--;
    }
  }
}

/* The common case first: the word is already in the queue (qn = 0 makes
 * the range empty). */
static inline uint64_t word_ready(struct vm_tm *tm, uint32_t w)
{
  if (w - tm->qbase < 4u * tm->qn)
    return tm->qt[(w >> 2) & 7];
  return word_ready_slow(tm, w);
}

/* Drop the words before the one holding pc (Decode has taken them); a freed
 * slot lets the fetch unit go on from cycle t. */
static void consume(struct vm_tm *tm, uint32_t pc, uint64_t t)
{
  uint32_t w = pc & ~3u;
  unsigned k = w - tm->qbase < 4u * tm->qn ? (w - tm->qbase) / 4 : tm->qn;
  if (!k)
    return;
  if (tm->qn >= tm->cfg.fetch_depth)
    tm->f_issue = max64(tm->f_issue, t);
  tm->qbase += 4 * k;
  tm->qn -= k;
}

/* A redirect whose target's address phase is in cycle r (or when the port
 * lets it): fetches issued before r stay on the bus; the queue is flushed. */
static void redirect_at(struct vm_tm *tm, uint32_t target, uint64_t r)
{
  fetch_until(tm, r - 1);
  tm->qn = 0;
  tm->fa = target & ~3u;
  tm->f_issue = max64(tm->f_issue, r);
}

void vm_tm_redirect(struct vm_tm *tm, uint32_t pc, unsigned cycles)
{
  if (tm->memo)
    vm_tm_memo_sync(tm);
  vm_tm_redirect_model(tm, pc, cycles);
}

void vm_tm_redirect_model(struct vm_tm *tm, uint32_t pc, unsigned cycles)
{
  tm->now += cycles;
  tm->qn = 0;
  tm->fa = pc & ~3u;
  /* the instruction at pc is to enter Execute at `now`: its fetch went out
   * during those cycles (exception entry fetches the handler while it
   * stacks), three cycles before with a memory that needs none */
  tm->f_issue = tm->now >= 3 ? tm->now - 3 : 0;
  tm->dpc = pc;
  tm->prev_ls = false;
  tm->prev_ld_rd = VM_NOREG;
}

/* Data accesses of n words from addr, the address phase of the first
 * offered in cycle a: the bus takes it when the transfer before it on the
 * same bus has its last data cycle (AHB: an address phase lasts while
 * HREADY is low). Returns the cycle at whose end the last data phase ends;
 * *acc is the cycle in which the first address phase was taken. */
static uint64_t data_access(struct vm_tm *tm, uint32_t addr, unsigned n, bool write, uint64_t a,
                            uint32_t wdata, uint64_t *acc)
{
  uint64_t end = a;
  if (write && n)
    vm_tm_store_hook(tm, addr, wdata);
  for (unsigned i = 0; i < n; i++, addr += 4) {
    uint64_t *bus_free;
    unsigned l;
    if (vm_tm_on_port(addr)) {
      /* the code region: the port instruction fetches use (flash, ROM) */
      fetch_until(tm, a - 1); /* fetches already on the bus go first */
      l = !write && vm_tm_is_code(tm, addr) ? vm_tm_code_access(tm, addr, true)
                                            : vm_tm_sys_access(tm, addr, write);
      bus_free = &tm->port_free;
    } else {
      l = vm_tm_sys_access(tm, addr, write);
      bus_free = &tm->sbus_free;
    }
    uint64_t taken = *bus_free ? max64(a, *bus_free - 1) : a;
    if (!i)
      *acc = taken;
    end = taken + l;
    *bus_free = end + 1;
    a = end; /* the next address phase overlaps this data phase's last cycle */
  }
  return end;
}

/* Is the instruction at pc a single load/store whose address does not
 * depend on register `rd` (Cortex-M3 TRM 3.3.1: neighbouring loads and
 * stores pipeline their address and data phases)? */
static bool next_pipelines(const struct vm_tm *tm, uint32_t pc, uint8_t rd)
{
  if (!tm->read16)
    return false;
  static const struct vm_decode_features f = {true, false, false, false};
  uint16_t h1 = tm->read16(tm->read_ctx, pc), h2 = 0;
  if (vm_thumb_is32(h1))
    h2 = tm->read16(tm->read_ctx, pc + 2);
  struct vm_insn n;
  vm_decode(&f, h1, h2, &n);
  if (n.op != VM_OP_LD && n.op != VM_OP_ST)
    return false;
  if (n.op == VM_OP_LD && n.rd == 15)
    return false;
  /* the next one's address, or the data it stores, would be this load's */
  return rd == VM_NOREG || (n.rn != rd && n.rm != rd && !(n.op == VM_OP_ST && n.rd == rd));
}

static bool writes_pc_dp(const struct vm_insn *d)
{
  if (d->rd != 15)
    return false;
  if (d->op >= VM_OP_DPI0) {
    unsigned alu = (d->op - VM_OP_DPI0) & 15;
    return alu != VM_ALU_TST && alu != VM_ALU_TEQ && alu != VM_ALU_CMP && alu != VM_ALU_CMN;
  }
  return d->op == VM_OP_DP_RSR || d->op == VM_OP_ADR || d->op == VM_OP_MOVT;
}

unsigned vm_tm_step_model(struct vm_tm *tm, const struct vm_tm_insn *in)
{
  const struct vm_insn *d = in->d;
  uint64_t e = tm->now;
  uint64_t done = e + 1;     /* first cycle the next instruction may be in Execute */
  uint64_t redirect = 0;     /* address-phase cycle of a redirect's target fetch */
  bool decode_redirect = false, ls = false;
  uint8_t ld_rd = VM_NOREG;
  bool taken = in->next_pc != in->pc + d->len;
  if (d->op == VM_OP_IT && tm->fold_it) {
    tm->fold_it = false;
    tm->dpc = in->next_pc;
    return 0; /* folded into the instruction before it */
  }
  tm->fold_it = false;
  bool it_next = false; /* an IT follows this (16-bit) instruction */
  uint16_t hw_after = 0; /* the halfword at in->pc + 2 when read (16-bit d) */
  if (tm->read16 && d->len == 2) {
    hw_after = tm->read16(tm->read_ctx, in->pc + 2);
    it_next = (hw_after & 0xFF00) == 0xBF00 && (hw_after & 0xF);
  }
  if (taken && it_next && in->next_pc == in->pc + 4)
    taken = false; /* over a folded IT (a trace does not show it) */
  if (in->executed) {
    unsigned n;
    switch (d->op) {
    case VM_OP_LD: case VM_OP_ST: case VM_OP_LDREX: case VM_OP_STREX:
    case VM_OP_LDA: case VM_OP_STL: case VM_OP_LDAEX: case VM_OP_STLEX: {
      bool wr = d->op == VM_OP_ST || d->op == VM_OP_STREX || d->op == VM_OP_STL ||
                d->op == VM_OP_STLEX;
      uint64_t acc;
      uint64_t a0 = e;
      if (wr && tm->cfg.write_buffer && !vm_tm_on_port(in->addr)) {
        /* a one-entry write buffer (TRM 3.3.1): a store the bus cannot take
         * now waits in it; a second one waits for it to empty */
        a0 = max64(e, tm->wb_until);
      }
      uint64_t end = data_access(tm, in->addr, 1, wr, a0, in->wdata, &acc);
      if (wr && tm->cfg.write_buffer) {
        tm->wb_until = acc; /* the buffer empties when the bus takes the address */
        done = max64(done, a0 + 1);
      } else if (!wr && d->rd != 15 && (d->op == VM_OP_LD) &&
               next_pipelines(tm, in->next_pc, d->rd) && in->next_pc == in->pc + d->len)
        done = max64(done, acc + 1); /* the next load/store takes over the bus */
      else
        done = max64(done, end + 1);
      if (!wr && d->rd == 15)
        redirect = end;
      ls = d->op == VM_OP_LD || d->op == VM_OP_ST;
      ld_rd = wr ? VM_NOREG : d->rd;
      break;
    }
    case VM_OP_LDM: case VM_OP_STM: case VM_OP_LDRD: case VM_OP_STRD: {
      bool wr = d->op == VM_OP_STM || d->op == VM_OP_STRD;
      n = (d->op == VM_OP_LDRD || d->op == VM_OP_STRD) ? 2
                                                         : (unsigned)__builtin_popcount(d->imm);
      uint64_t acc;
      uint64_t end = data_access(tm, in->addr, n, wr, e, in->wdata, &acc);
      done = max64(done, end + 1); /* 1 + N (TRM 3.3.1), also for stores */
      if (!wr && d->op == VM_OP_LDM && (d->imm & 0x8000))
        redirect = end + 1; /* the PC is written when the last word is there */
      break;
    }
    case VM_OP_TBB: case VM_OP_TBH: {
      uint64_t acc;
      uint64_t end = data_access(tm, in->addr, 1, false, e, 0, &acc);
      done = max64(done, end + 1);
      redirect = end + 1;
      break;
    }
    case VM_OP_B:
      if (taken || d->cond != 14) {
        /* resolved in Decode: the target's fetch starts there (B<c>
         * speculatively; not taken, that fetch was for nothing) */
        decode_redirect = true;
      }
      break;
    case VM_OP_BL:
      decode_redirect = true;
      break;
    case VM_OP_BX: case VM_OP_BLX: case VM_OP_CBZ: case VM_OP_CBNZ:
      if (taken)
        redirect = e;
      break;
    case VM_OP_MLA: case VM_OP_MLS:
      done = e + 2;
      break;
    case VM_OP_UMULL: case VM_OP_SMULL:
      done = e + 3 + in->extra;
      break;
    case VM_OP_UMLAL: case VM_OP_SMLAL:
      done = e + 4 + in->extra;
      break;
    case VM_OP_SDIV: case VM_OP_UDIV:
      done = e + 2 + in->extra;
      break;
    case VM_OP_IT:
      break;
    case VM_OP_BARRIER:
      /* DSB/DMB wait for the write buffer; ISB refetches */
      done = max64(done, tm->sbus_free);
      if (d->sub == 2)
        redirect = done - 1;
      break;
    default:
      if (writes_pc_dp(d))
        redirect = e;
      break;
    }
  }
  if (decode_redirect) {
    uint32_t target = d->op == VM_OP_BL || d->cond == 14 || taken
                          ? in->next_pc
                          : in->pc + 4 + (uint32_t)d->imm;
    uint64_t r = e - 1;
    if (taken) {
      redirect_at(tm, target, r);
    } else {
      /* B<c> not taken: its speculative fetch of the target holds the port */
      fetch_until(tm, r - 1);
      uint32_t save = tm->fa;
      uint64_t save_issue = tm->f_issue;
      unsigned qn = tm->qn;
      uint32_t qbase = tm->qbase, slot = (target >> 2) & 7;
      uint64_t qt = tm->qt[slot];
      tm->fa = target & ~3u;
      tm->f_issue = max64(tm->f_issue, r);
      if (qn < tm->cfg.fetch_depth && fetch_one(tm, UINT64_MAX)) {
        tm->qn = qn; /* the word is dropped */
        tm->qbase = qbase;
        tm->qt[slot] = qt;
      }
      tm->fa = save;
      tm->f_issue = max64(save_issue, tm->f_issue);
    }
  } else if (redirect) {
    redirect_at(tm, in->next_pc, redirect);
  } else if (taken) {
    /* a jump the model does not know as one (exception return, ...) */
    redirect_at(tm, in->next_pc, done - 1);
  }
  /* IT folding (Cortex-M3 TRM 3.3.1 note: an IT can be folded onto the
   * 16-bit instruction before it): when the IT was in the fetch queue while
   * this instruction was in Decode */
  bool it_cost = false;
  if (it_next && !taken) {
    uint32_t itpc = in->pc + 2;
    uint64_t rt = word_ready(tm, itpc & ~3u);
    tm->fold_it = rt + 2 <= e;
    /* the trace skipped an IT the model would not fold: it costs its cycle */
    it_cost = !tm->fold_it && in->next_pc == itpc + 2;
  }
  /* the next instruction: its halfwords fetched, decoded, then Execute (a
   * folded IT does not enter Execute: the one after it does) */
  uint32_t pc = in->next_pc;
  if (tm->fold_it && pc == in->pc + 2)
    pc += 2;
  uint64_t ready = word_ready(tm, pc & ~3u);
  if ((pc & 2) && tm->read16) {
    /* the halfword read above when it is the same one (the instruction has
     * executed: nothing writes code between the two reads) */
    uint16_t hw = d->len == 2 && pc == in->pc + 2 ? hw_after : tm->read16(tm->read_ctx, pc);
    if (vm_thumb_is32(hw))
      ready = max64(ready, word_ready(tm, (pc & ~3u) + 4));
  }
  uint64_t next = max64(done, ready + 2);
  if (it_cost)
    next = max64(next, e + 2);
  consume(tm, pc, next - 1);
  tm->prev_ls = ls;
  tm->prev_ld_rd = ld_rd;
  tm->dpc = in->next_pc;
  tm->now = next;
  return (unsigned)(next - e);
}
