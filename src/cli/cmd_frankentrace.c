/* `sonde frankentrace`: FrankenTrace (issue 15, docs/frankentrace.md) —
 * dispatch to the subcommands, `verify`, and the helpers they share. The work
 * is in include/sonde/frankentrace.h. */
#include "cli.h"
#include "cmd_frankentrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void read_progress(void *ctx, uint64_t done, uint64_t total)
{
  struct cli_progress *p = ctx;
  p->total = total;
  cli_progress_update(p, done);
}

struct sonde_ft_trace *ft_cli_read_trace(const char *path)
{
  struct sonde_ft_trace *t;
  struct sonde_diag d = {{0}};
  struct cli_progress pr; /* on a terminal only */
  cli_progress_start(&pr, "reading", 0);
  int rc = sonde_ft_read_progress(path, SONDE_FT_FORMAT_AUTO, 0, read_progress, &pr, &t, &d);
  cli_progress_end(&pr);
  if (rc) {
    cli_error("%s: %s", cli_command_name, d.msg);
    return NULL;
  }
  return t;
}

int ft_cli_open_elf(const char *path, struct sonde_sym **out)
{
  *out = NULL;
  if (!path)
    return CLI_OK;
  struct sonde_diag d = {{0}};
  if (sonde_sym_open(path, out, &d) < 0)
    return cli_error("%s: %s", cli_command_name, d.msg);
  return CLI_OK;
}

void ft_cli_symbol(struct sonde_sym *sym, uint32_t pc, char *buf, size_t cap)
{
  if (sym && sonde_sym_name(sym, pc, NULL))
    sonde_sym_format(sym, pc, buf, cap);
  else
    snprintf(buf, cap, "0x%08x", pc);
}

void ft_cli_describe(struct sonde_sym *sym, struct sonde_ft_cell c, char *buf, size_t cap)
{
  switch (c.state) {
  case SONDE_FT_PC:
  case SONDE_FT_CONFLICT:
  case SONDE_FT_INVALID: {
    char name[160] = "", insn[200] = "";
    if (sym) {
      if (sonde_sym_name(sym, c.pc, NULL)) {
        name[0] = ' ';
        sonde_sym_format(sym, c.pc, name + 1, sizeof name - 1);
      }
      struct sonde_sym_insn in;
      if (sonde_sym_disasm(sym, c.pc, &in) == 0)
        snprintf(insn, sizeof insn, in.operands[0] ? " (%s %s)" : " (%s)", in.mnemonic,
                 in.operands);
    }
    snprintf(buf, cap, "0x%08x%s%s%s", c.pc, name, insn,
             c.state == SONDE_FT_PC ? "" : c.state == SONDE_FT_CONFLICT ? " [conflict]" : " [invalid]");
    break;
  }
  case SONDE_FT_EXC_ENTRY:
  case SONDE_FT_EXC_RETURN:
  case SONDE_FT_TAIL_CHAIN:
    snprintf(buf, cap, "%s:%u", sonde_ft_state_name(c.state), c.pc);
    break;
  default:
    snprintf(buf, cap, "%s", sonde_ft_state_name(c.state));
    break;
  }
}

/* ---- verify -------------------------------------------------------------- */

int cmd_frankentrace_verify(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace verify [options] <trace> <ground-truth>",
      "Compare a reconstructed PC trace with ground truth, cycle by cycle, and report the\n"
      "first difference with its context. Both files may be pct (`sonde run --trace-pc`,\n"
      "binary or CSV) or FrankenTrace CSV (ts,val,valid,...), gzip-compressed or not.\n"
      "The ground truth is first projected to what DWT PC sampling can show (the\n"
      "instruction occupying each cycle; in exception entry/return the last instruction\n"
      "that started before; sleep as sleep), unless --raw. Unrecoverable cycles in the\n"
      "trace are counted, not compared. Exit status 1 if any compared cycle differs or a\n"
      "ground-truth cycle lies outside the trace (and, with --strict, if any cycle is\n"
      "unrecoverable). A runner trace (`frankentrace stitch`, `run` of a runner image)\n"
      "starts at the first sample of phase 0, the ground truth of the chained image at its\n"
      "reset: --preamble aligns them on the runner's preamble (-e names ft_preamble), or\n"
      "--offset gives the ground-truth cycle of trace cycle 0; the ground truth then also\n"
      "holds the other iterations, so its cycles outside the trace do not fail."};
  const char *elf = NULL;
  bool json = false, raw = false, strict = false, preamble = false;
  uint64_t context = 3, offset = UINT64_MAX;
  struct cli_opt opts[] = {
      OPT_ELF(&elf),
      OPT_FLAG(0, "preamble", &preamble,
               "align a runner trace on the runner's preamble (ft_preamble, needs -e)"),
      OPT_U64(0, "offset", "<cycle>", &offset, "trace cycle 0 is this ground-truth cycle"),
      OPT_U64(0, "context", "<n>", &context, "cycles shown before and after the first difference (default 3)"),
      OPT_FLAG(0, "raw", &raw, "compare the ground truth as it is (no DWT projection)"),
      OPT_FLAG(0, "strict", &strict, "fail if any cycle of the trace is unrecoverable"),
      OPT_JSON(&json),
      OPT_END(),
  };
  int n;
  int rc = cli_parse(argc, argv, opts, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (n != 2)
    return cli_usage_error(&help, "expected <trace> and <ground-truth>, got %d file(s)", n);
  if (context > 1000)
    return cli_usage_error(&help, "--context must be at most 1000");
  if (preamble && offset != UINT64_MAX)
    return cli_usage_error(&help, "--preamble and --offset both align: give one");
  if (preamble && !elf)
    return cli_usage_error(&help, "--preamble needs -e <elf> (where ft_preamble is)");
  struct sonde_sym *sym = NULL;
  struct sonde_ft_trace *t = NULL, *gt = NULL, *proj = NULL;
  int status = CLI_FAIL;
  if (ft_cli_open_elf(elf, &sym) || !(t = ft_cli_read_trace(argv[0])) ||
      !(gt = ft_cli_read_trace(argv[1])))
    goto done;
  if (!raw) {
    if (sonde_ft_project_dwt(gt, &proj)) {
      cli_error("frankentrace verify: out of memory");
      goto done;
    }
    sonde_ft_trace_free(gt);
    gt = proj;
  }
  if (preamble) {
    uint32_t pre;
    struct sonde_diag d = {{0}};
    uint64_t at, gat;
    if (sonde_ft_runner_preamble(sym, elf, &pre, &d) < 0) {
      cli_error("frankentrace verify: %s", d.msg);
      goto done;
    }
    at = sonde_ft_trace_find_pc(t, pre);
    gat = sonde_ft_trace_find_pc(gt, pre);
    if (at == UINT64_MAX || gat == UINT64_MAX || gat < at) {
      cli_error("frankentrace verify: cannot align on the preamble: ft_preamble (0x%08x) is not "
                "in the %s", pre, at == UINT64_MAX ? "trace" : "ground truth");
      goto done;
    }
    offset = gat - at;
  }
  if (offset != UINT64_MAX && offset) {
    struct sonde_ft_trace *moved = sonde_ft_trace_rebase(t, sonde_ft_trace_origin(t) + offset);
    if (!moved) {
      cli_error("frankentrace verify: out of memory");
      goto done;
    }
    sonde_ft_trace_free(t);
    t = moved;
  }
  struct sonde_ft_verify_result v;
  sonde_ft_verify(t, gt, &v);
  bool aligned = offset != UINT64_MAX; /* the ground truth holds more than the trace */
  bool ok = !v.different && (aligned || !v.missing) && !(strict && v.unrecoverable);
  char got[400], want[400];
  if (json) {
    printf("{\"trace\": ");
    cli_json_string(stdout, argv[0]);
    printf(", \"ground_truth\": ");
    cli_json_string(stdout, argv[1]);
    printf(", \"compared\": %" PRIu64 ", \"equal\": %" PRIu64 ", \"different\": %" PRIu64
           ", \"unrecoverable\": %" PRIu64 ", \"missing\": %" PRIu64 ", \"extra\": %" PRIu64,
           v.compared, v.equal, v.different, v.unrecoverable, v.missing, v.extra);
    if (v.has_difference) {
      ft_cli_describe(sym, v.got, got, sizeof got);
      ft_cli_describe(sym, v.want, want, sizeof want);
      printf(", \"first_difference\": {\"cycle\": %" PRIu64 ", \"trace\": ", v.first_cycle);
      cli_json_string(stdout, got);
      printf(", \"ground_truth\": ");
      cli_json_string(stdout, want);
      printf("}");
    }
    printf(", \"ok\": %s}\n", ok ? "true" : "false");
  } else {
    printf("compared %" PRIu64 " cycles: %" PRIu64 " equal, %" PRIu64 " different; %" PRIu64
           " unrecoverable in the trace; %" PRIu64 " ground-truth cycles outside the trace; %" PRIu64
           " trace cycles outside the ground truth\n",
           v.compared, v.equal, v.different, v.unrecoverable, v.missing, v.extra);
    if (v.has_difference) {
      printf("first difference at cycle %" PRIu64 ":\n", v.first_cycle);
      printf("  %12s  %-50s  %s\n", "cycle", "trace", "ground truth");
      uint64_t lo = v.first_cycle > context ? v.first_cycle - context : 0;
      for (uint64_t c = lo; c <= v.first_cycle + context; c++) {
        ft_cli_describe(sym, sonde_ft_trace_at(t, c), got, sizeof got);
        ft_cli_describe(sym, sonde_ft_trace_at(gt, c), want, sizeof want);
        printf("%s %12" PRIu64 "  %-50s  %s\n", c == v.first_cycle ? ">" : " ", c, got, want);
      }
    }
    printf("%s\n", ok ? "verified" : "NOT verified");
  }
  status = ok ? CLI_OK : CLI_FAIL;
done:
  sonde_ft_trace_free(t);
  sonde_ft_trace_free(gt);
  sonde_sym_free(sym);
  return status;
}

/* ---- convert ------------------------------------------------------------- */

int cmd_frankentrace_convert(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace convert [options] --format <pct|csv|perfetto> -o <out> <trace>",
      "Convert a PC trace between pct (`sonde run --trace-pc`), FrankenTrace CSV\n"
      "(ts,val,valid,label,short_instr; labels and disassembly from -e) and Perfetto\n"
      "(one slice per function run over cycles). --dwt first projects a ground-truth trace\n"
      "to what DWT PC sampling shows (what `verify` compares against)."};
  const char *elf = NULL, *out_path = NULL, *format = NULL;
  bool dwt = false;
  struct cli_opt opts[] = {
      OPT_ELF(&elf),
      OPT_OUTPUT(&out_path),
      OPT_STRING(0, "format", "<pct|csv|perfetto>", &format, "output format (required)"),
      OPT_FLAG(0, "dwt", &dwt, "project to what DWT PC samples show"),
      OPT_END(),
  };
  int n;
  int rc = cli_parse(argc, argv, opts, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  enum sonde_ft_format fmt;
  if (!format || sonde_ft_format_parse(format, &fmt) || fmt == SONDE_FT_FORMAT_AUTO)
    return cli_usage_error(&help, "--format must be pct, csv or perfetto");
  if (n != 1)
    return cli_usage_error(&help, "expected one <trace>, got %d", n);
  struct sonde_sym *sym = NULL;
  struct sonde_ft_trace *t = NULL;
  int status = CLI_FAIL;
  if (ft_cli_open_elf(elf, &sym) || !(t = ft_cli_read_trace(argv[0])))
    goto done;
  if (dwt) {
    struct sonde_ft_trace *p;
    if (sonde_ft_project_dwt(t, &p)) {
      cli_error("frankentrace convert: out of memory");
      goto done;
    }
    sonde_ft_trace_free(t);
    t = p;
  }
  FILE *out = cli_open_output(out_path, fmt != SONDE_FT_FORMAT_CSV);
  if (!out)
    goto done;
  struct sonde_diag d = {{0}};
  if (sonde_ft_write(out, out_path ? out_path : "<stdout>", fmt, t, sym, &d)) {
    cli_error("frankentrace convert: %s", d.msg);
    cli_close_output(out, out_path);
    goto done;
  }
  status = cli_close_output(out, out_path);
done:
  sonde_ft_trace_free(t);
  sonde_sym_free(sym);
  return status;
}

/* ---- dispatch ------------------------------------------------------------ */

int cmd_frankentrace(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace run -e <fw.elf> [options] -o <trace>\n"
      "sonde frankentrace stitch -e <elf> [options] <capture>... -o <trace>\n"
      "sonde frankentrace verify [options] <trace> <ground-truth>\n"
      "sonde frankentrace check -e <elf> [options] <trace>\n"
      "sonde frankentrace analyze -e <elf> [options] <trace>\n"
      "sonde frankentrace convert [options] --format <pct|csv|perfetto> -o <out> <trace>",
      "FrankenTrace: complete cycle-level PC traces from DWT PC sampling, by running the\n"
      "same code N times with a shifted sampling phase and stitching the samples\n"
      "(docs/frankentrace.md).\n"
      "  run      trace firmware on the virtual Cortex-M\n"
      "  stitch   stitch captures from silicon\n"
      "  verify   compare a trace with ground truth, cycle by cycle\n"
      "  check    check every transition of a trace against the ELF's code\n"
      "  analyze  busy-wait loops, instruction durations, function totals, register accesses\n"
      "  convert  between pct, FrankenTrace CSV and Perfetto\n"
      "'sonde frankentrace <subcommand> --help' shows the options of each."};
  static const struct {
    const char *name;
    int (*fn)(int, char **);
  } subs[] = {{"run", cmd_frankentrace_run},         {"stitch", cmd_frankentrace_stitch},
              {"verify", cmd_frankentrace_verify},   {"check", cmd_frankentrace_check},
              {"analyze", cmd_frankentrace_analyze}, {"convert", cmd_frankentrace_convert}};
  for (size_t i = 0; argc >= 2 && i < sizeof subs / sizeof subs[0]; i++)
    if (!strcmp(argv[1], subs[i].name)) {
      static char name[40];
      snprintf(name, sizeof name, "frankentrace %s", subs[i].name);
      cli_command_name = name;
      return subs[i].fn(argc - 1, argv + 1);
    }
  int n;
  int rc = cli_parse(argc, argv, NULL, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (n >= 1)
    return cli_usage_error(&help, "unknown subcommand '%s'", argv[0]);
  return cli_usage_error(&help, "missing subcommand (run, stitch, verify, check, analyze or convert)");
}
