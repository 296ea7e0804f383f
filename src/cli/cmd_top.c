/* `sonde top`: statistical profile from periodic PC samples in an ITM/DWT
 * stream (issue 4 item 7, docs/top.md): exact sample counts per function or
 * source line, the share of sleep, and an exception table (count, total and
 * maximum duration, nesting) from exception trace. Refreshes like top(1) on a
 * terminal; otherwise prints one report at end of input. Engine:
 * include/sonde/profile.h; input pipeline shared with `sonde itm`. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_itm_input.h"
#include "sonde/itm.h"
#include "sonde/profile.h"
#include "sonde/sym.h"

enum { OUT_TEXT, OUT_JSON, OUT_FOLDED, OUT_CALLGRIND };

struct top_ctx {
  FILE *out;
  int format;
  enum sonde_profile_by by;
  struct sonde_sym *sym;
  struct sonde_profile *prof;
  const struct sonde_itm_stats *st;
  uint64_t limit;
};

static const char *row_name(const struct sonde_profile_row *r, char *buf, size_t cap)
{
  if (r->function)
    return r->function;
  snprintf(buf, cap, "0x%08x", r->addr);
  return buf;
}

static const char *ctx_name(unsigned ctx, char *buf, size_t cap)
{
  if (ctx == 0)
    return "Thread";
  return sonde_itm_exception_name(ctx, buf, cap);
}

static int report_text(struct top_ctx *c, bool clear)
{
  FILE *o = c->out;
  struct sonde_profile_totals t;
  sonde_profile_get_totals(c->prof, &t);
  const struct sonde_profile_row *rows;
  long n = sonde_profile_report(c->prof, c->sym, c->by, false, &rows);
  if (n < 0)
    return cli_error("out of memory");
  if (clear)
    fputs("\033[H\033[2J", o);
  double tot = t.samples ? (double)t.samples : 1;
  if (t.untracked)
    fprintf(o, "warning: %llu samples (%.2f%%) at addresses beyond the %u distinct ones tracked "
               "are in no row: is the stream corrupt, or the baud rate wrong?\n",
            (unsigned long long)t.untracked, 100.0 * (double)t.untracked / tot,
            SONDE_PROFILE_MAX_PCS);
  fprintf(o, "samples %llu, sleep %llu (%.2f%%), distinct PCs %llu, overflows %llu, "
             "bytes skipped %llu\n",
          (unsigned long long)t.samples, (unsigned long long)t.sleep, 100.0 * (double)t.sleep / tot,
          (unsigned long long)t.distinct_pcs, (unsigned long long)t.overflows,
          (unsigned long long)c->st->skipped_bytes);
  if (t.have_ts)
    fprintf(o, "time span %llu cycles\n", (unsigned long long)(t.last_ts - t.first_ts));
  fprintf(o, "\n%8s %10s  %s\n", "%", "samples", c->by == SONDE_PROFILE_BY_LINE ? "line" : "function");
  char buf[64];
  for (long i = 0; i < n && (!c->limit || (uint64_t)i < c->limit); i++) {
    const struct sonde_profile_row *r = &rows[i];
    fprintf(o, "%7.2f%% %10llu  ", 100.0 * (double)r->samples / tot,
            (unsigned long long)r->samples);
    if (c->by == SONDE_PROFILE_BY_LINE) {
      if (r->file)
        fprintf(o, "%s:%u (%s)\n", r->file, r->line, row_name(r, buf, sizeof buf));
      else
        fprintf(o, "0x%08x (%s)\n", r->addr, row_name(r, buf, sizeof buf));
    } else {
      fprintf(o, "%s\n", row_name(r, buf, sizeof buf));
    }
  }
  if (t.sleep)
    fprintf(o, "%7.2f%% %10llu  [sleep]\n", 100.0 * (double)t.sleep / tot,
            (unsigned long long)t.sleep);
  const struct sonde_profile_exc *ex;
  size_t ne = sonde_profile_exceptions(c->prof, &ex);
  if (ne) {
    fprintf(o, "\n%5s  %-14s %10s %14s %12s %12s %6s %8s\n", "exc", "name", "count",
            "total_cycles", "avg_cycles", "max_cycles", "depth", "nested");
    for (size_t i = 0; i < ne; i++) {
      char nb[32];
      fprintf(o, "%5u  %-14s %10llu ", ex[i].number,
              sonde_itm_exception_name(ex[i].number, nb, sizeof nb),
              (unsigned long long)ex[i].count);
      if (ex[i].timed)
        fprintf(o, "%14llu %12llu %12llu", (unsigned long long)ex[i].total_cycles,
                (unsigned long long)(ex[i].total_cycles / ex[i].timed),
                (unsigned long long)ex[i].max_cycles);
      else
        fprintf(o, "%14s %12s %12s", "-", "-", "-");
      fprintf(o, " %6u %8llu\n", ex[i].max_depth, (unsigned long long)ex[i].nested);
    }
  }
  if (t.unmatched)
    fprintf(o, "\n%llu exception events did not match the exception stack (lost packets?)\n",
            (unsigned long long)t.unmatched);
  fflush(o);
  return CLI_OK;
}

static int report_json(struct top_ctx *c)
{
  FILE *o = c->out;
  struct sonde_profile_totals t;
  sonde_profile_get_totals(c->prof, &t);
  const struct sonde_profile_row *rows;
  long n = sonde_profile_report(c->prof, c->sym, c->by, false, &rows);
  if (n < 0)
    return cli_error("out of memory");
  double tot = t.samples ? (double)t.samples : 1;
  fprintf(o, "{\"by\":\"%s\",\"samples\":%llu,\"sleep\":%llu,\"sleep_share\":%.6f,"
             "\"distinct_pcs\":%llu,\"overflows\":%llu,\"skipped\":%llu,\"unmatched\":%llu",
          c->by == SONDE_PROFILE_BY_LINE ? "line" : "function", (unsigned long long)t.samples,
          (unsigned long long)t.sleep, (double)t.sleep / tot, (unsigned long long)t.distinct_pcs,
          (unsigned long long)t.overflows, (unsigned long long)c->st->skipped_bytes,
          (unsigned long long)t.unmatched);
  fprintf(o, ",\"untracked\":%llu", (unsigned long long)t.untracked);
  if (t.have_ts)
    fprintf(o, ",\"first_ts\":%llu,\"last_ts\":%llu", (unsigned long long)t.first_ts,
            (unsigned long long)t.last_ts);
  fputs(",\"rows\":[", o);
  for (long i = 0; i < n && (!c->limit || (uint64_t)i < c->limit); i++) {
    const struct sonde_profile_row *r = &rows[i];
    fprintf(o, "%s{\"function\":", i ? "," : "");
    if (r->function)
      cli_json_string(o, r->function);
    else
      fputs("null", o);
    if (c->by == SONDE_PROFILE_BY_LINE) {
      fputs(",\"file\":", o);
      if (r->file)
        cli_json_string(o, r->file);
      else
        fputs("null", o);
      fprintf(o, ",\"line\":%u", r->line);
    }
    fprintf(o, ",\"addr\":%u,\"samples\":%llu,\"share\":%.6f}", r->addr,
            (unsigned long long)r->samples, (double)r->samples / tot);
  }
  fputs("],\"exceptions\":[", o);
  const struct sonde_profile_exc *ex;
  size_t ne = sonde_profile_exceptions(c->prof, &ex);
  for (size_t i = 0; i < ne; i++) {
    char nb[32];
    fprintf(o, "%s{\"exc\":%u,\"name\":\"%s\",\"count\":%llu,\"timed\":%llu,"
               "\"total_cycles\":%llu,\"max_cycles\":%llu,\"max_depth\":%u,\"nested\":%llu}",
            i ? "," : "", ex[i].number, sonde_itm_exception_name(ex[i].number, nb, sizeof nb),
            (unsigned long long)ex[i].count, (unsigned long long)ex[i].timed,
            (unsigned long long)ex[i].total_cycles, (unsigned long long)ex[i].max_cycles,
            ex[i].max_depth, (unsigned long long)ex[i].nested);
  }
  fputs("]}\n", o);
  return CLI_OK;
}

/* Folded stacks (flamegraph.pl, speedscope): "context;function[;file:line] count". */
static int report_folded(struct top_ctx *c)
{
  FILE *o = c->out;
  struct sonde_profile_totals t;
  sonde_profile_get_totals(c->prof, &t);
  const struct sonde_profile_row *rows;
  long n = sonde_profile_report(c->prof, c->sym, c->by, true, &rows);
  if (n < 0)
    return cli_error("out of memory");
  char buf[64], cb[32];
  for (long i = 0; i < n; i++) {
    const struct sonde_profile_row *r = &rows[i];
    fprintf(o, "%s;%s", ctx_name(r->context, cb, sizeof cb), row_name(r, buf, sizeof buf));
    if (c->by == SONDE_PROFILE_BY_LINE) {
      if (r->file)
        fprintf(o, ";%s:%u", r->file, r->line);
      else
        fprintf(o, ";0x%08x", r->addr);
    }
    fprintf(o, " %llu\n", (unsigned long long)r->samples);
  }
  if (t.sleep)
    fprintf(o, "[sleep] %llu\n", (unsigned long long)t.sleep);
  return CLI_OK;
}

/* Callgrind format (kcachegrind): one cost line per function or line. */
static int report_callgrind(struct top_ctx *c)
{
  FILE *o = c->out;
  struct sonde_profile_totals t;
  sonde_profile_get_totals(c->prof, &t);
  const struct sonde_profile_row *rows;
  long n = sonde_profile_report(c->prof, c->sym, c->by, false, &rows);
  if (n < 0)
    return cli_error("out of memory");
  fprintf(o, "# callgrind format\nversion: 1\ncreator: sonde top\npositions: line\n"
             "events: Samples\nsummary: %llu\n\n",
          (unsigned long long)(t.samples - t.sleep));
  char buf[64];
  for (long i = 0; i < n; i++) {
    const struct sonde_profile_row *r = &rows[i];
    fprintf(o, "fl=%s\nfn=%s\n%u %llu\n", r->file ? r->file : "???", row_name(r, buf, sizeof buf),
            c->by == SONDE_PROFILE_BY_LINE ? r->line : 0, (unsigned long long)r->samples);
  }
  return CLI_OK;
}

int cmd_top(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde top -e <elf> [--by function|line] [--interval <ms>] [--format "
      "text|json|folded|callgrind] [--tpiu[=<id>]] [--line <mode>:<baud> "
      "--sample-rate <hz>] <input>",
      "Statistical profile from the periodic PC samples (DWT_CTRL.PCSAMPLENA) of an\n"
      "ITM/DWT stream: exact sample counts per function or source line, the share of\n"
      "samples taken while sleeping, and, from exception trace (DWT_CTRL.EXCTRCENA), a\n"
      "table of exceptions with count, total and maximum duration and nesting. On a\n"
      "terminal the text report refreshes every --interval ms; otherwise one report\n"
      "is printed at end of input. <input> as for 'sonde itm'."};
  const char *elf = NULL, *by = "function", *format = "text", *output = NULL;
  const char *tpiu = NULL, *line = NULL, *rate = NULL;
  uint64_t interval = 1000, la_channel = ITM_LA_CHANNEL_UNSET, limit = 0, prescale = 1;
  bool wait_sync = false;
  const struct cli_opt options[] = {
      OPT_ITM_INPUT(&tpiu, &line, &rate, &la_channel, &wait_sync, &prescale),
      OPT_GROUP("report"),
      OPT_ELF(&elf),
      OPT_STRING(0, "by", "<key>", &by, "group samples by 'function' (default) or 'line'"),
      OPT_U64(0, "interval", "<ms>", &interval, "refresh period on a terminal (default 1000)"),
      OPT_STRING(0, "format", "<fmt>", &format, "text (default), json, folded or callgrind"),
      OPT_U64('n', "limit", "<rows>", &limit, "text/json: show at most <rows> rows (0 = all)"),
      OPT_OUTPUT(&output),
      OPT_END(),
  };
  int nargs;
  int rc = cli_parse(argc, argv, options, &help, &nargs);
  if (rc < 0)
    return CLI_OK;
  if (rc)
    return rc;
  if (nargs != 1)
    return cli_usage_error(&help, nargs ? "too many inputs" : "missing <input>");
  if (!elf)
    return cli_usage_error(&help, "missing -e <elf>");
  enum sonde_profile_by key;
  if (!strcmp(by, "function"))
    key = SONDE_PROFILE_BY_FUNCTION;
  else if (!strcmp(by, "line"))
    key = SONDE_PROFILE_BY_LINE;
  else
    return cli_usage_error(&help, "unknown --by '%s' (function or line)", by);
  int fmt = !strcmp(format, "text") ? OUT_TEXT : !strcmp(format, "json") ? OUT_JSON
            : !strcmp(format, "folded") ? OUT_FOLDED : !strcmp(format, "callgrind") ? OUT_CALLGRIND
            : -1;
  if (fmt < 0)
    return cli_usage_error(&help, "unknown --format '%s' (text, json, folded or callgrind)",
                           format);
  if (!interval)
    return cli_usage_error(&help, "--interval must be > 0");
  if (limit && (fmt == OUT_FOLDED || fmt == OUT_CALLGRIND))
    return cli_usage_error(&help, "--limit is for text and json output, not --format %s", format);
  if (prescale != 1 && prescale != 4 && prescale != 16 && prescale != 64)
    return cli_usage_error(&help, "--ts-prescale must be 1, 4, 16 or 64");

  struct sonde_sym *sym = NULL;
  struct sonde_diag d;
  if (sonde_sym_open(elf, &sym, &d) < 0)
    return cli_error("%s", d.msg);
  if (key == SONDE_PROFILE_BY_LINE && !sonde_sym_has_lines(sym))
    cli_warn("%s: no DWARF line table; lines are shown as addresses", elf);
  struct itm_input in;
  rc = itm_input_open(&in, argv[0], tpiu, line, rate, la_channel, &help);
  if (rc) {
    sonde_sym_free(sym);
    return rc;
  }
  struct sonde_itm_config cfg;
  sonde_itm_config_init(&cfg);
  cfg.start_unsynced = wait_sync;
  cfg.ts_prescale = (unsigned)prescale;
  struct sonde_itm *dec = sonde_itm_new(&cfg);
  struct sonde_profile *prof = sonde_profile_new();
  FILE *out = (dec && prof) ? cli_open_output(output, false) : NULL;
  if (!out) {
    rc = (dec && prof) ? CLI_FAIL : cli_error("out of memory");
    goto done;
  }
  struct top_ctx c = {out, fmt, key, sym, prof, sonde_itm_stats(dec), limit};
  bool live = fmt == OUT_TEXT && isatty(fileno(out));
  double next = cli_now_s() + (double)interval / 1000.0;
  enum { CAP = 1024 };
  static struct sonde_itm_packet pk[CAP];
  for (;;) {
    const uint8_t *bytes;
    ptrdiff_t n = itm_input_read(&in, &bytes);
    if (n < 0) {
      rc = CLI_FAIL;
      break;
    }
    size_t pos = 0, got;
    if (n == 0) {
      got = sonde_itm_finish(dec, pk, CAP);
      if (sonde_profile_add(prof, pk, got) < 0) {
        rc = cli_error("out of memory");
        break;
      }
      break;
    }
    while (pos < (size_t)n) {
      size_t used;
      got = sonde_itm_decode(dec, bytes + pos, (size_t)n - pos, &used, pk, CAP);
      pos += used;
      if (sonde_profile_add(prof, pk, got) < 0) {
        rc = cli_error("out of memory");
        goto done_close;
      }
    }
    if (live && cli_now_s() >= next) {
      report_text(&c, true);
      next = cli_now_s() + (double)interval / 1000.0;
    }
  }
  if (rc == CLI_OK) {
    if (fmt == OUT_TEXT)
      rc = report_text(&c, live);
    else if (fmt == OUT_JSON)
      rc = report_json(&c);
    else if (fmt == OUT_FOLDED)
      rc = report_folded(&c);
    else
      rc = report_callgrind(&c);
  }
  const struct sonde_itm_stats *st = sonde_itm_stats(dec);
  if (st->losses)
    cli_warn("itm: %llu bytes skipped in %llu losses", (unsigned long long)st->skipped_bytes,
             (unsigned long long)st->losses);
done_close: {
  int crc = cli_close_output(out, output);
  if (rc == CLI_OK)
    rc = crc;
}
done:
  sonde_profile_free(prof);
  sonde_itm_free(dec);
  itm_input_close(&in);
  sonde_sym_free(sym);
  return rc;
}
