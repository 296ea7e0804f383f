/* check: is every transition between consecutive instructions of a PC trace
 * one the code can make? From instruction P (decoded from the ELF by
 * capstone through src/sym) the next instruction may be
 *   - P + size (sequential; also a conditional branch not taken, an
 *     instruction skipped by IT), or P + size + 2 over an IT instruction,
 *     which the core folds into the cycle of the one before it;
 *   - the target of a direct branch/call (b, bl, b<cond>, cbz, cbnz);
 *   - any instruction start after an instruction that writes the PC from a
 *     register or memory (bx, blx, pop/ldm {..pc}, ldr pc, mov/add pc, tbb,
 *     tbh) — which includes an exception return;
 *   - the first instruction of a handler in the vector table (an exception
 *     can be taken between any two instructions, also tail-chained).
 * Anything else is impossible: a stitching error or nondeterminism between the
 * runs that were stitched. Sleep between two instructions is transparent;
 * unrecoverable cycles end the chain (nothing is checked across them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ft_internal.h"
#include "sonde/sym.h"

#define MAX_VECTORS 256

struct decoded {
  uint32_t pc;
  bool ok;       /* decoded from the ELF */
  bool is_it;    /* an IT instruction (folded: it takes no cycle of its own) */
  unsigned size;
  enum { K_OTHER, K_DIRECT, K_INDIRECT } kind;
  uint32_t target; /* K_DIRECT */
};

/* A small direct-mapped cache: traces revisit the same instructions. */
#define DCACHE 4096
struct checker {
  struct sonde_sym *sym;
  struct decoded cache[DCACHE];
  bool valid[DCACHE];
  uint32_t vectors[MAX_VECTORS];
  unsigned nvectors;
};

static bool is_cond(const char *s)
{
  static const char *const cc[] = {"eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs",
                                   "vc", "hi", "ls", "ge", "lt", "gt", "le", "al"};
  for (unsigned i = 0; i < sizeof cc / sizeof cc[0]; i++)
    if (strcmp(s, cc[i]) == 0)
      return true;
  return false;
}

/* Does the register list / first operand name the pc? */
static bool writes_pc(const char *mn, const char *ops)
{
  if (strncmp(mn, "pop", 3) == 0 || strncmp(mn, "ldm", 3) == 0)
    return strstr(ops, "pc}") || strstr(ops, "pc,") || strstr(ops, " pc");
  if (strncmp(mn, "ldr", 3) == 0 || strncmp(mn, "mov", 3) == 0 || strncmp(mn, "add", 3) == 0)
    return strncmp(ops, "pc,", 3) == 0;
  return false;
}

static void classify(struct sonde_sym_insn *in, struct decoded *d)
{
  char mn[32];
  snprintf(mn, sizeof mn, "%s", in->mnemonic);
  char *dot = strchr(mn, '.');
  if (dot)
    *dot = '\0'; /* b.n, b.w, bne.w */
  d->kind = K_OTHER;
  d->is_it = mn[0] == 'i' && mn[1] == 't' && (mn[2] == '\0' || mn[2] == 't' || mn[2] == 'e');
  if (strncmp(mn, "bx", 2) == 0 || strncmp(mn, "tbb", 3) == 0 || strncmp(mn, "tbh", 3) == 0 ||
      (strncmp(mn, "blx", 3) == 0 && in->operands[0] != '#') || writes_pc(mn, in->operands)) {
    d->kind = K_INDIRECT;
    return;
  }
  bool direct = strcmp(mn, "b") == 0 || strcmp(mn, "bl") == 0 || strcmp(mn, "cbz") == 0 ||
                strcmp(mn, "cbnz") == 0 || (mn[0] == 'b' && strlen(mn) == 3 && is_cond(mn + 1)) ||
                (strncmp(mn, "bl", 2) == 0 && strlen(mn) == 4 && is_cond(mn + 2));
  if (!direct)
    return;
  const char *hash = strrchr(in->operands, '#');
  if (!hash)
    return;
  d->target = (uint32_t)strtoul(hash + 1, NULL, 0) & ~1u;
  d->kind = K_DIRECT;
}

static const struct decoded *decode(struct checker *ck, uint32_t pc)
{
  size_t i = (pc >> 1) & (DCACHE - 1);
  if (ck->valid[i] && ck->cache[i].pc == pc)
    return &ck->cache[i];
  struct decoded *d = &ck->cache[i];
  memset(d, 0, sizeof *d);
  d->pc = pc;
  struct sonde_sym_insn in;
  if (!sonde_sym_is_data(ck->sym, pc) && sonde_sym_disasm(ck->sym, pc, &in) == 0 && !in.is_data &&
      in.addr == pc) {
    d->ok = true;
    d->size = in.size;
    classify(&in, d);
  }
  ck->valid[i] = true;
  return d;
}

static bool is_vector(const struct checker *ck, uint32_t pc)
{
  for (unsigned i = 0; i < ck->nvectors; i++)
    if (ck->vectors[i] == pc)
      return true;
  return false;
}

/* The handlers of the vector table: a symbol the usual startup files use,
 * else address 0 (VTOR's reset value). */
static void read_vectors(struct checker *ck)
{
  static const char *const names[] = {"gVectors", "g_pfnVectors", "__isr_vector", "__Vectors",
                                      "vector_table", "_vectors", "vectors", "isr_vector"};
  uint32_t base = 0, size = 0;
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (sonde_sym_address(ck->sym, names[i], &base, &size) == 0)
      break;
  unsigned n = size >= 8 ? size / 4 : MAX_VECTORS;
  if (n > MAX_VECTORS)
    n = MAX_VECTORS;
  for (unsigned i = 1; i < n; i++) {
    uint32_t w;
    if (sonde_sym_read(ck->sym, base + 4 * i, &w, 4) != 0)
      break;
    if ((w & 1) && sonde_sym_name(ck->sym, w & ~1u, NULL))
      ck->vectors[ck->nvectors++] = w & ~1u;
  }
}

static int add_bad(struct sonde_ft_check_result *out, size_t max_bad, uint64_t cycle,
                   uint32_t from, uint32_t to, const char *why)
{
  out->impossible++;
  out->by_kind[SONDE_FT_T_IMPOSSIBLE]++;
  if (out->bad_count >= max_bad)
    return 0;
  if (!out->bad) {
    out->bad = calloc(max_bad, sizeof *out->bad);
    if (!out->bad)
      return SONDE_E_NOMEM;
  }
  struct sonde_ft_bad_transition *b = &out->bad[out->bad_count++];
  b->cycle = cycle;
  b->from = from;
  b->to = to;
  snprintf(b->why, sizeof b->why, "%s", why);
  return 0;
}

int sonde_ft_check(const struct sonde_ft_trace *t, struct sonde_sym *sym, size_t max_bad,
                   struct sonde_ft_check_result *out, struct sonde_diag *diag)
{
  memset(out, 0, sizeof *out);
  if (!t || !sym)
    return sonde_diag_set(diag, SONDE_E_ARG, "check needs a trace and an ELF");
  struct checker *ck = calloc(1, sizeof *ck);
  if (!ck)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  ck->sym = sym;
  read_vectors(ck);
  bool have_prev = false, saw_return = false;
  uint32_t prev = 0;
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  int rc = 0;
  while (!rc && sonde_ft_trace_next_span(t, &pos, &sp)) {
    enum sonde_ft_state s = sp.cell.state;
    if (s == SONDE_FT_SLEEP || s == SONDE_FT_EXC_ENTRY || s == SONDE_FT_EXC_RETURN ||
        s == SONDE_FT_TAIL_CHAIN || s == SONDE_FT_HALTED) {
      /* transparent: the next instruction is checked against prev */
      saw_return |= s == SONDE_FT_EXC_RETURN;
      continue;
    }
    if (s != SONDE_FT_PC) {
      if (have_prev)
        out->skipped_unrecoverable++;
      have_prev = saw_return = false;
      continue;
    }
    bool returned = saw_return;
    saw_return = false;
    uint32_t to = sp.cell.pc;
    if (!have_prev || to == prev) {
      have_prev = true;
      prev = to;
      continue;
    }
    out->transitions++;
    /* a copy: later lookups may reuse its cache slot */
    const struct decoded dprev = *decode(ck, prev), *d = &dprev;
    char why[96];
    if (!d->ok) {
      out->skipped_no_code++;
    } else if (to == prev + d->size ||
               (to == prev + d->size + 2 && decode(ck, prev + d->size)->is_it)) {
      /* Cortex-M3/M4 fold an IT into the cycle of the instruction before it:
       * the trace never shows it. */
      out->by_kind[SONDE_FT_T_SEQUENTIAL]++;
    } else if (d->kind == K_DIRECT && to == d->target) {
      out->by_kind[SONDE_FT_T_BRANCH]++;
    } else if (is_vector(ck, to)) {
      out->by_kind[SONDE_FT_T_EXC_ENTRY]++;
    } else if (d->kind == K_INDIRECT) {
      const struct decoded *dt = decode(ck, to);
      if (dt->ok || !sonde_sym_name(sym, to, NULL)) {
        /* To decodable code, or out of the ELF (a ROM routine): plausible.
         * Ground truth shows an exception return as its own span. */
        out->by_kind[returned ? SONDE_FT_T_EXC_RETURN : SONDE_FT_T_INDIRECT]++;
      } else {
        rc = add_bad(out, max_bad, sp.cycle, prev, to, "indirect jump to the middle of an instruction or data");
      }
    } else if (d->kind == K_DIRECT) {
      snprintf(why, sizeof why, "branch to 0x%08x or 0x%08x, not here", d->target,
               prev + d->size);
      rc = add_bad(out, max_bad, sp.cycle, prev, to, why);
    } else {
      snprintf(why, sizeof why, "not a branch: next is 0x%08x", prev + d->size);
      rc = add_bad(out, max_bad, sp.cycle, prev, to, why);
    }
    prev = to;
  }
  free(ck);
  if (rc) {
    sonde_ft_check_result_free(out);
    return sonde_diag_set(diag, rc, "out of memory");
  }
  return 0;
}

void sonde_ft_check_result_free(struct sonde_ft_check_result *r)
{
  if (!r)
    return;
  free(r->bad);
  r->bad = NULL;
  r->bad_count = 0;
}
