/* Helpers for the tests that run the on-target tracer on the host. */
#ifndef TEST_TARGET_COMMON_H
#define TEST_TARGET_COMMON_H
#include "check.h"
#include "sonde/tband.h"

#define MAXEV 50000
struct evlist {
  int n, errors;
  struct sonde_tband_evt e[MAXEV];
  char str[MAXEV][64];
};

static inline void ev_cb(void *ctx, const struct sonde_tband_evt *e)
{
  struct evlist *l = ctx;
  if (e->error)
    l->errors++, fprintf(stderr, "decode error at %llu: %s\n", (unsigned long long)e->offset, e->error_msg);
  if (l->n >= MAXEV)
    return;
  l->e[l->n] = *e;
  if (e->str) {
    snprintf(l->str[l->n], sizeof l->str[0], "%s", e->str);
    l->e[l->n].str = l->str[l->n];
  }
  l->n++;
}

static inline void decode_into(struct evlist *l, const uint8_t *buf, size_t len, int core)
{
  memset(l, 0, sizeof *l);
  struct sonde_tband_dec *d = sonde_tband_dec_new(SONDE_TBAND_BIN, core, "t");
  sonde_tband_dec_feed(d, buf, len, ev_cb, l);
  sonde_tband_dec_finish(d, ev_cb, l);
  sonde_tband_dec_free(d);
}

static inline int count_id(const struct evlist *l, uint8_t id)
{
  int n = 0;
  for (int i = 0; i < l->n; i++)
    n += !l->e[i].error && l->e[i].id == id;
  return n;
}
#endif
