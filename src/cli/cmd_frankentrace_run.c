/* `sonde frankentrace run`: FrankenTrace on the virtual Cortex-M, of an
 * unmodified image (--probe) or of a runner image (sonde/frankentrace_vm.h
 * does the work; docs/frankentrace.md, docs/frankentrace-target.md). */
#include "cli.h"
#include "cmd_frankentrace.h"
#include "cmd_frankentrace_lsu.h"
#include "sonde/frankentrace_vm.h"
#include "sonde/vm.h"
#include "ft_setup.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct run_opts {
  const char *elf_path, *out_path, *truth_path;
  enum sonde_ft_format fmt;
  uint64_t baud, n, jobs, repeats, max_cycles, seed, attempts;
  double bit_errors;
  bool verify, json, no_jit, strict, preload;
  struct sonde_machine *machine;
  void *elf;
  size_t elf_len;
  struct sonde_sym *sym;
  struct ft_lsu_cli lsu; /* --lsu, --lsu-out, --lsu-truth (cmd_frankentrace_lsu.c) */
  bool lsu_on;
};

static void on_progress(void *ctx, uint32_t done, uint32_t total)
{
  struct cli_progress *p = ctx;
  p->total = total; /* a runner image tells its plan's length once it runs */
  cli_progress_update(p, done);
}

/* --truth: a ground-truth file (`sonde run --trace-pc`) against the trace;
 * runner traces are aligned on the preamble. Returns 1 when they differ. */
static int verify_file(const struct run_opts *o, const struct sonde_ft_trace *t, bool runner,
                       FILE *out, uint64_t *offset)
{
  struct sonde_ft_trace *gt = ft_cli_read_trace(o->truth_path), *proj = NULL;
  if (!gt)
    return 1;
  struct sonde_ft_verify_result v;
  struct sonde_diag d = {{0}};
  uint64_t off = 0;
  uint32_t pre = 0;
  int rc;
  if (runner) {
    rc = sonde_ft_runner_preamble(o->sym, o->elf_path, &pre, &d);
    rc = rc ? rc : sonde_ft_runner_verify(t, gt, pre, &off, &v, &d);
  } else {
    rc = sonde_ft_project_dwt(gt, &proj);
    rc = rc ? sonde_diag_set(&d, rc, "out of memory") : sonde_ft_verify(t, proj, &v);
  }
  sonde_ft_trace_free(gt);
  sonde_ft_trace_free(proj);
  if (rc < 0) {
    cli_error("frankentrace run: --truth %s: %s", o->truth_path, d.msg);
    return 1;
  }
  if (offset)
    *offset = off;
  fprintf(out, "  truth %s: ", o->truth_path);
  return ft_cli_print_runner_verify(out, &v, off, o->sym) || (!runner && (v.missing || v.extra));
}

/* Why the runner's own configuration cannot work, by the runner's own rules
 * (target/cortexm/frankentrace/ft_setup.c). */
static void explain_config(const struct sonde_ft_vm_runner_stats *st)
{
  struct ft_setup s;
  uint32_t n = st->fw_n ? st->fw_n : ft_setup_min_n(st->fw_core_hz, st->fw_baud);
  int why = ft_setup_compute(st->fw_core_hz, st->fw_baud, n, 0, &s);
  uint32_t min_n = ft_setup_min_n(st->fw_core_hz, st->fw_baud);
  if (why == FT_SETUP_BAUD_DIVIDER)
    cli_error("frankentrace run: the runner's configuration cannot work: SWO %u baud does not "
              "divide the %u Hz core clock by an integer 1..65536 (TPIU_ACPR + 1)",
              st->fw_baud, st->fw_core_hz);
  else if (why == FT_SETUP_N_SHAPE)
    cli_error("frankentrace run: the runner's configuration cannot work: N = %u is not one DWT "
              "makes (64..1024 in steps of 64, 2048..16384 in steps of 1024)%s", n,
              min_n ? "" : "; and no N fits that line");
  else if (why == FT_SETUP_N_BANDWIDTH && min_n)
    cli_error("frankentrace run: the runner's configuration cannot work: N = %u is too small "
              "for SWO at %u baud (a sample is %u bytes, %llu cycles on the line at %u Hz); the "
              "smallest N that works is %u", n, st->fw_baud, ft_setup_bytes_per_sample(n),
              (unsigned long long)ft_setup_bytes_per_sample(n) * 10ull * st->fw_core_hz /
                  st->fw_baud, st->fw_core_hz, min_n);
  else if (why == FT_SETUP_N_BANDWIDTH)
    cli_error("frankentrace run: the runner's configuration cannot work: SWO at %u baud is too "
              "slow for PC sampling at %u Hz even every 16384 cycles", st->fw_baud,
              st->fw_core_hz);
}

/* A runner image: the firmware repeats itself (target/cortexm/frankentrace). */
static int run_runner(const struct run_opts *o)
{
  struct cli_progress prog;
  cli_progress_start(&prog, "iterations", 0);
  struct sonde_ft_vm_runner_config cfg = {
      .machine = o->machine, .elf = o->elf, .elf_len = o->elf_len, .elf_name = o->elf_path,
      .sym = o->sym, .jobs = (unsigned)o->jobs, .preload = o->preload,
      .max_cycles = o->max_cycles, .ground_truth = o->verify, .no_jit = o->no_jit,
      .bit_errors = o->bit_errors, .seed = o->seed, .attempts = (unsigned)o->attempts,
      .progress = on_progress, .progress_ctx = &prog};
  if (o->lsu_on) {
    cfg.lsu_iteration = ft_lsu_cli_iteration;
    cfg.lsu_ctx = (void *)&o->lsu;
  }
  struct sonde_ft_trace *trace = NULL, *truth = NULL;
  struct sonde_ft_runner *keep = NULL;
  struct sonde_ft_runner_summary s;
  struct sonde_ft_vm_runner_stats st;
  struct sonde_diag d = {{0}};
  double t0 = cli_now_s();
  int rc = sonde_ft_vm_runner_run(&cfg, &trace, o->verify ? &truth : NULL, &s, &st, &keep, &d);
  double secs = cli_now_s() - t0;
  cli_progress_end(&prog);
  int status = CLI_FAIL;
  if (rc) {
    cli_error("frankentrace run: %s", d.msg);
    if (st.fw_config_read)
      explain_config(&st);
    if (o->lsu_on)
      ft_lsu_cli_hint_monitor(o->sym, o->elf_path);
    goto out;
  }
  if (ft_cli_write_trace(o->out_path, o->fmt, trace, o->sym) != CLI_OK)
    goto out;
  bool fail = !s.ok || st.corrupt_left;
  FILE *e = stderr;
  fprintf(e,
          "sonde: frankentrace run: %s: runner plan of %u iterations (N = %u, run id 0x%x), %u "
          "VMs (%s), %u re-runs, %" PRIu64 " SWO bytes, %.2f s -> %s\n"
          "  %u iterations (%u LSU, %u cut, %u corrupt), %u of %u phases, %u redundant; %" PRIu64
          " cycles: %" PRIu64 " pc, %" PRIu64 " sleep, %" PRIu64 " unrecoverable; %" PRIu64
          " samples lost, %zu conflicts\n",
          o->elf_path, st.plan, s.n, st.run_id, st.vms,
          o->jobs <= 1 && !o->preload ? "chained through SYSRESETREQ" : "one per iteration, preloaded",
          st.reruns, st.swo_bytes, secs, o->out_path, s.iterations, s.lsu, s.cut, s.corrupt,
          s.report.phases_covered, s.n, s.report.phases_redundant, s.report.length,
          s.report.counts.pc, s.report.counts.sleep,
          s.report.length - s.report.counts.pc - s.report.counts.sleep, s.lost,
          s.report.conflict_count);
  if (o->bit_errors > 0)
    fprintf(e, "  wire: %" PRIu64 " bit errors injected; %u re-runs; %u iterations still corrupt "
               "(their phases unsampled)\n", st.flipped_bits, st.reruns, st.corrupt_left);
  ft_cli_print_runner_findings(e, &s, o->sym); /* with the untrusted cycles */
  if (o->verify) {
    uint32_t pre;
    uint64_t off;
    struct sonde_ft_verify_result v;
    if (sonde_ft_runner_preamble(o->sym, o->elf_path, &pre, &d) < 0 ||
        sonde_ft_runner_verify(trace, truth, pre, &off, &v, &d) < 0) {
      cli_error("frankentrace run: --verify: %s", d.msg);
      goto out;
    }
    fprintf(e, "  ");
    if (ft_cli_print_runner_verify(e, &v, off, o->sym))
      fail = true;
  }
  uint64_t truth_off = UINT64_MAX; /* ground-truth cycle of trace cycle 0 (--truth) */
  if (o->truth_path && verify_file(o, trace, true, e, &truth_off))
    fail = true;
  if (o->lsu_on && ft_lsu_cli_finish((struct ft_lsu_cli *)&o->lsu, trace, o->sym, o->elf_path,
                                     o->truth_path, truth_off, e))
    fail = true;
  if (o->json)
    fprintf(stderr,
            "{\"mode\":\"runner\",\"n\":%u,\"plan\":%u,\"vms\":%u,\"reruns\":%u,\"corrupt_left\":%u,"
            "\"cycles\":%" PRIu64 ",\"pc\":%" PRIu64 ",\"sleep\":%" PRIu64 ",\"conflicts\":%zu,"
            "\"missing\":%zu,\"impossible\":%" PRIu64 ",\"untrusted_from\":%" PRId64 ","
            "\"preamble_ok\":%s,\"seconds\":%.3f,\"ok\":%s}\n",
            s.n, st.plan, st.vms, st.reruns, st.corrupt_left, s.report.length, s.report.counts.pc,
            s.report.counts.sleep, s.report.conflict_count, s.missing, s.impossible,
            st.distrusted_from == UINT64_MAX ? (int64_t)-1 : (int64_t)st.distrusted_from,
            s.preamble_seen && !s.preamble_bad ? "true" : "false", secs, fail ? "false" : "true");
  status = fail ? CLI_FAIL : CLI_OK;
out:
  sonde_ft_trace_free(trace);
  sonde_ft_trace_free(truth);
  sonde_ft_runner_free(keep);
  return status;
}

/* --probe: the unmodified image, the trace blocks set through the debug port. */
static int run_probe(const struct run_opts *o)
{
  uint64_t clock = sonde_machine_clock_hz(o->machine), baud = o->baud ? o->baud : clock, n = o->n;
  if (!n) {
    n = sonde_ft_smallest_n(clock, baud, 0);
    if (!n) {
      cli_error("frankentrace run: SWO at %" PRIu64 " baud is too slow for PC sampling at %" PRIu64
                " Hz even every 16384 cycles: raise --baud", baud, clock);
      return CLI_FAIL;
    }
  }
  uint64_t repeats = o->repeats > n ? n : o->repeats;
  struct cli_progress prog;
  cli_progress_start(&prog, "runs", n + repeats);
  struct sonde_ft_vm_config cfg = {
      .machine = o->machine, .elf = o->elf, .elf_len = o->elf_len, .elf_name = o->elf_path,
      .n = (uint32_t)n, .baud = baud, .repeat = (uint32_t)repeats, .jobs = (unsigned)o->jobs,
      .max_cycles = o->max_cycles, .ground_truth = o->verify, .no_jit = o->no_jit,
      .sym = o->sym, .bit_errors = o->bit_errors, .seed = o->seed,
      .attempts = (unsigned)o->attempts, .progress = on_progress, .progress_ctx = &prog};
  struct sonde_ft_trace *trace = NULL, *truth = NULL;
  struct sonde_ft_vm_state *state = NULL;
  struct sonde_ft_report rep;
  struct sonde_ft_vm_stats st;
  struct sonde_diag d = {{0}};
  double t0 = cli_now_s();
  int rc = sonde_ft_vm_run(&cfg, &trace, o->verify ? &truth : NULL, &rep, &st, &state, &d);
  double secs = cli_now_s() - t0;
  cli_progress_end(&prog);
  int status = CLI_FAIL;
  if (rc) {
    cli_error("frankentrace run: %s", d.msg);
    goto out;
  }
  if (ft_cli_write_trace(o->out_path, o->fmt, trace, o->sym) != CLI_OK)
    goto out;
  struct sonde_ft_verify_result v = {0};
  if (o->verify && sonde_ft_verify(trace, truth, &v)) {
    cli_error("frankentrace run: verify: out of memory");
    goto out;
  }
  uint64_t bad = rep.counts.unsampled + rep.counts.lost + rep.counts.conflict;
  /* Cycle 0 can never be sampled (the first tap is a cycle after the set-up), so
   * the stitcher has it as lost; samples lost on the wire are st.lost_samples. */
  bool fail = st.lost_samples || st.bad_iterations || rep.counts.conflict || rep.conflict_count ||
              st.distrusted_from != UINT64_MAX ||
              (o->strict && bad) || (o->verify && (v.different || v.missing || v.extra));
  if (o->json) {
    fprintf(stderr,
            "{\"n\":%" PRIu64 ",\"baud\":%" PRIu64 ",\"runs\":%u,\"cycles\":%" PRIu64
            ",\"exit_code\":%" PRId64 ",\"swo_bytes\":%" PRIu64 ",\"pc_samples\":%" PRIu64
            ",\"sleep_samples\":%" PRIu64 ",\"overflows\":%" PRIu64 ",\"lost\":%" PRIu64
            ",\"bad_runs\":%u,\"reruns\":%u,\"pc\":%" PRIu64 ",\"sleep\":%" PRIu64
            ",\"unsampled\":%" PRIu64 ",\"conflicts\":%zu,\"untrusted_from\":%" PRId64
            ",\"length_first_difference\":%" PRId64 ",\"seconds\":%.3f",
            n, baud, st.iterations, st.run_cycles, (int64_t)st.exit_code, st.swo_bytes,
            st.pc_packets, st.sleep_packets, st.overflow_packets, st.lost_samples,
            st.bad_iterations, st.reruns, rep.counts.pc, rep.counts.sleep, rep.counts.unsampled,
            rep.conflict_count,
            st.distrusted_from == UINT64_MAX ? (int64_t)-1 : (int64_t)st.distrusted_from,
            st.length_first_difference == UINT64_MAX ? (int64_t)-1
                                                     : (int64_t)st.length_first_difference,
            secs);
    if (o->verify)
      fprintf(stderr, ",\"verify\":{\"compared\":%" PRIu64 ",\"equal\":%" PRIu64
                      ",\"different\":%" PRIu64 ",\"first_difference\":%" PRId64 "}",
              v.compared, v.equal, v.different,
              v.has_difference ? (int64_t)v.first_cycle : (int64_t)-1);
    fprintf(stderr, ",\"ok\":%s}\n", fail ? "false" : "true");
  } else {
    fprintf(stderr,
            "sonde: frankentrace run: %s: %u runs of %" PRIu64 " cycles (N = %" PRIu64
            ", SWO %" PRIu64 " baud, %" PRIu64 " bytes), %.2f s -> %s\n"
            "  cycles: %" PRIu64 " pc, %" PRIu64 " sleep, %" PRIu64 " unrecoverable (cycle 0 "
            "is before the first possible sample); "
            "%" PRIu64 " samples lost, %" PRIu64 " overflow packets, %u runs discarded, "
            "%zu conflicts between runs\n",
            o->elf_path, st.iterations, st.run_cycles, n, baud, st.swo_bytes, secs, o->out_path,
            rep.counts.pc, rep.counts.sleep, bad, st.lost_samples, st.overflow_packets,
            st.bad_iterations, rep.conflict_count);
    if (o->bit_errors > 0)
      fprintf(stderr, "  wire: %" PRIu64 " bit errors injected; %u runs repeated; %u still "
                      "corrupt (their phases unsampled)\n",
              st.flipped_bits, st.reruns, st.bad_iterations);
    for (size_t i = 0; i < rep.conflict_count && i < 5; i++) {
      const struct sonde_ft_conflict *k = &rep.conflicts[i];
      fprintf(stderr, "  nondeterminism: %s: runs %u and %u (phase %u) differ from cycle %" PRIu64
                      " (%" PRIu64 " cycles)\n",
              k->kind == SONDE_FT_CONFLICT_LENGTH ? "length" : "samples", k->iter_a, k->iter_b,
              k->phase, k->first_cycle, k->cycles);
    }
    if (st.length_first_difference != UINT64_MAX)
      fprintf(stderr, "  nondeterminism: length: run %u's environment run again at run %u's "
                      "phase: their samples first differ at cycle %" PRIu64 "\n",
              st.length_runs[1], st.length_runs[0], st.length_first_difference);
    if (st.distrusted_from != UINT64_MAX)
      fprintf(stderr, "  untrusted: cycles %" PRIu64 ".. marked conflict (from N cycles "
                      "before the first disagreement between runs or impossible transition: runs "
                      "go apart before it shows)\n", st.distrusted_from);
    if (o->verify) {
      if (v.has_difference) {
        char got[256], want[256];
        ft_cli_describe(o->sym, v.got, got, sizeof got);
        ft_cli_describe(o->sym, v.want, want, sizeof want);
        fprintf(stderr, "  verify: FIRST DIFFERENCE at cycle %" PRIu64 ": trace %s, ground truth %s"
                        " (%" PRIu64 " of %" PRIu64 " cycles differ)\n",
                v.first_cycle, got, want, v.different, v.compared);
      } else {
        fprintf(stderr, "  verify: equal to the VM's ground truth on all %" PRIu64
                        " compared cycles (%" PRIu64 " unrecoverable)\n",
                v.compared, v.unrecoverable);
      }
    }
  }
  if (o->truth_path && verify_file(o, trace, false, stderr, NULL))
    fail = true;
  if (o->lsu_on) {
    struct sonde_ft_vm_lsu_config lc = {.machine = o->machine, .elf = o->elf,
                                        .elf_len = o->elf_len, .elf_name = o->elf_path,
                                        .baud = baud, .jobs = (unsigned)o->jobs,
                                        .max_cycles = o->max_cycles, .no_jit = o->no_jit};
    if (ft_lsu_cli_probe((struct ft_lsu_cli *)&o->lsu, &lc, trace, o->sym, o->elf_path, stderr))
      fail = true;
  }
  status = fail ? CLI_FAIL : CLI_OK;
out:
  sonde_ft_trace_free(trace);
  sonde_ft_trace_free(truth);
  sonde_ft_vm_free_state(state);
  return status;
}

int cmd_frankentrace_run(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace run -e <fw.elf> [--probe] [options] -o <trace>",
      "Trace a firmware image on the virtual Cortex-M with FrankenTrace and stitch one\n"
      "cycle-level PC trace. Two modes:\n"
      "  runner image (target/cortexm/frankentrace linked in; found by its ft_preamble and\n"
      "    ft_st symbols): the firmware repeats itself, one plan entry per boot, as on\n"
      "    silicon. --jobs 1: one VM through every SYSRESETREQ with .noinit retained;\n"
      "    --jobs J (or --preload): one VM per iteration, its iteration state written into\n"
      "    ft_st through the debug port, halted at its reset by VC_CORERESET. The same\n"
      "    bytes either way. N, baud and repeats are the firmware's (its ft_config).\n"
      "  --probe: an unmodified image, run once per sampling phase 0..N-1 (plus --repeats\n"
      "    redundant runs), the trace blocks set through the debug port at reset as a\n"
      "    debugger would; the program must end (semihosting exit).\n"
      "Each run's SWO bytes are decoded, judged and stitched. Runs that disagree\n"
      "(nondeterminism) are reported with the first cycle they differ at, and every cycle\n"
      "from N cycles before it (or before the first transition impossible in the code) is\n"
      "marked conflict. --swo-bit-errors corrupts the wire: corrupt runs are\n"
      "run again (--attempts), then left unsampled. --verify compares with the VM's ground\n"
      "truth, --truth with a `sonde run --trace-pc` file, cycle by cycle. Exit 1 when\n"
      "anything is lost, disagrees, is impossible in the code or differs from the truth.\n"
      "LSU (data transfers, --lsu-out): a runner image's plan traces range pairs x packet\n"
      "kinds with DebugMonitor delays (invasive, ordered over the pairs); --probe --lsu\n"
      "RANGES runs the unmodified image once per range and kind with no delays\n"
      "(noninvasive: what the ITM loses is marked as gaps). Both are placed on the PC trace."};
  struct run_opts o = {.repeats = UINT64_MAX, .jobs = 1, .seed = 1};
  const char *machine_name = "cm3", *format = "pct";
  bool probe = false, jit = false, no_jit_old = false;
  uint64_t repeat_old = UINT64_MAX;
  struct cli_opt opts[] = {
      OPT_STRING('e', "elf", "<file>", &o.elf_path, "the firmware ELF image (required)"),
      OPT_STRING('m', "machine", "<name|file>", &machine_name, "machine (default: cm3)"),
      OPT_FLAG(0, "probe", &probe, "trace the unmodified image through the debug port"),
      OPT_U64('j', "jobs", "<j>", &o.jobs, "runs in parallel (default: 1); the result is the same"),
      OPT_FLAG(0, "preload", &o.preload,
               "runner image: one VM per iteration, preloaded, even with --jobs 1"),
      OPT_GROUP("probe mode"),
      OPT_U64(0, "baud", "<rate>", &o.baud,
              "SWO baud rate; the core clock divided by an integer (default: the core clock)"),
      OPT_U64('N', "interval", "<n>", &o.n,
              "sample every n cycles: 64..1024 in steps of 64, 2048..16384 in steps of 1024 "
              "(default: the smallest the line carries)"),
      OPT_U64(0, "repeats", "<r>", &o.repeats,
              "redundant runs of phases 0..r-1, compared to catch nondeterminism (default: 2)"),
      OPT_U64(0, "repeat", "<r>", &repeat_old, "the same as --repeats"),
      OPT_FLAG(0, "strict", &o.strict,
               "fail on any unrecoverable cycle (default: only on lost samples, conflicts and "
               "differences; cycle 0, before the first possible sample, is never sampled)"),
      OPT_GROUP("both modes"),
      OPT_FLAG(0, "verify", &o.verify, "compare with the VM's ground truth (a hooked run)"),
      OPT_STRING(0, "lsu", "<ranges>", &o.lsu.spec,
                 "LSU trace of these 64 KiB ranges: comma-separated, each 0x2000 (address >> "
                 "16), an address or a symbol; a runner image traces its own (--lsu checks them)"),
      OPT_STRING(0, "lsu-out", "<csv>", &o.lsu.out_path,
                 "write the LSU trace (sonde run --trace-lsu CSV; gaps and unplaced marked)"),
      OPT_STRING(0, "lsu-truth", "<csv>", &o.lsu.truth_path,
                 "compare the LSU trace with sonde run --trace-lsu (with --truth for cycles)"),
      OPT_STRING(0, "truth", "<pct>", &o.truth_path,
                 "compare with a ground-truth PC trace (sonde run --trace-pc) cycle by cycle"),
      OPT_DOUBLE(0, "swo-bit-errors", "<p>", &o.bit_errors,
                 "invert each bit time of the SWO waveform with probability p (sampled at 4x "
                 "the baud and decoded back)"),
      OPT_U64(0, "swo-seed", "<s>", &o.seed, "seed of the bit errors (default: 1)"),
      OPT_U64(0, "attempts", "<a>", &o.attempts,
              "runs of an iteration the wire corrupted before it is left unsampled (default: 4)"),
      OPT_STRING(0, "format", "<pct|csv|perfetto>", &format, "output format (default: pct)"),
      OPT_STRING('o', "output", "<file>", &o.out_path, "write the trace to <file> (required)"),
      OPT_U64(0, "max-cycles", "<n>", &o.max_cycles, "per-VM guard (default: 10 G cycles)"),
      OPT_FLAG(0, "jit", &jit,
               "compile hot code for the host (default: interpret; FrankenTrace makes many short "
               "runs and every new VM or reset throws compiled code away, docs/benchmarks.md)"),
      OPT_FLAG(0, "no-jit", &no_jit_old, "interpret every instruction (the default)"),
      OPT_JSON(&o.json),
      OPT_END(),
  };
  int nargs;
  int rc = cli_parse(argc, argv, opts, &help, &nargs);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (nargs)
    return cli_usage_error(&help, "unexpected argument '%s'", argv[0]);
  if (!o.elf_path)
    return cli_usage_error(&help, "-e <fw.elf> is required");
  if (!o.out_path)
    return cli_usage_error(&help, "-o <trace> is required");
  if (repeat_old != UINT64_MAX)
    o.repeats = repeat_old;
  if (jit && no_jit_old)
    return cli_usage_error(&help, "--jit and --no-jit contradict each other");
  o.no_jit = !jit;
  bool repeats_given = o.repeats != UINT64_MAX;
  if (!repeats_given)
    o.repeats = 2;
  if (sonde_ft_format_parse(format, &o.fmt))
    return cli_usage_error(&help, "--format must be pct, csv or perfetto, not '%s'", format);
  if (o.jobs < 1 || o.jobs > 256)
    return cli_usage_error(&help, "--jobs must be 1..256");
  if (!(o.bit_errors >= 0 && o.bit_errors <= 0.01))
    return cli_usage_error(&help, "--swo-bit-errors: %g is not a probability in 0..0.01",
                           o.bit_errors);
  if (o.attempts > 100)
    return cli_usage_error(&help, "--attempts must be 1..100");
  if (o.n > 16384 || (o.n && !sonde_ft_dwt_ctrl_for((uint32_t)o.n)))
    return cli_usage_error(&help,
                           "-N %" PRIu64 ": the DWT samples every 64, 128, ..., 1024 cycles "
                           "(CYCTAP 0) or 2048, 3072, ..., 16384 (CYCTAP 1)", o.n);
  int status = CLI_FAIL;
  if (cli_load_machine(machine_name, &o.machine) != CLI_OK)
    goto out;
  if (!(o.elf = cli_read_firmware(o.elf_path, true, &o.elf_len)))
    goto out;
  if (ft_cli_open_elf(o.elf_path, &o.sym) != CLI_OK)
    goto out;
  o.lsu_on = o.lsu.spec || o.lsu.out_path || o.lsu.truth_path;
  if (o.lsu_on && ft_lsu_cli_init(&o.lsu, o.sym) < 0) {
    cli_error("frankentrace run: %s", o.lsu.diag.msg);
    status = CLI_USAGE;
    goto out;
  }
  struct sonde_diag why;
  bool runner = sonde_ft_vm_is_runner(o.sym, &why);
  struct sonde_diag lsu_why;
  if (probe && o.lsu_on && !o.lsu.nwant) {
    cli_error("frankentrace run: --probe: --lsu RANGES is needed (which 64 KiB ranges to trace)");
    status = CLI_USAGE;
  } else if (probe && o.lsu_on && sonde_ft_vm_lsu_check(o.machine, &lsu_why) < 0) {
    cli_error("frankentrace run: machine %s: %s", machine_name, lsu_why.msg);
  } else if (probe) {
    status = run_probe(&o);
  } else if (!runner) {
    cli_error("frankentrace run: '%s' is not a FrankenTrace runner image (%s): give --probe to "
              "trace it unmodified through the debug port, or link target/cortexm/frankentrace "
              "into it (docs/frankentrace-target.md)", o.elf_path, why.msg);
    status = CLI_USAGE;
  } else if (o.n || o.baud || repeats_given || o.strict) {
    cli_error("frankentrace run: '%s' is a runner image: its N, baud and repeats are compiled in "
              "(its ft_config); -N, --baud, --repeats and --strict apply to --probe", o.elf_path);
    status = CLI_USAGE;
  } else {
    status = run_runner(&o);
  }
out:
  ft_lsu_cli_free(&o.lsu);
  sonde_sym_free(o.sym);
  free(o.elf);
  sonde_machine_free(o.machine);
  return status;
}
