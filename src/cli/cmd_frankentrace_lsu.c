/* LSU traces for `sonde frankentrace run` and `stitch` (docs/frankentrace.md,
 * "LSU traces"): the --lsu range list, the runner's LSU iterations into one
 * ordered trace aligned to the stitched PC trace, the output CSV and the
 * comparison with `sonde run --trace-lsu`. */
#include "cmd_frankentrace_lsu.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sonde/frankentrace_vm.h"
#include "sonde/trace.h"

int ft_lsu_parse_ranges(const char *spec, struct sonde_sym *sym, uint32_t *ranges, uint32_t *n,
                        char *err, size_t cap)
{
  *n = 0;
  if (!spec || !*spec) {
    snprintf(err, cap, "an empty range list");
    return -1;
  }
  const char *p = spec;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char item[128];
    if (!len || len >= sizeof item) {
      snprintf(err, cap, "'%s': an empty or too long item", spec);
      return -1;
    }
    memcpy(item, p, len);
    item[len] = 0;
    char *end;
    unsigned long long v = strtoull(item, &end, 0);
    uint32_t r;
    if (end != item && !*end) {
      if (v > 0xFFFFFFFFull) {
        snprintf(err, cap, "'%s' is not a 32-bit address", item);
        return -1;
      }
      /* up to 0xffff: a range number (address >> 16); above: an address in it */
      r = v <= 0xFFFF ? (uint32_t)v : (uint32_t)(v >> 16);
    } else {
      uint32_t a;
      if (!sym || sonde_sym_address(sym, item, &a, NULL) < 0) {
        snprintf(err, cap, "'%s' is neither a number (a range as address >> 16, or an address) "
                           "nor a symbol of the ELF", item);
        return -1;
      }
      r = a >> 16;
    }
    if (r >= 0xE000 && r <= 0xE00F) {
      snprintf(err, cap, "'%s': range 0x%04x is the private peripheral bus (DWT, ITM, NVIC): "
                         "the trace blocks cannot trace their own registers", item, r);
      return -1;
    }
    for (uint32_t i = 0; i < *n; i++)
      if (ranges[i] == r) {
        snprintf(err, cap, "'%s': range 0x%04x is listed twice", item, r);
        return -1;
      }
    if (*n == SONDE_FT_LSU_MAX_RANGES) {
      snprintf(err, cap, "more than %u ranges", SONDE_FT_LSU_MAX_RANGES);
      return -1;
    }
    ranges[(*n)++] = r;
    p += len;
    if (*p == ',')
      p++;
  }
  for (uint32_t i = 1; i < *n; i++) /* ascending, as the library numbers them */
    for (uint32_t j = i; j > 0 && ranges[j - 1] > ranges[j]; j--) {
      uint32_t t = ranges[j];
      ranges[j] = ranges[j - 1];
      ranges[j - 1] = t;
    }
  return 0;
}

void ft_lsu_list(char *buf, size_t cap, const uint32_t *r, uint32_t n)
{
  size_t used = 0;
  buf[0] = 0;
  for (uint32_t i = 0; i < n && used + 8 < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s0x%04x", i ? "," : "", r[i]);
}

int ft_lsu_cli_init(struct ft_lsu_cli *l, struct sonde_sym *sym)
{
  if (l->spec) {
    char err[256];
    if (ft_lsu_parse_ranges(l->spec, sym, l->want, &l->nwant, err, sizeof err) < 0)
      return sonde_diag_set(&l->diag, SONDE_E_ARG, "--lsu %s: %s", l->spec, err);
  }
  return sonde_ft_lsu_runs_new(&l->runs) ? sonde_diag_set(&l->diag, SONDE_E_NOMEM, "out of memory")
                                         : 0;
}

void ft_lsu_cli_hint_monitor(struct sonde_sym *sym, const char *elf)
{
  uint32_t mon = 0, def = 0;
  bool has_mon = sym && sonde_sym_address(sym, "DebugMon_Handler", &mon, NULL) == 0;
  bool has_def = sym && sonde_sym_address(sym, "Default_Handler", &def, NULL) == 0;
  if (!has_mon || (has_def && (mon & ~1u) == (def & ~1u)))
    cli_error("frankentrace run: '%s' has no DebugMon_Handler of its own%s: the DebugMonitor "
              "exception of an invasive LSU iteration (ft_config.lsu_delay != 0) goes to the "
              "default handler; install the runner's with FT_DEBUGMON_VECTOR "
              "(docs/frankentrace-target.md)", elf, has_mon ? " (it is Default_Handler)" : "");
}

void ft_lsu_cli_free(struct ft_lsu_cli *l)
{
  sonde_ft_lsu_runs_free(l->runs);
  l->runs = NULL;
}

int ft_lsu_cli_iteration(void *ctx, const struct sonde_ftw_iteration *it)
{
  struct ft_lsu_cli *l = ctx;
  l->iterations++;
  if (l->rc)
    return 0;
  struct sonde_diag d = {{0}};
  int rc = sonde_ft_lsu_runs_add(l->runs, it, &d);
  if (rc == SONDE_E_AGAIN) { /* spoiled on the wire: another capture of it may do */
    if (!l->corrupt++)
      l->first_corrupt = d;
  } else if (rc < 0) {
    l->rc = rc; /* reported by ft_lsu_cli_finish, after the PC trace's summary */
    l->diag = d;
  }
  return 0;
}

/* The ground-truth cycle of trace cycle 0 (aligned on the preambles, as
 * --truth does), and the trace's end there. */
static int truth_window(const char *pct, const struct sonde_ft_trace *t, struct sonde_sym *sym,
                        const char *elf, uint64_t *off, struct sonde_diag *d)
{
  struct sonde_ft_trace *gt = ft_cli_read_trace(pct);
  if (!gt)
    return sonde_diag_set(d, SONDE_E_IO, "cannot read %s", pct);
  uint32_t pre;
  struct sonde_ft_verify_result v;
  int rc = sonde_ft_runner_preamble(sym, elf, &pre, d);
  if (!rc)
    rc = sonde_ft_runner_verify(t, gt, pre, off, &v, d);
  sonde_ft_trace_free(gt);
  return rc;
}

static void describe(struct sonde_sym *sym, const struct sonde_ft_xfer *x, uint64_t off, char *buf,
                     size_t cap)
{
  if (x->gap) {
    snprintf(buf, cap, "(none)");
    return;
  }
  char fn[160];
  ft_cli_symbol(sym, x->pc, fn, sizeof fn);
  char cyc[32] = "unplaced";
  if (x->cycle != UINT64_MAX)
    snprintf(cyc, sizeof cyc, "cycle %" PRIu64, x->cycle + off);
  snprintf(buf, cap, "%s %s 0x%08x = 0x%x (%u bytes) at %s", cyc, x->write ? "write" : "read ",
           x->addr, x->value, x->size, fn);
}

/* The ground truth's transfers (`sonde run --trace-lsu`, in cycle order) in
 * [from, to) and the ranges, without exception stacking; read as a stream
 * that stops at `to` (the truth of a whole runner plan is far longer than
 * the window of iteration 0). */
static int read_truth(const char *path, const uint32_t *ranges, uint32_t nranges, uint64_t from,
                      uint64_t to, struct sonde_ft_xfer **out, size_t *count, struct sonde_diag *d)
{
  *out = NULL;
  *count = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return sonde_diag_set(d, SONDE_E_IO, "cannot open");
  struct sonde_lsutrace_reader *r = NULL;
  int rc = sonde_lsutrace_reader_new(f, path, &r, d);
  size_t cap = 0;
  struct sonde_lsutrace_record rec;
  while (!rc && (rc = sonde_lsutrace_next(r, &rec)) == 1) {
    rc = 0;
    if (rec.cycle >= to)
      break;
    bool in = false;
    for (uint32_t i = 0; i < nranges && !in; i++)
      in = rec.addr >> 16 == ranges[i];
    if (rec.cycle < from || !in || rec.stacking || rec.gap)
      continue;
    if (*count == cap) {
      cap = cap ? 2 * cap : 4096;
      struct sonde_ft_xfer *p = realloc(*out, cap * sizeof *p);
      if (!p) {
        rc = sonde_diag_set(d, SONDE_E_NOMEM, "out of memory");
        break;
      }
      *out = p;
    }
    (*out)[(*count)++] = (struct sonde_ft_xfer){.pc = rec.pc, .addr = rec.addr, .value = rec.value,
                                                .size = (uint8_t)rec.size, .write = rec.write,
                                                .ts = rec.cycle, .cycle = rec.cycle};
  }
  if (rc < 0 && r && !d->msg[0])
    sonde_diag_set(d, rc, "%s", sonde_lsutrace_reader_error_detail(r));
  sonde_lsutrace_reader_free(r);
  fclose(f);
  return rc < 0 ? rc : 0;
}

/* --lsu-out and --lsu-truth; returns 1 on a failure or difference. */
static int out_and_verify(struct ft_lsu_cli *l, const struct sonde_ft_xfer *x, size_t n,
                          const struct sonde_ft_trace *trace, struct sonde_sym *sym,
                          const char *elf, const char *pc_truth, uint64_t truth_off,
                          const uint32_t *ranges, uint32_t nranges, bool runner, FILE *e)
{
  int fail = 0;
  if (l->out_path) {
    FILE *f = fopen(l->out_path, "w");
    struct sonde_diag d = {{0}};
    if (!f || sonde_ft_lsu_write(f, l->out_path, x, n, 0, &d) < 0) {
      cli_error("frankentrace: LSU: cannot write %s", l->out_path);
      fail = 1;
    }
    if (f && fclose(f) != 0)
      fail = 1;
  }
  if (!l->truth_path)
    return fail;
  struct sonde_diag d = {{0}};
  uint64_t off = 0, from = 0, to = UINT64_MAX;
  struct sonde_ft_xfer *gt = NULL;
  size_t gn = 0;
  int rc = 0;
  if (runner) { /* a runner trace starts at its phase 0's first sample: align */
    if (truth_off != UINT64_MAX)
      off = truth_off;
    else if (!pc_truth)
      rc = sonde_diag_set(&d, SONDE_E_ARG,
                          "needs the same run's --trace-pc as --truth (run) or --verify (stitch) "
                          "to align cycles");
    else
      rc = truth_window(pc_truth, trace, sym, elf, &off, &d);
    from = off + sonde_ft_trace_origin(trace);
    to = from + sonde_ft_trace_length(trace);
  }
  if (!rc)
    rc = read_truth(l->truth_path, ranges, nranges, from, to, &gt, &gn, &d);
  if (rc < 0) {
    cli_error("frankentrace: --lsu-truth %s: %s", l->truth_path, d.msg);
    return 1;
  }
  struct sonde_ft_lsu_verify_result v;
  sonde_ft_lsu_verify(x, n, gt, gn, ranges, nranges, from, to, off, true, &v);
  free(gt);
  char win[80] = "";
  if (runner)
    snprintf(win, sizeof win, "; ground truth cycles %" PRIu64 "..%" PRIu64, from, to - 1);
  if (v.differs) {
    char got[300], exp[300];
    describe(sym, &v.got, off, got, sizeof got);
    describe(sym, &v.want, 0, exp, sizeof exp);
    fprintf(e, "  lsu truth %s: FIRST DIFFERENCE at transfer %" PRIu64 ": trace %s; ground "
               "truth %s (%" PRIu64 " of %" PRIu64 " compared equal; %" PRIu64 " in the "
               "trace, %" PRIu64 " in the ground truth)\n",
            l->truth_path, v.first, got, exp, v.equal, v.compared, v.trace_count, v.truth_count);
    return 1;
  }
  fprintf(e, "  lsu truth %s: equal on all %" PRIu64 " transfers in the traced ranges (cycle, pc, "
             "address, size, value, direction%s)",
          l->truth_path, v.compared, win);
  if (v.gaps)
    fprintf(e, "; %" PRIu64 " more of the ground truth's lie in the %" PRIu64 " gaps", v.in_gaps,
            v.gaps);
  fputc('\n', e);
  return fail;
}

int ft_lsu_cli_probe(struct ft_lsu_cli *l, const struct sonde_ft_vm_lsu_config *cfg,
                     const struct sonde_ft_trace *trace, struct sonde_sym *sym, const char *elf,
                     FILE *e)
{
  if (!l->nwant) {
    cli_error("frankentrace run: --probe: --lsu RANGES is needed (which 64 KiB ranges to trace)");
    return 1;
  }
  struct sonde_ft_vm_lsu_config c = *cfg;
  c.ranges = l->want;
  c.nranges = l->nwant;
  struct sonde_ft_xfer *x = NULL;
  size_t n = 0;
  struct sonde_ft_vm_lsu_stats st;
  double t0 = cli_now_s();
  int rc = sonde_ft_vm_lsu_run(&c, &x, &n, &st, &l->diag);
  double secs = cli_now_s() - t0;
  if (rc < 0) {
    cli_error("frankentrace run: %s", l->diag.msg);
    return 1;
  }
  /* Timestamps are true cycles: the PC trace must show each transfer's
   * instruction there. */
  uint64_t disagree = 0;
  size_t first_bad = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    if (x[i].gap)
      continue;
    struct sonde_ft_cell cell = sonde_ft_trace_at(trace, x[i].cycle);
    if (cell.state != SONDE_FT_PC || cell.pc != x[i].pc) {
      disagree++;
      if (first_bad == SIZE_MAX)
        first_bad = i;
    }
  }
  char have[400];
  ft_lsu_list(have, sizeof have, l->want, l->nwant);
  fprintf(e, "  lsu (noninvasive): ranges %s, %u runs (one per range and packet kind), %" PRIu64
             " SWO bytes, %.2f s; %" PRIu64 " transfers, %" PRIu64 " gaps (%" PRIu64
             " overflow packets, %" PRIu64 " transfers seen only in part)%s%s\n",
          have, st.runs, st.swo_bytes, secs, st.transfers, st.gaps, st.overflows, st.partial,
          l->out_path ? " -> " : "", l->out_path ? l->out_path : "");
  int fail = st.gaps || st.undated ? 1 : 0;
  if (st.gaps)
    fprintf(e, "  lsu: GAPS: the ITM overflowed, transfers were lost there (marked `gap` in the "
               "output); raise --baud, trace fewer ranges, or use a runner image (invasive, "
               "no gaps)\n");
  if (st.undated)
    fprintf(e, "  lsu: %" PRIu64 " transfers without an exact timestamp (their cycle is the next "
               "one's)\n", st.undated);
  if (disagree) {
    char d[300];
    describe(sym, &x[first_bad], 0, d, sizeof d);
    fprintf(e, "  lsu: %" PRIu64 " transfers are not at their instruction in the PC trace (first: "
               "%s)\n", disagree, d);
    fail = 1;
  }
  l->transfers = st.transfers;
  l->gaps = st.gaps;
  if (out_and_verify(l, x, n, trace, sym, elf, NULL, UINT64_MAX, l->want, l->nwant, false, e))
    fail = 1;
  free(x);
  return fail;
}

int ft_lsu_cli_finish(struct ft_lsu_cli *l, const struct sonde_ft_trace *trace,
                      struct sonde_sym *sym, const char *elf, const char *pc_truth,
                      uint64_t truth_off, FILE *e)
{
  if (l->rc) {
    cli_error("frankentrace: LSU: %s", l->diag.msg);
    return 1;
  }
  if (!l->iterations) {
    cli_error("frankentrace: LSU: '%s' ran no LSU iterations: its runner plan has none (its "
              "struct ft_config needs .ranges, .nranges and .lsu_delay, and a DebugMon_Handler: "
              "docs/frankentrace-target.md)", elf);
    return 1;
  }
  if (l->corrupt)
    fprintf(e, "  lsu: %u LSU iterations spoiled on the wire, not used (first: %s)\n", l->corrupt,
            l->first_corrupt.msg);
  struct sonde_ft_xfer *x = NULL;
  size_t n = 0;
  struct sonde_ft_lsu_summary s;
  int rc = sonde_ft_lsu_runs_finish(l->runs, &x, &n, &s, &l->diag);
  if (rc < 0) {
    cli_error("frankentrace: LSU: %s", l->diag.msg);
    return 1;
  }
  int fail = 0;
  char have[400], want[400];
  ft_lsu_list(have, sizeof have, s.ranges, s.nranges);
  if (l->nwant && (l->nwant != s.nranges || memcmp(l->want, s.ranges, 4 * s.nranges))) {
    ft_lsu_list(want, sizeof want, l->want, l->nwant);
    cli_error("frankentrace: LSU: --lsu %s: the image's plan traces %s (its struct ft_config); "
              "rebuild it with those ranges, or leave --lsu out", want, have);
    free(x);
    return 1;
  }
  int64_t unplaced = sonde_ft_lsu_align(trace, sym, x, n, false);
  sonde_ft_lsu_data_phase(trace, x, n);
  fprintf(e, "  lsu: ranges %s, %u pairs x 3 kinds, %" PRIu64 " transfers ordered, %" PRId64
             " not placed on the PC trace%s%s\n",
          have, s.pairs, (uint64_t)n, unplaced, l->out_path ? " -> " : "",
          l->out_path ? l->out_path : "");
  if (unplaced) {
    fail = 1;
    for (size_t i = 0; i < n; i++)
      if (x[i].cycle == UINT64_MAX) {
        char d[300];
        describe(sym, &x[i], 0, d, sizeof d);
        fprintf(e, "  lsu: first transfer not placed: #%zu %s (its instruction is not in the PC "
                   "trace after the previous transfer)\n", i, d);
        break;
      }
  }
  if (out_and_verify(l, x, n, trace, sym, elf, pc_truth, truth_off, s.ranges, s.nranges, true, e))
    fail = 1;
  l->transfers = n;
  l->unplaced = (uint64_t)unplaced;
  free(x);
  return fail;
}
