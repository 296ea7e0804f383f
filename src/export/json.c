/* Chrome JSON back end: the legacy trace event format ({"traceEvents":[...]},
 * phases M/B/E/i/C, timestamps in microseconds). Slice tracks become threads
 * of their parent process, counters per-process counters named after the
 * track. */
#include "export_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The event being formatted, in the writer's growable packet buffer (so no
 * name or argument list is ever cut). */
struct jbuf {
  struct pbuf *p;
};

static void jput(struct jbuf *j, const char *s)
{
  pb_bytes(j->p, s, strlen(s));
}

static void jput_n(void *ctx, const char *p, size_t n)
{
  pb_bytes(((struct jbuf *)ctx)->p, p, n);
}

static void jstr(struct jbuf *j, const char *s)
{
  sonde_json_quote(s, jput_n, j);
}

static int jflush(struct sonde_export *x, struct jbuf *j)
{
  const char *pre = x->count ? ",\n" : "{\"traceEvents\":[\n";
  if (j->p->oom)
    return sonde_diag_set(&x->diag, SONDE_E_NOMEM, "out of memory formatting an event");
  int rc = x->write(x->ctx, pre, strlen(pre));
  if (!rc)
    rc = x->write(x->ctx, j->p->buf, j->p->len);
  if (rc)
    return sonde_diag_set(&x->diag, rc, "write failed");
  x->count++;
  return 0;
}

static void jts(struct jbuf *j, uint64_t ts_ns)
{
  char tmp[48];
  snprintf(tmp, sizeof tmp, "%" PRIu64 ".%03u", ts_ns / 1000, (unsigned)(ts_ns % 1000));
  jput(j, tmp);
}

static void jids(struct jbuf *j, const struct xtrack *t)
{
  char tmp[64];
  snprintf(tmp, sizeof tmp, "\"pid\":%" PRId64 ",\"tid\":%" PRId64, t->pid, t->tid);
  jput(j, tmp);
}

int json_track(struct sonde_export *x, const struct xtrack *t, const struct xtrack *parent)
{
  (void)parent;
  struct jbuf j = {&x->pb};
  pb_reset(&x->pb);
  if (t->kind == SONDE_EXPORT_COUNTER)
    return 0; /* counters need no declaration */
  jput(&j, t->kind == SONDE_EXPORT_PROCESS ? "{\"ph\":\"M\",\"name\":\"process_name\","
                                           : "{\"ph\":\"M\",\"name\":\"thread_name\",");
  jids(&j, t);
  jput(&j, ",\"args\":{\"name\":");
  jstr(&j, t->name);
  jput(&j, "}}");
  return jflush(x, &j);
}

int json_event(struct sonde_export *x, const struct xtrack *t, int type, uint64_t ts_ns,
               const char *name, const struct sonde_export_arg *args, unsigned nargs,
               int64_t value)
{
  struct jbuf j = {&x->pb};
  pb_reset(&x->pb);
  static const char *const ph[] = {"", "B", "E", "i", "C"};
  char tmp[64];
  jput(&j, "{\"ph\":\"");
  jput(&j, ph[type]);
  jput(&j, "\",");
  jids(&j, t);
  jput(&j, ",\"ts\":");
  jts(&j, ts_ns);
  if (type == EV_COUNTER) {
    jput(&j, ",\"name\":");
    jstr(&j, t->name);
    snprintf(tmp, sizeof tmp, ",\"args\":{\"value\":%" PRId64 "}}", value);
    jput(&j, tmp);
    return jflush(x, &j);
  }
  if (type != EV_END) {
    jput(&j, ",\"name\":");
    jstr(&j, name);
  }
  if (type == EV_INSTANT)
    jput(&j, ",\"s\":\"t\"");
  if (nargs) {
    jput(&j, ",\"args\":{");
    for (unsigned i = 0; i < nargs; i++) {
      if (i)
        jput(&j, ",");
      jstr(&j, args[i].name);
      jput(&j, ":");
      if (args[i].is_str) {
        jstr(&j, args[i].sval);
      } else {
        snprintf(tmp, sizeof tmp, "%" PRId64, args[i].ival);
        jput(&j, tmp);
      }
    }
    jput(&j, "}");
  }
  jput(&j, "}");
  return jflush(x, &j);
}

int json_finish(struct sonde_export *x)
{
  const char *tail = x->count ? "\n],\"displayTimeUnit\":\"ns\"}\n"
                              : "{\"traceEvents\":[],\"displayTimeUnit\":\"ns\"}\n";
  int rc = x->write(x->ctx, tail, strlen(tail));
  return rc ? sonde_diag_set(&x->diag, rc, "write failed") : 0;
}
