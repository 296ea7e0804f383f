/* `sonde frankentrace analyze`: busy-wait loops, per-instruction durations
 * (per PC and per mnemonic), per-function cycle totals, and every access to a
 * register or address range from an LSU trace. The analyses are in
 * include/sonde/frankentrace.h; this file sorts and prints. */
#include "cli.h"
#include "cmd_frankentrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct agg { /* a per-function or per-mnemonic total */
  char name[64];
  uint64_t executions, cycles;
  uint32_t min_cycles, max_cycles;
  uint64_t hist[SONDE_FT_HIST_BUCKETS];
};

static int cmp_agg(const void *a, const void *b)
{
  const struct agg *x = a, *y = b;
  if (x->cycles != y->cycles)
    return x->cycles < y->cycles ? 1 : -1;
  return strcmp(x->name, y->name);
}

static int cmp_stat_cycles(const void *a, const void *b)
{
  const struct sonde_ft_insn_stat *x = a, *y = b;
  if (x->cycles != y->cycles)
    return x->cycles < y->cycles ? 1 : -1;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Add a stat to the aggregate named `name` (linear search: a few hundred names). */
static int aggregate(struct agg **v, size_t *n, size_t *cap, const char *name,
                     const struct sonde_ft_insn_stat *s)
{
  size_t i;
  for (i = 0; i < *n; i++)
    if (!strcmp((*v)[i].name, name))
      break;
  if (i == *n) {
    if (*n == *cap) {
      size_t c = *cap ? 2 * *cap : 64;
      struct agg *p = realloc(*v, c * sizeof *p);
      if (!p)
        return -1;
      *v = p;
      *cap = c;
    }
    memset(&(*v)[i], 0, sizeof **v);
    snprintf((*v)[i].name, sizeof (*v)[i].name, "%s", name);
    (*v)[i].min_cycles = UINT32_MAX;
    (*n)++;
  }
  struct agg *a = &(*v)[i];
  a->executions += s->executions;
  a->cycles += s->cycles;
  if (s->min_cycles < a->min_cycles)
    a->min_cycles = s->min_cycles;
  if (s->max_cycles > a->max_cycles)
    a->max_cycles = s->max_cycles;
  for (unsigned b = 0; b < SONDE_FT_HIST_BUCKETS; b++)
    a->hist[b] += s->hist[b];
  return 0;
}

static void print_hist(FILE *o, const uint64_t *h, bool json)
{
  if (json) {
    fputc('[', o);
    for (unsigned b = 0; b < SONDE_FT_HIST_BUCKETS; b++)
      fprintf(o, "%s%" PRIu64, b ? ", " : "", h[b]);
    fputc(']', o);
    return;
  }
  for (unsigned b = 0; b < SONDE_FT_HIST_BUCKETS; b++)
    fprintf(o, " %7" PRIu64, h[b]);
}

/* Parse "LO-HI", "LO+SIZE" or "ADDR" (a 4-byte register). */
static int parse_range(const char *s, uint32_t *lo, uint32_t *hi)
{
  char buf[64];
  snprintf(buf, sizeof buf, "%s", s);
  char *sep = strpbrk(buf + 1, "-+");
  uint64_t a, b;
  if (!sep) {
    if (cli_parse_u64(buf, &a) || a > UINT32_MAX - 3)
      return -1;
    *lo = (uint32_t)a;
    *hi = (uint32_t)a + 3;
    return 0;
  }
  char op = *sep;
  *sep = '\0';
  if (cli_parse_u64(buf, &a) || cli_parse_u64(sep + 1, &b) || a > UINT32_MAX)
    return -1;
  if (op == '+') {
    if (b == 0 || a + b - 1 > UINT32_MAX)
      return -1;
    b = a + b - 1;
  }
  if (b < a || b > UINT32_MAX)
    return -1;
  *lo = (uint32_t)a;
  *hi = (uint32_t)b;
  return 0;
}

int cmd_frankentrace_analyze(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace analyze -e <elf> [options] <trace>",
      "Analyse a cycle-level PC trace (pct or FrankenTrace CSV):\n"
      "  busy-wait loops: a short loop body (2..--max-body instructions) repeating back to\n"
      "    back, with its cycles; with --lsu, the addresses its loads poll and their values;\n"
      "  functions: cycles per function;\n"
      "  instructions: executions and durations (consecutive cycles at one PC) per PC and\n"
      "    per mnemonic, with a histogram of durations (1, 2, 3, 4, 5-8, 9-16, 17-32, 33+);\n"
      "  accesses (with --lsu): every data transfer in --range with PC, direction, value.\n"
      "The LSU trace is Sonde's (`sonde run --trace-lsu`) or FrankenTrace's CSV."};
  const char *elf = NULL, *lsu_path = NULL, *range = NULL;
  bool json = false;
  uint64_t top = 10, max_gap = 16, max_body = 8, min_cycles = 64, min_iter = 3, clock_hz = 0, max_acc = 50;
  struct cli_opt opts[] = {
      OPT_ELF(&elf),
      OPT_STRING(0, "lsu", "<file>", &lsu_path, "LSU trace: adds register accesses and what loops poll"),
      OPT_STRING(0, "range", "<lo-hi|lo+size|addr>", &range,
                 "accesses to list (default: all); a single address means 4 bytes"),
      OPT_U64(0, "accesses", "<n>", &max_acc, "list at most <n> accesses (default 50, 0: all)"),
      OPT_U64(0, "top", "<n>", &top, "rows per table (default 10, 0: all)"),
      OPT_U64(0, "max-body", "<n>", &max_body, "busy-wait: most instructions in a loop body (default 8)"),
      OPT_U64(0, "min-cycles", "<n>", &min_cycles, "busy-wait: shortest loop reported (default 64)"),
      OPT_U64(0, "max-gap", "<n>", &max_gap, "busy-wait: join pieces across at most <n> unrecoverable cycles (default 16)"),
      OPT_U64(0, "min-iterations", "<n>", &min_iter, "busy-wait: fewest iterations (default 3)"),
      OPT_U64(0, "clock", "<hz>", &clock_hz, "core clock, to show times (default: the trace's)"),
      OPT_JSON(&json),
      OPT_END(),
  };
  int n;
  int rc = cli_parse(argc, argv, opts, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (n != 1)
    return cli_usage_error(&help, "expected one <trace>, got %d", n);
  if (max_body < 2 || max_body > 64)
    return cli_usage_error(&help, "--max-body must be 2..64");
  uint32_t lo = 0, hi = UINT32_MAX;
  if (range && parse_range(range, &lo, &hi))
    return cli_usage_error(&help, "bad --range '%s' (lo-hi, lo+size or an address)", range);
  struct sonde_sym *sym = NULL;
  struct sonde_ft_trace *t = NULL;
  struct sonde_ft_xfer *xf = NULL;
  size_t nxf = 0;
  struct sonde_ft_busy_loop *loops = NULL;
  struct sonde_ft_insn_stat *st = NULL;
  struct agg *funcs = NULL, *mnems = NULL;
  size_t nloops = 0, nst = 0, nf = 0, cf = 0, nm = 0, cm = 0;
  int status = CLI_FAIL;
  FILE *o = stdout;
  if (ft_cli_open_elf(elf, &sym) || !(t = ft_cli_read_trace(argv[0])))
    goto done;
  if (lsu_path) {
    struct sonde_diag d = {{0}};
    if (sonde_ft_lsu_read(lsu_path, &xf, &nxf, &d)) {
      cli_error("frankentrace analyze: %s", d.msg);
      goto done;
    }
  }
  if (!clock_hz)
    clock_hz = sonde_ft_trace_clock_hz(t);
  struct sonde_ft_busy_config bc = {(unsigned)max_body, min_iter, min_cycles, max_gap, sym};
  if (sonde_ft_find_busy_loops(t, &bc, &loops, &nloops) || sonde_ft_insn_stats(t, &st, &nst)) {
    cli_error("frankentrace analyze: out of memory");
    goto done;
  }
  for (size_t i = 0; i < nst; i++) {
    char name[64];
    const char *fn = sym ? sonde_sym_name(sym, st[i].pc, NULL) : NULL;
    snprintf(name, sizeof name, "%s", fn ? fn : "(no symbol)");
    struct sonde_sym_insn in;
    const char *mn = sym && sonde_sym_disasm(sym, st[i].pc, &in) == 0 ? in.mnemonic : "(unknown)";
    if (aggregate(&funcs, &nf, &cf, name, &st[i]) || aggregate(&mnems, &nm, &cm, mn, &st[i])) {
      cli_error("frankentrace analyze: out of memory");
      goto done;
    }
  }
  if (nf) /* (qsort of a NULL array is undefined even when empty) */
    qsort(funcs, nf, sizeof *funcs, cmp_agg);
  if (nm)
    qsort(mnems, nm, sizeof *mnems, cmp_agg);
  if (nst)
    qsort(st, nst, sizeof *st, cmp_stat_cycles);
  struct sonde_ft_counts cnt;
  sonde_ft_trace_count(t, &cnt);
  size_t ntop_f = top && top < nf ? top : nf, ntop_m = top && top < nm ? top : nm,
         ntop_i = top && top < nst ? top : nst;
  char a[400], b[200];

  if (json) {
    fprintf(o, "{\"trace\": ");
    cli_json_string(o, argv[0]);
    fprintf(o, ", \"first_cycle\": %" PRIu64 ", \"cycles\": %" PRIu64 ", \"known\": %" PRIu64
               ", \"sleep\": %" PRIu64 ", \"unrecoverable\": %" PRIu64 ", \"busy_loops\": [",
            sonde_ft_trace_origin(t), cnt.cycles, cnt.pc, cnt.sleep,
            cnt.unsampled + cnt.lost + cnt.conflict + cnt.invalid);
  } else {
    fprintf(o, "trace: cycles %" PRIu64 "..%" PRIu64 " (%" PRIu64 "): %" PRIu64
               " known, %" PRIu64 " sleep, %" PRIu64 " unrecoverable\n",
            sonde_ft_trace_origin(t), sonde_ft_trace_origin(t) + cnt.cycles - (cnt.cycles > 0),
            cnt.cycles, cnt.pc, cnt.sleep, cnt.unsampled + cnt.lost + cnt.conflict + cnt.invalid);
    fprintf(o, "\nbusy-wait loops: %zu\n", nloops);
  }
  for (size_t i = 0; i < nloops; i++) {
    const struct sonde_ft_busy_loop *l = &loops[i];
    uint64_t cyc = l->last_cycle - l->first_cycle + 1;
    ft_cli_symbol(sym, l->head, a, sizeof a);
    /* What the loop's loads read, from the LSU trace. */
    uint32_t polled[2];
    unsigned npolled = 0;
    uint64_t reads = 0;
    for (size_t k = 0; k < nxf; k++)
      if (!xf[k].write && xf[k].pc >= l->head && xf[k].pc <= l->tail) {
        reads++;
        bool seen = false;
        for (unsigned q = 0; q < npolled; q++)
          seen |= polled[q] == xf[k].addr;
        if (!seen && npolled < 2)
          polled[npolled++] = xf[k].addr;
      }
    if (json) {
      fprintf(o, "%s{\"first_cycle\": %" PRIu64 ", \"last_cycle\": %" PRIu64 ", \"cycles\": %" PRIu64
                 ", \"iterations\": %" PRIu64 ", \"body\": %u, \"head\": %u, \"tail\": %u, \"unrecoverable\": %" PRIu64
                 ", \"loads\": %s, \"where\": ",
              i ? ", " : "", l->first_cycle, l->last_cycle, cyc, l->iterations, l->body_len,
              l->head, l->tail, l->unrecoverable, l->loads ? "true" : "false");
      cli_json_string(o, a);
      fprintf(o, ", \"polls\": [");
      for (unsigned q = 0; q < npolled; q++)
        fprintf(o, "%s%u", q ? ", " : "", polled[q]);
      fprintf(o, "]}");
    } else {
      fprintf(o, "  cycles %" PRIu64 "-%" PRIu64 ": %" PRIu64 " cycles", l->first_cycle,
              l->last_cycle, cyc);
      if (clock_hz)
        fprintf(o, " (%.1f us)", (double)cyc * 1e6 / (double)clock_hz);
      fprintf(o, ", %" PRIu64 " iterations of %u instructions at 0x%08x-0x%08x", l->iterations,
              l->body_len, l->head, l->tail);
      if (a[0] != '0') /* a symbol, not the bare address again */
        fprintf(o, " (%s)", a);
      if (l->unrecoverable)
        fprintf(o, ", %" PRIu64 " cycles unrecoverable", l->unrecoverable);
      for (unsigned q = 0; q < npolled; q++)
        fprintf(o, "%s0x%08x", q ? ", " : "; polls ", polled[q]);
      fputc('\n', o);
    }
  }
  if (json)
    fprintf(o, "], \"functions\": [");
  else
    fprintf(o, "\nfunctions (%zu, by cycles):\n  %12s %12s  %s\n", nf, "cycles", "instructions",
            "function");
  for (size_t i = 0; i < ntop_f; i++) {
    if (json) {
      fprintf(o, "%s{\"name\": ", i ? ", " : "");
      cli_json_string(o, funcs[i].name);
      fprintf(o, ", \"cycles\": %" PRIu64 ", \"executions\": %" PRIu64 "}", funcs[i].cycles,
              funcs[i].executions);
    } else {
      fprintf(o, "  %12" PRIu64 " %12" PRIu64 "  %s\n", funcs[i].cycles, funcs[i].executions,
              funcs[i].name);
    }
  }
  if (json)
    fprintf(o, "], \"instructions\": [");
  else
    fprintf(o, "\ninstructions (%zu PCs, by cycles):\n  %10s %10s %10s %5s %5s  %-40s %s\n", nst,
            "pc", "executions", "cycles", "min", "max", "where", "instruction");
  for (size_t i = 0; i < ntop_i; i++) {
    const struct sonde_ft_insn_stat *s = &st[i];
    ft_cli_symbol(sym, s->pc, a, sizeof a);
    struct sonde_sym_insn in;
    if (sym && sonde_sym_disasm(sym, s->pc, &in) == 0)
      snprintf(b, sizeof b, in.operands[0] ? "%s %s" : "%s", in.mnemonic, in.operands);
    else
      b[0] = '\0';
    if (json) {
      fprintf(o, "%s{\"pc\": %u, \"where\": ", i ? ", " : "", s->pc);
      cli_json_string(o, a);
      fprintf(o, ", \"insn\": ");
      cli_json_string(o, b);
      fprintf(o, ", \"executions\": %" PRIu64 ", \"cycles\": %" PRIu64
                 ", \"min\": %u, \"max\": %u, \"hist\": ",
              s->executions, s->cycles, s->min_cycles, s->max_cycles);
      print_hist(o, s->hist, true);
      fputc('}', o);
    } else {
      if (b[0])
        fprintf(o, "  0x%08x %10" PRIu64 " %10" PRIu64 " %5u %5u  %-40s %s\n", s->pc,
                s->executions, s->cycles, s->min_cycles, s->max_cycles, a, b);
      else
        fprintf(o, "  0x%08x %10" PRIu64 " %10" PRIu64 " %5u %5u  %s\n", s->pc, s->executions,
                s->cycles, s->min_cycles, s->max_cycles, a);
    }
  }
  if (json)
    fprintf(o, "], \"mnemonics\": [");
  else
    fprintf(o, "\nmnemonics (%zu, by cycles; histogram of durations in cycles):\n"
               "  %-10s %10s %10s %5s %5s %7s %7s %7s %7s %7s %7s %7s %7s\n",
            nm, "mnemonic", "executions", "cycles", "min", "max", "1", "2", "3", "4", "5-8",
            "9-16", "17-32", "33+");
  for (size_t i = 0; i < ntop_m; i++) {
    const struct agg *m = &mnems[i];
    if (json) {
      fprintf(o, "%s{\"mnemonic\": ", i ? ", " : "");
      cli_json_string(o, m->name);
      fprintf(o, ", \"executions\": %" PRIu64 ", \"cycles\": %" PRIu64 ", \"min\": %u, \"max\": %u, \"hist\": ",
              m->executions, m->cycles, m->min_cycles, m->max_cycles);
      print_hist(o, m->hist, true);
      fputc('}', o);
    } else {
      fprintf(o, "  %-10s %10" PRIu64 " %10" PRIu64 " %5u %5u", m->name, m->executions, m->cycles,
              m->min_cycles, m->max_cycles);
      print_hist(o, m->hist, false);
      fputc('\n', o);
    }
  }
  /* Per address in the range: what the paper's case study reads off an LSU
   * trace (e.g. the last value written to a configuration register). Runs
   * that traced the same range repeat its accesses, so the order and the last
   * write are taken from the first run that has the address. */
  struct reg {
    uint32_t addr, first_run, first_value, last_write, runs, last_run;
    uint64_t reads, writes;
    bool has_write;
  } regs[256];
  size_t nregs = 0, regs_over = 0;
  for (size_t k = 0; k < nxf; k++) {
    const struct sonde_ft_xfer *x = &xf[k];
    if (x->gap || x->addr < lo || x->addr > hi)
      continue;
    size_t r;
    for (r = 0; r < nregs && regs[r].addr != x->addr; r++)
      ;
    if (r == nregs) {
      if (nregs == 256) {
        regs_over++;
        continue;
      }
      regs[nregs++] = (struct reg){x->addr, x->run, x->value, 0, 1, x->run, 0, 0, false};
    }
    struct reg *g = &regs[r];
    if (x->run != g->last_run) {
      g->runs++; /* runs come in blocks in both LSU formats */
      g->last_run = x->run;
    }
    if (x->write)
      g->writes++;
    else
      g->reads++;
    if (x->write && x->run == g->first_run) {
      g->last_write = x->value;
      g->has_write = true;
    }
  }
  if (json)
    fprintf(o, "], \"registers\": [");
  else if (lsu_path)
    fprintf(o, "\naddresses in 0x%08x-0x%08x: %zu%s\n  %10s %8s %8s %6s %10s %10s  %s\n", lo, hi,
            nregs, regs_over ? " (first 256 listed)" : "", "address", "reads", "writes", "runs",
            "first", "last write", "(in the first run that has it)");
  for (size_t r = 0; r < nregs; r++) {
    const struct reg *g = &regs[r];
    if (json)
    {
      fprintf(o, "%s{\"addr\": %u, \"reads\": %" PRIu64 ", \"writes\": %" PRIu64
                 ", \"runs\": %u, \"first_value\": %u, \"last_write\": ",
              r ? ", " : "", g->addr, g->reads, g->writes, g->runs, g->first_value);
      if (g->has_write)
        fprintf(o, "%u}", g->last_write);
      else
        fputs("null}", o);
    }
    else {
      char lw[16] = "-";
      if (g->has_write)
        snprintf(lw, sizeof lw, "0x%08x", g->last_write);
      fprintf(o, "  0x%08x %8" PRIu64 " %8" PRIu64 " %6u 0x%08x %10s\n", g->addr, g->reads,
              g->writes, g->runs, g->first_value, lw);
    }
  }
  if (json)
    fprintf(o, "], \"accesses\": [");
  else if (lsu_path)
    fprintf(o, "\naccesses to 0x%08x-0x%08x:\n", lo, hi);
  uint64_t shown = 0, matched = 0;
  for (size_t k = 0; k < nxf; k++) {
    const struct sonde_ft_xfer *x = &xf[k];
    if (x->gap || x->addr < lo || x->addr > hi)
      continue;
    matched++;
    if (max_acc && shown >= max_acc)
      continue;
    ft_cli_symbol(sym, x->pc, a, sizeof a);
    if (json) {
      fprintf(o, "%s{\"run\": %u, \"ts\": %" PRIu64 ", \"pc\": %u, \"where\": ", shown ? ", " : "",
              x->run, x->ts, x->pc);
      cli_json_string(o, a);
      fprintf(o, ", \"write\": %s, \"addr\": %u, \"size\": %u, \"value\": %u}",
              x->write ? "true" : "false", x->addr, x->size, x->value);
    } else {
      fprintf(o, "  run %4u ts %10" PRIu64 "  %-5s 0x%08x = 0x%08x (%u bytes) at 0x%08x%s%s\n",
              x->run, x->ts, x->write ? "write" : "read", x->addr, x->value, x->size, x->pc,
              a[0] == '0' ? "" : " ", a[0] == '0' ? "" : a);
    }
    shown++;
  }
  if (json)
    fprintf(o, "], \"accesses_matched\": %" PRIu64 "}\n", matched);
  else if (lsu_path && matched > shown)
    fprintf(o, "  ... %" PRIu64 " accesses in the range, %" PRIu64 " shown (--accesses 0: all)\n",
            matched, shown);
  status = CLI_OK;
done:
  free(loops);
  free(st);
  free(funcs);
  free(mnems);
  free(xf);
  sonde_ft_trace_free(t);
  sonde_sym_free(sym);
  return status;
}
