/* `sonde frankentrace stitch`: a capture of the FrankenTrace runner (any
 * input `sonde itm` takes) split into iterations by the runner's metadata
 * records, judged, stitched and validated by the library
 * (sonde/frankentrace_runner.h); --verify against a ground-truth PC trace
 * aligned on the preamble. */
#include "cli.h"
#include "cmd_frankentrace.h"
#include "cmd_frankentrace_lsu.h"
#include "cmd_itm_input.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ft_setup.h"
#include "sonde/frankentrace_runner.h"
#include "sonde/itm.h"
#include "sonde/swo.h"

struct stitch_ctx {
  struct sonde_ft_runner *r;
  struct sonde_ft_runner_config cfg;
  const char *input;
  unsigned warned;
  int err;
  uint64_t line_frames, line_errors; /* --line: frames decoded and dropped, all inputs */
  struct ft_lsu_cli lsu; /* --lsu, --lsu-out, --lsu-truth (cmd_frankentrace_lsu.c) */
  bool lsu_on;
};

/* Why a line capture may hold nothing usable: the decoder dropped many frames. */
static void line_hint(const struct stitch_ctx *c, const char *line)
{
  if (line && c->line_errors * 20 > c->line_frames)
    cli_error("frankentrace stitch: the line decoder dropped %" PRIu64 " of %" PRIu64 " frames "
              "(framing errors): is '%s' the runner's SWO baud (its ft_config) and the sample "
              "rate right?", c->line_errors, c->line_frames, line);
}

/* One iteration from the splitter: judged, the problems said, stitched. */
static int on_iteration(void *vctx, const struct sonde_ftw_iteration *it)
{
  struct stitch_ctx *c = vctx;
  if (c->lsu_on && it->begin.kind == 1)
    ft_lsu_cli_iteration(&c->lsu, it);
  struct sonde_ft_runner_iter ji;
  int rc = sonde_ft_runner_judge(it, &c->cfg, &ji);
  if (rc < 0)
    return c->err = rc;
  const struct sonde_ftw_record *b = &ji.begin;
  if (ji.verdict == SONDE_FT_RUNNER_CORRUPT && c->warned++ < 10) /* the count is in the summary */
    cli_warn("frankentrace stitch: %s: offset %" PRIu64 ": iteration %u (phase %u) is corrupt on "
             "the wire (%" PRIu64 " samples off the N grid, %" PRIu64 " corrupt stretches, %u corrupt "
             "records, %" PRIu64 " PCs outside the ELF): not used; re-run it", c->input, ji.offset,
             b->iteration, b->phase, ji.bad_spacing, ji.skips, ji.wire_errors,
             c->cfg.allow_outside_elf ? 0 : ji.outside_elf);
  if (ji.verdict == SONDE_FT_RUNNER_CUT)
    cli_warn("frankentrace stitch: %s: iteration %u (phase %u) has no end record: the capture "
             "is cut; cycles after its last sample stay unsampled", c->input, b->iteration, b->phase);
  struct sonde_diag d = {{0}};
  rc = sonde_ft_runner_add(c->r, &ji, &d);
  sonde_ft_runner_iter_free(&ji);
  if (rc < 0) {
    cli_error("frankentrace stitch: %s: %s", c->input, d.msg);
    return c->err = rc;
  }
  return 0;
}

/* Read one input whole and feed it to the splitter. */
static int stitch_input(struct stitch_ctx *c, struct sonde_ftw_splitter *sp, struct sonde_itm *dec,
                        const char *name, const char *tpiu, const char *line, const char *rate,
                        uint64_t la_channel, const struct cli_command_help *help)
{
  struct itm_input in;
  if (itm_input_open(&in, name, tpiu, line, rate, la_channel, help))
    return SONDE_E_IO;
  uint8_t *all = NULL;
  size_t len = 0, acap = 0;
  const uint8_t *bytes;
  ptrdiff_t got;
  struct cli_progress prog; /* a capture from a serial port or tcp: a terminal sees it come */
  cli_progress_start(&prog, "capture bytes", 0);
  while ((got = itm_input_read(&in, &bytes)) > 0) {
    cli_progress_update(&prog, len + (size_t)got);
    if (len + (size_t)got > acap) {
      size_t ncap = acap ? acap : 1 << 20;
      while (ncap < len + (size_t)got)
        ncap *= 2;
      uint8_t *nb = realloc(all, ncap);
      if (!nb) {
        cli_progress_end(&prog);
        free(all);
        itm_input_close(&in);
        cli_error("frankentrace stitch: %s: out of memory", name);
        return SONDE_E_NOMEM;
      }
      all = nb;
      acap = ncap;
    }
    memcpy(all + len, bytes, (size_t)got);
    len += (size_t)got;
  }
  cli_progress_end(&prog);
  if (in.line) {
    struct sonde_swo_line_stats ls;
    sonde_swo_line_get_stats(in.line, &ls);
    c->line_frames += ls.packets;
    c->line_errors += ls.framing_errors;
  }
  itm_input_close(&in);
  if (got < 0) {
    free(all);
    return (int)got; /* itm_input_read printed why */
  }
  struct sonde_diag d = {{0}};
  int rc = sonde_ft_runner_decode(sp, dec, all, len, &d);
  free(all);
  if (rc < 0 && !c->err)
    cli_error("frankentrace stitch: %s: %s", name, d.msg[0] ? d.msg : sonde_strerror(rc));
  return rc;
}

/* With the core clock and the line's baud known: can the capture's N work on
 * that line (the runner's own rule, ft_setup.c)? Samples lost in overflows
 * say it could not; either way say why and the smallest N that can.
 * Returns 1 when N cannot work. */
static int check_line(FILE *out, const struct sonde_ft_runner_summary *s, uint64_t clock,
                      uint64_t baud)
{
  if (!clock || !baud || !s->n)
    return 0;
  if (clock > UINT32_MAX || baud > UINT32_MAX || clock % baud || clock / baud > 65536) {
    fprintf(out, "line: SWO %" PRIu64 " baud does not divide the %" PRIu64 " Hz core clock by an "
            "integer 1..65536 (TPIU_ACPR + 1): the chip cannot send at that rate\n", baud, clock);
    return 1;
  }
  struct ft_setup fs;
  uint32_t min_n = ft_setup_min_n((uint32_t)clock, (uint32_t)baud);
  int why = ft_setup_compute((uint32_t)clock, (uint32_t)baud, s->n, 0, &fs);
  uint64_t line_cycles = (uint64_t)ft_setup_bytes_per_sample(s->n) * 10 * clock / baud;
  if (why == FT_SETUP_N_BANDWIDTH || (s->overflows && min_n > s->n)) {
    if (min_n)
      fprintf(out, "line: N = %u is too small for SWO at %" PRIu64 " baud (a sample is %u bytes, %"
              PRIu64 " cycles on the line at %" PRIu64 " Hz); the smallest N that works is %u\n",
              s->n, baud, ft_setup_bytes_per_sample(s->n), line_cycles, clock, min_n);
    else
      fprintf(out, "line: SWO at %" PRIu64 " baud is too slow for PC sampling at %" PRIu64
              " Hz even every 16384 cycles\n", baud, clock);
    return 1;
  }
  if (s->overflows)
    fprintf(out, "line: %" PRIu64 " ITM overflows although N = %u fits %" PRIu64 " baud (%" PRIu64
            " of %u cycles per sample): the firmware's own ITM output shares the line\n",
            s->overflows, s->n, baud, line_cycles, s->n);
  return 0;
}

/* --json: one object after the text, what print_summary says in words. */
static void print_json(FILE *out, const struct sonde_ft_runner_summary *s,
                       const struct sonde_ftw_splitter *sp, bool line_bad,
                       const struct sonde_ft_verify_result *v, bool ok)
{
  const char *first_bad;
  fprintf(out,
          "{\"n\":%u,\"run_id\":%u,\"fw_id\":%u,\"iterations\":%u,\"lsu\":%u,\"cut\":%u,"
          "\"corrupt\":%u,\"phases\":%u,\"redundant\":%u,\"cycles\":%" PRIu64
          ",\"pc\":%" PRIu64 ",\"sleep\":%" PRIu64 ",\"unrecoverable\":%" PRIu64
          ",\"samples\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"overflows\":%" PRIu64
          ",\"outside_elf\":%" PRIu64 ",\"bad_records\":%" PRIu64 ",\"stray_samples\":%" PRIu64
          ",\"missing\":%zu,\"gap_iterations\":%u,\"conflicts\":[",
          s->n, s->run_id, s->fw_id, s->iterations, s->lsu, s->cut, s->corrupt,
          s->report.phases_covered, s->report.phases_redundant, s->report.length,
          s->report.counts.pc, s->report.counts.sleep,
          s->report.length - s->report.counts.pc - s->report.counts.sleep, s->samples, s->lost,
          s->overflows, s->outside_elf, sonde_ftw_splitter_bad_records(sp, &first_bad),
          sonde_ftw_splitter_stray(sp), s->missing, s->gap_iterations);
  for (size_t i = 0; i < s->report.conflict_count; i++) {
    const struct sonde_ft_conflict *k = &s->report.conflicts[i];
    fprintf(out, "%s{\"kind\":\"%s\",\"phase\":%u,\"iter_a\":%u,\"iter_b\":%u,"
            "\"first_cycle\":%" PRIu64 ",\"cycles\":%" PRIu64 "}", i ? "," : "",
            k->kind == SONDE_FT_CONFLICT_LENGTH ? "length" : "samples", k->phase, k->iter_a,
            k->iter_b, k->first_cycle, k->cycles);
  }
  fprintf(out, "],\"impossible\":%" PRIu64 ",\"untrusted_from\":%" PRId64
          ",\"preamble_ok\":%s,\"line_ok\":%s", s->impossible,
          s->untrusted_from == UINT64_MAX ? (int64_t)-1 : (int64_t)s->untrusted_from,
          s->preamble_seen && !s->preamble_bad ? "true" : "false", line_bad ? "false" : "true");
  if (v)
    fprintf(out, ",\"verify\":{\"compared\":%" PRIu64 ",\"equal\":%" PRIu64
            ",\"different\":%" PRIu64 "}", v->compared, v->equal, v->different);
  fprintf(out, ",\"ok\":%s}\n", ok ? "true" : "false");
}

/* What the library found, in words; returns CLI_FAIL when something is wrong. */
static int print_summary(FILE *sum, const struct sonde_ft_runner_summary *s,
                         const struct sonde_ftw_splitter *sp, struct sonde_sym *sym)
{
  int status = CLI_OK;
  fprintf(sum,
          "frankentrace stitch: N %u, %u iterations (%u LSU, %u cut, %u corrupt), %u of %u phases, "
          "%u redundant; %" PRIu64 " cycles, %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
          " overflows, %" PRIu64 " outside the ELF, %zu conflicts\n",
          s->n, s->iterations, s->lsu, s->cut, s->corrupt, s->report.phases_covered, s->n,
          s->report.phases_redundant, s->report.length, s->samples, s->lost, s->overflows,
          s->outside_elf, s->report.conflict_count);
  const char *first_bad;
  uint64_t bad_records = sonde_ftw_splitter_bad_records(sp, &first_bad);
  if (bad_records)
    fprintf(sum, "frankentrace stitch: %" PRIu64 " corrupt metadata records (first: %s)\n",
            bad_records, first_bad);
  if (sonde_ftw_splitter_stray(sp))
    fprintf(sum, "frankentrace stitch: %" PRIu64 " PC samples outside any iteration (ignored)\n",
            sonde_ftw_splitter_stray(sp));
  ft_cli_print_runner_findings(sum, s, sym);
  if (!s->ok)
    status = CLI_FAIL;
  return status;
}

int cmd_frankentrace_stitch(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace stitch -e <elf> [options] <capture>... -o <trace>",
      "Stitch the capture of a FrankenTrace runner (target/cortexm/frankentrace) into a\n"
      "cycle-level PC trace. The capture (any input `sonde itm` takes: a raw SWO file,\n"
      "logic-analyzer samples with --line, tcp:HOST:PORT, serial:) is split into iterations\n"
      "by the runner's begin/end records (docs/formats.md); each iteration's PC samples must\n"
      "lie on its N grid by their local timestamps (a multiple of N: lost samples are marked\n"
      "lost; anything else: the iteration is corrupt and not used). Cycle 0 is the first\n"
      "sample of phase 0. The runner's preamble (ft_preamble in the ELF) is checked.\n"
      "Exit 1 when a phase is missing, iterations disagree (nondeterminism: every cycle from\n"
      "N cycles before the first disagreement or impossible transition is marked conflict),\n"
      "the preamble is broken, N does not fit the line named by --clock/--baud, or --verify\n"
      "finds a difference; the trace is still written.\n"
      "--json adds one object after the text (docs/frankentrace-target.md).\n"
      "LSU iterations (the runner's range pairs x packet kinds) become an LSU trace with\n"
      "--lsu-out: ordered over the pairs and placed on the stitched PC trace.\n"
      "On the VM, `sonde frankentrace run -e <elf>` runs a runner image and does all of this."};
  const char *elf = NULL, *out = NULL, *fmt = "pct", *verify = NULL;
  const char *tpiu = NULL, *line = NULL, *rate = NULL;
  uint64_t la_channel = ITM_LA_CHANNEL_UNSET, prescale = 1, fw_id = UINT64_MAX, clock = 0, baud = 0;
  const char *clock_s = NULL;
  bool wait_sync = false, json = false;
  struct stitch_ctx c = {0};
  struct cli_opt opts[] = {
      OPT_STRING('e', "elf", "<file>", &elf, "the traced firmware (symbols, the preamble)"),
      OPT_U64(0, "fw-id", "<id>", &fw_id, "refuse iterations whose firmware id differs"),
      OPT_FLAG(0, "allow-outside-elf", &c.cfg.allow_outside_elf,
               "keep iterations with PCs outside the ELF's code (boot ROM); default: corrupt"),
      OPT_STRING(0, "verify", "<pct>", &verify,
                 "compare with a ground-truth PC trace, aligned on the preamble"),
      OPT_STRING(0, "format", "pct|csv|perfetto", &fmt, "output format (default pct)"),
      OPT_STRING(0, "clock", "<hz>", &clock_s,
                 "the chip's core clock (48M): with the line's baud, check that N fits the line"),
      OPT_U64(0, "baud", "<rate>", &baud, "the SWO baud (default: --line's)"),
      OPT_STRING(0, "lsu", "<ranges>", &c.lsu.spec,
                 "check that the capture's LSU iterations trace these 64 KiB ranges"),
      OPT_STRING(0, "lsu-out", "<csv>", &c.lsu.out_path,
                 "write the LSU trace of the capture's LSU iterations (--trace-lsu CSV)"),
      OPT_STRING(0, "lsu-truth", "<csv>", &c.lsu.truth_path,
                 "compare the LSU trace with sonde run --trace-lsu (with --verify for cycles)"),
      OPT_OUTPUT(&out),
      OPT_JSON(&json),
      OPT_ITM_INPUT(&tpiu, &line, &rate, &la_channel, &wait_sync, &prescale),
      OPT_END(),
  };
  int na;
  int rc = cli_parse(argc, argv, opts, &help, &na);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (!elf)
    return cli_usage_error(&help, "-e <elf> is required");
  if (na < 1)
    return cli_usage_error(&help, "expected at least one <capture>");
  enum sonde_ft_format format;
  if (sonde_ft_format_parse(fmt, &format) < 0)
    return cli_usage_error(&help, "--format: '%s' is not pct, csv or perfetto", fmt);
  if (clock_s && (sonde_swo_parse_rate(clock_s, &clock) < 0 || !clock))
    return cli_usage_error(&help, "bad --clock '%s'", clock_s);
  if (!baud && line) { /* uart:BAUD or manchester:BAUD */
    const char *colon = strchr(line, ':');
    baud = colon ? strtoull(colon + 1, NULL, 10) : 0;
  }
  c.cfg.fw_id = (uint32_t)fw_id;
  c.cfg.check_fw_id = fw_id != UINT64_MAX;
  c.lsu_on = c.lsu.spec || c.lsu.out_path || c.lsu.truth_path;
  struct sonde_ftw_splitter *sp = NULL;
  struct sonde_itm *dec = NULL;
  struct sonde_ft_trace *t = NULL, *gt = NULL;
  struct sonde_diag d = {{0}};
  int status = CLI_FAIL;
  if (ft_cli_open_elf(elf, &c.cfg.sym))
    goto done;
  if (c.lsu_on && ft_lsu_cli_init(&c.lsu, c.cfg.sym) < 0) {
    cli_error("frankentrace stitch: %s", c.lsu.diag.msg);
    status = CLI_USAGE;
    goto done;
  }
  uint32_t pre = 0;
  if (sonde_ft_runner_preamble(c.cfg.sym, elf, &pre, &d) < 0) {
    cli_error("frankentrace stitch: %s", d.msg);
    goto done;
  }
  struct sonde_itm_config icfg;
  sonde_itm_config_init(&icfg);
  icfg.ts_prescale = (unsigned)prescale;
  icfg.start_unsynced = wait_sync;
  if (sonde_ft_runner_new(&c.cfg, &c.r) < 0 || sonde_ftw_splitter_new(on_iteration, &c, &sp) < 0 ||
      !(dec = sonde_itm_new(&icfg))) {
    cli_error("frankentrace stitch: out of memory");
    goto done;
  }
  for (int i = 0; i < na; i++) {
    c.input = argv[i];
    if (stitch_input(&c, sp, dec, argv[i], tpiu, line, rate, la_channel, &help) < 0)
      goto done;
  }
  if ((rc = sonde_ftw_splitter_finish(sp, &d)) < 0) {
    if (!c.err)
      cli_error("frankentrace stitch: %s: %s", c.input, d.msg);
    goto done;
  }
  struct sonde_ft_runner_summary s;
  if (sonde_ft_runner_finish(c.r, &t, &s, &d) < 0) {
    cli_error("frankentrace stitch: %s", d.msg);
    line_hint(&c, line);
    goto done;
  }
  if (ft_cli_write_trace(out ? out : "-", format, t, c.cfg.sym) != CLI_OK)
    goto done;
  FILE *sum = out ? stdout : stderr;
  status = print_summary(sum, &s, sp, c.cfg.sym);
  bool line_bad = check_line(sum, &s, clock, baud);
  if (line_bad)
    status = CLI_FAIL;
  if (s.corrupt)
    line_hint(&c, line);
  struct sonde_ft_verify_result v;
  uint64_t off = UINT64_MAX;
  if (verify) {
    if (!(gt = ft_cli_read_trace(verify))) {
      status = CLI_FAIL;
      goto done;
    }
    if (sonde_ft_runner_verify(t, gt, pre, &off, &v, &d) < 0) {
      cli_error("frankentrace stitch: --verify: %s", d.msg);
      status = CLI_FAIL;
      goto done;
    }
    if (ft_cli_print_runner_verify(sum, &v, off, c.cfg.sym))
      status = CLI_FAIL;
  }
  if (c.lsu_on && ft_lsu_cli_finish(&c.lsu, t, c.cfg.sym, elf, verify, off, sum))
    status = CLI_FAIL;
  if (json)
    print_json(sum, &s, sp, line_bad, verify ? &v : NULL, status == CLI_OK);
done:
  ft_lsu_cli_free(&c.lsu);
  sonde_ft_trace_free(t);
  sonde_ft_trace_free(gt);
  sonde_ft_runner_free(c.r);
  sonde_ftw_splitter_free(sp);
  sonde_itm_free(dec);
  sonde_sym_free(c.cfg.sym);
  return status;
}
