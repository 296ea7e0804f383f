/* Sonde: the FrankenTrace wire side on the host (src/ftwire): from the ITM
 * packets of a capture to each iteration's PC samples, and the runner's
 * metadata records (target/cortexm/frankentrace, docs/formats.md
 * "FrankenTrace wire protocol"). */
#ifndef SONDE_FTWIRE_H
#define SONDE_FTWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"
#include "sonde/itm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SONDE_FTW_PORT 31u
#define SONDE_FTW_MAGIC 0x4654u
#define SONDE_FTW_VERSION 1u
#define SONDE_FTW_RECORD_WORDS 8u /* 7 words + FNV-1a check word */

/* A begin (type 1) or end (type 2) record of the runner. */
struct sonde_ftw_record {
  uint32_t type, run_id, fw_id, iteration, n;
  uint32_t kind;      /* 0 PC phase, 1 LSU */
  uint32_t lsu_kind;  /* 0 address, 1 data, 2 PC */
  uint32_t phase;
  uint32_t range_a, range_b; /* LSU: address >> 16 of the two ranges */
};
/* FNV-1a (32-bit) over the first 7 words: the record's word 7. */
uint32_t sonde_ftw_record_check(const uint32_t w[7]);
/* Decode the 8 words of a record; SONDE_E_FORMAT with the reason in diag. */
int sonde_ftw_record_decode(const uint32_t w[SONDE_FTW_RECORD_WORDS], struct sonde_ftw_record *out,
                            struct sonde_diag *diag);

/* The PC samples of one iteration, k = 0, 1, ... (values as the stitcher
 * takes them: a PC, SONDE_FT_SAMPLE_SLEEP = 1 or SONDE_FT_SAMPLE_LOST = 3). */
struct sonde_ftw_samples {
  uint32_t *v;
  size_t count, cap;
  uint64_t lost;       /* samples inferred lost from the timestamps */
  uint64_t overflows;  /* ITM overflow packets */
  uint64_t bad_spacing;/* timestamps that are not a multiple of N after a sample */
  uint64_t skips;      /* decoder losses (corrupt bytes) */
};
/* Collect the PC samples of `n` packets of one iteration sampling every N
 * cycles. The local timestamp after each sample must be N cycles after the
 * previous one, or m*N with an overflow packet between them (m-1 samples
 * lost, appended as LOST); anything else counts in bad_spacing. */
int sonde_ftw_collect(const struct sonde_itm_packet *p, size_t n, uint32_t N,
                      struct sonde_ftw_samples *out);
void sonde_ftw_samples_free(struct sonde_ftw_samples *s);

/* Splitting a capture into iterations by the runner's records. Feed the ITM
 * packets of the whole capture in order; `fn` is called once per iteration,
 * at its end record or, if the capture is cut (the next begin record or the
 * end of input comes first), with has_end false, and gets the packets between
 * the records. Corrupt records (a word on port 31 that does not start one, a
 * bad version/type, an end record that does not match its begin) are counted
 * (sonde_ftw_splitter_bad_records, the first described) and make the open
 * iteration's wire_errors non-zero; splitting goes on. */
struct sonde_ftw_iteration {
  struct sonde_ftw_record begin, end;
  bool has_end;
  uint64_t offset;             /* byte offset of the begin record */
  const struct sonde_itm_packet *packets; /* between the records */
  size_t count;
  uint32_t wire_errors; /* records inside it that were corrupt: do not trust it */
};
typedef int (*sonde_ftw_iter_fn)(void *ctx, const struct sonde_ftw_iteration *it);
struct sonde_ftw_splitter;
int sonde_ftw_splitter_new(sonde_ftw_iter_fn fn, void *ctx, struct sonde_ftw_splitter **out);
void sonde_ftw_splitter_free(struct sonde_ftw_splitter *s);
/* Returns 0, SONDE_E_FORMAT (diag), SONDE_E_NOMEM, or fn's negative return. */
int sonde_ftw_splitter_feed(struct sonde_ftw_splitter *s, const struct sonde_itm_packet *p, size_t n,
                            struct sonde_diag *diag);
int sonde_ftw_splitter_finish(struct sonde_ftw_splitter *s, struct sonde_diag *diag);
/* Corrupt records seen, and the first one's description ("" if none). */
uint64_t sonde_ftw_splitter_bad_records(const struct sonde_ftw_splitter *s, const char **first);
/* PC samples seen outside any iteration (between an end and the next begin). */
uint64_t sonde_ftw_splitter_stray(const struct sonde_ftw_splitter *s);

#ifdef __cplusplus
}
#endif
#endif
