/* Timeline writer front end: track table, checks (defined before use,
 * balanced slices), dispatch to the Perfetto or Chrome JSON back end. */
#include "export_internal.h"

#include <stdlib.h>
#include <string.h>

struct sonde_export *sonde_export_new(enum sonde_export_format fmt, sonde_export_write_fn write,
                                      void *ctx)
{
  if (!write || (fmt != SONDE_EXPORT_PERFETTO && fmt != SONDE_EXPORT_CHROME_JSON))
    return NULL;
  struct sonde_export *x = calloc(1, sizeof *x);
  if (!x)
    return NULL;
  x->fmt = fmt;
  x->write = write;
  x->ctx = ctx;
  x->next_pid = 1;
  x->next_tid = 1;
  return x;
}

void sonde_export_free(struct sonde_export *x)
{
  if (!x)
    return;
  for (size_t i = 0; i < x->cap; i++)
    free(x->tracks[i].name);
  free(x->tracks);
  free(x->pb.buf);
  free(x);
}

const char *sonde_export_error(const struct sonde_export *x) { return x ? x->diag.msg : ""; }
uint64_t sonde_export_count(const struct sonde_export *x) { return x ? x->count : 0; }

static size_t slot_of(uint64_t uuid, size_t cap)
{
  uint64_t h = uuid * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 17) & (cap - 1);
}

struct xtrack *export_track_find(struct sonde_export *x, uint64_t uuid)
{
  if (!x->cap || !uuid)
    return NULL;
  for (size_t i = slot_of(uuid, x->cap);; i = (i + 1) & (x->cap - 1)) {
    if (x->tracks[i].uuid == uuid)
      return &x->tracks[i];
    if (!x->tracks[i].uuid)
      return NULL;
  }
}

static int grow(struct sonde_export *x)
{
  size_t nc = x->cap ? x->cap * 2 : 64;
  struct xtrack *nt = calloc(nc, sizeof *nt);
  if (!nt)
    return -1;
  for (size_t i = 0; i < x->cap; i++)
    if (x->tracks[i].uuid) {
      size_t j = slot_of(x->tracks[i].uuid, nc);
      while (nt[j].uuid)
        j = (j + 1) & (nc - 1);
      nt[j] = x->tracks[i];
    }
  free(x->tracks);
  x->tracks = nt;
  x->cap = nc;
  return 0;
}

int sonde_export_track(struct sonde_export *x, uint64_t uuid, uint64_t parent_uuid,
                       enum sonde_export_track_kind kind, const char *name, int64_t id)
{
  if (!uuid)
    return sonde_diag_set(&x->diag, SONDE_E_ARG, "track uuid 0 is reserved");
  if (export_track_find(x, uuid))
    return sonde_diag_set(&x->diag, SONDE_E_STATE, "track %llu defined twice",
                          (unsigned long long)uuid);
  /* grow first: it moves the table, and parent points into it */
  if ((x->ntracks + 1) * 2 > x->cap && grow(x))
    return sonde_diag_set(&x->diag, SONDE_E_NOMEM, "out of memory");
  struct xtrack *parent = NULL;
  if (parent_uuid) {
    parent = export_track_find(x, parent_uuid);
    if (!parent)
      return sonde_diag_set(&x->diag, SONDE_E_STATE,
                            "track '%s': parent %llu is not defined yet", name ? name : "",
                            (unsigned long long)parent_uuid);
  }
  if ((kind == SONDE_EXPORT_THREAD) && (!parent || parent->kind != SONDE_EXPORT_PROCESS))
    return sonde_diag_set(&x->diag, SONDE_E_ARG, "thread track '%s' needs a process parent",
                          name ? name : "");
  struct xtrack t;
  memset(&t, 0, sizeof t);
  t.uuid = uuid;
  t.kind = kind;
  t.name = strdup(name ? name : "");
  if (!t.name)
    return sonde_diag_set(&x->diag, SONDE_E_NOMEM, "out of memory");
  switch (kind) {
  case SONDE_EXPORT_PROCESS:
    t.pid = id > 0 ? id : x->next_pid;
    if (t.pid >= x->next_pid)
      x->next_pid = t.pid + 1;
    t.tid = 0;
    break;
  case SONDE_EXPORT_THREAD:
    t.pid = parent->pid;
    t.tid = id > 0 ? id : x->next_tid++;
    break;
  default:
    /* Chrome JSON needs a pid/tid for every track: a synthetic thread of the
     * nearest process (Perfetto uses the uuid and parent instead). */
    t.pid = parent ? parent->pid : 0;
    t.tid = 1000000 + (int64_t)x->ntracks;
    break;
  }
  size_t j = slot_of(uuid, x->cap);
  while (x->tracks[j].uuid)
    j = (j + 1) & (x->cap - 1);
  x->tracks[j] = t;
  x->ntracks++;
  struct xtrack *pp = parent_uuid ? export_track_find(x, parent_uuid) : NULL;
  return x->fmt == SONDE_EXPORT_PERFETTO ? perfetto_track(x, &x->tracks[j], pp)
                                         : json_track(x, &x->tracks[j], pp);
}

static struct xtrack *use(struct sonde_export *x, uint64_t uuid, const char *what)
{
  struct xtrack *t = export_track_find(x, uuid);
  if (!t)
    sonde_diag_set(&x->diag, SONDE_E_STATE, "%s on track %llu, which is not defined", what,
                   (unsigned long long)uuid);
  return t;
}

static int emit(struct sonde_export *x, struct xtrack *t, int type, uint64_t ts, const char *name,
                const struct sonde_export_arg *args, unsigned nargs, int64_t value)
{
  return x->fmt == SONDE_EXPORT_PERFETTO ? perfetto_event(x, t, type, ts, name, args, nargs, value)
                                         : json_event(x, t, type, ts, name, args, nargs, value);
}

int sonde_export_slice_begin(struct sonde_export *x, uint64_t uuid, uint64_t ts_ns,
                             const char *name, const struct sonde_export_arg *args, unsigned nargs)
{
  struct xtrack *t = use(x, uuid, "slice begin");
  if (!t)
    return SONDE_E_STATE;
  if (t->kind == SONDE_EXPORT_COUNTER || t->kind == SONDE_EXPORT_PROCESS)
    return sonde_diag_set(&x->diag, SONDE_E_ARG, "slice on track '%s', which cannot hold slices",
                          t->name);
  t->open++;
  return emit(x, t, EV_BEGIN, ts_ns, name, args, nargs, 0);
}

int sonde_export_slice_end(struct sonde_export *x, uint64_t uuid, uint64_t ts_ns)
{
  struct xtrack *t = use(x, uuid, "slice end");
  if (!t)
    return SONDE_E_STATE;
  if (!t->open)
    return sonde_diag_set(&x->diag, SONDE_E_STATE, "slice end on track '%s' without a begin",
                          t->name);
  t->open--;
  return emit(x, t, EV_END, ts_ns, NULL, NULL, 0, 0);
}

int sonde_export_instant(struct sonde_export *x, uint64_t uuid, uint64_t ts_ns, const char *name,
                         const struct sonde_export_arg *args, unsigned nargs)
{
  struct xtrack *t = use(x, uuid, "instant");
  if (!t)
    return SONDE_E_STATE;
  if (t->kind == SONDE_EXPORT_COUNTER || t->kind == SONDE_EXPORT_PROCESS)
    return sonde_diag_set(&x->diag, SONDE_E_ARG,
                          "instant on track '%s', which cannot hold instants", t->name);
  return emit(x, t, EV_INSTANT, ts_ns, name, args, nargs, 0);
}

int sonde_export_counter(struct sonde_export *x, uint64_t uuid, uint64_t ts_ns, int64_t value)
{
  struct xtrack *t = use(x, uuid, "counter value");
  if (!t)
    return SONDE_E_STATE;
  if (t->kind != SONDE_EXPORT_COUNTER)
    return sonde_diag_set(&x->diag, SONDE_E_ARG, "counter value on track '%s', not a counter",
                          t->name);
  return emit(x, t, EV_COUNTER, ts_ns, NULL, NULL, 0, value);
}

int sonde_export_finish(struct sonde_export *x)
{
  if (x->finished)
    return 0;
  x->finished = true;
  for (size_t i = 0; i < x->cap; i++)
    if (x->tracks[i].uuid && x->tracks[i].open)
      return sonde_diag_set(&x->diag, SONDE_E_STATE, "%u slice(s) left open on track '%s'",
                            x->tracks[i].open, x->tracks[i].name);
  return x->fmt == SONDE_EXPORT_CHROME_JSON ? json_finish(x) : 0;
}
