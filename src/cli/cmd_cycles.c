/* `sonde cycles compare`: the VM's timing model against a real cycle-level
 * PC trace (include/sonde/cycles.h). */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/cycles.h"
#include "sonde/frankentrace.h"
#include "sonde/sym.h"
#include "sonde/vm.h"

static double pct(uint64_t a, uint64_t b)
{
  return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_group(const struct sonde_cycles_group *g)
{
  printf("  %-28s %8" PRIu64 " %6.1f%%  observed %9" PRIu64 "  model %9" PRIu64 " (%+.2f%%)\n",
         g->name, g->compared, pct(g->exact, g->compared), g->obs, g->pred,
         g->obs ? 100.0 * ((double)g->pred - (double)g->obs) / (double)g->obs : 0.0);
}

static void print_json_group(const struct sonde_cycles_group *g, bool comma)
{
  printf("{\"name\": ");
  cli_json_string(stdout, g->name);
  printf(", \"compared\": %" PRIu64 ", \"exact\": %" PRIu64 ", \"observed_cycles\": %" PRIu64
         ", \"model_cycles\": %" PRIu64 "}%s",
         g->compared, g->exact, g->obs, g->pred, comma ? ", " : "");
}

static int compare(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde cycles compare -e <elf> [-m <machine>] [--lsu <lsu.csv.gz>] [options] <pc-trace>",
      "Drive the VM's timing model (the memory system a machine declares with 'memsys'\n"
      "lines: fetch queue, flash line buffer, cache, shared port, slow regions) with a\n"
      "real cycle-level PC trace (FrankenTrace CSV or pct, gzip allowed) and compare the\n"
      "duration of every instruction (its cycles from entering Execute to the next one\n"
      "entering Execute) with the model's. Data addresses come from the code (literals),\n"
      "from register values followed along the trace, and from --lsu (FrankenTrace's LSU\n"
      "CSV or sonde run --trace-lsu, by the order of each instruction's executions).\n"
      "Instructions near an impossible transition (control flow the ELF cannot make, e.g.\n"
      "from stitching nondeterministic runs), exception entries/returns, runs cut by\n"
      "unrecoverable cycles, code outside the ELF and multiplies/divides with unknown\n"
      "operands are left out and counted.\n"
      "Prints agreement overall, per instruction class, per cache mode, outside the two\n"
      "dominant loops, and the cycles per function. Exit status 1 when the exact\n"
      "agreement is below --min (percent)."};
  const char *elf = NULL, *machine = "cc2650", *lsu = NULL, *dump = NULL;
  bool json = false;
  uint64_t margin = 8, funcs = 15;
  double min = 0;
  struct cli_opt opts[] = {
      OPT_ELF(&elf),
      OPT_STRING('m', "machine", "<name|file>", &machine,
                 "machine whose memory system is modelled (default cc2650)"),
      OPT_STRING(0, "lsu", "<file>", &lsu, "LSU trace of the same program (data addresses)"),
      OPT_U64(0, "margin", "<n>", &margin,
              "instructions left out each side of an impossible transition (default 8)"),
      OPT_U64(0, "functions", "<n>", &funcs,
              "list the <n> functions with the most cycles (default 15)"),
      OPT_DOUBLE(0, "min", "<percent>", &min, "fail (status 1) below this exact agreement"),
      OPT_STRING(0, "dump", "<file>", &dump,
                 "write one CSV row per instruction "
                 "(cycle,pc,where,class,mode,observed,model,left_out,addr)"),
      OPT_JSON(&json),
      OPT_END(),
  };
  int n;
  int rc = cli_parse(argc, argv, opts, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (!elf)
    return cli_usage_error(&help, "-e <elf> is required");
  if (n != 1)
    return cli_usage_error(&help, "expected one <pc-trace>, got %d", n);
  if (margin < 1 || margin > 10000)
    return cli_usage_error(&help, "--margin must be 1 to 10000");
  struct sonde_machine *m = NULL;
  struct sonde_sym *sym = NULL;
  struct sonde_ft_trace *t = NULL;
  struct sonde_ft_xfer *x = NULL;
  size_t nx = 0;
  FILE *df = NULL;
  struct sonde_diag d = {{0}};
  int status = CLI_FAIL;
  struct sonde_cycles_result r = {0};
  if (cli_load_machine(machine, &m))
    goto done;
  if (sonde_sym_open(elf, &sym, &d)) {
    cli_error("%s", d.msg);
    goto done;
  }
  if (sonde_ft_read(argv[0], SONDE_FT_FORMAT_AUTO, 0, &t, &d)) {
    cli_error("%s", d.msg);
    goto done;
  }
  if (lsu && sonde_ft_lsu_read(lsu, &x, &nx, &d)) {
    cli_error("%s", d.msg);
    goto done;
  }
  if (dump && !(df = fopen(dump, "w"))) {
    cli_error("%s: cannot write", dump);
    goto done;
  }
  if (df)
    fprintf(df, "cycle,pc,where,class,mode,observed,model,left_out,addr\n");
  struct sonde_cycles_opts o = {m, sym, t, x, nx, (unsigned)margin, df};
  if (sonde_cycles_compare(&o, &r, &d)) {
    cli_error("%s", d.msg);
    goto done;
  }
  double agree = pct(r.all.exact, r.all.compared);
  if (json) {
    printf("{\"instructions\": %" PRIu64 ", \"all\": ", r.instructions);
    print_json_group(&r.all, false);
    printf(", \"outside_loops\": ");
    print_json_group(&r.outside, false);
    printf(", \"loops\": [");
    cli_json_string(stdout, r.loops[0]);
    printf(", ");
    cli_json_string(stdout, r.loops[1]);
    printf("], \"classes\": [");
    for (int i = 0; i < SONDE_CYCLES_CLASSES; i++)
      print_json_group(&r.cls[i], i + 1 < SONDE_CYCLES_CLASSES);
    printf("], \"modes\": [");
    for (int i = 0; i < SONDE_CYCLES_MODES; i++)
      print_json_group(&r.mode[i], i + 1 < SONDE_CYCLES_MODES);
    printf("], \"impossible_transitions\": %" PRIu64 ", \"left_out\": {\"impossible\": %" PRIu64
           ", \"exception\": %" PRIu64 ", \"incomplete\": %" PRIu64 ", \"no_code\": %" PRIu64
           ", \"operands\": %" PRIu64 "}, \"worst_function_error\": %.5f, \"worst_function\": ",
           r.impossible, r.left_impossible, r.left_exception, r.left_incomplete, r.left_no_code,
           r.left_operands, r.worst_func_err);
    cli_json_string(stdout, r.worst_func);
    printf(", \"functions\": [");
    for (size_t i = 0; i < r.nfunc && i < funcs; i++)
      print_json_group(&r.func[i], i + 1 < r.nfunc && i + 1 < funcs);
    printf("]}\n");
  } else {
    printf("%" PRIu64 " instructions in the trace, %" PRIu64 " compared, %.1f%% exact\n",
           r.instructions, r.all.compared, agree);
    printf("left out: %" PRIu64 " near %" PRIu64 " impossible transitions, %" PRIu64
           " at exception entry/return, %" PRIu64 " cut by unrecoverable cycles, %" PRIu64
           " not code of the ELF, %" PRIu64 " multiply/divide with unknown operands\n",
           r.left_impossible, r.impossible, r.left_exception, r.left_incomplete, r.left_no_code,
           r.left_operands);
    printf("data addresses known (code constants, register values, LSU trace): %" PRIu64
           " of %" PRIu64 " loads/stores\n", r.addr_known, r.addr_total);
    for (unsigned i = 0; i < r.nwhere && i < 10; i++)
      printf("  impossible at cycle %" PRIu64 ": 0x%08x -> 0x%08x (%s)\n", r.where[i].cycle,
             r.where[i].from, r.where[i].to, r.where[i].why);
    if (r.impossible > 10)
      printf("  ... and %" PRIu64 " more\n", r.impossible - 10);
    printf("\n  %-28s %8s %7s\n", "", "compared", "exact");
    print_group(&r.all);
    printf("  dominant loops: %s; %s\n", r.loops[0], r.loops[1]);
    print_group(&r.outside);
    printf("per class:\n");
    for (int i = 0; i < SONDE_CYCLES_CLASSES; i++)
      if (r.cls[i].compared)
        print_group(&r.cls[i]);
    printf("per cache mode:\n");
    for (int i = 0; i < SONDE_CYCLES_MODES; i++)
      if (r.mode[i].compared)
        print_group(&r.mode[i]);
    printf("per function (most observed cycles first; worst sum error %.2f%% in %s):\n",
           100.0 * r.worst_func_err, r.worst_func[0] ? r.worst_func : "-");
    for (size_t i = 0; i < r.nfunc && i < funcs; i++)
      print_group(&r.func[i]);
  }
  status = min > 0 && agree < min ? CLI_FAIL : CLI_OK;
  if (status)
    cli_error("exact agreement %.1f%% is below --min %.1f%%", agree, min);
done:
  if (df)
    fclose(df);
  sonde_cycles_result_free(&r);
  free(x);
  sonde_ft_trace_free(t);
  sonde_sym_free(sym);
  sonde_machine_free(m);
  return status;
}

int cmd_cycles(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde cycles compare -e <elf> [-m <machine>] [--lsu <lsu>] <pc-trace>",
      "The VM's cycle model against silicon. Subcommands:\n"
      "  compare   drive the timing model with a real cycle-level PC trace and compare\n"
      "            instruction durations (sonde cycles compare --help)"};
  if (argc >= 2 && strcmp(argv[1], "compare") == 0)
    return compare(argc - 1, argv + 1);
  struct cli_opt opts[] = {OPT_END()};
  int n;
  int rc = cli_parse(argc, argv, opts, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  return cli_usage_error(&help, n ? "unknown subcommand '%s'" : "expected a subcommand%s",
                         n ? argv[0] : "");
}
