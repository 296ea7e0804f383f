/* Perfetto back end: one TracePacket per track or event, each written as
 * field 1 of perfetto.protos.Trace (so the file is a valid Trace no matter
 * where it is cut). Field numbers: perfetto protos trace_packet.proto,
 * track_descriptor.proto, track_event.proto, debug_annotation.proto; the
 * subset used is tests/export/perfetto_subset.proto. */
#include "export_internal.h"

/* TracePacket */
#define TP_TIMESTAMP 8
#define TP_SEQ_ID 10
#define TP_TRACK_EVENT 11
#define TP_SEQ_FLAGS 13
#define TP_TRACK_DESCRIPTOR 60
/* TrackDescriptor */
#define TD_UUID 1
#define TD_NAME 2
#define TD_PROCESS 3
#define TD_THREAD 4
#define TD_PARENT_UUID 5
#define TD_COUNTER 8
/* ProcessDescriptor / ThreadDescriptor */
#define PD_PID 1
#define PD_NAME 6
#define THD_PID 1
#define THD_TID 2
#define THD_NAME 5
/* TrackEvent */
#define TE_DEBUG_ANNOTATIONS 4
#define TE_TYPE 9
#define TE_TRACK_UUID 11
#define TE_NAME 23
#define TE_COUNTER_VALUE 30
/* DebugAnnotation */
#define DA_INT 4
#define DA_STRING 6
#define DA_NAME 10

#define SEQ_ID 1
#define SEQ_INCREMENTAL_STATE_CLEARED 1

static int flush_packet(struct sonde_export *x)
{
  struct pbuf *p = &x->pb;
  if (p->oom)
    return sonde_diag_set(&x->diag, SONDE_E_NOMEM, "out of memory encoding a packet");
  /* Trace.packet = 1, length-delimited */
  uint8_t hdr[11];
  size_t h = 0;
  hdr[h++] = (1 << 3) | 2;
  uint64_t n = p->len;
  while (n >= 0x80) {
    hdr[h++] = (uint8_t)(n | 0x80);
    n >>= 7;
  }
  hdr[h++] = (uint8_t)n;
  int rc = x->write(x->ctx, hdr, h);
  if (!rc)
    rc = x->write(x->ctx, p->buf, p->len);
  if (rc)
    return sonde_diag_set(&x->diag, rc, "write failed");
  x->count++;
  return 0;
}

static void packet_start(struct sonde_export *x)
{
  pb_reset(&x->pb);
  pb_uint(&x->pb, TP_SEQ_ID, SEQ_ID);
  if (!x->started) {
    pb_uint(&x->pb, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    x->started = true;
  }
}

int perfetto_track(struct sonde_export *x, const struct xtrack *t, const struct xtrack *parent)
{
  struct pbuf *p = &x->pb;
  packet_start(x);
  pb_begin(p, TP_TRACK_DESCRIPTOR);
  pb_uint(p, TD_UUID, t->uuid);
  switch (t->kind) {
  case SONDE_EXPORT_PROCESS:
    pb_begin(p, TD_PROCESS);
    pb_int(p, PD_PID, t->pid);
    pb_str(p, PD_NAME, t->name);
    pb_end(p);
    break;
  case SONDE_EXPORT_THREAD:
    pb_begin(p, TD_THREAD);
    pb_int(p, THD_PID, t->pid);
    pb_int(p, THD_TID, t->tid);
    pb_str(p, THD_NAME, t->name);
    pb_end(p);
    break;
  case SONDE_EXPORT_SLICES:
  case SONDE_EXPORT_COUNTER:
    if (parent)
      pb_uint(p, TD_PARENT_UUID, parent->uuid);
    pb_str(p, TD_NAME, t->name);
    if (t->kind == SONDE_EXPORT_COUNTER) {
      pb_begin(p, TD_COUNTER); /* an empty CounterDescriptor marks a counter track */
      pb_end(p);
    }
    break;
  }
  pb_end(p);
  return flush_packet(x);
}

int perfetto_event(struct sonde_export *x, const struct xtrack *t, int type, uint64_t ts_ns,
                   const char *name, const struct sonde_export_arg *args, unsigned nargs,
                   int64_t value)
{
  struct pbuf *p = &x->pb;
  packet_start(x);
  pb_uint(p, TP_TIMESTAMP, ts_ns);
  pb_begin(p, TP_TRACK_EVENT);
  pb_uint(p, TE_TYPE, (uint64_t)type);
  pb_uint(p, TE_TRACK_UUID, t->uuid);
  if (name && type != EV_END && type != EV_COUNTER)
    pb_str(p, TE_NAME, name);
  if (type == EV_COUNTER)
    pb_int(p, TE_COUNTER_VALUE, value);
  for (unsigned i = 0; i < nargs; i++) {
    pb_begin(p, TE_DEBUG_ANNOTATIONS);
    pb_str(p, DA_NAME, args[i].name);
    if (args[i].is_str)
      pb_str(p, DA_STRING, args[i].sval ? args[i].sval : "");
    else
      pb_int(p, DA_INT, args[i].ival);
    pb_end(p);
  }
  pb_end(p);
  return flush_packet(x);
}
