/* `sonde frankentrace run`: FrankenTrace on the virtual Cortex-M
 * (sonde/frankentrace_vm.h does the work; docs/frankentrace.md). */
#include "cli.h"
#include "cmd_frankentrace.h"
#include "sonde/frankentrace_vm.h"
#include "sonde/vm.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


static void on_progress(void *ctx, uint32_t done, uint32_t total)
{
  (void)total;
  cli_progress_update(ctx, done);
}

int cmd_frankentrace_run(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace run -e <fw.elf> --probe [options] -o <trace>",
      "Trace a firmware image on the virtual Cortex-M with FrankenTrace: run it once per\n"
      "sampling phase 0..N-1 (plus --repeat redundant runs), each with DWT PC sampling every N\n"
      "cycles over a SWO line at --baud, decode each run's SWO bytes and stitch the samples\n"
      "into one cycle-level PC trace. --probe traces the unmodified image: the trace blocks\n"
      "are set through the debug port at reset, as a debugger would on a board. The program\n"
      "must end (semihosting exit). --verify compares the result with the VM's ground truth,\n"
      "cycle by cycle. Exit 1 when samples were lost, redundant runs disagree or the trace\n"
      "differs from the ground truth (--strict: also for any unrecoverable cycle)."};
  const char *elf_path = NULL, *machine_name = "cm3", *out_path = NULL, *format = "pct";
  uint64_t baud = 0, n = 0, jobs = 1, repeat = 1, max_cycles = 0;
  bool probe = false, verify = false, json = false, no_jit = false, strict = false;
  struct cli_opt opts[] = {
      OPT_STRING('e', "elf", "<file>", &elf_path, "the firmware ELF image (required)"),
      OPT_STRING('m', "machine", "<name|file>", &machine_name, "machine (default: cm3)"),
      OPT_U64(0, "baud", "<rate>", &baud,
              "SWO baud rate; the core clock divided by an integer (default: the core clock)"),
      OPT_U64('N', "interval", "<n>", &n,
              "sample every n cycles: 64..1024 in steps of 64, 2048..16384 in steps of 1024 "
              "(default: the smallest the line carries)"),
      OPT_U64('j', "jobs", "<j>", &jobs, "runs in parallel (default: 1); the result is the same"),
      OPT_U64(0, "repeat", "<r>", &repeat,
              "redundant runs of phases 0..r-1, compared to catch nondeterminism (default: 1)"),
      OPT_FLAG(0, "probe", &probe, "trace the unmodified image through the debug port"),
      OPT_FLAG(0, "verify", &verify, "compare with the VM's ground truth (a hooked run)"),
      OPT_FLAG(0, "strict", &strict,
               "fail on any unrecoverable cycle (default: only on lost samples, conflicts and "
               "differences; cycle 0, before the first possible sample, is never sampled)"),
      OPT_STRING(0, "format", "<pct|csv|perfetto>", &format, "output format (default: pct)"),
      OPT_STRING('o', "output", "<file>", &out_path, "write the trace to <file> (required)"),
      OPT_U64(0, "max-cycles", "<n>", &max_cycles, "per-run guard (default: 10 G cycles)"),
      OPT_FLAG(0, "no-jit", &no_jit, "interpret every instruction (rules the compiler out)"),
      OPT_JSON(&json),
      OPT_END(),
  };
  int nargs;
  int rc = cli_parse(argc, argv, opts, &help, &nargs);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (nargs)
    return cli_usage_error(&help, "unexpected argument '%s'", argv[0]);
  if (!elf_path)
    return cli_usage_error(&help, "-e <fw.elf> is required");
  if (!out_path)
    return cli_usage_error(&help, "-o <trace> is required");
  if (!probe)
    return cli_usage_error(&help,
                           "give --probe to trace the unmodified image through the debug port; "
                           "firmware built with the target runner (target/cortexm/frankentrace) "
                           "repeats itself: `sonde run --swo capture.swo FW.elf`, then `sonde "
                           "frankentrace stitch -e FW.elf capture.swo -o TRACE` "
                           "(docs/frankentrace-target.md)");
  enum sonde_ft_format fmt;
  if (sonde_ft_format_parse(format, &fmt))
    return cli_usage_error(&help, "--format must be pct, csv or perfetto, not '%s'", format);
  if (jobs < 1 || jobs > 256)
    return cli_usage_error(&help, "--jobs must be 1..256");
  if (n > 16384 || (n && !sonde_ft_dwt_ctrl_for((uint32_t)n)))
    return cli_usage_error(&help,
                           "-N %" PRIu64 ": the DWT samples every 64, 128, ..., 1024 cycles "
                           "(CYCTAP 0) or 2048, 3072, ..., 16384 (CYCTAP 1)", n);

  struct sonde_machine *machine = NULL;
  void *elf = NULL;
  struct sonde_sym *sym = NULL;
  struct sonde_ft_trace *trace = NULL, *truth = NULL;
  struct sonde_ft_vm_state *state = NULL;
  int status = CLI_FAIL;
  if (cli_load_machine(machine_name, &machine) != CLI_OK)
    goto out;
  size_t elf_len;
  if (!(elf = cli_read_firmware(elf_path, true, &elf_len)))
    goto out;
  if (ft_cli_open_elf(elf_path, &sym) != CLI_OK)
    goto out;
  uint64_t clock = sonde_machine_clock_hz(machine);
  if (!baud)
    baud = clock;
  if (!n) {
    n = sonde_ft_smallest_n(clock, baud, 0);
    if (!n) {
      cli_error("frankentrace run: SWO at %" PRIu64 " baud is too slow for PC sampling at %" PRIu64
                " Hz even every 16384 cycles: raise --baud", baud, clock);
      goto out;
    }
  }
  struct cli_progress prog;
  cli_progress_start(&prog, "runs", n + (repeat > n ? n : repeat));
  struct sonde_ft_vm_config cfg = {
      .machine = machine, .elf = elf, .elf_len = elf_len, .elf_name = elf_path,
      .n = (uint32_t)n, .baud = baud, .repeat = (uint32_t)repeat, .jobs = (unsigned)jobs,
      .max_cycles = max_cycles, .ground_truth = verify, .no_jit = no_jit,
      .progress = on_progress, .progress_ctx = &prog};
  struct sonde_ft_report rep;
  struct sonde_ft_vm_stats st;
  struct sonde_diag d = {{0}};
  double t0 = cli_now_s();
  rc = sonde_ft_vm_run(&cfg, &trace, verify ? &truth : NULL, &rep, &st, &state, &d);
  double secs = cli_now_s() - t0;
  cli_progress_end(&prog);
  if (rc) {
    cli_error("frankentrace run: %s", d.msg);
    goto out;
  }
  FILE *f = cli_open_output(out_path, fmt != SONDE_FT_FORMAT_CSV);
  if (!f)
    goto out;
  rc = sonde_ft_write(f, out_path, fmt, trace, sym, &d);
  if (cli_close_output(f, out_path) || rc) {
    if (rc)
      cli_error("frankentrace run: %s", d.msg);
    goto out;
  }
  struct sonde_ft_verify_result v = {0};
  if (verify && sonde_ft_verify(trace, truth, &v)) {
    cli_error("frankentrace run: verify: out of memory");
    goto out;
  }
  uint64_t bad = rep.counts.unsampled + rep.counts.lost + rep.counts.conflict;
  /* Cycle 0 can never be sampled (the first tap is a cycle after the set-up), so
   * the stitcher has it as lost; samples lost on the wire are st.lost_samples. */
  bool fail = st.lost_samples || st.bad_iterations || rep.counts.conflict || rep.conflict_count ||
              (strict && bad) || (verify && (v.different || v.missing || v.extra));
  status = fail ? CLI_FAIL : CLI_OK;
  if (json) {
    fprintf(stderr,
            "{\"n\":%" PRIu64 ",\"baud\":%" PRIu64 ",\"runs\":%u,\"cycles\":%" PRIu64
            ",\"exit_code\":%" PRId64 ",\"swo_bytes\":%" PRIu64 ",\"pc_samples\":%" PRIu64
            ",\"sleep_samples\":%" PRIu64 ",\"overflows\":%" PRIu64 ",\"lost\":%" PRIu64
            ",\"bad_runs\":%u,\"pc\":%" PRIu64 ",\"sleep\":%" PRIu64 ",\"unsampled\":%" PRIu64
            ",\"conflicts\":%zu,\"seconds\":%.3f",
            n, baud, st.iterations, st.run_cycles, (int64_t)st.exit_code, st.swo_bytes,
            st.pc_packets, st.sleep_packets, st.overflow_packets, st.lost_samples,
            st.bad_iterations, rep.counts.pc, rep.counts.sleep, rep.counts.unsampled,
            rep.conflict_count, secs);
    if (verify)
      fprintf(stderr, ",\"verify\":{\"compared\":%" PRIu64 ",\"equal\":%" PRIu64
                      ",\"different\":%" PRIu64 ",\"first_difference\":%" PRId64 "}",
              v.compared, v.equal, v.different,
              v.has_difference ? (int64_t)v.first_cycle : (int64_t)-1);
    fprintf(stderr, ",\"ok\":%s}\n", status == CLI_OK ? "true" : "false");
  } else {
    fprintf(stderr,
            "sonde: frankentrace run: %s: %u runs of %" PRIu64 " cycles (N = %" PRIu64
            ", SWO %" PRIu64 " baud, %" PRIu64 " bytes), %.2f s -> %s\n"
            "  cycles: %" PRIu64 " pc, %" PRIu64 " sleep, %" PRIu64 " unrecoverable (cycle 0 "
            "is before the first possible sample); "
            "%" PRIu64 " samples lost, %" PRIu64 " overflow packets, %u runs discarded, "
            "%zu conflicts between redundant runs\n",
            elf_path, st.iterations, st.run_cycles, n, baud, st.swo_bytes, secs, out_path,
            rep.counts.pc, rep.counts.sleep, bad, st.lost_samples, st.overflow_packets,
            st.bad_iterations, rep.conflict_count);
    for (size_t i = 0; i < rep.conflict_count && i < 5; i++)
      fprintf(stderr, "  nondeterminism: phase %u, runs %u and %u differ from cycle %" PRIu64
                      " (%" PRIu64 " cycles)\n",
              rep.conflicts[i].phase, rep.conflicts[i].iter_a, rep.conflicts[i].iter_b,
              rep.conflicts[i].first_cycle, rep.conflicts[i].cycles);
    if (verify) {
      if (v.has_difference) {
        char got[256], want[256];
        ft_cli_describe(sym, v.got, got, sizeof got);
        ft_cli_describe(sym, v.want, want, sizeof want);
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
out:
  sonde_ft_trace_free(trace);
  sonde_ft_trace_free(truth);
  sonde_ft_vm_free_state(state);
  sonde_sym_free(sym);
  free(elf);
  sonde_machine_free(machine);
  return status;
}
