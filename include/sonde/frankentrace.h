/* Sonde: FrankenTrace on the host (src/frankentrace) — stitching cycle-level
 * PC traces from many runs sampled at shifted phases, validating them, and the
 * LSU (data transfer) trace ordering; plus the cycle-level trace model that
 * the `sonde frankentrace verify|check|analyze` commands work on.
 *
 * Method: shared/reference FrankenTrace paper (Matraszek et al., CPS-IoT Week
 * 2023), section 4.1 (iteration i samples the PC at cycles t = k*N + i),
 * 4.4 (validation by a preamble with a known trace and by redundant
 * iterations) and 5.3 (LSU: range pairs -> partial orders -> a total order,
 * aligned to the PC trace by PC).
 *
 * Nothing here knows the wire protocol of the target runner: the caller
 * (src/cli, `frankentrace run|stitch`) splits a capture into iterations and
 * feeds each one's samples. Names are sonde_ft_* (module "frankentrace").
 *
 * Memory: a stitcher holds the cycle-level trace (5 bytes per cycle) plus, per
 * open iteration, its own samples (4 bytes per sample, about length/N), so a
 * whole capture never needs N x length. Errors: negative SONDE_E_* with a
 * message in sonde_ft_error_detail()/the diag passed in. NULL handles are
 * tolerated by the _free functions. Handles are not thread-safe. */
#ifndef SONDE_FRANKENTRACE_H
#define SONDE_FRANKENTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonde/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/* The cycle-level trace: one cell per cycle                                 */
/* ======================================================================== */

/* What a cycle holds. A stitched trace only has PC, SLEEP and the three
 * "unrecoverable" states; traces read from a ground-truth pct file also have
 * the exception spans; traces read from CSV have INVALID where valid=false. */
enum sonde_ft_state {
  SONDE_FT_PC = 0,         /* an instruction at `pc` occupies the cycle */
  SONDE_FT_SLEEP = 1,      /* core asleep (DWT's sleep packet / WFI span) */
  SONDE_FT_UNSAMPLED = 2,  /* nobody sampled it: phase never run, capture cut */
  SONDE_FT_LOST = 3,       /* its sample was lost (ITM overflow, corrupt packet) */
  SONDE_FT_CONFLICT = 4,   /* redundant iterations disagree: pc = first one's, untrusted */
  SONDE_FT_INVALID = 5,    /* read from a file marked not valid: pc = file's value, untrusted */
  SONDE_FT_EXC_ENTRY = 6,  /* ground truth only: exception entry, pc = exception number */
  SONDE_FT_EXC_RETURN = 7, /* ground truth only: exception return, pc = exception number */
  SONDE_FT_TAIL_CHAIN = 8, /* ground truth only: tail-chain, pc = exception number */
  SONDE_FT_HALTED = 9,     /* ground truth only: core halted */
};
/* True for the states whose pc is not known for certain. */
static inline bool sonde_ft_state_unrecoverable(enum sonde_ft_state s)
{
  return s >= SONDE_FT_UNSAMPLED && s <= SONDE_FT_INVALID;
}
const char *sonde_ft_state_name(enum sonde_ft_state s); /* "pc", "sleep", "unsampled", ... */

struct sonde_ft_cell {
  uint32_t pc;               /* see enum sonde_ft_state */
  enum sonde_ft_state state;
};

/* A run of cycles with the same cell (what the readers and writers stream). */
struct sonde_ft_span {
  uint64_t cycle;  /* first cycle (absolute: origin included) */
  uint64_t cycles; /* >= 1 */
  struct sonde_ft_cell cell;
};

struct sonde_ft_trace; /* opaque: cycles origin .. origin+length-1 */

/* An empty trace whose first cycle is `origin`; cells are added with
 * sonde_ft_trace_append(). The stitcher and the readers make them too. */
int sonde_ft_trace_new(uint64_t origin, struct sonde_ft_trace **out);
void sonde_ft_trace_free(struct sonde_ft_trace *t);
/* Append `cycles` copies of `cell` at the end. */
int sonde_ft_trace_append(struct sonde_ft_trace *t, struct sonde_ft_cell cell, uint64_t cycles);
uint64_t sonde_ft_trace_origin(const struct sonde_ft_trace *t);
uint64_t sonde_ft_trace_length(const struct sonde_ft_trace *t); /* cycles */
uint64_t sonde_ft_trace_clock_hz(const struct sonde_ft_trace *t); /* 0: unknown */
void sonde_ft_trace_set_clock_hz(struct sonde_ft_trace *t, uint64_t hz);
/* Cell at absolute cycle `cycle`; outside the trace: UNSAMPLED. */
struct sonde_ft_cell sonde_ft_trace_at(const struct sonde_ft_trace *t, uint64_t cycle);
/* Spans in order: *pos starts at 0; returns 1 and fills *span, 0 at the end. */
int sonde_ft_trace_next_span(const struct sonde_ft_trace *t, uint64_t *pos,
                             struct sonde_ft_span *span);
/* Direct access for hot loops: pointers to `length` pcs and states (uint8_t,
 * enum sonde_ft_state values). Valid until the trace is changed or freed. */
const uint32_t *sonde_ft_trace_pcs(const struct sonde_ft_trace *t);
const uint8_t *sonde_ft_trace_states(const struct sonde_ft_trace *t);

struct sonde_ft_counts {
  uint64_t cycles, pc, sleep, unsampled, lost, conflict, invalid, exception, halted;
};
void sonde_ft_trace_count(const struct sonde_ft_trace *t, struct sonde_ft_counts *out);

/* ======================================================================== */
/* Stitching PC samples                                                      */
/* ======================================================================== */

/* A sample value fed to the stitcher: a PC (even), or one of these odd codes. */
#define SONDE_FT_SAMPLE_SLEEP 0x1u /* DWT periodic sleep packet (core asleep) */
#define SONDE_FT_SAMPLE_LOST 0x3u  /* sample due but lost (overflow, corrupt) */

struct sonde_ft_stitch_config {
  uint32_t n;           /* sampling interval N (cycles between samples), >= 1 */
  uint64_t origin;      /* absolute cycle of sample k = 0 of phase 0 */
  uint64_t length;      /* cycles of the traced run if known (else 0: learnt) */
  uint64_t max_length;  /* refuse traces longer than this (0: 1 Gi cycles) */
};

struct sonde_ft_stitch; /* opaque */
struct sonde_ft_iter;   /* opaque: one open iteration */

int sonde_ft_stitch_new(const struct sonde_ft_stitch_config *cfg, struct sonde_ft_stitch **out,
                        struct sonde_diag *diag);
void sonde_ft_stitch_free(struct sonde_ft_stitch *st); /* frees open iterations too */
const char *sonde_ft_stitch_error_detail(const struct sonde_ft_stitch *st);

/* The preamble: a code fragment whose cycle-level trace is known, run at
 * absolute cycles first_cycle .. first_cycle+n-1 of every iteration
 * (expected[] are sample values: PCs or SONDE_FT_SAMPLE_SLEEP; copied).
 * Every sample an iteration takes inside it is checked when the iteration
 * ends; a mismatch fails the iteration (SONDE_FT_ITER_PREAMBLE) and none of
 * its samples enter the trace. Call before the first iteration. */
int sonde_ft_stitch_set_preamble(struct sonde_ft_stitch *st, uint64_t first_cycle,
                                 const uint32_t *expected, size_t n);

/* Open an iteration sampling phase `phase` (0 <= phase < N). `id` is the
 * caller's name for it (its index in the capture), used in reports. Several
 * iterations may be open at once (parallel runs); each is merged into the
 * trace only by sonde_ft_iter_end(), so the result does not depend on the
 * order in which open iterations were fed. Which of two disagreeing
 * iterations counts as the earlier one (iter_a, the value kept in a CONFLICT
 * cell) is the order of _iter_end: end them in iteration order for reports
 * that are identical whatever the parallelism. */
int sonde_ft_iter_begin(struct sonde_ft_stitch *st, uint32_t phase, uint32_t id,
                        struct sonde_ft_iter **out);
/* Samples k0, k0+1, ..., k0+n-1 of this iteration (cycle origin + k*N + phase).
 * k0 must not go backwards (SONDE_E_ARG); skipped k's are LOST. */
int sonde_ft_iter_feed(struct sonde_ft_iter *it, uint64_t k0, const uint32_t *samples, size_t n);

/* One sample placed by its absolute cycle (from the ITM timestamps that
 * follow each PC sample, paper 4.4): it must lie on this iteration's grid
 * (origin + k*N + phase) and after the previous sample, else SONDE_E_FORMAT
 * with the reason in the stitcher's detail — the capture is corrupt, and the
 * caller discards the iteration (and re-runs it) rather than merging it. */
int sonde_ft_iter_feed_at(struct sonde_ft_iter *it, uint64_t cycle, uint32_t sample);

struct sonde_ft_iter_end_info {
  bool complete;      /* the end marker was seen (false: capture cut mid-iteration) */
  uint64_t length;    /* the run's length in cycles from origin (0: unknown) */
};
enum sonde_ft_iter_status {
  SONDE_FT_ITER_OK = 0,       /* merged */
  SONDE_FT_ITER_CUT = 1,      /* merged; cycles after its last sample are UNSAMPLED */
  SONDE_FT_ITER_PREAMBLE = 2, /* rejected: its preamble samples differ from the known trace */
  SONDE_FT_ITER_DISCARDED = 3 /* rejected by the caller (sonde_ft_iter_discard) */
};
struct sonde_ft_iter_result {
  enum sonde_ft_iter_status status;
  uint64_t samples;          /* samples fed (incl. LOST) */
  uint64_t lost;             /* of which LOST */
  uint64_t conflicts;        /* cycles where it disagreed with an earlier iteration */
  uint64_t first_bad_cycle;  /* PREAMBLE: first mismatching cycle; conflicts: first one */
};
/* Close an iteration: validate (preamble), compare with what earlier
 * iterations of the same phase put in the trace (disagreeing cycles become
 * CONFLICT and are recorded as nondeterminism), merge, free `it`. The result
 * (may be NULL) says what happened. Returns 0 (even when the iteration was
 * rejected: that is in the result) or a negative error (then `it` is freed). */
int sonde_ft_iter_end(struct sonde_ft_iter *it, const struct sonde_ft_iter_end_info *info,
                      struct sonde_ft_iter_result *result);
/* Drop an open iteration without merging it (e.g. the wire was corrupt and it
 * will be re-run). It still appears in the report as DISCARDED. */
void sonde_ft_iter_discard(struct sonde_ft_iter *it);

/* Nondeterminism found: two iterations that disagree. */
enum sonde_ft_conflict_kind {
  SONDE_FT_CONFLICT_SAMPLES = 0, /* same phase, different samples */
  SONDE_FT_CONFLICT_LENGTH = 1,  /* runs of different lengths (any phases) */
};
struct sonde_ft_conflict {
  enum sonde_ft_conflict_kind kind;
  uint32_t phase;        /* SAMPLES: the phase; LENGTH: phase of iter_b */
  uint32_t iter_a;       /* the earlier iteration (its id) */
  uint32_t iter_b;       /* the iteration that disagreed */
  uint64_t first_cycle;  /* absolute cycle of the first disagreement */
  uint64_t cycles;       /* SAMPLES: disagreeing cycles; LENGTH: |len_a - len_b| */
};

struct sonde_ft_report {
  uint32_t n;
  uint64_t origin, length;      /* the trace: cycles origin .. origin+length-1 */
  uint32_t iterations;          /* ended (merged or rejected) */
  uint32_t merged, cut, rejected_preamble, discarded;
  uint32_t phases_covered;      /* phases with at least one merged iteration */
  uint32_t phases_redundant;    /* phases merged twice or more */
  uint64_t samples, samples_lost;
  size_t conflict_count;        /* entries in conflicts[] */
  const struct sonde_ft_conflict *conflicts; /* owned by the stitcher */
  struct sonde_ft_counts counts; /* of the final trace */
  bool preamble_set;
  uint64_t preamble_checked;    /* preamble cycles compared (over all iterations) */
};

/* The phases with no merged iteration, ascending, into missing[0..cap-1];
 * returns their total count (may exceed cap). */
size_t sonde_ft_stitch_missing_phases(const struct sonde_ft_stitch *st, uint32_t *missing,
                                      size_t cap);

/* Finish: no iteration may still be open (SONDE_E_STATE). Returns the
 * cycle-level trace (caller frees; the stitcher can then be freed) and fills
 * *report (its conflicts live until the stitcher is freed). Cycles no
 * iteration sampled are UNSAMPLED, never guessed. Length: cfg.length if
 * given, else the longest iteration's length, else last sampled cycle + 1. */
int sonde_ft_stitch_finish(struct sonde_ft_stitch *st, struct sonde_ft_trace **trace,
                           struct sonde_ft_report *report);

/* Stand-alone preamble check of a stitched (or any) trace: compare cycles
 * first_cycle.. against expected[0..n-1] (sample values as above). Returns
 * the number of mismatching cycles (0: the preamble is intact), and the first
 * one in *first_bad (may be NULL). Unrecoverable cycles count as mismatches. */
uint64_t sonde_ft_preamble_check(const struct sonde_ft_trace *t, uint64_t first_cycle,
                                 const uint32_t *expected, size_t n, uint64_t *first_bad);

/* ======================================================================== */
/* What DWT PC sampling can see (swappable: one place, ft-vm's definition)   */
/* ======================================================================== */

/* Project a ground-truth trace (pct from `sonde run --trace-pc`) to what a DWT
 * PC sample at each cycle carries: instruction cycles keep their PC; cycles of
 * exception entry/return/tail-chain carry the last instruction that started
 * before them; sleep stays SLEEP; halted cycles and those before the first
 * instruction have no sample (UNSAMPLED). Returns a new trace. */
int sonde_ft_project_dwt(const struct sonde_ft_trace *ground_truth, struct sonde_ft_trace **out);

/* ======================================================================== */
/* Trace files                                                               */
/* ======================================================================== */

enum sonde_ft_format {
  SONDE_FT_FORMAT_AUTO = 0, /* reading: detect (pct magic, gzip, CSV header) */
  SONDE_FT_FORMAT_PCT = 1,  /* "SONDEPCT" binary (or its cycle,pc CSV) — src/trace */
  SONDE_FT_FORMAT_CSV = 2,  /* ts,val,valid,label,short_instr — one row per cycle */
  SONDE_FT_FORMAT_PERFETTO = 3, /* writing only: function slices over cycles */
};
/* Parse "pct" | "csv" | "perfetto"; SONDE_E_ARG otherwise. */
int sonde_ft_format_parse(const char *s, enum sonde_ft_format *out);

/* Read a whole trace file (gzip-compressed or not; `path` "-" = stdin) into a
 * cycle-level trace of at most `max_cycles` cycles (0: SONDE_FT_READ_MAX,
 * 2^28; a pct record can ask for 2^32 cycles in 8 bytes and every cycle costs
 * 5 bytes here: longer is SONDE_E_LIMIT). CSV: rows in increasing ts; gaps in
 * ts are UNSAMPLED; valid=false rows are INVALID (their val kept), as are odd
 * vals (a corrupt sample: no Thumb instruction is at an odd address); an
 * empty val is UNSAMPLED; "sleep" and the pct CSV span names are the spans.
 * Errors name the file, line and byte offset. */
#define SONDE_FT_READ_MAX (1ull << 28)
int sonde_ft_read(const char *path, enum sonde_ft_format format, uint64_t max_cycles,
                  struct sonde_ft_trace **out, struct sonde_diag *diag);
/* Progress of a long call: `done` of `total` units (bytes of the file). */
typedef void (*sonde_ft_progress_fn)(void *ctx, uint64_t done, uint64_t total);
/* sonde_ft_read that reports how much of the file it has read, now and then
 * (for a progress bar; `fn` may be NULL). */
int sonde_ft_read_progress(const char *path, enum sonde_ft_format format, uint64_t max_cycles,
                           sonde_ft_progress_fn fn, void *ctx, struct sonde_ft_trace **out,
                           struct sonde_diag *diag);
/* The same from memory (not compressed), for tests and fuzzing. */
int sonde_ft_read_buffer(const void *data, size_t len, const char *name,
                         enum sonde_ft_format format, uint64_t max_cycles,
                         struct sonde_ft_trace **out, struct sonde_diag *diag);

struct sonde_sym; /* sonde/sym.h; optional everywhere below (NULL: no symbols) */

/* Write `t` to `f` (caller-owned, left open). CSV labels are symbol+offset and
 * disassembly from `sym` (empty without). pct: UNSAMPLED/LOST/CONFLICT/INVALID
 * are written as "unknown" spans (span kind 6, docs/formats.md). Perfetto:
 * one slice per function run (cycle = 1 ns unless the trace has a clock). */
int sonde_ft_write(FILE *f, const char *name, enum sonde_ft_format format,
                   const struct sonde_ft_trace *t, struct sonde_sym *sym, struct sonde_diag *diag);

/* ======================================================================== */
/* verify: a trace against ground truth                                      */
/* ======================================================================== */

struct sonde_ft_verify_result {
  uint64_t compared;        /* cycles where both are known */
  uint64_t equal, different;
  uint64_t unrecoverable;   /* cycles unrecoverable in the trace */
  uint64_t missing;         /* ground-truth cycles outside the trace */
  uint64_t extra;           /* trace cycles outside the ground truth */
  bool has_difference;
  uint64_t first_cycle;     /* first difference */
  struct sonde_ft_cell got, want;
};
/* Compare cycle by cycle over the union of both ranges. `ground_truth` is
 * compared as given (project it first with sonde_ft_project_dwt). */
int sonde_ft_verify(const struct sonde_ft_trace *trace, const struct sonde_ft_trace *ground_truth,
                    struct sonde_ft_verify_result *out);

/* ======================================================================== */
/* check: is every transition one the code can make?                          */
/* ======================================================================== */

enum sonde_ft_transition {
  SONDE_FT_T_SEQUENTIAL = 0,  /* to the next instruction */
  SONDE_FT_T_BRANCH = 1,      /* a direct branch/call to its target (taken) */
  SONDE_FT_T_INDIRECT = 2,    /* bx/blx/pop pc/ldr pc/tbb...: plausible, target is an insn start */
  SONDE_FT_T_EXC_ENTRY = 3,   /* to a handler of the vector table */
  SONDE_FT_T_EXC_RETURN = 4,  /* from an exception return instruction */
  SONDE_FT_T_IMPOSSIBLE = 5,
};
struct sonde_ft_bad_transition {
  uint64_t cycle;   /* first cycle of the `to` instruction */
  uint32_t from, to;
  char why[96];     /* "not a branch", "branch to 0x1234 not 0x1240", ... */
};
struct sonde_ft_check_result {
  uint64_t transitions;                 /* between known instructions */
  uint64_t by_kind[6];                  /* indexed by enum sonde_ft_transition */
  uint64_t skipped_unrecoverable;       /* transitions across unrecoverable cycles */
  uint64_t skipped_no_code;             /* from code not in the ELF (e.g. a boot ROM) */
  uint64_t impossible;
  struct sonde_ft_bad_transition *bad;  /* the first bad_count impossible ones (malloc'd) */
  size_t bad_count;
};
/* Check every transition between consecutive instruction runs of `t` against
 * the code in the ELF (`sym` required: disassembly by capstone). Keeps the
 * first `max_bad` impossible transitions. Free with sonde_ft_check_result_free. */
int sonde_ft_check(const struct sonde_ft_trace *t, struct sonde_sym *sym, size_t max_bad,
                   struct sonde_ft_check_result *out, struct sonde_diag *diag);
void sonde_ft_check_result_free(struct sonde_ft_check_result *r);

/* ======================================================================== */
/* analyze                                                                   */
/* ======================================================================== */

/* Busy-wait loops: the same short loop body (2..max_body distinct
 * instructions) repeated back to back at least min_iterations times, for at
 * least min_cycles. A single instruction repeating (a stall) is not a loop.
 * With `sym`, a body that stores (st*, push) does work (memset, memcpy) and is
 * not reported; `loads` says the body reads memory (it polls). Pieces of one
 * loop separated only by at most max_gap unrecoverable cycles are reported as
 * one loop, with those cycles counted in `unrecoverable`. */
struct sonde_sym;
struct sonde_ft_busy_config {
  unsigned max_body;        /* distinct instructions in the body (default 8) */
  uint64_t min_iterations;  /* default 3 */
  uint64_t min_cycles;      /* default 64 */
  uint64_t max_gap;         /* default 16 */
  struct sonde_sym *sym;    /* optional: classify bodies (see above) */
};
struct sonde_ft_busy_loop {
  uint64_t first_cycle, last_cycle; /* inclusive */
  uint32_t head;                    /* the lowest PC of the body */
  uint32_t tail;                    /* the highest PC of the body */
  uint32_t body_len;                /* instructions per iteration */
  uint64_t iterations;              /* complete or partial passes seen */
  uint64_t unrecoverable;           /* cycles inside it that were not recovered */
  bool loads;                       /* the body has a load (needs sym) */
};
/* Find busy-wait loops in `t`; *loops is malloc'd (caller frees with free()). */
int sonde_ft_find_busy_loops(const struct sonde_ft_trace *t, const struct sonde_ft_busy_config *cfg,
                             struct sonde_ft_busy_loop **loops, size_t *count);

/* Per-instruction runs: for each PC the number of executions and the
 * histogram of consecutive-cycle run lengths (an instruction's duration). */
#define SONDE_FT_HIST_BUCKETS 8 /* durations 1, 2, 3, 4, 5-8, 9-16, 17-32, 33+ cycles */
struct sonde_ft_insn_stat {
  uint32_t pc;
  uint64_t executions, cycles;
  uint32_t min_cycles, max_cycles;
  uint64_t hist[SONDE_FT_HIST_BUCKETS]; /* executions per duration bucket */
};
/* The bucket of a duration in cycles (>= 1). */
unsigned sonde_ft_hist_bucket(uint64_t cycles);
/* Stats for every PC in the trace, sorted by PC; *stats is malloc'd. */
int sonde_ft_insn_stats(const struct sonde_ft_trace *t, struct sonde_ft_insn_stat **stats,
                        size_t *count);

/* ======================================================================== */
/* LSU traces                                                                */
/* ======================================================================== */

/* One data transfer as captured in one run (or as ordered in the result). */
struct sonde_ft_xfer {
  uint32_t range;     /* index of the traced address range it matched (FrankenTrace CSV: comparator) */
  uint32_t run;       /* the run it was captured in (FrankenTrace CSV: pair_id; Sonde CSV: 0) */
  uint32_t pc;        /* 0xFFFFFFFF: unknown */
  uint32_t addr;      /* full address (or range base | low bits) */
  uint32_t value;
  uint8_t size;       /* 1, 2, 4; 0: unknown */
  bool write;
  bool gap;           /* not a transfer: an ITM overflow here (noninvasive mode) */
  uint64_t ts;        /* the run's timestamp (cycles; invasive runs: not comparable) */
  uint64_t cycle;     /* result of alignment: cycle in the PC trace (UINT64_MAX: none) */
};

/* Ordering from range pairs (paper 5.3). Each run traced two ranges (a, b)
 * and gives the order of their transfers. Within one range the sequence of
 * transfers must be the same in every run that traced it (else nondeterminism:
 * SONDE_E_FORMAT with the first difference in the detail). The result is the
 * one total order consistent with all pair orders; if some pair was not traced
 * and the order is ambiguous, or the orders contradict each other, it fails
 * with the position in the detail. */
struct sonde_ft_lsu_order; /* opaque */
int sonde_ft_lsu_order_new(uint32_t ranges, struct sonde_ft_lsu_order **out);
void sonde_ft_lsu_order_free(struct sonde_ft_lsu_order *o);
const char *sonde_ft_lsu_order_error_detail(const struct sonde_ft_lsu_order *o);
/* Add one run's transfers, in capture order (each x.range must be a or b;
 * gaps are not allowed in the invasive mode: SONDE_E_ARG). */
int sonde_ft_lsu_order_add_run(struct sonde_ft_lsu_order *o, uint32_t run_id, uint32_t range_a,
                               uint32_t range_b, const struct sonde_ft_xfer *x, size_t n);
/* The total order: *out malloc'd array of *count transfers (ts from the first
 * run that had them). */
int sonde_ft_lsu_order_finish(struct sonde_ft_lsu_order *o, struct sonde_ft_xfer **out,
                              size_t *count);

/* Align an ordered LSU trace to a PC trace by PC: each transfer gets the
 * first cycle of the next execution (run of cycles) of its PC at or after the
 * previous transfer's. Consecutive transfers of one instruction that moves
 * several words (LDM/STM/PUSH/POP/LDRD/STRD/VLDM/VSTM/VPUSH/VPOP, decoded from
 * `sym`) stay on one execution; without `sym`, a transfer with the previous
 * one's PC and the next address (addr == prev.addr + prev.size) is taken to
 * be such a word, which is wrong for a loop of single stores to consecutive
 * addresses (give the ELF). With `use_ts` (noninvasive mode: timestamps are
 * true cycles) the cycle is ts, checked against the PC at that cycle. Gaps
 * stay unplaced. Returns the number of transfers that could not be placed
 * (cycle = UINT64_MAX). */
int64_t sonde_ft_lsu_align(const struct sonde_ft_trace *t, struct sonde_sym *sym,
                           struct sonde_ft_xfer *x, size_t n, bool use_ts);

/* After sonde_ft_lsu_align without timestamps: move each placed transfer from
 * the first cycle of its instruction's execution to its data phase, as the VM
 * stamps transfers (docs/vm.md): transfer i of an instruction occupying L
 * cycles from s is at s + min(i + 1, L - 1). */
void sonde_ft_lsu_data_phase(const struct sonde_ft_trace *t, struct sonde_ft_xfer *x, size_t n);

/* Write an LSU trace in the `--trace-lsu` CSV format (docs/formats.md), with
 * FrankenTrace's additions: an empty cycle for a transfer that could not be
 * placed on the PC trace, an empty pc when unknown, and `gap` rows
 * (`cycle,,addr,,len,gap`: an ITM overflow may have lost transfers of the
 * range at addr in cycles cycle .. cycle+len-1; xfer.value is len). 
 * `cycle_offset` is added to every known cycle. */
int sonde_ft_lsu_write(FILE *f, const char *name, const struct sonde_ft_xfer *x, size_t n,
                       uint64_t cycle_offset, struct sonde_diag *diag);

/* Compare an LSU trace with ground truth (`sonde run --trace-lsu`): the
 * ground-truth transfers with cycles in [from, to) inside the traced 64 KiB
 * ranges (address >> 16) and not exception stacking, against x in order
 * (gaps skipped); equal means pc, addr, size, value and direction equal and,
 * when check_cycles, cycle + cycle_offset equal to the ground truth's. A
 * ground-truth transfer missing from x inside one of x's gap windows of its
 * range is counted in in_gaps, not as a difference. */
struct sonde_ft_lsu_verify_result {
  uint64_t compared, equal, truth_count, trace_count, gaps, unplaced, in_gaps;
  bool differs;
  uint64_t first;                 /* index of the first difference */
  struct sonde_ft_xfer got, want; /* there (want.gap/got.gap: missing on that side) */
};
void sonde_ft_lsu_verify(const struct sonde_ft_xfer *x, size_t n, const struct sonde_ft_xfer *truth,
                         size_t tn, const uint32_t *ranges, uint32_t nranges, uint64_t from,
                         uint64_t to, uint64_t cycle_offset, bool check_cycles,
                         struct sonde_ft_lsu_verify_result *v);

/* Read an LSU trace: Sonde's `--trace-lsu` CSV, or FrankenTrace's
 * (val_PC,val_addr_16b,val_data,next_ts_PC,...,direction,comparator,width,...,pair_id):
 * detected by the header; gzip allowed. *out malloc'd. For the FrankenTrace
 * format `run` is pair_id, `range` the comparator and ts next_ts_data; for
 * Sonde's, ts and cycle are the cycle column. */
int sonde_ft_lsu_read(const char *path, struct sonde_ft_xfer **out, size_t *count,
                      struct sonde_diag *diag);
int sonde_ft_lsu_read_buffer(const void *data, size_t len, const char *name,
                             struct sonde_ft_xfer **out, size_t *count, struct sonde_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
