/* `sonde`: dispatch to a subcommand from the table in commands.h. */
#include "cli.h"
#include "sonde/common.h"

#include <string.h>

struct command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
};

static const struct command commands[] = {
#define SONDE_COMMAND(name, summary) {#name, cmd_##name, summary},
#include "commands.h"
#undef SONDE_COMMAND
};

static void print_main_help(FILE *out)
{
  fputs("usage: sonde <command> [options] [inputs]\n"
        "\n"
        "Low-cost execution tracing for ARM Cortex-M: a virtual Cortex-M with its debug\n"
        "blocks, and decoders and reconstructors for traces from the VM or real boards.\n"
        "\n"
        "commands:\n",
        out);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-10s  %s\n", commands[i].name, commands[i].summary);
  fputs("\n'sonde <command> --help' shows a command's options; 'sonde --version' the version.\n"
        "Exit status: 0 success, 1 failure, 2 bad usage.\n",
        out);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    print_main_help(stderr);
    return CLI_USAGE;
  }
  const char *name = argv[1];
  if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
    if (argc > 2 && strcmp(name, "help") == 0) {
      /* `sonde help run` == `sonde run --help` */
      char *sub[] = {argv[2], "--help", NULL};
      for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, argv[2])) {
          cli_command_name = commands[i].name;
          return commands[i].fn(2, sub);
        }
      fprintf(stderr, "sonde: unknown command '%s'\n", argv[2]);
      return CLI_USAGE;
    }
    print_main_help(stdout);
    return CLI_OK;
  }
  if (!strcmp(name, "--version") || !strcmp(name, "version")) {
    printf("sonde %s\n", sonde_version_string());
    return CLI_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(commands[i].name, name)) {
      cli_command_name = commands[i].name;
      return commands[i].fn(argc - 1, argv + 1);
    }
  fprintf(stderr, "sonde: unknown command '%s'\nTry 'sonde --help' for the list of commands.\n",
          name);
  return CLI_USAGE;
}
