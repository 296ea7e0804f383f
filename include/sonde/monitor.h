/* Sonde: monitoring a running target through its debug port (src/monitor) —
 * AVEKSHA's three modes (shared/reference/004, docs/monitor.md) on Cortex-M:
 *
 *   PC polling   DWT_PCSR read while the core runs, logged on function change;
 *                executions and nesting inferred with the static call graph
 *   watchpoint   DWT comparators as triggers (function entry, reads in a
 *                peripheral range, writes to a state variable, user markers);
 *                events leave through ITM data trace or are drained over the
 *                link (DWT_FUNCTIONn.MATCHED), losses counted
 *   breakpoint   FPB comparators: halt, read, resume; perturbation measured
 *
 * and energy attribution: current samples (the VM's power model or an
 * external CSV) integrated over labelled intervals (function executions,
 * tasks, values of a state variable, event windows).
 *
 * A debug link (struct sonde_mon_link) is one of three backends, each counting
 * the operations it made and the host time they took, so every mode reports
 * the poll rate it really achieved:
 *   vm       the virtual Cortex-M directly: polls every C cycles, exactly and
 *            deterministically (a probe clocked with the core, as AVEKSHA's FPGA)
 *   openocd  OpenOCD's Tcl RPC port (commands end with 0x1a): mdw/mww while
 *            the core runs, halt, resume, step
 *   gdb      a GDB remote-protocol server (J-Link, Black Magic Probe,
 *            `sonde run --gdb`): halting mode, the core stops for every read
 *
 * Errors: negative SONDE_E_*; the handle's _error() says which link, which
 * operation and why. A link that fails mid-run keeps what was recorded: every
 * mode returns its result so far together with the error. */
#ifndef SONDE_MONITOR_H
#define SONDE_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"
#include "sonde/sym.h"
#include "sonde/vm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cortex-M debug registers the modes use (ARMv7-M ARM C1.6, C1.8, C1.11). */
#define SONDE_MON_DHCSR 0xE000EDF0u
#define SONDE_MON_DEMCR 0xE000EDFCu
#define SONDE_MON_DWT_CTRL 0xE0001000u
#define SONDE_MON_DWT_CYCCNT 0xE0001004u
#define SONDE_MON_DWT_PCSR 0xE000101Cu
#define SONDE_MON_DWT_COMP(n) (0xE0001020u + 16u * (n))
#define SONDE_MON_DWT_MASK(n) (0xE0001024u + 16u * (n))
#define SONDE_MON_DWT_FUNCTION(n) (0xE0001028u + 16u * (n))
#define SONDE_MON_FP_CTRL 0xE0002000u
#define SONDE_MON_FP_COMP(n) (0xE0002008u + 4u * (n))

/* ---- function table and static call graph ------------------------------- */

struct sonde_mon_func {
  uint32_t start, end; /* [start, end): end = next function's start or symbol end */
  const char *name;    /* symbol name, or "sub_XXXXXXXX" when found by disassembly */
  bool handler;        /* an exception handler (from the vector table) */
};

struct sonde_mon_ftab; /* opaque */
/* Functions from the ELF symbols (sonde_sym), and the call graph from their
 * BL/BLX instructions. Fails with SONDE_E_NOTFOUND when the ELF has no
 * function symbols (use _from_code). */
int sonde_mon_ftab_from_sym(struct sonde_sym *sym, struct sonde_mon_ftab **out);
/* Reads target code (from the ELF, the VM or over a link). */
typedef int (*sonde_mon_read_fn)(void *ctx, uint32_t addr, void *buf, size_t len);
/* Functions found as AVEKSHA does without symbols: the targets of every BL in
 * the code reachable by a linear sweep from the vector table at `vtor`
 * (reset and exception handlers are roots too). The code is read in 1 KiB
 * pieces until `read` fails or `max_bytes` have been read. */
int sonde_mon_ftab_from_code(sonde_mon_read_fn read, void *ctx, uint32_t vtor, size_t max_bytes,
                             struct sonde_mon_ftab **out);
void sonde_mon_ftab_free(struct sonde_mon_ftab *t); /* NULL is a no-op */
size_t sonde_mon_ftab_count(const struct sonde_mon_ftab *t);
const struct sonde_mon_func *sonde_mon_ftab_at(const struct sonde_mon_ftab *t, size_t i);
/* Index of the function containing pc (bit 0 ignored), or -1. */
long sonde_mon_ftab_lookup(const struct sonde_mon_ftab *t, uint32_t pc);
/* Index of a function by name, or -1. */
long sonde_mon_ftab_find(const struct sonde_mon_ftab *t, const char *name);
/* True when function `caller` contains a BL/BLX to the start of `callee`. */
bool sonde_mon_ftab_calls(const struct sonde_mon_ftab *t, size_t caller, size_t callee);
/* Number of call edges (distinct caller -> callee pairs), and the i-th
 * (sorted by caller, then callee). */
size_t sonde_mon_ftab_edges(const struct sonde_mon_ftab *t);
int sonde_mon_ftab_edge_at(const struct sonde_mon_ftab *t, size_t i, size_t *caller, size_t *callee);

/* ---- the debug link ------------------------------------------------------ */

enum sonde_mon_link_kind { SONDE_MON_LINK_VM, SONDE_MON_LINK_OPENOCD, SONDE_MON_LINK_GDB };

struct sonde_mon_link; /* opaque */

/* The VM backend: `vm` (loaded and reset, owned by the caller) is the target. */
int sonde_mon_link_vm(struct sonde_vm *vm, struct sonde_mon_link **out);
/* OpenOCD's Tcl RPC server (default port 6666), connect within timeout_ms. */
int sonde_mon_link_openocd(const char *host, unsigned port, unsigned timeout_ms,
                           struct sonde_mon_link **out, struct sonde_diag *diag);
/* A GDB remote server; the target is halted while attached. */
int sonde_mon_link_gdb(const char *host, unsigned port, unsigned timeout_ms,
                       struct sonde_mon_link **out, struct sonde_diag *diag);
/* "vm" (needs vm), "openocd:HOST:PORT" or "gdb:HOST:PORT". */
int sonde_mon_link_open(const char *spec, struct sonde_vm *vm, unsigned timeout_ms,
                        struct sonde_mon_link **out, struct sonde_diag *diag);
void sonde_mon_link_free(struct sonde_mon_link *l); /* NULL is a no-op; detaches */
enum sonde_mon_link_kind sonde_mon_link_kind(const struct sonde_mon_link *l);
const char *sonde_mon_link_name(const struct sonde_mon_link *l); /* "vm", "openocd:..." */
/* "<link>: <operation>: <why>" for the last error; "" if none. */
const char *sonde_mon_link_error(const struct sonde_mon_link *l);
/* True when memory can be read while the core runs (vm, openocd). */
bool sonde_mon_link_reads_running(const struct sonde_mon_link *l);

/* Operations. Memory is read/written as 32-bit words through the target's
 * debug access port. */
int sonde_mon_read32(struct sonde_mon_link *l, uint32_t addr, uint32_t *value);
int sonde_mon_read_words(struct sonde_mon_link *l, uint32_t addr, uint32_t *words, unsigned n);
int sonde_mon_write32(struct sonde_mon_link *l, uint32_t addr, uint32_t value);
int sonde_mon_halt(struct sonde_mon_link *l);
int sonde_mon_resume(struct sonde_mon_link *l);
/* One instruction while halted (to step over a breakpoint). */
int sonde_mon_step(struct sonde_mon_link *l);
/* The PC while halted. */
int sonde_mon_read_pc(struct sonde_mon_link *l, uint32_t *pc);

/* Whether the target is halted, running or gone. */
enum sonde_mon_state {
  SONDE_MON_RUNNING = 0,
  SONDE_MON_HALTED = 1,  /* a breakpoint, watchpoint or halt request */
  SONDE_MON_EXITED = 2,  /* the firmware ended (VM: semihosting exit) */
};
/* Let the target run until it halts or exits, for at most `cycles` target
 * cycles (VM) or `timeout_ms` of host time (other links), whichever the link
 * can measure. Returns the state (>= 0) or an error. */
int sonde_mon_wait(struct sonde_mon_link *l, uint64_t cycles, unsigned timeout_ms);
/* The target cycle counter: the VM's cycle count, else DWT_CYCCNT extended
 * to 64 bits across wraps (the monitor enables it). */
int sonde_mon_cycles(struct sonde_mon_link *l, uint64_t *cycles);

struct sonde_mon_link_stats {
  uint64_t ops;       /* link operations (a block read is one) */
  uint64_t host_ns;   /* host time spent in them */
  uint64_t bytes_out, bytes_in; /* socket traffic (0 for vm) */
};
void sonde_mon_link_stats(const struct sonde_mon_link *l, struct sonde_mon_link_stats *out);

/* ---- PC polling ------------------------------------------------------------ */

/* One logged function change: from `cycle` the PC was in function `func`
 * (ftab index, -1 outside every function) at address `pc`. */
struct sonde_mon_change {
  uint64_t cycle;
  uint32_t pc;
  int32_t func;
};

struct sonde_mon_pc_opts {
  uint64_t every_cycles;  /* vm: poll every C cycles (>= 1; default 1) */
  uint64_t phase;         /* vm: first poll at this cycle (default 0) */
  uint64_t max_cycles;    /* stop after this many target cycles (0: until exit; vm: 10 G) */
  unsigned max_ms;        /* other links: stop after this much host time (0: 1000 ms) */
  uint64_t max_polls;     /* stop after this many polls (0: no limit) */
  bool hooked;            /* vm: place every poll from the retire hook even when sparse */
};
/* vm: from this period on, polls use sonde_vm_pc_at_cycle() (the fast path up
 * to each poll) instead of the retire hook; same results (docs/monitor.md). */
#define SONDE_MON_SPARSE_CYCLES 16u

struct sonde_mon_pc_result {
  struct sonde_mon_change *changes; /* malloc'd; free with sonde_mon_pc_result_free */
  size_t nchanges;
  uint64_t polls;
  uint64_t unsampled;               /* polls with no PC: DWT_PCSR 0xFFFFFFFF (core halted,
                                       gone), or (vm) before the first instruction */
  uint64_t first_cycle, last_cycle; /* cycles of the first and last poll */
  uint64_t host_ns;                 /* host time of the whole polling run */
  double polls_per_host_s;          /* achieved: polls per second of host time */
  double mean_poll_cycles;          /* achieved: target cycles between polls */
  uint64_t min_dwell_cycles;        /* shortest stay in a function that was seen */
  bool exited;                      /* the target ended (vm: semihosting exit) */
  int exit_code;
  int error;                        /* 0, or the link error that ended the run */
};
/* Poll the PC until the target exits, a limit is reached or the link fails.
 * vm: the VM runs from its current state; polls at phase + k*C. Other links:
 * CYCCNT and PCSR are read together (one block read) while the core runs
 * (openocd), or the core is halted, its PC read and resumed (gdb). Returns 0,
 * or the link error (res->error too) with res holding everything up to it. */
int sonde_mon_pc_poll(struct sonde_mon_link *l, const struct sonde_mon_ftab *ft,
                      const struct sonde_mon_pc_opts *opts, struct sonde_mon_pc_result *res);
void sonde_mon_pc_result_free(struct sonde_mon_pc_result *res);

/* Function changes of a ground-truth PC trace (sonde run --trace-pc) with
 * the VM link's rule: a span that is not an instruction (sleep, exception
 * entry) keeps the function before it. */
struct sonde_pctrace_reader;
int sonde_mon_changes_from_pctrace(struct sonde_pctrace_reader *r, const struct sonde_mon_ftab *ft,
                                   struct sonde_mon_change **out, size_t *n, uint64_t *end_cycle);

/* Transitions found by polling compared with the ground truth: a polled
 * change into g at t matches the first unmatched true change into g at a cycle
 * in (t - window, t] (window: the poll period). */
struct sonde_mon_match {
  uint64_t truth, polled, matched;
  double precision, recall; /* matched/polled, matched/truth (1 when the divisor is 0) */
};
void sonde_mon_compare(const struct sonde_mon_change *truth, size_t ntruth,
                       const struct sonde_mon_change *polled, size_t npolled,
                       uint64_t window_cycles, struct sonde_mon_match *out);

/* Executions and nesting inferred from the changes and the call graph (the
 * paper's Figures 13-14): a change to a callee of the current function is a
 * call, to a function on the stack a return, to a handler a preemption; a
 * change explained only through one unseen function inserts it (inferred). */
struct sonde_mon_exec {
  int32_t func;
  uint32_t depth;     /* 0 = outermost */
  uint64_t start, end;
  bool inferred;      /* never seen by a poll: implied by the call graph */
};
struct sonde_mon_infer {
  struct sonde_mon_exec *execs; /* in start order; malloc'd */
  size_t nexecs;
  uint64_t calls, returns, preemptions, inferred, unexplained;
};
int sonde_mon_infer_run(const struct sonde_mon_ftab *ft, const struct sonde_mon_change *ch,
                        size_t n, uint64_t end_cycle, struct sonde_mon_infer *out);
void sonde_mon_infer_free(struct sonde_mon_infer *inf);

struct sonde_mon_current;
/* A function-level profile from the changes and the inferred executions:
 * rows[f] for f < ftab count, rows[count] for "outside every function"
 * (caller's array of count + 1). Charge columns need `cur` (may be NULL). */
struct sonde_mon_prof_row {
  int32_t func;
  uint64_t calls;          /* executions (inferred ones included) */
  uint64_t inferred;       /* of which never seen by a poll */
  uint64_t min_cycles, max_cycles; /* shortest and longest execution */
  uint64_t incl_cycles;    /* executions' time, callees included */
  uint64_t self_cycles;    /* time the PC was in the function */
  uint64_t incl_ua_cycles, self_ua_cycles;
};
int sonde_mon_profile(const struct sonde_mon_ftab *ft, const struct sonde_mon_infer *inf,
                      const struct sonde_mon_change *ch, size_t n, uint64_t end_cycle,
                      const struct sonde_mon_current *cur, struct sonde_mon_prof_row *rows);

/* ---- watchpoint mode --------------------------------------------------------- */

enum sonde_mon_trigger_kind {
  SONDE_MON_TRIG_FUNC_ENTRY = 1, /* PC == addr (a PC comparator) */
  SONDE_MON_TRIG_READ_RANGE,     /* a read in [addr, addr+size), size a power of 2 */
  SONDE_MON_TRIG_WRITE_VAR,      /* a write to the variable at addr (size bytes) */
  SONDE_MON_TRIG_MARKER,         /* PC == addr of a marker instruction */
};
struct sonde_mon_trigger {
  enum sonde_mon_trigger_kind kind;
  uint32_t addr, size;
  char name[64];
};
/* The user marker: `mov r11, r11` (Thumb 0x46DB), a no-op the compiler never
 * emits, placed in code with `__asm volatile("mov r11, r11")`. */
#define SONDE_MON_MARKER_INSN 0x46DBu
/* Addresses of every marker instruction in [lo, hi), read through `read`.
 * With a function table each function is decoded from its start (a 32-bit
 * instruction's halves, or data after a desynchronising literal, are not
 * taken for markers); without, [lo, hi) is decoded from lo. Returns the
 * count (up to cap stored). */
long sonde_mon_find_markers(sonde_mon_read_fn read, void *ctx, const struct sonde_mon_ftab *ft,
                            uint32_t lo, uint32_t hi, uint32_t *addrs, size_t cap);

struct sonde_mon_event {
  uint64_t cycle;
  uint32_t trigger;  /* index in the trigger list */
  uint32_t pc;       /* PC of the access (data trace) or of the match */
  uint32_t value;    /* value read or written (data triggers) */
};
struct sonde_mon_watch_opts {
  uint64_t max_cycles;    /* vm: stop after (0: 10 G); others: see max_ms */
  unsigned max_ms;
  uint64_t drain_every;   /* vm: drain MATCHED bits every C cycles (default 1) */
  bool drain_only;        /* do not use ITM data trace, drain every trigger over the link */
  uint32_t swo_acpr;      /* vm: TPIU_ACPR, the SWO pin's bit time - 1 in cycles (0: fastest) */
};
struct sonde_mon_watch_result {
  struct sonde_mon_event *events; /* malloc'd, in cycle order */
  size_t nevents;
  uint64_t overflows;      /* ITM overflow packets seen */
  uint64_t lost;           /* events known lost (vm: exact; others: lower bound) */
  uint64_t drains;         /* link polls of the MATCHED bits */
  uint64_t host_ns;
  double drains_per_host_s;
  bool exited;
  int exit_code;
  int error;
};
/* Program the DWT comparators for `trig` (at most 4) and collect events until
 * the target exits or a limit. Data triggers use ITM data trace (vm: decoded
 * from the VM's SWO pin) unless opts->drain_only; PC triggers are drained. */
int sonde_mon_watch(struct sonde_mon_link *l, const struct sonde_mon_trigger *trig, unsigned ntrig,
                    const struct sonde_mon_watch_opts *opts, struct sonde_mon_watch_result *res);
void sonde_mon_watch_result_free(struct sonde_mon_watch_result *res);

/* ---- breakpoint mode ----------------------------------------------------------- */

struct sonde_mon_bp_event {
  uint64_t cycle;     /* target cycle at the halt */
  uint32_t addr;      /* breakpoint address (= PC) */
  uint32_t bp;        /* index in the address list */
  uint64_t halt_ns;   /* host time from the halt seen to the core running again */
};
struct sonde_mon_bp_opts {
  uint64_t max_cycles; /* vm: stop after this many cycles (0: 10 G) */
  unsigned max_ms;     /* probes: the whole session's host time (0: 1000 ms); the core is
                          left halted at the end */
  uint64_t max_events; /* 0: no limit */
};
struct sonde_mon_bp_result {
  struct sonde_mon_bp_event *events;
  size_t nevents;
  uint64_t total_cycles;       /* target cycles of the monitored run */
  uint64_t host_ns;
  double halt_ns_per_event;    /* link time the core stood still per event */
  int error;
  bool exited;
  int exit_code;
};
/* Program FPB comparators at `addrs` (at most the FPB's code comparators),
 * run, and at every halt read the PC and CYCCNT, step over and resume. */
int sonde_mon_break(struct sonde_mon_link *l, const uint32_t *addrs, unsigned n,
                    const struct sonde_mon_bp_opts *opts, struct sonde_mon_bp_result *res);
void sonde_mon_bp_result_free(struct sonde_mon_bp_result *res);

/* ---- energy ------------------------------------------------------------------- */

/* Current as a step function: from sample i's time the current holds until
 * sample i+1 (the VM's power model is exactly that; a meter's CSV is read as
 * zero-order hold). Times in target cycles. */
struct sonde_mon_current {
  uint64_t *cycle;
  uint32_t *ua;        /* microamps */
  size_t n, cap;
  uint64_t clock_hz;   /* to turn cycles into seconds */
  uint32_t supply_mv;  /* to turn charge into energy */
};
void sonde_mon_current_init(struct sonde_mon_current *c, uint64_t clock_hz, uint32_t supply_mv);
void sonde_mon_current_free(struct sonde_mon_current *c);
int sonde_mon_current_add(struct sonde_mon_current *c, uint64_t cycle, uint32_t ua);
/* A sonde_vm_power_fn that appends to a struct sonde_mon_current (ctx). */
void sonde_mon_current_vm_fn(void *ctx, uint64_t cycle, uint32_t current_ua);
/* Read `time,current` CSV (header required; units from the column names:
 * time or time_s (seconds), time_us, cycle; current or current_a (amps),
 * current_ma, current_ua). Errors name the line and byte offset in diag. */
int sonde_mon_current_parse_csv(struct sonde_mon_current *c, const char *text, size_t len,
                                const char *name, struct sonde_diag *diag);
/* Charge in microamp-cycles over [from, to) (exact integers). */
uint64_t sonde_mon_charge(const struct sonde_mon_current *c, uint64_t from, uint64_t to);
/* Microamp-cycles to microjoules at the supply voltage. */
double sonde_mon_uj(const struct sonde_mon_current *c, uint64_t ua_cycles);

/* Energy per label: intervals [start, end) with a label index, summed. */
struct sonde_mon_interval {
  uint64_t start, end;
  uint32_t label;
};
struct sonde_mon_energy_row {
  uint32_t label;
  uint64_t count;        /* intervals */
  uint64_t cycles;       /* summed length */
  uint64_t ua_cycles;    /* summed charge */
  double uj;
};
/* rows[label] for label < nlabels (caller's array, zeroed here). */
void sonde_mon_energy(const struct sonde_mon_current *c, const struct sonde_mon_interval *iv,
                      size_t n, struct sonde_mon_energy_row *rows, size_t nlabels);
/* Intervals from function changes (exclusive time: from a change to the next,
 * the last to end_cycle); label = ftab index, nfunc for "outside". */
size_t sonde_mon_intervals_from_changes(const struct sonde_mon_change *ch, size_t n,
                                        uint64_t end_cycle, uint32_t nfunc,
                                        struct sonde_mon_interval *out);

/* Intervals of a state variable's values from watchpoint events of one
 * trigger: from each write to the next (the last to end_cycle), labelled by
 * the index of the value in values[] (distinct values in order of first
 * appearance, at most cap_values; writes of further values are skipped).
 * out needs room for n. Returns the number of intervals. */
size_t sonde_mon_intervals_from_states(const struct sonde_mon_event *ev, size_t n, uint32_t trigger,
                                       uint64_t end_cycle, struct sonde_mon_interval *out,
                                       uint32_t *values, size_t *nvalues, size_t cap_values);

/* The monitor's CSV outputs read back: `cycle,pc,function` (monitor pc) or
 * `cycle,trigger,pc,value` (monitor watch; events = true). label[i] indexes
 * names[] (function or trigger); value[i] is 0 for changes. Errors name the
 * line and byte offset. */
struct sonde_mon_marks {
  uint64_t *cycle;
  uint32_t *label, *value;
  size_t n;
  char **names;
  size_t nnames;
  bool events;
};
int sonde_mon_marks_parse_csv(struct sonde_mon_marks *m, const char *text, size_t len,
                              const char *name, struct sonde_diag *diag);
void sonde_mon_marks_free(struct sonde_mon_marks *m);

/* Task run intervals of a Tonbandgerät trace (src/tband, FreeRTOS mode): one
 * interval per stretch a task ran ("Running task" slices), label = index in
 * names[], in cycles at clock_hz (the trace's timestamps are ns). */
struct sonde_mon_tasks {
  struct sonde_mon_interval *iv;
  size_t n;
  char **names;
  size_t nnames;
  uint64_t frames, errors, switches;
};
int sonde_mon_tasks_from_tband(const char *path, uint64_t clock_hz, struct sonde_mon_tasks *out,
                               struct sonde_diag *diag);
void sonde_mon_tasks_free(struct sonde_mon_tasks *t);

#ifdef __cplusplus
}
#endif
#endif
