/* Sonde: the VM's timing model against a real cycle-level PC trace
 * (src/frankentrace/cycles.c, `sonde cycles compare`, docs/vm.md "Against
 * silicon"). The model (src/vm/tm.h) of a machine that declares a memory
 * system (`memsys` statements) is driven with the recorded instruction stream:
 * each instruction of the trace, where it went next, and its data addresses
 * (static for PC-relative literals, else from an LSU trace by the order of
 * the instruction's executions); its predicted duration (Execute to the next
 * instruction's Execute) is compared with the trace's run of cycles.
 *
 * Left out of the comparison (but still fed to the model): instructions near
 * an impossible transition (control flow the ELF's code cannot make: a trace
 * stitched from nondeterministic runs), exception entries and returns, runs
 * cut by unrecoverable cycles, code not in the ELF. */
#ifndef SONDE_CYCLES_H
#define SONDE_CYCLES_H

#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"
#include "sonde/frankentrace.h"
#include "sonde/sym.h"
#include "sonde/vm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sonde_cycles_opts {
  const struct sonde_machine *machine;  /* must declare a memory system */
  struct sonde_sym *sym;                /* the ELF the trace ran */
  const struct sonde_ft_trace *trace;   /* the cycle-level PC trace */
  const struct sonde_ft_xfer *lsu;      /* optional LSU trace (sonde_ft_lsu_read) */
  size_t nlsu;
  unsigned margin;                      /* instructions left out each side of an
                                         * impossible transition (0: 8) */
  FILE *dump;                           /* optional: one CSV row per instruction */
};

struct sonde_cycles_group {
  char name[64];
  uint64_t compared, exact;
  uint64_t obs, pred; /* cycles over the compared instructions */
};

enum { SONDE_CYCLES_MAX_WHERE = 32, SONDE_CYCLES_CLASSES = 9, SONDE_CYCLES_MODES = 4 };

struct sonde_cycles_result {
  uint64_t instructions;      /* instruction runs in the trace */
  struct sonde_cycles_group all, outside; /* outside: not in the two loops below */
  char loops[2][80];          /* the two (function, mode) pairs with the most instructions */
  struct sonde_cycles_group cls[SONDE_CYCLES_CLASSES];
  struct sonde_cycles_group mode[SONDE_CYCLES_MODES]; /* VIMS mode 0 gpram, 1 cache, 3 off;
                                                       * index 2: no cache declared */
  uint64_t addr_known, addr_total; /* loads/stores whose data address was known */
  uint64_t impossible;        /* impossible transitions */
  uint64_t left_impossible, left_exception, left_incomplete, left_no_code;
  uint64_t left_operands;     /* a multiply/divide whose operands (so cycles) are unknown */
  struct { uint64_t cycle; uint32_t from, to; char why[96]; } where[SONDE_CYCLES_MAX_WHERE];
  unsigned nwhere;
  struct sonde_cycles_group *func; /* per function, most observed cycles first (malloc'd) */
  size_t nfunc;
  double worst_func_err;      /* largest |pred - obs| / obs of a function with >= 1000 cycles */
  char worst_func[64];
};

int sonde_cycles_compare(const struct sonde_cycles_opts *o, struct sonde_cycles_result *r,
                         struct sonde_diag *diag);
void sonde_cycles_result_free(struct sonde_cycles_result *r);

#ifdef __cplusplus
}
#endif

#endif
