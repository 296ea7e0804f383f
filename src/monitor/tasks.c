/* Task run intervals from a Tonbandgerät trace (monitor.h), for energy per
 * task: the trace is decoded and converted (src/tband, FreeRTOS mode) into a
 * sink that keeps only the "Running task" slices of each core: one interval
 * per stretch a task ran, labelled by task name, in target cycles at
 * clock_hz (timestamps are ns). */
#include "monitor_internal.h"

#include <stdlib.h>
#include <string.h>

#include "sonde/tband.h"

#define MAX_RUN_TRACKS 16

struct tctx {
  struct sonde_mon_tasks *out;
  size_t cap;
  uint64_t run_uuid[MAX_RUN_TRACKS];
  unsigned nrun;
  int open[MAX_RUN_TRACKS];    /* interval index open on that track, -1 */
  uint64_t clock_hz;
  int err;
};

static uint64_t to_cycles(const struct tctx *t, uint64_t ns)
{
  return (uint64_t)((long double)ns * (long double)t->clock_hz / 1e9L + 0.5L);
}

static int run_index(const struct tctx *t, uint64_t uuid)
{
  for (unsigned i = 0; i < t->nrun; i++)
    if (t->run_uuid[i] == uuid)
      return (int)i;
  return -1;
}

static int s_track(void *ctx, uint64_t uuid, uint64_t parent, enum sonde_tband_track_kind kind,
                   const char *name, int64_t id)
{
  struct tctx *t = ctx;
  (void)parent;
  (void)id;
  if (kind == SONDE_TBAND_TRACK_SLICES && !strcmp(name, "Running task") &&
      t->nrun < MAX_RUN_TRACKS) {
    t->open[t->nrun] = -1;
    t->run_uuid[t->nrun++] = uuid;
  }
  return 0;
}

static uint32_t label_of(struct tctx *t, const char *name)
{
  struct sonde_mon_tasks *o = t->out;
  for (size_t i = 0; i < o->nnames; i++)
    if (!strcmp(o->names[i], name))
      return (uint32_t)i;
  char **p = realloc(o->names, (o->nnames + 1) * sizeof *p);
  char *s = p ? strdup(name) : NULL;
  if (!s) {
    if (p)
      o->names = p;
    t->err = SONDE_E_NOMEM;
    return 0;
  }
  o->names = p;
  o->names[o->nnames] = s;
  return (uint32_t)o->nnames++;
}

static int s_begin(void *ctx, uint64_t uuid, uint64_t ts_ns, const char *name,
                   const struct sonde_tband_arg *args, unsigned nargs)
{
  struct tctx *t = ctx;
  (void)args;
  (void)nargs;
  int k = run_index(t, uuid);
  if (k < 0)
    return 0;
  struct sonde_mon_tasks *o = t->out;
  if (mon_grow((void **)&o->iv, &t->cap, o->n, sizeof *o->iv) < 0)
    return t->err = SONDE_E_NOMEM;
  uint32_t label = label_of(t, name);
  if (t->err)
    return t->err;
  o->iv[o->n].start = o->iv[o->n].end = to_cycles(t, ts_ns);
  o->iv[o->n].label = label;
  t->open[k] = (int)o->n++;
  return 0;
}

static int s_end(void *ctx, uint64_t uuid, uint64_t ts_ns)
{
  struct tctx *t = ctx;
  int k = run_index(t, uuid);
  if (k >= 0 && t->open[k] >= 0) {
    t->out->iv[t->open[k]].end = to_cycles(t, ts_ns);
    t->open[k] = -1;
  }
  return 0;
}

static int s_instant(void *ctx, uint64_t uuid, uint64_t ts_ns, const char *name,
                     const struct sonde_tband_arg *args, unsigned nargs)
{
  (void)ctx, (void)uuid, (void)ts_ns, (void)name, (void)args, (void)nargs;
  return 0;
}

static int s_counter(void *ctx, uint64_t uuid, uint64_t ts_ns, int64_t value)
{
  (void)ctx, (void)uuid, (void)ts_ns, (void)value;
  return 0;
}

int sonde_mon_tasks_from_tband(const char *path, uint64_t clock_hz, struct sonde_mon_tasks *out,
                               struct sonde_diag *diag)
{
  memset(out, 0, sizeof *out);
  if (!clock_hz)
    return sonde_diag_set(diag, SONDE_E_ARG, "%s: task times need a clock frequency", path);
  struct sonde_tband_conv *conv = sonde_tband_conv_new(SONDE_TBAND_FREERTOS, 1);
  if (!conv)
    return SONDE_E_NOMEM;
  struct sonde_tband_stats st;
  int rc = sonde_tband_decode_file(path, SONDE_TBAND_AUTO, -1, sonde_tband_conv_add_cb, conv, &st,
                                   diag);
  if (rc < 0) {
    sonde_tband_conv_free(conv);
    return rc;
  }
  struct tctx t;
  memset(&t, 0, sizeof t);
  t.out = out;
  t.clock_hz = clock_hz;
  struct sonde_tband_sink sink = {&t, s_track, s_begin, s_end, s_instant, s_counter};
  struct sonde_tband_conv_stats cs;
  rc = sonde_tband_conv_run(conv, &sink, &cs);
  if (rc < 0 && diag)
    sonde_diag_set(diag, rc, "%s: %s", path, sonde_tband_conv_error(conv));
  sonde_tband_conv_free(conv);
  if (rc == 0 && t.err)
    rc = t.err;
  if (rc < 0) {
    sonde_mon_tasks_free(out);
    return rc;
  }
  out->frames = st.frames;
  out->errors = st.errors;
  out->switches = cs.task_switches;
  return 0;
}

void sonde_mon_tasks_free(struct sonde_mon_tasks *t)
{
  if (!t)
    return;
  for (size_t i = 0; i < t->nnames; i++)
    free(t->names[i]);
  free(t->names);
  free(t->iv);
  memset(t, 0, sizeof *t);
}

size_t sonde_mon_intervals_from_states(const struct sonde_mon_event *ev, size_t n, uint32_t trigger,
                                       uint64_t end_cycle, struct sonde_mon_interval *out,
                                       uint32_t *values, size_t *nvalues, size_t cap_values)
{
  size_t k = 0;
  *nvalues = 0;
  for (size_t i = 0; i < n; i++) {
    if (ev[i].trigger != trigger)
      continue;
    size_t v = 0;
    while (v < *nvalues && values[v] != ev[i].value)
      v++;
    if (v == *nvalues) {
      if (*nvalues == cap_values)
        continue; /* too many distinct values: not counted */
      values[(*nvalues)++] = ev[i].value;
    }
    if (k)
      out[k - 1].end = ev[i].cycle;
    out[k].start = ev[i].cycle;
    out[k].end = end_cycle > ev[i].cycle ? end_cycle : ev[i].cycle;
    out[k].label = (uint32_t)v;
    k++;
  }
  return k;
}
