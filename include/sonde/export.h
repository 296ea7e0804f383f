/* Sonde: timeline export (src/export) — Perfetto protobuf and Chrome JSON.
 *
 * One writer for every trace kind that ends up on a timeline: define tracks
 * (groups, threads, slice tracks, counter tracks), then emit slices, instants
 * and counter values on them. The writer streams: each call encodes and
 * writes at once through the caller's write function; nothing is buffered
 * beyond one packet.
 *
 * The writer checks the timeline as it goes: a track must be defined before
 * its first use and only once, an end needs an open slice on that track, and
 * sonde_export_finish() fails if any slice is still open. Violations return
 * SONDE_E_STATE with a message in sonde_export_error().
 *
 * Perfetto output is a perfetto.protos.Trace: TracePackets with
 * TrackDescriptor (uuid, parent_uuid, name, process, thread, counter) and
 * TrackEvent (type, track_uuid, name, counter_value, debug_annotations); the
 * field subset is tests/export/perfetto_subset.proto and docs/formats.md.
 * Chrome JSON is the legacy {"traceEvents": [...]} format (B/E/i/C/M). */
#ifndef SONDE_EXPORT_H
#define SONDE_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sonde_export_format {
  SONDE_EXPORT_PERFETTO,    /* binary protobuf, .perfetto-trace */
  SONDE_EXPORT_CHROME_JSON, /* JSON trace event format */
};

enum sonde_export_track_kind {
  SONDE_EXPORT_PROCESS, /* top-level group; id = pid (0: assigned) */
  SONDE_EXPORT_THREAD,  /* a thread of its parent process; id = tid (0: assigned) */
  SONDE_EXPORT_SLICES,  /* named track of slices and instants, under its parent */
  SONDE_EXPORT_COUNTER, /* counter track under its parent */
};

struct sonde_export_arg {
  const char *name;
  bool is_str;
  int64_t ival;
  const char *sval;
};

/* Receives the encoded bytes; returns 0 or a negative SONDE_E_* (e.g. SONDE_E_IO). */
typedef int (*sonde_export_write_fn)(void *ctx, const void *buf, size_t len);

struct sonde_export;

struct sonde_export *sonde_export_new(enum sonde_export_format fmt, sonde_export_write_fn write,
                                      void *ctx);
/* Frees the writer (does not finish it). NULL is a no-op. */
void sonde_export_free(struct sonde_export *x);
/* Define a track. uuid != 0 and unique; parent_uuid 0 or a defined track. */
int sonde_export_track(struct sonde_export *x, uint64_t uuid, uint64_t parent_uuid,
                       enum sonde_export_track_kind kind, const char *name, int64_t id);
int sonde_export_slice_begin(struct sonde_export *x, uint64_t uuid, uint64_t ts_ns,
                             const char *name, const struct sonde_export_arg *args, unsigned nargs);
int sonde_export_slice_end(struct sonde_export *x, uint64_t uuid, uint64_t ts_ns);
int sonde_export_instant(struct sonde_export *x, uint64_t uuid, uint64_t ts_ns, const char *name,
                         const struct sonde_export_arg *args, unsigned nargs);
int sonde_export_counter(struct sonde_export *x, uint64_t uuid, uint64_t ts_ns, int64_t value);
/* Write the trailer (JSON) and check that every slice was closed. */
int sonde_export_finish(struct sonde_export *x);
/* Message for the last error ("" if none). */
const char *sonde_export_error(const struct sonde_export *x);
/* Packets (Perfetto) or events (JSON) written so far. */
uint64_t sonde_export_count(const struct sonde_export *x);

#ifdef __cplusplus
}
#endif
#endif
