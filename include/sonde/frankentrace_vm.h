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
  uint32_t bad_iterations;   /* iterations whose timestamps did not fit the plan */
};

/* Run the plan. On success *trace is the stitched trace (cycles 0 .. run
 * length - 1, absolute VM cycles), *report what the stitcher saw (valid until
 * sonde_ft_vm_free_state(); pass NULL to not keep it), and with
 * cfg->ground_truth *truth the DWT-visible ground truth of a hooked run
 * (instruction cycles -> their PC, sleep -> SLEEP, exception spans -> the
 * instruction before them, as docs/vm.md "Which PC a sample carries").
 * Errors (the image does not load, a run does not exit, runs differ in
 * length, the plan cannot work) return a negative code with a message in diag. */
struct sonde_ft_vm_state; /* keeps the stitcher (and its report) alive */
int sonde_ft_vm_run(const struct sonde_ft_vm_config *cfg, struct sonde_ft_trace **trace,
                    struct sonde_ft_trace **truth, struct sonde_ft_report *report,
                    struct sonde_ft_vm_stats *stats, struct sonde_ft_vm_state **state,
                    struct sonde_diag *diag);
void sonde_ft_vm_free_state(struct sonde_ft_vm_state *state);

#ifdef __cplusplus
}
#endif
#endif
