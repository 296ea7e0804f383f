/* Sonde: statistical profile from ITM/DWT packets (src/profile) — the
 * engine behind `sonde top`.
 *
 * Input: decoded packets (include/sonde/itm.h). Periodic PC samples
 * (SONDE_ITM_PC) are counted exactly per (PC, exception context); sleeping
 * samples (SONDE_ITM_PC_SLEEP) count as sleep. Exception trace packets
 * (SONDE_ITM_EXC) maintain the stack of active exceptions, which gives each
 * sample its context and each exception its count, total and maximum
 * duration and nesting.
 *
 * Durations use local timestamps with the ARM ARM's delayed-timestamp rule:
 * a local timestamp packet gives the time of the packets emitted since the
 * previous one, so exception events are held (at most 64) until the next LTS
 * and stamped with its absolute time. Without LTS packets in the stream the
 * durations are unknown (have_ts false) while counts stay exact.
 *
 * Reports group the samples by function or by source line (via
 * include/sonde/sym.h; without symbols, by address). Memory grows with the
 * number of distinct sampled PCs (a hash table), never with the stream. */
#ifndef SONDE_PROFILE_H
#define SONDE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"
#include "sonde/itm.h"
#include "sonde/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sonde_profile; /* opaque */

struct sonde_profile *sonde_profile_new(void); /* NULL when out of memory */
void sonde_profile_free(struct sonde_profile *p);

/* Account n packets. Returns 0 or SONDE_E_NOMEM. */
int sonde_profile_add(struct sonde_profile *p, const struct sonde_itm_packet *pk, size_t n);

struct sonde_profile_totals {
  uint64_t samples;      /* PC samples, awake + sleeping */
  uint64_t sleep;        /* sleeping PC samples (0x15 0x00) */
  uint64_t distinct_pcs; /* distinct (PC, context) pairs */
  uint64_t exc_packets;  /* exception trace packets */
  uint64_t overflows;    /* ITM overflow packets: samples were lost */
  uint64_t unmatched;    /* exits/returns that did not match the stack */
  uint64_t untracked;    /* samples at new addresses after SONDE_PROFILE_MAX_PCS distinct
                            ones: counted in `samples`, in no row (a corrupt stream) */
  bool have_ts;          /* local timestamps seen: durations are known */
  uint64_t first_ts, last_ts; /* absolute time span covered (cycles) */
};
/* Distinct (PC, context) pairs a profile keeps, which bounds its memory
 * (~40 MB with the report): more than any firmware's code has instructions. */
#define SONDE_PROFILE_MAX_PCS (1u << 20)
void sonde_profile_get_totals(const struct sonde_profile *p, struct sonde_profile_totals *t);

enum sonde_profile_by {
  SONDE_PROFILE_BY_FUNCTION = 0,
  SONDE_PROFILE_BY_LINE = 1,
};

#define SONDE_PROFILE_CTX_NONE 0xffffu /* rows not split by context */

struct sonde_profile_row {
  const char *function; /* NULL if the address is not in a function */
  const char *file;     /* BY_LINE: source file, NULL if unknown */
  unsigned line;        /* BY_LINE: line, 0 if unknown */
  uint32_t addr;        /* function start; BY_LINE: first sampled PC of the line;
                           unknown: the PC */
  unsigned context;     /* exception number (0 = thread) or CTX_NONE */
  uint64_t samples;
};

/* Group the awake samples into rows sorted by samples (descending, then
 * address). With split_context, rows are also split by the exception context
 * they were taken in. `sym` may be NULL (rows by address). *rows points into
 * p and stays valid until the next call or _free. Returns the row count or
 * SONDE_E_NOMEM. */
long sonde_profile_report(struct sonde_profile *p, struct sonde_sym *sym,
                          enum sonde_profile_by by, bool split_context,
                          const struct sonde_profile_row **rows);

struct sonde_profile_exc {
  unsigned number;        /* exception number (ARMv7-M B1.5.2) */
  uint64_t count;         /* entries */
  uint64_t total_cycles;  /* sum of entry-to-exit durations (timed ones) */
  uint64_t max_cycles;
  uint64_t timed;         /* entries with both ends timestamped */
  uint64_t nested;        /* entries that preempted another exception */
  unsigned max_depth;     /* deepest nesting level it ran at (1 = over thread) */
};

/* Exceptions seen, by number. *out points into p (valid until next call). */
size_t sonde_profile_exceptions(struct sonde_profile *p, const struct sonde_profile_exc **out);

#ifdef __cplusplus
}
#endif
#endif
