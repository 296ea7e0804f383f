/* Helpers shared by `frankentrace run` and `stitch` (the target side of
 * FrankenTrace: cmd_frankentrace_run.c, cmd_frankentrace_stitch.c). */
#ifndef SONDE_CMD_FRANKENTRACE_TARGET_H
#define SONDE_CMD_FRANKENTRACE_TARGET_H

#include "sonde/frankentrace.h"

/* A copy of t starting at cycle 0 (before its origin: UNSAMPLED), or with
 * its origin moved to `origin` (ft_cli_rebase). NULL when out of memory. */
struct sonde_ft_trace *ft_cli_from_cycle0(struct sonde_ft_trace *t);
struct sonde_ft_trace *ft_cli_rebase(const struct sonde_ft_trace *t, uint64_t origin);

#endif
