/* Internal state of the timeline writer (src/export). */
#ifndef SONDE_EXPORT_INTERNAL_H
#define SONDE_EXPORT_INTERNAL_H

#include "sonde/export.h"

struct xtrack {
  uint64_t uuid;
  enum sonde_export_track_kind kind;
  int64_t pid, tid;   /* Perfetto process/thread ids, Chrome pid/tid */
  uint32_t open;      /* slices open on this track */
  char *name;
};

struct pbuf {
  uint8_t *buf;
  size_t len, cap;
  size_t stack[8];
  int depth;
  int oom;
};

struct sonde_export {
  enum sonde_export_format fmt;
  sonde_export_write_fn write;
  void *ctx;
  struct xtrack *tracks; /* open addressing on uuid; 0 = empty slot */
  size_t ntracks, cap;
  int64_t next_pid, next_tid;
  uint64_t count;
  bool started, finished;
  int err;
  struct pbuf pb;
  struct sonde_diag diag;
};

struct xtrack *export_track_find(struct sonde_export *x, uint64_t uuid);

/* protobuf primitives (pb.c) */
void pb_reset(struct pbuf *p);
void pb_varint(struct pbuf *p, uint64_t v);
void pb_uint(struct pbuf *p, unsigned field, uint64_t v);
void pb_int(struct pbuf *p, unsigned field, int64_t v);
void pb_str(struct pbuf *p, unsigned field, const char *s);
void pb_begin(struct pbuf *p, unsigned field);
void pb_end(struct pbuf *p);
void pb_bytes(struct pbuf *p, const void *b, size_t n); /* raw bytes (JSON text) */

/* format back ends */
int perfetto_track(struct sonde_export *x, const struct xtrack *t, const struct xtrack *parent);
int perfetto_event(struct sonde_export *x, const struct xtrack *t, int type, uint64_t ts_ns,
                   const char *name, const struct sonde_export_arg *args, unsigned nargs,
                   int64_t value);
int json_track(struct sonde_export *x, const struct xtrack *t, const struct xtrack *parent);
int json_event(struct sonde_export *x, const struct xtrack *t, int type, uint64_t ts_ns,
               const char *name, const struct sonde_export_arg *args, unsigned nargs,
               int64_t value);
int json_finish(struct sonde_export *x);

/* TrackEvent.Type values */
enum { EV_BEGIN = 1, EV_END = 2, EV_INSTANT = 3, EV_COUNTER = 4 };

#endif
