/* `sonde monitor pc|watch|break`: monitor a running target through its debug
 * port (src/monitor, docs/monitor.md; issue 18). With --link vm the firmware
 * runs on the virtual Cortex-M from reset to its exit; openocd:HOST:PORT and
 * gdb:HOST:PORT attach to a probe. Output: a text table (default), CSV, JSON
 * or a Perfetto timeline with counter tracks for current and power. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/export.h"
#include "sonde/monitor.h"
#include "sonde/trace.h"
#include "sonde/vm.h"

enum { F_TEXT, F_CSV, F_JSON, F_PERFETTO };

struct mon_cli {
  const char *elf, *link_spec, *machine_name, *output, *format, *current_csv, *truth;
  uint64_t every, phase, max_cycles, max_ms, drain_every, swo_acpr, voltage_mv, clock_hz;
  bool stripped, energy, drain_only, json;
  const char *funcs[8], *writes[4], *reads[4], *ats[8];
  unsigned nfuncs, nwrites, nreads, nats;
  bool markers;
  int fmt;
  /* state */
  struct sonde_sym *sym;
  struct sonde_mon_ftab *ft;
  struct sonde_machine *machine;
  struct sonde_vm *vm;
  struct sonde_mon_link *link;
  struct sonde_mon_current cur;
  bool have_cur;
  FILE *out;
};

static int add_str(const char **arr, unsigned *n, unsigned cap, const char *s)
{
  if (*n >= cap)
    return CLI_USAGE;
  arr[(*n)++] = s;
  return 0;
}
static int opt_func(const struct cli_opt *o, const char *a, void *v)
{
  struct mon_cli *c = v;
  (void)o;
  return add_str(c->funcs, &c->nfuncs, 8, a);
}
static int opt_write(const struct cli_opt *o, const char *a, void *v)
{
  struct mon_cli *c = v;
  (void)o;
  return add_str(c->writes, &c->nwrites, 4, a);
}
static int opt_read(const struct cli_opt *o, const char *a, void *v)
{
  struct mon_cli *c = v;
  (void)o;
  return add_str(c->reads, &c->nreads, 4, a);
}
static int opt_at(const struct cli_opt *o, const char *a, void *v)
{
  struct mon_cli *c = v;
  (void)o;
  return add_str(c->ats, &c->nats, 8, a);
}

static int file_write(void *ctx, const void *buf, size_t len)
{
  return fwrite(buf, 1, len, ctx) == len ? 0 : SONDE_E_IO;
}

static int quiet_out(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx;
  (void)stream;
  (void)data;
  (void)len;
  return 0;
}

static int read_image(void *ctx, uint32_t addr, void *buf, size_t len)
{
  return sonde_sym_read(ctx, addr, buf, len);
}

static const char *fname(const struct mon_cli *c, long f)
{
  const struct sonde_mon_func *fn = f >= 0 ? sonde_mon_ftab_at(c->ft, (size_t)f) : NULL;
  return fn ? fn->name : "?";
}

/* An address from a symbol name or a number. */
static int resolve(const struct mon_cli *c, const char *s, uint32_t *addr, uint32_t *size)
{
  uint64_t v;
  if (size)
    *size = 4;
  if (cli_parse_u64(s, &v) == 0 && v <= 0xFFFFFFFFu) {
    *addr = (uint32_t)v;
    return 0;
  }
  long f = sonde_mon_ftab_find(c->ft, s);
  if (f >= 0) {
    *addr = sonde_mon_ftab_at(c->ft, (size_t)f)->start;
    return 0;
  }
  uint32_t sz = 0;
  if (sonde_sym_address(c->sym, s, addr, &sz) == 0) {
    if (size && sz)
      *size = sz;
    return 0;
  }
  return cli_error("%s: no symbol '%s'", c->elf, s);
}

static uint64_t ns_of(const struct mon_cli *c, uint64_t cycle)
{
  uint64_t hz = c->machine ? sonde_machine_clock_hz(c->machine) : c->cur.clock_hz;
  return hz ? (uint64_t)((double)cycle * 1e9 / (double)hz) : cycle;
}

/* ---- set-up ---------------------------------------------------------------------- */

static int setup(struct mon_cli *c, const struct cli_command_help *help)
{
  if (!c->elf)
    return cli_usage_error(help, "missing -e <elf>");
  c->fmt = !strcmp(c->format, "text") ? F_TEXT : !strcmp(c->format, "csv") ? F_CSV
           : !strcmp(c->format, "json") ? F_JSON : !strcmp(c->format, "perfetto") ? F_PERFETTO
           : -1;
  if (c->fmt < 0)
    return cli_usage_error(help, "unknown --format '%s' (text, csv, json or perfetto)", c->format);
  struct sonde_diag d;
  if (sonde_sym_open(c->elf, &c->sym, &d) < 0)
    return cli_error("%s", d.msg);
  int rc = c->stripped ? SONDE_E_NOTFOUND : sonde_mon_ftab_from_sym(c->sym, &c->ft);
  if (rc == SONDE_E_NOTFOUND)
    rc = sonde_mon_ftab_from_code(read_image, c->sym, 0, 16u << 20, &c->ft);
  if (rc < 0)
    return cli_error("%s: no function table: %s", c->elf, sonde_strerror(rc));
  if (!strcmp(c->link_spec, "vm")) {
    if (cli_load_machine(c->machine_name, &c->machine) != CLI_OK)
      return CLI_FAIL;
    size_t got = 0;
    char *img = cli_read_file(c->elf, &got);
    if (!img)
      return cli_error("monitor: '%s': %s", c->elf, strerror(errno));
    if (sonde_vm_new(c->machine, &c->vm) < 0 ||
        sonde_vm_load_elf(c->vm, img, got, c->elf) < 0 || sonde_vm_reset(c->vm) < 0) {
      free(img);
      return cli_error("%s: cannot load: %s", c->elf,
                       c->vm ? sonde_vm_error_detail(c->vm) : "out of memory");
    }
    free(img);
    sonde_vm_set_output(c->vm, quiet_out, NULL);
    sonde_mon_current_init(&c->cur, sonde_machine_clock_hz(c->machine),
                           c->voltage_mv ? (uint32_t)c->voltage_mv
                                         : sonde_machine_supply_mv(c->machine));
    if (c->energy && !c->current_csv) {
      sonde_vm_set_power(c->vm, sonde_mon_current_vm_fn, &c->cur);
      c->have_cur = true;
    }
  } else {
    sonde_mon_current_init(&c->cur, c->clock_hz, (uint32_t)c->voltage_mv);
  }
  if (c->current_csv) {
    size_t len = 0;
    char *text = cli_read_file(c->current_csv, &len);
    if (!text)
      return cli_error("monitor: '%s': %s", c->current_csv, strerror(errno));
    rc = sonde_mon_current_parse_csv(&c->cur, text, len, c->current_csv, &d);
    free(text);
    if (rc < 0)
      return cli_error("%s", d.msg);
    c->have_cur = true;
  }
  rc = sonde_mon_link_open(c->link_spec, c->vm, (unsigned)c->max_ms, &c->link, &d);
  if (rc < 0)
    return rc == SONDE_E_ARG ? cli_usage_error(help, "%s", d.msg) : cli_error("%s", d.msg);
  c->out = cli_open_output(c->output, c->fmt == F_PERFETTO);
  return c->out ? 0 : CLI_FAIL;
}

static void teardown(struct mon_cli *c)
{
  sonde_mon_link_free(c->link);
  sonde_vm_free(c->vm);
  sonde_machine_free(c->machine);
  sonde_mon_ftab_free(c->ft);
  sonde_sym_free(c->sym);
  sonde_mon_current_free(&c->cur);
}

/* Current and power counter tracks (Perfetto). */
static void counters(struct mon_cli *c, struct sonde_export *x, uint64_t parent)
{
  if (!c->have_cur)
    return;
  sonde_export_track(x, 10, parent, SONDE_EXPORT_COUNTER, "current (uA)", 0);
  sonde_export_track(x, 11, parent, SONDE_EXPORT_COUNTER, "power (uW)", 0);
  for (size_t i = 0; i < c->cur.n; i++) {
    uint64_t ts = ns_of(c, c->cur.cycle[i]);
    sonde_export_counter(x, 10, ts, c->cur.ua[i]);
    sonde_export_counter(x, 11, ts, (int64_t)((uint64_t)c->cur.ua[i] * c->cur.supply_mv / 1000));
  }
}

static void energy_table(struct mon_cli *c, const struct sonde_mon_energy_row *rows, size_t n,
                         const char *(*label)(struct mon_cli *, size_t, char *), bool json)
{
  char buf[64];
  if (!json)
    fprintf(c->out, "\n%-28s %8s %12s %14s %12s\n", "energy", "count", "cycles", "uA-cycles",
            "uJ");
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    if (!rows[i].count)
      continue;
    if (json) {
      fprintf(c->out, "%s{\"label\":", first ? "" : ",");
      cli_json_string(c->out, label(c, i, buf));
      fprintf(c->out, ",\"count\":%llu,\"cycles\":%llu,\"ua_cycles\":%llu,\"uj\":%.6f}",
              (unsigned long long)rows[i].count, (unsigned long long)rows[i].cycles,
              (unsigned long long)rows[i].ua_cycles, rows[i].uj);
    } else {
      fprintf(c->out, "%-28s %8llu %12llu %14llu %12.6f\n", label(c, i, buf),
              (unsigned long long)rows[i].count, (unsigned long long)rows[i].cycles,
              (unsigned long long)rows[i].ua_cycles, rows[i].uj);
    }
    first = false;
  }
}

static const char *func_label(struct mon_cli *c, size_t i, char *buf)
{
  (void)buf;
  return i < sonde_mon_ftab_count(c->ft) ? fname(c, (long)i) : "(outside)";
}

/* ---- pc ------------------------------------------------------------------------------ */

static int run_pc(struct mon_cli *c)
{
  struct sonde_mon_pc_opts o = {.every_cycles = c->every ? c->every : 1,
                                .phase = c->phase,
                                .max_cycles = c->max_cycles,
                                .max_ms = (unsigned)c->max_ms};
  struct sonde_mon_pc_result r;
  int rc = sonde_mon_pc_poll(c->link, c->ft, &o, &r);
  if (rc < 0)
    cli_error("%s (kept %zu changes from %llu polls)", sonde_mon_link_error(c->link), r.nchanges,
              (unsigned long long)r.polls);
  uint64_t end = r.last_cycle + 1;
  struct sonde_mon_infer inf;
  memset(&inf, 0, sizeof inf);
  sonde_mon_infer_run(c->ft, r.changes, r.nchanges, end, &inf);
  size_t nf = sonde_mon_ftab_count(c->ft);
  struct sonde_mon_prof_row *prof = calloc(nf + 1, sizeof *prof);
  if (prof && sonde_mon_profile(c->ft, &inf, r.changes, r.nchanges, end,
                                c->have_cur ? &c->cur : NULL, prof) < 0) {
    free(prof);
    prof = NULL;
  }
  struct sonde_mon_energy_row *rows = NULL;
  if (c->have_cur) {
    struct sonde_mon_interval *iv = calloc(r.nchanges + 1, sizeof *iv);
    rows = calloc(nf + 1, sizeof *rows);
    if (iv && rows) {
      size_t n = sonde_mon_intervals_from_changes(r.changes, r.nchanges, end, (uint32_t)nf, iv);
      sonde_mon_energy(&c->cur, iv, n, rows, nf + 1);
    }
    free(iv);
  }
  double period = o.every_cycles;
  if (c->link && sonde_mon_link_kind(c->link) != SONDE_MON_LINK_VM)
    period = r.mean_poll_cycles;
  struct sonde_mon_match mt;
  bool have_mt = false, truth_bad = false;
  if (c->truth) {
    FILE *tf = fopen(c->truth, "rb");
    struct sonde_pctrace_reader *tr = NULL;
    struct sonde_diag d;
    struct sonde_mon_change *tc = NULL;
    size_t ntc = 0;
    if (!tf)
      truth_bad = cli_error("%s: cannot open", c->truth);
    else if (sonde_pctrace_reader_new(tf, c->truth, &tr, &d) < 0)
      truth_bad = cli_error("%s", d.msg);
    else if (sonde_mon_changes_from_pctrace(tr, c->ft, &tc, &ntc, NULL) < 0)
      truth_bad = cli_error("%s", sonde_pctrace_reader_error_detail(tr));
    else {
      sonde_mon_compare(tc, ntc, r.changes, r.nchanges, period < 1 ? 1 : (uint64_t)(period + 0.5),
                        &mt);
      have_mt = true;
    }
    free(tc);
    sonde_pctrace_reader_free(tr);
    if (tf)
      fclose(tf);
  }
  switch (c->fmt) {
  case F_CSV:
    fprintf(c->out, "cycle,pc,function\n");
    for (size_t i = 0; i < r.nchanges; i++)
      fprintf(c->out, "%llu,0x%08x,%s\n", (unsigned long long)r.changes[i].cycle,
              (unsigned)r.changes[i].pc, fname(c, r.changes[i].func));
    break;
  case F_JSON:
    fprintf(c->out, "{\"link\":");
    cli_json_string(c->out, sonde_mon_link_name(c->link));
    fprintf(c->out, ",\"polls\":%llu,\"unsampled\":%llu,\"changes\":%zu,\"polls_per_host_s\":%.0f,"
                    "\"mean_poll_cycles\":%.3f,\"min_dwell_cycles\":%llu,\"executions\":%zu,"
                    "\"calls\":%llu,\"returns\":%llu,\"preemptions\":%llu,\"inferred\":%llu,"
                    "\"unexplained\":%llu,\"may_miss_below_cycles\":%.1f,\"exited\":%s",
            (unsigned long long)r.polls, (unsigned long long)r.unsampled, r.nchanges,
            r.polls_per_host_s, r.mean_poll_cycles,
            (unsigned long long)r.min_dwell_cycles, inf.nexecs, (unsigned long long)inf.calls,
            (unsigned long long)inf.returns, (unsigned long long)inf.preemptions,
            (unsigned long long)inf.inferred, (unsigned long long)inf.unexplained, period,
            r.exited ? "true" : "false");
    if (have_mt)
      fprintf(c->out, ",\"truth_transitions\":%llu,\"matched\":%llu,\"precision\":%.6f,"
                      "\"recall\":%.6f",
              (unsigned long long)mt.truth, (unsigned long long)mt.matched, mt.precision,
              mt.recall);
    if (prof) {
      fprintf(c->out, ",\"functions\":[");
      bool first = true;
      for (size_t i = 0; i <= nf; i++) {
        const struct sonde_mon_prof_row *p = &prof[i];
        if (!p->calls && !p->self_cycles)
          continue;
        fprintf(c->out, "%s{\"name\":", first ? "" : ",");
        cli_json_string(c->out, func_label(c, i, NULL));
        fprintf(c->out, ",\"calls\":%llu,\"inferred\":%llu,\"min_cycles\":%llu,"
                        "\"max_cycles\":%llu,\"incl_cycles\":%llu,\"self_cycles\":%llu",
                (unsigned long long)p->calls, (unsigned long long)p->inferred,
                (unsigned long long)p->min_cycles, (unsigned long long)p->max_cycles,
                (unsigned long long)p->incl_cycles, (unsigned long long)p->self_cycles);
        if (c->have_cur)
          fprintf(c->out, ",\"incl_uj\":%.6f,\"self_uj\":%.6f",
                  sonde_mon_uj(&c->cur, p->incl_ua_cycles), sonde_mon_uj(&c->cur, p->self_ua_cycles));
        fprintf(c->out, "}");
        first = false;
      }
      fprintf(c->out, "]");
    }
    if (rows) {
      fprintf(c->out, ",\"energy\":[");
      energy_table(c, rows, nf + 1, func_label, true);
      fprintf(c->out, "]");
    }
    fprintf(c->out, "}\n");
    break;
  case F_PERFETTO: {
    struct sonde_export *x = sonde_export_new(SONDE_EXPORT_PERFETTO, file_write, c->out);
    sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "target", 1);
    sonde_export_track(x, 2, 1, SONDE_EXPORT_THREAD, "functions (PC polling)", 1);
    /* nested executions: ends come from a stack, as slices must nest */
    size_t stack[256], depth = 0;
    for (size_t i = 0; i < inf.nexecs; i++) {
      const struct sonde_mon_exec *e = &inf.execs[i];
      while (depth && (inf.execs[stack[depth - 1]].depth >= e->depth))
        sonde_export_slice_end(x, 2, ns_of(c, inf.execs[stack[--depth]].end));
      struct sonde_export_arg a = {"inferred", false, e->inferred, NULL};
      sonde_export_slice_begin(x, 2, ns_of(c, e->start), fname(c, e->func), &a, 1);
      if (depth < 256)
        stack[depth++] = i;
    }
    while (depth)
      sonde_export_slice_end(x, 2, ns_of(c, inf.execs[stack[--depth]].end));
    counters(c, x, 1);
    if (sonde_export_finish(x) < 0)
      cli_error("perfetto: %s", sonde_export_error(x));
    sonde_export_free(x);
    break;
  }
  default:
    fprintf(c->out, "link %s: %llu polls, every %.2f cycles, %.0f polls/s of host time%s\n",
            sonde_mon_link_name(c->link), (unsigned long long)r.polls, r.mean_poll_cycles,
            r.polls_per_host_s, r.exited ? ", target exited" : "");
    if (r.unsampled)
      fprintf(c->out, "%llu polls found no PC (DWT_PCSR 0xFFFFFFFF: the core halted or ended)\n",
              (unsigned long long)r.unsampled);
    fprintf(c->out, "%zu function changes; %zu executions inferred (%llu calls, %llu returns, "
                    "%llu preemptions, %llu through an unseen function, %llu unexplained)\n",
            r.nchanges, inf.nexecs, (unsigned long long)inf.calls,
            (unsigned long long)inf.returns, (unsigned long long)inf.preemptions,
            (unsigned long long)inf.inferred, (unsigned long long)inf.unexplained);
    if (period <= 1.0)
      fprintf(c->out, "nothing can be missed: every cycle was polled\n");
    else
      fprintf(c->out, "may be missed: any stay in a function shorter than %.0f cycles (the poll "
                      "period); shortest stay seen %llu cycles\n",
              period, (unsigned long long)r.min_dwell_cycles);
    if (prof) {
      /* statically called by a function that ran, never seen itself */
      size_t ne = sonde_mon_ftab_edges(c->ft), shown = 0, unseen = 0;
      for (size_t k = 0; k < ne; k++) {
        size_t a, b;
        sonde_mon_ftab_edge_at(c->ft, k, &a, &b);
        if (!prof[a].calls || prof[b].calls || prof[b].self_cycles)
          continue;
        bool dup = false;
        for (size_t j = 0; j < k && !dup; j++) {
          size_t a2, b2;
          sonde_mon_ftab_edge_at(c->ft, j, &a2, &b2);
          dup = b2 == b && prof[a2].calls;
        }
        if (dup)
          continue;
        if (!unseen++)
          fprintf(c->out, "never seen, though called by functions that ran (missed, or not called "
                          "in this run):");
        if (shown++ < 12)
          fprintf(c->out, " %s", fname(c, (long)b));
      }
      if (unseen)
        fprintf(c->out, "%s (%zu)\n", unseen > shown ? " ..." : "", unseen);
    }
    if (have_mt)
      fprintf(c->out, "against %s: %llu of %llu true transitions seen (recall %.4f), precision "
                      "%.4f\n",
              c->truth, (unsigned long long)mt.matched, (unsigned long long)mt.truth, mt.recall,
              mt.precision);
    if (prof) {
      fprintf(c->out, "\n%-24s %8s %10s %10s %12s %12s", "function", "calls", "min", "max",
              "incl cycles", "self cycles");
      if (c->have_cur)
        fprintf(c->out, " %12s %12s", "incl uJ", "self uJ");
      fprintf(c->out, "\n");
      for (size_t i = 0; i <= nf; i++) {
        const struct sonde_mon_prof_row *p = &prof[i];
        if (!p->calls && !p->self_cycles)
          continue;
        fprintf(c->out, "%-24s %8llu %10llu %10llu %12llu %12llu", func_label(c, i, NULL),
                (unsigned long long)p->calls, (unsigned long long)p->min_cycles,
                (unsigned long long)p->max_cycles, (unsigned long long)p->incl_cycles,
                (unsigned long long)p->self_cycles);
        if (c->have_cur)
          fprintf(c->out, " %12.6f %12.6f", sonde_mon_uj(&c->cur, p->incl_ua_cycles),
                  sonde_mon_uj(&c->cur, p->self_ua_cycles));
        fprintf(c->out, "\n");
      }
    }
    fprintf(c->out, "\n%14s  %-10s  %s\n", "cycle", "pc", "function");
    for (size_t i = 0; i < r.nchanges; i++)
      fprintf(c->out, "%14llu  0x%08x  %s\n", (unsigned long long)r.changes[i].cycle,
              (unsigned)r.changes[i].pc, fname(c, r.changes[i].func));
  }
  free(prof);
  free(rows);
  sonde_mon_infer_free(&inf);
  sonde_mon_pc_result_free(&r);
  int crc = cli_close_output(c->out, c->output);
  c->out = NULL;
  return rc < 0 || truth_bad ? CLI_FAIL : crc;
}

/* ---- watch ------------------------------------------------------------------------- */

static struct sonde_mon_trigger g_trig[4];
static unsigned g_ntrig;

static const char *trig_label(struct mon_cli *c, size_t i, char *buf)
{
  (void)c;
  (void)buf;
  return i < g_ntrig ? g_trig[i].name : "?";
}

static int run_watch(struct mon_cli *c, const struct cli_command_help *help)
{
  g_ntrig = 0;
  for (unsigned i = 0; i < c->nfuncs; i++) {
    struct sonde_mon_trigger *t = &g_trig[g_ntrig < 4 ? g_ntrig : 3];
    if (g_ntrig++ >= 4)
      break;
    t->kind = SONDE_MON_TRIG_FUNC_ENTRY;
    snprintf(t->name, sizeof t->name, "%s", c->funcs[i]);
    if (resolve(c, c->funcs[i], &t->addr, NULL))
      return CLI_FAIL;
  }
  for (unsigned i = 0; i < c->nwrites; i++) {
    struct sonde_mon_trigger *t = &g_trig[g_ntrig < 4 ? g_ntrig : 3];
    if (g_ntrig++ >= 4)
      break;
    t->kind = SONDE_MON_TRIG_WRITE_VAR;
    snprintf(t->name, sizeof t->name, "%s", c->writes[i]);
    if (resolve(c, c->writes[i], &t->addr, &t->size))
      return CLI_FAIL;
  }
  for (unsigned i = 0; i < c->nreads; i++) {
    struct sonde_mon_trigger *t = &g_trig[g_ntrig < 4 ? g_ntrig : 3];
    if (g_ntrig++ >= 4)
      break;
    t->kind = SONDE_MON_TRIG_READ_RANGE;
    snprintf(t->name, sizeof t->name, "read %s", c->reads[i]);
    char a[64];
    snprintf(a, sizeof a, "%s", c->reads[i]);
    char *colon = strchr(a, ':');
    uint64_t base, size;
    if (!colon || (*colon = 0, cli_parse_u64(a, &base)) || cli_parse_u64(colon + 1, &size) ||
        !size || (size & (size - 1)))
      return cli_usage_error(help, "--read '%s': expected ADDR:SIZE, SIZE a power of 2",
                             c->reads[i]);
    t->addr = (uint32_t)base;
    t->size = (uint32_t)size;
  }
  if (c->markers) {
    uint32_t m[4];
    long n = sonde_mon_find_markers(read_image, c->sym, c->ft, 0, UINT32_MAX, m, 4);
    for (long i = 0; i < n && i < 4; i++) {
      struct sonde_mon_trigger *t = &g_trig[g_ntrig < 4 ? g_ntrig : 3];
      if (g_ntrig++ >= 4)
        break;
      t->kind = SONDE_MON_TRIG_MARKER;
      t->addr = m[i];
      char where[48];
      sonde_sym_format(c->sym, m[i], where, sizeof where);
      snprintf(t->name, sizeof t->name, "marker %s", where);
    }
  }
  if (g_ntrig > 4)
    return cli_usage_error(help, "%u triggers, but the DWT has 4 comparators", g_ntrig);
  if (!g_ntrig)
    return cli_usage_error(help, "no trigger (--func, --write, --read or --markers)");
  struct sonde_mon_watch_opts o = {.max_cycles = c->max_cycles,
                                   .max_ms = (unsigned)c->max_ms,
                                   .drain_every = c->drain_every,
                                   .drain_only = c->drain_only,
                                   .swo_acpr = (uint32_t)c->swo_acpr};
  struct sonde_mon_watch_result r;
  int rc = sonde_mon_watch(c->link, g_trig, g_ntrig, &o, &r);
  if (rc < 0)
    cli_error("%s (kept %zu events)", sonde_mon_link_error(c->link), r.nevents);
  uint64_t end = 0;
  sonde_mon_cycles(c->link, &end);
  /* energy per event window (event -> next event) and per state value */
  struct sonde_mon_energy_row rows[4];
  if (c->have_cur && r.nevents) {
    struct sonde_mon_interval *iv = calloc(r.nevents, sizeof *iv);
    if (iv) {
      for (size_t i = 0; i < r.nevents; i++) {
        iv[i].start = r.events[i].cycle;
        iv[i].end = i + 1 < r.nevents ? r.events[i + 1].cycle : end;
        iv[i].label = r.events[i].trigger;
      }
      sonde_mon_energy(&c->cur, iv, r.nevents, rows, g_ntrig);
    }
    free(iv);
  }
  if (c->fmt == F_CSV) {
    fprintf(c->out, "cycle,trigger,pc,value\n");
    for (size_t i = 0; i < r.nevents; i++)
      fprintf(c->out, "%llu,%s,0x%08x,%u\n", (unsigned long long)r.events[i].cycle,
              g_trig[r.events[i].trigger].name, (unsigned)r.events[i].pc,
              (unsigned)r.events[i].value);
  } else if (c->fmt == F_JSON) {
    fprintf(c->out, "{\"link\":");
    cli_json_string(c->out, sonde_mon_link_name(c->link));
    fprintf(c->out, ",\"events\":%zu,\"lost\":%llu,\"overflows\":%llu,\"drains\":%llu,"
                    "\"drains_per_host_s\":%.0f,\"exited\":%s",
            r.nevents, (unsigned long long)r.lost, (unsigned long long)r.overflows,
            (unsigned long long)r.drains, r.drains_per_host_s, r.exited ? "true" : "false");
    if (c->have_cur) {
      fprintf(c->out, ",\"energy_per_window\":[");
      energy_table(c, rows, g_ntrig, trig_label, true);
      fprintf(c->out, "]");
    }
    fprintf(c->out, "}\n");
  } else if (c->fmt == F_PERFETTO) {
    struct sonde_export *x = sonde_export_new(SONDE_EXPORT_PERFETTO, file_write, c->out);
    sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "target", 1);
    for (unsigned t = 0; t < g_ntrig; t++)
      sonde_export_track(x, 100 + t, 1, SONDE_EXPORT_SLICES, g_trig[t].name, 0);
    /* a state variable is a timeline of values (a slice from each write to
     * the next, as the paper's Figure 8); other triggers are instants */
    bool open[4] = {false, false, false, false};
    for (size_t i = 0; i < r.nevents; i++) {
      struct sonde_mon_event *e = &r.events[i];
      uint64_t ts = ns_of(c, e->cycle);
      struct sonde_export_arg a = {"value", false, e->value, NULL};
      if (g_trig[e->trigger].kind == SONDE_MON_TRIG_WRITE_VAR) {
        char nm[32];
        snprintf(nm, sizeof nm, "%u", (unsigned)e->value);
        if (open[e->trigger])
          sonde_export_slice_end(x, 100 + e->trigger, ts);
        sonde_export_slice_begin(x, 100 + e->trigger, ts, nm, &a, 1);
        open[e->trigger] = true;
      } else {
        sonde_export_instant(x, 100 + e->trigger, ts, g_trig[e->trigger].name, &a, 1);
      }
    }
    for (unsigned t = 0; t < g_ntrig; t++)
      if (open[t])
        sonde_export_slice_end(x, 100 + t, ns_of(c, end));
    counters(c, x, 1);
    if (sonde_export_finish(x) < 0)
      cli_error("perfetto: %s", sonde_export_error(x));
    sonde_export_free(x);
  } else {
    fprintf(c->out, "link %s: %zu events, %llu lost, %llu ITM overflows, %llu drains (%.0f/s of "
                    "host time)%s\n",
            sonde_mon_link_name(c->link), r.nevents, (unsigned long long)r.lost,
            (unsigned long long)r.overflows, (unsigned long long)r.drains, r.drains_per_host_s,
            r.exited ? ", target exited" : "");
    fprintf(c->out, "\n%14s  %-28s  %-10s  %s\n", "cycle", "trigger", "pc", "value");
    for (size_t i = 0; i < r.nevents; i++)
      fprintf(c->out, "%14llu  %-28s  0x%08x  %u\n", (unsigned long long)r.events[i].cycle,
              g_trig[r.events[i].trigger].name, (unsigned)r.events[i].pc,
              (unsigned)r.events[i].value);
    if (c->have_cur)
      energy_table(c, rows, g_ntrig, trig_label, false);
  }
  sonde_mon_watch_result_free(&r);
  int crc = cli_close_output(c->out, c->output);
  c->out = NULL;
  return rc < 0 ? CLI_FAIL : crc;
}

/* ---- break ---------------------------------------------------------------------------- */

static int run_break(struct mon_cli *c, const struct cli_command_help *help)
{
  uint32_t addrs[8];
  if (!c->nats)
    return cli_usage_error(help, "no breakpoint (--at FUNCTION|ADDR)");
  for (unsigned i = 0; i < c->nats; i++)
    if (resolve(c, c->ats[i], &addrs[i], NULL))
      return CLI_FAIL;
  /* the free run first (vm): the perturbation is the difference */
  uint64_t free_cycles = 0;
  if (c->vm) {
    struct sonde_vm *ref = NULL;
    size_t n = 0;
    char *img = cli_read_file(c->elf, &n);
    if (img && sonde_vm_new(c->machine, &ref) == 0 && sonde_vm_load_elf(ref, img, n, c->elf) == 0 &&
        sonde_vm_reset(ref) == 0) {
      sonde_vm_set_output(ref, quiet_out, NULL);
      struct sonde_vm_stop s;
      struct sonde_vm_stats st;
      sonde_vm_run(ref, c->max_cycles ? c->max_cycles : 10000000000ull, &s);
      sonde_vm_get_stats(ref, &st);
      free_cycles = st.cycles;
    }
    free(img);
    sonde_vm_free(ref);
  }
  struct sonde_mon_bp_opts o = {.max_cycles = c->max_cycles, .max_ms = (unsigned)c->max_ms};
  struct sonde_mon_bp_result r;
  int rc = sonde_mon_break(c->link, addrs, c->nats, &o, &r);
  if (rc < 0)
    cli_error("%s (kept %zu events)", sonde_mon_link_error(c->link), r.nevents);
  /* a probe's halt, in cycles the core could have run (--clock) */
  uint64_t halt_hz = c->vm ? 0 : c->clock_hz;
  double pert = r.nevents && free_cycles && r.total_cycles >= free_cycles
                    ? (double)(r.total_cycles - free_cycles) / (double)r.nevents
                    : 0;
  if (c->fmt == F_CSV) {
    fprintf(c->out, "cycle,addr,function,halt_ns\n");
    for (size_t i = 0; i < r.nevents; i++)
      fprintf(c->out, "%llu,0x%08x,%s,%llu\n", (unsigned long long)r.events[i].cycle,
              (unsigned)r.events[i].addr, c->ats[r.events[i].bp],
              (unsigned long long)r.events[i].halt_ns);
  } else if (c->fmt == F_JSON) {
    fprintf(c->out, "{\"link\":");
    cli_json_string(c->out, sonde_mon_link_name(c->link));
    fprintf(c->out, ",\"events\":%zu,\"total_cycles\":%llu,\"free_run_cycles\":%llu,"
                    "\"perturbation_cycles_per_event\":%.3f,\"halt_ns_per_event\":%.0f,",
            r.nevents, (unsigned long long)r.total_cycles, (unsigned long long)free_cycles, pert,
            r.halt_ns_per_event);
    if (halt_hz)
      fprintf(c->out, "\"halt_cycles_per_event\":%.0f,", r.halt_ns_per_event * (double)halt_hz / 1e9);
    fprintf(c->out, "\"exited\":%s}\n", r.exited ? "true" : "false");
  } else if (c->fmt == F_PERFETTO) {
    struct sonde_export *x = sonde_export_new(SONDE_EXPORT_PERFETTO, file_write, c->out);
    sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "target", 1);
    for (unsigned b = 0; b < c->nats; b++)
      sonde_export_track(x, 100 + b, 1, SONDE_EXPORT_SLICES, c->ats[b], 0);
    for (size_t i = 0; i < r.nevents; i++) {
      struct sonde_export_arg a = {"halt_ns", false, (int64_t)r.events[i].halt_ns, NULL};
      sonde_export_instant(x, 100 + r.events[i].bp, ns_of(c, r.events[i].cycle),
                           c->ats[r.events[i].bp], &a, 1);
    }
    if (sonde_export_finish(x) < 0)
      cli_error("perfetto: %s", sonde_export_error(x));
    sonde_export_free(x);
  } else {
    fprintf(c->out, "link %s: %zu breakpoint events; the core stood still %.0f ns of host time "
                    "per event",
            sonde_mon_link_name(c->link), r.nevents, r.halt_ns_per_event);
    if (halt_hz)
      fprintf(c->out, " (%.0f cycles at %llu Hz)", r.halt_ns_per_event * (double)halt_hz / 1e9,
              (unsigned long long)halt_hz);
    if (free_cycles)
      fprintf(c->out, "; target cycles %llu vs %llu unmonitored: %.3f cycles per event",
              (unsigned long long)r.total_cycles, (unsigned long long)free_cycles, pert);
    fprintf(c->out, "\n\n%14s  %-10s  %s\n", "cycle", "addr", "breakpoint");
    for (size_t i = 0; i < r.nevents; i++)
      fprintf(c->out, "%14llu  0x%08x  %s\n", (unsigned long long)r.events[i].cycle,
              (unsigned)r.events[i].addr, c->ats[r.events[i].bp]);
  }
  sonde_mon_bp_result_free(&r);
  int crc = cli_close_output(c->out, c->output);
  c->out = NULL;
  return rc < 0 ? CLI_FAIL : crc;
}

int cmd_monitor(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde monitor pc -e <elf> [--link vm|openocd:HOST:PORT|gdb:HOST:PORT] [--every <C>] "
      "[--format text|csv|json|perfetto] [--energy] [-o <trace>]\n"
      "sonde monitor watch -e <elf> [--link ...] [--func <f>]... [--write <var>]... "
      "[--read <addr>:<size>]... [--markers] [-o <trace>]\n"
      "sonde monitor break -e <elf> [--link ...] --at <f|addr>... [-o <trace>]",
      "Monitor a running target through its debug port, as AVEKSHA does (docs/monitor.md).\n"
      "pc: poll DWT_PCSR and log function changes, infer executions and nesting from the\n"
      "static call graph, report what the achieved rate may miss. watch: DWT comparators\n"
      "as triggers (function entry, writes to a state variable, reads in a peripheral\n"
      "range, `mov r11, r11` markers); data events leave through ITM data trace, PC\n"
      "matches are drained over the link; losses are counted. break: FPB breakpoints,\n"
      "halt, read, resume; the perturbation is reported. With --link vm (default) the\n"
      "firmware runs on the virtual Cortex-M from reset to its exit."};
  static struct mon_cli c;
  memset(&c, 0, sizeof c);
  c.link_spec = "vm";
  c.machine_name = "cm3";
  c.format = "text";
  const struct cli_opt options[] = {
      OPT_GROUP("target"),
      OPT_ELF(&c.elf),
      OPT_STRING(0, "link", "<link>", &c.link_spec,
                 "vm (default), openocd:HOST:PORT (Tcl RPC, 6666) or gdb:HOST:PORT"),
      OPT_STRING('m', "machine", "<name>", &c.machine_name, "vm: built-in machine or machine file (default cm3)"),
      OPT_FLAG(0, "stripped", &c.stripped,
               "ignore the ELF's symbols: functions from the targets of calls (disassembly)"),
      OPT_U64(0, "max-cycles", "<n>", &c.max_cycles, "vm: stop after <n> cycles (default 10G)"),
      OPT_U64(0, "max-ms", "<ms>", &c.max_ms, "probes: monitor for <ms> of host time (default 1000)"),
      OPT_GROUP("pc"),
      OPT_U64(0, "every", "<C>", &c.every, "vm: poll every <C> cycles (default 1)"),
      OPT_U64(0, "phase", "<cycle>", &c.phase, "vm: first poll at <cycle> (default 0)"),
      OPT_STRING(0, "truth", "<pctrace>", &c.truth,
                 "compare the function changes with a ground truth (sonde run --trace-pc): "
                 "precision and recall of transitions"),
      OPT_GROUP("watch"),
      OPT_CALLBACK(0, "func", "<name|addr>", &c, opt_func, "trigger on entry to a function"),
      OPT_CALLBACK(0, "write", "<var|addr>", &c, opt_write, "trigger on writes to a variable"),
      OPT_CALLBACK(0, "read", "<addr>:<size>", &c, opt_read,
                   "trigger on reads in an aligned power-of-2 range (a peripheral)"),
      OPT_FLAG(0, "markers", &c.markers, "trigger on the `mov r11, r11` marker instructions"),
      OPT_U64(0, "drain-every", "<C>", &c.drain_every,
              "vm: read the comparators' MATCHED bits every <C> cycles (default 100)"),
      OPT_FLAG(0, "drain-only", &c.drain_only, "vm: no ITM data trace, drain every trigger"),
      OPT_U64(0, "swo-acpr", "<n>", &c.swo_acpr, "vm: SWO bit time - 1 in cycles (default 0)"),
      OPT_GROUP("break"),
      OPT_CALLBACK(0, "at", "<name|addr>", &c, opt_at, "a breakpoint (FPB comparator)"),
      OPT_GROUP("energy and output"),
      OPT_FLAG(0, "energy", &c.energy,
               "vm: current from the power model: energy per function (pc) or per event window "
               "(watch), counter tracks (perfetto)"),
      OPT_STRING(0, "current", "<csv>", &c.current_csv,
                 "current samples from a meter (time,current CSV; docs/formats.md)"),
      OPT_U64(0, "voltage", "<mV>", &c.voltage_mv, "supply voltage (default: the machine's)"),
      OPT_U64(0, "clock", "<hz>", &c.clock_hz,
              "probes: the target's clock (meter times to cycles; break: halt time in cycles)"),
      OPT_STRING(0, "format", "<fmt>", &c.format,
                 "text (default), csv (pc: cycle,pc,function), json or perfetto"),
      OPT_JSON(&c.json),
      OPT_OUTPUT(&c.output),
      OPT_END(),
  };
  int nargs;
  int rc = cli_parse(argc, argv, options, &help, &nargs);
  if (rc < 0)
    return CLI_OK;
  if (rc)
    return rc;
  if (nargs != 1)
    return cli_usage_error(&help, nargs ? "one mode: pc, watch or break"
                                        : "missing mode (pc, watch or break)");
  if (c.json)
    c.format = "json";
  const char *mode = argv[0];
  if (strcmp(mode, "pc") && strcmp(mode, "watch") && strcmp(mode, "break"))
    return cli_usage_error(&help, "unknown mode '%s' (pc, watch or break)", mode);
  if (c.current_csv && strcmp(c.link_spec, "vm"))
    cli_warn("--current: times are matched to target cycles at the machine clock");
  rc = setup(&c, &help);
  if (!rc) {
    if (!strcmp(mode, "pc"))
      rc = run_pc(&c);
    else if (!strcmp(mode, "watch"))
      rc = run_watch(&c, &help);
    else
      rc = run_break(&c, &help);
  }
  if (c.out)
    cli_close_output(c.out, c.output);
  teardown(&c);
  return rc;
}
