/* FrankenTrace target runner (paper 000_6a439e8724f7a0c3, sections 4 and 5;
 * docs/frankentrace-target.md). Link ft_runner.c, ft_setup.c and
 * ../cm_trace.c into the traced firmware and call ft_begin() early in
 * Reset_Handler (after .data/.bss, before the code to trace) and ft_end()
 * where the traced run ends. Each iteration runs the program once with one
 * plan entry (a PC sampling phase, or an LSU range pair and packet kind),
 * brackets it with metadata on stimulus port FT_PORT, flushes the ITM and
 * resets the chip with AIRCR.SYSRESETREQ; the iteration state survives the
 * reset in .noinit SRAM. Portable C99, no libc. */
#ifndef SONDE_FT_RUNNER_H
#define SONDE_FT_RUNNER_H

#include <stdint.h>

#include "ft_setup.h"

#define FT_PORT 31u                /* stimulus port of the metadata */
#define FT_WIRE_MAGIC 0x4654u      /* "FT" */
#define FT_WIRE_VERSION 1u
#define FT_STATE_MAGIC 0x46545354u /* "FTST" */

/* Packet kinds of an LSU iteration (DWT_FUNCTION of the emitting comparator). */
enum ft_lsu_kind { FT_LSU_ADDR = 0, FT_LSU_DATA = 1, FT_LSU_PC = 2, FT_LSU_KINDS = 3 };

struct ft_config {
  uint32_t core_hz;   /* TPIU's TRACECLKIN (the core clock on CC2650, STM32F1/F4) */
  uint32_t swo_baud;  /* NRZ 8N1 */
  uint32_t n;         /* sampling interval; 0: ft_setup_min_n() */
  uint32_t repeats;   /* redundant PC iterations after phases 0..n-1 */
  uint32_t run_id;    /* tells captures of different runs apart */
  uint32_t fw_id;     /* identifies the image (e.g. a CRC of .text); the host checks it */
  /* LSU: the 64 KiB ranges (address >> 16) whose pairs are traced after the
   * PC phases, each pair once per packet kind; nranges 0: no LSU. */
  const uint16_t *ranges;
  uint32_t nranges;
  /* LSU, nonzero: invasive (paper 5.2): every matched transfer raises
   * DebugMonitor, whose handler waits until the ITM has sent its packets;
   * 0: noninvasive (packets the ITM cannot take are lost: overflow). */
  uint32_t lsu_delay;
  /* Hook: runs before the PC setup in every iteration (e.g. route the SWO pin:
   * STM32 DBGMCU_CR.TRACE_IOEN, CC2650 IOC). May be NULL. */
  void (*pin_setup)(void);
};

/* Retained across SYSRESETREQ (.noinit); guarded by magic and checksum. */
struct ft_state {
  uint32_t magic;
  uint32_t run_id;
  uint32_t iteration; /* next plan entry */
  uint32_t total;     /* plan length */
  uint32_t sum;       /* ft_state_sum of the words above */
};

/* Plan entry of iteration j (ft_plan_entry). */
struct ft_entry {
  uint32_t kind;  /* 0 PC phase, 1 LSU */
  uint32_t phase; /* PC: the sampling phase 0..n-1 */
  uint32_t range_a, range_b, lsu_kind; /* LSU: range indices, ft_lsu_kind */
};

uint32_t ft_state_sum(const struct ft_state *s);
/* Plan length: n + repeats PC iterations, then C(nranges, 2) pairs (one
 * range: one "pair" of it alone) x 3 kinds. */
uint32_t ft_plan_length(const struct ft_config *c, uint32_t n);
/* Iteration j of the plan. Redundant repeat r samples phase (r * 7919) % n. */
void ft_plan_entry(const struct ft_config *c, uint32_t n, uint32_t j, struct ft_entry *e);

/* Start an iteration: a cold boot (bad magic/checksum/run id) starts at 0.
 * Returns 0 when an iteration is set up (trace runs), 1 when the plan is done
 * (the traced code runs untraced), or an ft_setup_error (nothing traced). */
int ft_begin(const struct ft_config *c);
/* End an iteration: end metadata, ITM flushed, next iteration, SYSRESETREQ.
 * Returns only when ft_begin did not start an iteration. */
void ft_end(void);

/* The known preamble (a fixed instruction sequence the host can check); run
 * by ft_begin after the begin metadata. */
void ft_preamble(void);

/* Interrupt priorities for invasive LSU tracing (paper 5.2): every
 * configurable exception and the first nirq interrupts get priority `prio`
 * (below DebugMonitor's 0). */
void ft_lower_priorities(uint32_t nirq, uint32_t prio);
/* Critical sections that DebugMonitor can still interrupt: raise BASEPRI to
 * FT_CRITICAL_PRIO instead of setting PRIMASK. */
#define FT_CRITICAL_PRIO 0x20u
uint32_t ft_critical_enter(void);
void ft_critical_exit(uint32_t saved);
/* The DebugMonitor delay for invasive LSU runs: clears the comparators'
 * MATCHED flags and waits for the ITM to drain, touching no memory (a leaf
 * without stack; docs/frankentrace-target.md). Install it with
 * FT_DEBUGMON_VECTOR at file scope, which defines DebugMon_Handler as a
 * branch to it (a C wrapper could push to the stack, a traced range). */
void ft_debugmon_handler(void);
#define FT_DEBUGMON_VECTOR                                                                         \
  __attribute__((naked)) void DebugMon_Handler(void)                                               \
  {                                                                                                \
    __asm volatile("b ft_debugmon_handler");                                                       \
  }

#endif
