/* FrankenTrace on the virtual Cortex-M: run a firmware image N times, each
 * time with DWT PC sampling at another phase, capture its SWO pin, decode the
 * ITM/DWT packets and stitch them into one cycle-level PC trace
 * (docs/frankentrace.md, "Tracing on the VM").
 *
 * Probe mode: the firmware is not modified. As a debugger halted at reset
 * (DEMCR.VC_CORERESET) would, the host writes DEMCR.TRCENA, the TPIU (NRZ,
 * prescaler, formatter bypassed), the ITM (ITMENA, TSENA, TXENA) and the DWT
 * (CYCCNT and POSTINIT chosen so the first sample falls on the iteration's
 * phase, then PCSAMPLENA) through the debug port before the first instruction,
 * then lets the core run to its exit. Iterations are independent, so they run
 * on several threads with a result that does not depend on their number. */
#ifndef SONDE_FRANKENTRACE_VM_H
#define SONDE_FRANKENTRACE_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"
#include "sonde/frankentrace.h"
#include "sonde/frankentrace_runner.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sonde_machine;

/* DWT_CTRL[12:0] for PC sampling every n cycles, or 0 when no setting gives
 * n: n = (POSTPRESET+1) x 64 (CYCTAP 0, n <= 1024) or x 1024 (CYCTAP 1). */
uint32_t sonde_ft_dwt_ctrl_for(uint32_t n);

/* SWO bytes one sample costs on the wire: a PC packet (5) and the local
 * timestamp that follows it (1 + bytes of the delta n). */
unsigned sonde_ft_bytes_per_sample(uint32_t n);

/* The smallest n >= min_n that a DWT can sample at and the SWO line can
 * carry at `baud` with a core clock of `clock_hz` (NRZ: 10 bit times per byte,
 * sonde_ft_bytes_per_sample() bytes per sample; the ITM FIFO absorbs jitter);
 * 0 when none (the line is too slow for even n = 16384). */
uint32_t sonde_ft_smallest_n(uint64_t clock_hz, uint64_t baud, uint32_t min_n);

struct sonde_ft_vm_config {
  const struct sonde_machine *machine;
  const void *elf;        /* the firmware image (ELF), loaded into each VM */
  size_t elf_len;
  const char *elf_name;   /* for messages */
  uint32_t n;             /* sampling interval: sonde_ft_dwt_ctrl_for(n) != 0 */
  uint64_t baud;          /* SWO baud rate; clock / baud must be an integer */
  uint32_t repeat;        /* extra (redundant) iterations of phases 0..repeat-1 */
  unsigned jobs;          /* threads (>= 1) */
  uint64_t max_cycles;    /* per-iteration guard (0: 10 G cycles) */
  bool ground_truth;      /* also run once with hooks and build the ground truth */
  bool no_jit;            /* interpret (for ruling the block compiler out) */
  struct sonde_sym *sym;  /* optional: PC samples outside its code are wire corruption */
  double bit_errors;      /* SWO bit errors per bit time (sampled and decoded back) */
  uint64_t seed;          /* of the bit errors */
  unsigned attempts;      /* runs of a phase corrupt on the wire (0: 4) */
  /* Called from the calling thread after each finished iteration. */
  void (*progress)(void *ctx, uint32_t done, uint32_t total);
  void *progress_ctx;
};

struct sonde_ft_vm_stats {
  uint64_t run_cycles;       /* cycles of one run (reset to exit) */
  uint64_t exit_code;        /* the firmware's exit code */
  uint32_t iterations;       /* runs made (phases + repeats) */
  uint64_t swo_bytes;        /* bytes on the pin, all iterations */
  uint64_t pc_packets, sleep_packets, overflow_packets, skipped_bytes;
  uint64_t lost_samples;     /* samples due but not received (placed by timestamps) */
  uint32_t bad_iterations;   /* still corrupt after every attempt: discarded */
  uint32_t reruns;           /* runs repeated because the wire corrupted them */
  uint64_t flipped_bits;     /* bit errors injected */
  uint64_t distrusted_from;  /* nondeterminism: cycles from here are CONFLICT (UINT64_MAX: none) */
  /* Runs of different lengths say they went apart, not where: the first such
   * pair (length_runs) was compared at one phase by running the second's
   * environment (run index) again at the first's phase; the first sample
   * that differs is here (UINT64_MAX: no LENGTH conflict, or not located). */
  uint64_t length_first_difference;
  uint32_t length_runs[2];
};

/* Run the plan. On success *trace is the stitched trace (cycles 0 .. run
 * length - 1, absolute VM cycles), *report what the stitcher saw (valid until
 * sonde_ft_vm_free_state(); pass NULL to not keep it), and with
 * cfg->ground_truth *truth the DWT-visible ground truth of a hooked run
 * (instruction cycles -> their PC, sleep -> SLEEP, exception spans -> the
 * instruction before them, as docs/vm.md "Which PC a sample carries").
 * Each run has its own run index (sonde_vm_set_run_index: its iteration
 * number), so an environment that varies per run makes them differ; runs of
 * different lengths or redundant runs that disagree are nondeterminism: in
 * the report, and every cycle from the first disagreement on is CONFLICT.
 * A run corrupt on the wire (timestamps off the plan, decoder losses, PCs
 * outside cfg->sym's code) is run again with other bit errors, up to
 * cfg->attempts times, then left out (its phase unsampled).
 * Errors (the image does not load, a run does not exit, the plan cannot
 * work) return a negative code with a message in diag. */
struct sonde_ft_vm_state; /* keeps the stitcher (and its report) alive */
int sonde_ft_vm_run(const struct sonde_ft_vm_config *cfg, struct sonde_ft_trace **trace,
                    struct sonde_ft_trace **truth, struct sonde_ft_report *report,
                    struct sonde_ft_vm_stats *stats, struct sonde_ft_vm_state **state,
                    struct sonde_diag *diag);
void sonde_ft_vm_free_state(struct sonde_ft_vm_state *state);

/* ---- runner images (target/cortexm/frankentrace linked in) --------------- */

/* Whether the ELF has the runner linked (ft_preamble and its .noinit state
 * ft_st); with diag saying what is missing when not. */
bool sonde_ft_vm_is_runner(const struct sonde_sym *sym, struct sonde_diag *diag);

struct sonde_ft_vm_runner_config {
  const struct sonde_machine *machine;
  const void *elf;        /* the runner image (ELF) */
  size_t elf_len;
  const char *elf_name;
  struct sonde_sym *sym;  /* its symbols (ft_preamble, ft_st; the code check) */
  /* jobs 1 (and !preload): one VM runs the whole plan through SYSRESETREQ
   * with .noinit retained, as on silicon. Otherwise one VM per iteration on
   * `jobs` threads, each preloaded through the debug port with its iteration
   * state (ft_st with its checksum), halted at its reset (VC_CORERESET).
   * The trace is the same bytes either way. */
  unsigned jobs;
  bool preload;
  uint64_t max_cycles;    /* guard per VM (0: 10 G cycles) */
  bool ground_truth;      /* also a hooked run of iteration 0: the DWT-visible truth */
  bool no_jit;
  double bit_errors;      /* SWO bit errors per bit time (ft_wire: sampled and decoded) */
  uint64_t seed;          /* of the bit errors */
  unsigned attempts;      /* runs of an iteration corrupt on the wire (0: 4) */
  void (*progress)(void *ctx, uint32_t done, uint32_t total);
  void *progress_ctx;
  /* LSU iterations of the plan, in plan order, from the calling thread (may
   * be NULL). Its negative return stops the run. */
  int (*lsu_iteration)(void *ctx, const struct sonde_ftw_iteration *it);
  void *lsu_ctx;
};

struct sonde_ft_vm_runner_stats {
  uint32_t plan;          /* iterations in the runner's plan */
  uint32_t run_id;
  uint32_t vms;           /* VMs run (1 when chained, plus re-runs) */
  uint32_t reruns;        /* iterations run again because the wire corrupted them */
  uint32_t corrupt_left;  /* still corrupt after every attempt: their phases stay unsampled */
  uint64_t cycles;        /* simulated, all VMs */
  uint64_t swo_bytes;     /* sent on the pin, all VMs */
  uint64_t flipped_bits;  /* bit errors injected */
  uint64_t exit_code;     /* of the run after the plan (chained only) */
  uint64_t distrusted_from; /* nondeterminism: cycles from here marked CONFLICT (UINT64_MAX: none) */
  /* When the image exited without running its plan (ft_begin refused its
   * configuration): the first words of its struct ft_config, read through
   * the debug port (ft_cfg), for saying why. */
  bool fw_config_read;
  uint32_t fw_core_hz, fw_baud, fw_n;
};

/* Run the plan, stitch (cycle 0 = the first sample of phase 0), validate.
 * *runner keeps the summary's conflicts (free with sonde_ft_runner_free).
 * With cfg->ground_truth *truth is the DWT-visible trace of iteration 0
 * from reset (align with sonde_ft_runner_verify). When iterations disagree
 * (nondeterminism) every cycle from the first disagreement on is CONFLICT:
 * no sample after it can be trusted to belong to one execution. */
int sonde_ft_vm_runner_run(const struct sonde_ft_vm_runner_config *cfg,
                           struct sonde_ft_trace **trace, struct sonde_ft_trace **truth,
                           struct sonde_ft_runner_summary *sum,
                           struct sonde_ft_vm_runner_stats *stats, struct sonde_ft_runner **runner,
                           struct sonde_diag *diag);

/* ---- noninvasive LSU traces of an unmodified image (probe mode) ---------- */

/* For each range and packet kind (address offset, data value with direction,
 * PC) one run of the image, comparator 0 on the 64 KiB range (address >> 16)
 * and the ITM (local timestamps) set through the debug port at reset: no
 * DebugMonitor, no delays, so every timestamp is a true cycle and the three
 * kinds of a transfer meet at its cycle. Packets the ITM could not take (an
 * overflow) are lost: a `gap` entry (cycle = the first cycle where transfers
 * of that range may be missing, addr = the range's base) marks each overflow
 * window, and a transfer seen in some kinds only is counted in `partial`. */
struct sonde_ft_vm_lsu_config {
  const struct sonde_machine *machine;
  const void *elf;
  size_t elf_len;
  const char *elf_name;
  uint64_t baud;           /* SWO; the core clock / 1..8192 */
  const uint32_t *ranges;  /* address >> 16, ascending */
  uint32_t nranges;
  unsigned jobs;
  uint64_t max_cycles;     /* per run (0: 10 G) */
  bool no_jit;
};
struct sonde_ft_vm_lsu_stats {
  uint32_t runs;
  uint64_t cycles, swo_bytes, overflows;
  uint64_t transfers;      /* known whole: cycle, pc, address, size, value, direction */
  uint64_t gaps;           /* gap entries (overflow windows) */
  uint64_t partial;        /* seen in some kinds only (inside gaps) */
  uint64_t undated;        /* no exact timestamp in any kind (cycle approximate) */
};
/* SONDE_E_UNSUPPORTED (diag says why) when the machine's DWT cannot trace
 * data transfers (no comparators, no trace packets, ARMv6-M). */
int sonde_ft_vm_lsu_check(const struct sonde_machine *machine, struct sonde_diag *diag);
/* *out: transfers and gaps in cycle order (xfer.range indexes cfg->ranges,
 * cycle = ts = the VM cycle). Errors: a run that does not exit, runs of
 * different lengths (nondeterminism), a decoder loss. */
int sonde_ft_vm_lsu_run(const struct sonde_ft_vm_lsu_config *cfg, struct sonde_ft_xfer **out,
                        size_t *count, struct sonde_ft_vm_lsu_stats *st, struct sonde_diag *diag);

/* Mark every cycle of *t from `from` on as CONFLICT (nondeterminism found
 * there): *t is replaced. */
int sonde_ft_distrust_from(struct sonde_ft_trace **t, uint64_t from);
/* The first cycle of any conflict in the report, or UINT64_MAX. */
uint64_t sonde_ft_first_conflict(const struct sonde_ft_report *rep);
/* Where the untrusted cycles begin, given the first disagreement between
 * iterations (rep) and the first impossible transition (its `to` cycle, or
 * UINT64_MAX): one sampling interval N before the earlier of the two, not
 * before `origin`; UINT64_MAX when there is neither. The first sign is seen
 * after the runs went apart, not where: a busy-wait that ends later, or an
 * instruction whose time depends on data (udiv), shifts a run by a few
 * cycles and the mix of runs looks consistent until a redundant sample or a
 * transition gives it away. Within N cycles of going apart every iteration
 * has taken a sample, so a divergence N or more cycles before the sign would
 * have had its samples compared (redundancy) or joined to their neighbours
 * (the code check) before: not a proof, a margin (docs/frankentrace.md). */
uint64_t sonde_ft_untrusted_from(const struct sonde_ft_report *rep, uint64_t first_impossible,
                                 uint32_t n, uint64_t origin);

#ifdef __cplusplus
}
#endif
#endif
