/* The instruction history between MTB packets, rebuilt from the ELF's code:
 * sequential runs from each destination to the next source (include/sonde/mtb.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/mtb.h"

struct builder {
  struct sonde_mtb_history *h;
  const struct sonde_sym *sym;
  size_t cap, icap;
  bool nomem;
  uint32_t handlers[256]; /* vector table entries 2.. (Thumb bit cleared) */
  unsigned nhandlers;
};

/* The handlers of the vector table at `vectors`, as far as the ELF has them. */
static void read_vectors(struct builder *b, uint32_t vectors)
{
  for (unsigned i = 2; i < 256; i++) {
    uint8_t w[4];
    if (sonde_sym_read(b->sym, vectors + 4 * i, w, 4))
      break;
    uint32_t v = (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
    if (v & 1) /* a Thumb code address: a handler */
      b->handlers[b->nhandlers++] = v & ~1u;
  }
}

static bool is_handler(const struct builder *b, uint32_t addr)
{
  for (unsigned i = 0; i < b->nhandlers; i++)
    if (b->handlers[i] == addr)
      return true;
  return false;
}

static struct sonde_mtb_event ev(enum sonde_mtb_kind kind, unsigned size, uint32_t pc,
                                  uint32_t dst, uint32_t exc_return, uint32_t packet)
{
  return (struct sonde_mtb_event){.kind = (uint8_t)kind, .size = (uint8_t)size, .pc = pc,
                                  .dst = dst, .exc_return = exc_return, .packet = packet};
}

static void push(struct builder *b, struct sonde_mtb_event e)
{
  struct sonde_mtb_history *h = b->h;
  if (h->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 1024;
    void *p = realloc(h->ev, cap * sizeof *h->ev);
    if (!p) {
      b->nomem = true;
      return;
    }
    h->ev = p;
    b->cap = cap;
  }
  h->ev[h->n++] = e;
  if (e.kind == SONDE_MTB_INSN)
    h->instructions++;
}

static void issue(struct builder *b, uint32_t packet, uint32_t from, uint32_t to, const char *fmt,
                  uint32_t arg)
{
  struct sonde_mtb_history *h = b->h;
  if (h->nissues == b->icap) {
    size_t cap = b->icap ? 2 * b->icap : 16;
    void *p = realloc(h->issues, cap * sizeof *h->issues);
    if (!p) {
      b->nomem = true;
      return;
    }
    h->issues = p;
    b->icap = cap;
  }
  struct sonde_mtb_issue *is = &h->issues[h->nissues++];
  is->packet = packet;
  is->from = from;
  is->to = to;
  snprintf(is->why, sizeof is->why, fmt, arg);
}

/* Size of the instruction at addr from the ELF, 0 if not in it. */
static unsigned size_at(const struct sonde_sym *sym, uint32_t addr)
{
  uint8_t hw[2];
  if (sonde_sym_read(sym, addr, hw, 2))
    return 0;
  return sonde_mtb_insn_size((uint16_t)(hw[0] | hw[1] << 8));
}

/* Emit the instructions from `from` through `to` (both executed), or up to
 * `to` without it (`upto`: an exception entry's source, which did not run;
 * nothing when from == to). On a source that is not reached, nothing is
 * emitted and an issue is recorded. */
static bool walk(struct builder *b, uint32_t packet, uint32_t from, uint32_t to, bool upto)
{
  size_t mark = b->h->n, insns = b->h->instructions;
  uint32_t addr = from;
  for (;;) {
    if (upto && addr == to)
      return true;
    unsigned sz = size_at(b->sym, addr);
    if (!sz) {
      issue(b, packet, from, to, "0x%08x is not in the ELF's code", addr);
      break;
    }
    push(b, ev(SONDE_MTB_INSN, (uint8_t)sz, addr, 0, 0, packet));
    if (addr == to && !upto)
      return true;
    if (to < from || addr > to || to - from > SONDE_MTB_MAX_RUN) {
      issue(b, packet, from, to,
            to < from || addr > to ? "source not reached sequentially (the walk passed it at 0x%08x)"
                                   : "source more than %u bytes after the previous destination",
            to < from || addr > to ? addr : SONDE_MTB_MAX_RUN);
      break;
    }
    addr += sz;
  }
  b->h->n = mark;
  b->h->instructions = insns;
  return false;
}

/* The first instruction of a run whose start is unknown (history start, a
 * new session, after a gap). */
static void start_at(struct builder *b, uint32_t packet, uint32_t pc)
{
  unsigned sz = size_at(b->sym, pc);
  if (!sz)
    issue(b, packet, pc, pc, "0x%08x is not in the ELF's code", pc);
  push(b, ev(SONDE_MTB_INSN, (uint8_t)sz, pc, 0, 0, packet));
}

/* Can the Thumb instruction at addr change the PC other than to the next
 * instruction (ARMv7-M/ARMv8-M ARM A5/A7 encodings)? B, BL, BLX, BX, CBZ,
 * CBNZ, POP/LDM with the PC, LDR to the PC, MOV/ADD to the PC, TBB/TBH. A
 * permissive test: a few other encodings with the same bits pass too. */
static bool may_branch(const struct sonde_sym *sym, uint32_t addr)
{
  uint8_t b[4];
  if (sonde_sym_read(sym, addr, b, 2))
    return true; /* not in the image: reported elsewhere */
  uint16_t h = (uint16_t)(b[0] | b[1] << 8);
  if (sonde_mtb_insn_size(h) == 2) {
    unsigned rd = ((h >> 4) & 8) | (h & 7);
    return ((h >> 12) == 0xD && ((h >> 8) & 0xF) < 0xE) || /* B<c> */
           (h >> 11) == 0x1C ||                              /* B */
           (h & 0xF500) == 0xB100 ||                         /* CBZ, CBNZ */
           (h & 0xFF00) == 0x4700 ||                         /* BX, BLX, BXNS */
           (h & 0xFF00) == 0xBD00 ||                         /* POP {..., pc} */
           ((h & 0xFD00) == 0x4400 && rd == 15);             /* ADD/MOV pc */
  }
  if (sonde_sym_read(sym, addr + 2, b + 2, 2))
    return true;
  uint16_t h2 = (uint16_t)(b[2] | b[3] << 8);
  return ((h & 0xF800) == 0xF000 && (h2 & 0x8000)) ||                /* B.W, BL, BLX */
         ((h & 0xFE10) == 0xF810 && (h2 >> 12) == 15) ||             /* LDR pc */
         ((h & 0xFE50) == 0xE810 && (h2 & 0x8000)) ||                /* LDM/POP.W pc */
         ((h & 0xFFF0) == 0xE8D0 && (h2 & 0xFFE0) == 0xF000);        /* TBB, TBH */
}

/* The target of a direct branch at addr (B<c>, B, CBZ/CBNZ, B<c>.W, B.W,
 * BL; ARMv7-M ARM A7.7.12, A7.7.18, A7.7.21): a branch packet from it must go
 * there. False for every other instruction. */
static bool direct_target(const struct sonde_sym *sym, uint32_t addr, uint32_t *target)
{
  uint8_t b[4];
  if (sonde_sym_read(sym, addr, b, 2))
    return false;
  uint16_t h = (uint16_t)(b[0] | b[1] << 8);
  uint32_t pc = addr + 4, off;
  if (sonde_mtb_insn_size(h) == 2) {
    if ((h >> 12) == 0xD && ((h >> 8) & 0xF) < 0xE) /* B<c> T1 */
      off = (uint32_t)(int32_t)(int8_t)(h & 0xFF) << 1;
    else if ((h >> 11) == 0x1C) /* B T2 */
      off = (uint32_t)((int32_t)((uint32_t)(h & 0x7FF) << 21) >> 20);
    else if ((h & 0xF500) == 0xB100) /* CBZ, CBNZ: i:imm5:'0', forward only */
      off = ((h >> 3) & 0x1F) << 1 | ((h >> 9) & 1) << 6;
    else
      return false;
    *target = pc + off;
    return true;
  }
  if (sonde_sym_read(sym, addr + 2, b + 2, 2) || (h & 0xF800) != 0xF000)
    return false;
  uint16_t h2 = (uint16_t)(b[2] | b[3] << 8);
  uint32_t S = (h >> 10) & 1, J1 = (h2 >> 13) & 1, J2 = (h2 >> 11) & 1;
  if ((h2 & 0xD000) == 0x8000) { /* B<c>.W T3 */
    if (((h >> 6) & 0xF) >= 0xE)
      return false; /* not a branch (hints, MSR/MRS, ...) */
    off = S << 20 | J2 << 19 | J1 << 18 | (uint32_t)(h & 0x3F) << 12 | (uint32_t)(h2 & 0x7FF) << 1;
    off = (uint32_t)((int32_t)(off << 11) >> 11);
  } else if ((h2 & 0xD000) == 0x9000 || (h2 & 0xD000) == 0xD000) { /* B.W T4, BL */
    uint32_t I1 = !(J1 ^ S), I2 = !(J2 ^ S);
    off = S << 24 | I1 << 23 | I2 << 22 | (uint32_t)(h & 0x3FF) << 12 |
          (uint32_t)(h2 & 0x7FF) << 1;
    off = (uint32_t)((int32_t)(off << 7) >> 7);
  } else {
    return false;
  }
  *target = pc + off;
  return true;
}

static void count_in_image(struct builder *b, uint32_t addr)
{
  if (sonde_mtb_is_exc_return(addr))
    return;
  b->h->addresses++;
  if (size_at(b->sym, addr))
    b->h->in_image++;
}

int sonde_mtb_rebuild(const struct sonde_mtb_packet *p, size_t n, const struct sonde_sym *sym,
                      const struct sonde_mtb_options *opt, struct sonde_mtb_history *out,
                      struct sonde_diag *d)
{
  struct sonde_diag tmp;
  if (!d)
    d = &tmp;
  if (!out)
    return sonde_diag_set(d, SONDE_E_ARG, "no output");
  memset(out, 0, sizeof *out);
  if (!sym)
    return sonde_diag_set(d, SONDE_E_ARG, "rebuilding the MTB history needs the ELF");
  if (n && !p)
    return sonde_diag_set(d, SONDE_E_ARG, "no packets");
  struct builder b = {.h = out, .sym = sym};
  read_vectors(&b, opt ? opt->vectors : 0);
  out->packets = n;
  bool known = false;      /* cur is where the core went last */
  uint32_t cur = 0;
  bool ret_pending = false; /* the previous packet went to an EXC_RETURN */
  uint32_t ret_insn = 0, ret_value = 0;
  for (size_t i = 0; i < n && !b.nomem; i++) {
    const struct sonde_mtb_packet *P = &p[i];
    uint32_t pi = (uint32_t)i;
    count_in_image(&b, P->src);
    count_in_image(&b, P->dst);
    if (P->s) {
      push(&b, ev(SONDE_MTB_SESSION, 0, P->src, 0, 0, pi));
      known = ret_pending = false;
    }
    if (P->a && sonde_mtb_is_exc_return(P->src)) { /* second half of a return */
      if (ret_pending) {
        if (P->src != ret_value)
          issue(&b, pi, ret_value, P->src, "EXC_RETURN differs from the previous packet's 0x%08x",
                ret_value);
        {
          struct sonde_mtb_event e = ev(SONDE_MTB_EXC_RETURN, 0, ret_insn, P->dst, P->src, pi);
          e.tail_chain = is_handler(&b, P->dst);
          push(&b, e);
        }
      } else if (i == 0 || P->s) {
        /* the buffer (or session) starts between the two packets of a return */
      } else {
        issue(&b, pi, cur, P->src, "EXC_RETURN 0x%08x without the return packet before it",
              P->src);
        push(&b, ev(SONDE_MTB_GAP, 0, P->dst, 0, P->src, pi));
      }
      ret_pending = false;
      known = true;
      cur = P->dst;
      continue;
    }
    if (ret_pending) {
      issue(&b, pi, ret_insn, P->src, "the return to EXC_RETURN 0x%08x has no second packet",
            ret_value);
      push(&b, ev(SONDE_MTB_GAP, 0, P->src, 0, ret_value, pi));
      ret_pending = known = false;
    }
    /* An entry's source is the interrupted instruction (the preferred
     * return address: MTB-M0+ TRM 2.3.1), which has not run; the same as the
     * previous destination when the entry came right after a branch, a
     * return or another entry. A branch's source is the branch, which ran. */
    if (known) {
      if (!walk(&b, pi, cur, P->src, P->a)) {
        push(&b, ev(SONDE_MTB_GAP, 0, P->src, cur, 0, pi));
        if (!P->a)
          start_at(&b, pi, P->src);
      }
    } else if (!P->a) {
      start_at(&b, pi, P->src);
    }
    uint32_t target;
    if (!P->a && !may_branch(sym, P->src))
      issue(&b, pi, P->src, P->dst, "the source 0x%08x is not a branch instruction", P->src);
    else if (!P->a && direct_target(sym, P->src, &target) && (P->dst & ~1u) != target)
      issue(&b, pi, P->src, P->dst, "the destination is not 0x%08x, where the branch goes",
            target);
    if (!P->a && sonde_mtb_is_exc_return(P->dst)) {
      ret_pending = true;
      ret_insn = P->src;
      ret_value = P->dst;
      known = false;
      continue;
    }
    push(&b, ev(P->a ? SONDE_MTB_EXC_ENTRY : SONDE_MTB_BRANCH, 0, P->src,
                                      P->dst, 0, pi));
    known = true;
    cur = P->dst;
  }
  if (!b.nomem && known && n) {
    uint32_t pi = (uint32_t)(n - 1);
    if (opt && opt->end_pc) {
      if (!walk(&b, pi, cur, opt->end_pc & ~1u, false))
        start_at(&b, pi, cur); /* the issue says why end_pc was not reached */
    } else {
      start_at(&b, pi, cur);
    }
  }
  if (b.nomem) {
    sonde_mtb_history_free(out);
    return sonde_diag_set(d, SONDE_E_NOMEM, "out of memory rebuilding %zu MTB packets", n);
  }
  return 0;
}

void sonde_mtb_history_free(struct sonde_mtb_history *h)
{
  if (!h)
    return;
  free(h->ev);
  free(h->issues);
  memset(h, 0, sizeof *h);
}

const char *sonde_mtb_kind_name(enum sonde_mtb_kind k)
{
  switch (k) {
  case SONDE_MTB_INSN: return "instruction";
  case SONDE_MTB_BRANCH: return "branch";
  case SONDE_MTB_EXC_ENTRY:
  case SONDE_MTB_EXC_RETURN: return "exception";
  case SONDE_MTB_SESSION: return "session";
  case SONDE_MTB_GAP: return "gap";
  }
  return "?";
}
