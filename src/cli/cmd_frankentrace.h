/* `sonde frankentrace`: the subcommands in their own files, and what they
 * share (loading a trace and an ELF, describing a cell).
 *   run, stitch     cmd_frankentrace_run.c (the VM orchestration and silicon
 *                   captures: owned by the target side of issue 15)
 *   verify, convert cmd_frankentrace.c
 *   check           cmd_frankentrace_check.c
 *   analyze         cmd_frankentrace_analyze.c */
#ifndef SONDE_CMD_FRANKENTRACE_H
#define SONDE_CMD_FRANKENTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonde/frankentrace.h"
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

#endif
