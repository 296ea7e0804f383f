/* `sonde run`: placeholder until the VM lands (issue 2). */
#include "cli.h"

int cmd_run(int argc, char **argv)
{
  static const struct cli_command_help help = {"sonde run [options] <firmware>", NULL};
  int n;
  int rc = cli_parse(argc, argv, NULL, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  return cli_error("run: the virtual target is not built yet");
}
