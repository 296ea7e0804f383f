/* `sonde frankentrace`: the subcommands in their own files, and what they
 * share (loading a trace and an ELF, describing a cell).
 *   run             cmd_frankentrace_run.c (the VM: probe and runner images)
 *   stitch          cmd_frankentrace_stitch.c (silicon captures of the runner)
 *   (both print)    cmd_frankentrace_report.c
 *   verify, convert cmd_frankentrace.c
 *   check           cmd_frankentrace_check.c
 *   analyze         cmd_frankentrace_analyze.c */
#ifndef SONDE_CMD_FRANKENTRACE_H
#define SONDE_CMD_FRANKENTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonde/frankentrace.h"
#include "sonde/frankentrace_runner.h"
#include "sonde/sym.h"

int cmd_frankentrace_run(int argc, char **argv);
int cmd_frankentrace_stitch(int argc, char **argv);
int cmd_frankentrace_verify(int argc, char **argv);
int cmd_frankentrace_check(int argc, char **argv);
int cmd_frankentrace_analyze(int argc, char **argv);
int cmd_frankentrace_convert(int argc, char **argv);

/* Read a trace file (pct or CSV, gzip or not); prints the error. NULL on failure. */
struct sonde_ft_trace *ft_cli_read_trace(const char *path);
/* Open the ELF if `path` is not NULL; prints the error. Returns CLI_OK or CLI_FAIL. */
int ft_cli_open_elf(const char *path, struct sonde_sym **out);
/* "0x00001a32 RFCorePrv___RFCore___sendCmd+0x72 (ldr r2, [r3, #0x1c])", or
 * "sleep", "unsampled", ... for the other states. */
void ft_cli_describe(struct sonde_sym *sym, struct sonde_ft_cell c, char *buf, size_t cap);
/* "func+0x12" or "0x00001234". */
void ft_cli_symbol(struct sonde_sym *sym, uint32_t pc, char *buf, size_t cap);

/* Runner traces (cmd_frankentrace_report.c): write a trace file (prints the
 * error; CLI_OK/CLI_FAIL); the findings of a stitch (nondeterminism, missing
 * phases, code check, preamble); a --verify result (returns 1 when it differs). */
int ft_cli_write_trace(const char *path, enum sonde_ft_format format,
                       const struct sonde_ft_trace *t, struct sonde_sym *sym);
void ft_cli_print_runner_findings(FILE *out, const struct sonde_ft_runner_summary *s,
                                  struct sonde_sym *sym);
int ft_cli_print_runner_verify(FILE *out, const struct sonde_ft_verify_result *v, uint64_t offset,
                               struct sonde_sym *sym);

#endif
