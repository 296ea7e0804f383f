/* `sonde frankentrace stitch`: a capture of the FrankenTrace runner (any
 * input `sonde itm` takes) split into iterations by the runner's metadata
 * records, each iteration's PC samples checked against their timestamps and
 * stitched; the preamble checked against the ELF; --verify against a
 * ground-truth PC trace aligned on the preamble. */
#include "cli.h"
#include "cmd_frankentrace.h"
#include "cmd_itm_input.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/ftwire.h"
#include "sonde/itm.h"

#define PREAMBLE_CYCLES 64 /* ft_preamble: 64 one-cycle 16-bit instructions */

struct stitch_ctx {
  struct sonde_ft_stitch *st;
  struct sonde_sym *sym;
  const char *input;
  struct sonde_ftw_record first;
  uint32_t iterations, lsu_iterations, cut, corrupt;
  uint64_t samples, outside_elf, lost, overflows;
  uint64_t fw_id;
  bool check_fw_id, allow_outside;
  int err;
};

static int on_iteration(void *vctx, const struct sonde_ftw_iteration *it)
{
  struct stitch_ctx *c = vctx;
  const struct sonde_ftw_record *b = &it->begin;
  if (c->check_fw_id && b->fw_id != c->fw_id) {
    cli_error("frankentrace stitch: %s: offset %" PRIu64 ": iteration %u comes from firmware id "
              "0x%08x, not 0x%08" PRIx64 " (--fw-id): wrong ELF or capture",
              c->input, it->offset, b->iteration, b->fw_id, c->fw_id);
    return c->err = SONDE_E_FORMAT;
  }
  if (c->iterations && (b->run_id != c->first.run_id || b->fw_id != c->first.fw_id || b->n != c->first.n)) {
    cli_error("frankentrace stitch: %s: offset %" PRIu64 ": iteration %u has run id 0x%x, firmware "
              "id 0x%x, N %u; the first had 0x%x, 0x%x, %u: captures of different runs",
              c->input, it->offset, b->iteration, b->run_id, b->fw_id, b->n, c->first.run_id,
              c->first.fw_id, c->first.n);
    return c->err = SONDE_E_FORMAT;
  }
  if (!c->iterations++) {
    c->first = *b;
    struct sonde_ft_stitch_config cfg = {.n = b->n, .origin = 0};
    struct sonde_diag d = {{0}};
    if (sonde_ft_stitch_new(&cfg, &c->st, &d) < 0) {
      cli_error("frankentrace stitch: %s", d.msg);
      return c->err = SONDE_E_ARG;
    }
  }
  if (b->kind != 0) { /* LSU iterations are counted, not stitched here */
    c->lsu_iterations++;
    return 0;
  }
  struct sonde_ftw_samples s = {0};
  int rc = sonde_ftw_collect(it->packets, it->count, b->n, &s);
  if (rc < 0) {
    sonde_ftw_samples_free(&s);
    return c->err = rc;
  }
  uint64_t outside = 0; /* a PC outside the ELF's code: a corrupt payload (or boot ROM code) */
  for (size_t i = 0; i < s.count; i++)
    if (!(s.v[i] & 1) && c->sym && sonde_sym_lookup(c->sym, s.v[i], NULL, NULL) < 0)
      outside++;
  c->outside_elf += outside;
  if (c->allow_outside)
    outside = 0;
  c->samples += s.count;
  c->lost += s.lost;
  c->overflows += s.overflows;
  struct sonde_ft_iter *fi;
  if (sonde_ft_iter_begin(c->st, b->phase, b->iteration, &fi) < 0 ||
      (s.count && sonde_ft_iter_feed(fi, 0, s.v, s.count) < 0)) {
    cli_error("frankentrace stitch: %s: iteration %u: %s", c->input, b->iteration,
              sonde_ft_stitch_error_detail(c->st));
    sonde_ftw_samples_free(&s);
    return c->err = SONDE_E_FORMAT;
  }
  if (s.bad_spacing || s.skips || it->wire_errors || outside) {
    if (c->corrupt < 10) /* the count is in the summary */
      cli_warn("frankentrace stitch: %s: offset %" PRIu64 ": iteration %u (phase %u) is corrupt on "
             "the wire (%" PRIu64 " samples off the N grid, %" PRIu64 " corrupt stretches, %u corrupt "
             "records, %" PRIu64 " PCs outside the ELF): not used; re-run it", c->input, it->offset,
             b->iteration, b->phase, s.bad_spacing, s.skips, it->wire_errors, outside);
    c->corrupt++;
    sonde_ft_iter_discard(fi);
  } else {
    if (!it->has_end) {
      cli_warn("frankentrace stitch: %s: iteration %u (phase %u) has no end record: the capture "
               "is cut; cycles after its last sample stay unsampled", c->input, b->iteration, b->phase);
      c->cut++;
    }
    struct sonde_ft_iter_end_info e = {.complete = it->has_end, .length = 0};
    struct sonde_ft_iter_result r;
    if (sonde_ft_iter_end(fi, &e, &r) < 0) {
      sonde_ftw_samples_free(&s);
      return c->err = SONDE_E_FORMAT;
    }
  }
  sonde_ftw_samples_free(&s);
  return 0;
}

/* A copy of t with its origin moved to `origin`; NULL when out of memory. */
static struct sonde_ft_trace *rebase(const struct sonde_ft_trace *t, uint64_t origin)
{
  struct sonde_ft_trace *z = NULL;
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  if (sonde_ft_trace_new(origin, &z) < 0)
    return NULL;
  while (sonde_ft_trace_next_span(t, &pos, &sp) > 0)
    if (sonde_ft_trace_append(z, sp.cell, sp.cycles) < 0) {
      sonde_ft_trace_free(z);
      return NULL;
    }
  sonde_ft_trace_set_clock_hz(z, sonde_ft_trace_clock_hz(t));
  return z;
}

/* First cycle of t whose cell is the PC `pc`, or UINT64_MAX. */
static uint64_t find_pc(const struct sonde_ft_trace *t, uint32_t pc)
{
  const uint32_t *pcs = sonde_ft_trace_pcs(t);
  const uint8_t *st = sonde_ft_trace_states(t);
  uint64_t n = sonde_ft_trace_length(t);
  for (uint64_t i = 0; i < n; i++)
    if (st[i] == SONDE_FT_PC && pcs[i] == pc)
      return sonde_ft_trace_origin(t) + i;
  return UINT64_MAX;
}

/* The begin record's first bytes: instrumentation header of port 31 with 4
 * bytes (0xFB), then word 0 little-endian: type 1, version 1, magic "FT". */
static const uint8_t begin_marker[5] = {0xFB, 0x01, SONDE_FTW_VERSION, 0x54, 0x46};

static size_t find_marker(const uint8_t *b, size_t len, size_t from)
{
  for (size_t i = from; i + sizeof begin_marker <= len; i++)
    if (b[i] == 0xFB && memcmp(b + i, begin_marker, sizeof begin_marker) == 0)
      return i;
  return len;
}

/* Decode one input whole: after a decoder loss (corrupt bytes) decoding
 * resumes at the next begin record, since the runner's stream has no
 * synchronization packets; the loss itself reaches the open iteration as a
 * SKIP packet, which makes it corrupt. */
static int stitch_input(struct stitch_ctx *c, struct sonde_ftw_splitter *sp, struct sonde_itm *dec,
                        struct sonde_itm_packet *pk, size_t cap, const char *name, const char *tpiu,
                        const char *line, const char *rate, uint64_t la_channel,
                        const struct cli_command_help *help)
{
  struct itm_input in;
  if (itm_input_open(&in, name, tpiu, line, rate, la_channel, help))
    return SONDE_E_IO;
  uint8_t *all = NULL;
  size_t len = 0, acap = 0;
  const uint8_t *bytes;
  ptrdiff_t got;
  while ((got = itm_input_read(&in, &bytes)) > 0) {
    if (len + (size_t)got > acap) {
      size_t ncap = acap ? acap : 1 << 20;
      while (ncap < len + (size_t)got)
        ncap *= 2;
      uint8_t *nb = realloc(all, ncap);
      if (!nb) {
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
  itm_input_close(&in);
  if (got < 0) {
    free(all);
    return (int)got; /* itm_input_read printed why */
  }
  struct sonde_diag d = {{0}};
  int rc = 0;
  size_t pos = 0, base = 0;
  sonde_itm_reset(dec);
  while (rc >= 0 && pos < len) {
    size_t used = 0, np = sonde_itm_decode(dec, all + pos, len - pos, &used, pk, cap);
    size_t keep = np, resume = 0;
    for (size_t k = 0; k < np; k++) {
      pk[k].offset += base;
      if (pk[k].type == SONDE_ITM_SKIP && !resume) {
        keep = k + 1;
        resume = find_marker(all, len, (size_t)pk[k].offset + 1);
      }
    }
    if (!resume && !sonde_itm_synced(dec) && keep < cap) {
      /* lost sync inside this call: a loss the decoder reports only at a
       * sync packet, which never comes; mark it and resume at a record */
      uint64_t from = np ? pk[np - 1].offset + 1 : pos;
      struct sonde_itm_packet skip = {.offset = from, .type = SONDE_ITM_SKIP};
      pk[keep++] = skip;
      resume = find_marker(all, len, (size_t)from);
    }
    rc = sonde_ftw_splitter_feed(sp, pk, keep, &d);
    if (resume >= len)
      break;
    if (resume) {
      sonde_itm_reset(dec);
      pos = base = resume;
    } else {
      pos += used;
    }
  }
  if (rc >= 0) {
    size_t np = sonde_itm_finish(dec, pk, cap);
    for (size_t k = 0; k < np; k++)
      pk[k].offset += base;
    rc = sonde_ftw_splitter_feed(sp, pk, np, &d);
  }
  free(all);
  if (rc < 0 && !c->err)
    cli_error("frankentrace stitch: %s: %s", name, d.msg[0] ? d.msg : sonde_strerror(rc));
  return rc;
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
      "Exit 1 when a phase is missing, iterations disagree (nondeterminism), the preamble\n"
      "is broken, or --verify finds a difference; the trace is still written."};
  const char *elf = NULL, *out = NULL, *fmt = "pct", *verify = NULL;
  const char *tpiu = NULL, *line = NULL, *rate = NULL;
  uint64_t la_channel = ITM_LA_CHANNEL_UNSET, prescale = 1, fw_id = UINT64_MAX;
  bool wait_sync = false;
  struct stitch_ctx c = {0};
  struct cli_opt opts[] = {
      OPT_STRING('e', "elf", "<file>", &elf, "the traced firmware (symbols, the preamble)"),
      OPT_U64(0, "fw-id", "<id>", &fw_id, "refuse iterations whose firmware id differs"),
      OPT_FLAG(0, "allow-outside-elf", &c.allow_outside,
               "keep iterations with PCs outside the ELF's code (boot ROM); default: corrupt"),
      OPT_STRING(0, "verify", "<pct>", &verify,
                 "compare with a ground-truth PC trace, aligned on the preamble"),
      OPT_STRING(0, "format", "pct|csv|perfetto", &fmt, "output format (default pct)"),
      OPT_OUTPUT(&out),
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
  c.fw_id = fw_id;
  c.check_fw_id = fw_id != UINT64_MAX;
  struct sonde_ftw_splitter *sp = NULL;
  struct sonde_itm *dec = NULL;
  struct sonde_itm_packet *pk = NULL;
  struct sonde_ft_trace *t = NULL, *gt = NULL, *proj = NULL, *moved = NULL;
  int status = CLI_FAIL;
  if (ft_cli_open_elf(elf, &c.sym))
    goto done;
  uint32_t pre = 0;
  if (sonde_sym_address(c.sym, "ft_preamble", &pre, NULL) < 0) {
    cli_error("frankentrace stitch: '%s' has no ft_preamble: not an image with the FrankenTrace "
              "runner linked (wrong ELF?)", elf);
    goto done;
  }
  size_t cap = 4096;
  struct sonde_itm_config icfg;
  sonde_itm_config_init(&icfg);
  icfg.ts_prescale = (unsigned)prescale;
  icfg.start_unsynced = wait_sync;
  if (sonde_ftw_splitter_new(on_iteration, &c, &sp) < 0 || !(dec = sonde_itm_new(&icfg)) ||
      !(pk = malloc(cap * sizeof *pk))) {
    cli_error("frankentrace stitch: out of memory");
    goto done;
  }
  for (int i = 0; i < na; i++) {
    c.input = argv[i];
    if (stitch_input(&c, sp, dec, pk, cap, argv[i], tpiu, line, rate, la_channel, &help) < 0)
      goto done;
  }
  struct sonde_diag d = {{0}};
  if ((rc = sonde_ftw_splitter_finish(sp, &d)) < 0) {
    if (!c.err)
      cli_error("frankentrace stitch: %s: %s", c.input, d.msg);
    goto done;
  }
  if (!c.st) {
    cli_error("frankentrace stitch: no FrankenTrace iteration in the capture (no begin record on "
              "stimulus port 31)");
    goto done;
  }
  if (c.samples && c.outside_elf * 2 > c.samples) { /* most of them: not this ELF's code */
    cli_error("frankentrace stitch: %" PRIu64 " of %" PRIu64 " PC samples are outside the code of "
              "'%s': wrong ELF?", c.outside_elf, c.samples, elf);
    goto done;
  }
  struct sonde_ft_report rep;
  if (sonde_ft_stitch_finish(c.st, &t, &rep) < 0) {
    cli_error("frankentrace stitch: %s", sonde_ft_stitch_error_detail(c.st));
    goto done;
  }
  FILE *f = cli_open_output(out ? out : "-", format != SONDE_FT_FORMAT_CSV);
  if (!f)
    goto done;
  rc = sonde_ft_write(f, out ? out : "-", format, t, c.sym, &d);
  if (cli_close_output(f, out ? out : "-") != CLI_OK || rc < 0) {
    if (rc < 0)
      cli_error("frankentrace stitch: %s", d.msg);
    goto done;
  }
  status = CLI_OK;
  FILE *sum = out ? stdout : stderr;
  fprintf(sum,
          "frankentrace stitch: N %u, %u iterations (%u LSU, %u cut, %u corrupt), %u of %u phases, "
          "%u redundant; %" PRIu64 " cycles, %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
          " overflows, %" PRIu64 " outside the ELF, %zu conflicts\n",
          c.first.n, c.iterations, c.lsu_iterations, c.cut, c.corrupt, rep.phases_covered, c.first.n,
          rep.phases_redundant, rep.length, c.samples, c.lost, c.overflows, c.outside_elf,
          rep.conflict_count);
  const char *first_bad;
  uint64_t bad_records = sonde_ftw_splitter_bad_records(sp, &first_bad);
  if (bad_records)
    fprintf(sum, "frankentrace stitch: %" PRIu64 " corrupt metadata records (first: %s)\n", bad_records,
            first_bad);
  if (sonde_ftw_splitter_stray(sp))
    fprintf(sum, "frankentrace stitch: %" PRIu64 " PC samples outside any iteration (ignored)\n",
            sonde_ftw_splitter_stray(sp));
  for (size_t i = 0; i < rep.conflict_count; i++) {
    const struct sonde_ft_conflict *k = &rep.conflicts[i];
    fprintf(sum, "nondeterminism: %s: iterations %u and %u (phase %u) differ from cycle %" PRIu64
            " (%" PRIu64 " cycles)\n", k->kind == SONDE_FT_CONFLICT_LENGTH ? "length" : "samples",
            k->iter_a, k->iter_b, k->phase, k->first_cycle, k->cycles);
    status = CLI_FAIL;
  }
  uint32_t missing[8];
  size_t nmiss = sonde_ft_stitch_missing_phases(c.st, missing, 8);
  if (nmiss) {
    fprintf(sum, "missing: %zu phases have no usable iteration (first:", nmiss);
    for (size_t i = 0; i < nmiss && i < 8; i++)
      fprintf(sum, " %u", missing[i]);
    fprintf(sum, "); their cycles are unsampled\n");
    status = CLI_FAIL;
  }
  /* A bit error inside a PC packet's payload leaves a valid-looking PC: the
   * code's possible transitions expose it (as they expose nondeterminism). */
  struct sonde_ft_check_result chk;
  if (sonde_ft_check(t, c.sym, 1, &chk, &d) == 0) {
    if (chk.impossible) {
      char from[400], to[400];
      ft_cli_symbol(c.sym, chk.bad[0].from, from, sizeof from);
      ft_cli_symbol(c.sym, chk.bad[0].to, to, sizeof to);
      fprintf(sum, "check: %" PRIu64 " impossible transitions (first at cycle %" PRIu64 ": %s -> %s, "
              "%s): a corrupt sample or nondeterminism\n", chk.impossible, chk.bad[0].cycle, from, to,
              chk.bad[0].why);
      status = CLI_FAIL;
    } else {
      fprintf(sum, "check: all %" PRIu64 " transitions possible in the ELF's code\n", chk.transitions);
    }
    sonde_ft_check_result_free(&chk);
  }
  uint64_t at = UINT64_MAX;
  {
    at = find_pc(t, pre);
    uint32_t want[PREAMBLE_CYCLES];
    for (unsigned i = 0; i < PREAMBLE_CYCLES; i++)
      want[i] = pre + 2 * i;
    uint64_t bad_at = 0, bad = at == UINT64_MAX ? PREAMBLE_CYCLES
                                                : sonde_ft_preamble_check(t, at, want, PREAMBLE_CYCLES, &bad_at);
    if (bad) {
      fprintf(sum, "preamble: broken (%" PRIu64 " of %u cycles differ%s)\n", bad, PREAMBLE_CYCLES,
              at == UINT64_MAX ? "; never seen" : "");
      status = CLI_FAIL;
    } else {
      fprintf(sum, "preamble: intact at cycles %" PRIu64 "..%" PRIu64 "\n", at, at + PREAMBLE_CYCLES - 1);
    }
  }
  if (verify) {
    uint64_t gat;
    if (!(gt = ft_cli_read_trace(verify)) || sonde_ft_project_dwt(gt, &proj) < 0) {
      status = CLI_FAIL;
      goto done;
    }
    if (at == UINT64_MAX || (gat = find_pc(proj, pre)) == UINT64_MAX || gat < at) {
      cli_error("frankentrace stitch: --verify: cannot align on the preamble (ft_preamble)");
      status = CLI_FAIL;
      goto done;
    }
    if (!(moved = rebase(t, gat - at))) {
      status = CLI_FAIL;
      goto done;
    }
    struct sonde_ft_verify_result v;
    sonde_ft_verify(moved, proj, &v);
    /* the ground truth also holds the other iterations: only cycles the trace covers count */
    fprintf(sum, "verify: trace cycle 0 = ground-truth cycle %" PRIu64 "; %" PRIu64 " compared, %" PRIu64
            " equal, %" PRIu64 " different, %" PRIu64 " unrecoverable\n", gat - at, v.compared, v.equal,
            v.different, v.unrecoverable);
    if (v.different) {
      char a[400], b[400];
      ft_cli_describe(c.sym, v.got, a, sizeof a);
      ft_cli_describe(c.sym, v.want, b, sizeof b);
      fprintf(sum, "verify: first difference at ground-truth cycle %" PRIu64 ": trace %s, ground truth %s\n",
              v.first_cycle, a, b);
      status = CLI_FAIL;
    }
  }
done:
  sonde_ft_trace_free(t);
  sonde_ft_trace_free(gt);
  sonde_ft_trace_free(proj);
  sonde_ft_trace_free(moved);
  sonde_ft_stitch_free(c.st);
  sonde_ftw_splitter_free(sp);
  sonde_itm_free(dec);
  free(pk);
  sonde_sym_free(c.sym);
  return status;
}
