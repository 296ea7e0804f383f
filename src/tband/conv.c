/* Conversion of decoded Tonbandgerät events into a timeline (docs/tband.md,
 * "Conversion"). Two passes over the events of all inputs:
 *   1. metadata (names, kinds, idle/timer tasks, ts_resolution_ns) into
 *      object tables — metadata may arrive anywhere in a stream;
 *   2. timestamped events, merged across cores by (time, core, stream order),
 *      interpreted as a state machine per core and per task:
 *        task state: Ready -> Running (task_switched_in) -> pending state
 *        (Blocked after a delay/block event, Suspended, else Ready when
 *        preempted) at the next switch on that core.
 * Tracks are created lazily right before their first use, and every slice
 * still open at the end is closed at the last timestamp, so the sink sees a
 * well-formed timeline. pm_boot (post-mortem) resets the target clock; later
 * timestamps of that core are shifted to continue after the earlier ones. */
#include "sonde/tband.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cevt {
  uint64_t ts;     /* adjusted target timestamp */
  uint64_t seq;    /* insertion order */
  uint64_t offset;
  uint64_t val[3];
  char *str;       /* string field or error message (owned) */
  uint32_t core;
  uint8_t id;
  bool has_ts, error;
};

/* object kinds (key = kind << 40 | core << 32 | id) */
enum okind { O_TASK = 1, O_QUEUE, O_EVTM, O_VALM, O_ISR, O_SB, O_EG, O_TIMER, O_TEVTM, O_TVALM, O_CORE };

struct obj {
  uint64_t key;
  char *name;
  uint32_t id;
  uint32_t core;
  int kind_detail;     /* queue kind, sb kind, -1 unknown */
  int idle_core;       /* task_is_idle_task: core, else -1 */
  bool timer_task;
  uint32_t owner_task; /* task-local markers */
  uint64_t uuid;       /* main track (thread / slices / counter) */
  uint64_t uuid_state, uuid_prio, uuid_marks, uuid_hwm, uuid_isr, uuid_drop;
  unsigned open;       /* slices open on uuid (markers, ISRs) */
  const char *state;   /* task: current state slice name, NULL if none */
  const char *pending; /* task: state to take at switch-out */
  int running_on;      /* task: core it runs on, -1 */
  uint32_t running;    /* core: running task id, 0 none */
};

struct sonde_tband_conv {
  enum sonde_tband_mode mode;
  unsigned cores;
  struct cevt *ev;
  size_t nev, cap;
  struct obj **objs; /* open addressing over stable, separately allocated objects */
  size_t nobj, ocap;
  uint64_t ns_per_ts;
  uint64_t *last_raw, *offset, *last_adj; /* per core, for pm_boot */
  const struct sonde_tband_sink *sink;
  uint64_t next_uuid;
  uint64_t g_cores, g_tasks, g_markers, g_objects, g_trace, t_errors;
  struct sonde_tband_conv_stats st;
  char err[256];
  int rc;
};

struct sonde_tband_conv *sonde_tband_conv_new(enum sonde_tband_mode mode, unsigned cores)
{
  if (cores < 1 || cores > 1024)
    return NULL;
  struct sonde_tband_conv *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->mode = mode;
  c->cores = cores;
  c->ns_per_ts = 1;
  c->last_raw = calloc(cores, sizeof *c->last_raw);
  c->offset = calloc(cores, sizeof *c->offset);
  c->last_adj = calloc(cores, sizeof *c->last_adj);
  if (!c->last_raw || !c->offset || !c->last_adj) {
    sonde_tband_conv_free(c);
    return NULL;
  }
  return c;
}

void sonde_tband_conv_free(struct sonde_tband_conv *c)
{
  if (!c)
    return;
  for (size_t i = 0; i < c->nev; i++)
    free(c->ev[i].str);
  for (size_t i = 0; i < c->ocap; i++)
    if (c->objs[i]) {
      free(c->objs[i]->name);
      free(c->objs[i]);
    }
  free(c->ev);
  free(c->objs);
  free(c->last_raw);
  free(c->offset);
  free(c->last_adj);
  free(c);
}

const char *sonde_tband_conv_error(const struct sonde_tband_conv *c) { return c->err; }

int sonde_tband_conv_add(struct sonde_tband_conv *c, const struct sonde_tband_evt *e)
{
  if (c->nev == c->cap) {
    size_t nc = c->cap ? c->cap * 2 : 1024;
    struct cevt *n = realloc(c->ev, nc * sizeof *n);
    if (!n)
      return c->rc = SONDE_E_NOMEM;
    c->ev = n;
    c->cap = nc;
  }
  struct cevt *v = &c->ev[c->nev];
  memset(v, 0, sizeof *v);
  v->seq = c->nev;
  v->offset = e->offset;
  v->core = e->core < c->cores ? e->core : 0;
  v->id = e->id;
  v->error = e->error != 0 || !e->desc;
  if (v->error) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", e->error_msg ? e->error_msg : "bad frame");
    v->str = strdup(buf);
  } else {
    v->has_ts = e->has_ts;
    memcpy(v->val, e->val, sizeof v->val);
    if (e->str)
      v->str = strdup(e->str);
  }
  if (e->core >= c->cores && !v->error) {
    /* an event of a core beyond --cores: keep it on core 0, say so */
    char buf[128];
    snprintf(buf, sizeof buf, "event of core %u, but the trace has %u core(s)", e->core, c->cores);
    free(v->str);
    v->str = strdup(buf);
    v->error = true;
  }
  uint32_t k = v->core;
  if (v->has_ts) {
    if (v->id == 0x0D && e->ts < c->last_raw[k]) /* pm_boot: the clock restarted */
      c->offset[k] = c->last_adj[k] + 1 - e->ts;
    c->last_raw[k] = e->ts;
    v->ts = e->ts + c->offset[k];
    c->last_adj[k] = v->ts;
  } else {
    v->ts = c->last_adj[k]; /* errors/metadata: where they were seen */
  }
  c->nev++;
  return 0;
}

void sonde_tband_conv_add_cb(void *conv, const struct sonde_tband_evt *e)
{
  sonde_tband_conv_add(conv, e);
}

/* ---- object table ---- */
static size_t oslot(uint64_t key, size_t cap) { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1); }

static struct obj *ofind(struct sonde_tband_conv *c, int kind, uint32_t core, uint32_t id)
{
  uint64_t key = (uint64_t)kind << 40 | (uint64_t)core << 32 | id;
  if (c->ocap) {
    for (size_t i = oslot(key, c->ocap);; i = (i + 1) & (c->ocap - 1)) {
      if (!c->objs[i])
        break;
      if (c->objs[i]->key == key)
        return c->objs[i];
    }
  }
  if ((c->nobj + 1) * 2 > c->ocap) {
    size_t nc = c->ocap ? c->ocap * 2 : 64;
    struct obj **no = calloc(nc, sizeof *no);
    if (!no) {
      c->rc = SONDE_E_NOMEM;
      return NULL;
    }
    for (size_t i = 0; i < c->ocap; i++)
      if (c->objs[i]) {
        size_t j = oslot(c->objs[i]->key, nc);
        while (no[j])
          j = (j + 1) & (nc - 1);
        no[j] = c->objs[i];
      }
    free(c->objs);
    c->objs = no;
    c->ocap = nc;
  }
  struct obj *o = calloc(1, sizeof *o);
  if (!o) {
    c->rc = SONDE_E_NOMEM;
    return NULL;
  }
  size_t j = oslot(key, c->ocap);
  while (c->objs[j])
    j = (j + 1) & (c->ocap - 1);
  c->objs[j] = o;
  o->key = key;
  o->id = id;
  o->core = core;
  o->kind_detail = -1;
  o->idle_core = -1;
  o->running_on = -1;
  c->nobj++;
  return o;
}

static void oname(struct obj *o, const char *name)
{
  if (!o || !name)
    return;
  free(o->name);
  o->name = strdup(name);
}

/* ---- sink helpers (stop at the first error) ---- */
static uint64_t ns(struct sonde_tband_conv *c, uint64_t ts) { return ts * c->ns_per_ts; }

static uint64_t track(struct sonde_tband_conv *c, uint64_t parent, enum sonde_tband_track_kind k,
                      const char *name, int64_t id)
{
  uint64_t u = ++c->next_uuid;
  if (!c->rc)
    c->rc = c->sink->track(c->sink->ctx, u, parent, k, name, id);
  return u;
}

static void begin(struct sonde_tband_conv *c, uint64_t u, uint64_t ts, const char *name,
                  const struct sonde_tband_arg *a, unsigned na)
{
  if (!c->rc)
    c->rc = c->sink->begin(c->sink->ctx, u, ns(c, ts), name, a, na);
}
static void end(struct sonde_tband_conv *c, uint64_t u, uint64_t ts)
{
  if (!c->rc)
    c->rc = c->sink->end(c->sink->ctx, u, ns(c, ts));
}
static void instant(struct sonde_tband_conv *c, uint64_t u, uint64_t ts, const char *name,
                    const struct sonde_tband_arg *a, unsigned na)
{
  if (!c->rc)
    c->rc = c->sink->instant(c->sink->ctx, u, ns(c, ts), name, a, na);
}
static void counter(struct sonde_tband_conv *c, uint64_t u, uint64_t ts, int64_t v)
{
  if (!c->rc)
    c->rc = c->sink->counter(c->sink->ctx, u, ns(c, ts), v);
}

static uint64_t group(struct sonde_tband_conv *c, uint64_t *g, const char *name, int64_t pid)
{
  if (!*g)
    *g = track(c, 0, SONDE_TBAND_TRACK_GROUP, name, pid);
  return *g;
}

static void error_at(struct sonde_tband_conv *c, uint64_t ts, uint32_t core, uint64_t offset,
                     const char *msg)
{
  if (!c->t_errors)
    c->t_errors = track(c, group(c, &c->g_trace, "Trace", 1), SONDE_TBAND_TRACK_SLICES,
                        "Errors", 0);
  struct sonde_tband_arg a[2] = {{"core", false, core, NULL}, {"offset", false, (int64_t)offset, NULL}};
  instant(c, c->t_errors, ts, msg, a, 2);
  c->st.errors++;
}

static const char *fallback_name(char *buf, size_t cap, const char *what, uint32_t id)
{
  snprintf(buf, cap, "%s %u", what, id);
  return buf;
}

/* ---- cores, tasks ---- */
static struct obj *core_obj(struct sonde_tband_conv *c, uint32_t core)
{
  struct obj *o = ofind(c, O_CORE, core, 0);
  if (o && !o->uuid) {
    char n[64];
    snprintf(n, sizeof n, "Core %u", core);
    o->uuid = track(c, 0, SONDE_TBAND_TRACK_GROUP, n, 1000 + core);
  }
  return o;
}

static uint64_t core_running_track(struct sonde_tband_conv *c, struct obj *co)
{
  if (!co->uuid_state)
    co->uuid_state = track(c, co->uuid, SONDE_TBAND_TRACK_SLICES, "Running task", 0);
  return co->uuid_state;
}

static const char *task_name(struct obj *t, char *buf, size_t cap)
{
  return t->name ? t->name : fallback_name(buf, cap, "task", t->id);
}

static struct obj *task_obj(struct sonde_tband_conv *c, uint32_t id)
{
  struct obj *t = ofind(c, O_TASK, 0, id);
  if (t && !t->uuid) {
    char b[64];
    t->uuid = track(c, group(c, &c->g_tasks, "Tasks", 2), SONDE_TBAND_TRACK_THREAD,
                    task_name(t, b, sizeof b), id);
  }
  return t;
}

static void task_state(struct sonde_tband_conv *c, struct obj *t, uint64_t ts, const char *st)
{
  if (t->state && st && !strcmp(t->state, st))
    return;
  if (!t->uuid_state) {
    char b[96], n[64];
    snprintf(b, sizeof b, "%s state", task_name(t, n, sizeof n));
    t->uuid_state = track(c, t->uuid, SONDE_TBAND_TRACK_SLICES, b, 0);
  }
  if (t->state)
    end(c, t->uuid_state, ts);
  t->state = st;
  if (st)
    begin(c, t->uuid_state, ts, st, NULL, 0);
}

static void task_counter(struct sonde_tband_conv *c, struct obj *t, uint64_t *u, const char *what,
                         uint64_t ts, int64_t v)
{
  if (!*u) {
    char b[96], n[64];
    snprintf(b, sizeof b, "%s %s", task_name(t, n, sizeof n), what);
    *u = track(c, t->uuid, SONDE_TBAND_TRACK_COUNTER, b, 0);
  }
  counter(c, *u, ts, v);
}

static uint64_t task_marks(struct sonde_tband_conv *c, struct obj *t)
{
  if (!t->uuid_marks) {
    char b[96], n[64];
    snprintf(b, sizeof b, "%s events", task_name(t, n, sizeof n));
    t->uuid_marks = track(c, t->uuid, SONDE_TBAND_TRACK_SLICES, b, 0);
  }
  return t->uuid_marks;
}

static struct obj *current_task(struct sonde_tband_conv *c, uint32_t core)
{
  struct obj *co = ofind(c, O_CORE, core, 0);
  if (!co || !co->running)
    return NULL;
  return task_obj(c, co->running);
}

static void switch_in(struct sonde_tband_conv *c, const struct cevt *v)
{
  struct obj *co = core_obj(c, v->core);
  if (!co)
    return;
  uint64_t rt = core_running_track(c, co);
  uint32_t id = (uint32_t)v->val[0];
  char b[64];
  if (co->running) {
    struct obj *old = task_obj(c, co->running);
    if (old) {
      end(c, rt, v->ts);
      if (old->running_on == (int)v->core) {
        end(c, old->uuid, v->ts);
        old->running_on = -1;
      }
      task_state(c, old, v->ts, old->pending ? old->pending : "Ready");
      old->pending = NULL;
    }
    co->running = 0;
  }
  struct obj *t = task_obj(c, id);
  if (!t)
    return;
  if (t->running_on >= 0 && t->running_on != (int)v->core) {
    /* still marked running elsewhere (lost switch event): close it there */
    struct obj *oc = ofind(c, O_CORE, (uint32_t)t->running_on, 0);
    if (oc && oc->running == id) {
      end(c, core_running_track(c, oc), v->ts);
      oc->running = 0;
    }
    end(c, t->uuid, v->ts);
    t->running_on = -1;
  }
  struct sonde_tband_arg a = {"core", false, v->core, NULL};
  begin(c, rt, v->ts, task_name(t, b, sizeof b), NULL, 0);
  begin(c, t->uuid, v->ts, "Running", &a, 1);
  t->running_on = (int)v->core;
  co->running = id;
  task_state(c, t, v->ts, "Running");
  c->st.task_switches++;
}

static void set_state(struct sonde_tband_conv *c, uint32_t id, uint64_t ts, const char *st)
{
  struct obj *t = task_obj(c, id);
  if (!t)
    return;
  if (t->running_on >= 0)
    t->pending = st; /* takes effect when it is switched out */
  else
    task_state(c, t, ts, st);
}

static void curtask_blocks(struct sonde_tband_conv *c, const struct cevt *v, const char *why)
{
  struct obj *t = current_task(c, v->core);
  if (!t)
    return;
  t->pending = "Blocked";
  if (why)
    instant(c, task_marks(c, t), v->ts, why, NULL, 0);
}

/* ---- markers, ISRs, objects ---- */
static struct obj *marker_track(struct sonde_tband_conv *c, int kind, uint32_t id, uint32_t core,
                                enum sonde_tband_track_kind tk)
{
  struct obj *m = ofind(c, kind, kind == O_ISR ? core : 0, id);
  if (m && !m->uuid) {
    char b[96];
    const char *what = kind == O_EVTM || kind == O_TEVTM ? "marker" : kind == O_ISR ? "ISR" : "value";
    const char *n = m->name ? m->name : fallback_name(b, sizeof b, what, id);
    uint64_t parent;
    if (kind == O_ISR) {
      struct obj *co = core_obj(c, core);
      if (!co)
        return NULL;
      parent = co->uuid;
    } else if ((kind == O_TEVTM || kind == O_TVALM) && m->owner_task) {
      struct obj *t = task_obj(c, m->owner_task);
      parent = t ? t->uuid : group(c, &c->g_markers, "Markers", 3);
    } else {
      parent = group(c, &c->g_markers, "Markers", 3);
    }
    char full[128];
    if (kind == O_ISR) {
      snprintf(full, sizeof full, "ISR %s", n);
      n = full;
    }
    m->uuid = track(c, parent, tk, n, 0);
  }
  return m;
}

static struct obj *obj_counter(struct sonde_tband_conv *c, int kind, uint32_t id)
{
  struct obj *o = ofind(c, kind, 0, id);
  if (o && !o->uuid) {
    char b[128], nb[64];
    static const char *const qk[] = {"queue", "counting semaphore", "binary semaphore", "mutex",
                                     "recursive mutex", "queue set"};
    const char *what = kind == O_QUEUE ? (o->kind_detail >= 0 && o->kind_detail < 6 ? qk[o->kind_detail] : "queue")
                       : kind == O_SB  ? (o->kind_detail == 1 ? "message buffer" : "stream buffer")
                       : kind == O_EG  ? "event group"
                                       : "timer";
    const char *n = o->name ? o->name : fallback_name(nb, sizeof nb, what, id);
    if (o->name)
      snprintf(b, sizeof b, "%s (%s)", n, what);
    else
      snprintf(b, sizeof b, "%s", n);
    o->uuid = track(c, group(c, &c->g_objects, "Kernel objects", 4),
                    kind == O_TIMER ? SONDE_TBAND_TRACK_SLICES : SONDE_TBAND_TRACK_COUNTER, b, 0);
  }
  return o;
}

static void metadata(struct sonde_tband_conv *c, const struct cevt *v)
{
  uint32_t id = (uint32_t)v->val[0];
  switch (v->id) {
  case 0x02: c->ns_per_ts = v->val[0] ? v->val[0] : 1; break;
  case 0x03: oname(ofind(c, O_ISR, v->core, id), v->str); break;
  case 0x06: oname(ofind(c, O_EVTM, 0, id), v->str); break;
  case 0x0A: oname(ofind(c, O_VALM, 0, id), v->str); break;
  case 0x5F: oname(ofind(c, O_TASK, 0, id), v->str); break;
  case 0x60: { struct obj *t = ofind(c, O_TASK, 0, id); if (t) t->idle_core = (int)v->val[1]; } break;
  case 0x61: { struct obj *t = ofind(c, O_TASK, 0, id); if (t) t->timer_task = true; } break;
  case 0x64: oname(ofind(c, O_QUEUE, 0, id), v->str); break;
  case 0x65: { struct obj *q = ofind(c, O_QUEUE, 0, id); if (q) q->kind_detail = (int)v->val[1]; } break;
  case 0x7A: case 0x7E: {
    struct obj *m = ofind(c, v->id == 0x7A ? O_TEVTM : O_TVALM, 0, id);
    if (m) {
      oname(m, v->str);
      m->owner_task = (uint32_t)v->val[1];
    }
  } break;
  case 0x89: oname(ofind(c, O_SB, 0, id), v->str); break;
  case 0x8A: { struct obj *s = ofind(c, O_SB, 0, id); if (s) s->kind_detail = (int)v->val[1]; } break;
  case 0xA1: oname(ofind(c, O_EG, 0, id), v->str); break;
  case 0xB1: oname(ofind(c, O_TIMER, 0, id), v->str); break;
  default: break;
  }
}

static void span(struct sonde_tband_conv *c, struct obj *m, const struct cevt *v, int is_begin,
                 const char *what)
{
  char b[96];
  if (!m)
    return;
  if (is_begin) {
    const char *n = v->str && v->str[0] ? v->str : m->name ? m->name : fallback_name(b, sizeof b, what, m->id);
    begin(c, m->uuid, v->ts, n, NULL, 0);
    m->open++;
  } else if (m->open) {
    end(c, m->uuid, v->ts);
    m->open--;
  } else {
    snprintf(b, sizeof b, "%s %u: end without begin", what, m->id);
    error_at(c, v->ts, v->core, v->offset, b);
  }
}

static void timed(struct sonde_tband_conv *c, const struct cevt *v)
{
  uint32_t id = (uint32_t)v->val[0];
  bool rtos = c->mode == SONDE_TBAND_FREERTOS;
  char b[128];
  switch (v->id) {
  case 0x00: core_obj(c, v->core); break;
  case 0x01: { /* dropped_evt_cnt: cumulative per core */
    struct obj *co = core_obj(c, v->core);
    if (!co)
      return;
    if (!co->uuid_drop)
      co->uuid_drop = track(c, co->uuid, SONDE_TBAND_TRACK_COUNTER, "Dropped events", 0);
    counter(c, co->uuid_drop, v->ts, (int64_t)id);
    if (id > co->id) {
      snprintf(b, sizeof b, "%u event(s) dropped on the target", id - co->id);
      error_at(c, v->ts, v->core, v->offset, b);
      co->id = id;
    }
    if (id > c->st.dropped)
      c->st.dropped = id;
  } break;
  case 0x04: case 0x05: {
    struct obj *m = marker_track(c, O_ISR, id, v->core, SONDE_TBAND_TRACK_SLICES);
    span(c, m, v, v->id == 0x04, "ISR");
  } break;
  case 0x07: {
    struct obj *m = marker_track(c, O_EVTM, id, 0, SONDE_TBAND_TRACK_SLICES);
    if (m)
      instant(c, m->uuid, v->ts, v->str && v->str[0] ? v->str : m->name ? m->name : "marker", NULL, 0);
  } break;
  case 0x08: case 0x09:
    span(c, marker_track(c, O_EVTM, id, 0, SONDE_TBAND_TRACK_SLICES), v, v->id == 0x08, "marker");
    break;
  case 0x0B: {
    struct obj *m = marker_track(c, O_VALM, id, 0, SONDE_TBAND_TRACK_COUNTER);
    if (m)
      counter(c, m->uuid, v->ts, (int64_t)v->val[1]);
  } break;
  case 0x0C:
    snprintf(b, sizeof b, "metadata buffer overflow: %u metadata event(s) lost", id);
    error_at(c, v->ts, v->core, v->offset, b);
    break;
  case 0x0D:
    snprintf(b, sizeof b, "target reset (boot %u)", id);
    error_at(c, v->ts, v->core, v->offset, b);
    break;
  default:
    if (!rtos)
      break; /* FreeRTOS events in bare-metal mode: not interpreted */
    switch (v->id) {
    case 0x54: switch_in(c, v); break;
    case 0x55: case 0x56: case 0x57: set_state(c, id, v->ts, "Ready"); break;
    case 0x58: set_state(c, id, v->ts, "Suspended"); break;
    case 0x59: snprintf(b, sizeof b, "delay %u ticks", id); curtask_blocks(c, v, b); break;
    case 0x5A: snprintf(b, sizeof b, "delay until tick %u", id); curtask_blocks(c, v, b); break;
    case 0x5B: case 0x5C: case 0x5D: {
      struct obj *t = task_obj(c, id);
      if (t)
        task_counter(c, t, &t->uuid_prio, "priority", v->ts, (int64_t)v->val[1]);
    } break;
    case 0x5E: { struct obj *t = task_obj(c, id); if (t && !t->state) task_state(c, t, v->ts, "Ready"); } break;
    case 0x62: {
      struct obj *t = task_obj(c, id);
      if (t) {
        if (t->running_on >= 0)
          t->pending = NULL;
        else
          task_state(c, t, v->ts, NULL);
        instant(c, task_marks(c, t), v->ts, "deleted", NULL, 0);
      }
    } break;
    case 0x63: obj_counter(c, O_QUEUE, id); break;
    case 0x66: case 0x67: case 0x68: case 0x69: case 0x6A: case 0x6B: case 0x70: {
      struct obj *q = obj_counter(c, O_QUEUE, id);
      if (q)
        counter(c, q->uuid, v->ts, (int64_t)v->val[1]);
    } break;
    case 0x6C: { struct obj *q = obj_counter(c, O_QUEUE, id); if (q) counter(c, q->uuid, v->ts, 0); } break;
    case 0x6D: case 0x6E: case 0x6F: {
      struct obj *q = ofind(c, O_QUEUE, 0, id);
      char nb[64];
      snprintf(b, sizeof b, "blocked on %s (%s, %u ticks)",
               q && q->name ? q->name : fallback_name(nb, sizeof nb, "queue", id),
               v->id == 0x6D ? "peek" : v->id == 0x6E ? "send" : "receive", (uint32_t)v->val[1]);
      curtask_blocks(c, v, b);
    } break;
    case 0x7B: case 0x7C: case 0x7D: {
      struct obj *m = marker_track(c, O_TEVTM, id, 0, SONDE_TBAND_TRACK_SLICES);
      if (v->id == 0x7B) {
        if (m)
          instant(c, m->uuid, v->ts, v->str && v->str[0] ? v->str : m->name ? m->name : "marker", NULL, 0);
      } else {
        span(c, m, v, v->id == 0x7C, "task marker");
      }
    } break;
    case 0x7F: {
      struct obj *m = marker_track(c, O_TVALM, id, 0, SONDE_TBAND_TRACK_COUNTER);
      if (m)
        counter(c, m->uuid, v->ts, (int64_t)v->val[1]);
    } break;
    case 0x80: {
      struct obj *t = task_obj(c, id);
      if (t)
        task_counter(c, t, &t->uuid_hwm, "stack free (words)", v->ts, (int64_t)v->val[1]);
    } break;
    case 0x81: case 0x92: case 0xA9: {
      int k = v->id == 0x81 ? O_QUEUE : v->id == 0x92 ? O_SB : O_EG;
      struct obj *o = obj_counter(c, k, id);
      if (o)
        counter(c, o->uuid, v->ts, 0);
    } break;
    case 0x88: obj_counter(c, O_SB, id); break;
    case 0x8B: case 0x8C: case 0x8D: case 0x8E: {
      struct obj *s = obj_counter(c, O_SB, id);
      if (s)
        counter(c, s->uuid, v->ts, (int64_t)v->val[1]);
    } break;
    case 0x8F: { struct obj *s = obj_counter(c, O_SB, id); if (s) counter(c, s->uuid, v->ts, 0); } break;
    case 0x90: case 0x91: curtask_blocks(c, v, v->id == 0x90 ? "blocked on stream buffer send" : "blocked on stream buffer receive"); break;
    case 0x98: case 0x99: case 0x9A: {
      struct obj *t = task_obj(c, id);
      if (t) {
        struct sonde_tband_arg a[2] = {{"index", false, (int64_t)v->val[1], NULL},
                                       {"value", false, (int64_t)v->val[2], NULL}};
        instant(c, task_marks(c, t), v->ts, v->id == 0x98 ? "notified" : v->id == 0x99 ? "notified from ISR" : "notify give from ISR", a, 2);
      }
    } break;
    case 0x9B: case 0x9D: curtask_blocks(c, v, v->id == 0x9B ? "blocked on notify take" : "blocked on notify wait"); break;
    case 0x9C: case 0x9E: {
      struct obj *t = current_task(c, v->core);
      if (t) {
        struct sonde_tband_arg a = {"value", false, (int64_t)v->val[1], NULL};
        instant(c, task_marks(c, t), v->ts, v->id == 0x9C ? "notify take" : "notify wait", &a, 1);
      }
    } break;
    case 0xA0: obj_counter(c, O_EG, id); break;
    case 0xA2: case 0xA3: case 0xA4: case 0xA5: {
      struct obj *e = obj_counter(c, O_EG, id);
      if (e) {
        uint64_t bits = (uint64_t)e->open; /* current bits kept in open */
        if (v->id <= 0xA3)
          bits |= v->val[1];
        else
          bits &= ~v->val[1];
        e->open = (unsigned)bits;
        counter(c, e->uuid, v->ts, (int64_t)bits);
      }
    } break;
    case 0xA6: curtask_blocks(c, v, "blocked on event group"); break;
    case 0xA7: case 0xA8: {
      struct obj *t = current_task(c, v->core);
      if (t && v->val[2])
        instant(c, task_marks(c, t), v->ts, "event group wait timed out", NULL, 0);
    } break;
    case 0xB0: obj_counter(c, O_TIMER, id); break;
    case 0xB2: case 0xB3: case 0xB4: {
      struct obj *t = obj_counter(c, O_TIMER, id);
      if (t) {
        struct sonde_tband_arg a[2] = {{"command", false, (int64_t)v->val[1], NULL},
                                       {"value", false, (int64_t)v->val[2], NULL}};
        instant(c, t->uuid, v->ts, v->id == 0xB4 ? "expired" : v->id == 0xB2 ? "command sent" : "command received",
                a, v->id == 0xB4 ? 0 : 2);
      }
    } break;
    default: break;
    }
  }
}

static int cmp_ev(const void *a, const void *b)
{
  const struct cevt *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->core != y->core)
    return x->core < y->core ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int sonde_tband_conv_run(struct sonde_tband_conv *c, const struct sonde_tband_sink *sink,
                         struct sonde_tband_conv_stats *stats)
{
  if (c->rc)
    return c->rc;
  c->sink = sink;
  for (size_t i = 0; i < c->nev; i++)
    if (!c->ev[i].error && !c->ev[i].has_ts)
      metadata(c, &c->ev[i]);
  if (c->nev)
    qsort(c->ev, c->nev, sizeof *c->ev, cmp_ev);
  for (unsigned k = 0; k < c->cores; k++)
    core_obj(c, k);
  uint64_t last = 0, first = 0;
  bool any = false;
  for (size_t i = 0; i < c->nev && !c->rc; i++) {
    struct cevt *v = &c->ev[i];
    if (v->error) {
      error_at(c, v->ts, v->core, v->offset, v->str ? v->str : "bad frame");
      continue;
    }
    if (!v->has_ts)
      continue;
    if (!any)
      first = v->ts, any = true;
    last = v->ts;
    c->st.events++;
    timed(c, v);
  }
  /* close whatever is still open, innermost first */
  for (size_t i = 0; i < c->ocap && !c->rc; i++) {
    struct obj *o = c->objs[i];
    if (!o)
      continue;
    int kind = (int)(o->key >> 40);
    if (kind == O_EVTM || kind == O_TEVTM || kind == O_ISR)
      for (; o->open; o->open--)
        end(c, o->uuid, last);
    if (kind == O_CORE && o->running && o->uuid_state)
      end(c, o->uuid_state, last), o->running = 0;
    if (kind == O_TASK) {
      if (o->running_on >= 0)
        end(c, o->uuid, last), o->running_on = -1;
      if (o->state)
        task_state(c, o, last, NULL);
    }
  }
  c->st.ts_ns_first = ns(c, first);
  c->st.ts_ns_last = ns(c, last);
  if (stats)
    *stats = c->st;
  if (c->rc && !c->err[0])
    snprintf(c->err, sizeof c->err, "%s", sonde_strerror(c->rc));
  return c->rc;
}
