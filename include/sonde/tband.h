/* Sonde: Tonbandgerät trace format — host decoder and converter (src/tband).
 *
 * The format (COBS frames, one event per frame, varlen fields) is described in
 * docs/tband.md and the event index in docs/tband-events.md, both generated
 * from / checked against target/tband/tband_events.def, the same table the
 * on-target encoder uses.
 *
 * Decoding is streaming: feed any split of the input; every complete frame is
 * handed to a callback as a struct sonde_tband_evt. Corrupt frames are handed
 * over too (evt.error < 0, evt.error_msg, evt.offset) and decoding resumes at
 * the next frame delimiter. Input is told apart automatically: hex text
 * ("0a 5f 01 ...", whitespace optional) or raw binary.
 *
 * The converter (sonde_tband_conv_*) turns decoded events of one or more
 * cores into timeline operations on a struct sonde_tband_sink (tracks, slices,
 * instants, counters), which the CLI connects to the Perfetto/Chrome writers in
 * src/export. */
#ifndef SONDE_TBAND_H
#define SONDE_TBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the event index ---------------------------------------------------- */
enum sonde_tband_ftype {
  SONDE_TBAND_U8,
  SONDE_TBAND_U32,
  SONDE_TBAND_U64,
  SONDE_TBAND_S64,
  SONDE_TBAND_STR,
  SONDE_TBAND_QKIND,  /* u8 holding FrQueueKind */
  SONDE_TBAND_SBKIND, /* u8 holding FrStreamBufferKind */
};

struct sonde_tband_field_desc {
  const char *name;
  enum sonde_tband_ftype type;
};

struct sonde_tband_evt_desc {
  uint8_t id;
  const char *name;  /* documented name, e.g. "task_switched_in" */
  const char *group; /* "base" or "freertos" */
  bool is_metadata;  /* metadata events carry no timestamp */
  bool has_ts;       /* field "ts" (u64) follows the id */
  bool sonde_ext;    /* an id added by Sonde in a range the published index leaves unused */
  unsigned nfields;  /* fields after id/ts */
  struct sonde_tband_field_desc fields[3];
};

/* Description of an id, or NULL when the id is not in the index. */
const struct sonde_tband_evt_desc *sonde_tband_evt_desc(uint8_t id);
/* Look up by documented name; NULL if none. */
const struct sonde_tband_evt_desc *sonde_tband_evt_desc_by_name(const char *name);
/* Names of FrQueueKind / FrStreamBufferKind values ("FRQK_MUTEX"); NULL if out of range. */
const char *sonde_tband_queue_kind_name(unsigned kind);
const char *sonde_tband_sb_kind_name(unsigned kind);

/* ---- decoded events ------------------------------------------------------ */
struct sonde_tband_evt {
  uint64_t offset;    /* byte offset of the frame's first byte in the input (text offset for hex) */
  uint32_t frame_len; /* framed bytes (hex: decoded bytes), without the delimiter */
  uint32_t core;      /* the input's core (file@core), else the last core_id event */
  uint8_t id;
  const struct sonde_tband_evt_desc *desc; /* NULL for an unknown id or an undecodable frame */
  bool has_ts;
  uint64_t ts;        /* in target timestamp units (see ts_resolution_ns) */
  unsigned nfields;   /* fields decoded (== desc->nfields on success) */
  uint64_t val[3];    /* field values; S64 fields hold the int64_t bit pattern */
  const char *str;    /* STR field: NUL-terminated copy, valid during the callback */
  size_t str_len;
  int error;          /* 0, or SONDE_E_FORMAT / SONDE_E_TRUNCATED for a bad frame */
  const char *error_msg; /* why, when error < 0 ("bad COBS code at byte 3") */
};

enum sonde_tband_input_format { SONDE_TBAND_AUTO = 0, SONDE_TBAND_BIN, SONDE_TBAND_HEX };

struct sonde_tband_stats {
  uint64_t bytes_in;   /* input bytes consumed */
  uint64_t frames;     /* frames delivered (good and bad) */
  uint64_t errors;     /* frames delivered with error < 0 */
  uint64_t bad_chars;  /* hex input: characters that are neither hex digits nor separators */
};

typedef void (*sonde_tband_evt_cb)(void *ctx, const struct sonde_tband_evt *evt);

struct sonde_tband_dec;

/* A decoder for one input. core: the core this input belongs to (file@core),
 * or -1 to follow core_id events (default 0). name: used in messages.
 * Returns NULL when out of memory. */
struct sonde_tband_dec *sonde_tband_dec_new(enum sonde_tband_input_format fmt, int core,
                                            const char *name);
void sonde_tband_dec_free(struct sonde_tband_dec *d);
/* Decode buf[0..len), calling cb for every complete frame. Never fails on bad
 * input (that becomes events with error set); returns 0. */
int sonde_tband_dec_feed(struct sonde_tband_dec *d, const void *buf, size_t len,
                         sonde_tband_evt_cb cb, void *ctx);
/* End of input: a frame without its delimiter is delivered as truncated.
 * Returns 0. */
int sonde_tband_dec_finish(struct sonde_tband_dec *d, sonde_tband_evt_cb cb, void *ctx);
/* Input format in use (AUTO until the first bytes were seen). */
enum sonde_tband_input_format sonde_tband_dec_format(const struct sonde_tband_dec *d);
void sonde_tband_dec_stats(const struct sonde_tband_dec *d, struct sonde_tband_stats *out);
/* Decide the format from the first bytes of an input: HEX when they are only
 * hex digits and separators (whitespace, ',', "0x" prefixes), else BIN. */
enum sonde_tband_input_format sonde_tband_detect_format(const void *buf, size_t len);

/* Split "path@core" into the path and the core number (0..999999). A suffix
 * that does not start with a digit or sign ("mail@host.bin", "x@") leaves the
 * whole spec as path and *core = -1, and so does the one '@' of
 * "serial:DEVICE@BAUD" (serial:DEVICE@BAUD@CORE gives a core). Returns 0,
 * SONDE_E_ARG for a suffix meant as a core that is not one ("x@-1", "x@2b"),
 * or SONDE_E_RANGE when the path does not fit in cap. */
int sonde_tband_parse_input(const char *spec, char *path, size_t cap, int *core);

/* Decode a whole file (path, or "-" for stdin). Returns 0, or SONDE_E_IO
 * with a message in diag. */
int sonde_tband_decode_file(const char *path, enum sonde_tband_input_format fmt, int core,
                            sonde_tband_evt_cb cb, void *ctx, struct sonde_tband_stats *stats,
                            struct sonde_diag *diag);

/* COBS-decode one frame src[0..n) (without its 0x00 delimiter) into dst
 * (room for n bytes). Returns the decoded length, or SONDE_E_FORMAT when a
 * block runs past the end or src holds a zero. */
long sonde_tband_cobs_decode(const uint8_t *src, size_t n, uint8_t *dst);

/* Field value by name of a decoded event; false when the event has no such field. */
bool sonde_tband_evt_field(const struct sonde_tband_evt *e, const char *name, uint64_t *val);

/* ---- conversion to a timeline ------------------------------------------ */
enum sonde_tband_mode { SONDE_TBAND_BARE_METAL, SONDE_TBAND_FREERTOS };

enum sonde_tband_track_kind {
  SONDE_TBAND_TRACK_GROUP,   /* a top-level group (Perfetto process) */
  SONDE_TBAND_TRACK_THREAD,  /* a task (Perfetto thread of its group); id = task id */
  SONDE_TBAND_TRACK_SLICES,  /* a track of slices and instants */
  SONDE_TBAND_TRACK_COUNTER, /* a counter track */
};

struct sonde_tband_arg {
  const char *name;
  bool is_str;
  int64_t ival;
  const char *sval;
};

/* Where the converter sends its timeline. Every call returns 0 or a negative
 * SONDE_E_*, which stops the conversion. Tracks are always defined before
 * their first use and every slice that begins also ends. Times are in ns. */
struct sonde_tband_sink {
  void *ctx;
  int (*track)(void *ctx, uint64_t uuid, uint64_t parent_uuid, enum sonde_tband_track_kind kind,
               const char *name, int64_t id);
  int (*begin)(void *ctx, uint64_t uuid, uint64_t ts_ns, const char *name,
               const struct sonde_tband_arg *args, unsigned nargs);
  int (*end)(void *ctx, uint64_t uuid, uint64_t ts_ns);
  int (*instant)(void *ctx, uint64_t uuid, uint64_t ts_ns, const char *name,
                 const struct sonde_tband_arg *args, unsigned nargs);
  int (*counter)(void *ctx, uint64_t uuid, uint64_t ts_ns, int64_t value);
};

struct sonde_tband_conv_stats {
  uint64_t events;       /* events converted */
  uint64_t errors;       /* corrupt frames and decoding problems reported on the errors track */
  uint64_t dropped;      /* highest dropped-event count reported by the target */
  uint64_t task_switches;
  uint64_t ts_ns_first, ts_ns_last;
};

struct sonde_tband_conv;
/* cores: number of cores of the target (>= 1). */
struct sonde_tband_conv *sonde_tband_conv_new(enum sonde_tband_mode mode, unsigned cores);
void sonde_tband_conv_free(struct sonde_tband_conv *c);
/* Add one decoded event (any core, any order between cores; within a core in
 * stream order). Usable directly as a sonde_tband_evt_cb via
 * sonde_tband_conv_add_cb. Returns 0 or SONDE_E_NOMEM. */
int sonde_tband_conv_add(struct sonde_tband_conv *c, const struct sonde_tband_evt *e);
void sonde_tband_conv_add_cb(void *conv, const struct sonde_tband_evt *e);
/* Sort, interpret and emit everything to the sink. Returns 0 or the first
 * error of the sink / SONDE_E_NOMEM (detail in sonde_tband_conv_error). */
int sonde_tband_conv_run(struct sonde_tband_conv *c, const struct sonde_tband_sink *sink,
                         struct sonde_tband_conv_stats *stats);
const char *sonde_tband_conv_error(const struct sonde_tband_conv *c);

#ifdef __cplusplus
}
#endif
#endif
