/* Shared helpers of the `sonde` command: declarative option parsing that also
 * generates --help, uniform error messages, output files and progress. The CLI
 * only parses options and prints; the work is done in libsonde. */
#ifndef SONDE_CLI_H
#define SONDE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SONDE_COMMAND(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.h"
#undef SONDE_COMMAND

/* Exit statuses (DESIGN.md): success, failure, bad usage. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

enum cli_opt_type {
  CLI_OPT_END = 0,
  CLI_OPT_FLAG,     /* bool *value = true */
  CLI_OPT_STRING,   /* const char **value = argument */
  CLI_OPT_OPTSTR,   /* --name[=ARG]: const char **value = ARG or "" when given bare */
  CLI_OPT_U64,      /* uint64_t *value; decimal, 0x hex, k/M/G suffixes */
  CLI_OPT_I64,      /* int64_t *value */
  CLI_OPT_DOUBLE,   /* double *value */
  CLI_OPT_CALLBACK, /* int cb(const struct cli_opt *, const char *arg, void *value); repeatable */
  CLI_OPT_GROUP,    /* a heading in --help; help = heading text */
};

struct cli_opt;
typedef int (*cli_opt_cb)(const struct cli_opt *opt, const char *arg, void *value);

struct cli_opt {
  enum cli_opt_type type;
  char short_name;       /* 0 for none */
  const char *long_name; /* without "--"; NULL for none */
  const char *arg_name;  /* placeholder shown in help, e.g. "<file>"; NULL for flags */
  const char *help;
  void *value;
  cli_opt_cb cb;         /* CLI_OPT_CALLBACK only; return 0 or CLI_USAGE */
};

#define OPT_FLAG(s, l, v, h) {CLI_OPT_FLAG, (s), (l), NULL, (h), (v), NULL}
#define OPT_STRING(s, l, a, v, h) {CLI_OPT_STRING, (s), (l), (a), (h), (v), NULL}
#define OPT_OPTSTR(s, l, a, v, h) {CLI_OPT_OPTSTR, (s), (l), (a), (h), (v), NULL}
#define OPT_U64(s, l, a, v, h) {CLI_OPT_U64, (s), (l), (a), (h), (v), NULL}
#define OPT_I64(s, l, a, v, h) {CLI_OPT_I64, (s), (l), (a), (h), (v), NULL}
#define OPT_DOUBLE(s, l, a, v, h) {CLI_OPT_DOUBLE, (s), (l), (a), (h), (v), NULL}
#define OPT_CALLBACK(s, l, a, v, cb, h) {CLI_OPT_CALLBACK, (s), (l), (a), (h), (v), (cb)}
#define OPT_GROUP(h) {CLI_OPT_GROUP, 0, NULL, NULL, (h), NULL, NULL}
#define OPT_END() {CLI_OPT_END, 0, NULL, NULL, NULL, NULL, NULL}

/* Shared option groups, so the same option means the same in every command. */
#define OPT_OUTPUT(v) OPT_STRING('o', "output", "<file>", (v), "write the result to <file> (default: stdout)")
#define OPT_ELF(v) OPT_STRING('e', "elf", "<file>", (v), "firmware ELF image, for symbols and source lines")
#define OPT_JSON(v) OPT_FLAG(0, "json", (v), "print the summary as one JSON object")

/* The usage text of a command: `usage` lines ("sonde itm [options] <input>"),
 * a description paragraph, and the options. */
struct cli_command_help {
  const char *usage;       /* one or more lines, '\n'-separated */
  const char *description; /* may be NULL */
};

/* Parse argv[1..] against opts. Non-option arguments are moved, in order, to
 * the front: on return *argc_out is their count and argv[0..n-1] are they.
 * "--" ends options; "-" is an argument. Returns CLI_OK, CLI_USAGE after
 * printing the error and a short usage to stderr, or -1 after printing --help
 * to stdout (the command then returns CLI_OK). */
int cli_parse(int argc, char **argv, const struct cli_opt *opts,
              const struct cli_command_help *help, int *argc_out);
void cli_print_help(FILE *out, const struct cli_opt *opts, const struct cli_command_help *help);
/* "sonde: <cmd>: <message>" on stderr, then the short usage; returns CLI_USAGE. */
int cli_usage_error(const struct cli_command_help *help, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "sonde: <message>" on stderr; returns CLI_FAIL. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "sonde: warning: <message>" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse an unsigned number: decimal, 0x hex, 0b binary, optional k/M/G suffix
 * (powers of 1000) or Ki/Mi/Gi (powers of 1024). Returns 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *out);

/* Open `path` for writing ("-" or NULL = stdout). On failure prints the error
 * and returns NULL. cli_close_output() flushes, reports a write error, and
 * returns CLI_OK or CLI_FAIL. */
FILE *cli_open_output(const char *path, bool binary);
int cli_close_output(FILE *f, const char *path);

/* Progress on stderr when it is a terminal, silent otherwise. */
struct cli_progress {
  bool enabled;
  const char *label;
  uint64_t total; /* 0 = unknown */
  double last_draw_s;
};
void cli_progress_start(struct cli_progress *p, const char *label, uint64_t total);
void cli_progress_update(struct cli_progress *p, uint64_t done);
void cli_progress_end(struct cli_progress *p);

/* Read a whole file into a malloc'd buffer (NUL-terminated; *len without the
 * NUL). NULL when it cannot be read (errno says why). */
char *cli_read_file(const char *path, size_t *len);
/* A built-in machine by name, or a machine file (at most 1 MiB); prints the
 * error (the built-ins when the name is unknown). Returns CLI_OK or CLI_FAIL. */
struct sonde_machine;
int cli_load_machine(const char *spec, struct sonde_machine **m);
/* A firmware image read whole (at most 512 MiB); with `elf` its ELF header is
 * checked before the rest is read (a raw binary has none). Prints the error;
 * NULL on failure. */
void *cli_read_firmware(const char *path, bool elf, size_t *len);

/* Monotonic host time in seconds. */
double cli_now_s(void);

/* Write `s` as a JSON string literal (with quotes). */
void cli_json_string(FILE *out, const char *s);

extern const char *cli_command_name; /* the running subcommand, for messages */

#endif
