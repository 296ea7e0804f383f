/* FrankenTrace: captures of the target runner (target/cortexm/frankentrace)
 * on the host (src/frankentrace/runner_*.c). A capture (the SWO bytes of many
 * iterations, from silicon or from the VM) is decoded and split into
 * iterations by the runner's begin/end records (src/ftwire); each iteration
 * is judged on its own (samples on the N grid by their timestamps, records
 * intact, PCs inside the ELF's code) and, when sound, stitched; at the end
 * the trace is validated (missing phases, redundant iterations, the preamble,
 * the code's possible transitions). `sonde frankentrace stitch` and
 * `sonde frankentrace run` (runner images) both go through here
 * (docs/frankentrace-target.md). */
#ifndef SONDE_FRANKENTRACE_RUNNER_H
#define SONDE_FRANKENTRACE_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"
#include "sonde/frankentrace.h"
#include "sonde/ftwire.h"
#include "sonde/itm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SONDE_FT_PREAMBLE_CYCLES 64u /* ft_preamble: 64 one-cycle 16-bit instructions */

/* The address of ft_preamble in the ELF: SONDE_E_NOTFOUND with "not an image
 * with the FrankenTrace runner linked" in diag when it has none. */
int sonde_ft_runner_preamble(const struct sonde_sym *sym, const char *elf_name, uint32_t *addr,
                             struct sonde_diag *diag);

/* Decode `len` bytes of a capture with `dec` (reset first) and feed the
 * packets to `sp`. After a decoder loss (corrupt bytes) decoding resumes at
 * the next begin record, since the runner's stream has no synchronization
 * packets; the loss reaches the open iteration as a SKIP packet (which makes
 * it corrupt). Returns 0 or the splitter's error (diag). */
int sonde_ft_runner_decode(struct sonde_ftw_splitter *sp, struct sonde_itm *dec,
                           const uint8_t *bytes, size_t len, struct sonde_diag *diag);

enum sonde_ft_runner_verdict {
  SONDE_FT_RUNNER_OK = 0,      /* sound: stitched */
  SONDE_FT_RUNNER_CUT = 1,     /* no end record (the capture is cut): stitched up to its end */
  SONDE_FT_RUNNER_CORRUPT = 2, /* corrupt on the wire: never stitched (re-run it) */
  SONDE_FT_RUNNER_LSU = 3,     /* an LSU iteration: not a PC phase (counted only) */
};

/* One iteration of a capture, judged. */
struct sonde_ft_runner_iter {
  struct sonde_ftw_record begin;
  uint64_t offset;       /* byte offset of its begin record in its capture */
  bool has_end;
  enum sonde_ft_runner_verdict verdict;
  uint32_t wire_errors;  /* corrupt records inside it */
  uint64_t bad_spacing;  /* samples off the N grid */
  uint64_t skips;        /* decoder losses */
  uint64_t outside_elf;  /* PC samples outside the ELF's code */
  struct sonde_ftw_samples samples; /* k = 0, 1, ... (owned) */
};

struct sonde_ft_runner_config {
  struct sonde_sym *sym;   /* the traced ELF (may be NULL: no ELF checks) */
  bool allow_outside_elf;  /* PCs outside the ELF's code (a boot ROM) are not corruption */
  bool check_fw_id;        /* refuse iterations whose firmware id is not fw_id */
  uint32_t fw_id;
};

/* Collect and judge the iteration the splitter delivered. */
int sonde_ft_runner_judge(const struct sonde_ftw_iteration *it,
                          const struct sonde_ft_runner_config *cfg,
                          struct sonde_ft_runner_iter *out);
void sonde_ft_runner_iter_free(struct sonde_ft_runner_iter *it);

/* Stitching judged iterations into one trace (cycle 0 = the first sample of
 * phase 0). The first iteration fixes run id, firmware id and N. */
struct sonde_ft_runner;
int sonde_ft_runner_new(const struct sonde_ft_runner_config *cfg, struct sonde_ft_runner **out);
void sonde_ft_runner_free(struct sonde_ft_runner *r);
/* Add one (its samples stay the caller's). CORRUPT iterations are counted
 * and discarded, LSU ones counted. SONDE_E_FORMAT (diag names the iteration
 * and offset) for an iteration of another run, firmware or N, or of the wrong
 * firmware id. */
int sonde_ft_runner_add(struct sonde_ft_runner *r, const struct sonde_ft_runner_iter *it,
                        struct sonde_diag *diag);

#define SONDE_FT_RUNNER_MISSING_MAX 8
struct sonde_ft_runner_summary {
  uint32_t n, run_id, fw_id;
  uint32_t iterations, lsu, cut, corrupt;
  uint64_t samples, lost, overflows, outside_elf;
  struct sonde_ft_report report;    /* conflicts live until sonde_ft_runner_free */
  size_t missing;                   /* phases with no usable iteration */
  uint32_t missing_first[SONDE_FT_RUNNER_MISSING_MAX];
  /* Iterations numbered below the last one in the capture that are not in
   * it (a gap in the capture: bytes lost between records); the first gap is
   * iterations first_gap .. gap_end-1. A capture cut at its end is not a gap
   * (the plan's length is not in the records): the missing phases say it. */
  uint32_t gap_iterations, first_gap, gap_end;
  bool preamble_seen;               /* ft_preamble's first PC found in the trace */
  uint64_t preamble_at;             /* its first cycle */
  uint64_t preamble_bad;            /* of its 64 cycles, how many differ (0: intact) */
  bool checked;                     /* the code check ran (an ELF was given) */
  uint64_t transitions, impossible; /* code check */
  struct sonde_ft_bad_transition first_impossible;
  /* Nondeterminism (iterations that disagree) or an impossible transition:
   * every cycle from here on is CONFLICT in the trace (UINT64_MAX: none).
   * The earlier of the first disagreement and the cycle before the first
   * impossible transition; no sample after it is known to belong to one
   * execution, so none is kept as if it were. */
  uint64_t untrusted_from;
  bool ok; /* no conflict, no missing phase or gap, preamble intact, nothing impossible */
};
/* Finish: the trace (caller frees) and what was found, with the untrusted
 * cycles marked (sum->untrusted_from). SONDE_E_FORMAT when
 * there was no PC iteration at all, or the capture is another image's: most
 * PC samples lie outside the ELF's code, or the preamble never shows and most
 * transitions are impossible in the ELF's code. */
int sonde_ft_runner_finish(struct sonde_ft_runner *r, struct sonde_ft_trace **trace,
                           struct sonde_ft_runner_summary *sum, struct sonde_diag *diag);

/* Aligning a runner trace (cycle 0 = the first sample of phase 0) with the
 * chained image's ground truth (cycle 0 = reset): the first cycle whose cell
 * is the instruction at `pc` (UINT64_MAX: none), and a copy of t starting at
 * cycle `origin` (NULL when out of memory). */
uint64_t sonde_ft_trace_find_pc(const struct sonde_ft_trace *t, uint32_t pc);
struct sonde_ft_trace *sonde_ft_trace_rebase(const struct sonde_ft_trace *t, uint64_t origin);

/* Compare a stitched runner trace with a ground-truth PC trace of the same
 * firmware (`sonde run --trace-pc`: raw, projected here as DWT sees it),
 * aligned on the first preamble of each. *offset: the ground-truth cycle of
 * trace cycle 0. SONDE_E_FORMAT when either has no preamble. */
int sonde_ft_runner_verify(const struct sonde_ft_trace *trace,
                           const struct sonde_ft_trace *ground_truth, uint32_t preamble,
                           uint64_t *offset, struct sonde_ft_verify_result *v,
                           struct sonde_diag *diag);

/* ---- LSU iterations (invasive: DebugMonitor delays) ----------------------- */

/* Packet kinds of an LSU iteration (the begin record's lsu_kind). */
enum { SONDE_FT_LSU_ADDR = 0, SONDE_FT_LSU_DATA = 1, SONDE_FT_LSU_PC = 2, SONDE_FT_LSU_KINDS = 3 };
#define SONDE_FT_LSU_MAX_RANGES 64u
const char *sonde_ft_lsu_kind_name(unsigned kind); /* "address", "data", "pc" */

/* Collects the runner's LSU iterations: each traced ranges a and b (address
 * >> 16, comparators 0 and 1) with one packet kind. The three kinds of a
 * pair line up transfer by transfer (same program, same transfers); the
 * pairs are ordered by sonde_ft_lsu_order (paper 5.3). */
struct sonde_ft_lsu_runs;
int sonde_ft_lsu_runs_new(struct sonde_ft_lsu_runs **out);
void sonde_ft_lsu_runs_free(struct sonde_ft_lsu_runs *r);
/* Add one LSU iteration as the splitter delivered it. SONDE_E_AGAIN (diag
 * says why) when the wire spoiled it (cut, a corrupt record or decoder loss
 * inside it: re-run it, or a later capture of it may be sound);
 * SONDE_E_FORMAT when it cannot be used at all: packets of another kind, or
 * an ITM overflow (transfers lost: DebugMonitor could not delay the core in
 * time). A second sound iteration of the same pair and kind is ignored. */
int sonde_ft_lsu_runs_add(struct sonde_ft_lsu_runs *r, const struct sonde_ftw_iteration *it,
                          struct sonde_diag *diag);
struct sonde_ft_lsu_summary {
  uint32_t ranges[SONDE_FT_LSU_MAX_RANGES]; /* address >> 16, ascending: xfer.range indexes it */
  uint32_t nranges, pairs, runs;
  uint64_t packets, transfers;
};
/* The total order of every traced transfer (*out malloc'd; ts = index in its
 * pair's runs, cycle UINT64_MAX until aligned). SONDE_E_FORMAT when a pair
 * lacks a kind, the kinds of a pair disagree, or the pair orders do not
 * make one order (nondeterminism), with where in diag. */
int sonde_ft_lsu_runs_finish(struct sonde_ft_lsu_runs *r, struct sonde_ft_xfer **out,
                             size_t *count, struct sonde_ft_lsu_summary *sum,
                             struct sonde_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
