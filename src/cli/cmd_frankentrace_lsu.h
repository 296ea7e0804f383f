/* LSU traces in `sonde frankentrace run` and `stitch` (cmd_frankentrace_lsu.c). */
#ifndef SONDE_CMD_FRANKENTRACE_LSU_H
#define SONDE_CMD_FRANKENTRACE_LSU_H

#include <stdio.h>

#include "cmd_frankentrace.h"

/* --lsu RANGES: comma-separated 64 KiB ranges, each a number up to 0xffff
 * (address >> 16: 0x2000 is 0x20000000-0x2000ffff), an address above that,
 * or a symbol of the ELF (its range). Sorted ascending into ranges[]. Returns
 * -1 with the reason in err: bad syntax, a range listed twice, the PPB. */
int ft_lsu_parse_ranges(const char *spec, struct sonde_sym *sym, uint32_t *ranges, uint32_t *n,
                        char *err, size_t cap);
/* "0x2000,0x400f" */
void ft_lsu_list(char *buf, size_t cap, const uint32_t *r, uint32_t n);

struct ft_lsu_cli {
  const char *spec, *out_path, *truth_path; /* --lsu, --lsu-out, --lsu-truth */
  uint32_t want[SONDE_FT_LSU_MAX_RANGES], nwant;
  struct sonde_ft_lsu_runs *runs;
  struct sonde_diag diag, first_corrupt;
  int rc;
  uint32_t iterations, corrupt;
  uint64_t transfers, unplaced, gaps;
};
/* Parse --lsu and make the collector; SONDE_E_ARG with the reason in l->diag. */
int ft_lsu_cli_init(struct ft_lsu_cli *l, struct sonde_sym *sym);
void ft_lsu_cli_free(struct ft_lsu_cli *l);
/* After a runner run failed: say so when the image's DebugMon_Handler is the
 * start-up code's default handler (FT_DEBUGMON_VECTOR forgotten). */
void ft_lsu_cli_hint_monitor(struct sonde_sym *sym, const char *elf);
/* sonde_ft_vm_runner_config.lsu_iteration / a splitter's LSU iterations. */
int ft_lsu_cli_iteration(void *ctx, const struct sonde_ftw_iteration *it);
/* Order, align on `trace`, write --lsu-out, compare with --lsu-truth (aligned
 * through pc_truth, the same run's --trace-pc: truth_off is the ground-truth
 * cycle of trace cycle 0 when the caller has it, else UINT64_MAX). Prints the
 * summary lines and errors; returns 1 when anything failed or differs. */
int ft_lsu_cli_finish(struct ft_lsu_cli *l, const struct sonde_ft_trace *trace,
                      struct sonde_sym *sym, const char *elf, const char *pc_truth,
                      uint64_t truth_off, FILE *e);

/* --probe --lsu: the noninvasive runs (sonde_ft_vm_lsu_run with cfg, the
 * ranges from --lsu), their transfers checked against `trace` at their
 * cycles, --lsu-out, --lsu-truth (cycles as they are). Returns 1 when
 * anything failed, differs, or gaps were left. */
struct sonde_ft_vm_lsu_config;
int ft_lsu_cli_probe(struct ft_lsu_cli *l, const struct sonde_ft_vm_lsu_config *cfg,
                     const struct sonde_ft_trace *trace, struct sonde_sym *sym, const char *elf,
                     FILE *e);

#endif
