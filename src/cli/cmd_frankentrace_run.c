/* `sonde frankentrace run` and `stitch`: placeholders in this branch. The
 * real ones (VM orchestration, silicon captures) come from the target side of
 * issue 15 and replace this file. */
#include "cli.h"
#include "cmd_frankentrace.h"

int cmd_frankentrace_run(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  fprintf(stderr, "sonde: frankentrace run: not built in this branch\n");
  return CLI_FAIL;
}

int cmd_frankentrace_stitch(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  fprintf(stderr, "sonde: frankentrace stitch: not built in this branch\n");
  return CLI_FAIL;
}
