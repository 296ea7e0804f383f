/* `sonde frankentrace check`: every transition of a PC trace against the
 * ELF's code (sonde_ft_check). */
#include "cli.h"
#include "cmd_frankentrace.h"

#include <inttypes.h>

int cmd_frankentrace_check(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace check -e <elf> [options] <trace>",
      "Check that every transition between consecutive instructions of a PC trace (pct or\n"
      "FrankenTrace CSV) is one the code can make: to the next instruction, a direct\n"
      "branch or call to its target (decoded from the ELF), an indirect jump (bx, blx,\n"
      "pop/ldm/ldr pc, tbb/tbh; also exception returns) to an instruction start, or an\n"
      "exception entry to a handler of the vector table. Anything else is impossible: a\n"
      "stitching error or nondeterminism between the stitched runs. Nothing is checked\n"
      "across unrecoverable cycles or from code that is not in the ELF (a boot ROM).\n"
      "Exit status 1 if any transition is impossible."};
  const char *elf = NULL;
  bool json = false;
  uint64_t max = 20;
  struct cli_opt opts[] = {
      OPT_ELF(&elf),
      OPT_U64(0, "max", "<n>", &max, "list at most <n> impossible transitions (default 20)"),
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
    return cli_usage_error(&help, "expected one <trace>, got %d", n);
  if (max > 100000)
    return cli_usage_error(&help, "--max must be at most 100000");
  struct sonde_sym *sym = NULL;
  struct sonde_ft_trace *t = NULL;
  int status = CLI_FAIL;
  if (ft_cli_open_elf(elf, &sym) || !(t = ft_cli_read_trace(argv[0])))
    goto done;
  struct sonde_ft_check_result r;
  struct sonde_diag d = {{0}};
  if (sonde_ft_check(t, sym, (size_t)max, &r, &d)) {
    cli_error("frankentrace check: %s", d.msg);
    goto done;
  }
  char from[400], to[400];
  if (json) {
    printf("{\"trace\": ");
    cli_json_string(stdout, argv[0]);
    printf(", \"transitions\": %" PRIu64 ", \"sequential\": %" PRIu64 ", \"branch\": %" PRIu64
           ", \"indirect\": %" PRIu64 ", \"exception_entry\": %" PRIu64 ", \"exception_return\": %" PRIu64
           ", \"across_unrecoverable\": %" PRIu64 ", \"outside_elf\": %" PRIu64
           ", \"impossible\": %" PRIu64 ", \"bad\": [",
           r.transitions, r.by_kind[SONDE_FT_T_SEQUENTIAL], r.by_kind[SONDE_FT_T_BRANCH],
           r.by_kind[SONDE_FT_T_INDIRECT], r.by_kind[SONDE_FT_T_EXC_ENTRY],
           r.by_kind[SONDE_FT_T_EXC_RETURN], r.skipped_unrecoverable, r.skipped_no_code, r.impossible);
    for (size_t i = 0; i < r.bad_count; i++) {
      const struct sonde_ft_bad_transition *b = &r.bad[i];
      ft_cli_describe(sym, (struct sonde_ft_cell){b->from, SONDE_FT_PC}, from, sizeof from);
      ft_cli_describe(sym, (struct sonde_ft_cell){b->to, SONDE_FT_PC}, to, sizeof to);
      printf("%s{\"cycle\": %" PRIu64 ", \"from\": ", i ? ", " : "", b->cycle);
      cli_json_string(stdout, from);
      printf(", \"to\": ");
      cli_json_string(stdout, to);
      printf(", \"why\": ");
      cli_json_string(stdout, b->why);
      printf("}");
    }
    printf("]}\n");
  } else {
    printf("%" PRIu64 " transitions: %" PRIu64 " sequential, %" PRIu64 " direct branch, %" PRIu64
           " indirect, %" PRIu64 " exception entry, %" PRIu64 " exception return, %" PRIu64
           " impossible\n",
           r.transitions, r.by_kind[SONDE_FT_T_SEQUENTIAL], r.by_kind[SONDE_FT_T_BRANCH],
           r.by_kind[SONDE_FT_T_INDIRECT], r.by_kind[SONDE_FT_T_EXC_ENTRY],
           r.by_kind[SONDE_FT_T_EXC_RETURN], r.impossible);
    printf("not checked: %" PRIu64 " across unrecoverable cycles, %" PRIu64
           " from code outside the ELF\n",
           r.skipped_unrecoverable, r.skipped_no_code);
    for (size_t i = 0; i < r.bad_count; i++) {
      const struct sonde_ft_bad_transition *b = &r.bad[i];
      ft_cli_describe(sym, (struct sonde_ft_cell){b->from, SONDE_FT_PC}, from, sizeof from);
      ft_cli_describe(sym, (struct sonde_ft_cell){b->to, SONDE_FT_PC}, to, sizeof to);
      printf("impossible at cycle %" PRIu64 ": %s -> %s: %s\n", b->cycle, from, to, b->why);
    }
    if (r.impossible > r.bad_count)
      printf("... and %" PRIu64 " more\n", r.impossible - r.bad_count);
  }
  status = r.impossible ? CLI_FAIL : CLI_OK;
  sonde_ft_check_result_free(&r);
done:
  sonde_ft_trace_free(t);
  sonde_sym_free(sym);
  return status;
}
